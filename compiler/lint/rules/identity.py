"""ACC101-ACC103: policies that read the caller's identity the wrong way.

Each rule has a check over policy files (hand-written `row_filter.expression` predicates) and
one over SQL files (policy and function bodies, access-deciding views); the policy check's
docstring is the rule's page.
"""

from __future__ import annotations

from collections.abc import Iterator

from accord.compiler.core.platforms import facts
from accord.compiler.lint.bodies import (
    at,
    expressions,
    name_of,
    read_bodies,
    within,
)
from accord.compiler.lint.checks import Context, SqlContext, rule, sql_rule
from accord.compiler.lint.finding import Finding, SqlHit
from accord.compiler.lint.trees import (
    invoker_role_calls,
    role_calls,
    workspace_group_calls,
)


@rule("ACC101")
def current_role(ctx: Context) -> Iterator[Finding]:
    """A Snowflake policy expression asks for the primary role only.

    ## What it does
    Flags `CURRENT_ROLE()` and `CURRENT_AVAILABLE_ROLES()` in Snowflake policy expressions:
    hand-written `row_filter.expression.snowflake` predicates, and the bodies of policies of
    every kind (row access, masking, projection, aggregation, join, and a kind accord does not
    model that is written with a body), functions and secure views in Snowflake SQL files
    (plain, in notebooks and in dbt macros).

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
        if facts(e.platform).principal_kind != "role":  # roles in session: Snowflake
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


_INVOKER_FIX = (
    "use IS_ROLE_IN_SESSION(<role>), which sees the session's primary and secondary roles; "
    "keep the invoker form only where the policy must follow the owner of the view or "
    "function it is read through, and suppress this finding with that reason"
)


@rule("ACC103")
def invoker_role(ctx: Context) -> Iterator[Finding]:
    """A Snowflake policy checks the executing role, not the session's roles.

    ## What it does
    Flags `INVOKER_ROLE()` and `IS_GRANTED_TO_INVOKER_ROLE(...)` in Snowflake policy
    expressions: hand-written `row_filter.expression.snowflake` predicates, and the bodies of
    policies of every kind (row access, masking, projection, aggregation, join...), functions
    and secure views in Snowflake SQL files (plain, in notebooks and in dbt macros).

    ## Why is this bad?
    Both functions evaluate one role: the account role of the object executing the query.
    Queried directly, that is the session's primary role (`CURRENT_ROLE()`); through a view,
    it is the view's owner role; through a UDF or an owner's-rights procedure, its owner;
    in a task, the task's owner. Secondary roles never count. A user whose grant sits on a
    secondary role is denied when querying the table, and a policy on a table read through a
    view decides by the view owner's grants, for every user of the view alike. Snowflake's
    own page says to call `IS_ROLE_IN_SESSION` to evaluate the role hierarchy of the session.

    The invoker form is intended when the decision must follow who owns the object the data
    is read through, not who queries it: a policy that unmasks a column for a reporting view
    owned by a trusted role (the view's users then see what its owner may see), or a column
    that an owner's-rights procedure or a task must read in the clear while its callers may
    not. That is a deliberate choice to make per policy: suppress the finding with the
    reason (`-- accord: ignore ACC103 follows the owner of REPORTING.V_SALES`).

    ## Example
    ```sql
    CREATE MASKING POLICY gov.pol.email_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN IS_GRANTED_TO_INVOKER_ROLE('PII_READER') THEN val ELSE '***' END;
    ```
    ```yaml
    row_filter:
      expression:
        snowflake: "REGION = 'EU' OR INVOKER_ROLE() = 'GLOBAL_READER'"
      arguments: {REGION: VARCHAR}
    ```

    ## How to fix
    Replace `IS_GRANTED_TO_INVOKER_ROLE('R')` and `INVOKER_ROLE() = 'R'` with
    `IS_ROLE_IN_SESSION('R')`, or let accord write the role check (`unmasked_for:`, an
    entitlement row filter), which compiles to `IS_ROLE_IN_SESSION`.
    """
    for e in expressions(ctx):
        if facts(e.platform).principal_kind != "role":  # roles in session: Snowflake
            continue
        for node, name in invoker_role_calls(e.tree):
            yield Finding(
                within(ctx, e, node),
                "ACC103",
                f"datasets.{e.dataset}",
                invoker_role_message(name, f"the Snowflake row filter of {e.dataset}"),
                _INVOKER_FIX,
            )


@sql_rule("ACC103")
def invoker_role_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC103 in Snowflake policy bodies (see the policy-file check for the rule page)."""
    for target in read_bodies(ctx, "snowflake"):
        stmt = target.stmt
        for node, name in invoker_role_calls(target.body):
            finding = Finding(
                at(stmt, node),
                "ACC103",
                name_of(target),
                invoker_role_message(name, target.what),
                _INVOKER_FIX,
            )
            yield SqlHit(finding, (stmt,))


def invoker_role_message(function: str, where: str) -> str:
    return (
        f"{where} calls {function}(), which evaluates the role of the object executing the "
        "query (through a view, the view's owner role), never the session's secondary roles"
    )


@rule("ACC102")
def workspace_group_check(ctx: Context) -> Iterator[Finding]:
    """A Databricks filter or mask checks workspace-local groups.

    ## What it does
    Flags `is_member(...)` in Databricks policy expressions: hand-written
    `row_filter.expression.databricks` predicates, function bodies, and the queries of views
    that decide access per caller in Databricks SQL files: dynamic views, and a pipeline's live
    views, materialized views and streaming tables (`CREATE OR REFRESH STREAMING TABLE ... AS
    SELECT ... is_member(...)`), in plain files, notebooks and dbt macros.

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
        if facts(e.platform).principal_kind != "group":  # account groups: Databricks
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
