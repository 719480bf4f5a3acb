"""Tokens of policy SQL: the dialect tokenizers, token tests, the :class:`Cursor` the statement
readers walk a statement's tokens with, and the split of a file's tokens into statements.

A whole file is tokenized once with the dialect's sqlglot tokenizer: strings, quoted
identifiers, comments and ``$$ ... $$`` bodies are single tokens, so a ``;`` inside them is
never a statement boundary. Imports nothing else from :mod:`compiler.sqlscan`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sqlglot.dialects.databricks import Databricks
from sqlglot.dialects.dialect import Dialect as _SqlglotDialect
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

from accord.compiler.core.platforms import DATABRICKS
from accord.compiler.sqlscan.shapes import plain_tokens

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


#: dialects read with a tokenizer of accord's own (sqlglot's, with what it lacks added)
_OWN_TOKENIZERS: dict[str, type[Tokenizer]] = {DATABRICKS.dialect: _DatabricksTokenizer}


def tokenizer_class(dialect: str) -> type[Tokenizer]:
    own = _OWN_TOKENIZERS.get(dialect)
    return own if own is not None else _SqlglotDialect.get_or_raise(dialect).tokenizer_class


STRING_TYPES = frozenset(
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
BODY_STRING_TYPES = frozenset({TokenType.STRING, TokenType.RAW_STRING, TokenType.HEREDOC_STRING})
OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


@dataclass
class Tokens:
    tokens: list[Token]
    error: tuple[int, str] | None  # (offset, message) of a tokenizer failure


def clean(text: str) -> str:
    # A byte-order mark is not whitespace to the tokenizer; a space keeps every offset.
    return " " + text[1:] if text.startswith("\ufeff") else text


def tokenize(text: str, dialect: str, plain: bool = True) -> Tokens:
    """The tokens of ``text`` (``plain``: through :func:`.shapes.plain_tokens` when it can
    take the file; False when it was already asked and could not)."""
    if plain:
        found = plain_tokens(text, tokenizer_class(dialect), dialect)
        if found is not None:
            return Tokens(found, None)
    tokenizer = tokenizer_class(dialect)(dialect=dialect)
    try:
        return Tokens(tokenizer.tokenize(text), None)
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
        return Tokens([t for t in partial if t.start < offset], (offset, message))


# --------------------------------------------------------------------------- token helpers


def is_word(tok: Token) -> bool:
    """An unquoted word (keyword or bare identifier)."""
    if tok.token_type is TokenType.IDENTIFIER or tok.token_type in STRING_TYPES:
        return False
    first = tok.text[:1]
    return first.isalpha() or first == "_"


#: token types that are never a word (:func:`is_word`)
_NOT_WORDS = STRING_TYPES | {TokenType.IDENTIFIER}
_WORD_START = frozenset("_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _upper_word(tok: Token) -> str | None:
    """``tok.text.upper()`` when :func:`is_word` holds, else None."""
    if tok.token_type in _NOT_WORDS:
        return None
    text = tok.text
    if text[:1] in _WORD_START or (text[:1].isalpha() and is_word(tok)):
        return text.upper()
    return None


class _Words(dict[str, str | None]):
    """Text -> :func:`_upper_word` of a token with that text whose type is not in
    ``_NOT_WORDS`` (then the answer depends on the text alone), asked once per text: a
    compiled file repeats the same keywords and names in thousands of statements."""

    def __missing__(self, text: str) -> str | None:
        first = text[:1]
        word = text.upper() if first.isalpha() or first == "_" else None
        if len(self) >= 100_000:
            self.clear()
        self[text] = word
        return word


_WORDS = _Words()


def is_kw(tok: Token | None, word: str) -> bool:
    return tok is not None and is_word(tok) and tok.text.upper() == word


def is_ident(tok: Token | None) -> bool:
    return tok is not None and (tok.token_type is TokenType.IDENTIFIER or is_word(tok))


def describe(tok: Token) -> str:
    if tok.token_type in STRING_TYPES:
        return "a string"
    if tok.token_type is TokenType.IDENTIFIER:
        return f'the identifier "{tok.text}"'
    return f"'{tok.text}'"


def string_content(tok: Token, text: str) -> tuple[str, int]:
    """A string token's value and the file offset where it starts (after the delimiter)."""
    source_len = tok.end + 1 - tok.start
    if tok.token_type in (TokenType.RAW_STRING, TokenType.HEREDOC_STRING):
        delimiter = max(0, (source_len - len(tok.text)) // 2)
    else:
        delimiter = 1
    return tok.text, tok.start + delimiter


class Fail(Exception):
    """A located problem inside one statement; becomes a ScanError."""

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


# --------------------------------------------------------------------------- the cursor


class Cursor:
    """A reader over one statement's tokens (the terminating ``;`` excluded)."""

    def __init__(self, tokens: Sequence[Token], text: str) -> None:
        self.toks = tokens
        self.text = text
        self.i = 0
        #: each token's text in upper case when it is a word (:func:`is_word`), else None:
        #: what :meth:`is_kw` compares, computed once per token rather than once per question
        words = _WORDS
        self.words = [None if t.token_type in _NOT_WORDS else words[t.text] for t in tokens]

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if 0 <= j < len(self.toks) else None

    def at_end(self) -> bool:
        return self.i >= len(self.toks)

    def is_kw(self, *words: str, k: int = 0) -> bool:
        j = self.i + k
        if j < 0:
            return all(is_kw(self.peek(k + n), w) for n, w in enumerate(words))
        return self.words[j : j + len(words)] == list(words)

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

    def fail(self, expected: str) -> Fail:
        tok = self.peek()
        if tok is None:
            last = self.toks[-1]
            return Fail(last.start, f"expected {expected}, but the statement ends here")
        return Fail(tok.start, f"expected {expected}, found {describe(tok)}")

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
            raise Fail(tok.start, f"unexpected {describe(tok)} after {what}")

    def ident(self, what: str) -> str:
        tok = self.peek()
        if not is_ident(tok):
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
        if tok is None or tok.token_type not in STRING_TYPES:
            raise self.fail(what)
        self.i += 1
        return tok.text

    def balanced(self) -> list[Token]:
        """The tokens of one balanced ``( ... )`` group starting at the cursor, inclusive."""
        start = self.i
        depth = 0
        while (tok := self.peek()) is not None:
            self.i += 1
            if tok.token_type in OPEN:
                depth += 1
            elif tok.token_type in CLOSE:
                depth -= 1
                if depth == 0:
                    return list(self.toks[start : self.i])
        raise Fail(self.toks[start].start, "unbalanced parenthesis: no matching ')'")

    def until(self, stop: Callable[[Cursor], bool]) -> list[Token]:
        """Tokens up to (not including) the first top-level position where ``stop`` holds."""
        start = self.i
        depth = 0
        while (tok := self.peek()) is not None:
            if depth == 0 and stop(self):
                break
            if tok.token_type in OPEN:
                depth += 1
            elif tok.token_type in CLOSE:
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
    if all(is_ident(t) or t.token_type is TokenType.DOT for t in item) and is_ident(item[0]):
        return "".join("." if t.token_type is TokenType.DOT else t.text for t in item)
    return text[item[0].start : item[-1].end + 1]


# --------------------------------------------------------------------------- type text

_TYPE_NO_SPACE_BEFORE = frozenset({")", ">", ",", "(", "<", ":", "]", "["})
_TYPE_NO_SPACE_AFTER = frozenset({"(", "<", "["})


def type_text(tokens: Sequence[Token], text: str) -> str:
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


def angle_delta(tok: Token) -> int:
    chars = tok.text
    if chars and set(chars) == {"<"}:
        return len(chars)
    if chars and set(chars) == {">"}:
        return -len(chars)
    return 0


# --------------------------------------------------------------------------- statements

#: words that begin a statement: after a conditional break (a template tag) they start one
STARTERS = frozenset(
    {"CREATE", "ALTER", "DROP", "GRANT", "REVOKE", "USE", "EXECUTE", "COMMENT", "UNDROP"}
)


def split(tokens: Sequence[Token]) -> Iterator[list[Token]]:
    """Each statement's tokens, split at ``;`` only."""
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


def split_with_prev(
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
                and is_kw(toks[0], "BEGIN")
                and is_word(toks[1])
                and toks[1].text.upper() in STARTERS
            ):
                toks = toks[1:]
            yield toks, before

    for tok in tokens:
        broke = False
        while k < len(pending) and pending[k][0] <= tok.start:
            if pending[k][1] or (is_word(tok) and tok.text.upper() in STARTERS):
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
