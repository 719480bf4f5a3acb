"""The values of an exposure diff: what one cell shows, a change of it, its cause, the ACC403
divergences a change introduces or resolves, and the diff as a whole.

A *cell* is what a persona sees of a dataset's rows or of one column, at one place (a surface
reading the dataset, or the dataset's own platform queried directly). Dispositions are
ranked from least to most exposed (:data:`ROW_RANK`, :data:`COLUMN_RANK`), and within
``masked`` by what the masked value reveals (:data:`MASK_LEVEL`); the package docstring of
:mod:`compiler.exposure` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from accord.compiler.core.errors import Location
from accord.compiler.meaning.divergence import Reach
from accord.compiler.model.identities import Identity, identity_subject

Kind = Literal["widening", "narrowing"]
ROW_RANK = {"empty": 0, "denied": 1, "filtered": 2, "clear": 3, "ungoverned": 4}
COLUMN_RANK = {"empty": 0, "denied": 1, "masked": 2, "clear": 3, "ungoverned": 4}
#: the dispositions of Snowflake's projection and aggregation policies, placed by the order of
#: dispositions (compiler/meaning/order.py), not by these ranks: ``aggregated`` is
#: incomparable with ``filtered`` and ``masked``
ORDERED_ONLY = frozenset({"hidden", "aggregated"})
#: what a masked value reveals, per strategy (partial adds its keep_last)
MASK_LEVEL = {"nullify": 0, "redact": 0, "hash": 1, "partial": 3}


@dataclass(frozen=True)
class Cell:
    """One cell: what a persona sees of a dataset's rows or of one column, at one place."""

    disposition: str
    #: rows ``filtered`` by an entitlement dimension: the values shown
    values: frozenset[str] = frozenset()
    dimension: str | None = None
    #: of ``values``, those held only through a date: (value, last day YYYY-MM-DD), sorted
    until: tuple[tuple[str, str], ...] = ()
    #: rows a hand-written predicate decides (not resolved to entitlement values): the
    #: predicate's text on the dataset's platform
    predicate: str | None = None
    #: rows ``aggregated``: the fewest rows of a group answered
    group_size: int = 0
    #: columns ``masked``: strategy, whether salted on this platform, characters kept
    strategy: str | None = None
    salted: bool = True
    keep_last: int = 0

    def mask_level(self) -> tuple[int, int]:
        level = MASK_LEVEL.get(self.strategy or "", 0)
        if self.strategy == "hash" and not self.salted:
            level = 2
        return level, self.keep_last

    def text(self) -> str:
        if self.disposition == "filtered":
            if self.predicate is not None:
                return "filtered (hand-written predicate)"
            dated = dict(self.until)
            shown = [f"{v} until {dated[v]}" if v in dated else v for v in sorted(self.values)]
            return f"filtered ({', '.join(shown) or 'no value'})"
        if self.disposition == "aggregated" and self.group_size:
            return f"aggregated (groups of at least {self.group_size})"
        if self.disposition == "masked" and self.strategy:
            extra = ""
            if self.strategy == "hash" and not self.salted:
                extra = ", unsalted"
            elif self.strategy == "partial":
                extra = f", last {self.keep_last}"
            return f"masked ({self.strategy}{extra})"
        return self.disposition


#: how the note of a change of a grant's ``until`` starts (compiler.exposure.compare)
EXPIRY_NOTE = "grant expiry "

EMPTY = Cell("empty")
UNGOVERNED = Cell("ungoverned")
PLAIN = {d: Cell(d) for d in ROW_RANK.keys() | COLUMN_RANK.keys() | ORDERED_ONLY}


@dataclass(frozen=True)
class Cause:
    location: Location
    #: the dotted path of the located entry, e.g. ``masks.subject_pseudonym.unmasked_for[1]``
    object: str


