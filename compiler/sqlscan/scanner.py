"""Scan one file of policy SQL into located statements (the three steps of
:mod:`compiler.sqlscan`): tokenize once and split at top-level ``;``, read each statement's
header from its tokens, parse its bodies with sqlglot fed the same tokens. A plain file of
generated statements is read once per statement shape (:mod:`.shapes`, :mod:`.fused`)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan import readers
from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.dialect import (
    detect_from_tokens,
    dialect_from_suffix,
    unknown_dialect,
)
from accord.compiler.sqlscan.fused import USABLE, Fused
from accord.compiler.sqlscan.notebooks import immediate_string, notebook_breaks
from accord.compiler.sqlscan.readers import read_statement
from accord.compiler.sqlscan.shapes import Chunk, chunk_tokens, plain_chunks
from accord.compiler.sqlscan.statements import (
    DIALECTS,
    Fields,
    LineIndex,
    ScanError,
    ScanResult,
    Statement,
)
from accord.compiler.sqlscan.suppressions import read_suppressions
from accord.compiler.sqlscan.tokens import (
    Fail,
    Tokens,
    clean,
    is_kw,
    split_with_prev,
    tokenize,
    tokenizer_class,
)

# --------------------------------------------------------------------------- scanning


class _QuietSqlglot(logging.Filter):
    """sqlglot warns when it falls back to exp.Command; lint output must stay clean."""

    def filter(self, record: logging.LogRecord) -> bool:
        return False


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    logger = logging.getLogger("sqlglot")
    quiet = _QuietSqlglot()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def scan(
    text: str,
    file: str,
    dialect: str | None = None,
    breaks: Sequence[tuple[int, bool]] = (),
) -> ScanResult:
    """Scan one SQL file. ``dialect`` (from ``--dialect``) wins; else the file name suffix,
    else the statements decide (see :func:`detect_dialect`); a Databricks notebook source file
    is Databricks SQL. A file whose dialect cannot be told gives ``dialect=None`` and no
    statements, and one ScanError (kind ``dialect``) only when it holds a function, which is a
    policy statement in either dialect; a file of tables, grants and queries needs no dialect.

    ``breaks`` are extra statement boundaries besides ``;``: (offset, always). A break
    ``always`` ends the statement at the offset (a notebook cell, a ``{% macro %}`` tag); else
    only when the next token begins a statement (``CREATE``, ``ALTER``, ...)."""
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: expected one of {', '.join(DIALECTS)}")
    text = clean(text)
    lines = LineIndex(text)
    breaks = sorted([*breaks, *notebook_breaks(text)])
    read: Tokens | None = None
    if dialect is None:
        dialect = dialect_from_suffix(file)
    if dialect is None and notebook_breaks(text):
        dialect = "databricks"
    if dialect is None:
        dialect, read, _ = detect_from_tokens(text)
        if dialect is None:
            return ScanResult((), None, unknown_dialect(text, file, lines, breaks))
    if read is None and not breaks and readers.SHAPES and FUSED:
        plain = plain_chunks(text, tokenizer_class(dialect), dialect)
        if plain is None:
            read = tokenize(text, dialect, plain=False)
        elif _splits_per_chunk(plain[1]):
            return _scan_plain(text, file, dialect, lines, *plain)
        else:
            tokens = plain[0]
            for chunk in plain[1]:
                tokens.extend(chunk_tokens(text, chunk))
            read = Tokens(tokens, None)
    if read is None:
        read = tokenize(text, dialect)
    ctx = Context(text, file, dialect, lines)
    errors: list[ScanError] = []
    statements: list[Statement] = []
    tokens = read.tokens
    unread = len(text)
    if read.error is not None:
        # Keep the statements completed before the failure.
        while tokens and tokens[-1].token_type is not TokenType.SEMICOLON:
            unread = tokens[-1].start
            tokens = tokens[:-1]
        unread = min(unread, read.error[0])
    with _quiet():
        for stmt_tokens, before in split_with_prev(tokens, breaks):
            statements.extend(_scan_statement(ctx, stmt_tokens, before, errors))
    if read.error is not None:
        # Located at the first statement not read; the message says where reading stopped.
        offset, message = read.error
        line, column = lines.position(unread)
        if unread != offset:
            at_line, at_column = lines.position(offset)
            where = f"the one at {at_line}:{at_column}"
            if "the one here" in message:
                message = message.replace("the one here", where)
            else:
                message = f"{message} (at {at_line}:{at_column})"
        errors.append(ScanError(file, line, column, message, "tokenize", (unread, len(text))))
    errors.sort(key=lambda e: (e.line, e.column))
    return ScanResult(tuple(statements), dialect, tuple(errors))


#: whether the ``ALTER TABLE`` statements of a plain file are answered without making their
#: tokens (:mod:`.fused`); the tests turn it off to compare with reading them from tokens
FUSED = True


def _splits_per_chunk(chunks: Sequence[Chunk]) -> bool:
    """Whether each chunk's tokens end with its ``;`` and hold no other: then splitting the
    file's tokens at ``;`` splits them chunk by chunk."""
    seen: set[int] = set()
    for _, _, _, template in chunks:
        if id(template) in seen:
            continue
        seen.add(id(template))
        types = template[0]
        if types[-1] is not TokenType.SEMICOLON or TokenType.SEMICOLON in types[:-1]:
            return False
    return True


