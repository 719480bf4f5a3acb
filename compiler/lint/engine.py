"""The lint engine: runs the registered checks and applies suppressions, once, for every rule.

* :func:`lint_project` runs every policy check over a validated project, and the SQL checks
  over its ``unmanaged`` entries' SQL (:mod:`compiler.lint.unmanaged`);
* :func:`lint_sql` / :func:`lint_sql_batch` run every SQL check over files scanned together;
* :func:`finalize` is what every route of policy findings ends with: entry suppressions
  (``ignore:`` on a ``masks``, ``datasets``, ``indexes`` or ``surfaces`` entry) applied,
  duplicates dropped, sorted. ``accord drift`` calls it on the findings it builds from the
  live platforms, without running any check.

The rule modules (:mod:`accord.compiler.lint.rules`, the families of the rule table) are
imported on first use: importing one registers its checks (:mod:`compiler.lint.checks`). Until
then nothing of them is loaded, so a lint answered from the cache imports neither sqlglot nor the model's schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.lint.checks import (
    PAGES,
    REGISTRY,
    Context,
    History,
    Selected,
    Source,
    SqlContext,
    sources_of,
)
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.unmanaged import scanned
from accord.compiler.model.rules import RULES_BY_ID, RuleInfo

if TYPE_CHECKING:
    from accord.compiler.model.grants import GrantsTable
    from accord.compiler.model.validate import Project
    from accord.compiler.sqlscan import ScanResult


def load_rules(families: Iterable[str] | None = None) -> None:
    """Import the rule modules (:mod:`accord.compiler.lint.rules`; ``families``: only those):
    importing one registers its checks. Lazy, so that a lint answered from the cache loads
    none of them."""
    from accord.compiler.lint import rules  # noqa: PLC0415 - a lint answered from the cache loads no rule

    rules.load(rules.NAMES if families is None else families)


def registered_rules() -> list[RuleInfo]:
    """Every rule with at least one check or a page, in id order."""
    load_rules()
    return [RULES_BY_ID[r] for r in sorted({*REGISTRY, *PAGES})]


def rule_sources(rule_id: str) -> list[Source]:
    """Where a rule applies: ``policy`` files, ``sql`` files, or both."""
    load_rules()
    return sources_of(rule_id)


def rule_doc(rule_id: str) -> str:
    """The documentation page of a rule: its policy check's docstring, else its SQL check's,
    else its page (a rule another command raises)."""
    load_rules()
    checks = REGISTRY.get(rule_id, [])
    for source in ("policy", "sql"):
        for registered in checks:
            if registered.source == source and registered.doc:
                return registered.doc
    page = PAGES.get(rule_id)
    return page.doc if page is not None else ""


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


def finalize(
    project: Project, findings: Iterable[Finding], selected: Selected = _all
) -> list[Finding]:
    """The selected ``findings``, each suppressed when its entry ignores its rule, without
    duplicates, sorted."""
    out = set()
    for f in findings:
        if not selected(f.rule):
            continue
        reason = suppression_for(project, f.object, f.rule)
        out.add(replace(f, suppressed=True, reason=reason) if reason else f)
    return sorted(out)


def lint_project(
    project: Project,
    history: History | None = None,
    selected: Selected = _all,
    *,
    reuse: Mapping[str, list[Finding]] | None = None,
    computed: dict[str, list[Finding]] | None = None,
    families: Iterable[str] | None = None,
) -> list[Finding]:
    """Every finding of every registered policy check, suppressions applied, sorted.
    ``history`` is the migration history ACC601 reads (none by default).

    Incremental lint (:mod:`compiler.lint.incremental.deps`): the checks of a rule in ``reuse`` are not
    run, its raw findings (before suppression and selection) are those given; ``computed``,
    when given, receives the raw findings of every rule (run or reused) by rule id. The post
    checks (ACC002) and the suppressions always run on the whole result. ``families``: the
    rule modules to load (default: all); a rule of another module must be in ``reuse``."""
    load_rules(families)
    ctx = Context(project, history or History())
    reuse = reuse or {}
    found: list[Finding] = []
    post = []
    for rule_id in sorted(REGISTRY):
        for registered in REGISTRY[rule_id]:
            if registered.source != "policy":
                continue
            if registered.post:
                post.append(registered)
                continue
            if rule_id in reuse:
                continue
            out = list(registered.check(ctx))
            if computed is not None:
                computed.setdefault(rule_id, []).extend(out)
            found.extend(out)
    for rule_id, out in sorted(reuse.items()):
        found.extend(out)
        if computed is not None:
            computed[rule_id] = list(out)
    findings = finalize(project, found)  # every rule: the post checks read the suppressions
    for registered in post:
        findings.extend(registered.check(project, findings, selected))
    if getattr(project.model, "unmanaged", None):
        findings.extend(_unmanaged(project, selected))
    return sorted({f for f in findings if selected(f.rule)})


def _unmanaged(project: Project, selected: Selected) -> list[Finding]:
    """The SQL checks over the model's unmanaged entries (:mod:`compiler.lint.unmanaged`),
    all entries together, beside the mapping tables the model compiles; a malformed
    suppression comment in one is bad input, as in a SQL file."""
    from accord.compiler.model.grants import grants_tables  # noqa: PLC0415 - pydantic: not on a cache hit

    results = scanned(project)
    found, problems = lint_sql_batch(results, selected, grants_tables(project.model))
    if problems:
        raise InputError(problems)
    # every entry is scanned as part of one file: a finding in a dbt macro's SQL is restored
    # with the template of the entry it is in (the one that starts last before it)
    starts = sorted(
        (s.line, i) for i, r in enumerate(results) if r.template is not None for s in r.statements
    )
    out = []
    for f in found:
        before = [i for line, i in starts if line <= f.location.line]
        template = results[before[-1]].template if before else None
        if template is not None:
            f = replace(
                f,
                object=template.restore(f.object),
                message=template.restore(f.message),
                fix=template.restore(f.fix),
            )
        out.append(f)
    return out


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
    results: Sequence[ScanResult],
    selected: Selected = _all,
    grants: Sequence[GrantsTable] = (),
) -> tuple[list[Finding], list[Diagnostic]]:
    """The findings of :func:`lint_sql` and, separately, the suppression problems: one
    broken file never hides the findings of the others. ``grants``: the mapping tables of the
    policy model linted beside the files (for the rules that declare them)."""
    problems = suppression_problems(results)
    load_rules()
    ctx = SqlContext(results, grants)
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
