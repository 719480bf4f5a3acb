"""Binding compiled policy bodies to a persona table, in DuckDB's dialect.

A policy body is a sqlglot tree in its platform's dialect. Binding it for execution:

1. its parameters become the arguments of the attachment (the target table's columns,
   or ``USING`` literals). Only a column that means the parameter is replaced: unqualified
   and not a column of a table that an enclosing subquery reads (inner scope wins, as in
   SQL), or qualified by the function's own name (Databricks). ``g.<dim>_code`` inside the
   mapping-table subquery is never the parameter;
2. calls of other compiled functions (salt functions, helpers) are inlined with their own
   bodies, bound the same way;
3. the platform's context functions become lookups into the persona row of the query
   (alias ``accord_p``), so one query evaluates every persona at once:
   ``IS_ROLE_IN_SESSION(r)`` -> ``list_contains(accord_p.sf_roles, r)``, ``CURRENT_ROLE()``
   -> the primary role, ``CURRENT_AVAILABLE_ROLES()`` -> a JSON array string of every role,
   ``is_account_group_member(g)`` -> account groups, ``is_member(g)`` -> workspace-local
   groups, ``current_user()`` / ``session_user()`` -> the persona's user name,
   ``CURRENT_DATE()`` -> the date verification evaluates at (``--as-of``);
4. tables become the DuckDB tables the compiled statements created, named
   ``"<platform>:<FOLDED NAME>"`` (keeping the alias the body uses);
5. the tree is generated as DuckDB SQL by sqlglot (``sha2(x, 256)`` -> ``sha256``, ``||`` and
   ``concat`` propagate NULL as on both platforms); anything sqlglot cannot express in DuckDB
   is a :class:`BindError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from accord.compiler.core.platforms import facts
from accord.compiler.core.today import today
from accord.compiler.sqlscan import Statement
from accord.compiler.verify.sources import PlatformSQL, Routine, fold

ROWS = "accord_t"
PERSONA = "accord_p"
MAX_DEPTH = 16


class BindError(Exception):
    """A body that cannot be bound or transpiled; located at the statement that holds it."""

    def __init__(self, stmt: Statement, message: str) -> None:
        line = stmt.body_line or stmt.line
        column = stmt.body_column if stmt.body_line else stmt.column
        super().__init__(f"{stmt.file}:{line}:{column}: {message}")
        self.stmt = stmt
        self.file, self.line, self.column, self.message = stmt.file, line, column, message


def duck_table(platform: str, name: str) -> str:
    return f"{platform}:{fold(name, platform)}"


def row_column(name: str) -> exp.Column:
    """A column of the generated rows of the dataset being checked."""
    return exp.Column(this=exp.to_identifier(name, quoted=True), table=exp.to_identifier(ROWS))


def persona_column(name: str) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(PERSONA))


def _available_roles() -> exp.Column:
    """CURRENT_AVAILABLE_ROLES(): every role of the persona, as a JSON array string."""
    column = persona_column("sf_available")
    column.meta["accord_available_roles"] = True
    return column


def _call(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _dotted(node: exp.Expression) -> list[str] | None:
    """The parts of a dotted name (``a.b.c``) made of identifiers, else None."""
    if isinstance(node, exp.Identifier):
        return [node.name]
    if isinstance(node, exp.Column):
        return [p.name for p in node.parts]
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
        left = _dotted(node.this)
        return None if left is None else [*left, node.expression.name]
    return None


def _table_name(table: exp.Table) -> str:
    return ".".join(p.name for p in table.parts)


class Binder:
    """Binds routine calls of one platform's compiled SQL. ``table_columns`` maps each DuckDB
    table the compiled statements created to its (lower-case) column names."""

    def __init__(
        self, sql: PlatformSQL, table_columns: Mapping[str, set[str]], as_of: date | None = None
    ) -> None:
        self.sql = sql
        self.platform = sql.platform
        self.table_columns = table_columns
        #: the day CURRENT_DATE() answers (``accord verify --as-of``); None: today
        day = (as_of or today()).isoformat()

        def current_date(n: exp.Expression) -> exp.Expression:
            return exp.cast(exp.Literal.string(day), exp.DataType.build("DATE"))

        self._context: dict[type[exp.Expression] | str, Callable[[exp.Expression], exp.Expression]]
        # each platform's context functions, bound to the persona table's columns (the one
        # place verify stands in for the platforms' session functions)
        if facts(self.platform).principal_kind == "role":
            self._context = {
                "IS_ROLE_IN_SESSION": lambda n: _call(
                    "list_contains", persona_column("sf_roles"), *n.expressions
                ),
                exp.CurrentRole: lambda n: persona_column("sf_primary"),
                exp.CurrentAvailableRoles: lambda n: _available_roles(),
                exp.CurrentUser: lambda n: persona_column("user_name"),
                exp.SessionUser: lambda n: persona_column("user_name"),
                exp.CurrentDate: current_date,
            }
        else:
            self._context = {
                "IS_ACCOUNT_GROUP_MEMBER": lambda n: _call(
                    "list_contains", persona_column("dbx_groups"), *n.expressions
                ),
                "IS_MEMBER": lambda n: _call(
                    "list_contains", persona_column("dbx_workspace_groups"), *n.expressions
                ),
                exp.CurrentUser: lambda n: persona_column("user_name"),
                exp.SessionUser: lambda n: persona_column("user_name"),
                exp.CurrentDate: current_date,
            }

    # ---- public -------------------------------------------------------------------------------

    def call_sql(self, routine: Routine, args: list[exp.Expression]) -> str:
        """DuckDB SQL for ``routine(args...)`` evaluated per row and persona."""
        tree = self._bind(routine, args, 0)
        problem = unknown_function(tree)
        if problem:
            raise BindError(routine.stmt, f"{routine.name}: {problem}")
        try:
            return tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE)
        except SqlglotError as err:
            raise BindError(
                routine.stmt, f"cannot transpile {routine.name} to DuckDB: {err}"
            ) from None

    def argument(self, item: str, routine: Routine) -> exp.Expression:
        """An attachment's argument: a column of the table, or a literal as written."""
        if item[:1] in ("'", '"') or item[:1].isdigit() or item[:1] == "-":
            try:
                return sqlglot.parse_one(item, read=self.platform)
            except SqlglotError as err:
                raise BindError(routine.stmt, f"cannot read argument {item}: {err}") from None
        return row_column(item)

    # ---- binding -----------------------------------------------------------------------------

    def _bind(self, routine: Routine, args: list[exp.Expression], depth: int) -> exp.Expression:
        if depth > MAX_DEPTH:
            raise BindError(routine.stmt, f"{routine.name}: calls nest deeper than {MAX_DEPTH}")
        if len(args) != len(routine.params):
            raise BindError(
                routine.stmt,
                f"{routine.name} takes {len(routine.params)} argument(s) but is called or "
                f"attached with {len(args)}",
            )
        body = self._substitute(routine, routine.body.copy(), args)
        body = self._rename_tables(routine, body)
        body = self._contextualize(body)
        body = self._platform_semantics(body)
        return self._inline(body, depth)

    def _substitute(
        self, routine: Routine, body: exp.Expression, args: list[exp.Expression]
    ) -> exp.Expression:
        index = {p.name.lower(): i for i, p in enumerate(routine.params)}
        own = routine.name.split(".")[-1].lower()
        for col in list(body.find_all(exp.Column)):
            name = col.name.lower()
            if name not in index:
                continue
            qualifier = col.table.lower()
            if qualifier and qualifier != own:
                continue
            if not qualifier and self._shadowed(col, name):
                continue
            replacement = args[index[name]].copy()
            if col is body:
                return replacement
            col.replace(replacement)
        return body

    def _shadowed(self, col: exp.Column, name: str) -> bool:
        """Whether an enclosing SELECT reads a table (or derived table) with column ``name``."""
        node: exp.Expression | None = col.parent
        while node is not None:
            if isinstance(node, exp.Select):
                sources = []
                if node.args.get("from_") is not None:
                    sources.append(node.args["from_"].this)
                sources.extend(j.this for j in node.args.get("joins") or [])
                for src in sources:
                    if isinstance(src, exp.Table):
                        cols = self.table_columns.get(duck_table(self.platform, _table_name(src)))
                        if cols and name in cols:
                            return True
                    elif (
                        isinstance(src, exp.Subquery)
                        and isinstance(src.this, exp.Select)
                        and name in {s.alias_or_name.lower() for s in src.this.selects}
                    ):
                        return True
            node = node.parent
        return False

    def _rename_tables(self, routine: Routine, body: exp.Expression) -> exp.Expression:
        for table in list(body.find_all(exp.Table)):
            if table.meta.get("accord_bound") or not table.name:
                continue
            original = _table_name(table)
            duck = duck_table(self.platform, original)
            if duck not in self.table_columns:
                raise BindError(
                    routine.stmt,
                    f"{routine.name} reads table {original}, which the compiled SQL does not "
                    "create",
                )
            alias = table.alias or table.name
            table.set("catalog", None)
            table.set("db", None)
            table.set("this", exp.to_identifier(duck, quoted=True))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
            table.meta["accord_bound"] = True
        return body

    def _platform_semantics(self, body: exp.Expression) -> exp.Expression:
        """Where DuckDB's function of the same name means something else, the platform's
        meaning (found by executing the same bodies on Spark, ``accord verify --engine all``):
        a ``substr`` length below 1 gives the empty string on both platforms ("If len is less
        than 1 the result is empty", Databricks' substr; "If the length is a negative number,
        the function returns an empty string", Snowflake's), where DuckDB counts backwards;
        a start of 0 is the first character where the platform says so
        (:attr:`~compiler.core.platforms.PlatformFacts.substring_zero_is_first`)."""
        zero_is_first = facts(self.platform).substring_zero_is_first

        def fix(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Substring):
                return node
            length = node.args.get("length")
            if length is not None:
                node.set("length", _at_least(length, 0))
            start = node.args.get("start")
            if zero_is_first and start is not None:
                if isinstance(start, exp.Literal) and not start.is_string:
                    if start.to_py() == 0:
                        node.set("start", exp.Literal.number(1))
                else:
                    node.set(
                        "start",
                        exp.Case(
                            ifs=[
                                exp.If(
                                    this=exp.EQ(
                                        this=start.copy(), expression=exp.Literal.number(0)
                                    ),
                                    true=exp.Literal.number(1),
                                )
                            ],
                            default=start.copy(),
                        ),
                    )
            return node

        return _post_order(body, fix)

    def _context_rule(self, node: exp.Expression) -> Callable[[exp.Expression], exp.Expression]:
        if isinstance(node, exp.Anonymous):
            return self._context.get(node.name.upper())  # type: ignore[return-value]
        return self._context.get(type(node))  # type: ignore[return-value]

    def _contextualize(self, body: exp.Expression) -> exp.Expression:
        def swap(node: exp.Expression) -> exp.Expression:
            if (
                isinstance(node, exp.ArrayContains)
                and isinstance(node.this, exp.ParseJSON)
                and node.this.this.meta.get("accord_available_roles")
            ):
                # ARRAY_CONTAINS('R'::VARIANT, PARSE_JSON(CURRENT_AVAILABLE_ROLES()))
                value = node.expression
                while isinstance(value, exp.Cast):
                    value = value.this
                return _call(
                    "list_contains",
                    persona_column("sf_available_list"),
                    exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR")),
                )
            rule = self._context_rule(node)
            return rule(node) if rule is not None else node

        return _post_order(body, swap)

    def _inline(self, body: exp.Expression, depth: int) -> exp.Expression:
        def expand(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Anonymous) and isinstance(node.parent, exp.Dot):
                return node  # handled at the Dot that names it
            if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
                prefix = _dotted(node.this)
                if prefix is None:
                    return node
                name = ".".join([*prefix, node.expression.name])
                call = node.expression
            elif isinstance(node, exp.Anonymous):
                name, call = node.name, node
            else:
                return node
            routine = self._lookup(name)
            if routine is None:
                return node
            return self._bind(routine, list(call.expressions), depth + 1)

        return _post_order(body, expand)

    def _lookup(self, name: str) -> Routine | None:
        found = self.sql.routine(name)
        if found is not None or "." in name:
            return found
        # an unqualified call: a compiled routine of that name, if only one
        key = fold(name, self.platform)
        matches = [r for k, r in self.sql.routines.items() if k.rsplit(".", 1)[-1] == key]
        return matches[0] if len(matches) == 1 else None


