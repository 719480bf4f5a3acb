"""What changed between two lowered catalogs of one platform.

Objects are matched by identity: definitions by name, placements by what they occupy (a
table's filter, a column's mask, a tag on a column, an ABAC policy on a securable). Nothing
here looks at the YAML: base and head are the lowered :class:`~targets.objects.Catalog`
objects, the same ones ``compile`` renders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from accord.targets.identity import (
    describe_object,
    fingerprint,
    identity,
    is_definition,
    references,
)
from accord.targets.kinds import KINDS
from accord.targets.objects import (
    Catalog,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    TagAssignment,
)

Kind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Change:
    kind: Kind
    base: CatalogObject | None
    head: CatalogObject | None
    #: for "changed": what changed ("body", "signature", "rows", "salt", "placement", ...)
    detail: str = ""
    #: for "changed": the change in words
    note: str = ""
    #: why an object equal in base and head changes all the same (it is re-created): what the
    #: planner was told of the deployed object that its catalog does not show
    reason: str = ""

    @property
    def obj(self) -> CatalogObject:
        obj = self.head if self.head is not None else self.base
        assert obj is not None
        return obj

    def describe(self, platform: str) -> str:
        what = describe_object(self.obj, platform)
        return f"{what}: {self.note or self.kind}"


@dataclass(frozen=True)
class PlatformDiff:
    platform: str
    base: Catalog | None
    head: Catalog | None
    changes: tuple[Change, ...] = ()

    @property
    def style(self) -> tuple[str, str] | None:
        """(base style, head style) when the platform's style switched."""
        if self.base is None or self.head is None or self.base.style == self.head.style:
            return None
        return (self.base.style, self.head.style)


def diff_catalogs(
    platform: str,
    base: Catalog | None,
    head: Catalog | None,
    recreate: Mapping[str, str] | None = None,
) -> PlatformDiff:
    """The changes from ``base`` to ``head``. ``recreate``: definitions (by name) changed even
    when equal in both, each with the reason (:attr:`Change.reason`)."""
    recreate = recreate or {}
    before = {identity(o): o for o in (base.objects if base else ())}
    after = {identity(o): o for o in (head.objects if head else ())}
    salts = {
        o.name.upper(): o.name
        for o in (*before.values(), *after.values())
        if isinstance(o, SaltFunction)
    }
    changes = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old is None:
            changes.append(Change("added", None, new))
        elif new is None:
            changes.append(Change("removed", old, None))
        elif type(old) is not type(new):
            changes.append(Change("removed", old, None))
            changes.append(Change("added", None, new))
        elif _differs(old, new):
            detail = _what_changed(old, new)
            changes.append(Change("changed", old, new, detail, _note(old, new, detail, salts)))
        elif is_definition(old) and old.name in recreate:  # type: ignore[union-attr]
            detail = _what_changed(old, new)
            note = _note(old, new, detail, salts)
            reason = recreate[old.name]  # type: ignore[union-attr]
            changes.append(Change("changed", old, new, detail, note, reason))
    return PlatformDiff(platform, base, head, tuple(changes))


def _differs(old: CatalogObject, new: CatalogObject) -> bool:
    """Whether two objects of one type and identity differ: by fingerprint, or by any field.
    Objects without a sqlglot body hold only strings and tuples of them, so equal fields mean
    equal fingerprints too: those (every placement, most of a catalog) are compared field by
    field without hashing. A body is compared by fingerprint as well, since sqlglot's equality
    does not see every difference its SQL shows."""
    if KINDS[type(old)].plain and old == new:
        return False
    return fingerprint(old) != fingerprint(new) or old != new


def _what_changed(old: CatalogObject, new: CatalogObject) -> str:
    return KINDS[type(old)].changed(old, new)


def _note(old: CatalogObject, new: CatalogObject, detail: str, salts: dict[str, str]) -> str:
    if isinstance(old, MappingTable) and isinstance(new, MappingTable):
        added = len(set(new.rows) - set(old.rows))
        removed = len(set(old.rows) - set(new.rows))
        return f"grants changed ({added} row(s) added, {removed} removed)"
    if isinstance(old, SaltFunction) and isinstance(new, SaltFunction):
        return f"salt rotated ({old.salt_ref} -> {new.salt_ref})"
    if isinstance(old, RowFilterPolicy | MaskPolicy) and isinstance(
        new, RowFilterPolicy | MaskPolicy
    ):
        if detail == "signature":
            sig = ", ".join(f"{p.name} {p.type}" for p in new.params)
            return f"signature changed (now ({sig}))"
        notes = []
        if (
            isinstance(old, MaskPolicy)
            and isinstance(new, MaskPolicy)
            and old.strategy != new.strategy
        ):
            notes.append(f"strategy {old.strategy} -> {new.strategy}")
        read_before, read_now = references(old) & salts.keys(), references(new) & salts.keys()
        if read_now - read_before:
            notes.append(
                "salt introduced: " + ", ".join(salts[n] for n in sorted(read_now - read_before))
            )
        if read_before - read_now:
            notes.append(
                "salt removed: " + ", ".join(salts[n] for n in sorted(read_before - read_now))
            )
        return "body changed" + (f" ({'; '.join(notes)})" if notes else "")
    if isinstance(old, RowFilterAttachment | MaskAttachment) and isinstance(
        new, RowFilterAttachment | MaskAttachment
    ):
        if old.policy != new.policy:
            return f"moved from {old.policy} to {new.policy}"
        return "arguments changed"
    if isinstance(old, TagAssignment) and isinstance(new, TagAssignment):
        return f"value {old.value!r} -> {new.value!r}"
    return "changed"
