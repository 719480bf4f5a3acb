"""``ALTER TABLE`` statements read once per statement shape, the rest by substitution.

A compiled file holds thousands of attachments that differ only in names
(``ALTER TABLE DB.S.T_00001 MODIFY COLUMN C SET MASKING POLICY P``). Their reader,
:func:`.shared.read_alter_table`, looks at a statement in three ways only: the token types
(and whether a token is a word, :func:`..tokens.is_word`), the words it compares with
keywords (always through :meth:`..tokens.Cursor.is_kw`, which :meth:`~..tokens.Cursor.accept`
and :meth:`~..tokens.Cursor.expect` use), and the texts of the other tokens, which it only
copies into the fields (dotted names joined with ``.``) or into a failure's message.

So the first statement of a *structure* (its token types and word flags) is read with a
cursor that records the positions whose words were compared; their words are the shape's
*keys* (the texts as written: a key may also be copied into a field). That statement is read a second time with every other token's text replaced by a
marker naming its position (and the file's text blanked, so that a field cut from the text
rather than from the tokens would show), which gives the fields as recipes: constants and
token positions. A later statement of the same structure whose texts at the recorded
positions are the same takes the same path through the reader (every question the reader
asks gets the same answer), so its fields are the recipes filled with its own token texts.

A shape is not used (each of its statements is read as usual) when: a token is neither a
word, a quoted name nor ``. , ( ) =`` (a string or number could be cut from the text), the
reader fails or reads no policy action, the marked reading asks other questions than the
first or gives a field that is not text, a tuple, a flag or None, or the recipes filled with
the first statement's texts do not give exactly its fields.
``tests/test_sqlscan_read_shapes.py`` compares both paths on compiled trees and on generated
statements of odd shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.statements import Fields
from accord.compiler.sqlscan.tokens import Cursor, Fail

#: the token types a shape may hold besides words
_PUNCT = frozenset(
    {TokenType.DOT, TokenType.COMMA, TokenType.L_PAREN, TokenType.R_PAREN, TokenType.EQ}
)
_QUOTED = TokenType.IDENTIFIER
_MARK = re.compile("_\x00([0-9]+)\x00")
_BLANK = "\x01"


class _Tracing(Cursor):
    """A cursor that records which positions' words it compared."""

    def __init__(self, tokens: Sequence[Token], text: str) -> None:
        super().__init__(tokens, text)
        self.asked: set[int] = set()
        self.behind = False

    def is_kw(self, *words: str, k: int = 0) -> bool:
        j = self.i + k
        if j < 0:
            self.behind = True
            return super().is_kw(*words, k=k)
        # the comparison of lists stops at the first word that differs: only the words up to
        # it decide the answer (the number of words left is the structure's)
        for n, word in enumerate(words):
            if j + n >= len(self.toks):
                break
            self.asked.add(j + n)
            if self.words[j + n] != word:
                break
        return super().is_kw(*words, k=k)


#: a recipe of one field's value: ("c", constant), ("t", position), ("j", parts), ("u", items)
_Recipe = tuple[str, Any]
#: the recipes of a shape's fields, per action (None: the shape is not used)
_Recipes = list[list[tuple[str, _Recipe]]] | None
#: the shapes of one structure: per set of positions asked, the recipes by the texts there
_Shapes = list[tuple[tuple[int, ...], dict[tuple[str, ...], _Recipes]]]


