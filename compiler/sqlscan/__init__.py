"""Scan policy DDL files written in the Snowflake or Databricks dialect.

sqlglot does not parse policy DDL (``CREATE MASKING POLICY``, ``SET ROW FILTER``,
``CREATE POLICY`` fall back to ``exp.Command``), so this module works in three steps:

1. tokenize the whole file once with the dialect's sqlglot tokenizer (strings, quoted
   identifiers, comments and ``$$ ... $$`` bodies are single tokens, so a ``;`` inside them
   is never a statement boundary) and split it at top-level ``;`` tokens;
2. recognise each statement's header from its tokens (a small recursive-descent reader over
   the token list, never a regular expression over the SQL text);
3. parse the body expressions (after ``->`` in Snowflake policies, after ``RETURN`` in
   Databricks functions, ABAC ``WHEN`` / ``MATCH COLUMNS`` conditions) with sqlglot's parser,
   fed the very tokens of step 1, so every node's ``meta["start"]`` is an offset in the file.

Problems in the input never raise: they come back as located :class:`ScanError` values.

Statement kinds and the fields they fill (besides kind/dialect/file/line/column/text and
suppressions; names are dotted and unquoted, ``text`` keeps the quotes):

Snowflake
- ``row_access_policy`` / ``masking_policy``: CREATE [OR REPLACE] ... POLICY [IF NOT EXISTS]
  name AS (params) RETURNS type -> body [COMMENT = ...] [EXEMPT_OTHER_POLICIES = ...]:
  name, params, returns, body*, or_replace, if_not_exists, comment.
- ``alter_policy_body``: ALTER {MASKING|ROW ACCESS} POLICY p SET BODY -> expr: name, body*.
- ``drop_masking_policy`` / ``drop_row_access_policy``: DROP ... POLICY [IF EXISTS] p: name.
- ``add_row_access``: ALTER TABLE t ADD ROW ACCESS POLICY p ON (cols): table, policy, columns;
  with ``DROP ROW ACCESS POLICY p0,`` first (or after) also dropped_policy.
- ``drop_row_access``: ALTER TABLE t DROP ROW ACCESS POLICY p (policy None for DROP ALL).
- ``set_masking_policy``: ALTER TABLE t {MODIFY|ALTER} [COLUMN] c SET MASKING POLICY p
  [USING (c, ...)] [FORCE]: table, column_name, policy, columns, force.
- ``unset_masking_policy``: ... [COLUMN] c UNSET MASKING POLICY: table, column_name.
- ``set_column_tag`` / ``set_table_tag``: ... [COLUMN] c SET TAG tg = 'v', ... / ALTER TABLE t
  SET TAG ...: table, column_name (column only), tags.
- ``snowflake_tag``: CREATE [OR REPLACE] TAG [IF NOT EXISTS] tg ...: name, comment.
- ``alter_tag_set_masking`` / ``alter_tag_unset_masking``: ALTER TAG tg {SET|UNSET} MASKING
  POLICY p [, MASKING POLICY p2] [FORCE]: name, policy (the first), policies, force.
- ``function``: CREATE [OR REPLACE] [SECURE] FUNCTION f(params) RETURNS type ... AS '...' or
  AS $$...$$: name, params, returns, language, secure, comment, body_text; body* only when
  the language is SQL (a string body is tokenized and parsed on its own).

Databricks
- ``function``: CREATE [OR REPLACE] [TEMPORARY] FUNCTION f(params) [RETURNS type] [...]
  RETURN expr (body*), or LANGUAGE PYTHON AS $$...$$ (body_text only).
- ``set_row_filter`` (table, policy, columns), ``drop_row_filter`` (table).
- ``set_mask``: ALTER TABLE t ALTER COLUMN c SET MASK f [USING COLUMNS (...)]: table,
  column_name, policy, columns; ``drop_mask``: table, column_name.
- ``set_tags``: ALTER TABLE t [ALTER COLUMN c] SET TAGS ('k' = 'v', 'k2'): table,
  column_name (None at table level), tags (a key without value gets "").
- ``abac_policy``: CREATE [OR REPLACE] POLICY: name, abac (see :class:`AbacPolicy`), policy
  (the function), table (ON TABLE only), column_name (ON COLUMN), columns (USING COLUMNS).
- ``drop_abac_policy``: DROP POLICY [IF EXISTS] name ON ...: name, table, abac (securable).
- ``governed_tag``: CREATE GOVERNED TAG k [DESCRIPTION 'd'] [VALUES (...)]: name, comment;
  ``alter_governed_tag`` (ALTER GOVERNED TAG k SET ...) and ``drop_governed_tag``: name
  (Runtime 18.1+: sql-ref-syntax-ddl-create-governed-tag and its ALTER / DROP pages).

Both
- ``other``: anything else; ``expression`` is sqlglot's parse, None when sqlglot cannot
  parse it or only falls back to ``exp.Command``.

body* = body, body_text, body_line, body_column. In USING / ON column lists identifiers are
unquoted and literals kept as written (``'literal'``). An ALTER TABLE with several column
actions gives one Statement per action, all with the same position and text.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from sqlglot import exp
from sqlglot.dialects.databricks import Databricks
from sqlglot.dialects.dialect import Dialect as _SqlglotDialect
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

from compiler.core.platforms import DIALECTS

__all__ = [
    "DIALECTS",
    "KINDS",
    "AbacPolicy",
    "Dialect",
    "Param",
    "ScanError",
    "ScanResult",
    "Statement",
    "Suppression",
    "detect_dialect",
    "node_position",
    "scan",
]

Dialect = Literal["snowflake", "databricks"]

# Statement kinds, for reference (Statement.kind is always one of these).
KINDS: frozenset[str] = frozenset(
    {
        "row_access_policy",
        "masking_policy",
        "alter_policy_body",
        "drop_row_access_policy",
        "drop_masking_policy",
        "function",
        "add_row_access",
        "drop_row_access",
        "set_masking_policy",
        "unset_masking_policy",
        "set_row_filter",
        "drop_row_filter",
        "set_mask",
        "drop_mask",
        "abac_policy",
        "drop_abac_policy",
        "set_tags",
        "snowflake_tag",
        "alter_tag_set_masking",
        "alter_tag_unset_masking",
        "set_column_tag",
        "set_table_tag",
        "other",
    }
)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Param:
    """One parameter of a policy or function signature; ``type`` is upper-cased."""

    name: str
    type: str


@dataclass(frozen=True)
class Suppression:
    """``-- accord: ignore ACC101 <reason>`` on the line(s) directly before a statement.

    ``reason`` may be empty: callers report a suppression without a reason as an error.
    ``line``/``column`` locate the comment."""

    rule: str
    reason: str
    line: int
    column: int


@dataclass(frozen=True)
class ScanError:
    """A located problem in the input: ``file:line:column: message``.

    ``kind`` says what could not be read: ``statement`` (a policy statement, reported by lint
    as ACC001), ``tokenize`` (the rest of the file from here), ``dialect`` (a policy
    statement in a file of unknown dialect), ``suppression`` (a malformed suppression
    comment: bad input). ``span`` is the (start, end) offset of the statement concerned."""

    file: str
    line: int
    column: int
    message: str
    kind: str = "statement"
    span: tuple[int, int] | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class AbacPolicy:
    """A Databricks ``CREATE POLICY`` (or, with only the securable filled, ``DROP POLICY``)."""

    securable_type: str  # "CATALOG" | "SCHEMA" | "TABLE"
    securable: str
    kind: str | None = None  # "ROW FILTER" | "COLUMN MASK"
    function: str | None = None
    to: tuple[str, ...] = ()
    except_: tuple[str, ...] = ()
    when: exp.Expression | None = None
    match_columns: tuple[tuple[exp.Expression, str | None], ...] = ()
    on_column: str | None = None
    using: tuple[str, ...] = ()
    comment: str | None = None


class _LineIndex:
    """Offset -> 1-based (line, column) for one file."""

    __slots__ = ("starts",)

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


@dataclass(frozen=True)
class Statement:
    """One recognised statement. The module documentation lists each ``kind``.

    ``line``/``column`` locate the statement's first token and ``body_line``/``body_column``
    the body's first token (1-based; 0 when there is no body). ``column_name`` is the
    target column of a column-level attachment (``SET MASKING POLICY``, ``SET MASK``,
    ``SET TAGS``, ``SET TAG``) or the ``ON COLUMN`` alias of an ABAC column mask.
    """

    kind: str
    dialect: str
    file: str
    line: int
    column: int
    text: str
    name: str | None = None
    params: tuple[Param, ...] = ()
    returns: str | None = None
    body: exp.Expression | None = None
    body_text: str | None = None
    body_line: int = 0
    body_column: int = 0
    table: str | None = None
    column_name: str | None = None
    columns: tuple[str, ...] = ()
    policy: str | None = None
    dropped_policy: str | None = None
    policies: tuple[str, ...] = ()
    force: bool = False
    or_replace: bool = False
    if_not_exists: bool = False
    secure: bool = False
    language: str | None = None
    comment: str | None = None
    abac: AbacPolicy | None = None
    tags: tuple[tuple[str, str], ...] = ()
    expression: exp.Expression | None = None
    suppressions: tuple[Suppression, ...] = ()
    # (root expression, offset of its source text in the file) for node_position.
    _roots: tuple[tuple[exp.Expression, int], ...] = field(
        default=(), repr=False, compare=False, hash=False
    )
    _lines: _LineIndex | None = field(default=None, repr=False, compare=False, hash=False)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class ScanResult:
    statements: tuple[Statement, ...]
    dialect: str | None
    errors: tuple[ScanError, ...] = ()
    #: the :class:`compiler.sqlscan.template.Template` the SQL was read from, for a Jinja file
    template: Any = field(default=None, compare=False)


# --------------------------------------------------------------------------- tokenizers


class _DatabricksTokenizer(Databricks.Tokenizer):  # type: ignore[misc,name-defined]
    """Databricks' tokenizer plus dollar-quoted bodies (``AS $$ ... $$``, ``$tag$ ... $tag$``),
    which Databricks SQL accepts for Python UDFs and sqlglot's Databricks tokenizer lacks."""

    HEREDOC_STRINGS: ClassVar[list[str | tuple[str, str]]] = ["$"]
    HEREDOC_TAG_IS_IDENTIFIER = True
    HEREDOC_STRING_ALTERNATIVE = TokenType.PARAMETER
    SINGLE_TOKENS: ClassVar[dict[str, TokenType]] = {
        **Databricks.Tokenizer.SINGLE_TOKENS,
        "$": TokenType.HEREDOC_STRING,
    }


