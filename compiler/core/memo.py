"""Answers remembered per object, by identity.

Catalog objects are frozen and their sqlglot bodies are never changed once lowered, so what a
pure function says of one object stays true for as long as the object lives. The planner asks
the same questions of the same few policy bodies once per protected column after every
simulated statement (``compiler/plan/state.py``: who a body exempts, what it reads, its
fingerprint); walking the tree every time was most of the time of ``accord plan``.

Keys are object identities, not values: sqlglot's equality is structural and case-blind for
identifiers, so two bodies that compare equal may still render differently. The object is kept
beside its answer, so a reused ``id`` never answers for another object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``fn(obj)``, computed once per live object (at most ``limit`` remembered at a time)."""

    def __init__(self, fn: Callable[[K], V], limit: int = 100_000) -> None:
        self.fn = fn
        self.limit = limit
        self._seen: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        hit = self._seen.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self.fn(obj)
        if len(self._seen) >= self.limit:
            self._seen.clear()
        self._seen[id(obj)] = (obj, value)
        return value
