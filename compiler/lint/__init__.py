"""The governance linter: rules over the model, the lowered catalog objects and policy SQL.

A rule is an id of the rule table (:mod:`compiler.model.rules`) with one or more checks attached:

* ``@rule(id)`` registers a *policy* check, which reads a :class:`Context` (the validated
  project, its lowered catalogs, the semantics module) and yields :class:`Finding` values;
* ``@sql_rule(id)`` registers a *SQL* check, which reads a :class:`SqlContext` (scanned policy
  DDL, see :mod:`compiler.sqlscan`) and yields :class:`SqlHit` values (a finding and the
  statements whose suppression comments may silence it).

The docstring of a rule's policy check (or, for a SQL-only rule, of its SQL check) is the
rule's documentation page, in the manner of ruff: what it does, why it is bad, an example and
the fix. ``docs/rules.md`` and ``accord rules`` are generated from it.

Every ``compiler/lint/*_rules.py`` module is imported on first use: importing one registers
its checks. Suppressions (``ignore:`` on a policy entry, ``-- accord: ignore ACCnnn reason``
above a SQL statement) are applied here, once, for every rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from compiler.core.errors import Diagnostic, InputError, Location
from compiler.model.rules import RULES_BY_ID, RuleInfo, Severity

if TYPE_CHECKING:
    from compiler.model.schema import PolicyModel
    from compiler.model.validate import Project
    from compiler.sqlscan import ScanResult, Statement
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
    #: other places the finding names (the second file of an ACC203 across SQL files)
    related: tuple[Location, ...] = ()

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
    """What a policy check reads: the validated project and its lowered catalogs."""

    project: Project
    extra: dict[str, object] = field(default_factory=dict)
    #: values computed once per run and shared by checks (see :meth:`memo`)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def model(self) -> PolicyModel:
        return self.project.model

    @cached_property
    def catalogs(self) -> dict[str, Catalog]:
        from targets import lower_all

        return lower_all(self.project)  # shared with compile in the same process

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per lint run, shared by every check that asks for ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


@dataclass
class SqlContext:
    """What a SQL check reads: every scanned file, linted together."""

    results: Sequence[ScanResult]
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def statements(self) -> list[Statement]:
        return [s for r in self.results for s in r.statements]

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per lint run, shared by every check that asks for ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


@dataclass(frozen=True)
class SqlHit:
    """A finding in SQL and the statements whose suppression comments may silence it."""

    finding: Finding
    statements: tuple[Statement, ...]


PolicyCheck = Callable[[Context], Iterable[Finding]]
SqlCheck = Callable[[SqlContext], Iterable[SqlHit]]
Source = Literal["policy", "sql"]


@dataclass(frozen=True)
class RegisteredRule:
    id: str
    check: Callable[..., Iterable[Any]]
    doc: str
    source: Source
    #: a check over the other checks' results (see :func:`post_rule`)
    post: bool = False


REGISTRY: dict[str, list[RegisteredRule]] = {}
#: selects rules: the rule ids a run reports (``--select`` / ``--ignore``, the configuration)
Selected = Callable[[str], bool]


def _register(
    rule_id: str, source: Source, post: bool = False
) -> Callable[[Callable[..., Any]], Any]:
    if rule_id not in RULES_BY_ID:
        raise KeyError(f"{rule_id} is not in the rule table (compiler/model/rules.py)")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        doc = inspect.cleandoc(fn.__doc__ or "")
        REGISTRY.setdefault(rule_id, []).append(RegisteredRule(rule_id, fn, doc, source, post))
        return fn

    return register


def post_rule(rule_id: str, source: Source) -> Callable[[Callable[..., Any]], Any]:
    """Register a check that runs after every other check of ``source``: for policy files it
    is called as ``check(project, findings, selected)``, for SQL files as ``check(results,
    used, selected)`` with ``used`` the (file, line, column, rule) of every suppression
    comment that silenced a finding. It yields findings."""
    return _register(rule_id, source, post=True)


def rule(rule_id: str) -> Callable[[PolicyCheck], PolicyCheck]:
    """Register a policy check for ``rule_id`` (which must be in the rule table). Its
    docstring is the rule's documentation page."""
    return _register(rule_id, "policy")


def sql_rule(rule_id: str) -> Callable[[SqlCheck], SqlCheck]:
    """Register a SQL check for ``rule_id``. Its docstring is the rule's page only when the
    rule has no policy check."""
    return _register(rule_id, "sql")


def _load_rules() -> None:
    """Import every ``compiler/lint/*_rules.py`` module: importing one registers its checks."""
    import importlib
    import pkgutil

    import compiler.lint as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.endswith("_rules"):
            importlib.import_module(f"compiler.lint.{info.name}")


def registered_rules() -> list[RuleInfo]:
    """Every rule with at least one check, in id order."""
    _load_rules()
    return [RULES_BY_ID[r] for r in sorted(REGISTRY)]


