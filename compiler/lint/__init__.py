"""The governance linter: rules over the model, the lowered catalog objects and policy SQL.

``lint_project`` runs every registered model rule; suppressions (``ignore:`` on an entry)
are applied here, once, for every rule. Rule modules register checks with :func:`rule`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from compiler.errors import Location
from compiler.rules import RULES_BY_ID, Severity

if TYPE_CHECKING:
    from compiler.validate import Project
    from targets.objects import Catalog


@dataclass(frozen=True, order=True)
class Finding:
    location: Location
    rule: str
    object: str
    message: str
    fix: str = ""
    suppressed: bool = False
    reason: str = ""

    @property
    def name(self) -> str:
        return RULES_BY_ID[self.rule].name

    @property
    def severity(self) -> Severity:
        return RULES_BY_ID[self.rule].severity

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "file": self.location.file,
            "line": self.location.line,
            "column": self.location.column,
            "object": self.object,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass
class Context:
    """What a model rule reads: the validated project and its lowered catalogs."""

    project: Project
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def model(self):
        return self.project.model

    @cached_property
    def catalogs(self) -> dict[str, Catalog]:
        from targets import get_target

        return {p: get_target(p).lower(self.model) for p in self.model.declared_platforms()}


ModelCheck = Callable[[Context], Iterator[Finding]]


@dataclass(frozen=True)
class RegisteredRule:
    id: str
    check: ModelCheck
    doc: str


REGISTRY: dict[str, list[RegisteredRule]] = {}


def rule(rule_id: str) -> Callable[[ModelCheck], ModelCheck]:
    """Register a model check for ``rule_id`` (which must be in the spec's rule table)."""
    if rule_id not in RULES_BY_ID:
        raise KeyError(f"{rule_id} is not in the rule table")

    def register(fn: ModelCheck) -> ModelCheck:
        REGISTRY.setdefault(rule_id, []).append(RegisteredRule(rule_id, fn, fn.__doc__ or ""))
        return fn

    return register


def _load_rules() -> None:
    """Import every ``compiler/lint/*_rules.py`` module: importing one registers its checks."""
    import importlib
    import pkgutil

    import compiler.lint as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.endswith("_rules"):
            importlib.import_module(f"compiler.lint.{info.name}")


def suppression_for(project: Project, obj: str, rule_id: str) -> str | None:
    """The reason an entry (``masks.x``, ``datasets.y``, ...) gives for ignoring a rule."""
    section, _, name = obj.partition(".")
    name = name.split(".")[0]
    if section not in ("masks", "datasets", "indexes", "surfaces"):
        return None
    entry = getattr(project.model, section).get(name)
    return entry.ignore.get(rule_id) if entry is not None else None


def lint_project(project: Project, extra: dict[str, object] | None = None) -> list[Finding]:
    """Every finding of every registered model rule, suppressions applied, sorted."""
    _load_rules()
    ctx = Context(project, extra or {})
    findings: list[Finding] = []
    for rule_id in sorted(REGISTRY):
        for registered in REGISTRY[rule_id]:
            for f in registered.check(ctx):
                reason = suppression_for(project, f.object, f.rule)
                if reason:
                    f = replace(f, suppressed=True, reason=reason)
                findings.append(f)
    return sorted(set(findings))