#: The functions verify executes: pure scalar functions that policy bodies use, and the calls
#: binding itself writes. Compiled SQL given with ``--compiled`` is untrusted input (it may have
#: been edited by hand), so anything else (a table function such as ``read_text``, a setting,
#: a catalog function) is refused before DuckDB sees it; DuckDB also runs with its external
#: access disabled and its configuration locked (``compiler.verify.execute.locked_connection``).
SAFE_FUNCTIONS: frozenset[type[exp.Expression]] = frozenset(
    cls
    for name in [
        "Abs",
        "Array",
        "ArraySize",
        "Contains",
        "EndsWith",
        "StartsWith",
        "StrPosition",
        "Replace",
        "Reverse",
        "SplitPart",
        "Mod",
        "Sign",
        "Length",
        "ArrayContains",
        "Between",
        "Case",
        "Cast",
        "Ceil",
        "Coalesce",
        "Concat",
        "ConcatWs",
        "Exists",
        "Floor",
        "Greatest",
        "If",
        "Initcap",
        "Least",
        "Left",
        "Lower",
        "MD5",
        "Nullif",
        "ParseJSON",
        "Repeat",
        "RegexpLike",
        "RegexpReplace",
        "Right",
        "Round",
        "SHA",
        "SHA2",
        "Substring",
        "Trim",
        "TryCast",
        "Upper",
        "Pad",
    ]
    if (cls := getattr(exp, name, None)) is not None
)
SAFE_ANONYMOUS = frozenset(
    [
        "list_contains",
        "md5",
        "sha1",
        "sha256",
        "lpad",
        "rpad",
        "reverse",
        "replace",
        "strpos",
        "contains",
        "starts_with",
        "ends_with",
        "split_part",
    ]
)


