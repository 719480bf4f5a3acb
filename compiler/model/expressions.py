"""Parsing hand-written SQL expressions (row-filter predicates) with sqlglot."""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from accord.compiler.core.errors import one_line
from accord.compiler.model.types import DIALECTS


class ExpressionError(ValueError):
    pass


class ExpressionTooLarge(ExpressionError):
    """The expression may be valid SQL, but it is longer or deeper than accord reads: said
    as such, never as "does not parse"."""


#: Bounds on a hand-written predicate, checked before anything recursive sees it (sqlglot's
#: parser and generator recurse once per nesting level): a row filter is a few conditions,
#: not a document.
MAX_CHARS = 20_000
MAX_TOKENS = 2_000
MAX_DEPTH = 48


def tree_depth(tree: exp.Expression) -> int:
    """The depth of ``tree``, found without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        for child in node.iter_expressions():
            stack.append((child, depth + 1))
    return deepest


def _bound(text: str, dialect: str) -> None:
    if len(text) > MAX_CHARS:
        raise ExpressionTooLarge(f"it is longer than {MAX_CHARS} characters")
    tokens = Dialect.get_or_raise(dialect).tokenizer_class().tokenize(text)
    depth = deepest = 0
    for token in tokens:
        if token.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
            deepest = max(deepest, depth)
        elif token.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
    if deepest > MAX_DEPTH:
        raise ExpressionTooLarge(f"it nests {deepest} levels deep; at most {MAX_DEPTH}")
    if len(tokens) > MAX_TOKENS:
        raise ExpressionTooLarge(
            f"it has {len(tokens)} tokens; at most {MAX_TOKENS} (use a mapping "
            "table for long lists of values)"
        )


@lru_cache(maxsize=512)
def parse_predicate(text: str, platform: str) -> exp.Expression:
    """Parse one boolean SQL expression. Several statements, or a statement instead of an
    expression (``TRUE; DROP TABLE t``), are refused, and so is one too long or too deep to
    handle without exhausting recursion (:data:`MAX_TOKENS`, :data:`MAX_DEPTH`)."""
    dialect = DIALECTS[platform]
    try:
        _bound(text, dialect)
        parsed = sqlglot.parse(text, read=dialect)
    except (ParseError, TokenError) as err:
        raise ExpressionError(one_line(err, first=True)) from None
    except RecursionError:
        raise ExpressionTooLarge(f"it nests deeper than {MAX_DEPTH} levels") from None
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise ExpressionError("expected exactly one expression")
    (tree,) = statements
    depth = tree_depth(tree)
    if depth > 2 * MAX_DEPTH:
        raise ExpressionTooLarge(
            f"it is {depth} operators deep; at most {2 * MAX_DEPTH} (a long chain "
            "of AND/OR: use IN (...) or a mapping table)"
        )
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
