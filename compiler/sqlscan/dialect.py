"""Which dialect a SQL file is written in: from its ``.snowflake.sql`` / ``.databricks.sql``
suffix, else from the first statement that tells (``ROW ACCESS POLICY``, ``MASKING POLICY``,
``SECURE FUNCTION``, ``AS '...'`` bodies -> snowflake; ``SET ROW FILTER``, ``SET MASK``,
``SET TAGS``, ``CREATE POLICY``, ``RETURN`` bodies -> databricks), and the error for a file
that holds a policy statement but does not tell.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.tokens import Token, TokenType

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


_SNOWFLAKE_SIGNALS = (
    ("ROW", "ACCESS", "POLICY"),
    ("MASKING", "POLICY"),
    # attachments of projection, aggregation and join policies (alter-table)
    ("SET", "PROJECTION", "POLICY"),
    ("UNSET", "PROJECTION", "POLICY"),
    ("SET", "AGGREGATION", "POLICY"),
    ("UNSET", "AGGREGATION", "POLICY"),
    ("SET", "JOIN", "POLICY"),
    ("UNSET", "JOIN", "POLICY"),
)
_DATABRICKS_SIGNALS = (
    ("SET", "ROW", "FILTER"),
    ("DROP", "ROW", "FILTER"),
    ("SET", "MASK"),
    ("DROP", "MASK"),
    ("SET", "TAGS"),
)


_SIGNAL_STARTS = frozenset(w[0] for w in _SNOWFLAKE_SIGNALS + _DATABRICKS_SIGNALS)

#: the datasets only a Databricks pipeline defines (``CREATE [OR REFRESH] STREAMING TABLE``,
#: ``LIVE TABLE``, ``LIVE VIEW``); a materialized view exists on both platforms
_PIPELINE_WORDS = (("STREAMING",), ("LIVE",))

#: calls only one platform has: a body or view calling one is that platform's SQL
#: (functions/is_member, is_account_group_member; functions/current_role,
#: current_available_roles, is_role_in_session, invoker_role, is_granted_to_invoker_role,
#: is_database_role_in_session)
_CALLS = {
    "IS_MEMBER": "databricks",
    "IS_ACCOUNT_GROUP_MEMBER": "databricks",
    "CURRENT_ROLE": "snowflake",
    "CURRENT_AVAILABLE_ROLES": "snowflake",
    "IS_ROLE_IN_SESSION": "snowflake",
    "INVOKER_ROLE": "snowflake",
    "IS_GRANTED_TO_INVOKER_ROLE": "snowflake",
    "IS_DATABASE_ROLE_IN_SESSION": "snowflake",
}


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
    verb = c.peek()
    if verb is not None and any(is_kw(verb, v) for v in ("CREATE", "ALTER", "DROP")):
        # ``{CREATE|ALTER|DROP} <kind> POLICY``: every kind of policy with a name before POLICY
        # is Snowflake's (Databricks' ABAC policy is ``CREATE POLICY``)
        k = 1
        if c.is_kw("OR", "REPLACE", k=1) or c.is_kw("OR", "ALTER", k=1):
            k = 3
        first = k
        while (tok := c.peek(k)) is not None and is_word(tok) and not is_kw(tok, "POLICY"):
            k += 1
        if k > first and k - first <= 3 and c.is_kw("POLICY", k=k):
            return "snowflake"
    if c.accept("CREATE"):
        if c.accept("OR", "REFRESH"):
            return "databricks"  # only a pipeline's datasets are refreshed
        c.accept("OR", "REPLACE")
        if c.is_kw("POLICY"):
            return "databricks"
        while c.accept("TEMPORARY") or c.accept("TEMP") or c.accept("PRIVATE"):
            pass
        if any(c.is_kw(*w) for w in _PIPELINE_WORDS) and (
            c.is_kw("STREAMING", "TABLE")
            or c.is_kw("STREAMING", "LIVE", "TABLE")
            or c.is_kw("LIVE", "TABLE")
            or c.is_kw("LIVE", "VIEW")
        ):
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
        elif (
            depth == 0
            and any(is_kw(tok, w) for w in _STAGED)
            and k + 1 < len(toks)
            and toks[k + 1].token_type is TokenType.EQ
        ):
            return "snowflake"  # IMPORTS = (...), HANDLER = '...': Snowflake's properties
    return "snowflake" if body_as and language in (None, "SQL") else None


#: Snowflake function properties written ``NAME = value`` (create-function: Python, Java and
#: Scala handlers; Databricks' CREATE FUNCTION has no such properties and always has a body)
_STAGED = ("HANDLER", "IMPORTS", "RUNTIME_VERSION", "PACKAGES", "TARGET_PATH")


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
    """Detect from statements, else from the calls only one platform has (:data:`_CALLS`:
    ``is_member()`` is Databricks, ``IS_ROLE_IN_SESSION()`` Snowflake) when the file calls
    those of one platform only. Returns the dialect, the tokens when they were read in that
    dialect (so scan() need not tokenize again), and the offset of the first token."""
    first: int | None = None
    reads: list[tuple[str, Tokens]] = []
    for dialect in DIALECTS:
        read = tokenize(text, dialect)
        reads.append((dialect, read))
        if read.tokens and first is None:
            first = read.tokens[0].start
        found = _signal(read.tokens)
        if found is not None:
            return found, read if found == dialect else None, first
    for dialect, read in reads:
        called = {platform for platform, _ in platform_calls(read.tokens)}
        if len(called) == 1:
            found = called.pop()
            return found, read if found == dialect else None, first
    return None, None, first


def platform_calls(tokens: Sequence[Token]) -> list[tuple[str, Token]]:
    """(platform, token) of every call of a function only one platform has."""
    out = []
    for k, tok in enumerate(tokens[:-1]):
        platform = _CALLS.get(tok.text.upper()) if is_word(tok) else None
        if platform is not None and tokens[k + 1].token_type is TokenType.L_PAREN:
            out.append((platform, tok))
    return out


#: calls that make a view or a pipeline's dataset decide access per caller
_ACCESS_WORDS = frozenset({*_CALLS, "CURRENT_USER", "SESSION_USER"})


def _needs_dialect(toks: Sequence[Token]) -> str | None:
    """What makes this statement need a dialect: a function (a policy statement whatever its
    dialect), or a view or a pipeline's dataset whose query decides access per caller."""
    if _is_function_statement(toks):
        return "function"
    c = Cursor(toks, "")
    if not c.accept("CREATE"):
        return None
    head = [t.text.upper() for t in toks[:8] if is_word(t)]
    if not any(w in head for w in ("VIEW", "TABLE")):
        return None
    for k, tok in enumerate(toks[:-1]):
        if (
            is_word(tok)
            and tok.text.upper() in _ACCESS_WORDS
            and toks[k + 1].token_type is TokenType.L_PAREN
        ):
            return "view" if "VIEW" in head else "table"
    return None


def unknown_dialect(
    text: str, file: str, lines: LineIndex, breaks: Sequence[tuple[int, bool]]
) -> tuple[ScanError, ...]:
    """The error for a file of unknown dialect: located at its first function, or view or
    pipeline dataset that decides access per caller, if any, with the reason the dialect
    cannot be told (nothing tells, or calls of both platforms)."""
    for dialect in DIALECTS:
        read = tokenize(text, dialect)
        calls = platform_calls(read.tokens)
        for toks, _ in split_with_prev(read.tokens, breaks):
            what = _needs_dialect(toks)
            if what is None:
                continue
            line, column = lines.position(toks[0].start)
            by = {p: t for p, t in reversed(calls)}
            if len(by) > 1:
                why = (
                    f"the file calls {by['databricks'].text}() (Databricks only) and "
                    f"{by['snowflake'].text}() (Snowflake only)"
                )
            else:
                why = "nothing in the file tells"
            message = (
                f"cannot tell whether this {what} is Snowflake or Databricks SQL ({why}): name "
                "the file *.snowflake.sql or *.databricks.sql, or pass --dialect"
            )
            span = (toks[0].start, toks[-1].end + 1)
            return (ScanError(file, line, column, message, "dialect", span),)
    return ()
