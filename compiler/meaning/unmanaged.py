"""What the model's ``unmanaged`` entries reach, for ``accord analyze``: unknown, never governed.

An unmanaged entry keeps an object the model does not express (a console policy, a view that
decides access, an attachment the model cannot say). accord does not judge what it does, so
analysis never counts a dataset, a column or its rows as governed because of one: each place an
entry reaches (a placement's table or column, the tables and columns a statement's SQL names)
is listed with the disposition ``unknown``, with the dataset of that table when the model
declares one. An entry that reaches no table (a policy definition, a mapping table) is listed
reaching nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import PolicyModel, Unmanaged
from accord.compiler.model.unmanaged import reaches

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Reached:
    """One place an unmanaged entry reaches."""

    entry: str
    platform: str
    kind: str
    name: str
    #: the table, or "" when the entry reaches none
    table: str
    #: the column, or None for the table's rows (or nothing)
    column: str | None
    #: the model's dataset of the table, or None
    dataset: str | None
    why: str
    disposition: str = UNKNOWN


def _statement_places(entry: Unmanaged) -> list[tuple[str, str | None]]:
    """The tables (and columns) a statement's SQL names as the target of an attachment, a tag
    or a view (the scanner's reading: ``table`` and ``column_name``)."""
    from accord.compiler.sqlscan import scan  # noqa: PLC0415 - the scanner: a model with unmanaged SQL only

    found = []
    for stmt in scan(entry.sql, "<unmanaged>", entry.platform).statements:
        if stmt.table:
            found.append((stmt.table, stmt.column_name))
    return list(dict.fromkeys(found))


def reached(model: PolicyModel) -> list[Reached]:
    """Every place every entry reaches, in entry order (an entry reaching nothing once)."""
    tables = {(d.platform, facts(d.platform).fold(d.table)): n for n, d in model.datasets.items()}
    out: list[Reached] = []
    for name, entry in sorted(model.unmanaged.items()):
        place = reaches(entry)
        places = [place] if place is not None else []
        if entry.kind == "statement":
            places = _statement_places(entry)
        if not places:
            out.append(
                Reached(name, entry.platform, entry.kind, entry.name, "", None, None, entry.why)
            )
        for table, column in places:
            dataset = tables.get((entry.platform, facts(entry.platform).fold(table)))
            out.append(
                Reached(
                    name, entry.platform, entry.kind, entry.name, table, column, dataset, entry.why
                )
            )
    return out
