"""The ``unmanaged`` section read as the rest of accord needs it: what an entry is known by,
what it reaches, and what makes a section invalid.

An entry names one object a platform holds and the model does not express (its kind's
keyword, :data:`~compiler.model.schema.UnmanagedKind`, and the name the platform knows it
by). ``accord drift`` and ``accord plan --base live:P`` leave every live object that an entry
names alone (:func:`key`); ``accord analyze`` counts what an entry reaches (:func:`reaches`)
as unknown. A placement's name says where it is: a row filter attachment's table, a mask
attachment's ``TABLE.COLUMN``, a tag assignment's ``TABLE[.COLUMN] TAG tag``, an ABAC
policy's ``NAME ON <SECURABLE TYPE> securable``; an aggregation or join attachment's table, a
projection attachment's ``TABLE.COLUMN``.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import PolicyModel, Unmanaged

#: the placement kinds, whose name says where they are
PLACEMENT_KINDS = (
    "row_filter_attachment",
    "mask_attachment",
    "projection_attachment",
    "aggregation_attachment",
    "join_attachment",
    "tag_assignment",
    "abac_policy",
)


def key(platform: str, kind: str, name: str) -> tuple[str, str, str]:
    """What an entry and a live object are matched by: the platform, the kind's keyword, the
    name as the platform compares names (blanks around the words of a placement's name
    folded to one)."""
    folded = " ".join(name.split())
    return (platform, kind, folded.upper() if facts(platform).folds_upper else folded.lower())


def entry_key(entry: Unmanaged) -> tuple[str, str, str]:
    return key(entry.platform, entry.kind, entry.name)


def reaches(entry: Unmanaged) -> tuple[str, str | None] | None:
    """The table (and column) a placement entry is on, from its name; None for a definition
    or a statement (what a statement reaches is read from its SQL, one layer up)."""
    name = " ".join(entry.name.split())
    if entry.kind in ("row_filter_attachment", "aggregation_attachment", "join_attachment"):
        return (name, None)
    if entry.kind in ("mask_attachment", "projection_attachment"):
        table, _, column = name.rpartition(".")
        return (table, column) if table.count(".") == 2 else None
    if entry.kind == "tag_assignment":
        upper = name.upper()
        where = name[: upper.find(" TAG ")] if " TAG " in upper else name
        parts = where.split(".")
        if len(parts) == 4:
            return (".".join(parts[:3]), parts[3])
        return (where, None) if len(parts) == 3 else None
    if entry.kind == "abac_policy":
        upper = name.upper()
        if " ON TABLE " in upper:
            return (name[upper.find(" ON TABLE ") + len(" ON TABLE ") :].strip(), None)
    return None


def unmanaged_problems(model: PolicyModel) -> list[tuple[tuple[Any, ...], str]]:
    """(path, message) of each entry whose platform is not declared, or that names an object
    another entry names too."""
    out: list[tuple[tuple[Any, ...], str]] = []
    seen: dict[tuple[str, str, str], str] = {}
    for name, entry in model.unmanaged.items():
        if model.platform_config(entry.platform) is None:
            out.append(
                (
                    ("unmanaged", name, "platform"),
                    f"platform {entry.platform!r} is not declared under platforms",
                )
            )
            continue
        if entry.kind == "statement":
            continue
        found = entry_key(entry)
        if found in seen:
            out.append(
                (
                    ("unmanaged", name, "name"),
                    f"{entry.kind} {entry.name} is also unmanaged entry {seen[found]!r}",
                )
            )
        seen.setdefault(found, name)
    return out
