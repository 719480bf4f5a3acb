"""Where every value of a policy document came from: the vocabulary of located messages.

A *path* (:data:`Path_`) is a tuple of keys and list indexes, the shape pydantic uses for error
locations; a *position* (:data:`Pos`) is ``(file, line, column)``, 1-based, made a
:class:`~compiler.core.errors.Location` only when a message asks for one. :class:`Positions`
answers ``value`` / ``key`` / ``at`` over a source map's tables; :class:`SourceMap` is the plain
table the loader fills. The loader, the parse cache, validation and ``accord diff`` share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core.errors import Location

Path_ = tuple[Any, ...]
#: a position as stored: (file, line, column), 1-based; made a Location only when asked for
Pos = tuple[str, int, int]


class Positions:
    """``value`` / ``key`` / ``at`` over a source map's ``values`` and ``keys`` tables."""

    values: Mapping[Path_, Pos]
    keys: Mapping[Path_, Pos]
    texts: dict[Path_, str]

    def value(self, path: Path_) -> Location | None:
        """The location of the value at ``path``, or of its nearest located ancestor."""
        path = tuple(path)
        while True:
            pos = self.values.get(path)
            if pos is not None:
                return Location(*pos)
            if not path:
                return None
            path = path[:-1]

    def key(self, path: Path_) -> Location | None:
        """The location of the key that introduces ``path`` (falls back to the value)."""
        path = tuple(path)
        pos = self.keys.get(path)
        return Location(*pos) if pos is not None else self.value(path)

    def at(self, path: Path_, fallback: Location) -> Location:
        return self.value(path) or fallback


@dataclass
class SourceMap(Positions):
    """Where each value (and each mapping key) of a document came from."""

    values: dict[Path_, Pos] = field(default_factory=dict)  # type: ignore[assignment]
    keys: dict[Path_, Pos] = field(default_factory=dict)  # type: ignore[assignment]
    #: the source text of every plain scalar YAML resolved to something other than a string
    #: (a number, a boolean, null), so that validation can say what was written
    texts: dict[Path_, str] = field(default_factory=dict)