def _tokenizer_class(dialect: str) -> type[Tokenizer]:
    if dialect == "databricks":
        return _DatabricksTokenizer
    return _SqlglotDialect.get_or_raise(dialect).tokenizer_class


_STRING_TYPES = frozenset(
    {
        TokenType.STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.NATIONAL_STRING,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
        TokenType.UNICODE_STRING,
    }
)
_BODY_STRING_TYPES = frozenset({TokenType.STRING, TokenType.RAW_STRING, TokenType.HEREDOC_STRING})
_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


@dataclass
class _Tokens:
    tokens: list[Token]
    error: tuple[int, str] | None  # (offset, message) of a tokenizer failure


def _tokenize(text: str, dialect: str) -> _Tokens:
    tokenizer = _tokenizer_class(dialect)(dialect=dialect)
    try:
        return _Tokens(tokenizer.tokenize(text), None)
    except TokenError as err:
        # The tokens read before the failure are kept; scan() uses the complete statements.
        core: Any = getattr(tokenizer, "_core", None)
        offset = getattr(core, "_start", None)
        if not isinstance(offset, int):
            offset = err.start or 0
        partial = list(getattr(core, "tokens", []) or [])
        cause = str(err.__cause__ or err).strip().splitlines()[0]
        found = re.match(r"Missing (.+?) from", cause)
        if found:
            message = f"unterminated quoted text: no closing {found.group(1)} for the one here"
        else:
            message = f"cannot tokenize the SQL here ({cause})"
        return _Tokens([t for t in partial if t.start < offset], (offset, message))


# --------------------------------------------------------------------------- token helpers


def _is_word(tok: Token) -> bool:
    """An unquoted word (keyword or bare identifier)."""
    if tok.token_type is TokenType.IDENTIFIER or tok.token_type in _STRING_TYPES:
        return False
    first = tok.text[:1]
    return first.isalpha() or first == "_"


def _is_kw(tok: Token | None, word: str) -> bool:
    return tok is not None and _is_word(tok) and tok.text.upper() == word


def _is_ident(tok: Token | None) -> bool:
    return tok is not None and (tok.token_type is TokenType.IDENTIFIER or _is_word(tok))


def _describe(tok: Token) -> str:
    if tok.token_type in _STRING_TYPES:
        return "a string"
    if tok.token_type is TokenType.IDENTIFIER:
        return f'the identifier "{tok.text}"'
    return f"'{tok.text}'"


