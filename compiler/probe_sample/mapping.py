"""Each read of the history mapped to the model, or said to be unmappable, and why.

* the table -> the dataset declaring it on that platform (compared without case); a replica
  is a dataset of its own, and a probe of its source reaches it;
* the columns -> the dataset's declared columns the query read (``datasets.*.columns``: the
  masked and identifier columns a probe may name); a read of none of them is a read of the
  rows (column ``None``);
* the session -> principals -> persona(s): Snowflake, the primary and secondary roles (a role
  that is no principal's is ignored when others are, as it grants nothing the model
  governs); Databricks, the user's account groups. The personas whose principals on that
  platform are exactly those: one read may map to several personas that hold the same ones;
* the client, query tag or user -> the surface whose ``traffic`` matches (every key it
  gives); it must read the dataset;
* the entitlement value -> the value of the dataset's row-filter dimension the statement
  provably restricts its read of the table to (:mod:`.filters`), when it is one declared
  value.

What cannot be mapped is an :class:`Unmappable` with its reason: a row whose objects cannot
be read (:attr:`~.history.Read.unreadable`), an unknown table, roles or
groups in no persona, an unrecognised client, a surface that the model does not say reads
the table, a service-identity surface (its queries do not say which persona asked).
"""

from __future__ import annotations

from dataclasses import dataclass

from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.model.identities import identities, identity_of, personas_holding
from accord.compiler.model.probe_places import declared
from accord.compiler.model.schema import PolicyModel
from accord.compiler.probe_sample.filters import restricted_values
from accord.compiler.probe_sample.history import Read


@dataclass(frozen=True, order=True)
class Fact:
    """What one read asked about: the tuple coverage is counted over."""

    persona: str
    surface: str
    dataset: str
    #: a declared column, or None for the rows
    column: str | None
    #: (dimension, value) the statement filtered on, or None
    where: tuple[str, str] | None

    def sort_key(self) -> tuple[str, str, str, str, str]:
        return (
            self.persona,
            self.surface,
            self.dataset,
            self.column or "",
            "=".join(self.where) if self.where else "",
        )

    def text(self) -> str:
        what = f"{self.dataset}.{self.column}" if self.column else f"{self.dataset} (rows)"
        where = f" where {self.where[0]}={self.where[1]}" if self.where else ""
        return f"{self.persona} via {self.surface}: {what}{where}"


@dataclass(frozen=True)
class Unmappable:
    platform: str
    table: str
    reason: str


class Mapper:
    """Maps reads to :class:`Fact` s of one model (indexes built once)."""

    def __init__(self, model: PolicyModel) -> None:
        self.model = model
        self.tables = {
            (ds.platform, ds.table.upper()): name for name, ds in sorted(model.datasets.items())
        }
        #: platform -> folded identity -> principal
        self.by_identity: dict[str, dict[str, str]] = {p: {} for p in PLATFORMS}
        for name, p in sorted(model.principals.items()):
            for platform, table in self.by_identity.items():
                if ident := p.identity(platform):
                    table[facts(platform).fold_identity(str(ident))] = name
        #: (text, platform, column) -> the values the text filters the column on: a
        #: dashboard's statement recurs thousands of times in a window, and is parsed once
        self._filtered: dict[tuple[str, str, str, str], set[str]] = {}

    def map(self, read: Read) -> list[Fact] | Unmappable:
        m = self.model

        def unmappable(reason: str) -> Unmappable:
            return Unmappable(read.platform, read.table, reason)

        if read.unreadable:
            return unmappable(read.unreadable)
        dataset = self.tables.get((read.platform, read.table.upper()))
        if dataset is None:
            return unmappable(f"table {read.table} is no dataset's table on {read.platform}")
        surface = self.surface(read)
        if isinstance(surface, str) and surface.startswith("!"):
            return unmappable(surface[1:])
        assert isinstance(surface, str)
        if dataset not in m.surfaces[surface].reads:
            return unmappable(
                f"{surface} read {dataset}, which the model does not say it reads "
                f"(surfaces.{surface}.reads)"
            )
        if m.surfaces[surface].identity == "service":
            return unmappable(
                f"{surface} runs as a service identity: its queries do not say which persona asked"
            )
        personas = self.personas(read)
        if isinstance(personas, str):
            return unmappable(personas)
        ds = m.datasets[dataset]
        columns = [c for c in (declared(ds.columns, col) for col in read.columns) if c]
        where = self.where(read, dataset)
        return [
            Fact(persona, surface, dataset, column, where)
            for persona in personas
            for column in (sorted(set(columns)) or [None])
        ]

    # ---------------------------------------------------------------- the surface

    def surface(self, read: Read) -> str:
        """The one surface whose traffic matches, or ``!reason``."""
        found = []
        for name, s in sorted(self.model.surfaces.items()):
            t = s.traffic
            if t is None or s.platform not in (read.platform, "none"):
                continue
            if t.query_tag is not None and t.query_tag not in read.tags:
                continue
            if t.client is not None and t.client.lower() not in {c.lower() for c in read.clients}:
                continue
            if t.principal is not None and t.principal.lower() != read.user.lower():
                continue
            found.append(name)
        if len(found) == 1:
            return found[0]
        seen = (
            f"client {', '.join(read.clients) or '(none)'}, query tag "
            f"{', '.join(read.tags) or '(none)'}, user {read.user or '(none)'}"
        )
        if not found:
            return f"!no surface's traffic matches ({seen})"
        return f"!ambiguous: the traffic of {', '.join(found)} matches ({seen})"

    # ---------------------------------------------------------------- the persona

    def personas(self, read: Read) -> list[str] | str:
        """The personas holding exactly the session's principals, or why none."""
        if read.why:
            return read.why
        table = self.by_identity[read.platform]
        platform = facts(read.platform)
        if platform.principal_kind == "role":  # the session's roles
            held = list(read.roles)
            what = f"roles {', '.join(held) or '(none)'}"
        else:  # the user's groups, from the directory
            if read.groups is None:
                return f"the account groups of {read.user or 'the user'} are not known"
            held = list(read.groups)
            what = f"{read.user or 'the user'} (groups {', '.join(held) or 'none'})"
        folded = {platform.fold_identity(i) for i in held}
        found = {table[i] for i in folded if i in table}
        if not found:
            return f"{what}: no principal of the model"
        # by identity: the personas whose own identities there are exactly those the session
        # holds that the model names (an identity another principal also names is the same)
        named = {k for k in folded if k in table}
        out = [
            name
            for name in sorted(self.model.personas)
            if {
                i.key
                for p in self.model.personas[name]
                if (i := identity_of(self.model, p, read.platform)) is not None
            }
            == named
        ]
        if not out:
            unheld = [
                i
                for i in identities(self.model, read.platform)
                if i.key in named and not personas_holding(self.model, i)
            ]
            if unheld:
                said = ", ".join(str(i) for i in unheld)
                return f"{what}: {said} held by no declared persona"
            return f"{what} hold principals {', '.join(sorted(found))}, which are no persona's"
        return out

    # ---------------------------------------------------------------- the entitlement value

    def where(self, read: Read, dataset: str) -> tuple[str, str] | None:
        rf = self.model.datasets[dataset].row_filter
        if rf is None or rf.entitlement is None or rf.column is None or not read.text:
            return None
        asked = (read.text, read.platform, rf.column, read.table)
        values = self._filtered.get(asked)
        if values is None:
            values = self._filtered[asked] = restricted_values(*asked) or set()
        known = self.model.entitlements.get(rf.entitlement, {})
        if len(values) == 1 and next(iter(values)) in known:
            return (rf.entitlement, next(iter(values)))
        return None
