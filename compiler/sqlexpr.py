"""Parsing hand-written SQL expressions (row-filter predicates) with sqlglot."""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from compiler.sqltypes import DIALECTS


class ExpressionError(ValueError):
    pass


@lru_cache(maxsize=512)
def parse_predicate(text: str, platform: str) -> exp.Expression:
    """Parse one boolean SQL expression. Several statements, or a statement instead of an
    expression (``TRUE; DROP TABLE t``), are refused."""
    dialect = DIALECTS[platform]
    try:
        parsed = sqlglot.parse(text, read=dialect)
    except (ParseError, TokenError) as err:
        raise ExpressionError(_first_line(err)) from None
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise ExpressionError("expected exactly one expression")
    (tree,) = statements
    if isinstance(
        tree,
        exp.Command
        | exp.Create
        | exp.Drop
        | exp.Insert
        | exp.Update
        | exp.Delete
        | exp.Alter
        | exp.Use
        | exp.Transaction,
    ):
        raise ExpressionError("expected an expression, not a statement")
    if isinstance(tree, exp.Select | exp.Union):
        raise ExpressionError("expected a predicate, not a query")
    return tree


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
