"""Policy parameters shadowed by a column inside a subquery of the body (ACC104).

In SQL an unqualified name inside a subquery resolves to a column of a table that subquery
(or an enclosing one) reads before it resolves to anything outside it. A policy body such as

    EXISTS (SELECT 1 FROM GOV.POLICIES.REGION_GRANTS g
            WHERE g.region_code = region_code AND IS_ROLE_IN_SESSION(g.role_name))

with a parameter ``region_code`` compares the grants table's column with itself: the filter
admits every row to anyone holding any grant. sqlglot's scope analysis decides it: the body
is put in ``SELECT 1 WHERE <body>`` (the parameters are the outer scope), and every
unqualified column of an inner scope whose name is a parameter is checked against the
sources of that scope and of the scopes enclosing it, innermost first (:func:`resolve`).

A shadowed name is judged by where it stands: one the author uses as the parameter (compared
with the subquery's columns in a condition, or the value a lookup takes) is a finding; one
that names what the subquery gives (its select list, ``region_code IN (SELECT region_code
FROM grants ...)``; its grouping or order) is the column, as its author means, and is not.

Whether a table has the column is known when its columns are (:class:`Columns`: the model's
mapping tables, a ``CREATE TABLE`` in the files read); when they are not, it is assumed
possible when the same statement names the column qualified somewhere (``g.region_code``).
The same resolution tells the hand-written predicate check (:mod:`compiler.model.exprcheck`)
which unqualified names of a subquery are its own tables' columns, not the outer row's.
The policy-file path imports this module: it needs sqlglot only, never the SQL scanner.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, build_scope

from accord.compiler.core.platforms import facts

if TYPE_CHECKING:
    from accord.compiler.model.grants import GrantsTable

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
    #: the condition compares the reference with the same column (``g.region_code =
    #: region_code``): true of every row the subquery reads
    itself: bool = True

    def message(self, where: str) -> str:
        name = self.column.name
        if self.known:
            how = f"is the column of {self.table} ({self.origin} has {name})"
        else:
            how = (
                f"is the column of {self.table} if that table has one, as the statement's "
                f"own {self.origin} says it does"
            )
        if self.itself:
            effect = (
                "the condition compares the column with itself, and the policy admits every "
                "row the subquery finds"
            )
        else:
            effect = (
                "the subquery reads the column where the parameter is meant, and never looks "
                "at the parameter's value"
            )
        return (
            f"{where}: inside the subquery, the unqualified {name} {how}, not the parameter "
            f"{self.parameter}: {effect}"
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


#: what a source of a scope says of a column: it has it, it lacks it, or nobody knows
Answer = Literal["has", "lacks", "unknown"]


@dataclass(frozen=True)
class Resolution:
    """Where an unqualified name inside a subquery resolves, as far as is known."""

    answer: Answer
    #: the source's alias in its scope (``g``), and the table or derived table, for messages
    alias: str
    shown: str
    #: has: where the source's columns are known from
    origin: str
    #: the source is a table (not a derived table or a table function)
    table: bool


def _answer(source: object, name: str, dialect: str, columns: Columns) -> tuple[Answer, str, str]:
    """(answer, shown, origin) of a scope's ``source`` for the column ``name``."""
    if isinstance(source, exp.Table):
        if not source.name:
            return "unknown", "the table", ""
        parts = table_key((p.name for p in source.parts), dialect)
        shown = ".".join(p.name for p in source.parts)
        known = lookup(columns, parts)
        if known is not None:
            if name in known.columns:
                return "has", shown, known.origin
            if known.complete:
                return "lacks", shown, ""
        return "unknown", shown, ""
    if isinstance(source, Scope):  # a derived table, a CTE, a table function: its outputs
        outputs = {fold(s, dialect) for s in getattr(source.expression, "named_selects", ())}
        if not outputs or "*" in outputs:
            return "unknown", "the derived table", ""
        if name in outputs:
            return "has", "the derived table", "one of its output columns"
        return "lacks", "the derived table", ""
    return "unknown", "the table", ""


