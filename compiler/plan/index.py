"""Indexes over a simulated catalog's placements, rebuilt only when the placements change.

:class:`State` (``compiler.plan.state``) asks, after every simulated statement and for every
protected table and column, which tags and ABAC policies apply there. Answering by scanning
every placement made planning quadratic in the number of tables; :class:`Places` is the
placements dict that counts its own mutations, and :func:`index_of` builds (once per version)
the lookups those questions need. The answers are the same as the scans gave, in the same
order (placements in insertion order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: a mutation whose key is not known (``update``, ``clear``): it may change the index
_UNKNOWN = object()


class Places(dict):  # type: ignore[type-arg]
    """A dict that bumps :attr:`version` on every mutation.

    :attr:`stamp` names its content: a copy made with ``Places(other)`` shares ``other``'s
    stamp, and every mutation gives a new one, so equal stamps mean equal placements (the
    planner reuses what it answered about a catalog whose placements a statement left as
    they were). :attr:`shape` counts only the mutations that may change what
    :func:`index_of` holds (tag and ABAC placements; any mutation whose key is not known):
    attaching a table's row filter or a column's mask leaves the index as it was."""

    version = 0
    shape = 0
    stamp: object | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        source = args[0] if len(args) == 1 and not kwargs else None
        self.stamp = source.stamp if isinstance(source, Places) else object()

    def _bump(self, key: Any = _UNKNOWN) -> None:
        self.version += 1
        self.stamp = object()
        if key is _UNKNOWN or not (isinstance(key, tuple) and key[:1] in (("filter",), ("mask",))):
            self.shape += 1

    def __setitem__(self, key: Any, value: Any) -> None:
        self._bump(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._bump(key)
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:
        self._bump(args[0] if args else _UNKNOWN)
        return super().pop(*args)

    def popitem(self) -> Any:
        self._bump()
        return super().popitem()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._bump(key)
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._bump()
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self._bump()
        super().clear()

    def __ior__(self, other: Any) -> Places:
        self._bump()
        super().update(other)
        return self


@dataclass
class PlaceIndex:
    #: the :attr:`Places.shape` it was built at
    version: int
    #: (TABLE, COLUMN or "") -> {tag (as written: keys are case-sensitive): value}, as
    #: ``State._tags`` returns it
    tags: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    #: TABLE -> the columns carrying a tag
    tagged: dict[str, set[str]] = field(default_factory=dict)
    #: ABAC kind -> the ABAC policies of that kind, in placement order
    abac: dict[str, list[Any]] = field(default_factory=dict)


def index_of(places: Places, cached: PlaceIndex | None) -> PlaceIndex:
    """The index of ``places``: ``cached`` when still current (no mutation since that may
    change it: :attr:`Places.shape`), else rebuilt."""
    if cached is not None and cached.version == places.shape:
        return cached
    index = PlaceIndex(places.shape)
    for k, p in places.items():
        if k[0] == "tag":
            index.tags.setdefault((k[1], k[2]), {})[p.tag] = p.value
            if k[2]:
                index.tagged.setdefault(k[1], set()).add(k[2])
        elif k[0] == "abac":
            index.abac.setdefault(p.kind, []).append(p)
    return index
