"""ACC101-ACC102: policies that read the caller's identity the wrong way.

Each rule has a check over policy files (hand-written `row_filter.expression` predicates) and
one over SQL files (policy and function bodies, access-deciding views); the policy check's
docstring is the rule's page.
"""

from __future__ import annotations

from collections.abc import Iterator

from compiler.lint.bodies import (
    at,
    expressions,
    name_of,
    read_bodies,
    within,
)
from compiler.lint.checks import Context, SqlContext, rule, sql_rule
from compiler.lint.finding import Finding, SqlHit
from compiler.lint.trees import (
    role_calls,
    workspace_group_calls,
)


@rule("ACC101")
def current_role(ctx: Context) -> Iterator[Finding]:
    """A Snowflake policy expression asks for the primary role only.

    ## What it does
    Flags `CURRENT_ROLE()` and `CURRENT_AVAILABLE_ROLES()` in Snowflake policy expressions:
    hand-written `row_filter.expression.snowflake` predicates, and the bodies of row access
    policies, masking policies and functions in Snowflake SQL files.

    ## Why is this bad?
    `CURRENT_ROLE()` is the session's *primary* role only. A user whose grant sits on a
    secondary role is denied by a policy written with it, and agents and other
    platform-established sessions often run under the user's default role, so the case is
    common rather than rare. `CURRENT_AVAILABLE_ROLES()` ignores which roles are active:
    Snowflake warns that in a policy it "might inadvertently restrict access".
    `IS_ROLE_IN_SESSION(r)` is true when any active primary or secondary role inherits `r`,
    and is what Snowflake recommends for policy conditions.

    ## Example
    ```yaml
    datasets:
      assay_results:
        platform: snowflake
        table: DISCOVERY.ASSAYS.RESULTS
        row_filter:
          expression:
            snowflake: "PROGRAMME_CODE IN (SELECT g.PROGRAMME_CODE FROM GOV.POL.GRANTS g
                        WHERE g.ROLE_NAME = CURRENT_ROLE())"
          arguments: {PROGRAMME_CODE: VARCHAR}
    ```
    ```sql
    CREATE MASKING POLICY gov.pol.notes_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED' THEN val ELSE '***' END;
    ```

    ## How to fix
    Let accord write the role check: `row_filter: {entitlement: programme, column:
    PROGRAMME_CODE}` compiles to `IS_ROLE_IN_SESSION(g.ROLE_NAME)`. In hand-written SQL,
    replace `CURRENT_ROLE() = 'R'` with `IS_ROLE_IN_SESSION('R')` and a lookup on
    `CURRENT_ROLE()` with `IS_ROLE_IN_SESSION(g.ROLE_NAME)`.
    """
    for e in expressions(ctx):
        if e.platform != "snowflake":
            continue
        for node, name in role_calls(e.tree):
            yield Finding(
                within(ctx, e, node),
                "ACC101",
                f"datasets.{e.dataset}",
                current_role_message(name, f"the Snowflake row filter of {e.dataset}"),
                "use IS_ROLE_IN_SESSION(<role>), which sees primary and secondary roles, or "
                "replace the expression with `entitlement:` and `column:` so accord writes "
                "the role check",
            )


@sql_rule("ACC101")
def current_role_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC101 in Snowflake policy bodies (see the policy-file check for the rule page)."""
    for target in read_bodies(ctx, "snowflake"):
        stmt = target.stmt
        for node, name in role_calls(target.body):
            finding = Finding(
                at(stmt, node),
                "ACC101",
                name_of(target),
                current_role_message(name, target.what),
                "use IS_ROLE_IN_SESSION(<role>), which sees primary and secondary roles "
                "(IS_ROLE_IN_SESSION(g.ROLE_NAME) for a mapping-table lookup)",
            )
            yield SqlHit(finding, (stmt,))


def current_role_message(function: str, where: str) -> str:
    if function == "CURRENT_ROLE":
        return (
            f"{where} calls CURRENT_ROLE(), the session's primary role only: a user whose "
            "grant sits on a secondary role is denied"
        )
    return (
        f"{where} calls CURRENT_AVAILABLE_ROLES(), which ignores which roles are active in "
        "the session and may restrict (or widen) access unexpectedly"
    )


@rule("ACC102")
def workspace_group_check(ctx: Context) -> Iterator[Finding]:
    """A Databricks filter or mask checks workspace-local groups.

    ## What it does
    Flags `is_member(...)` in Databricks policy expressions: hand-written
    `row_filter.expression.databricks` predicates and function bodies in Databricks SQL
    files.

    ## Why is this bad?
    `is_member()` checks *workspace-local* groups. Unity Catalog grants, and the groups
    accord's principals name, are *account* groups: a user in the account group but not in a
    same-named workspace group is denied, and a workspace admin can add anyone to a
    workspace group to pass the check. Databricks' own documentation of `is_member()` says to
    use `is_account_group_member()` in most cases.

    ## Example
    ```yaml
    row_filter:
      expression:
        databricks: "region = 'EU' OR is_member('global-readers')"
      arguments: {region: STRING}
    ```

    ## How to fix
    Call `is_account_group_member('global-readers')`, or use an entitlement row filter,
    which accord compiles with `is_account_group_member()`.
    """
    for e in expressions(ctx):
        if e.platform != "databricks":
            continue
        for node in workspace_group_calls(e.tree):
            yield Finding(
                within(ctx, e, node),
                "ACC102",
                f"datasets.{e.dataset}",
                workspace_group_message(f"the Databricks row filter of {e.dataset}"),
                "call is_account_group_member(<group>) instead of is_member(<group>)",
            )


@sql_rule("ACC102")
def workspace_group_check_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC102 in Databricks function bodies (see the policy-file check for the rule page)."""
    for target in read_bodies(ctx, "databricks"):
        stmt = target.stmt
        for node in workspace_group_calls(target.body):
            finding = Finding(
                at(stmt, node),
                "ACC102",
                name_of(target),
                workspace_group_message(target.what),
                "call is_account_group_member(<group>) instead of is_member(<group>)",
            )
            yield SqlHit(finding, (stmt,))


def workspace_group_message(where: str) -> str:
    return (
        f"{where} calls is_member(), which checks workspace-local groups, not the account "
        "groups that Unity Catalog grants name"
    )