def _scan_plain(
    text: str,
    file: str,
    dialect: str,
    lines: LineIndex,
    head: list[Token],
    chunks: Sequence[Chunk],
) -> ScanResult:
    """:func:`scan` of a file of plain statements (:func:`.shapes.plain_chunks`, no breaks):
    the head's statements from its tokens, then statement by statement, each ``ALTER TABLE``
    of a known shape answered without its tokens (:class:`.fused.Fused`), every other one
    read from its tokens as :func:`scan` reads it."""
    ctx = Context(text, file, dialect, lines)
    errors: list[ScanError] = []
    statements: list[Statement] = []
    fused = Fused(ctx) if USABLE else None
    with _quiet():
        for stmt_tokens, before in split_with_prev(head):
            statements.extend(_scan_statement(ctx, stmt_tokens, before, errors))
        semicolon: Token | None = head[-1]
        previous: Chunk | None = None
        for chunk in chunks:
            if fused is not None and chunk[2] in fused.checked:
                found = fused.answer(chunk)
                if found is not None:
                    statements.extend(found)
                    semicolon, previous = None, chunk
                    continue
            if semicolon is None:
                assert previous is not None
                semicolon = chunk_tokens(text, previous)[-1]
            toks = chunk_tokens(text, chunk)
            known = len(errors)
            read: list[Statement] = []
            for stmt_tokens, before in split_with_prev([semicolon, *toks]):
                read.extend(_scan_statement(ctx, stmt_tokens, before, errors))
            statements.extend(read)
            semicolon = toks[-1]
            if fused is not None and read and len(errors) == known:
                fused.check(chunk, read)
    errors.sort(key=lambda e: (e.line, e.column))
    return ScanResult(tuple(statements), dialect, tuple(errors))


