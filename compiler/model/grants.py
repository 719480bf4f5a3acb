"""Entitlement grants, standing or until a date: the one reading of a value's grant list.

An entry of ``entitlements.DIM.VALUE`` is a principal's name (a standing grant) or a
:class:`~compiler.model.schema.Grant` ``{principal, until}``, which holds through ``until``
(inclusive) and not after. Everything that asks who holds a value asks here: the lowering
(mapping-table rows with their expiry), semantics at a date, lint, diff and verify.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from accord.compiler.model.schema import Grant, PolicyModel

Entry = str | Grant


def principal_of(entry: Entry) -> str:
    return entry.principal if isinstance(entry, Grant) else entry


def until_of(entry: Entry) -> date | None:
    """The last day ``entry`` holds; None for a standing grant."""
    return entry.until if isinstance(entry, Grant) else None


def holds(entry: Entry, on: date) -> bool:
    until = until_of(entry)
    return until is None or on <= until


def names(entries: Iterable[Entry]) -> list[str]:
    """The principals of ``entries``, whatever their dates, in order."""
    return [principal_of(e) for e in entries]


def holders(entries: Iterable[Entry], on: date) -> list[str]:
    """The principals whose grant among ``entries`` holds on ``on``."""
    return [principal_of(e) for e in entries if holds(e, on)]


def expiry(entries: Iterable[Entry], principal: str) -> tuple[bool, date | None]:
    """(granted at all, last day) of ``principal`` among ``entries``: the latest of its
    grants, None when one of them is standing."""
    found = False
    last: date | None = None
    for e in entries:
        if principal_of(e) != principal:
            continue
        until = until_of(e)
        if until is None:
            return True, None
        last = until if last is None or until > last else last
        found = True
    return found, last


def has_expiry(model: PolicyModel, dimension: str) -> bool:
    """Whether any grant of ``dimension`` carries ``until`` (its mapping tables then carry an
    expiry column; without one they are exactly what they were before ``until`` existed)."""
    return any(
        isinstance(e, Grant)
        for entries in model.entitlements.get(dimension, {}).values()
        for e in entries
    )


def expiry_dates(model: PolicyModel) -> list[date]:
    """Every distinct ``until`` of the model, sorted."""
    return sorted(
        {
            e.until
            for values in model.entitlements.values()
            for entries in values.values()
            for e in entries
            if isinstance(e, Grant)
        }
    )


def dumped(model: PolicyModel) -> dict[str, dict[str, list[object]]]:
    """The entitlements as plain JSON values (a time-bound grant as ``{principal, until}``)."""
    return {
        dim: {
            value: [e if isinstance(e, str) else e.model_dump(mode="json") for e in entries]
            for value, entries in values.items()
        }
        for dim, values in model.entitlements.items()
    }