class ShapeReader:
    """One file's shapes of one reader."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.shapes: dict[tuple[Any, ...], _Shapes] = {}
        self.blank: str | None = None

    def read(self, ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
        toks = c.toks
        words = c.words
        structure = (c.i, or_replace, *(t.token_type for t in toks), *(w is None for w in words))
        known = self.shapes.get(structure)
        if known is None and not self._plain(toks, words):
            return self.reader(ctx, c, or_replace)
        texts = [t.text for t in toks]
        for asked, by_keys in known or ():
            recipes = by_keys.get(tuple(texts[i] for i in asked), False)
            if recipes is None:
                return self.reader(ctx, c, or_replace)
            if recipes is not False:
                return [{name: _fill(r, texts) for name, r in fields} for fields in recipes]
        return self._learn(ctx, c, or_replace, structure)

    @staticmethod
    def _plain(toks: Sequence[Token], words: list[str | None]) -> bool:
        return all(
            w is not None or t.token_type in _PUNCT or t.token_type is _QUOTED
            for t, w in zip(toks, words, strict=True)
        )

    def _learn(
        self, ctx: Context, c: Cursor, or_replace: bool, structure: tuple[Any, ...]
    ) -> list[Fields]:
        toks = c.toks
        start = c.i
        first = _Tracing(toks, c.text)
        first.i = start
        fields = self.reader(ctx, first, or_replace)  # a Fail goes to the caller, unlearned
        asked = tuple(sorted(first.asked))
        keys = tuple(toks[i].text for i in asked)
        recipes = None
        if not first.behind:
            recipes = self._recipes(ctx, toks, start, or_replace, asked, fields)
        known = self.shapes.setdefault(structure, [])
        by_keys = next((k for a, k in known if a == asked), None)
        if by_keys is None:
            by_keys = {}
            known.append((asked, by_keys))
        by_keys[keys] = recipes
        return fields

    def _recipes(
        self,
        ctx: Context,
        toks: Sequence[Token],
        start: int,
        or_replace: bool,
        asked: tuple[int, ...],
        fields: list[Fields],
    ) -> _Recipes:
        if any(f.get("kind") == "other" for f in fields):
            return None
        keep = set(asked)
        marked = [
            t
            if n in keep or t.token_type in _PUNCT
            else Token(t.token_type, f"_\x00{n}\x00", t.line, t.col, t.start, t.end, t.comments)
            for n, t in enumerate(toks)
        ]
        if self.blank is None or len(self.blank) != len(ctx.text):
            self.blank = _BLANK * len(ctx.text)
        second = _Tracing(marked, self.blank)
        second.i = start
        try:
            found = self.reader(ctx, second, or_replace)
        except Fail:
            return None
        if tuple(sorted(second.asked)) != asked or second.behind or len(found) != len(fields):
            return None
        recipes = []
        for item in found:
            row = []
            for name, value in item.items():
                recipe = _recipe(value)
                if recipe is None:
                    return None
                row.append((name, recipe))
            recipes.append(row)
        texts = [t.text for t in toks]
        filled = [{name: _fill(r, texts) for name, r in row} for row in recipes]
        if filled != fields or [list(f) for f in filled] != [list(f) for f in fields]:
            return None
        return recipes


def _recipe(value: Any) -> _Recipe | None:
    if value is None or isinstance(value, bool):
        return ("c", value)
    if isinstance(value, str):
        if _BLANK in value:
            return None  # cut from the file's text: not the tokens'
        parts = _MARK.split(value)
        if len(parts) == 1:
            return None if "\x00" in value else ("c", value)
        if len(parts) == 3 and parts[0] == parts[2] == "":
            return ("t", int(parts[1]))
        pieces: list[tuple[bool, Any]] = []
        for n, part in enumerate(parts):
            if n % 2:
                pieces.append((True, int(part)))
            elif "\x00" in part:
                return None
            elif part:
                pieces.append((False, part))
        return ("j", tuple(pieces))
    if isinstance(value, tuple):
        items = []
        for item in value:
            recipe = _recipe(item)
            if recipe is None:
                return None
            items.append(recipe)
        return ("u", tuple(items))
    return None


def filler(recipe: _Recipe) -> Callable[[list[str]], Any]:
    """``recipe`` made a function of the texts once: ``filler(r)(texts) == _fill(r, texts)``
    (for the statements of a shape read many times over: an estate's attachments)."""
    how, what = recipe
    if how == "t":
        return itemgetter(what)
    if how == "c":
        return lambda texts: what
    if how == "j":
        pieces = tuple((itemgetter(p), None) if at else (None, p) for at, p in what)
        return lambda texts: "".join(p if get is None else get(texts) for get, p in pieces)
    parts = tuple(filler(r) for r in what)
    return lambda texts: tuple([f(texts) for f in parts])


def _fill(recipe: _Recipe, texts: list[str]) -> Any:
    how, what = recipe
    if how == "t":
        return texts[what]
    if how == "c":
        return what
    if how == "j":
        return "".join(texts[p] if at else p for at, p in what)
    return tuple(_fill(r, texts) for r in what)