def resolve(
    scope: Scope, root: Scope, name: str, dialect: str, columns: Columns
) -> list[Resolution]:
    """What the sources of ``scope`` and of the scopes enclosing it (below ``root``, the
    outer row) say of the unqualified column ``name``, innermost first, in the order SQL
    looks: the first that has it is the one the name resolves to."""
    out = []
    inner: Scope | None = scope
    while inner is not None and inner is not root:
        for alias, source in inner.sources.items():
            answer, shown, origin = _answer(source, name, dialect, columns)
            out.append(Resolution(answer, alias, shown, origin, isinstance(source, exp.Table)))
        inner = inner.parent
    return out


def inside(scope: Scope, root: Scope, name: str, dialect: str, columns: Columns) -> bool:
    """Whether the unqualified column ``name`` of ``scope`` is (or, for a table whose
    columns are not known, may be) a column of the subquery's own sources rather than of the
    outer row: what SQL resolves first."""
    return any(r.answer != "lacks" for r in resolve(scope, root, name, dialect, columns))


#: the clauses of a SELECT whose columns name what the subquery gives, not a value it
#: compares: its select list, grouping and order
_OUTPUTS = ("expressions", "group", "order")


def gives(column: exp.Column, scope: Scope) -> bool:
    """Whether ``column`` stands in what its subquery gives (its select list, grouping or
    order), outside any condition there: ``SELECT cpf FROM t`` in ``cpf IN (SELECT cpf FROM t
    ...)`` is t's column, as its author means."""
    node: exp.Expression = column
    while node.parent is not None and node.parent is not scope.expression:
        if isinstance(node.parent, exp.Predicate):
            return False
        node = node.parent
    return node.parent is scope.expression and node.arg_key in _OUTPUTS


def _compared_with_itself(column: exp.Column, name: str, alias: str, dialect: str) -> bool:
    """Whether ``column`` is an operand of a comparison whose other operand is the same
    column of the same source (unqualified, or qualified with its alias)."""
    parent = column.parent
    if not isinstance(parent, exp.Binary) or not isinstance(parent, exp.Predicate):
        return False
    other = parent.expression if parent.this is column else parent.this
    if not isinstance(other, exp.Column) or not isinstance(other.this, exp.Identifier):
        return False
    same = fold(other.this.name, dialect, bool(other.this.args.get("quoted"))) == name
    return same and (not other.table or fold(other.table, dialect) == fold(alias, dialect))


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
            for r in resolve(scope, root, name, dialect, columns):
                if r.answer == "has":
                    hit = (r.shown, True, r.origin, r.alias)
                elif r.answer == "unknown" and r.table and name in qualified:
                    hit = (r.shown, False, qualified[name], r.alias)
                if hit is not None:
                    break
            if hit is None or gives(col, scope):
                continue
            table, known, origin, alias = hit
            itself = _compared_with_itself(col, name, alias, dialect)
            original = originals.get(id(col), col)
            assert isinstance(original, exp.Column)
            out.append(Shadowed(original, params[name], table, known, origin, itself))
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


def grants_columns(tables: Iterable[GrantsTable]) -> dict[str, Columns]:
    """platform -> the columns of the model's mapping tables there
    (:func:`compiler.model.grants.grants_tables`), all of them known. Two models linted
    together that compile one table (by name) give it the columns of both."""
    out: dict[str, dict[tuple[str, ...], TableColumns]] = {}
    for t in tables:
        key = table_key(t.name.split("."), t.platform)
        names = frozenset(table_key(t.columns, t.platform))
        seen = out.setdefault(t.platform, {}).get(key)
        if seen is not None:
            names |= seen.columns
        origin = f"the mapping table of entitlement dimension {t.dimension}"
        out[t.platform][key] = TableColumns(names, True, seen.origin if seen else origin)
    return dict(out)
