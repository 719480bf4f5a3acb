"""What a front end of ``accord import`` read from one platform, and what the raise made of it.

An :class:`Item` is one thing read: a catalog object (:mod:`targets.objects`), or a statement
that is none accord models (a view that decides access), with its SQL as it will be kept if
the model cannot express it, and where it was read. A :class:`Found` is one platform's read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accord.targets.kinds import KINDS
from accord.targets.objects import CatalogObject

#: what an :class:`Item` is known by across the pipeline: (platform, keyword, label)
ItemKey = tuple[str, str, str]


@dataclass(frozen=True)
class Item:
    """One object (or statement) read on ``platform``."""

    platform: str
    #: the catalog object, or None for a statement that is no catalog object
    obj: CatalogObject | None
    #: its SQL as the model would keep it (salts withheld)
    sql: str
    #: where it was read: ``file:line`` of a SQL file, or the live platform
    origin: str
    #: a statement's name (a catalog object is named by its kind's row)
    label_: str = ""
    #: what was withheld from ``sql`` (a literal salt), in words, for IMPORT.md
    withheld: str = ""
    #: why a statement is kept (one accord could not read), when the front end knows
    why: str = ""
    #: read live: the model must lower back to exactly this object
    exact: bool = False
    #: the kind a thing read that is no catalog object is named by (a Databricks ABAC GRANT or
    #: DENY policy: ``abac_policy``); "" for a statement
    kind_: str = ""

    @property
    def kind(self) -> str:
        if self.obj is not None:
            return KINDS[type(self.obj)].keyword
        return self.kind_ or "statement"

    @property
    def label(self) -> str:
        return KINDS[type(self.obj)].label(self.obj) if self.obj is not None else self.label_

    @property
    def key(self) -> ItemKey:
        return (self.platform, self.kind, self.label.upper())


@dataclass
class Found:
    """One platform's read."""

    platform: str
    #: the schema holding the policies, mapping tables and salt functions (None: none found)
    governance_schema: str | None
    #: the platform style the objects were written in (``column``/``tag``, ``table``/``abac``)
    style: str
    items: list[Item] = field(default_factory=list)
    #: read live: the imported model must lower to exactly what was read
    exact: bool = False
    #: the read's coverage (live), as every live command reports it
    coverage: Any = None
    #: what the read says besides the objects (in words, for stdout and IMPORT.md)
    notes: list[str] = field(default_factory=list)


@dataclass
class Kept:
    """An item the model does not express: an ``unmanaged`` entry, and why."""

    item: Item
    why: str


@dataclass
class Lifted:
    """What the raise made of every platform's read: the model's sections (plain data, as
    written to YAML), the items kept unmanaged, what each part of the model expresses, and the
    notes for IMPORT.md."""

    data: dict[str, Any]
    kept: list[Kept]
    #: a part of the model (``("mask", name)``, ``("dimension", name)``, ``("filter",
    #: dataset)``, ``("column", dataset, column)``) -> the items it expresses
    claims: dict[tuple[str, ...], list[Item]]
    #: salts to fill: (mask, platform, reference, salt function)
    salts: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: what a reviewer should know: names chosen, renames, what no SQL says
    notes: list[str] = field(default_factory=list)
