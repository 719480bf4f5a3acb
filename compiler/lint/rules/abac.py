"""ACC504-ACC506: the Unity Catalog ABAC policies that ``style: abac`` lowers to.

ACC504 checks Unity Catalog's ABAC quotas. ACC505 and ACC506 are platform behaviour that the
vendors' documentation leaves open: where the unsafe reading would leak, accord warns (docs/live.md,
Platform notes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.targets.abac import ALL_USERS, MAX_MATCH_COLUMNS, MAX_POLICIES_PER_TABLE, MAX_PRINCIPALS
from accord.targets.objects import AbacPolicy


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
                several = ctx.model.datasets[d].row_filter
                if several is not None and several.dimensions is not None:
                    yield Finding(
                        project.loc("datasets", d, "row_filter"),
                        "ACC504",
                        f"datasets.{d}",
                        f"the row filter of {d} keys rows by {len(p.match_columns)} "
                        f"dimensions; an ABAC policy matches at most {MAX_MATCH_COLUMNS} "
                        "columns",
                        f"filter {d} by at most {MAX_MATCH_COLUMNS} dimensions, or use "
                        "Databricks style table",
                    )
                    continue
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


@rule("ACC505")
def abac_service_identity(ctx: Context) -> Iterator[Finding]:
    """A service identity reads tables whose ABAC policies apply to `account users`.

    ## What it does
    Fires, on a Databricks platform with `style: abac`, for every surface with
    `identity: service` that reads a dataset an ABAC policy governs.

    ## Why is this bad?
    accord's ABAC policies apply ``TO `account users` EXCEPT ...``. The documentation calls
    `account users` "the root group to which all users in the account belong"
    (sql-ref-principal); whether service principals are members is not documented. A principal
    outside a policy's TO list is neither filtered nor masked: if service principals are not
    members, a pipeline running as one reads every row and every clear value.

    ## Example
    ```yaml
    platforms: {databricks: {governance_schema: gov.pol, style: abac}}
    surfaces:
      nightly_export: {platform: databricks, reads: [variant_calls], identity: service}
    ```

    ## How to fix
    Put the service principal in an account group and check, on the workspace, that the
    policies apply to it (query as the service principal: masked values must come back); or
    use `style: table`, whose filters and masks apply to every caller. Suppress with the
    evidence once checked: `ignore: {ACC505: "checked: ... is masked"}`.
    """
    catalog = ctx.catalogs.get("databricks")
    if catalog is None or catalog.style != "abac":
        return
    governed = {
        d
        for p in catalog.of(AbacPolicy)
        if any(t.lower() == ALL_USERS for t in p.to)
        for d in p.datasets
    }
    for name, surface in sorted(ctx.model.surfaces.items()):
        cfg = ctx.model.platform_config(surface.platform) if surface.platform != "none" else None
        if cfg is None or cfg.style != "abac" or surface.identity != "service":
            continue
        hit = sorted(set(surface.reads) & governed)
        if hit:
            yield Finding(
                ctx.project.loc("surfaces", name, "identity"),
                "ACC505",
                f"surfaces.{name}",
                f"surface {name} runs as a service identity on {', '.join(hit)}, governed by "
                "ABAC policies TO `account users`; whether service principals belong to "
                "`account users` is not documented, and a principal outside TO is neither "
                "filtered nor masked",
                "check on the workspace that the policies apply to the service principal, "
                "or use style: table",
            )


@rule("ACC506")
def abac_salt_execute(ctx: Context) -> Iterator[Finding]:
    """A salted mask under ABAC may need every querying user to hold EXECUTE on the salt.

    ## What it does
    Fires, on a Databricks platform with `style: abac`, for every hash mask with a Databricks
    salt.

    ## Why is this bad?
    ABAC filters and masks evaluate as the session user (unity-catalog/abac). Whether the
    querying user then needs EXECUTE on a function the mask calls is not documented. If so,
    everyone who queries the table must be granted EXECUTE on the salt function, and anyone who
    may execute it can `SELECT` it and read the salt: the pseudonyms can then be recomputed
    from guessed identifiers.

    ## Example
    ```yaml
    platforms: {databricks: {governance_schema: gov.pol, style: abac}}
    masks:
      subject_pseudonym:
        strategy: hash
        salt: {databricks: env:SUBJECT_SALT_DATABRICKS}
    ```

    ## How to fix
    Keep EXECUTE on the salt function with the owner of the mask functions only, and check on
    the workspace that a querying user without EXECUTE still gets salted digests (not an
    error); or use `style: table`, whose masks run with the definer's rights. Suppress with
    the evidence once checked.
    """
    catalog = ctx.catalogs.get("databricks")
    if catalog is None or catalog.style != "abac":
        return
    for name, mask in sorted(ctx.model.masks.items()):
        salt = (mask.salt or {}).get("databricks")  # type: ignore[call-overload]
        if mask.strategy == "hash" and salt:
            yield Finding(
                ctx.project.loc("masks", name, "salt"),
                "ACC506",
                f"masks.{name}",
                f"mask {name} calls its salt function under ABAC, which evaluates as the "
                "session user; whether querying users then need EXECUTE on it (and so could "
                "read the salt) is not documented",
                "grant EXECUTE on the salt function to the mask owner only and check that "
                "querying users still get salted digests, or use style: table",
            )