def _at_least(value: exp.Expression, floor: int) -> exp.Expression:
    if isinstance(value, exp.Literal) and not value.is_string:
        return exp.Literal.number(max(int(value.to_py()), floor))
    return exp.Greatest(this=value.copy(), expressions=[exp.Literal.number(floor)])


#: functions DuckDB has under the same name that compute something else on the platforms:
#: executing them would answer with DuckDB's value as if it were the platform's
NOT_THE_PLATFORMS = {
    "hash": "hash() is the platform's own hash (Spark's Murmur3 on Databricks, a proprietary "
    "64-bit hash on Snowflake), which DuckDB's hash() is not; check it with "
    "`accord verify --engine spark` on Databricks",
}


def unknown_function(tree: exp.Expression) -> str:
    """Why ``tree`` may not run on DuckDB (a function verify does not know, a table it did not
    create), or "" when every function in it is one of :data:`SAFE_FUNCTIONS`."""
    for node in tree.walk():
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
            return f"reads {node.this.sql('duckdb')[:60]!r}, which is not a table"
        if isinstance(node, exp.Anonymous):
            if node.name.lower() in NOT_THE_PLATFORMS:
                return NOT_THE_PLATFORMS[node.name.lower()]
            if node.name.lower() not in SAFE_ANONYMOUS:
                return (
                    f"calls {node.name}(), which accord verify does not execute (only the "
                    "functions policy bodies use, and the compiled functions themselves)"
                )
        elif (
            isinstance(node, exp.Func)
            and not isinstance(node, exp.Binary | exp.Connector | exp.Unary)
            and type(node) not in SAFE_FUNCTIONS
        ):
            return (
                f"calls {node.sql_name()}(), which accord verify does not execute (only the "
                "functions policy bodies use, and the compiled functions themselves)"
            )
    return ""


def _post_order(
    node: exp.Expression, fn: Callable[[exp.Expression], exp.Expression]
) -> exp.Expression:
    """Apply ``fn`` to every node, children first; returns the (possibly new) root."""
    for child in list(node.iter_expressions()):
        _post_order(child, fn)
    new = fn(node)
    if new is not node and node.parent is not None:
        node.replace(new)
    return new
