"""Entitlement grants, standing or until a date: the one reading of a value's grant list.

An entry of ``entitlements.DIM.VALUE`` is a principal's name (a standing grant) or a
:class:`~compiler.model.schema.Grant` ``{principal, until}``, which holds through ``until``
(inclusive) and not after. Everything that asks who holds a value asks here: the lowering
(mapping-table rows with their expiry), semantics at a date, lint, diff and verify.

Where the grants live is said here too (:func:`grants_tables`): one mapping table per
dimension on every declared platform, its name and its columns. The lowering builds its
mapping tables from it; validation and lint read the same names and columns without lowering
(a hand-written predicate's subquery over a mapping table, ACC104 in SQL files).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import ValidationError

from accord.compiler.core.platforms import facts
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


#: the mapping tables' expiry column (as the platform folds names): the last day a grant holds
EXPIRY_COLUMN = "valid_until"


@dataclass(frozen=True)
class GrantsTable:
    """The mapping table accord compiles for one entitlement dimension on one platform: its
    name (``<governance_schema>.<dimension>_grants``) and columns, each as the platform stores
    an unquoted name. The principal column is named for what a principal is there
    (``role_name`` on Snowflake, ``group_name`` on Databricks); a dimension with a grant
    ``until`` a date has an expiry column."""

    platform: str
    dimension: str
    name: str
    key_column: str
    principal_column: str
    expiry_column: str | None

    @property
    def columns(self) -> tuple[str, ...]:
        expiry = (self.expiry_column,) if self.expiry_column else ()
        return (self.key_column, self.principal_column, *expiry)


def grants_table(model: PolicyModel, platform: str, dimension: str) -> GrantsTable:
    """Where the grants of ``dimension`` live on ``platform`` (a declared platform)."""
    cfg = model.platform_config(platform)
    assert cfg is not None, f"platform {platform} is not declared"
    found = facts(platform)
    return GrantsTable(
        platform=platform,
        dimension=dimension,
        name=f"{cfg.governance_schema}.{found.fold(f'{dimension}_grants')}",
        key_column=found.fold(f"{dimension}_code"),
        principal_column=found.fold(f"{found.principal_kind}_name"),
        expiry_column=found.fold(EXPIRY_COLUMN) if has_expiry(model, dimension) else None,
    )


def grants_tables(model: PolicyModel) -> list[GrantsTable]:
    """Every mapping table the model compiles: each dimension on each declared platform."""
    return [
        grants_table(model, platform, dim)
        for platform in model.declared_platforms()
        for dim in sorted(model.entitlements)
    ]


def grants_of(data: Mapping[str, Any]) -> list[GrantsTable]:
    """The mapping tables of a loaded, merged policy project ``data``, read from its
    ``platforms`` and ``entitlements`` alone (all they depend on), without validating or
    lowering the rest: [] when those two sections do not validate (validating the project
    reports why)."""
    sections = {key: data[key] for key in ("platforms", "entitlements") if key in data}
    try:
        model = PolicyModel.model_validate({"version": 1, **sections})
    except ValidationError:
        return []
    return grants_tables(model)
