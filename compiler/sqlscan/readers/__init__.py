"""Statement readers: from one statement's tokens to the fields of its Statement(s).

A statement is dispatched on its verb (``CREATE``, ``ALTER``, ``DROP``) and the word after it
(after ``CREATE``'s ``OR REPLACE``) through one keyword table, the union of each dialect's
table (:mod:`.snowflake`, :mod:`.databricks`) and the shared one (:mod:`.shared`). Every file
is read with the whole table: the dialect chooses the tokenizer and sqlglot's parser, not
which statements are recognised, so a Databricks statement in a Snowflake file is still read.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.readers import databricks, shared, snowflake
from accord.compiler.sqlscan.readers.databricks import read_pipeline
from accord.compiler.sqlscan.readers.shapes import ShapeReader
from accord.compiler.sqlscan.readers.shared import (
    Entry,
    Reader,
    other,
    read_alter_table,
    read_create_function,
)
from accord.compiler.sqlscan.readers.snowflake import read_policy
from accord.compiler.sqlscan.statements import Fields
from accord.compiler.sqlscan.tokens import Cursor, is_word

_Candidates = tuple[tuple[tuple[str, ...], Reader], ...]


def _table(*tables: tuple[Entry, ...]) -> dict[str, dict[str, _Candidates]]:
    """verb -> the first word after it -> the (words, reader) that start with it, in order."""
    out: dict[str, dict[str, list[tuple[tuple[str, ...], Reader]]]] = {}
    for table in tables:
        for verb, words, reader in table:
            candidates = out.setdefault(verb, {}).setdefault(words[0], [])
            if any(known == words for known, _ in candidates):
                raise ValueError(f"two readers for {verb} {' '.join(words)}")
            candidates.append((words, reader))
    return {verb: {w: tuple(c) for w, c in firsts.items()} for verb, firsts in out.items()}


STATEMENT_READERS = _table(snowflake.READERS, databricks.READERS, shared.READERS)


def _read_create(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """What ``CREATE`` reads when none of the table's words follows it: a function, a pipeline
    dataset (:func:`.databricks.read_pipeline`), or a kind of policy accord does not model
    (``CREATE <words> POLICY``): one written with a body (``AS (...) RETURNS type -> body``) is
    read as Snowflake's policies are, so its body is linted and a statement that cannot be read
    is ACC001, present kind or future; one without a body (a network or password policy: its
    properties only) is not a policy statement lint reads."""
    mark = c.i
    found = read_create_function(ctx, c, or_replace)
    if found != other():
        return found
    c.i = mark
    found = read_pipeline(ctx, c, or_replace)
    if found != other():
        return found
    c.i = mark
    words: list[str] = []
    while (tok := c.peek()) is not None and is_word(tok) and len(words) < 4:
        if c.is_kw("POLICY"):
            break
        words.append(tok.text.upper())
        c.i += 1
    if not words or not c.accept("POLICY"):
        return other()
    rest = c.toks[c.i :]
    body = any(t.token_type is TokenType.ARROW for t in rest)
    # ``AS (...) RETURNS``: the signature of a policy with a body, whose ``->`` or body may be
    # what is broken; a policy of properties only (network, password) has neither
    signed = any(is_word(t) and t.text.upper() == "RETURNS" for t in rest) and any(
        is_word(t) and t.text.upper() == "AS" for t in rest
    )
    if not body and not signed:
        return other()
    what = " ".join(words).lower() + " policy"
    return read_policy(ctx, c, or_replace, "policy", what, tuple(words))


#: what a verb reads when none of the table's words follows it
_FALLBACK: dict[str, Reader] = {"CREATE": _read_create}


#: whether ``ALTER TABLE`` statements are read once per shape (:mod:`.shapes`); the tests
#: turn it off to compare with reading each statement
SHAPES = True


def _shapes(ctx: Context) -> ShapeReader:
    """The file's shapes of ``ALTER TABLE`` statements, kept on its context."""
    shapes = ctx.alter_table_shapes
    if shapes is None:
        shapes = ctx.alter_table_shapes = ShapeReader(read_alter_table)
    return shapes


def read_statement(ctx: Context, toks: Sequence[Token]) -> list[Fields]:
    """The fields of the statement(s) these tokens make; ``[{"kind": "other"}]`` if not ours."""
    c = Cursor(toks, ctx.text)
    verb = c.peek()
    if verb is None or not is_word(verb):
        return other()
    key = verb.text.upper()
    firsts = STATEMENT_READERS.get(key)
    if firsts is None:
        return other()
    c.i += 1
    or_replace = key == "CREATE" and (c.accept("OR", "REPLACE") or c.accept("OR", "ALTER"))
    word = c.peek()
    if word is not None and is_word(word):
        for words, reader in firsts.get(word.text.upper(), ()):
            if c.accept(*words):
                if reader is read_alter_table and SHAPES:
                    return _shapes(ctx).read(ctx, c, or_replace)
                return reader(ctx, c, or_replace)
    fallback = _FALLBACK.get(key)
    return fallback(ctx, c, or_replace) if fallback is not None else other()
