"""``ALTER TABLE`` statements of a plain file answered without making their tokens.

A file of plain statements (:mod:`.shapes`) is cut into statements whose tokens are their
shape's template filled with their own words; an ``ALTER TABLE`` statement's fields are then
its reader shape's recipes filled with its token texts (:mod:`.readers.shapes`). Both steps
only copy texts, so a statement of a known shape is answered here from its lexemes directly:
the texts of its tokens are cut from the file (a word of the template's, or the statement's
own word where the template has a hole), looked up in the file's ``ALTER TABLE`` shapes
exactly as :meth:`.readers.shapes.ShapeReader.read` looks them up, and the recipes filled.

What a statement of such a shape is, step by step, as :func:`compiler.sqlscan.scan` would
read it from the tokens:

* its first two tokens are words of the template (the same in every statement of the
  shape), ``ALTER`` and ``TABLE``, so :func:`.readers.read_statement` dispatches it to the
  ``ALTER TABLE`` shapes with the cursor at the third token (the keyword table has one entry
  for ``ALTER TABLE``, of one word, checked when this module is imported);
* the token types are the template's and a hole is a word starting with a letter or ``_``,
  so the cursor's structure (types, which tokens are words) is the shape's: computed from
  the first statement of the shape, as the cursor computes it;
* only whitespace lies between the previous ``;`` and its first token, so it has no
  suppressions (they are read from comments there) and reading it adds no error.

A shape is used only after one of its statements was read both ways with the same result:
every field of every Statement (the ones equality leaves out included) and no error. Any
statement this cannot answer (a shape without recipes, texts at the asked positions not yet
seen, a shape that failed that check) is read from its tokens as usual.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any

from sqlglot.tokens import TokenType

from accord.compiler.sqlscan import readers
from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.readers import shapes as reader_shapes
from accord.compiler.sqlscan.readers.shared import read_alter_table
from accord.compiler.sqlscan.shapes import Chunk
from accord.compiler.sqlscan.statements import Statement
from accord.compiler.sqlscan.tokens import _NOT_WORDS, _WORDS

#: the dispatch the argument above relies on
USABLE = readers.STATEMENT_READERS.get("ALTER", {}).get("TABLE") == (
    (("TABLE",), read_alter_table),
)


@dataclass(frozen=True)
class _Info:
    """What a shape's statements share."""

    #: the cursor's structure key in :class:`.readers.shapes.ShapeReader`
    structure: tuple[Any, ...]
    #: the number of tokens before the ``;``
    count: int


class Fused:
    """One file's statements answered from its ``ALTER TABLE`` shapes."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._info: dict[tuple[str, ...], _Info | None] = {}
        #: shapes whose answer was compared with reading a statement from its tokens
        self.checked: set[tuple[str, ...]] = set()
        #: shapes whose answer differed: always read from tokens
        self.refused: set[tuple[str, ...]] = set()
        #: every field of a Statement, in field order: the defaults (None for the fields
        #: without one: each answer sets them), and what every statement of the file shares
        if any(f.default_factory is not MISSING for f in fields(Statement)):
            raise AssertionError("a Statement field with a default factory")
        self._base: dict[str, Any] = {
            f.name: None if f.default is MISSING else f.default for f in fields(Statement)
        }
        self._base.update(dialect=ctx.dialect, file=ctx.file, suppressions=(), _lines=ctx.lines)
        #: the fields without a default other than those: the recipes must give them
        self._required = {f.name for f in fields(Statement) if f.default is MISSING} - {
            "dialect",
            "file",
            "line",
            "column",
            "text",
        }

        #: id of a shape's recipes (they live as long as the file's shapes) -> its rows made
        #: functions of the texts, or None when a row does not give every required field
        self._rows: dict[int, list[tuple[tuple[str, Any], ...]] | None] = {}

    def _learn(self, chunk: Chunk, texts: list[str]) -> _Info | None:
        _, offs, _, template = chunk
        types = template[0]
        count = len(types) - 1
        if count < 3 or types[-1] is not TokenType.SEMICOLON:
            return None
        if TokenType.SEMICOLON in types[:-1]:
            return None
        words = [None if t in _NOT_WORDS else _WORDS[x] for t, x in zip(types, texts, strict=False)]
        template_words = template[3]
        if words[:2] != ["ALTER", "TABLE"] or None in template_words[:2]:
            return None
        if any(
            t is None and not (x[:1].isalpha() or x[:1] == "_")
            for t, x in zip(template_words, texts, strict=False)
        ):
            return None
        first = template[1](offs)[0]
        if self.ctx.text[offs[0] : first].strip(" \n"):
            return None
        structure = (2, False, *types[:count], *(w is None for w in words[:count]))
        return _Info(structure, count)

    def answer(self, chunk: Chunk) -> list[Statement] | None:
        """The statement(s) of ``chunk``, or None: read it from its tokens."""
        shape = chunk[2]
        if shape in self.refused or self._info.get(shape, False) is None:
            return None
        _, offs, _, template = chunk
        text = self.ctx.text
        starts = template[1](offs)
        ends = template[2](offs)
        texts = [
            text[a:b] if w is None else w for a, b, w in zip(starts, ends, template[3], strict=True)
        ]
        info = self._info.get(shape, False)
        if info is False:
            info = self._info[shape] = self._learn(chunk, texts)
        if info is None:
            return None
        del texts[info.count :]
        known = readers._shapes(self.ctx).shapes.get(info.structure)
        for asked, by_keys in known or ():
            recipes = by_keys.get(tuple(texts[i] for i in asked), False)
            if recipes is None:
                return None
            if recipes is not False:
                break
        else:
            return None
        rows = self._rows.get(id(recipes), False)
        if rows is False:
            rows = self._rows[id(recipes)] = self._compile(recipes)
        if rows is None:
            return None
        line, column = self.ctx.lines.position(starts[0])
        whole = text[starts[0] : ends[info.count - 1]]
        out = []
        for fillers in rows:
            # what ``Statement(...)`` with these fields makes (a frozen dataclass with plain
            # defaults and no ``__post_init__``): every field, in field order, in its
            # ``__dict__``; the check compares both ways field by field
            values = self._base.copy()
            values["line"] = line
            values["column"] = column
            values["text"] = whole
            for name, fill in fillers:
                values[name] = fill(texts)
            stmt = object.__new__(Statement)
            stmt.__dict__.update(values)
            out.append(stmt)
        return out

    def _compile(
        self, recipes: list[tuple[tuple[str, Any], ...]]
    ) -> list[tuple[tuple[str, Any], ...]] | None:
        """Per row of a shape's recipes, each field's recipe made a function of the texts
        (:func:`.readers.shapes.filler`), or None when a row lacks a required field (reading
        it fails in ``Statement(...)``: read it from its tokens so)."""
        if not all(self._required.issubset(n for n, _ in row) for row in recipes):
            return None
        return [tuple((name, reader_shapes.filler(r)) for name, r in row) for row in recipes]

    def check(self, chunk: Chunk, read: list[Statement]) -> None:
        """Compare the answer for ``chunk`` with ``read``, its statements as read from its
        tokens (with no error): the shape is used from now on when they are the same."""
        shape = chunk[2]
        if shape in self.checked or shape in self.refused:
            return
        found = self.answer(chunk)
        if found is None:
            return
        same = len(found) == len(read) and all(
            vars(a) == vars(b)
            and [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]
            for a, b in zip(found, read, strict=False)
        )
        (self.checked if same else self.refused).add(shape)
