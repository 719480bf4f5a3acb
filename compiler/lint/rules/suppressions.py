"""ACC002: a suppression that suppresses nothing (checks that run after all the others)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from accord.compiler.core.errors import Location
from accord.compiler.lint.checks import Selected, post_rule, sources_of
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.rules.drift import LIVE_RULES
from accord.compiler.model.rules import RULES_BY_ID

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from accord.compiler.model.validate import Project
    from accord.compiler.sqlscan import ScanResult

_SECTIONS = ("masks", "datasets", "indexes", "surfaces")
#: rules whose SQL findings depend on which files are linted together (ACC203 compares a
#: mask with the same column on another platform): a suppression of one is not reported
#: unused, since another batch may need it
_BATCH_DEPENDENT = frozenset({"ACC203"})


@post_rule("ACC002", "policy")
def unused_ignore_entries(
    project: Project, findings: Sequence[Finding], selected: Selected
) -> Iterator[Finding]:
    """A suppression suppresses nothing.

    ## What it does
    Reports an `ignore:` entry of a mask, dataset, index or surface, or a
    `-- accord: ignore ACCnnn` comment above a SQL statement, for a rule that raises no
    finding there. Rules left out of the run (`--select`, `--ignore`, the configuration) are
    not judged, nor are the drift rules ACC701–ACC708, which only `accord drift` raises. In SQL files a suppression of ACC203 is not judged either: whether it fires
    depends on which files are linted together.

    ## Why is this bad?
    A suppression records a reviewed exception. One that no longer suppresses anything
    (the defect was fixed, the policy renamed, the rule id mistyped in a way that still names
    a rule) is stale: it tells reviewers an exception exists where there is none, and will
    silently swallow the next real finding of that rule on the same entry.

    ## Example
    ```yaml
    masks:
      email:
        strategy: redact
        unmasked_for: [support]
        ignore:
          ACC201: "hashing reviewed 2025-03"   # a redact mask hashes nothing
    ```

    ## How to fix
    Delete the suppression, or move it to the entry or statement the finding is on.
    """
    used = {
        (f.object.split(".")[0], f.object.split(".")[1] if "." in f.object else "", f.rule)
        for f in findings
        if f.suppressed
    }
    model = project.model
    in_policy: dict[str, bool] = {}
    for section in _SECTIONS:
        entries = getattr(model, section)
        for name in sorted(entries):
            for rule_id in sorted(entries[name].ignore):
                if not selected(rule_id) or (section, name, rule_id) in used:
                    continue
                if rule_id in LIVE_RULES:
                    continue  # only `accord drift` raises it: lint cannot judge it
                if rule_id not in in_policy:
                    in_policy[rule_id] = "policy" in sources_of(rule_id)
                applies = in_policy[rule_id]
                why = (
                    "no finding of it is raised on this entry"
                    if applies
                    else "it is a SQL rule: nothing in a policy file raises it"
                )
                yield Finding(
                    project.loc(section, name, "ignore", rule_id),
                    "ACC002",
                    f"{section}.{name}",
                    f"the ignore: entry for {rule_id} suppresses nothing: {why}",
                    f"remove `{rule_id}` from the ignore: of {section}.{name}",
                )


@post_rule("ACC002", "sql")
def unused_ignore_comments(
    results: Sequence[ScanResult], used: set[tuple[str, int, int, str]], selected: Selected
) -> Iterator[Finding]:
    """ACC002 for `-- accord: ignore` comments in SQL files (see the policy-file check)."""
    seen = set()
    for result in results:
        for stmt in result.statements:
            for s in stmt.suppressions:
                key = (stmt.file, s.line, s.column, s.rule)
                if key in seen or key in used or not s.reason:
                    continue
                seen.add(key)
                if s.rule not in RULES_BY_ID or s.rule in _BATCH_DEPENDENT | {"ACC002"}:
                    continue
                if not selected(s.rule):
                    continue
                yield Finding(
                    Location(stmt.file, s.line, s.column),
                    "ACC002",
                    stmt.name or "",
                    f"the suppression of {s.rule} suppresses nothing: the statement below "
                    f"raises no {s.rule} finding",
                    f"remove {s.rule} from the `-- accord: ignore` comment",
                )
