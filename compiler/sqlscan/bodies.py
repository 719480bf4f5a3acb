"""Body expressions of policy statements, parsed by sqlglot with file offsets, and sqlglot's
parse errors said in SQL terms.

The bodies (after ``->`` in Snowflake policies, after ``RETURN`` in Databricks functions,
inside ``AS '...'`` / ``AS $$...$$``, ABAC ``WHEN`` / ``MATCH COLUMNS`` conditions) are parsed
with sqlglot's parser fed the very tokens the file was split with, so every node's
``meta["start"]`` is an offset in the file (or in the string it was read from, whose offset
the statement keeps for :func:`compiler.sqlscan.node_position`). :class:`Context` is the
per-file state every statement reader is given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect as _SqlglotDialect
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.tokens import Token

from accord.compiler.sqlscan.statements import Fields, LineIndex
from accord.compiler.sqlscan.tokens import Fail, describe, string_content, tokenize

_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '(?:[\w.]+\.)?(\w+)'>")
_CLASS = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")


def _words(name: str) -> str:
    """``AlterColumn`` -> ``alter column``."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()


#: sqlglot node classes named in its "Required keyword" errors, in SQL terms
_CONSTRUCTS = {
    "If": "a WHEN ... THEN branch",
    "Case": "a CASE expression",
    "Cast": "a CAST",
    "Anonymous": "a function call",
    "Column": "a column reference",
    "Aliases": "an expression",
    "Alias": "an expression",
    "In": "an IN list",
    "Between": "a BETWEEN",
    "Not": "a NOT",
}


#: binary operators by sqlglot class: a missing "expression" is their right-hand operand
_OPERATORS = {
    "Add": "+",
    "Sub": "-",
    "Mul": "*",
    "Div": "/",
    "Mod": "%",
    "DPipe": "||",
    "EQ": "=",
    "NEQ": "<>",
    "GT": ">",
    "GTE": ">=",
    "LT": "<",
    "LTE": "<=",
    "And": "AND",
    "Or": "OR",
    "Like": "LIKE",
    "ILike": "ILIKE",
}


def sql_terms(description: str) -> str:
    """A sqlglot parse error said in SQL terms: no Python class names, no internals."""
    found = _REQUIRED.search(description)
    if found and found.group(2) in _OPERATORS and found.group(1) == "expression":
        return f"the {_OPERATORS[found.group(2)]} operator has no right-hand operand"
    if found:
        construct = _CONSTRUCTS.get(found.group(2), "the expression")
        return f"{construct} is incomplete here: a part of it is missing or not valid SQL"
    description = _CLASS.sub(lambda m: _words(m.group(1)), description)
    return description or "not valid SQL here"


class Context:
    """Per-file state shared by the statement readers."""

    def __init__(self, text: str, file: str, dialect: str, lines: LineIndex) -> None:
        self.text = text
        self.file = file
        self.dialect = dialect
        self.lines = lines
        self.parser = _SqlglotDialect.get_or_raise(dialect).parser()
        #: the file's shapes of ALTER TABLE statements (:mod:`.readers.shapes`), made when needed
        self.alter_table_shapes: Any = None

    def parse_tokens(
        self, tokens: Sequence[Token], what: str, sql: str, base: int
    ) -> exp.Expression:
        """Parse ``tokens`` (taken from ``sql``, which sits at ``base`` in the file) as one
        expression. Failures raise Fail located at the offending token."""
        if not tokens:
            raise Fail(base, f"{what} is empty")
        try:
            parsed = self.parser.parse(list(tokens), sql)
        except ParseError as err:
            raise self._parse_fail(err, tokens, what, base) from None
        except SqlglotError as err:
            message = sql_terms(str(err).strip().splitlines()[0] if str(err).strip() else "")
            raise Fail(tokens[0].start + base, f"cannot parse {what}: {message}") from None
        trees = [p for p in parsed if p is not None]
        if len(trees) != 1:
            raise Fail(tokens[0].start + base, f"{what} is not one expression")
        tree = trees[0]
        if isinstance(tree, exp.Command):
            raise Fail(tokens[0].start + base, f"cannot parse {what}: not an expression")
        return tree

    def _parse_fail(self, err: ParseError, tokens: Sequence[Token], what: str, base: int) -> Fail:
        info = err.errors[0] if err.errors else {}
        description = sql_terms(str(info.get("description") or err).strip().splitlines()[0])
        line, col = info.get("line"), info.get("col")
        offset = tokens[0].start
        for tok in tokens:
            if tok.line == line and tok.col == col:
                offset = tok.start
                break
        else:
            if line is not None and col is not None and base == 0:
                # sqlglot's column is that of the token's last character.
                offset = self.lines.starts[max(0, min(line, len(self.lines.starts)) - 1)] + col - 1
        return Fail(offset + base, f"cannot parse {what}: {description}")

    def parse_body_string(self, tok: Token, what: str) -> tuple[exp.Expression, int]:
        """Parse the SQL inside a string token (``AS '...'`` / ``AS $$...$$``). Returns the
        tree and the offset of its first token within the string's content."""
        content, start = string_content(tok, self.text)
        inner = tokenize(content, self.dialect)
        if inner.error is not None:
            offset, message = inner.error
            raise Fail(start + offset, f"cannot parse {what}: {message}")
        if not inner.tokens:
            raise Fail(tok.start, f"{what} is empty")
        tree = self.parse_tokens(inner.tokens, what, content, start)
        return tree, inner.tokens[0].start


def body_fields(ctx: Context, tokens: Sequence[Token], what: str, before: Token) -> Fields:
    """The body* fields of a body written inline (after ``->``, ``SET BODY ->``, ``RETURN``)."""
    if not tokens:
        raise Fail(before.start, f"{what} is missing after {describe(before)}")
    tree = ctx.parse_tokens(tokens, what, ctx.text, 0)
    start = tokens[0].start
    line, column = ctx.lines.position(start)
    return {
        "body": tree,
        "body_text": ctx.text[start : tokens[-1].end + 1],
        "body_line": line,
        "body_column": column,
        "_roots": ((tree, 0),),
    }


def string_body_fields(ctx: Context, tok: Token, language: str | None) -> Fields:
    """``AS '...'`` / ``AS $$...$$``: SQL bodies are parsed (and located at their first
    token); other languages keep their source text, located where the string starts."""
    content, start = string_content(tok, ctx.text)
    if language not in (None, "SQL"):
        line, column = ctx.lines.position(start)
        return {"body_text": content, "body_line": line, "body_column": column}
    tree, first = ctx.parse_body_string(tok, "the function body")
    line, column = ctx.lines.position(start + first)
    return {
        "body": tree,
        "body_text": content.strip(),
        "body_line": line,
        "body_column": column,
        "_roots": ((tree, start),),
    }
