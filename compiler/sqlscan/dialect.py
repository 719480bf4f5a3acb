"""Which dialect a SQL file is written in: from its ``.snowflake.sql`` / ``.databricks.sql``
suffix, else from the first statement that tells (``ROW ACCESS POLICY``, ``MASKING POLICY``,
``SECURE FUNCTION``, ``AS '...'`` bodies -> snowflake; ``SET ROW FILTER``, ``SET MASK``,
``SET TAGS``, ``CREATE POLICY``, ``RETURN`` bodies -> databricks), and the error for a file
that holds a policy statement but does not tell.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.tokens import Token

from accord.compiler.sqlscan.notebooks import immediate_string
from accord.compiler.sqlscan.statements import DIALECTS, LineIndex, ScanError
from accord.compiler.sqlscan.tokens import (
    BODY_STRING_TYPES,
    CLOSE,
    OPEN,
    Cursor,
    Tokens,
    clean,
    is_kw,
    is_word,
    split,
    split_with_prev,
    tokenize,
)


def dialect_from_suffix(filename: str) -> str | None:
    lowered = filename.lower()
    for dialect in DIALECTS:
        if lowered.endswith(f".{dialect}.sql"):
            return dialect
    return None


_SNOWFLAKE_SIGNALS = (("ROW", "ACCESS", "POLICY"), ("MASKING", "POLICY"))
_DATABRICKS_SIGNALS = (
    ("SET", "ROW", "FILTER"),
    ("DROP", "ROW", "FILTER"),
    ("SET", "MASK"),
    ("DROP", "MASK"),
    ("SET", "TAGS"),
)


_SIGNAL_STARTS = frozenset(w[0] for w in _SNOWFLAKE_SIGNALS + _DATABRICKS_SIGNALS)


def _statement_signal(toks: Sequence[Token]) -> str | None:
    c = Cursor(toks, "")
    if c.is_kw("EXECUTE"):
        found = immediate_string(toks, "snowflake")
        if found is not None:
            return _signal(tokenize(found[0], "snowflake").tokens)
    for k, tok in enumerate(toks):
        if not is_word(tok) or tok.text.upper() not in _SIGNAL_STARTS:
            continue
        if any(c.is_kw(*words, k=k) for words in _SNOWFLAKE_SIGNALS):
            return "snowflake"
        if any(c.is_kw(*words, k=k) for words in _DATABRICKS_SIGNALS):
            return "databricks"
    if c.accept("CREATE"):
        c.accept("OR", "REPLACE")
        if c.is_kw("POLICY"):
            return "databricks"
        secure = False
        while True:
            if c.accept("SECURE"):
                secure = True  # Snowflake only: Databricks has no secure functions
            elif not (c.accept("TEMPORARY") or c.accept("TEMP")):
                break
        if c.accept("FUNCTION"):
            return "snowflake" if secure else _function_signal(toks[c.i :])
    if c.is_kw("DROP", "POLICY"):
        return "databricks"
    return None


def _function_signal(toks: Sequence[Token]) -> str | None:
    """A Databricks SQL function has a ``RETURN`` body; a Snowflake SQL function has
    ``AS '...'`` / ``AS $$...$$`` (a body in another language tells neither)."""
    depth = 0
    body_as = False
    language: str | None = None
    for k, tok in enumerate(toks):
        if tok.token_type in OPEN:
            depth += 1
        elif tok.token_type in CLOSE:
            depth -= 1
        elif depth == 0 and is_kw(tok, "RETURN"):
            return "databricks"
        elif depth == 0 and is_kw(tok, "LANGUAGE") and k + 1 < len(toks):
            language = toks[k + 1].text.upper()
        elif (
            depth == 0
            and is_kw(tok, "AS")
            and k + 1 < len(toks)
            and toks[k + 1].token_type in BODY_STRING_TYPES
        ):
            body_as = True
    return "snowflake" if body_as and language in (None, "SQL") else None


def _is_function_statement(toks: Sequence[Token]) -> bool:
    """``CREATE [OR REPLACE] [SECURE|TEMPORARY] FUNCTION``: a policy statement (a filter, a mask
    or a salt function) whatever its dialect."""
    c = Cursor(toks, "")
    if not c.accept("CREATE"):
        return False
    c.accept("OR", "REPLACE") or c.accept("OR", "ALTER")
    while c.accept("SECURE") or c.accept("TEMPORARY") or c.accept("TEMP"):
        pass
    return c.is_kw("FUNCTION")


def _signal(tokens: Sequence[Token]) -> str | None:
    for toks in split(tokens):
        found = _statement_signal(toks)
        if found:
            return found
    return None


def detect_dialect(text: str, filename: str) -> str | None:
    """The dialect of a SQL file: from a ``.snowflake.sql`` / ``.databricks.sql`` suffix, else
    from its statements (``ROW ACCESS POLICY``, ``MASKING POLICY`` -> snowflake; ``SET ROW
    FILTER``, ``SET MASK``, ``CREATE FUNCTION ... RETURN``, ``CREATE POLICY`` -> databricks;
    the first statement that tells decides), else None."""
    found = dialect_from_suffix(filename)
    if found:
        return found
    return detect_from_tokens(clean(text))[0]


def detect_from_tokens(text: str) -> tuple[str | None, Tokens | None, int | None]:
    """Detect from statements. Returns the dialect, the tokens when they were read in that
    dialect (so scan() need not tokenize again), and the offset of the first token."""
    first: int | None = None
    for dialect in DIALECTS:
        read = tokenize(text, dialect)
        if read.tokens and first is None:
            first = read.tokens[0].start
        found = _signal(read.tokens)
        if found is not None:
            return found, read if found == dialect else None, first
    return None, None, first


def unknown_dialect(
    text: str, file: str, lines: LineIndex, breaks: Sequence[tuple[int, bool]]
) -> tuple[ScanError, ...]:
    """The error for a file of unknown dialect: located at its first function, if any."""
    for dialect in DIALECTS:
        read = tokenize(text, dialect)
        for toks, _ in split_with_prev(read.tokens, breaks):
            if _is_function_statement(toks):
                line, column = lines.position(toks[0].start)
                message = (
                    "cannot tell whether this function is Snowflake or Databricks SQL: name the "
                    "file *.snowflake.sql or *.databricks.sql, or pass --dialect"
                )
                span = (toks[0].start, toks[-1].end + 1)
                return (ScanError(file, line, column, message, "dialect", span),)
    return ()
