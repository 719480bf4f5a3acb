"""The order of dispositions: which answer is looser than which (ACC403, ``accord diff``,
probes). One place, as the policy format states it ("The order of dispositions"):

* for a column, ``clear`` (and ``ungoverned``) is looser than ``masked``, which is looser than
  ``hidden`` (a projection policy: the column cannot be selected);
* for rows, ``clear`` is looser than ``filtered``, which is looser than ``denied`` and
  ``empty``;
* ``aggregated`` (an aggregation policy: only aggregates over groups of a least size) is looser
  than ``denied`` and tighter than ``clear``, and is *incomparable* with ``masked`` and
  ``filtered``: a masked column read row by row and a clear column read only in aggregates each
  give away something the other keeps.

Each disposition is a point of two measures, how much of the values it gives and whether it
gives them row by row; one answer is looser than another when it is at least as open on both
and more open on one. Two answers neither of which is looser are incomparable: surfaces that
answer the same facts so diverge (ACC403 names both), and a change between them is both a
widening and a narrowing.
"""

from __future__ import annotations

from typing import Literal

Aspect = Literal["rows", "column"]
Comparison = Literal["looser", "tighter", "same", "incomparable"]

#: rows: (how many of the rows' values, 1 when they are read row by row)
ROWS: dict[str, tuple[int, int]] = {
    "empty": (0, 0),
    "denied": (1, 0),
    "filtered": (2, 1),
    "aggregated": (3, 0),
    "clear": (3, 1),
    "ungoverned": (4, 1),
}
#: a column: (how much of its values, 1 when they are read row by row)
COLUMNS: dict[str, tuple[int, int]] = {
    "empty": (0, 0),
    "denied": (1, 0),
    "hidden": (2, 0),
    "masked": (3, 1),
    "aggregated": (4, 0),
    "clear": (4, 1),
    "ungoverned": (5, 1),
}


def compare(a: str, b: str, aspect: Aspect) -> Comparison:
    """How answer ``a`` stands to answer ``b`` of the same facts."""
    table = ROWS if aspect == "rows" else COLUMNS
    pa, pb = table[a], table[b]
    if pa == pb:
        return "same"
    if all(x >= y for x, y in zip(pa, pb, strict=True)):
        return "looser"
    if all(x <= y for x, y in zip(pa, pb, strict=True)):
        return "tighter"
    return "incomparable"


def looser(a: str, b: str, aspect: Aspect) -> bool:
    """Whether ``a`` is strictly looser than ``b``."""
    return compare(a, b, aspect) == "looser"


def tightest(dispositions: list[str], aspect: Aspect) -> list[str]:
    """The dispositions of ``dispositions`` no other one is tighter than (their minimal
    elements), in their order."""
    return [d for d in dispositions if not any(looser(d, o, aspect) for o in dispositions)]
