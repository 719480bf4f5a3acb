"""The tokens of a file of plain statements, tokenized once per statement shape.

``accord compile`` writes files of thousands of statements that differ only in names
(``ALTER TABLE DB.S.T_00001 MODIFY COLUMN C SET MASKING POLICY P;``). Reading them back with
sqlglot's pure-Python tokenizer, character by character, was most of ``accord verify``. Here a
statement made only of ASCII letters, digits, ``_``, spaces, newlines and ``. , ( ) = ;`` is
cut into lexemes (runs of word characters, runs of spaces and newlines, single punctuation)
and keyed by its *shape*: the lexemes, with every word that is no keyword (nor a prefix of a
keyword's word, nor starting with a digit) replaced by a hole. The first statement of each
shape is tokenized by sqlglot's own tokenizer; every other statement of that shape gets the
same tokens with its own words, offsets, lines and columns.

Why that gives sqlglot's tokens, byte for byte. In such text no string, quoted name or comment
can start, and every punctuation character is a single-character token that ends a word
(checked per tokenizer, :func:`_usable`). A word in a hole is no keyword and no prefix of any
word of the tokenizer's keyword trie, so any trie walk that reaches it stops inside it, at a
word character, with no space or single-character token seen since the last word boundary
that could accept an earlier match (:func:`_usable` refuses a trie whose keys put punctuation
before a word character); sqlglot then reads the whole word as one token, typed by a keyword
lookup that misses: ``VAR``, its text the word as written. Every other lexeme is the same
text in both statements, and what a token is depends only on the text before it in the same
statement (the previous statement ended with ``;``). Positions: within a statement a line
only advances at a newline, which only whitespace lexemes hold, and they are equal; a column
grows by the length of what was read since the line began, so it differs from the template's
by the difference of those lengths. A statement whose first token is not on a line of its own
below the previous ``;``, a token that does not start and end on lexeme boundaries, a token
across a line break (a keyword of several words: sqlglot does not count that newline), or a
token whose text is not what it spans, sends the file back to sqlglot's tokenizer, whole.
``tests/test_sqlscan_shapes.py`` compares both on compiled estates and on random statements
of keywords, keyword prefixes and names.

The file's text before its first ``;`` (the generated header's comments, the first statement)
always goes through sqlglot's tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from itertools import accumulate
from operator import itemgetter
from typing import Any

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

#: what a plain statement may hold
_PUNCT = ".,()=;"
_NOT_PLAIN_BACKWARDS = re.compile(r"[^A-Za-z0-9_ \n.,()=;]")
_LEXEME = re.compile(r"[A-Za-z0-9_]+|[ \n]+|[.,()=;]")
_WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

#: a template: per token, in tuples: types, a gather of the start offsets, of the end offsets
#: (exclusive), the texts (None: the statement's own word), line offsets, a gather of the
#: offset of the last lexeme holding a newline before the token, column bases
_Template = tuple[
    tuple[TokenType, ...],
    Callable[[list[int]], tuple[int, ...]],
    Callable[[list[int]], tuple[int, ...]],
    tuple[str | None, ...],
    tuple[int, ...],
    Callable[[list[int]], tuple[int, ...]],
    tuple[int, ...],
]


def _trie_keys(trie: dict[Any, Any], prefix: str = "") -> list[str]:
    out = []
    for key, sub in trie.items():
        if key == 0:
            out.append(prefix)
        else:
            out.extend(_trie_keys(sub, prefix + key))
    return out


class _Dialect:
    """One tokenizer's keyword words and the templates of the shapes seen so far."""

    def __init__(self, tokenizer: type[Tokenizer]) -> None:
        self.tokenizer = tokenizer
        words: set[str] = set()
        for key in [*tokenizer.KEYWORDS, *_trie_keys(tokenizer._KEYWORD_TRIE)]:
            words.update(re.findall(r"[A-Z0-9_]+", key.upper()))
        #: every prefix of every keyword word: a word among them is kept as written
        self.prefixes = frozenset(w[:i] for w in words for i in range(1, len(w) + 1))
        self.templates: dict[tuple[str, ...], _Template | None] = {}
        #: lexeme -> its part of a shape key: itself, or "" for a word that is a hole
        self.keys = _Keys(self)

    def hole(self, word: str) -> bool:
        return not word[0].isdigit() and word.upper() not in self.prefixes


