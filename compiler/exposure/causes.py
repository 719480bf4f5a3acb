"""Where the head model causes a change: the first input of the changed cell that differs
between the two models (the surface's reads and enforcement, the persona's principals, the
dataset's row filter, the entitlement grants and the mask's ``unmasked_for`` of the persona's
principals, the mask's strategy, the column's mask), located with the same source map as lint
findings; a removed entry is located at its nearest surviving parent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accord.compiler.core.errors import Location
from accord.compiler.core.platforms import catalog_facts
from accord.compiler.exposure.changes import Cause, Change
from accord.compiler.meaning import semantics
from accord.compiler.model.grants import expiry, names, principal_of, until_of
from accord.compiler.model.identities import identity_subject
from accord.compiler.model.replicas import column_path
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.source import Path_
from accord.compiler.model.validate import Project


def _dotted(path: Path_) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def locate(project: Project, path: Path_) -> Cause:
    """Where ``path`` is written in ``project``: the key that introduces it, a list item's
    value, or the nearest located parent when the path does not exist there."""
    path = tuple(path)
    while path:
        pos = project.source.keys.get(path) or project.source.values.get(path)
        if pos is not None:
            return Cause(Location(*pos), _dotted(path))
        path = path[:-1]
    return Cause(project.origin, "")


class Causes:
    """Finds, for a changed cell, the first input that differs between the two models."""

    def __init__(self, base: Project, head: Project, renames: dict[str, str] | None = None):
        self.base = base
        self.head = head
        self.b = base.model
        self.h = head.model
        #: head dataset key -> the key it had in the base (a rename keeping its table)
        self.was = {new: old for old, new in (renames or {}).items()}

    def _principals(self, persona: str) -> list[str]:
        """The principals the subject lists (a persona) or holds (an identity), in either
        model."""
        seen: dict[str, None] = {}
        identity = identity_subject(persona)
        for m in (self.b, self.h):
            if identity is not None:
                seen.update(dict.fromkeys(semantics.principals_on(m, persona, identity.platform)))
            else:
                seen.update(dict.fromkeys(m.personas.get(persona, [])))
        return list(seen)

    def _held(self, m: PolicyModel, persona: str, platform: str) -> frozenset[str]:
        if persona not in m.personas and identity_subject(persona) is None:
            return frozenset()
        return frozenset(semantics.principals_on(m, persona, platform))

    def _membership(
        self,
        persona: str,
        platform: str,
        path: Path_,
        before: list[Any] | None,
        after: list[Any] | None,
    ) -> Path_ | None:
        """A list of principals (``unmasked_for``, a grant, ``unfiltered_for``) as it concerns
        the persona: the head item that gained the persona a principal, else the list."""
        mine_b = self._held(self.b, persona, platform) & set(names(before or []))
        mine_h = self._held(self.h, persona, platform) & set(names(after or []))
        if after is None and mine_b:  # the entry is gone: its parent
            return path[:-1]
        if before == after and identity_subject(persona) is not None:
            # the list is as it was: what changed is who holds the identity
            return None
        if mine_b == mine_h:
            # the same principals: a grant whose ``until`` moved is the cause
            for i, entry in enumerate(after or []):
                p = principal_of(entry)
                if p in mine_h and expiry(before or [], p) != expiry(after or [], p):
                    return (*path, i, "until") if until_of(entry) is not None else (*path, i)
            return None
        for i, entry in enumerate(after or []):
            p = principal_of(entry)
            if p in mine_h and p not in mine_b:
                return (*path, i)
        return path

    def _hierarchy(self, persona: str, platform: str) -> Path_ | None:
        """The ``inherits`` edge of the head that changed what the persona holds through the
        role hierarchy: the first principal it holds in both models whose ``inherits`` list
        differs, at the item that is new (or the list)."""
        own = persona in self.b.personas and persona in self.h.personas
        if not own and identity_subject(persona) is None:
            return None
        if self._held(self.b, persona, platform) == self._held(self.h, persona, platform):
            return None
        for name in semantics.principals_on(self.h, persona, platform):
            old, new = self.b.principals.get(name), self.h.principals.get(name)
            if old is None or new is None or old.inherits == new.inherits:
                continue
            added = [i for i, p in enumerate(new.inherits) if p not in old.inherits]
            return (
                ("principals", name, "inherits", added[0])
                if added
                else ("principals", name, "inherits")
            )
        return None

    def find(self, c: Change) -> Cause:
        for path in self._candidates(c):
            if path is not None:
                return locate(self.head, path)
        return locate(self.head, ("datasets", c.dataset))

    def _candidates(self, c: Change) -> Iterator[Path_ | None]:
        b, h, d, s = self.b, self.h, c.dataset, c.surface
        if (c.persona in b.personas) != (c.persona in h.personas):
            yield ("personas", c.persona)
        if s is not None:
            sb, sh = b.surfaces.get(s), h.surfaces.get(s)
            if sb is None and sh is not None and d in sh.reads:
                yield ("surfaces", s, "reads", sh.reads.index(d))
            if (sb is None) != (sh is None):
                yield ("surfaces", s)
            if sb is not None and sh is not None:
                if (d in sb.reads) != (d in sh.reads):
                    yield (
                        ("surfaces", s, "reads", sh.reads.index(d))
                        if d in sh.reads
                        else ("surfaces", s, "reads")
                    )
                for name in ("platform", "identity", "runtime", "access_mode"):
                    if getattr(sb, name) != getattr(sh, name):
                        yield ("surfaces", s, name)
                # the style decides which runtime a surface needs (ACC401: ABAC needs a newer one)
                platform = catalog_facts(sh.platform)
                if (
                    platform is not None
                    and platform.versioned_runtimes
                    and _style(b, sh.platform) != _style(h, sh.platform)
                ):
                    yield ("platforms", sh.platform, "style")
        pb, ph = b.personas.get(c.persona), h.personas.get(c.persona)
        if pb != ph:
            if pb is None or ph is None:
                yield ("personas", c.persona)
            else:
                added = [i for i, p in enumerate(ph) if p not in pb]
                yield ("personas", c.persona, added[0]) if added else ("personas", c.persona)
        db, dh = b.datasets.get(self.was.get(d, d)), h.datasets.get(d)
        if (db is None) != (dh is None):
            yield ("datasets", d)
            return
        assert db is not None and dh is not None
        platform = dh.platform
        if db.platform != dh.platform:
            yield ("datasets", d, "platform")
        # who holds what: for a persona, first (its principals, their roles or groups, the
        # hierarchy); for an identity, after the lists that grant it something (a principal
        # new to an identity is blamed where it is granted, a principal moved to another
        # identity where it moved)
        holding = [self._hierarchy(c.persona, platform), *self._identities(c.persona, platform)]
        own = identity_subject(c.persona) is None
        if own:
            yield from holding
        if c.column is not None:
            yield from self._column_candidates(c, db, dh, platform)
        yield from self._constraint_candidates(c, db, dh, platform)
        yield from self._row_candidates(c, db, dh, platform)
        if not own:
            yield from holding
        if db.governed != dh.governed:
            yield ("datasets", d, "columns")

    def _identities(self, persona: str, platform: str) -> Iterator[Path_]:
        """The principals of ``persona`` whose identity on ``platform`` differs between the
        models."""
        b, h = self.b, self.h
        for p in self._principals(persona):
            ib = b.principals[p].identity(platform) if p in b.principals else None
            ih = h.principals[p].identity(platform) if p in h.principals else None
            if ib != ih:
                yield ("principals", p, platform) if ih else ("principals", p)

    def _column_candidates(
        self, c: Change, db: Any, dh: Any, platform: str
    ) -> Iterator[Path_ | None]:
        folded = (c.column or "").lower()
        nb = next((n for n in db.columns if n.lower() == folded), None)
        nh = next((n for n in dh.columns if n.lower() == folded), None)
        cb = db.columns.get(nb) if nb else None
        ch = dh.columns.get(nh) if nh else None
        # where the column's mask is declared in the head: a replica's inherited column is
        # its source's entry, so a mask dropped on the source is blamed on the source
        if nh is not None:
            column = column_path(self.h, c.dataset, nh)
        elif nb is not None and nb in db.inherited:
            src, scol = db.inherited[nb]
            column = ("datasets", src, "columns", scol) if src in self.h.datasets else ()
        elif dh.replica_of is not None and dh.replica_of in self.h.datasets:
            src = dh.replica_of
            scol = next((n for n in self.h.datasets[src].columns if n.lower() == folded), None)
            column = ("datasets", src, "columns", scol) if scol else ()
        else:
            column = ()
        where = ("datasets", c.dataset, "columns")
        if (cb is None or cb.mask is None) != (ch is None or ch.mask is None):
            yield (*column, "mask") if ch is not None and ch.mask else (column or where)
        mb = cb.mask if cb else None
        mh = ch.mask if ch else None
        if mb != mh:
            yield (*column, "mask") if column else where
        if mh is None or mh not in self.b.masks:
            return
        old, new = self.b.masks[mh], self.h.masks[mh]
        yield self._membership(
            c.persona, platform, ("masks", mh, "unmasked_for"), old.unmasked_for, new.unmasked_for
        )
        for name in ("strategy", "keep_last"):
            if getattr(old, name) != getattr(new, name):
                yield ("masks", mh, name)
        sb = (old.salt or {}).get(platform)  # type: ignore[call-overload]
        sh = (new.salt or {}).get(platform)  # type: ignore[call-overload]
        if bool(sb) != bool(sh):
            yield ("masks", mh, "salt", platform) if sh else ("masks", mh)

    def _constraint_candidates(
        self, c: Change, db: Any, dh: Any, platform: str
    ) -> Iterator[Path_ | None]:
        """A projection policy (a column's ``projection``) or an aggregation policy (the
        dataset's ``aggregation``) added, removed or changed, or who it exempts."""
        d = c.dataset
        if c.column is not None:
            folded = c.column.lower()
            nh = next((n for n in dh.columns if n.lower() == folded), None)
            nb = next((n for n in db.columns if n.lower() == folded), None)
            pb = db.columns[nb].projection if nb else None
            ph = dh.columns[nh].projection if nh else None
            where = ("datasets", d, "columns", nh) if nh else ("datasets", d, "columns")
            if (pb is None) != (ph is None):
                yield (*where, "projection") if ph is not None else where
            elif pb is not None and ph is not None:
                if pb.enforcement != ph.enforcement:
                    yield (*where, "projection", "enforcement")
                yield self._membership(
                    c.persona, platform, (*where, "projection", "allowed_for"),
                    pb.allowed_for, ph.allowed_for,
                )  # fmt: skip
        ab, ah = db.aggregation, dh.aggregation
        if (ab is None) != (ah is None):
            yield ("datasets", d, "aggregation") if ah is not None else ("datasets", d)
        elif ab is not None and ah is not None:
            if ab.min_group_size != ah.min_group_size:
                yield ("datasets", d, "aggregation", "min_group_size")
            yield self._membership(
                c.persona, platform, ("datasets", d, "aggregation", "unrestricted_for"),
                ab.unrestricted_for, ah.unrestricted_for,
            )  # fmt: skip

    def _row_candidates(self, c: Change, db: Any, dh: Any, platform: str) -> Iterator[Path_ | None]:
        rb, rh = db.row_filter, dh.row_filter
        where = ("datasets", c.dataset, "row_filter")
        if (rb is None) != (rh is None):
            yield where if rh is not None else ("datasets", c.dataset)
            return
        if rb is None or rh is None:
            return
        shape = ("entitlement", "column", "expression", "arguments", "dimensions")
        if not _cannot_cause(c, db, dh):
            for name in shape:
                if getattr(rb, name) != getattr(rh, name):
                    yield (*where, name)
        yield self._membership(
            c.persona, platform, (*where, "unfiltered_for"), rb.unfiltered_for, rh.unfiltered_for
        )
        # an entitlement filter reads its dimensions; a hand-written predicate any mapping table
        keyed = [d for d, _, _ in dh.filter_dimensions]
        dims = keyed if keyed else sorted(self.h.entitlements)
        for dim in dims:
            grants_b = self.b.entitlements.get(dim, {})
            grants_h = self.h.entitlements.get(dim, {})
            # a filter over several dimensions names its values dimension=value
            mine = list(c.values)
            if rh.dimensions is not None:
                mine = [v.split("=", 1)[1] for v in c.values if v.startswith(f"{dim}=")]
            values = mine or sorted(grants_b.keys() | grants_h.keys())
            for v in values:
                found = self._membership(
                    c.persona, platform, ("entitlements", dim, v), grants_b.get(v), grants_h.get(v)
                )
                if found is not None:
                    yield found


def _style(m: PolicyModel, platform: str) -> str:
    cfg = m.platform_config(platform)
    return cfg.style if cfg is not None else ""


def _cannot_cause(c: Change, db: Any, dh: Any) -> bool:
    """Whether the change of a row filter's dimensions cannot be what made ``c``: dimensions
    only added (each base dimension still there, as it was) can only narrow what is seen, and
    only dropped can only widen it; the change is then blamed elsewhere (a grant, an
    exemption)."""
    if db.row_filter.expression is not None or dh.row_filter.expression is not None:
        return False
    before = {(d, col, tuple(u)) for d, col, u in db.filter_dimensions}
    after = {(d, col, tuple(u)) for d, col, u in dh.filter_dimensions}
    if before == after:
        return False
    if c.kind == "widening":
        return before < after
    return after < before
