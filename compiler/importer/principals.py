"""Principals from identities: what each Snowflake role and Databricks group read is called in
the model, and which role and group are one principal.

Every identity a policy names (a mapping table's rows, a membership check's literal, an ABAC
policy's ``TO`` / ``EXCEPT``) becomes a principal. Its name is the one accord's own comment
gives it where the policy was compiled by accord (``clear for clinical_unblinded``), else the
identity in lower snake case (``BENCH_CHEMIST`` -> ``bench_chemist``). A Snowflake role and a
Databricks group are one principal when they have one name, or else when they hold the same
facts: the same grants of every dimension both platforms keep, each the only one to. A pair is
kept only while the two hold the same facts everywhere both platforms say something (every
shared dimension's grants, every shared mask's clear list): one principal must compile to each
platform's own rows and lists. Names are unique: a name two unpaired identities want goes to
the Snowflake one first, the other is suffixed with its platform.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from pydantic import TypeAdapter, ValidationError

from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.model.schema import DatabricksGroup, SnowflakeRole

_SNAKE = re.compile(r"[^a-z0-9]+")

#: (platform, identity)
Ident = tuple[str, str]


def snake(text: str, prefix: str = "p") -> str:
    """``text`` as a name of the model (lower snake case, starting with a letter)."""
    name = _SNAKE.sub("_", text.lower()).strip("_")
    if not name:
        return prefix
    return name if name[0].isalpha() else f"{prefix}_{name}"


_IDENTITY = {
    "snowflake": TypeAdapter(SnowflakeRole),
    "databricks": TypeAdapter(DatabricksGroup),
}


def not_an_identity(platform: str, identities: Iterable[str]) -> str:
    """Why the first of ``identities`` the model's principals cannot hold is not one (a
    Snowflake role the policy names in another case than the stored one denies everyone
    granted it), or ""."""
    for identity in identities:
        try:
            _IDENTITY[platform].validate_python(identity)
        except ValidationError as err:
            return f"it names {identity!r}, which no principal of the model can be: {err.errors()[0]['msg']}"
    return ""


class Naming:
    """The identities read, what names their policies' comments give them, and the facts each
    holds; :meth:`resolve` names them."""

    def __init__(self) -> None:
        self.identities: set[Ident] = set()
        self.hints: dict[Ident, set[str]] = defaultdict(set)
        #: (platform, dimension) -> identity -> its grants {(value, last day or None)}
        self.grants: dict[tuple[str, str], dict[str, set[tuple[str, str | None]]]] = defaultdict(
            lambda: defaultdict(set)
        )
        #: (platform, mask) -> the identities who see its clear value
        self.clear: dict[tuple[str, str], set[str]] = defaultdict(set)

    def see(self, platform: str, identity: str, hint: str | None = None) -> None:
        self.identities.add((platform, identity))
        if hint is not None:
            self.hints[(platform, identity)].add(hint)

    def grant(
        self, platform: str, dimension: str, identity: str, value: str, day: str | None
    ) -> None:
        self.see(platform, identity)
        self.grants[(platform, dimension)][identity].add((value, day))

    def clears(self, platform: str, mask: str, identity: str) -> None:
        self.see(platform, identity)
        self.clear[(platform, mask)].add(identity)

    def _base(self, ident: Ident) -> str:
        hints = self.hints.get(ident, set())
        if len(hints) == 1:
            return next(iter(hints))
        return snake(ident[1], facts(ident[0]).principal_kind[0])  # r: a role, g: a group

    def _facts(self, ident: Ident, dims: list[str]) -> tuple[object, ...]:
        platform, identity = ident
        return tuple(frozenset(self.grants[(platform, d)].get(identity, set())) for d in dims)

    def _agree(self, a: Ident, b: Ident, dims: list[str], masks: list[str]) -> bool:
        if self._facts(a, dims) != self._facts(b, dims):
            return False
        return all(
            (a[1] in self.clear[(a[0], m)]) == (b[1] in self.clear[(b[0], m)]) for m in masks
        )

    def resolve(self) -> tuple[dict[str, dict[str, str]], dict[Ident, str]]:
        """(principal -> {platform: identity}, (platform, identity) -> principal)."""
        sf, dbx = PLATFORMS
        by_platform = {p: sorted(i for q, i in self.identities if q == p) for p in PLATFORMS}
        dims = sorted(
            {d for (p, d) in self.grants if p == sf} & {d for (p, d) in self.grants if p == dbx}
        )
        masks = sorted(
            {m for (p, m) in self.clear if p == sf} & {m for (p, m) in self.clear if p == dbx}
        )
        pairs: dict[str, str] = {}  # snowflake identity -> databricks identity
        base = {i: self._base(i) for i in self.identities}
        named: dict[str, list[str]] = defaultdict(list)
        for identity in by_platform[dbx]:
            named[base[(dbx, identity)]].append(identity)
        for identity in by_platform[sf]:
            found = named.get(base[(sf, identity)], [])
            if len(found) == 1:
                pairs[identity] = found[0]
        if dims:  # the rest by the facts they hold, where those are theirs alone
            left_sf = [i for i in by_platform[sf] if i not in pairs]
            left_dbx = [i for i in by_platform[dbx] if i not in pairs.values()]
            held_sf = defaultdict(list)
            for i in left_sf:
                held_sf[self._facts((sf, i), dims)].append(i)
            held_dbx = defaultdict(list)
            for i in left_dbx:
                held_dbx[self._facts((dbx, i), dims)].append(i)
            for held, ids in held_sf.items():
                if len(ids) == 1 and len(held_dbx.get(held, [])) == 1 and any(held):
                    pairs[ids[0]] = held_dbx[held][0]
        pairs = {s: d for s, d in pairs.items() if self._agree((sf, s), (dbx, d), dims, masks)}
        principals: dict[str, dict[str, str]] = {}
        of: dict[Ident, str] = {}

        def name_for(wanted: str, platform: str) -> str:
            name = wanted
            if name in principals:
                name = f"{wanted}_{platform}"
            n = 2
            while name in principals:
                name, n = f"{wanted}_{platform}_{n}", n + 1
            return name

        for identity in by_platform[sf]:
            other = pairs.get(identity)
            wanted = base[(sf, identity)]
            if other is not None and len(self.hints.get((sf, identity), ())) != 1:
                wanted = (
                    base[(dbx, other)] if len(self.hints.get((dbx, other), ())) == 1 else wanted
                )
            name = name_for(wanted, sf)
            principals[name] = {sf: identity}
            of[(sf, identity)] = name
            if other is not None:
                principals[name][dbx] = other
                of[(dbx, other)] = name
        for identity in by_platform[dbx]:
            if (dbx, identity) in of:
                continue
            name = name_for(base[(dbx, identity)], dbx)
            principals[name] = {dbx: identity}
            of[(dbx, identity)] = name
        return dict(sorted(principals.items())), of