class _Keys(dict[str, str]):
    def __init__(self, shapes: _Dialect) -> None:
        super().__init__()
        self.shapes = shapes

    def __missing__(self, lexeme: str) -> str:
        key = "" if lexeme[0] in _WORD_CHARS and self.shapes.hole(lexeme) else lexeme
        self[lexeme] = key
        return key


@lru_cache(maxsize=4)
def _dialect(tokenizer: type[Tokenizer]) -> _Dialect | None:
    return _Dialect(tokenizer) if _usable(tokenizer) else None


def _usable(tokenizer: type[Tokenizer]) -> bool:
    """Whether the argument of the module docstring holds for this tokenizer."""
    singles = tokenizer.SINGLE_TOKENS
    if any(c in singles for c in _WORD_CHARS + " \n"):
        return False
    if any(c not in singles or c in tokenizer.VAR_SINGLE_TOKENS for c in _PUNCT):
        return False
    for key in _trie_keys(tokenizer._KEYWORD_TRIE):
        # punctuation of a plain statement, then a word character, in one trie key: a walk
        # could accept an earlier match after reading into a word
        if re.search(r"[.,()=;].*[A-Za-z0-9_]", key):
            return False
    return True


def plain_tokens(text: str, tokenizer: type[Tokenizer], dialect: str) -> list[Token] | None:
    """sqlglot's tokens of ``text``, or None when ``text`` is not a file of plain statements
    (then the caller tokenizes it as usual)."""
    plain = plain_chunks(text, tokenizer, dialect)
    if plain is None:
        return None
    tokens, chunks = plain
    for chunk in chunks:
        tokens.extend(chunk_tokens(text, chunk))
    return tokens


#: one statement of a plain file (with the whitespace before it and its ``;``): the line
#: the file is at before it (1-based), the offsets list of its lexemes
#: ``[offset, lexeme starts..., end]``, its shape and the shape's template
Chunk = tuple[int, list[int], tuple[str, ...], _Template]


def plain_chunks(
    text: str, tokenizer: type[Tokenizer], dialect: str
) -> tuple[list[Token], list[Chunk]] | None:
    """The tokens of ``text`` up to its first ``;`` (sqlglot's) and every later statement as a
    :data:`Chunk` whose tokens :func:`chunk_tokens` makes, or None when ``text`` is not a file
    of plain statements (then the caller tokenizes it as usual)."""
    if len(text) < 4096:
        return None  # small files: nothing to gain
    # the head: up to the first ``;`` after the line of the last character a plain statement
    # cannot hold (a ``--`` comment ends at its line's end, a string or quoted name at a
    # quote, a block comment at ``*/``: none can reach past that line)
    last = _NOT_PLAIN_BACKWARDS.search(text[::-1])
    line_end = 0 if last is None else text.find("\n", len(text) - last.start())
    first = -1 if line_end < 0 else text.find(";", line_end)
    if first < 0 or len(text) - first < 4096:
        return None
    shapes = _dialect(tokenizer)
    if shapes is None:
        return None

    try:
        tokens = tokenizer(dialect=dialect).tokenize(text[: first + 1])
    except TokenError:
        return None
    if not tokens or tokens[-1].token_type is not TokenType.SEMICOLON or tokens[-1].start != first:
        return None
    offset = first + 1
    line = tokens[-1].line
    templates = shapes.templates
    keys = shapes.keys
    findall = _LEXEME.findall
    chunks: list[Chunk] = []
    append = chunks.append
    while offset < len(text):
        end = text.find(";", offset)
        if end < 0:
            if text[offset:].strip(" \n"):
                return None  # a last statement without its ``;``
            break
        chunk = text[offset : end + 1]
        lexemes = findall(chunk)
        shape = tuple(map(keys.__getitem__, lexemes))
        template = templates.get(shape, False)
        if template is False:
            template = templates[shape] = _template(chunk, lexemes, shape, tokenizer, dialect)
        if template is None:
            return None
        append((line, [offset, *accumulate(map(len, lexemes), initial=offset)], shape, template))
        line += chunk.count("\n")
        offset = end + 1
    return tokens, chunks