@dataclass(frozen=True)
class Change:
    kind: Kind
    persona: str
    dataset: str
    #: None: the dataset's rows
    column: str | None
    #: None: the dataset queried directly on its platform
    surface: str | None
    platform: str
    before: Cell
    after: Cell
    values: tuple[str, ...]
    cause: Cause
    identifier: str | None = None
    dimension: str | None = None
    note: str = ""
    #: the platform identity whose view changed (``any caller`` of a surface that answers
    #: every caller alike), and the personas that hold it (none: held by no declared persona)
    identity: Identity | None = None
    personas: tuple[str, ...] = ()
    #: whose view was compared: ``persona`` itself, or an identity
    #: (:func:`compiler.model.identities.subject`); ``persona`` is then the first persona
    #: holding it, "" when none does
    subject: str = ""

    @property
    def of_identity(self) -> bool:
        return identity_subject(self.subject) is not None

    def who(self) -> str:
        """Whose view changed, in words: a persona's own (its identities together), or the
        personas that hold an identity, as that identity."""
        if not self.of_identity:
            return self.persona
        if not self.personas:
            return f"{self.identity} (held by no declared persona)"
        return f"{', '.join(self.personas)} as {self.identity}"

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.kind != "widening",
            self.who(),
            self.dataset,
            self.column is not None,
            (self.column or "").lower(),
            self.surface is not None,
            self.surface or "",
            self.values,
        )

    def what(self) -> str:
        if self.column is None:
            return f"rows of {self.dataset}"
        domain = f" ({self.identifier} identifiers)" if self.identifier else ""
        return f"{self.column}{domain} of {self.dataset}"

    @property
    def gains(self) -> bool:
        """A change within the rows of one dimension: told as values gained or lost."""
        return (
            self.column is None
            and bool(self.values)
            and self.before.disposition == self.after.disposition == "filtered"
        )

    def values_text(self) -> str:
        if self.note.startswith(EXPIRY_NOTE):
            verb = "holds longer" if self.kind == "widening" else "holds for less long"
            return f"{verb} {self.dimension} {', '.join(self.values)}"
        verb = "gains" if self.kind == "widening" else "loses"
        return f"{verb} {self.dimension} {', '.join(self.values)}"

    def transition(self, arrow: str = "->") -> str:
        if self.gains:
            return self.values_text()
        told = f"{self.before.text()} {arrow} {self.after.text()}"
        if self.column is None and self.values and self.dimension:
            told += f": {self.values_text()}"
        return told

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            # the persona whose view changed: its own, or the first that holds the identity
            # (null when no declared persona holds it; every one in ``personas``)
            "persona": self.persona or None,
            "personas": list(self.personas),
            "identity": self.identity.to_json() if self.identity else None,
            "dataset": self.dataset,
            "column": self.column,
            "surface": self.surface,
            "platform": self.platform,
            "before": self.before.disposition,
            "after": self.after.disposition,
            "before_detail": self.before.text(),
            "after_detail": self.after.text(),
            "values": list(self.values),
            "dimension": self.dimension if self.column is None else None,
            "identifier": self.identifier,
            "note": self.note,
            "cause": {
                "file": self.cause.location.file,
                "line": self.cause.location.line,
                "column": self.cause.location.column,
                "object": self.cause.object,
            },
            "message": message(self),
        }


def place_text(surface: str | None, platform: str) -> str:
    return f"on {surface}" if surface is not None else f"directly on {platform}"


def message(c: Change, arrow: str = "->") -> str:
    if c.gains:
        return f"{c.who()} {c.transition(arrow)} of {c.dataset} {place_text(c.surface, c.platform)}"
    return f"{c.who()}: {c.what()} {place_text(c.surface, c.platform)} {c.transition(arrow)}"


@dataclass(frozen=True)
class DivergenceChange:
    """An ACC403 divergence the change introduces (``new``) or resolves (``resolved``)."""

    status: Literal["new", "resolved"]
    facts: tuple[str, str]
    aspect: str
    loose: Reach
    strict: Reach
    personas: tuple[str, ...]
    detail: str
    location: Location

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "facts": list(self.facts),
            "aspect": self.aspect,
            "loose": {
                "surface": self.loose.surface,
                "dataset": self.loose.dataset,
                "column": self.loose.column,
            },
            "strict": {
                "surface": self.strict.surface,
                "dataset": self.strict.dataset,
                "column": self.strict.column,
            },
            "personas": list(self.personas),
            "detail": self.detail,
            "file": self.location.file,
            "line": self.location.line,
            "column": self.location.column,
        }


@dataclass
class ExposureDiff:
    changes: list[Change]
    divergences: list[DivergenceChange]
    #: probes (ACC404) the change introduces, resolves or changes (see :func:`compiler.exposure.probes.probe_changes`)
    probes: list[dict[str, Any]] = field(default_factory=list)
    #: places where both sides are hand-written predicates that could not be executed
    notes: list[str] = field(default_factory=list)
    #: agent endpoints (``a2a.url``) added, changed or removed (see
    #: :func:`compiler.exposure.endpoints.endpoint_changes`)
    endpoints: list[dict[str, Any]] = field(default_factory=list)
    #: probes removed and ``expect`` entries loosened (see
    #: :func:`compiler.exposure.probes.probe_edits`): widenings of what is checked
    probe_edits: list[dict[str, Any]] = field(default_factory=list)
    #: lint settings that lower what fails (see
    #: :func:`compiler.exposure.configuration.config_edits`): widenings of what is checked
    config_edits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def fails(self) -> bool:
        """What ``--fail-on widening`` fails on: a widening, an agent endpoint added or
        changed (persona tokens would go to another host), a probe removed or loosened, or a
        lint setting that lowers what fails."""
        return (
            bool(self.widenings)
            or any(e["widens"] for e in self.endpoints)
            or bool(self.probe_edits)
            or bool(self.config_edits)
        )

    @property
    def widenings(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "widening"]

    @property
    def narrowings(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "narrowing"]