class _Fail(Exception):
    """A located problem inside one statement; becomes a ScanError."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


class _Cursor:
    """A reader over one statement's tokens (the terminating ``;`` excluded)."""

    def __init__(self, tokens: Sequence[Token], text: str) -> None:
        self.toks = tokens
        self.text = text
        self.i = 0

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if 0 <= j < len(self.toks) else None

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def is_kw(self, *words: str, k: int = 0) -> bool:
        return all(_is_kw(self.peek(k + n), w) for n, w in enumerate(words))

    def accept(self, *words: str) -> bool:
        if self.is_kw(*words):
            self.i += len(words)
            return True
        return False

    def accept_type(self, token_type: TokenType) -> Token | None:
        tok = self.peek()
        if tok is not None and tok.token_type is token_type:
            self.i += 1
            return tok
        return None

    def fail(self, expected: str) -> _Fail:
        tok = self.peek()
        if tok is None:
            last = self.toks[-1]
            return _Fail(last.start, f"expected {expected}, but the statement ends here")
        return _Fail(tok.start, f"expected {expected}, found {_describe(tok)}")

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.fail(" ".join(words))

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        tok = self.accept_type(token_type)
        if tok is None:
            raise self.fail(what)
        return tok

    def expect_end(self, what: str) -> None:
        tok = self.peek()
        if tok is not None:
            raise _Fail(tok.start, f"unexpected {_describe(tok)} after {what}")

    def ident(self, what: str) -> str:
        tok = self.peek()
        if not _is_ident(tok):
            raise self.fail(what)
        self.i += 1
        return tok.text  # type: ignore[union-attr]

    def name(self, what: str) -> str:
        """A possibly dotted name, each part unquoted: ``"My Db".sch.p`` -> ``My Db.sch.p``."""
        parts = [self.ident(what)]
        while (dot := self.peek()) is not None and dot.token_type is TokenType.DOT:
            self.i += 1
            parts.append(self.ident(f"a name after '.' in {what}"))
        return ".".join(parts)

    def string(self, what: str) -> str:
        tok = self.peek()
        if tok is None or tok.token_type not in _STRING_TYPES:
            raise self.fail(what)
        self.i += 1
        return tok.text

    def balanced(self) -> list[Token]:
        """The tokens of one balanced ``( ... )`` group starting at the cursor, inclusive."""
        start = self.i
        depth = 0
        while (tok := self.peek()) is not None:
            self.i += 1
            if tok.token_type in _OPEN:
                depth += 1
            elif tok.token_type in _CLOSE:
                depth -= 1
                if depth == 0:
                    return list(self.toks[start : self.i])
        raise _Fail(self.toks[start].start, "unbalanced parenthesis: no matching ')'")

    def until(self, stop: Callable[[_Cursor], bool]) -> list[Token]:
        """Tokens up to (not including) the first top-level position where ``stop`` holds."""
        start = self.i
        depth = 0
        while (tok := self.peek()) is not None:
            if depth == 0 and stop(self):
                break
            if tok.token_type in _OPEN:
                depth += 1
            elif tok.token_type in _CLOSE:
                if depth == 0:
                    break
                depth -= 1
            self.i += 1
        return list(self.toks[start : self.i])

    def paren_items(self, what: str) -> list[list[Token]]:
        """``( item, item, ... )`` split at top-level commas; ``()`` gives ``[]``."""
        self.expect_type(TokenType.L_PAREN, f"'(' to open {what}")
        items: list[list[Token]] = []
        if self.accept_type(TokenType.R_PAREN):
            return items
        while True:
            item = self.until(lambda c: c.peek().token_type is TokenType.COMMA)  # type: ignore[union-attr]
            if not item:
                raise self.fail(f"an item of {what}")
            items.append(item)
            if self.accept_type(TokenType.COMMA):
                continue
            self.expect_type(TokenType.R_PAREN, f"',' or ')' in {what}")
            return items

    def column_list(self, what: str) -> tuple[str, ...]:
        """``(col, ...)``: identifiers unquoted; any other item (a literal) as written."""
        out = []
        for item in self.paren_items(what):
            out.append(_item_text(item, self.text))
        return tuple(out)


def _item_text(item: Sequence[Token], text: str) -> str:
    if all(_is_ident(t) or t.token_type is TokenType.DOT for t in item) and _is_ident(item[0]):
        return "".join("." if t.token_type is TokenType.DOT else t.text for t in item)
    return text[item[0].start : item[-1].end + 1]


_TYPE_NO_SPACE_BEFORE = frozenset({")", ">", ",", "(", "<", ":", "]", "["})
_TYPE_NO_SPACE_AFTER = frozenset({"(", "<", "["})


def _type_text(tokens: Sequence[Token], text: str) -> str:
    """A data type as written, upper-cased, with spacing normalised: ``NUMBER(10, 2)``."""
    out: list[str] = []
    prev = ""
    for tok in tokens:
        piece = text[tok.start : tok.end + 1]
        if tok.token_type is not TokenType.IDENTIFIER:
            piece = piece.upper()
        if out and piece not in _TYPE_NO_SPACE_BEFORE and prev not in _TYPE_NO_SPACE_AFTER:
            out.append(" ")
        out.append(piece)
        prev = piece
    return "".join(out)


def _angle_delta(tok: Token) -> int:
    chars = tok.text
    if chars and set(chars) == {"<"}:
        return len(chars)
    if chars and set(chars) == {">"}:
        return -len(chars)
    return 0


# --------------------------------------------------------------------------- parsing bodies


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


class _Context:
    """Per-file state shared by the statement readers."""

    def __init__(self, text: str, file: str, dialect: str, lines: _LineIndex) -> None:
        self.text = text
        self.file = file
        self.dialect = dialect
        self.lines = lines
        self.parser = _SqlglotDialect.get_or_raise(dialect).parser()

    def parse_tokens(
        self, tokens: Sequence[Token], what: str, sql: str, base: int
    ) -> exp.Expression:
        """Parse ``tokens`` (taken from ``sql``, which sits at ``base`` in the file) as one
        expression. Failures raise _Fail located at the offending token."""
        if not tokens:
            raise _Fail(base, f"{what} is empty")
        try:
            parsed = self.parser.parse(list(tokens), sql)
        except ParseError as err:
            raise self._parse_fail(err, tokens, what, base) from None
        except SqlglotError as err:
            message = sql_terms(str(err).strip().splitlines()[0] if str(err).strip() else "")
            raise _Fail(tokens[0].start + base, f"cannot parse {what}: {message}") from None
        trees = [p for p in parsed if p is not None]
        if len(trees) != 1:
            raise _Fail(tokens[0].start + base, f"{what} is not one expression")
        tree = trees[0]
        if isinstance(tree, exp.Command):
            raise _Fail(tokens[0].start + base, f"cannot parse {what}: not an expression")
        return tree

    def _parse_fail(self, err: ParseError, tokens: Sequence[Token], what: str, base: int) -> _Fail:
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
        return _Fail(offset + base, f"cannot parse {what}: {description}")

    def parse_body_string(self, tok: Token, what: str) -> tuple[exp.Expression, int]:
        """Parse the SQL inside a string token (``AS '...'`` / ``AS $$...$$``). Returns the
        tree and the offset of its first token within the string's content."""
        content, start = _string_content(tok, self.text)
        inner = _tokenize(content, self.dialect)
        if inner.error is not None:
            offset, message = inner.error
            raise _Fail(start + offset, f"cannot parse {what}: {message}")
        if not inner.tokens:
            raise _Fail(tok.start, f"{what} is empty")
        tree = self.parse_tokens(inner.tokens, what, content, start)
        return tree, inner.tokens[0].start