def rule_sources(rule_id: str) -> list[Source]:
    """Where a rule applies: ``policy`` files, ``sql`` files, or both."""
    _load_rules()
    return sorted({r.source for r in REGISTRY.get(rule_id, [])}, key=["policy", "sql"].index)


def rule_doc(rule_id: str) -> str:
    """The documentation page of a rule: its policy check's docstring, else its SQL check's."""
    _load_rules()
    checks = REGISTRY.get(rule_id, [])
    for source in ("policy", "sql"):
        for registered in checks:
            if registered.source == source and registered.doc:
                return registered.doc
    return ""


# --------------------------------------------------------------------------------------------
# running


def suppression_for(project: Project, obj: str, rule_id: str) -> str | None:
    """The reason an entry (``masks.x``, ``datasets.y``, ...) gives for ignoring a rule."""
    section, _, name = obj.partition(".")
    name = name.split(".")[0]
    if section not in ("masks", "datasets", "indexes", "surfaces"):
        return None
    entry = getattr(project.model, section).get(name)
    return entry.ignore.get(rule_id) if entry is not None else None


def _all(rule_id: str) -> bool:
    return True


def lint_project(
    project: Project, extra: dict[str, object] | None = None, selected: Selected = _all
) -> list[Finding]:
    """Every finding of every registered policy check, suppressions applied, sorted."""
    _load_rules()
    ctx = Context(project, extra or {})
    findings: list[Finding] = []
    post = []
    for rule_id in sorted(REGISTRY):
        for registered in REGISTRY[rule_id]:
            if registered.source != "policy":
                continue
            if registered.post:
                post.append(registered)
                continue
            for f in registered.check(ctx):
                reason = suppression_for(project, f.object, f.rule)
                if reason:
                    f = replace(f, suppressed=True, reason=reason)
                findings.append(f)
    for registered in post:
        findings.extend(registered.check(project, findings, selected))
    return sorted({f for f in findings if selected(f.rule)})


def lint_sql(results: Sequence[ScanResult]) -> list[Finding]:
    """Every finding of every registered SQL check over files scanned together (so a finding
    across platforms can name two files), suppression comments applied, sorted. What the
    scanner could not read is an ACC001 finding.

    Raises InputError for suppression comments that are malformed, name an unknown rule or
    give no reason (see :func:`lint_sql_batch`, which returns them instead)."""
    findings, problems = lint_sql_batch(results)
    if problems:
        raise InputError(problems)
    return findings


def suppression_problems(results: Sequence[ScanResult]) -> list[Diagnostic]:
    """Suppression comments that are malformed, name an unknown rule or give no reason."""
    problems = [
        Diagnostic(Location(e.file, e.line, e.column), e.message)
        for r in results
        for e in r.errors
        if e.kind == "suppression"
    ]
    for result in results:
        for stmt in result.statements:
            for s in stmt.suppressions:
                where = Location(stmt.file, s.line, s.column)
                if s.rule not in RULES_BY_ID:
                    problems.append(
                        Diagnostic(
                            where, f"suppression names unknown rule {s.rule} (see `accord rules`)"
                        )
                    )
                elif not s.reason:
                    problems.append(
                        Diagnostic(
                            where,
                            f"suppression of {s.rule} needs a reason: "
                            f"`-- accord: ignore {s.rule} <why this is safe>`",
                        )
                    )
    return sorted(set(problems))


def lint_sql_batch(
    results: Sequence[ScanResult], selected: Selected = _all
) -> tuple[list[Finding], list[Diagnostic]]:
    """The findings of :func:`lint_sql` and, separately, the suppression problems: one
    broken file never hides the findings of the others."""
    problems = suppression_problems(results)
    _load_rules()
    ctx = SqlContext(results)
    templates = {r.statements[0].file if r.statements else None: r.template for r in results}
    templates.update({e.file: r.template for r in results for e in r.errors})
    findings: list[Finding] = []
    used: set[tuple[str, int, int, str]] = set()
    post = []
    for rule_id in sorted(REGISTRY):
        for registered in REGISTRY[rule_id]:
            if registered.source != "sql":
                continue
            if registered.post:
                post.append(registered)
                continue
            for hit in registered.check(ctx):
                f = hit.finding
                silencer = next(
                    (
                        (stmt, s)
                        for stmt in hit.statements
                        for s in stmt.suppressions
                        if s.rule == f.rule
                    ),
                    None,
                )
                if silencer is not None and selected(f.rule):
                    stmt, s = silencer
                    used.add((stmt.file, s.line, s.column, s.rule))
                    f = replace(f, suppressed=True, reason=s.reason)
                template = templates.get(f.location.file)
                if template is not None:
                    f = replace(
                        f,
                        object=template.restore(f.object),
                        message=template.restore(f.message),
                        fix=template.restore(f.fix),
                    )
                findings.append(f)
    for registered in post:
        findings.extend(registered.check(results, used, selected))
    return sorted({f for f in findings if selected(f.rule)}), problems
