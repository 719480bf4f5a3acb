"""SQL that is not one plain file of statements: Databricks notebook source cells and the
string of a Snowflake ``EXECUTE IMMEDIATE``.

A notebook cell ends a statement with or without a ``;``; the statements inside an
``EXECUTE IMMEDIATE`` string are scanned at their places in the file by
:func:`compiler.sqlscan.scan` (which reads the string this module finds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.tokens import BODY_STRING_TYPES, is_kw, string_content, tokenize

#: a Databricks notebook exported as SQL source (File > Export > Source file)
_NOTEBOOK_HEADER = "-- Databricks notebook source"
_NOTEBOOK_CELL = re.compile(r"^-- COMMAND -{4,}[ \t]*$", re.MULTILINE)


def notebook_breaks(text: str) -> list[tuple[int, bool]]:
    """In a Databricks notebook source file, every ``-- COMMAND ----------`` line ends a
    statement, with or without a ``;`` (each cell runs on its own). ``-- MAGIC`` lines are
    comments to the tokenizer already. Other files: no breaks."""
    if not text.lstrip(" \ufeff").startswith(_NOTEBOOK_HEADER):
        return []
    return [(m.start(), True) for m in _NOTEBOOK_CELL.finditer(text)]


def immediate_string(
    toks: Sequence[Token], dialect: str, text: str | None = None
) -> tuple[str, int] | None:
    """``EXECUTE IMMEDIATE <string>``: the string's content and its offset in ``text``. The
    Snowflake tokenizer reads everything after ``EXECUTE`` as one command string; it is read
    again as tokens. (With ``text`` None the offset is meaningless.)"""
    if len(toks) == 3 and is_kw(toks[1], "IMMEDIATE"):
        tok = toks[2]
        if tok.token_type in BODY_STRING_TYPES:
            return string_content(tok, text) if text is not None else (tok.text, 0)
        return None
    if len(toks) != 2 or toks[1].token_type is not TokenType.STRING:
        return None
    if toks[1].text[:9].upper() != "IMMEDIATE":
        return None
    base = toks[0].end + 1
    sub = text[base : toks[1].end + 1] if text is not None else " " + toks[1].text
    inner = tokenize(sub, dialect).tokens
    if len(inner) != 2 or not is_kw(inner[0], "IMMEDIATE"):
        return None
    if inner[1].token_type not in BODY_STRING_TYPES:
        return None
    content, start = string_content(inner[1], sub)
    return content, base + start
