"""Comparing two cells: whether a change of a row or column cell widens or narrows what a
persona sees, which entitlement values it gains or loses, and the changes of one cell with
their causes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from accord.compiler.core.errors import Location
from accord.compiler.exposure.causes import Causes
from accord.compiler.exposure.cells import Key
from accord.compiler.exposure.changes import (
    COLUMN_RANK,
    EXPIRY_NOTE,
    ORDERED_ONLY,
    ROW_RANK,
    Cause,
    Cell,
    Change,
    Kind,
)
from accord.compiler.meaning.order import compare
from accord.compiler.model.schema import PolicyModel


def declared_values(models: Iterable[PolicyModel], dimension: str | None) -> frozenset[str]:
    """Every value of ``dimension`` declared in any of ``models`` (none without a dimension)."""
    if dimension is None:
        return frozenset()
    if "+" in dimension:  # a filter over several dimensions: its values are dimension=value
        return frozenset(
            f"{d}={v}"
            for d in dimension.split("+")
            for m in models
            for v in m.entitlements.get(d, {})
        )
    return frozenset(v for m in models for v in m.entitlements.get(dimension, {}))


def compare_rows(
    before: Cell,
    after: Cell,
    declared: Callable[[str | None], frozenset[str]],
    dimension: str | None = None,
) -> list[tuple[Kind, tuple[str, ...], str]]:
    """(kind, entitlement values gained or lost, note) for a change of a row cell.
    ``declared(dim)``: every value of a dimension; ``dimension``: the dataset's (for a change
    between every row and none, whose values are all of them)."""
    if before == after:
        return []
    if "aggregated" in (before.disposition, after.disposition):
        return _compare_aggregated(before, after)
    rb, ra = ROW_RANK[before.disposition], ROW_RANK[after.disposition]
    if rb == ra == ROW_RANK["filtered"]:
        if before.predicate is not None or after.predicate is not None:
            return [
                (
                    "widening",
                    (),
                    "a hand-written predicate changed: accord cannot compare "
                    "the rows it admits, so this is listed as a widening",
                )
            ]
        if "+" in (before.dimension or "") or "+" in (after.dimension or ""):
            return _compare_dimensions(before, after)
        if before.dimension != after.dimension:
            return [
                (
                    "widening",
                    tuple(sorted(after.values)),
                    f"rows now filtered by {after.dimension} instead of {before.dimension}: "
                    "not comparable, listed as a widening",
                )
            ]
        out: list[tuple[Kind, tuple[str, ...], str]] = []
        gained = after.values - before.values
        lost = before.values - after.values
        if gained:
            out.append(("widening", tuple(sorted(gained)), ""))
        if lost:
            out.append(("narrowing", tuple(sorted(lost)), ""))
        longer, shorter = expiry_moves(before, after)
        if longer:
            out.append(("widening", tuple(v for v, _ in longer), _expiry_note(longer)))
        if shorter:
            out.append(("narrowing", tuple(v for v, _ in shorter), _expiry_note(shorter)))
        return out
    if rb == ra:
        return []
    if ra > rb:
        shown_before = before.values if before.disposition == "filtered" else frozenset()
        if after.disposition == "filtered":
            gained = after.values - shown_before
        elif before.disposition == "filtered":
            gained = declared(before.dimension) - shown_before
        elif rb < ROW_RANK["filtered"] < ra:  # from no rows to every row
            gained = declared(dimension)
        else:
            gained = frozenset()
        return [("widening", tuple(sorted(gained)), "")]
    shown_after = after.values if after.disposition == "filtered" else frozenset()
    if before.disposition == "filtered":
        lost = before.values - shown_after
    elif after.disposition == "filtered":
        lost = declared(after.dimension) - shown_after
    elif ra < ROW_RANK["filtered"] < rb:  # from every row to none
        lost = declared(dimension)
    else:
        lost = frozenset()
    return [("narrowing", tuple(sorted(lost)), "")]


#: the note of a change between answers neither of which is looser (the order of dispositions)
INCOMPARABLE = (
    "{before} and {after} are incomparable (compiler/meaning/order.py): each gives away what the "
    "other keeps, so the change is both a widening and a narrowing"
)


def _compare_aggregated(before: Cell, after: Cell) -> list[tuple[Kind, tuple[str, ...], str]]:
    """A change of rows to or from aggregates (an aggregation policy): by the order of
    dispositions; between two aggregated answers, a smaller group size widens and a larger one
    narrows, and values shown are gained or lost as for filtered rows."""
    if before.disposition == after.disposition == "aggregated":
        out: list[tuple[Kind, tuple[str, ...], str]] = []
        if after.group_size != before.group_size:
            kind: Kind = "widening" if after.group_size < before.group_size else "narrowing"
            out.append((kind, (), f"groups of {before.group_size} -> {after.group_size}"))
        gained, lost = after.values - before.values, before.values - after.values
        if before.values and after.values and gained:
            out.append(("widening", tuple(sorted(gained)), ""))
        if before.values and after.values and lost:
            out.append(("narrowing", tuple(sorted(lost)), ""))
        return out
    found = compare(after.disposition, before.disposition, "rows")
    if found == "looser":
        return [("widening", (), "")]
    if found == "tighter":
        return [("narrowing", (), "")]
    note = INCOMPARABLE.format(before=before.disposition, after=after.disposition)
    return [("widening", (), note), ("narrowing", (), note)]


def expiry_moves(before: Cell, after: Cell) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Of the values shown on both sides, those whose grant now lasts longer (a later
    ``until``, or standing where it had a date) and those whose grant now ends sooner (an
    earlier ``until``, or a date where it was standing): (value, "D1 -> D2") each, where a
    standing grant reads ``standing``."""
    old, new = dict(before.until), dict(after.until)
    longer, shorter = [], []
    for value in sorted(before.values & after.values):
        b, a = old.get(value), new.get(value)
        if b == a:
            continue
        told = f"{b or 'standing'} -> {a or 'standing'}"
        # None (standing) outlasts every date; ISO days compare as text
        if b is not None and (a is None or a > b):
            longer.append((value, told))
        else:
            shorter.append((value, told))
    return longer, shorter


