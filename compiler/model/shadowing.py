"""Policy parameters shadowed by a column inside a subquery of the body (ACC104).

In SQL an unqualified name inside a subquery resolves to a column of a table that subquery
(or an enclosing one) reads before it resolves to anything outside it. A policy body such as

    EXISTS (SELECT 1 FROM GOV.POLICIES.REGION_GRANTS g
            WHERE g.region_code = region_code AND IS_ROLE_IN_SESSION(g.role_name))

with a parameter ``region_code`` compares the grants table's column with itself: the filter
admits every row to anyone holding any grant. sqlglot's scope analysis decides it: the body
is put in ``SELECT 1 WHERE <body>`` (the parameters are the outer scope), and every
unqualified column of an inner scope whose name is a parameter is checked against the
sources of that scope and of the scopes enclosing it, innermost first.

Whether a table has the column is known when its columns are (:class:`Columns`: the model's
mapping tables, a ``CREATE TABLE`` in the files read); when they are not, it is assumed
possible when the same statement names the column qualified somewhere (``g.region_code``).
The policy-file path imports this module: it needs sqlglot only, never the SQL scanner.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, build_scope

from accord.compiler.core.platforms import facts

T = TypeVar("T")


def fold(name: str, dialect: str, quoted: bool = False) -> str:
    """Snowflake resolves an unquoted name in upper case and a quoted one as written;
    Databricks names are case-insensitive."""
    return facts(dialect).resolve(name, quoted)


def table_key(parts: Iterable[str], dialect: str) -> tuple[str, ...]:
    return tuple(fold(p, dialect) for p in parts)


@dataclass(frozen=True)
class TableColumns:
    """What is known of one table's columns: ``complete`` when they are all known (a mapping
    table, a ``CREATE TABLE``), else only that these are among them."""

    columns: frozenset[str]
    complete: bool
    #: where the knowledge comes from, for the message ("mapping table of dimension region")
    origin: str


#: folded table name parts -> what is known of its columns
Columns = Mapping[tuple[str, ...], TableColumns]


@dataclass(frozen=True)
class Shadowed:
    """An unqualified reference inside a subquery that names a parameter and resolves (or
    may resolve) to a column of ``table``."""

    column: exp.Column
    parameter: str
    table: str
    #: True: the table is known to have the column; False: assumed from the statement
    known: bool
    #: known: where the table's columns are known from; else the qualified reference seen
    origin: str

    def message(self, where: str) -> str:
        name = self.column.name
        if self.known:
            how = f"is the column of {self.table} ({self.origin} has {name})"
        else:
            how = (
                f"is the column of {self.table} if that table has one, as the statement's "
                f"own {self.origin} says it does"
            )
        return (
            f"{where}: inside the subquery, the unqualified {name} {how}, not the parameter "
            f"{self.parameter}: the condition compares the column with itself, and the "
            "policy admits every row the subquery finds"
        )


def lookup(columns: Mapping[tuple[str, ...], T], parts: tuple[str, ...]) -> T | None:
    """What ``columns`` holds for the table named by ``parts``: the same name, or one of the
    two names a suffix of the other (``REGION_GRANTS`` and ``GOV.POLICIES.REGION_GRANTS``)."""
    found = columns.get(parts)
    if found is not None:
        return found
    for key, value in sorted(columns.items()):
        n = min(len(key), len(parts))
        if n and key[-n:] == parts[-n:]:
            return value
    return None


def _qualified_names(tree: exp.Expression, dialect: str) -> dict[str, str]:
    """folded column name -> the first qualified reference to it (``g.region_code``)."""
    out: dict[str, str] = {}
    for col in tree.find_all(exp.Column):
        if col.table and isinstance(col.this, exp.Identifier):
            name = fold(col.this.name, dialect, bool(col.this.args.get("quoted")))
            out.setdefault(name, col.sql(dialect))
    return out


def _source_has(
    source: object,
    name: str,
    dialect: str,
    columns: Columns,
    qualified: dict[str, str],
) -> tuple[str, bool, str] | None:
    """(table, known, origin) when ``source`` (a scope's source) has, or may have, the
    column ``name``."""
    if isinstance(source, exp.Table):
        if not source.name:
            return None
        parts = table_key((p.name for p in source.parts), dialect)
        shown = ".".join(p.name for p in source.parts)
        known = lookup(columns, parts)
        if known is not None:
            if name in known.columns:
                return shown, True, known.origin
            if known.complete:
                return None
        if name in qualified:
            return shown, False, qualified[name]
        return None
    if isinstance(source, Scope):  # a derived table or CTE: its output columns
        expression = source.expression
        if isinstance(expression, exp.Select | exp.SetOperation):
            outputs = {fold(s, dialect) for s in expression.named_selects}
            if name in outputs:
                return "the derived table", True, "one of its output columns"
    return None


def shadowed_parameters(
    body: exp.Expression,
    parameters: Iterable[str],
    dialect: str,
    columns: Columns | None = None,
) -> list[Shadowed]:
    """Every unqualified reference inside a subquery of ``body`` that names one of
    ``parameters`` and is (or may be) a column of a table the subquery or an enclosing one
    reads, in the order of the body."""
    params = {fold(p, dialect): p for p in parameters}
    if not params:
        return []
    columns = columns or {}
    copy = body.copy()
    select = exp.select("1").where(copy, copy=False)
    try:
        root = build_scope(select)
    except SqlglotError:
        return []
    if root is None:
        return []
    qualified = _qualified_names(copy, dialect)
    # the copy's nodes, back to the caller's nodes (same walk order) for locating
    originals = dict(zip(map(id, copy.walk()), body.walk(), strict=False))
    out: list[Shadowed] = []
    seen: set[int] = set()
    for scope in root.traverse():
        if scope is root:
            continue
        for col in scope.columns:
            ident = col.this
            if col.table or not isinstance(ident, exp.Identifier) or id(col) in seen:
                continue
            seen.add(id(col))
            name = fold(ident.name, dialect, bool(ident.args.get("quoted")))
            if name not in params:
                continue
            hit = None
            inner: Scope | None = scope
            while inner is not None and inner is not root and hit is None:
                for source in inner.sources.values():
                    hit = _source_has(source, name, dialect, columns, qualified)
                    if hit is not None:
                        break
                inner = inner.parent
            if hit is None:
                continue
            table, known, origin = hit
            original = originals.get(id(col), col)
            assert isinstance(original, exp.Column)
            out.append(Shadowed(original, params[name], table, known, origin))
    order = {id(n): i for i, n in enumerate(body.walk())}
    out.sort(key=lambda s: order.get(id(s.column), 0))
    return out


def tables_read(tree: exp.Expression, dialect: str) -> list[tuple[str, ...]]:
    """The folded names of the tables ``tree`` reads (its subqueries' FROM and JOIN)."""
    out = []
    for table in tree.find_all(exp.Table):
        if table.name:
            key = table_key((p.name for p in table.parts), dialect)
            if key not in out:
                out.append(key)
    return out


def create_table_columns(tree: exp.Expression, dialect: str, origin: str) -> Columns:
    """The columns of a ``CREATE TABLE name (col type, ...)`` statement, or nothing."""
    if not isinstance(tree, exp.Create) or str(tree.args.get("kind") or "").upper() != "TABLE":
        return {}
    schema = tree.this
    if not isinstance(schema, exp.Schema) or not isinstance(schema.this, exp.Table):
        return {}
    names = set()
    for col in schema.expressions:
        if isinstance(col, exp.ColumnDef) and isinstance(col.this, exp.Identifier):
            names.add(fold(col.this.name, dialect, bool(col.this.args.get("quoted"))))
    if not names:
        return {}
    parts = table_key((p.name for p in schema.this.parts), dialect)
    return {parts: TableColumns(frozenset(names), True, origin)}
