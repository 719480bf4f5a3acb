"""Rules over the Unity Catalog ABAC policies that ``style: abac`` lowers to."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from compiler.lint import Context, Finding, rule
from targets.abac import MAX_MATCH_COLUMNS, MAX_POLICIES_PER_TABLE, MAX_PRINCIPALS
from targets.objects import AbacPolicy


@rule("ACC504")
def abac_quota(ctx: Context) -> Iterator[Finding]:
    """An ABAC policy or a table exceeds a Unity Catalog ABAC quota.

    ## What it does
    Reads the ABAC policies that `platforms.databricks.style: abac` compiles to and fires when
    a policy would name more than 20 principals in its TO or its EXCEPT clause (a mask's
    `unmasked_for`, or a row filter's `unfiltered_for`), when a table would carry more than 50
    policies, or when a hand-written row filter needs more than 3 MATCH COLUMNS conditions
    (one per argument).

    ## Why is this bad?
    These are hard quotas of Unity Catalog ABAC (docs.databricks.com, ABAC requirements,
    quotas, and limitations: 20 principals per policy clause, 50 policies per table, 3 column
    conditions per MATCH COLUMNS clause). Databricks refuses the CREATE POLICY statement, so
    the estate is applied half way: the tags are set and some policies exist, others do not,
    and the columns they were meant to protect stay in the clear.

    ## Example
    A mask whose `unmasked_for` lists 21 principals, on a Databricks platform with
    `style: abac`:
    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash
        unmasked_for: [team_01, team_02, ..., team_21]
    ```

    ## How to fix
    Name fewer principals: grant the clear value (or every row) to one account group that
    holds the others, and list that group. For a table with more than 50 policies, split its
    masked columns across fewer masks; for a hand-written filter, read at most 3 columns.
    """
    catalog = ctx.catalogs.get("databricks")
    if catalog is None:
        return
    project = ctx.project
    policies = catalog.of(AbacPolicy)
    for p in policies:
        widest = max(len(p.to), len(p.except_))
        if widest > MAX_PRINCIPALS:
            clause = "TO" if len(p.to) >= len(p.except_) else "EXCEPT"
            if p.mask is not None:
                yield Finding(
                    project.loc("masks", p.mask, "unmasked_for"),
                    "ACC504",
                    f"masks.{p.mask}",
                    f"the ABAC policy of mask {p.mask} would name {widest} principals in its "
                    f"{clause} clause; Unity Catalog accepts at most {MAX_PRINCIPALS}",
                    "list one account group that holds these principals in unmasked_for",
                )
            for d in p.datasets if p.kind == "ROW FILTER" else ():
                yield Finding(
                    project.loc("datasets", d, "row_filter"),
                    "ACC504",
                    f"datasets.{d}",
                    f"the ABAC row-filter policy of {d} would name {widest} principals in its "
                    f"{clause} clause; Unity Catalog accepts at most {MAX_PRINCIPALS}",
                    "list one account group that holds these principals in unfiltered_for",
                )
        if p.kind == "ROW FILTER" and len(p.match_columns) > MAX_MATCH_COLUMNS:
            for d in p.datasets:
                yield Finding(
                    project.loc("datasets", d, "row_filter", "arguments"),
                    "ACC504",
                    f"datasets.{d}",
                    f"the hand-written row filter of {d} reads {len(p.match_columns)} columns; "
                    f"an ABAC policy matches at most {MAX_MATCH_COLUMNS} columns",
                    f"rewrite the predicate to read at most {MAX_MATCH_COLUMNS} columns",
                )
    per_table = Counter(d for p in policies for d in p.datasets)
    for d, count in sorted(per_table.items()):
        if count > MAX_POLICIES_PER_TABLE:
            yield Finding(
                project.loc("datasets", d),
                "ACC504",
                f"datasets.{d}",
                f"table {ctx.model.datasets[d].table} would carry {count} ABAC policies; "
                f"Unity Catalog allows at most {MAX_POLICIES_PER_TABLE} per table",
                "use fewer distinct masks on this table's columns",
            )