def _expiry_note(moves: list[tuple[str, str]]) -> str:
    return EXPIRY_NOTE + "; ".join(f"{v}: {told}" for v, told in moves)


def _dims_of(cell: Cell) -> dict[str, frozenset[str] | None]:
    """A filtered row cell as dimension -> the values it admits (None: every row of it)."""
    if cell.dimension is None:
        return {}
    if "+" not in cell.dimension:
        return {cell.dimension: cell.values}
    out: dict[str, frozenset[str] | None] = {}
    for dim in cell.dimension.split("+"):
        mine = {v.split("=", 1)[1] for v in cell.values if v.startswith(f"{dim}=")}
        out[dim] = None if "*" in mine else frozenset(mine)
    return out


def _compare_dimensions(before: Cell, after: Cell) -> list[tuple[Kind, tuple[str, ...], str]]:
    """Two filtered row cells of which one is a filter over several dimensions, dimension
    by dimension (a dimension a cell does not filter by admits every row of it): the values
    (``dimension=value``, ``dimension=*`` for every row of it) gained and lost."""
    old, new = _dims_of(before), _dims_of(after)
    gained: list[str] = []
    lost: list[str] = []
    for dim in dict.fromkeys([*old, *new]):
        b, a = old.get(dim), new.get(dim)
        if b is None and a is None:
            continue
        if b is None:  # every row of it before, some now
            lost.append(f"{dim}=*")
            gained += []
            continue
        if a is None:
            gained.append(f"{dim}=*")
            continue
        gained += [f"{dim}={v}" for v in sorted(a - b)]
        lost += [f"{dim}={v}" for v in sorted(b - a)]
    out: list[tuple[Kind, tuple[str, ...], str]] = []
    if gained:
        out.append(("widening", tuple(gained), ""))
    if lost:
        out.append(("narrowing", tuple(lost), ""))
    return out


def compare_columns(before: Cell, after: Cell) -> Kind | None:
    """Whether a change of a column cell widens or narrows it (None: neither); a change
    between incomparable answers is both: :func:`column_changes`."""
    kinds = column_changes(before, after)
    return kinds[0][0] if kinds else None


def column_changes(before: Cell, after: Cell) -> list[tuple[Kind, tuple[str, ...], str]]:
    """(kind, (), note) of each way a change of a column cell widens or narrows it."""
    if ORDERED_ONLY & {before.disposition, after.disposition}:
        found = compare(after.disposition, before.disposition, "column")
        if found == "same":
            return []
        if found == "incomparable":
            note = INCOMPARABLE.format(before=before.disposition, after=after.disposition)
            return [("widening", (), note), ("narrowing", (), note)]
        return [("widening" if found == "looser" else "narrowing", (), "")]
    rb, ra = COLUMN_RANK[before.disposition], COLUMN_RANK[after.disposition]
    if rb == ra == COLUMN_RANK["masked"]:
        lb, la = before.mask_level(), after.mask_level()
        if lb == la:
            return []
        return [("widening" if la > lb else "narrowing", (), "")]
    if rb == ra:
        return []
    return [("widening" if ra > rb else "narrowing", (), "")]


def cell_changes(
    key: Key,
    sb: Cell,
    sa: Cell,
    b: PolicyModel,
    h: PolicyModel,
    also: dict[str, list[str]],
    declared: Callable[[str | None], frozenset[str]],
    causes: Causes,
) -> Iterator[Change]:
    """The changes of one cell (a row change may be two: values gained and values lost),
    each with its cause."""
    persona, dataset, folded, place = key
    versions = [m.datasets[dataset] for m in (h, b) if dataset in m.datasets]
    column = identifier = dimension = None
    if folded is not None:
        specs = [(n, v) for ds in versions for n, v in ds.columns.items() if n.lower() == folded]
        column = (
            specs[0][0]
            if specs
            else next((c for c in also.get(dataset, []) if c.lower() == folded), folded)
        )
        identifier = next((v.identifier for _, v in specs if v.identifier), None)
        found: list[tuple[Kind, tuple[str, ...], str]] = column_changes(sb, sa)
    else:
        dimension = sa.dimension or sb.dimension or next(
            (ds.row_filter.entitlement for ds in versions
             if ds.row_filter is not None and ds.row_filter.entitlement),
            None,
        )  # fmt: skip
        found = compare_rows(sb, sa, declared, dimension)
    nowhere = Cause(Location("", 0, 0), "")
    for kind, values, note in found:
        draft = Change(
            kind, persona, dataset, column, place, versions[0].platform, sb, sa, values,
            nowhere, identifier, dimension, note,
        )  # fmt: skip
        yield replace(draft, cause=causes.find(draft))
