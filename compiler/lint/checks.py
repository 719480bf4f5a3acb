"""What a lint check is: the contexts it reads and the decorators that register it.

A rule is an id of the rule table (:mod:`compiler.model.rules`) with one or more checks attached:

* ``@rule(id)`` registers a *policy* check, which reads a :class:`Context` (the validated
  project, its lowered catalogs, the semantics module) and yields
  :class:`~compiler.lint.finding.Finding` values;
* ``@sql_rule(id)`` registers a *SQL* check, which reads a :class:`SqlContext` (scanned policy
  DDL, see :mod:`compiler.sqlscan`) and yields :class:`~compiler.lint.finding.SqlHit` values (a
  finding and the statements whose suppression comments may silence it);
* ``@post_rule(id, source)`` registers a check over the other checks' results (ACC002).

The docstring of a rule's policy check (or, for a SQL-only rule, of its SQL check) is the
rule's documentation page, in the manner of ruff: what it does, why it is bad, an example and
the fix. ``docs/rules.md`` and ``accord rules`` are generated from it. A rule that another
command raises (``accord drift``: ACC701-ACC708) has no check: ``@rule_page(id)`` on a class
whose docstring is the page registers the page alone.

Every check and page is registered from its rule's family module (the ``family`` of its row),
so the table says where each rule lives; a registration from anywhere else is refused.

The rule modules (:mod:`compiler.lint.rules`, the families of the rule table) import this
module, and the engine imports them: nothing here imports a rule.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from accord.compiler.lint.finding import Finding, SqlHit
from accord.compiler.model.rules import RULES_BY_ID
from accord.targets import lower_all

if TYPE_CHECKING:
    from accord.compiler.model.grants import GrantsTable
    from accord.compiler.model.schema import PolicyModel
    from accord.compiler.model.validate import Project
    from accord.compiler.sqlscan import ScanResult, Statement
    from accord.targets.objects import Catalog


@dataclass(frozen=True)
class History:
    """The migration history ACC601 reads (``accord lint --plans DIR --ledger FILE``): either
    one implies the other (the ledger lives in the plans directory by default)."""

    plans: str | None = None
    ledger: str | None = None


@dataclass
class Context:
    """What a policy check reads: the validated project and its lowered catalogs."""

    project: Project
    history: History = History()
    #: values computed once per run and shared by checks (see :meth:`memo`)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def model(self) -> PolicyModel:
        return self.project.model

    @cached_property
    def catalogs(self) -> dict[str, Catalog]:
        return lower_all(self.project)  # shared with compile in the same process

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per lint run, shared by every check that asks for ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


@dataclass
class SqlContext:
    """What a SQL check reads: every scanned file, linted together; and, when a policy model
    is linted beside them and a selected rule declares it (``sql_reads`` of its row in
    :mod:`compiler.model.rules`), the mapping tables that model compiles."""

    results: Sequence[ScanResult]
    #: the mapping tables of the policy model linted beside the files (MAPPING_TABLES)
    grants: Sequence[GrantsTable] = ()
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def statements(self) -> list[Statement]:
        return [s for r in self.results for s in r.statements]

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per lint run, shared by every check that asks for ``key``."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


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
#: the pages of rules that have no check here (raised by another command), by rule id
PAGES: dict[str, RegisteredPage] = {}
#: selects rules: the rule ids a run reports (``--select`` / ``--ignore``, the configuration)
Selected = Callable[[str], bool]


@dataclass(frozen=True)
class RegisteredPage:
    id: str
    doc: str
    #: the files its findings point into (for ``accord rules`` and docs/rules.md)
    source: Source


#: the package of the rule modules
_RULES = "accord.compiler.lint.rules"


def _family_of(rule_id: str, defined_in: str) -> None:
    """Refuse a check or page of ``rule_id`` defined outside its row's family module."""
    family = RULES_BY_ID[rule_id].family
    if defined_in != f"{_RULES}.{family}":
        raise ValueError(
            f"{rule_id} belongs to the family {family!r} (compiler/model/rules.py): its checks "
            f"and page live in {_RULES}.{family}, not {defined_in}"
        )


def _register(
    rule_id: str, source: Source, post: bool = False
) -> Callable[[Callable[..., Any]], Any]:
    if rule_id not in RULES_BY_ID:
        raise KeyError(f"{rule_id} is not in the rule table (compiler/model/rules.py)")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _family_of(rule_id, fn.__module__)
        doc = inspect.cleandoc(fn.__doc__ or "")
        REGISTRY.setdefault(rule_id, []).append(RegisteredRule(rule_id, fn, doc, source, post))
        return fn

    return register


def rule_page(rule_id: str, source: Source = "policy") -> Callable[[type], type]:
    """Register the docstring of the decorated class as the page of ``rule_id``, a rule with
    no check here: another command raises its findings (``accord drift``), in ``source``
    files. The class holds nothing else."""
    if rule_id not in RULES_BY_ID:
        raise KeyError(f"{rule_id} is not in the rule table (compiler/model/rules.py)")

    def register(holder: type) -> type:
        _family_of(rule_id, holder.__module__)
        PAGES[rule_id] = RegisteredPage(rule_id, inspect.cleandoc(holder.__doc__ or ""), source)
        return holder

    return register


def sources_of(rule_id: str) -> list[Source]:
    """Where a registered rule applies: ``policy`` files, ``sql`` files, or both (the rules
    read are those imported so far: see :func:`compiler.lint.engine.rule_sources`)."""
    sources = {r.source for r in REGISTRY.get(rule_id, [])}
    if rule_id in PAGES:
        sources.add(PAGES[rule_id].source)
    return sorted(sources, key=["policy", "sql"].index)


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