def chunk_tokens(text: str, chunk: Chunk) -> list[Token]:
    """sqlglot's tokens of one :data:`Chunk` of ``text``: its template's, with its own words,
    offsets, lines and columns."""
    line, offs, _, template = chunk
    types, first_of, last_of, words, dlines, newline_of, bases = template
    # the column: the template's, moved by the difference of the line's lengths read
    return [
        Token(
            token_type,
            text[a:b] if word is None else word,
            line + dline,
            base + b - line_start,
            a,
            b - 1,
            [],
        )
        for token_type, a, b, word, dline, line_start, base in zip(
            types,
            first_of(offs),
            last_of(offs),
            words,
            dlines,
            newline_of(offs),
            bases,
            strict=True,
        )
    ]


def _template(
    chunk: str,
    lexemes: list[str],
    shape: tuple[str, ...],
    tokenizer: type[Tokenizer],
    dialect: str,
) -> _Template | None:
    """sqlglot's tokens of ``chunk`` (one statement with the whitespace before it) as a
    template of its shape, or None when the shape cannot be one."""
    if not lexemes or "\n" not in shape[0] or "".join(lexemes) != chunk:
        return None  # the first token must be on a line below the previous ``;``

    try:
        read = tokenizer(dialect=dialect).tokenize(chunk)
    except TokenError:
        return None
    offs = list(accumulate(map(len, lexemes), initial=0))
    starts = {a: i for i, a in enumerate(offs[:-1])}
    ends = {b - 1: i for i, b in enumerate(offs[1:])}
    rows = []
    for tok in read:
        i = starts.get(tok.start)
        j = ends.get(tok.end)
        if i is None or j is None or tok.comments:
            return None
        if any("\n" in lexemes[n] for n in range(i, j + 1)):
            # a keyword of several words across a line break: sqlglot reads past that newline
            # without counting it, so lines and columns after it are not the text's
            return None
        own = any(shape[n] == "" for n in range(i, j + 1))
        source = chunk[tok.start : tok.end + 1]
        if own and (i != j or tok.text != source):
            return None
        if tok.text != source and tok.text != " ".join(source.split()).upper():
            return None  # text that is not what it spans (a command's rest as a string)
        # the last newline before the token: lexeme k, at nl within it
        k = max((n for n in range(i) if "\n" in lexemes[n]), default=-1)
        if k < 0:
            return None
        # col = base + (end - start of lexeme k) in every statement of the shape (the line
        # begins at the same place within lexeme k in all of them)
        base = tok.col - (tok.end + 1 - offs[k])
        rows.append((tok.token_type, i, j + 1, None if own else tok.text, tok.line - 1, k, base))
    if not rows:
        return None
    # offsets are read from the statement's list [offset, lexeme starts..., end]: lexeme n
    # starts at index n + 1
    return (
        tuple(r[0] for r in rows),
        _getter([r[1] + 1 for r in rows]),
        _getter([r[2] + 1 for r in rows]),
        tuple(r[3] for r in rows),
        tuple(r[4] for r in rows),
        _getter([r[5] + 1 for r in rows]),
        tuple(r[6] for r in rows),
    )


def _getter(indices: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    """A C-level gather of ``indices`` that always gives a tuple."""
    if len(indices) == 1:
        (only,) = indices
        return lambda values: (values[only],)
    return itemgetter(*indices)
