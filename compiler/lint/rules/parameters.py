"""ACC104: a policy parameter shadowed by a column inside a subquery of the body.

The decision is :func:`compiler.model.shadowing.shadowed_parameters` (sqlglot's scopes), shared
with ``accord verify``; this module says where the parameters and the known columns come from:
a hand-written `row_filter.expression` reads its `arguments`, with the model's mapping tables
known; a policy or function body in a SQL file reads its signature, with the tables a
``CREATE TABLE`` of the files linted declares known, and the mapping tables of the policy model
linted beside them (a policy directory given with the files, or a repository's: the rule's
``sql_reads`` in compiler/model/rules.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from accord.compiler.core.platforms import facts
from accord.compiler.lint.bodies import (
    Expression,
    at,
    expressions,
    fold,
    name_of,
    read_bodies,
    signatures,
    within,
)
from accord.compiler.lint.checks import Context, SqlContext, rule, sql_rule
from accord.compiler.lint.finding import Finding, SqlHit
from accord.compiler.model.grants import grants_tables
from accord.compiler.model.shadowing import (
    Columns,
    Shadowed,
    TableColumns,
    create_table_columns,
    grants_columns,
    shadowed_parameters,
)


def fix_for(param: str, dialect: str, function: str | None = None) -> str:
    """What to change: rename the parameter; in a Databricks function, or qualify it."""
    renamed = param + ("_VALUE" if param.isupper() else "_value")
    fix = (
        f"rename the parameter (for example to {renamed}) so that no column of the "
        "subquery's tables has its name, and use the new name in the body"
    )
    if facts(dialect).qualified_parameters:
        short = (function or "<function>").split(".")[-1]
        fix += f", or qualify the reference with the function's name ({short}.{param})"
    return fix


def model_columns(ctx: Context) -> dict[str, Columns]:
    """platform -> the columns of every mapping table the model compiles there (all of them:
    the key and principal columns, and the expiry column of a dimension with dated grants)."""
    found: dict[str, Columns] = ctx.memo(
        "parameters.model_columns", lambda: grants_columns(grants_tables(ctx.model))
    )
    return found


def expression_shadowing(ctx: Context, e: Expression) -> list[Shadowed]:
    rf = ctx.model.datasets[e.dataset].row_filter
    arguments = list((rf.arguments or {}) if rf is not None else {})
    return shadowed_parameters(e.tree, arguments, e.platform, model_columns(ctx).get(e.platform))


@rule("ACC104")
def shadowed_parameter(ctx: Context) -> Iterator[Finding]:
    """Inside a subquery of a policy body, a parameter's name resolves to a column.

    ## What it does
    Flags an unqualified name inside a subquery of a policy or filter body (a hand-written
    `row_filter.expression`, a Snowflake row access or masking policy, a Databricks SQL
    function used as a row filter or column mask) when the name is a parameter of the
    policy (an `arguments` entry of the expression), the author uses it as the parameter
    (compared with the subquery's columns, or as the value looked up), and it is also a
    column of a table the subquery reads. What the subquery gives is the column, as its
    author means, and is not a finding: its select list (`cpf IN (SELECT cpf FROM
    special_access WHERE ...)`, the left `cpf` the parameter), grouping and order.

    The table's columns are known for the model's mapping tables
    (`<governance_schema>.<dimension>_grants`: the key, principal and expiry columns) and
    for a `CREATE TABLE` in the files linted; for any other table the column is assumed
    possible when the same statement names it qualified (`g.region_code`). A SQL file,
    notebook or dbt macro knows the model's mapping tables when it is linted with the
    policy directory (`accord lint policies/ filters.sql`) or in a repository holding both
    (`accord lint .`); linted alone, it knows only what its files say. accord decides with
    sqlglot's scopes, as SQL resolves names, never by matching text.

    ## Why is this bad?
    SQL resolves an unqualified name inside a subquery to a column of the subquery's own
    tables first; only when none has it does the name reach the parameter. In
    `WHERE g.region_code = region_code`, both sides are the grants table's column: the
    condition is true for every grant, so the policy admits every row to anyone holding any
    grant, and nothing fails (the same shape with a masking policy shows the clear value).

    ## Example
    ```sql
    CREATE ROW ACCESS POLICY gov.policies.region_filter
      AS (region_code VARCHAR) RETURNS BOOLEAN ->
      EXISTS (SELECT 1 FROM gov.policies.region_grants g
              WHERE g.region_code = region_code AND IS_ROLE_IN_SESSION(g.role_name));
    ```
    ```yaml
    row_filter:
      expression:
        snowflake: "EXISTS (SELECT 1 FROM GOV.POLICIES.REGION_GRANTS g
                    WHERE g.REGION_CODE = REGION_CODE AND IS_ROLE_IN_SESSION(g.ROLE_NAME))"
      arguments: {REGION_CODE: VARCHAR}
    ```

    ## How to fix
    Name the parameter so that no column of the subquery's tables has its name
    (`AS (region_value VARCHAR)` and `g.region_code = region_value`); in a Databricks
    function, qualify it with the function's name (`region_filter.region_code`). Better
    still, let accord write the lookup: `row_filter: {entitlement: region, column:
    REGION_CODE}` compiles to a parameter named `REGION_VALUE`.
    """
    for e in expressions(ctx):
        for hit in expression_shadowing(ctx, e):
            yield Finding(
                within(ctx, e, hit.column),
                "ACC104",
                f"datasets.{e.dataset}",
                hit.message(f"the {e.platform.capitalize()} row filter of {e.dataset}"),
                fix_for(hit.parameter, e.platform),
            )


def _sql_columns(ctx: SqlContext) -> dict[str, Columns]:
    """dialect -> the tables whose columns are known: the mapping tables of the policy model
    linted beside the files, and the tables the files linted create."""

    def compute() -> dict[str, Columns]:
        out: dict[str, dict[tuple[str, ...], TableColumns]] = {}
        for platform, tables in grants_columns(ctx.grants).items():
            out.setdefault(platform, {}).update(tables)
        for stmt in ctx.statements:
            if stmt.expression is None:
                continue
            origin = f"CREATE TABLE at {stmt.file}:{stmt.line}"
            found = create_table_columns(stmt.expression, stmt.dialect, origin)
            for key, value in found.items():
                out.setdefault(stmt.dialect, {}).setdefault(key, value)
        return dict(out)

    found: dict[str, Columns] = ctx.memo("parameters.sql_columns", compute)
    return found


@sql_rule("ACC104")
def shadowed_parameter_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC104 in policy and function bodies (see the policy-file check for the rule page)."""
    known = _sql_columns(ctx)
    for target in read_bodies(ctx):
        stmt = target.stmt
        params = stmt.params
        if stmt.kind == "alter_policy_body":  # the signature is the CREATE statement's
            created = signatures(ctx).get((stmt.dialect, fold(stmt.name or "")))
            params = created.params if created is not None else ()
        if target.view or not params:
            continue
        names = [p.name for p in params]
        for hit in shadowed_parameters(target.body, names, stmt.dialect, known.get(stmt.dialect)):
            finding = Finding(
                at(stmt, hit.column),
                "ACC104",
                name_of(target),
                hit.message(f"the body of {target.what}"),
                fix_for(hit.parameter, stmt.dialect, stmt.name),
            )
            yield SqlHit(finding, (stmt,))