def _scan_statement(
    ctx: Context, toks: list[Token], before: Token | None, errors: list[ScanError]
) -> list[Statement]:
    first, last = toks[0], toks[-1]
    line, column = ctx.lines.position(first.start)
    gap_start = before.end + 1 if before is not None else 0
    prev_end_line = ctx.lines.position(before.end)[0] if before is not None else 0
    suppressions = read_suppressions(ctx, gap_start, first, prev_end_line, errors)
    common: Fields = {
        "dialect": ctx.dialect,
        "file": ctx.file,
        "line": line,
        "column": column,
        "text": ctx.text[first.start : last.end + 1],
        "suppressions": suppressions,
        "_lines": ctx.lines,
    }
    span = (first.start, last.end + 1)
    if is_kw(first, "EXECUTE"):
        immediate = immediate_string(toks, ctx.dialect, ctx.text)
        if immediate is not None:
            return _scan_immediate(ctx, *immediate, errors)
    try:
        found = read_statement(ctx, toks)
    except Fail as fail:
        err_line, err_column = ctx.lines.position(fail.offset)
        errors.append(ScanError(ctx.file, err_line, err_column, fail.message, span=span))
        return []
    except RecursionError:  # sqlglot's parser recurses once per level of nesting
        errors.append(ScanError(ctx.file, line, column, _too_deep(toks), span=span))
        return []
    except Exception:  # never let a surprise in sqlglot escape scan()
        message = "cannot read this statement (accord does not recognise its syntax)"
        errors.append(ScanError(ctx.file, line, column, message, span=span))
        return []
    out = []
    for fields in found:
        if fields["kind"] == "other":
            fields = {"kind": "other", **_parse_other(ctx, toks)}
        out.append(Statement(**common, **fields))
    return out


def _too_deep(toks: Sequence[Token]) -> str:
    """The message for a statement that nests deeper than the parser can follow."""
    depth = deepest = 0
    for tok in toks:
        if tok.token_type is TokenType.L_PAREN or is_kw(tok, "CASE"):
            depth += 1
            deepest = max(deepest, depth)
        elif tok.token_type is TokenType.R_PAREN or is_kw(tok, "END"):
            depth = max(depth - 1, 0)
    return (
        f"cannot read this statement: it nests {deepest} levels deep (parentheses and CASE), "
        f"deeper than accord's SQL parser follows within Python's recursion limit "
        f"({sys.getrecursionlimit()} nested calls); flatten the expression or move part of "
        "it into a function"
    )


def _scan_immediate(
    ctx: Context, content: str, start: int, errors: list[ScanError]
) -> list[Statement]:
    """Snowflake ``EXECUTE IMMEDIATE $$ ... $$`` (or ``'...'``): the statements inside the
    string, a Snowflake Scripting block or single statement, at their places in the file."""
    # Everything before the string blanked (newlines kept), so offsets are the file's.
    prefix = "".join(ch if ch == "\n" else " " for ch in ctx.text[:start])
    inner = scan(prefix + content, ctx.file, ctx.dialect)
    errors.extend(inner.errors)
    return list(inner.statements)


def _parse_other(ctx: Context, toks: list[Token]) -> Fields:
    try:
        parsed = ctx.parser.parse(list(toks), ctx.text)
    except Exception:
        return {}
    trees = [p for p in parsed if p is not None]
    if len(trees) != 1 or isinstance(trees[0], exp.Command):
        return {}
    return {"expression": trees[0], "_roots": ((trees[0], 0),)}


# --------------------------------------------------------------------------- positions


def _meta_start(node: exp.Expression) -> int | None:
    start = node.meta_get("start")
    return start if isinstance(start, int) else None


def node_position(stmt: Statement, node: exp.Expression) -> tuple[int, int]:
    """Best-effort 1-based (line, column) in the file of ``node``, a node inside one of the
    statement's parsed expressions (``body``, ``abac.when``, a ``match_columns`` condition,
    ``expression``). Uses the node's own position when sqlglot recorded one, else the
    leftmost descendant that has one, else the nearest ancestor, else the body's start."""
    fallback = (stmt.body_line, stmt.body_column) if stmt.body_line else (stmt.line, stmt.column)
    if stmt._lines is None:
        return fallback
    root = node.root()
    base = next((b for r, b in stmt._roots if r is root), None)
    if base is None:
        return fallback
    start = _meta_start(node)
    if start is None:
        starts = [s for n in node.walk() if (s := _meta_start(n)) is not None]
        if starts:
            start = min(starts)
    ancestor = node.parent
    while start is None and ancestor is not None:
        start = _meta_start(ancestor)
        ancestor = ancestor.parent
    if start is None:
        return fallback
    return stmt._lines.position(base + start)
