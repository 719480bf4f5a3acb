"""The entitlement value a read was restricted to, read from its statement with sqlglot.

A read counts as a read of one value's rows only when its statement provably restricts what
it reads of the dataset's table to that value: in every ``SELECT`` that reads the table, a
conjunct at the top level of the ``WHERE`` (joined to the rest by ``AND`` only) compares the
table's column with string literals, ``column = 'V'`` (either side) or ``column IN ('V', ...)``.
Anything else restricts nothing:

* ``column = 'V' OR 1=1``, ``NOT (column = 'V')``, ``column <> 'V'``: the conjunct is an
  ``OR``, a ``NOT`` or another comparison, whose rows are not those of ``V``;
* ``'V'`` compared only inside a subquery (``id IN (SELECT id FROM other WHERE column =
  'V')``): the conjunct is an ``IN`` over a query, not over literals;
* another table's column (``o.column = 'V'`` with ``o`` another table of the join), or an
  unqualified column beside another table: which table it belongs to is not known;
* a statement that reads the table through a view (its name is not the table's), or reads it
  in another place with no such filter (a ``UNION``, a second statement).

When the statement cannot be parsed, the answer is None: nothing is proven.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp


def restricted_values(text: str, dialect: str, column: str, table: str) -> set[str] | None:
    """The values of ``column`` that ``text`` provably restricts its reads of ``table`` (its
    name as the history gives it, ``DB.SCHEMA.TABLE``) to; None when it does not (see the
    module documentation). An empty set: the conjuncts contradict each other."""
    try:
        trees = [t for t in sqlglot.parse(text, read=dialect) if t is not None]
    except (sqlglot.errors.SqlglotError, RecursionError):  # RecursionError: nested past
        return None  # what sqlglot's recursive parser can read (a generated query)
    wanted = [p.casefold() for p in table.split(".") if p]
    reads = [t for tree in trees for t in tree.find_all(exp.Table) if _names(t, wanted)]
    if not reads:
        return None  # not read by its name: through a view, or not at all
    out: set[str] = set()
    for read in reads:
        found = _restriction(read, column.casefold())
        if found is None:
            return None
        out |= found
    return out


def _names(node: exp.Table, wanted: list[str]) -> bool:
    """Whether the table reference ``node`` names the table ``wanted`` (its parts, folded): the
    parts written are the last parts of the table's name."""
    written = [p.casefold() for p in (node.catalog, node.db, node.name) if p]
    return bool(written) and wanted[-len(written) :] == written


def _restriction(read: exp.Table, column: str) -> set[str] | None:
    """The values the ``SELECT`` that reads ``read`` in its ``FROM`` or a ``JOIN`` restricts
    the table's ``column`` to, or None."""
    holder = read.parent
    select = holder.parent if isinstance(holder, exp.From | exp.Join) else None
    if not isinstance(select, exp.Select):
        return None
    where = select.args.get("where")
    if not isinstance(where, exp.Where):
        return None
    alone = not select.args.get("joins")
    names = {read.alias_or_name.casefold(), read.name.casefold()}
    values: set[str] | None = None
    for conjunct in _conjuncts(where.this):
        found = _compared(conjunct, column, names, alone)
        if found is not None:
            values = found if values is None else values & found
    return values


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The operands of the top-level ``AND`` of ``node`` (parentheses around it dropped)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return [c for side in (node.left, node.right) for c in _conjuncts(side)]
    return [node]


def _compared(node: exp.Expression, column: str, names: set[str], alone: bool) -> set[str] | None:
    """The string literals ``node`` compares the table's ``column`` with (``=`` or ``IN`` over
    literals), or None."""
    while isinstance(node, exp.Paren):
        node = node.this

    def ours(side: exp.Expression) -> bool:
        if not isinstance(side, exp.Column) or side.name.casefold() != column:
            return False
        qualifier = side.table.casefold()
        return qualifier in names if qualifier else alone

    def literal(side: exp.Expression) -> bool:
        return isinstance(side, exp.Literal) and side.is_string

    if isinstance(node, exp.EQ):
        a, b = node.this, node.expression
        if ours(b):
            a, b = b, a
        return {b.this} if ours(a) and literal(b) else None
    if isinstance(node, exp.In) and ours(node.this) and not node.args.get("query"):
        items = node.expressions
        if items and all(literal(e) for e in items):
            return {e.this for e in items}
    return None