def _string_content(tok: Token, text: str) -> tuple[str, int]:
    """A string token's value and the file offset where it starts (after the delimiter)."""
    source_len = tok.end + 1 - tok.start
    if tok.token_type in (TokenType.RAW_STRING, TokenType.HEREDOC_STRING):
        delimiter = max(0, (source_len - len(tok.text)) // 2)
    else:
        delimiter = 1
    return tok.text, tok.start + delimiter


# --------------------------------------------------------------------------- statement readers

_Fields = dict[str, Any]


def _read_statement(ctx: _Context, toks: Sequence[Token]) -> list[_Fields]:
    """The fields of the statement(s) these tokens make; ``[{"kind": "other"}]`` if not ours."""
    c = _Cursor(toks, ctx.text)
    if c.accept("CREATE"):
        or_replace = c.accept("OR", "REPLACE") or c.accept("OR", "ALTER")
        if c.accept("ROW", "ACCESS", "POLICY"):
            return [_read_policy(ctx, c, "row_access_policy", or_replace)]
        if c.accept("MASKING", "POLICY"):
            return [_read_policy(ctx, c, "masking_policy", or_replace)]
        if c.accept("POLICY"):
            return [_read_abac(ctx, c, or_replace)]
        if c.accept("TAG"):
            return [_read_tag(c, or_replace)]
        if not or_replace and c.accept("GOVERNED", "TAG"):
            return [_read_governed_tag(c, "governed_tag")]
        secure = False
        while True:
            if c.accept("SECURE"):
                secure = True
            elif not (c.accept("TEMPORARY") or c.accept("TEMP")):
                break
        if c.accept("FUNCTION"):
            return _read_function(ctx, c, or_replace, secure)
        return [{"kind": "other"}]
    if c.accept("ALTER"):
        if c.accept("TABLE"):
            return _read_alter_table(c)
        if c.accept("MASKING", "POLICY"):
            return _read_alter_policy(ctx, c, "masking policy")
        if c.accept("ROW", "ACCESS", "POLICY"):
            return _read_alter_policy(ctx, c, "row access policy")
        if c.accept("TAG"):
            return _read_alter_tag(c)
        if c.accept("GOVERNED", "TAG"):
            return [_read_governed_tag(c, "alter_governed_tag")]
        return [{"kind": "other"}]
    if c.accept("DROP"):
        if c.accept("POLICY"):
            return [_read_drop_abac(c)]
        if c.accept("GOVERNED", "TAG"):
            return [_read_governed_tag(c, "drop_governed_tag")]
        if c.accept("MASKING", "POLICY"):
            kind = "drop_masking_policy"
        elif c.accept("ROW", "ACCESS", "POLICY"):
            kind = "drop_row_access_policy"
        else:
            return [{"kind": "other"}]
        c.accept("IF", "EXISTS")
        name = c.name("the policy name")
        c.expect_end("the policy name")
        return [{"kind": kind, "name": name}]
    return [{"kind": "other"}]


def _read_params(c: _Cursor, what: str) -> tuple[Param, ...]:
    """``(name type [DEFAULT expr] [COMMENT '...'] [NOT NULL], ...)``."""
    c.expect_type(TokenType.L_PAREN, f"'(' to open {what}")
    params: list[Param] = []
    if c.accept_type(TokenType.R_PAREN):
        return ()
    while True:
        name = c.ident(f"a parameter name in {what}")
        type_tokens: list[Token] = []
        depth = 0
        while (tok := c.peek()) is not None:
            if depth == 0 and (
                tok.token_type in (TokenType.COMMA, TokenType.R_PAREN)
                or _is_kw(tok, "DEFAULT")
                or _is_kw(tok, "COMMENT")
                or _is_kw(tok, "NOT")
                or _is_kw(tok, "NULL")
            ):
                break
            if tok.token_type in _OPEN:
                depth += 1
            elif tok.token_type in _CLOSE:
                depth -= 1
            else:
                depth += _angle_delta(tok)
            type_tokens.append(tok)
            c.i += 1
        if not type_tokens:
            raise c.fail(f"the type of parameter {name}")
        params.append(Param(name, _type_text(type_tokens, c.text)))
        # DEFAULT expression / COMMENT '...' / NOT NULL: skip to the next top-level ',' or ')'.
        c.until(lambda cur: cur.peek().token_type is TokenType.COMMA)  # type: ignore[union-attr]
        if c.accept_type(TokenType.COMMA):
            continue
        c.expect_type(TokenType.R_PAREN, f"',' or ')' in {what}")
        return tuple(params)


_POLICY_PROPERTIES = ("COMMENT", "EXEMPT_OTHER_POLICIES")


def _read_policy(ctx: _Context, c: _Cursor, kind: str, or_replace: bool) -> _Fields:
    """Snowflake ``CREATE [OR REPLACE] {ROW ACCESS|MASKING} POLICY [IF NOT EXISTS] name
    AS (arg type, ...) RETURNS type -> body [COMMENT = '...'] [EXEMPT_OTHER_POLICIES = b]``."""
    what = "row access policy" if kind == "row_access_policy" else "masking policy"
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name(f"the {what} name")
    c.expect("AS")
    params = _read_params(c, f"the {what} signature")
    c.expect("RETURNS")
    returns = _read_simple_type(c, "the return type after RETURNS")
    c.expect_type(TokenType.ARROW, "'->' before the policy body")
    body_tokens = list(c.toks[c.i :])
    comment = None
    while (
        len(body_tokens) >= 3
        and body_tokens[-2].token_type is TokenType.EQ
        and any(_is_kw(body_tokens[-3], p) for p in _POLICY_PROPERTIES)
    ):
        if _is_kw(body_tokens[-3], "COMMENT"):
            comment = body_tokens[-1].text
        body_tokens = body_tokens[:-3]
    fields = _body_fields(ctx, body_tokens, f"the {what} body", c.toks[c.i - 1])
    return {
        "kind": kind,
        "name": name,
        "params": params,
        "returns": _type_text(returns, ctx.text),
        "or_replace": or_replace,
        "if_not_exists": if_not_exists,
        "comment": comment,
        **fields,
    }


_TYPE_CONTINUATIONS = frozenset(
    {"PRECISION", "VARYING", "WITH", "WITHOUT", "LOCAL", "TIME", "ZONE"}
)


def _read_simple_type(c: _Cursor, what: str) -> list[Token]:
    """A Snowflake policy type: a word or two and an optional ``( ... )``: ``NUMBER(10, 2)``."""
    start = c.i
    c.ident(what)
    while any(c.is_kw(w) for w in _TYPE_CONTINUATIONS):
        c.i += 1
    if (tok := c.peek()) is not None and tok.token_type is TokenType.L_PAREN:
        c.balanced()
    return list(c.toks[start : c.i])


def _body_fields(ctx: _Context, tokens: Sequence[Token], what: str, before: Token) -> _Fields:
    if not tokens:
        raise _Fail(before.start, f"{what} is missing after {_describe(before)}")
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


def _read_alter_policy(ctx: _Context, c: _Cursor, what: str) -> list[_Fields]:
    """Snowflake ``ALTER {MASKING|ROW ACCESS} POLICY [IF EXISTS] p SET BODY -> expr``; other
    ALTER POLICY forms (RENAME, SET COMMENT, SET TAG ...) are kind "other"."""
    c.accept("IF", "EXISTS")
    name = c.name(f"the {what} name")
    if not c.accept("SET", "BODY"):
        return [{"kind": "other"}]
    arrow = c.expect_type(TokenType.ARROW, "'->' after SET BODY")
    fields = _body_fields(ctx, c.toks[c.i :], f"the {what} body", arrow)
    return [{"kind": "alter_policy_body", "name": name, **fields}]


# Words that end a function's RETURNS type (characteristics of CREATE FUNCTION).
_FUNCTION_CLAUSES = frozenset(
    {
        "NOT",
        "NULL",
        "LANGUAGE",
        "COMMENT",
        "RETURN",
        "RETURNS",
        "AS",
        "DETERMINISTIC",
        "CONTAINS",
        "READS",
        "MODIFIES",
        "SQL",
        "IMMUTABLE",
        "VOLATILE",
        "CALLED",
        "STRICT",
        "MEMOIZABLE",
        "RUNTIME_VERSION",
        "PACKAGES",
        "IMPORTS",
        "HANDLER",
        "EXTERNAL_ACCESS_INTEGRATIONS",
        "SECRETS",
        "COPY",
        "DEFAULT",
        "ENVIRONMENT",
        "TARGET_PATH",
        "WITH",
    }
)


def _read_function(ctx: _Context, c: _Cursor, or_replace: bool, secure: bool) -> list[_Fields]:
    """Databricks ``CREATE [OR REPLACE] [TEMPORARY] FUNCTION f(params) [RETURNS type]
    [characteristics] RETURN expr`` and ``... AS $$...$$``; Snowflake ``CREATE [OR REPLACE]
    [SECURE] FUNCTION f(params) RETURNS type [...] AS '...'`` / ``AS $$...$$``."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name("the function name")
    tok = c.peek()
    if tok is None or tok.token_type is not TokenType.L_PAREN:
        return [{"kind": "other"}]  # Hive-style CREATE FUNCTION f AS 'class' USING JAR ...
    params = _read_params(c, "the function signature")
    returns: str | None = None
    language: str | None = None
    comment: str | None = None
    fields: _Fields | None = None
    string_body: Token | None = None
    while (tok := c.peek()) is not None:
        if c.accept("RETURNS"):
            if c.accept("NULL"):  # RETURNS NULL ON NULL INPUT
                continue
            type_tokens = c.until(lambda cur: any(_is_kw(cur.peek(), w) for w in _FUNCTION_CLAUSES))
            if not type_tokens:
                raise c.fail("the return type after RETURNS")
            returns = _type_text(type_tokens, ctx.text)
        elif c.accept("LANGUAGE"):
            language = c.ident("a language name after LANGUAGE").upper()
        elif c.accept("COMMENT"):
            c.accept_type(TokenType.EQ)
            comment = c.string("a string after COMMENT")
        elif c.accept("RETURN"):
            fields = _body_fields(ctx, c.toks[c.i :], "the function body", tok)
            c.i = len(c.toks)
            break
        elif c.accept("AS"):
            string_body = c.peek()
            if string_body is None or string_body.token_type not in _BODY_STRING_TYPES:
                raise c.fail("the function body as a string ('...' or $$...$$) after AS")
            c.i += 1
        elif tok.token_type in _OPEN:
            c.balanced()
        else:
            c.i += 1
    if string_body is not None:
        fields = _string_body_fields(ctx, string_body, language)
    if fields is None:
        raise c.fail("RETURN <expression> or AS '<body>' in CREATE FUNCTION")
    return [
        {
            "kind": "function",
            "name": name,
            "params": params,
            "returns": returns,
            "or_replace": or_replace,
            "if_not_exists": if_not_exists,
            "secure": secure,
            "language": language,
            "comment": comment,
            **fields,
        }
    ]


def _string_body_fields(ctx: _Context, tok: Token, language: str | None) -> _Fields:
    """``AS '...'`` / ``AS $$...$$``: SQL bodies are parsed (and located at their first
    token); other languages keep their source text, located where the string starts."""
    content, start = _string_content(tok, ctx.text)
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


def _read_tag(c: _Cursor, or_replace: bool) -> _Fields:
    """Snowflake ``CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [ALLOWED_VALUES ...]
    [COMMENT = '...']``."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name("the tag name")
    comment = None
    while not c.at_end():
        if c.accept("COMMENT"):
            c.accept_type(TokenType.EQ)
            comment = c.string("a string after COMMENT =")
        else:
            c.i += 1
    return {
        "kind": "snowflake_tag",
        "name": name,
        "or_replace": or_replace,
        "if_not_exists": if_not_exists,
        "comment": comment,
    }


def _read_governed_tag(c: _Cursor, kind: str) -> _Fields:
    """Databricks ``{CREATE|ALTER|DROP} GOVERNED TAG tag_key ...``: the key, and for CREATE the
    ``DESCRIPTION`` literal."""
    name = c.name("the governed tag's key")
    comment = None
    while kind == "governed_tag" and not c.at_end():
        if c.accept("DESCRIPTION"):
            comment = c.string("a string after DESCRIPTION")
        else:
            c.i += 1
    return {"kind": kind, "name": name, "comment": comment}


def _read_alter_tag(c: _Cursor) -> list[_Fields]:
    """Snowflake ``ALTER TAG [IF EXISTS] tg {SET|UNSET} MASKING POLICY p [, MASKING POLICY p2]
    [FORCE]``; other ALTER TAG forms are kind "other"."""
    c.accept("IF", "EXISTS")
    name = c.name("the tag name")
    if c.accept("SET", "MASKING", "POLICY"):
        kind = "alter_tag_set_masking"
    elif c.accept("UNSET", "MASKING", "POLICY"):
        kind = "alter_tag_unset_masking"
    else:
        return [{"kind": "other"}]
    policies = [c.name("a masking policy name")]
    while c.accept_type(TokenType.COMMA):
        c.expect("MASKING", "POLICY")
        policies.append(c.name("a masking policy name"))
    force = kind == "alter_tag_set_masking" and c.accept("FORCE")
    c.expect_end("the masking policy list")
    return [
        {
            "kind": kind,
            "name": name,
            "policy": policies[0],
            "policies": tuple(policies),
            "force": force,
        }
    ]


def _read_drop_abac(c: _Cursor) -> _Fields:
    """Databricks ``DROP POLICY [IF EXISTS] name ON {CATALOG|SCHEMA|TABLE} x``."""
    c.accept("IF", "EXISTS")
    name = c.name("the policy name")
    c.expect("ON")
    securable_type, securable = _securable(c)
    c.expect_end("the securable name")
    return {
        "kind": "drop_abac_policy",
        "name": name,
        "table": securable if securable_type == "TABLE" else None,
        "abac": AbacPolicy(securable_type=securable_type, securable=securable),
    }


def _securable(c: _Cursor) -> tuple[str, str]:
    for kind in ("CATALOG", "SCHEMA", "TABLE"):
        if c.accept(kind):
            return kind, c.name(f"the {kind.lower()} name")
    raise c.fail("CATALOG, SCHEMA or TABLE after ON")


def _principals(c: _Cursor, what: str) -> tuple[str, ...]:
    out = []
    while True:
        tok = c.peek()
        if tok is not None and tok.token_type in _STRING_TYPES:
            c.i += 1
            out.append(tok.text)
        else:
            out.append(c.ident(f"a principal {what}"))
        if not c.accept_type(TokenType.COMMA):
            return tuple(out)


def _at_abac_clause(c: _Cursor) -> bool:
    return c.is_kw("MATCH", "COLUMNS") or c.is_kw("ON", "COLUMN") or c.is_kw("USING", "COLUMNS")


def _read_abac(ctx: _Context, c: _Cursor, or_replace: bool) -> _Fields:
    """Databricks ``CREATE [OR REPLACE] POLICY name ON {CATALOG|SCHEMA|TABLE} x [COMMENT '...']
    {ROW FILTER f | COLUMN MASK f} TO p[, ...] [EXCEPT p[, ...]] FOR TABLES [WHEN cond]
    [MATCH COLUMNS cond [[AS] alias][, ...]] [ON COLUMN alias] [USING COLUMNS (arg, ...)]``."""
    name = c.name("the policy name")
    c.expect("ON")
    securable_type, securable = _securable(c)
    comment = c.string("a string after COMMENT") if c.accept("COMMENT") else None
    if c.accept("ROW", "FILTER"):
        kind = "ROW FILTER"
    elif c.accept("COLUMN", "MASK"):
        kind = "COLUMN MASK"
    else:
        raise c.fail("ROW FILTER or COLUMN MASK")
    function = c.name(f"the {kind.lower()} function name")
    c.expect("TO")
    to = _principals(c, "after TO")
    except_ = _principals(c, "after EXCEPT") if c.accept("EXCEPT") else ()
    c.expect("FOR", "TABLES")
    roots: list[tuple[exp.Expression, int]] = []
    when = None
    if (when_tok := c.peek()) is not None and c.accept("WHEN"):
        cond = c.until(_at_abac_clause)
        if not cond:
            raise _Fail(when_tok.start, "WHEN needs a condition")
        when = ctx.parse_tokens(cond, "the WHEN condition", ctx.text, 0)
        roots.append((when, 0))
    match_columns: list[tuple[exp.Expression, str | None]] = []
    if c.accept("MATCH", "COLUMNS"):
        while True:
            item = c.until(
                lambda cur: cur.peek().token_type is TokenType.COMMA or _at_abac_clause(cur)
            )  # type: ignore[union-attr]
            if not item:
                raise c.fail("a condition after MATCH COLUMNS")
            cond_tokens, alias = _split_alias(item)
            cond = ctx.parse_tokens(cond_tokens, "the MATCH COLUMNS condition", ctx.text, 0)
            roots.append((cond, 0))
            match_columns.append((cond, alias))
            if not c.accept_type(TokenType.COMMA):
                break
    on_column = c.ident("the alias after ON COLUMN") if c.accept("ON", "COLUMN") else None
    using: tuple[str, ...] = ()
    if c.accept("USING", "COLUMNS"):
        using = c.column_list("USING COLUMNS")
    c.expect_end("the policy")
    return {
        "kind": "abac_policy",
        "name": name,
        "table": securable if securable_type == "TABLE" else None,
        "policy": function,
        "column_name": on_column,
        "columns": using,
        "or_replace": or_replace,
        "comment": comment,
        "abac": AbacPolicy(
            securable_type=securable_type,
            securable=securable,
            kind=kind,
            function=function,
            to=to,
            except_=except_,
            when=when,
            match_columns=tuple(match_columns),
            on_column=on_column,
            using=using,
            comment=comment,
        ),
        "_roots": tuple(roots),
    }


_ENDS_EXPRESSION = frozenset(
    {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.NUMBER, TokenType.IDENTIFIER} | _STRING_TYPES
)


_OPERATOR_WORDS = ("AND", "OR", "NOT", "IS", "IN", "LIKE", "ILIKE", "RLIKE", "BETWEEN")


def _split_alias(item: list[Token]) -> tuple[list[Token], str | None]:
    """``cond [[AS] alias]`` -> (condition tokens, alias)."""
    if len(item) >= 3 and _is_kw(item[-2], "AS") and _is_ident(item[-1]):
        return item[:-2], item[-1].text
    if (
        len(item) >= 2
        and _is_ident(item[-1])
        and (item[-2].token_type in _ENDS_EXPRESSION or _is_word(item[-2]))
        and not any(_is_kw(item[-2], w) for w in _OPERATOR_WORDS)
    ):
        return item[:-1], item[-1].text
    return item, None


# ALTER TABLE actions ---------------------------------------------------------


def _read_alter_table(c: _Cursor) -> list[_Fields]:
    """Snowflake and Databricks policy attachments on ``ALTER TABLE``. A statement whose
    first action is not a policy action is kind "other"; once one action is recognised, the
    rest must be too."""
    c.accept("IF", "EXISTS")
    table = c.name("the table name")
    actions: list[_Fields] = []
    while True:
        found = _read_table_action(c, table)
        if found is None:
            if not actions:
                return [{"kind": "other"}]
            raise c.fail("a policy action (mixing policy and other ALTER TABLE actions)")
        actions.extend(found)
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect_end("the ALTER TABLE action")
    drops = [a for a in actions if a["kind"] == "drop_row_access"]
    adds = [a for a in actions if a["kind"] == "add_row_access"]
    if len(drops) == 1 and len(adds) == 1:
        # DROP ROW ACCESS POLICY p, ADD ROW ACCESS POLICY p2 ON (...): one swap.
        adds[0]["dropped_policy"] = drops[0]["policy"]
        actions = [a for a in actions if a is not drops[0]]
    return actions


def _read_table_action(c: _Cursor, table: str) -> list[_Fields] | None:
    base: _Fields = {"table": table}
    if c.accept("ADD", "ROW", "ACCESS", "POLICY"):
        policy = c.name("the row access policy name")
        c.expect("ON")
        columns = c.column_list("the row access policy columns")
        return [{**base, "kind": "add_row_access", "policy": policy, "columns": columns}]
    if c.accept("DROP", "ROW", "ACCESS", "POLICY"):
        policy = c.name("the row access policy name")
        return [{**base, "kind": "drop_row_access", "policy": policy}]
    if c.accept("DROP", "ALL", "ROW", "ACCESS", "POLICIES"):
        return [{**base, "kind": "drop_row_access", "policy": None}]
    if c.accept("SET", "ROW", "FILTER"):
        policy = c.name("the row filter function name")
        c.expect("ON")
        columns = c.column_list("the row filter columns")
        return [{**base, "kind": "set_row_filter", "policy": policy, "columns": columns}]
    if c.accept("DROP", "ROW", "FILTER"):
        return [{**base, "kind": "drop_row_filter"}]
    if c.accept("SET", "TAGS"):
        return [{**base, "kind": "set_tags", "tags": _databricks_tags(c)}]
    if c.accept("SET", "TAG"):
        return [{**base, "kind": "set_table_tag", "tags": _snowflake_tags(c)}]
    if any(c.is_kw(w) for w in ("MODIFY", "ALTER", "CHANGE")):
        mark = c.i
        c.i += 1
        found = _read_column_actions(c, base)
        if found is None:
            c.i = mark
        return found
    return None


def _column_action_follows(c: _Cursor, k: int = 0) -> bool:
    """Does ``[COLUMN] name <policy action>`` start k tokens ahead?"""
    if c.is_kw("COLUMN", k=k):
        k += 1
    if not _is_ident(c.peek(k)):
        return False
    k += 1
    while (dot := c.peek(k)) is not None and dot.token_type is TokenType.DOT:
        k += 2
    return any(
        c.is_kw(*words, k=k)
        for words in (
            ("SET", "MASKING", "POLICY"),
            ("UNSET", "MASKING", "POLICY"),
            ("SET", "MASK"),
            ("DROP", "MASK"),
            ("SET", "TAGS"),
            ("SET", "TAG"),
        )
    )


def _read_column_actions(c: _Cursor, base: _Fields) -> list[_Fields] | None:
    """``{MODIFY|ALTER|CHANGE} [(] [COLUMN] c <action> [, [COLUMN] c2 <action> ...] [)]``."""
    paren = c.peek() is not None and c.peek().token_type is TokenType.L_PAREN  # type: ignore[union-attr]
    if not _column_action_follows(c, 1 if paren else 0):
        return None
    if paren:
        c.i += 1
    out: list[_Fields] = []
    while True:
        if not _column_action_follows(c):
            raise c.fail("[COLUMN] name followed by a policy action")
        c.accept("COLUMN")
        column = c.name("the column name")
        item: _Fields = {**base, "column_name": column}
        if c.accept("SET", "MASKING", "POLICY"):
            item.update(kind="set_masking_policy", policy=c.name("the masking policy name"))
            if c.accept("USING"):
                item["columns"] = c.column_list("USING")
            item["force"] = c.accept("FORCE")
        elif c.accept("UNSET", "MASKING", "POLICY"):
            item["kind"] = "unset_masking_policy"
        elif c.accept("SET", "MASK"):
            item.update(kind="set_mask", policy=c.name("the mask function name"))
            if c.accept("USING", "COLUMNS"):
                item["columns"] = c.column_list("USING COLUMNS")
        elif c.accept("DROP", "MASK"):
            item["kind"] = "drop_mask"
        elif c.accept("SET", "TAGS"):
            item.update(kind="set_tags", tags=_databricks_tags(c))
        else:
            c.expect("SET", "TAG")
            item.update(kind="set_column_tag", tags=_snowflake_tags(c))
        out.append(item)
        comma = c.peek()
        if (
            comma is not None
            and comma.token_type is TokenType.COMMA
            and _column_action_follows(c, 1)
        ):
            c.i += 1
            continue
        break
    if paren:
        c.expect_type(TokenType.R_PAREN, "')' closing the column actions")
    return out


def _tag_part(c: _Cursor, what: str) -> str:
    tok = c.peek()
    if tok is not None and tok.token_type in _STRING_TYPES:
        c.i += 1
        return tok.text
    return c.name(what)


def _databricks_tags(c: _Cursor) -> tuple[tuple[str, str], ...]:
    """``('key' = 'value', 'key2', ...)``; a key without a value gets ``""``."""
    tags = []
    for item in c.paren_items("SET TAGS"):
        sub = _Cursor(item, c.text)
        key = _tag_part(sub, "a tag key")
        value = ""
        if sub.accept_type(TokenType.EQ):
            value = _tag_part(sub, "a tag value")
        sub.expect_end("the tag")
        tags.append((key, value))
    return tuple(tags)


def _snowflake_tags(c: _Cursor) -> tuple[tuple[str, str], ...]:
    """``tag = 'value' [, tag2 = 'value2']``, stopping before ``, [COLUMN] c2 SET ...``."""
    tags = []
    while True:
        key = c.name("a tag name")
        c.expect_type(TokenType.EQ, "'=' after the tag name")
        tags.append((key, c.string("a string tag value")))
        comma = c.peek()
        if comma is None or comma.token_type is not TokenType.COMMA or _column_action_follows(c, 1):
            return tuple(tags)
        c.i += 1


# --------------------------------------------------------------------------- suppressions

_SUPPRESSION = re.compile(r"accord\s*:\s*ignore\b(.*)", re.IGNORECASE)
_FIRST_RULE = re.compile(r"\s*([A-Za-z]+[0-9]+)\b")
_MORE_RULES = re.compile(r"\s*,\s*([A-Za-z]+[0-9]+)\b")


@dataclass
class _Comment:
    start: int
    end: int  # exclusive
    body: str


@functools.cache
def _comment_syntax(dialect: str) -> tuple[tuple[tuple[str, str | None], ...], bool]:
    """The dialect tokenizer's comment delimiters, longest opener first, and nesting."""
    tokenizer = _tokenizer_class(dialect)
    delimiters = sorted(tokenizer._COMMENTS.items(), key=lambda kv: -len(kv[0]))
    return tuple(delimiters), bool(tokenizer.NESTED_COMMENTS)


def _gap_comments(text: str, start: int, end: int, dialect: str) -> Iterator[_Comment]:
    """The comments between two tokens. The tokenizer has already decided that this span
    holds only whitespace and comments; it does not record where the comments are."""
    delimiters, nested = _comment_syntax(dialect)
    i = start
    while i < end:
        if text[i].isspace():
            i += 1
            continue
        found = next(((o, e) for o, e in delimiters if text.startswith(o, i)), None)
        if found is None:
            i += 1
            continue
        opener, closer = found
        body_start = i + len(opener)
        if closer is None:
            stop = body_start
            while stop < end and text[stop] not in "\r\n":
                stop += 1
            yield _Comment(i, stop, text[body_start:stop])
            i = stop
            continue
        depth, j = 1, body_start
        while j < end:
            if text.startswith(closer, j):
                depth -= 1
                if depth == 0:
                    break
                j += len(closer)
            elif nested and text.startswith(opener, j):
                depth += 1
                j += len(opener)
            else:
                j += 1
        yield _Comment(i, min(j + len(closer), end), text[body_start:j])
        i = j + len(closer)


def _suppressions(
    ctx: _Context, gap_start: int, first: Token, prev_end_line: int, errors: list[ScanError]
) -> tuple[Suppression, ...]:
    """Suppression comments in the run of comment lines directly above ``first``."""
    comments = list(_gap_comments(ctx.text, gap_start, first.start, ctx.dialect))
    lines = ctx.lines
    top_line, _ = lines.position(first.start)
    attached: list[_Comment] = []
    for comment in reversed(comments):
        start_line, _ = lines.position(comment.start)
        end_line, _ = lines.position(max(comment.start, comment.end - 1))
        if end_line < top_line - 1 or start_line == prev_end_line:
            break
        attached.append(comment)
        top_line = start_line
    out: list[Suppression] = []
    for comment in reversed(attached):
        for index, raw_line in enumerate(comment.body.splitlines() or [""]):
            found = _SUPPRESSION.search(raw_line)
            if not found:
                continue
            if index == 0:
                line, column = lines.position(comment.start)
            else:
                line_start = lines.position(comment.start)[0] + index
                line, column = line_start, 1 + raw_line.index(found.group(0))
            rest = found.group(1)
            rules = []
            pattern = _FIRST_RULE
            while (rule := pattern.match(rest)) is not None:
                rules.append(rule.group(1).upper())
                rest = rest[rule.end() :]
                pattern = _MORE_RULES
            if not rules:
                errors.append(
                    ScanError(
                        ctx.file,
                        line,
                        column,
                        "suppression comment names no rule: write `-- accord: ignore ACC101 <reason>`",
                        "suppression",
                    )
                )
                continue
            reason = rest.strip().lstrip(":-—– ").strip()
            out.extend(Suppression(rule, reason, line, column) for rule in rules)
    return tuple(out)


# --------------------------------------------------------------------------- dialect detection


def _dialect_from_suffix(filename: str) -> str | None:
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
    c = _Cursor(toks, "")
    if c.is_kw("EXECUTE"):
        found = _immediate_string(toks, "snowflake")
        if found is not None:
            return _signal(_tokenize(found[0], "snowflake").tokens)
    for k, tok in enumerate(toks):
        if not _is_word(tok) or tok.text.upper() not in _SIGNAL_STARTS:
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
        if tok.token_type in _OPEN:
            depth += 1
        elif tok.token_type in _CLOSE:
            depth -= 1
        elif depth == 0 and _is_kw(tok, "RETURN"):
            return "databricks"
        elif depth == 0 and _is_kw(tok, "LANGUAGE") and k + 1 < len(toks):
            language = toks[k + 1].text.upper()
        elif (
            depth == 0
            and _is_kw(tok, "AS")
            and k + 1 < len(toks)
            and toks[k + 1].token_type in _BODY_STRING_TYPES
        ):
            body_as = True
    return "snowflake" if body_as and language in (None, "SQL") else None


def _is_function_statement(toks: Sequence[Token]) -> bool:
    """``CREATE [OR REPLACE] [SECURE|TEMPORARY] FUNCTION``: a policy statement (a filter, a mask
    or a salt function) whatever its dialect."""
    c = _Cursor(toks, "")
    if not c.accept("CREATE"):
        return False
    c.accept("OR", "REPLACE") or c.accept("OR", "ALTER")
    while c.accept("SECURE") or c.accept("TEMPORARY") or c.accept("TEMP"):
        pass
    return c.is_kw("FUNCTION")


def _signal(tokens: Sequence[Token]) -> str | None:
    for toks in _split(tokens):
        found = _statement_signal(toks)
        if found:
            return found
    return None


def detect_dialect(text: str, filename: str) -> str | None:
    """The dialect of a SQL file: from a ``.snowflake.sql`` / ``.databricks.sql`` suffix, else
    from its statements (``ROW ACCESS POLICY``, ``MASKING POLICY`` -> snowflake; ``SET ROW
    FILTER``, ``SET MASK``, ``CREATE FUNCTION ... RETURN``, ``CREATE POLICY`` -> databricks;
    the first statement that tells decides), else None."""
    found = _dialect_from_suffix(filename)
    if found:
        return found
    return _detect_from_tokens(_clean(text))[0]


def _detect_from_tokens(text: str) -> tuple[str | None, _Tokens | None, int | None]:
    """Detect from statements. Returns the dialect, the tokens when they were read in that
    dialect (so scan() need not tokenize again), and the offset of the first token."""
    first: int | None = None
    for dialect in DIALECTS:
        read = _tokenize(text, dialect)
        if read.tokens and first is None:
            first = read.tokens[0].start
        found = _signal(read.tokens)
        if found is not None:
            return found, read if found == dialect else None, first
    return None, None, first


# --------------------------------------------------------------------------- scanning


def _clean(text: str) -> str:
    # A byte-order mark is not whitespace to the tokenizer; a space keeps every offset.
    return " " + text[1:] if text.startswith("\ufeff") else text


def _split(tokens: Sequence[Token]) -> Iterator[list[Token]]:
    current: list[Token] = []
    for tok in tokens:
        if tok.token_type is TokenType.SEMICOLON:
            if current:
                yield current
            current = []
        else:
            current.append(tok)
    if current:
        yield current


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


#: a Databricks notebook exported as SQL source (File > Export > Source file)
_NOTEBOOK_HEADER = "-- Databricks notebook source"
_NOTEBOOK_CELL = re.compile(r"^-- COMMAND -{4,}[ \t]*$", re.MULTILINE)
#: words that begin a statement: after a conditional break (a template tag) they start one
_STARTERS = frozenset(
    {"CREATE", "ALTER", "DROP", "GRANT", "REVOKE", "USE", "EXECUTE", "COMMENT", "UNDROP"}
)


def notebook_breaks(text: str) -> list[tuple[int, bool]]:
    """In a Databricks notebook source file, every ``-- COMMAND ----------`` line ends a
    statement, with or without a ``;`` (each cell runs on its own). ``-- MAGIC`` lines are
    comments to the tokenizer already. Other files: no breaks."""
    if not text.lstrip(" \ufeff").startswith(_NOTEBOOK_HEADER):
        return []
    return [(m.start(), True) for m in _NOTEBOOK_CELL.finditer(text)]


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
    text = _clean(text)
    lines = _LineIndex(text)
    breaks = sorted([*breaks, *notebook_breaks(text)])
    read: _Tokens | None = None
    if dialect is None:
        dialect = _dialect_from_suffix(file)
    if dialect is None and notebook_breaks(text):
        dialect = "databricks"
    if dialect is None:
        dialect, read, _ = _detect_from_tokens(text)
        if dialect is None:
            return ScanResult((), None, _unknown_dialect(text, file, lines, breaks))
    if read is None:
        read = _tokenize(text, dialect)
    ctx = _Context(text, file, dialect, lines)
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
        for stmt_tokens, before in _split_with_prev(tokens, breaks):
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


def _unknown_dialect(
    text: str, file: str, lines: _LineIndex, breaks: Sequence[tuple[int, bool]]
) -> tuple[ScanError, ...]:
    """The error for a file of unknown dialect: located at its first function, if any."""
    for dialect in DIALECTS:
        read = _tokenize(text, dialect)
        for toks, _ in _split_with_prev(read.tokens, breaks):
            if _is_function_statement(toks):
                line, column = lines.position(toks[0].start)
                message = (
                    "cannot tell whether this function is Snowflake or Databricks SQL: name the "
                    "file *.snowflake.sql or *.databricks.sql, or pass --dialect"
                )
                span = (toks[0].start, toks[-1].end + 1)
                return (ScanError(file, line, column, message, "dialect", span),)
    return ()


def _split_with_prev(
    tokens: Sequence[Token], breaks: Sequence[tuple[int, bool]] = ()
) -> Iterator[tuple[list[Token], Token | None]]:
    """Each statement's tokens with the token just before it (a ';', the last token of the
    statement a break ended, or None). A Snowflake Scripting ``BEGIN`` that opens a block
    of statements is not part of the first one."""
    current: list[Token] = []
    before: Token | None = None
    pending = list(breaks)
    k = 0

    def emit() -> Iterator[tuple[list[Token], Token | None]]:
        if current:
            toks = current
            if (
                len(toks) > 1
                and _is_kw(toks[0], "BEGIN")
                and _is_word(toks[1])
                and toks[1].text.upper() in _STARTERS
            ):
                toks = toks[1:]
            yield toks, before

    for tok in tokens:
        broke = False
        while k < len(pending) and pending[k][0] <= tok.start:
            if pending[k][1] or (_is_word(tok) and tok.text.upper() in _STARTERS):
                broke = True
            k += 1
        if broke and current:
            yield from emit()
            before = current[-1]
            current = []
        if tok.token_type is TokenType.SEMICOLON:
            yield from emit()
            current = []
            before = tok
        else:
            current.append(tok)
    yield from emit()


def _scan_statement(
    ctx: _Context, toks: list[Token], before: Token | None, errors: list[ScanError]
) -> list[Statement]:
    first, last = toks[0], toks[-1]
    line, column = ctx.lines.position(first.start)
    gap_start = before.end + 1 if before is not None else 0
    prev_end_line = ctx.lines.position(before.end)[0] if before is not None else 0
    suppressions = _suppressions(ctx, gap_start, first, prev_end_line, errors)
    common: _Fields = {
        "dialect": ctx.dialect,
        "file": ctx.file,
        "line": line,
        "column": column,
        "text": ctx.text[first.start : last.end + 1],
        "suppressions": suppressions,
        "_lines": ctx.lines,
    }
    span = (first.start, last.end + 1)
    if _is_kw(first, "EXECUTE"):
        immediate = _immediate_string(toks, ctx.dialect, ctx.text)
        if immediate is not None:
            return _scan_immediate(ctx, *immediate, errors)
    try:
        found = _read_statement(ctx, toks)
    except _Fail as fail:
        err_line, err_column = ctx.lines.position(fail.offset)
        errors.append(ScanError(ctx.file, err_line, err_column, fail.message, span=span))
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


def _immediate_string(
    toks: Sequence[Token], dialect: str, text: str | None = None
) -> tuple[str, int] | None:
    """``EXECUTE IMMEDIATE <string>``: the string's content and its offset in ``text``. The
    Snowflake tokenizer reads everything after ``EXECUTE`` as one command string; it is read
    again as tokens. (With ``text`` None the offset is meaningless.)"""
    if len(toks) == 3 and _is_kw(toks[1], "IMMEDIATE"):
        tok = toks[2]
        if tok.token_type in _BODY_STRING_TYPES:
            return _string_content(tok, text) if text is not None else (tok.text, 0)
        return None
    if len(toks) != 2 or toks[1].token_type is not TokenType.STRING:
        return None
    if toks[1].text[:9].upper() != "IMMEDIATE":
        return None
    base = toks[0].end + 1
    sub = text[base : toks[1].end + 1] if text is not None else " " + toks[1].text
    inner = _tokenize(sub, dialect).tokens
    if len(inner) != 2 or not _is_kw(inner[0], "IMMEDIATE"):
        return None
    if inner[1].token_type not in _BODY_STRING_TYPES:
        return None
    content, start = _string_content(inner[1], sub)
    return content, base + start


def _scan_immediate(
    ctx: _Context, content: str, start: int, errors: list[ScanError]
) -> list[Statement]:
    """Snowflake ``EXECUTE IMMEDIATE $$ ... $$`` (or ``'...'``): the statements inside the
    string, a Snowflake Scripting block or single statement, at their places in the file."""
    # Everything before the string blanked (newlines kept), so offsets are the file's.
    prefix = "".join(ch if ch == "\n" else " " for ch in ctx.text[:start])
    inner = scan(prefix + content, ctx.file, ctx.dialect)
    errors.extend(inner.errors)
    return list(inner.statements)


def _parse_other(ctx: _Context, toks: list[Token]) -> _Fields:
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
