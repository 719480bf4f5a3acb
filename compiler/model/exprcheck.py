"""Hand-written row-filter expressions are checked, not only parsed: the predicate must be
boolean, read only the columns its ``arguments`` declare, and declare types the platform has.
sqlglot does the work: its scope analysis finds the columns the predicate reads (in the
predicate itself, and those a subquery takes from it), and its type annotation, given the
arguments as the one table in scope, finds what the predicate returns.

An unqualified name inside a subquery is the subquery's own column when one of its tables has
it, as SQL resolves it (:func:`compiler.model.shadowing.inside`): the model's mapping tables
have known columns (``group_name`` in ``EXISTS (SELECT 1 FROM ..._grants g WHERE ... AND
is_account_group_member(group_name))`` is the table's), and a table whose columns accord does
not know may have it. Only a name no table in scope can have is the outer row's, and must be
an argument."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.scope import build_scope

from accord.compiler.core.platforms import facts
from accord.compiler.model.shadowing import Columns, inside
from accord.compiler.model.types import DIALECTS

_ARGS = "accord_arguments"

T = exp.DataType.Type
#: the base types each platform has. Snowflake: "Summary of data types",
#: https://docs.snowflake.com/en/sql-reference/intro-summary-data-types; Databricks: "Data
#: types", https://docs.databricks.com/sql/language-manual/sql-ref-datatypes.html. sqlglot
#: builds a type from any dialect's vocabulary (UUID, MONEY, INT128, ...): these sets say
#: which of them the platform really has.
PLATFORM_TYPES: dict[str, frozenset[exp.DataType.Type]] = {
    "snowflake": frozenset(
        {
            T.DECIMAL,
            T.BIGDECIMAL,
            T.INT,
            T.BIGINT,
            T.SMALLINT,
            T.TINYINT,
            T.DOUBLE,
            T.FLOAT,
            T.VARCHAR,
            T.CHAR,
            T.NCHAR,
            T.NVARCHAR,
            T.TEXT,
            T.BINARY,
            T.VARBINARY,
            T.BOOLEAN,
            T.DATE,
            T.DATETIME,
            T.TIME,
            T.TIMESTAMP,
            T.TIMESTAMPLTZ,
            T.TIMESTAMPNTZ,
            T.TIMESTAMPTZ,
            T.VARIANT,
            T.OBJECT,
            T.ARRAY,
            T.GEOGRAPHY,
            T.GEOMETRY,
            T.VECTOR,
            T.STRUCT,
            T.MAP,
        }
    ),
    "databricks": frozenset(
        {
            T.BIGINT,
            T.BINARY,
            T.BOOLEAN,
            T.DATE,
            T.DECIMAL,
            T.DOUBLE,
            T.FLOAT,
            T.INT,
            T.INTERVAL,
            T.SMALLINT,
            T.TINYINT,
            T.TEXT,
            T.VARCHAR,
            T.CHAR,
            T.TIMESTAMP,
            T.TIMESTAMPNTZ,
            T.TIMESTAMPLTZ,
            T.ARRAY,
            T.MAP,
            T.STRUCT,
            T.VARIANT,
            T.NULL,
            T.GEOGRAPHY,
            T.GEOMETRY,
        }
    ),
}


def type_problem(dtype: exp.DataType, platform: str) -> str:
    """Why ``dtype`` is not a type of ``platform``, or ""."""
    allowed = PLATFORM_TYPES[platform]
    for node in dtype.find_all(exp.DataType):
        if node.this not in allowed:
            return f"{node.sql(DIALECTS[platform])} is not a {platform} data type"
    return ""


def _fold(name: str, platform: str, quoted: bool) -> str:
    """Snowflake resolves an unquoted name in upper case and a quoted one as written;
    Databricks column names are case-insensitive, quoted or not."""
    return facts(platform).resolve(name, quoted)


def predicate_problems(
    tree: exp.Expression,
    arguments: dict[str, str],
    platform: str,
    columns: Columns | None = None,
) -> list[str]:
    """What is wrong with the predicate ``tree`` reading ``arguments`` (name -> type), with
    ``columns`` the tables whose columns are known (the model's mapping tables)."""
    problems = []
    declared = {_fold(a, platform, False) for a in arguments}
    select = exp.select("1").from_(_ARGS).where(tree.copy())
    try:
        root = build_scope(select)
    except SqlglotError as err:  # pragma: no cover - sqlglot builds scopes for any SELECT
        return [f"cannot analyse the expression: {err}"]
    if root is None:  # pragma: no cover
        return []
    known = columns or {}
    # sqlglot lists a subquery's unqualified names among the outer scope's columns too (they
    # may be correlated): the outer row's are the predicate's own and, inside a subquery,
    # those no table in scope has or may have
    subqueries = [s for s in root.traverse() if s is not root]
    nested = {id(c) for s in subqueries for c in s.columns}
    outer = [c for c in root.columns if id(c) not in nested]
    for scope in subqueries:
        for column in scope.external_columns:
            ident = column.this
            if column.table or not isinstance(ident, exp.Identifier):
                continue
            name = _fold(ident.name, platform, bool(ident.args.get("quoted")))
            if not inside(scope, root, name, platform, known):
                outer.append(column)
    missing: list[str] = []
    for column in outer:
        ident = column.this
        if not isinstance(ident, exp.Identifier):
            continue
        name = _fold(ident.name, platform, bool(ident.args.get("quoted")))
        if name not in declared and name not in missing:
            missing.append(name)
    for name in missing:
        problems.append(
            f"reads column {name}, which is not in 'arguments' ({', '.join(arguments)}): the "
            "policy receives only the columns it declares"
        )
    for column in outer:  # the outer row's columns are the arguments' table's
        if not column.table:
            column.set("table", exp.to_identifier(_ARGS))
    schema = {_ARGS: dict(arguments)}
    try:
        typed = annotate_types(select, schema=schema, dialect=DIALECTS[platform])
    except (SqlglotError, KeyError, ValueError, TypeError):
        return problems
    where = typed.args.get("where")
    result = where.this.type if where is not None else None
    if result is not None and result.this not in (T.BOOLEAN, T.UNKNOWN, T.NULL) and not missing:
        problems.append(
            f"is not a predicate: it returns {result.sql(DIALECTS[platform])}, not BOOLEAN "
            "(compare it with something, e.g. col = 'value')"
        )
    return problems
