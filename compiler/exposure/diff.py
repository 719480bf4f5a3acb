"""``accord diff``: what a change of the model changes in who sees what.

Both models are read through :mod:`compiler.meaning.semantics` (one :class:`~compiler.meaning.semantics.
Perspective` per persona and model, the same views ``accord analyze`` tabulates and
``accord lint``/``accord verify`` rely on); nothing here decides what a persona may see. For
every persona, every dataset of a governed replica group (the replicas side by side), every
governed or identifier column of the group, and every *place* the dataset is read -- each
surface that reads it, and the dataset's own platform queried directly -- the disposition
before and after is compared, and only what changed is listed.

Dispositions, from least to most exposed (the order that defines a *widening*):

* rows: ``empty`` < ``denied`` < ``filtered`` < ``clear`` < ``ungoverned``;
* columns: ``empty`` < ``denied`` < ``masked`` < ``clear`` < ``ungoverned``.

``empty``: the place does not read the dataset (a surface that does not list it in
``reads``, or a persona the model does not declare). ``ungoverned`` is above ``clear``: the
same values are shown, but no policy stands between the persona and them any more. A
dataset missing from one model is ``ungoverned`` when queried directly on its platform (its
table carries no accord policy) and ``empty`` on every surface.

Within ``filtered`` rows of one entitlement dimension, entitlement values gained are a
widening and values lost a narrowing (a change may give both: two entries). A row set a
hand-written predicate decides is resolved by executing the predicate (see
:func:`resolve_expressions`); when it cannot be compared with the other side (a predicate
over no entitlement dimension, or a filter moved to another dimension) the change is listed
as a widening: accord never reports "no change" for what it could not compare.

Within ``masked``, what the masked value reveals: ``nullify`` = ``redact`` (nothing) <
``hash`` with a salt on the column's platform (equality: rows can be counted, grouped and
joined within the platform) < ``hash`` without one (the digest is the same on every platform
and a dictionary reverses it) < ``partial`` (characters of the value; more kept is more).
Masks that reveal the same (``nullify`` <-> ``redact``, another redaction text) are no change
in exposure.

Each change names where the head model causes it: the first input of the cell that differs
between the models (the surface's reads and enforcement, the persona's principals, the
dataset's row filter, the entitlement grants and the mask's ``unmasked_for`` of the
persona's principals, the mask's strategy, the column's mask), located with the same source
map as lint findings; a removed entry is located at its nearest surviving parent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from compiler.core.errors import Diagnostic, Location
from compiler.meaning import divergence, semantics
from compiler.meaning.analyze import governed_groups
from compiler.model.schema import PolicyModel
from compiler.model.validate import Project

Kind = Literal["widening", "narrowing"]
ROW_RANK = {"empty": 0, "denied": 1, "filtered": 2, "clear": 3, "ungoverned": 4}
COLUMN_RANK = {"empty": 0, "denied": 1, "masked": 2, "clear": 3, "ungoverned": 4}
#: what a masked value reveals, per strategy (partial adds its keep_last)
MASK_LEVEL = {"nullify": 0, "redact": 0, "hash": 1, "partial": 3}


@dataclass(frozen=True)
class State:
    """One cell: what a persona sees of a dataset's rows or of one column, at one place."""

    disposition: str
    #: rows ``filtered`` by an entitlement dimension: the values shown
    values: frozenset[str] = frozenset()
    dimension: str | None = None
    #: rows a hand-written predicate decides (not resolved to entitlement values): the
    #: predicate's text on the dataset's platform
    predicate: str | None = None
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
            return f"filtered ({', '.join(sorted(self.values)) or 'no value'})"
        if self.disposition == "masked" and self.strategy:
            extra = ""
            if self.strategy == "hash" and not self.salted:
                extra = ", unsalted"
            elif self.strategy == "partial":
                extra = f", last {self.keep_last}"
            return f"masked ({self.strategy}{extra})"
        return self.disposition


EMPTY = State("empty")
UNGOVERNED = State("ungoverned")
_PLAIN = {d: State(d) for d in ROW_RANK.keys() | COLUMN_RANK.keys()}


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
    before: State
    after: State
    values: tuple[str, ...]
    cause: Cause
    identifier: str | None = None
    dimension: str | None = None
    note: str = ""

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.kind != "widening",
            self.persona,
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
            "persona": self.persona,
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
        return (
            f"{c.persona} {c.transition(arrow)} of {c.dataset} {place_text(c.surface, c.platform)}"
        )
    return f"{c.persona}: {c.what()} {place_text(c.surface, c.platform)} {c.transition(arrow)}"


@dataclass(frozen=True)
class DivergenceChange:
    """An ACC403 divergence the change introduces (``new``) or resolves (``resolved``)."""

    status: Literal["new", "resolved"]
    facts: tuple[str, str]
    aspect: str
    loose: divergence.Reach
    strict: divergence.Reach
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
    #: probes (ACC404) the change introduces, resolves or changes (see :func:`probe_changes`)
    probes: list[dict[str, Any]] = field(default_factory=list)
    #: places where both sides are hand-written predicates that could not be executed
    notes: list[str] = field(default_factory=list)

    @property
    def widenings(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "widening"]

    @property
    def narrowings(self) -> list[Change]:
        return [c for c in self.changes if c.kind == "narrowing"]


# --------------------------------------------------------------------------------------------
# cells, read from semantics

Key = tuple[str, str, str | None, str | None]  # persona, dataset, folded column or None, place


class Cells:
    """Every cell of one model: persona x dataset x (rows, columns) x place."""

    def __init__(self, model: PolicyModel, datasets: list[str], also: dict[str, list[str]]):
        self.model = model
        self.datasets = datasets
        self.also = also
        self.places = _readers(model)
        self._reads = {d: set(v) for d, v in self.places.items()}
        self._extras: dict[str, list[str]] = {}
        self.grants = json.dumps(model.entitlements, sort_keys=True)
        self._column_states: dict[tuple[str, str | None, str], State] = {}
        shared: dict[tuple[str, ...], object] = {}
        self.perspectives = {
            p: semantics.Perspective(model, p, shared) for p in sorted(model.personas)
        }

    def at(self, persona: str, dataset: str, place: str | None) -> dict[str | None, State] | None:
        """The cells of one view: None (the rows) and each folded column name to its state;
        None when this model has no such view (persona or dataset not declared, or a
        surface that does not read the dataset)."""
        persp = self.perspectives.get(persona)
        ds = self.model.datasets.get(dataset)
        if persp is None or ds is None or (place is not None and place not in self._reads[dataset]):
            return None
        view = persp.view(dataset, place, self._extra(dataset, ds))
        out: dict[str | None, State] = {None: self._row_state(view, ds)}
        for cv in view.columns:
            out[cv.column.lower()] = self._column_state(cv, ds)
        return out

    def _extra(self, dataset: str, ds: Any) -> list[str]:
        """The columns of ``also`` the dataset does not govern itself (most have none)."""
        found = self._extras.get(dataset)
        if found is None:
            own = {c.lower() for c in semantics.governed_columns(ds)}
            found = self._extras[dataset] = [
                c for c in self.also.get(dataset, []) if c.lower() not in own
            ]
        return found

    def _row_state(self, view: semantics.DatasetView, ds: Any) -> State:
        disp = view.row_disposition
        if disp != "filtered":
            return _PLAIN[disp]
        if view.rows.expression:
            # what the predicate may read: its text, the persona's identities on the
            # platform and the grants (the mapping tables); unresolved, a change of any of
            # them is a change of the rows it admits
            rf = ds.row_filter
            text = (rf.expression or {}).get(ds.platform, "") if rf is not None else ""
            held = sorted(
                str(self.model.principals[p].identity(ds.platform))
                for p in semantics.principals_on(self.model, view.persona, ds.platform)
            )
            return State(disp, predicate=json.dumps([text, held, self.grants]))
        return State(disp, values=view.rows.values, dimension=view.rows.dimension)

    def _column_state(self, cv: semantics.ColumnView, ds: Any) -> State:
        key = (cv.disposition, cv.mask if cv.disposition == "masked" else None, ds.platform)
        found = self._column_states.get(key)
        if found is None:
            if cv.disposition != "masked" or cv.mask is None:
                found = State(cv.disposition)
            else:
                mask = self.model.masks[cv.mask]
                found = State(
                    "masked",
                    strategy=mask.strategy,
                    salted=bool((mask.salt or {}).get(ds.platform)),  # type: ignore[call-overload]
                    keep_last=mask.keep_last or 0,
                )
            self._column_states[key] = found
        return found


def _groups(model: PolicyModel) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        out.setdefault(model.replica_root(d), []).append(d)
    return out


def _columns_shown(
    base: PolicyModel, head: PolicyModel, datasets: list[str]
) -> dict[str, list[str]]:
    """Per dataset, the columns its replica group governs in either model (a replica that
    lost its mask must still show the column)."""
    union: dict[str, dict[str, str]] = {}
    for model in (base, head):
        for members in _groups(model).values():
            cols: dict[str, str] = {}
            for d in members:
                for c in semantics.governed_columns(model.datasets[d]):
                    cols.setdefault(c.lower(), c)
            for d in members:
                mine = union.setdefault(d, {})
                for k, v in cols.items():
                    mine.setdefault(k, v)
    return {d: sorted(union.get(d, {}).values(), key=str.lower) for d in datasets}


# --------------------------------------------------------------------------------------------
# comparing two cells


def _declared(models: Iterable[PolicyModel], dimension: str | None) -> frozenset[str]:
    if dimension is None:
        return frozenset()
    return frozenset(v for m in models for v in m.entitlements.get(dimension, {}))


def compare_rows(
    before: State,
    after: State,
    declared: Callable[[str | None], frozenset[str]],
    dimension: str | None = None,
) -> list[tuple[Kind, tuple[str, ...], str]]:
    """(kind, entitlement values gained or lost, note) for a change of a row cell.
    ``declared(dim)``: every value of a dimension; ``dimension``: the dataset's (for a change
    between every row and none, whose values are all of them)."""
    if before == after:
        return []
    rb, ra = ROW_RANK[before.disposition], ROW_RANK[after.disposition]
    if rb == ra == ROW_RANK["filtered"]:
        if before.predicate is not None or after.predicate is not None:
            return [
                (
                    "widening",
                    (),
                    "a hand-written predicate changed: accord cannot compare "
                    "the rows it admits, so this is listed as a widening",
                )
            ]
        if before.dimension != after.dimension:
            return [
                (
                    "widening",
                    tuple(sorted(after.values)),
                    f"rows now filtered by {after.dimension} instead of {before.dimension}: "
                    "not comparable, listed as a widening",
                )
            ]
        out: list[tuple[Kind, tuple[str, ...], str]] = []
        gained = after.values - before.values
        lost = before.values - after.values
        if gained:
            out.append(("widening", tuple(sorted(gained)), ""))
        if lost:
            out.append(("narrowing", tuple(sorted(lost)), ""))
        return out
    if rb == ra:
        return []
    if ra > rb:
        shown_before = before.values if before.disposition == "filtered" else frozenset()
        if after.disposition == "filtered":
            gained = after.values - shown_before
        elif before.disposition == "filtered":
            gained = declared(before.dimension) - shown_before
        elif rb < ROW_RANK["filtered"] < ra:  # from no rows to every row
            gained = declared(dimension)
        else:
            gained = frozenset()
        return [("widening", tuple(sorted(gained)), "")]
    shown_after = after.values if after.disposition == "filtered" else frozenset()
    if before.disposition == "filtered":
        lost = before.values - shown_after
    elif after.disposition == "filtered":
        lost = declared(after.dimension) - shown_after
    elif ra < ROW_RANK["filtered"] < rb:  # from every row to none
        lost = declared(dimension)
    else:
        lost = frozenset()
    return [("narrowing", tuple(sorted(lost)), "")]


def compare_columns(before: State, after: State) -> Kind | None:
    rb, ra = COLUMN_RANK[before.disposition], COLUMN_RANK[after.disposition]
    if rb == ra == COLUMN_RANK["masked"]:
        lb, la = before.mask_level(), after.mask_level()
        if lb == la:
            return None
        return "widening" if la > lb else "narrowing"
    if rb == ra:
        return None
    return "widening" if ra > rb else "narrowing"


# --------------------------------------------------------------------------------------------
# causes


Path_ = tuple[Any, ...]


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

    def __init__(self, base: Project, head: Project):
        self.base = base
        self.head = head
        self.b = base.model
        self.h = head.model

    def _principals(self, persona: str) -> list[str]:
        seen: dict[str, None] = {}
        for m in (self.b, self.h):
            seen.update(dict.fromkeys(m.personas.get(persona, [])))
        return list(seen)

    def _held(self, m: PolicyModel, persona: str, platform: str) -> frozenset[str]:
        if persona not in m.personas:
            return frozenset()
        return frozenset(semantics.principals_on(m, persona, platform))

    def _membership(
        self,
        persona: str,
        platform: str,
        path: Path_,
        before: list[str] | None,
        after: list[str] | None,
    ) -> Path_ | None:
        """A list of principals (``unmasked_for``, a grant, ``unfiltered_for``) as it concerns
        the persona: the head item that gained the persona a principal, else the list."""
        mine_b = self._held(self.b, persona, platform) & set(before or [])
        mine_h = self._held(self.h, persona, platform) & set(after or [])
        if after is None and mine_b:  # the entry is gone: its parent
            return path[:-1]
        if mine_b == mine_h:
            return None
        for i, p in enumerate(after or []):
            if p in mine_h and p not in mine_b:
                return (*path, i)
        return path

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
                if sh.platform == "databricks" and _style(b) != _style(h):
                    yield ("platforms", "databricks", "style")
        pb, ph = b.personas.get(c.persona), h.personas.get(c.persona)
        if pb != ph:
            if pb is None or ph is None:
                yield ("personas", c.persona)
            else:
                added = [i for i, p in enumerate(ph) if p not in pb]
                yield ("personas", c.persona, added[0]) if added else ("personas", c.persona)
        db, dh = b.datasets.get(d), h.datasets.get(d)
        if (db is None) != (dh is None):
            yield ("datasets", d)
            return
        assert db is not None and dh is not None
        platform = dh.platform
        if db.platform != dh.platform:
            yield ("datasets", d, "platform")
        for p in self._principals(c.persona):
            ib = b.principals[p].identity(platform) if p in b.principals else None
            ih = h.principals[p].identity(platform) if p in h.principals else None
            if ib != ih:
                yield ("principals", p, platform) if ih else ("principals", p)
        if c.column is not None:
            yield from self._column_candidates(c, db, dh, platform)
        yield from self._row_candidates(c, db, dh, platform)
        if db.governed != dh.governed:
            yield ("datasets", d, "columns")

    def _column_candidates(
        self, c: Change, db: Any, dh: Any, platform: str
    ) -> Iterator[Path_ | None]:
        folded = (c.column or "").lower()
        nb = next((n for n in db.columns if n.lower() == folded), None)
        nh = next((n for n in dh.columns if n.lower() == folded), None)
        cb = db.columns.get(nb) if nb else None
        ch = dh.columns.get(nh) if nh else None
        where = ("datasets", c.dataset, "columns")
        if (cb is None or cb.mask is None) != (ch is None or ch.mask is None):
            yield (
                (*where, nh, "mask")
                if ch is not None and ch.mask
                else ((*where, nh) if nh else where)
            )
        mb = cb.mask if cb else None
        mh = ch.mask if ch else None
        if mb != mh:
            yield (*where, nh, "mask")
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

    def _row_candidates(self, c: Change, db: Any, dh: Any, platform: str) -> Iterator[Path_ | None]:
        rb, rh = db.row_filter, dh.row_filter
        where = ("datasets", c.dataset, "row_filter")
        if (rb is None) != (rh is None):
            yield where if rh is not None else ("datasets", c.dataset)
            return
        if rb is None or rh is None:
            return
        for name in ("entitlement", "column", "expression", "arguments"):
            if getattr(rb, name) != getattr(rh, name):
                yield (*where, name)
        yield self._membership(
            c.persona, platform, (*where, "unfiltered_for"), rb.unfiltered_for, rh.unfiltered_for
        )
        # an entitlement filter reads its dimension; a hand-written predicate any mapping table
        dims = [rh.entitlement] if rh.entitlement else sorted(self.h.entitlements)
        for dim in dims:
            grants_b = self.b.entitlements.get(dim, {})
            grants_h = self.h.entitlements.get(dim, {})
            values = list(c.values) or sorted(grants_b.keys() | grants_h.keys())
            for v in values:
                found = self._membership(
                    c.persona, platform, ("entitlements", dim, v), grants_b.get(v), grants_h.get(v)
                )
                if found is not None:
                    yield found


def _style(m: PolicyModel) -> str:
    return m.platforms.databricks.style if m.platforms.databricks else "table"


# --------------------------------------------------------------------------------------------
# the diff


def _datasets(base: PolicyModel, head: PolicyModel) -> list[str]:
    found = dict.fromkeys(governed_groups(head))
    found.update(dict.fromkeys(governed_groups(base)))
    return sorted(found)


def exposure_diff(base: Project, head: Project) -> ExposureDiff:
    """Every change in what a persona sees, widenings first; the ACC403 divergences the
    change introduces or resolves."""
    b, h = base.model, head.model
    datasets = _datasets(b, h)
    also = _columns_shown(b, h, datasets)
    if _inputs(b) == _inputs(h):
        rb, rh = _readers(b), _readers(h)
        datasets = [d for d in datasets if not _same_inputs(b, h, d, rb, rh)]
    cells_b, cells_h = Cells(b, datasets, also), Cells(h, datasets, also)
    notes: list[str] = []
    resolved_b = resolve_expressions(base, datasets, notes)
    resolved_h = resolve_expressions(head, datasets, notes)
    causes = Causes(base, head)

    def declared(dim: str | None) -> frozenset[str]:
        return _declared((b, h), dim)

    changes: list[Change] = []
    changed: set[str] = set()
    for persona in sorted(b.personas.keys() | h.personas.keys()):
        for d in datasets:
            places = dict.fromkeys([None, *cells_b.places.get(d, []), *cells_h.places.get(d, [])])
            for place in places:
                vb, va = cells_b.at(persona, d, place), cells_h.at(persona, d, place)
                if vb == va:
                    continue
                changed.add(persona)
                for col in dict.fromkeys([*(va or {}), *(vb or {})]):
                    key: Key = (persona, d, col, place)
                    sb = _resolved((vb or {}).get(col) or _absent(b, key), key, resolved_b)
                    sa = _resolved((va or {}).get(col) or _absent(h, key), key, resolved_h)
                    if sb != sa:
                        changes.extend(_changes(key, sb, sa, b, h, also, declared, causes))
    changes.sort(key=Change.sort_key)
    # a persona none of whose views changed keeps its divergences, unless what they compare
    # (replica groups, identifier domains, governed columns, who reads what) changed
    personas = None if _structure(b) != _structure(h) else sorted(changed)
    notes.extend(index_notes(b, h))
    return ExposureDiff(
        changes,
        divergence_changes(base, head, personas),
        probe_changes(base, head),
        notes,
    )


def index_notes(base: PolicyModel, head: PolicyModel) -> list[str]:
    """Indexes are not places the views read (a surface reads datasets), so a change of one
    is not compared per persona; it is said, never passed over (``accord lint`` checks
    indexes: ACC301)."""
    from compiler.plan.source import outside_catalogs

    return [
        f"{note}: not compared per persona (an index is no surface); see `accord lint` (ACC301)"
        for note in outside_catalogs(base, head)
        if note.startswith("indexes.")
    ]


def _structure(model: PolicyModel) -> str:
    """What :func:`compiler.meaning.divergence.divergences` compares, apart from the views."""
    return json.dumps(
        [
            {d: model.replica_root(d) for d in model.datasets},
            {
                d: [[c, v.identifier] for c, v in ds.columns.items() if v.identifier]
                for d, ds in model.datasets.items()
            },
            {d: semantics.governed_columns(ds) for d, ds in model.datasets.items()},
            {d: ds.governed for d, ds in model.datasets.items()},
            _readers(model),
            {s: semantics.enforcement(model, s).mode for s in model.surfaces},
        ],
        sort_keys=True,
    )


def _readers(model: PolicyModel) -> dict[str, list[str]]:
    """Per dataset, the surfaces that read it (:func:`compiler.meaning.divergence.reaches`)."""
    return {d: list(dict.fromkeys(s for s, _ in r)) for d, r in divergence.reaches(model).items()}


def _inputs(model: PolicyModel) -> tuple[Any, ...]:
    """What every view reads: platforms, principals, personas."""
    return (model.platforms, model.principals, model.personas)


def _same_inputs(
    b: PolicyModel,
    h: PolicyModel,
    dataset: str,
    readers_b: dict[str, list[str]],
    readers_h: dict[str, list[str]],
) -> bool:
    """Whether the views of ``dataset`` are computed from the same inputs in both models
    (given the same :func:`_inputs`): the dataset, its masks, the grants its filter reads
    (every grant for a hand-written predicate, which may read any mapping table), and the
    surfaces that read it. Then its views are the same and it is not read again: a diff of
    a small change costs little more than loading the two models."""
    db, dh = b.datasets.get(dataset), h.datasets.get(dataset)
    if db is None or dh is None or db != dh:
        return False
    if any(b.masks.get(c.mask) != h.masks.get(c.mask) for c in dh.columns.values() if c.mask):
        return False
    rf = dh.row_filter
    if rf is not None:
        if rf.expression is not None:
            if b.entitlements != h.entitlements:
                return False
        elif b.entitlements.get(rf.entitlement or "") != h.entitlements.get(rf.entitlement or ""):
            return False
    sb, sh = readers_b.get(dataset, []), readers_h.get(dataset, [])
    return sb == sh and all(b.surfaces[s] == h.surfaces[s] for s in sh)


def _absent(model: PolicyModel, key: Key) -> State:
    """A cell one model has no view of: a dataset it does not declare is ungoverned on its
    platform; any other missing place (a surface that does not read it, a persona it does
    not declare) is empty."""
    persona, dataset, _, place = key
    if place is None and dataset not in model.datasets and persona in model.personas:
        return UNGOVERNED
    return EMPTY


def _resolved(state: State, key: Key, resolved: dict[tuple[str, str], State | None]) -> State:
    if state.predicate is None or key[2] is not None:
        return state
    found = resolved.get((key[0], key[1]))
    return found if found is not None else state


def _changes(
    key: Key,
    sb: State,
    sa: State,
    b: PolicyModel,
    h: PolicyModel,
    also: dict[str, list[str]],
    declared: Callable[[str | None], frozenset[str]],
    causes: Causes,
) -> Iterator[Change]:
    """The changes of one cell (a row change may be two: values gained and values lost),
    each with its cause."""
    persona, dataset, folded, place = key
    versions = [m.datasets[dataset] for m in (h, b) if dataset in m.datasets]
    column = identifier = dimension = None
    if folded is not None:
        specs = [(n, v) for ds in versions for n, v in ds.columns.items() if n.lower() == folded]
        column = (
            specs[0][0]
            if specs
            else next((c for c in also.get(dataset, []) if c.lower() == folded), folded)
        )
        identifier = next((v.identifier for _, v in specs if v.identifier), None)
        kind = compare_columns(sb, sa)
        found: list[tuple[Kind, tuple[str, ...], str]] = [(kind, (), "")] if kind else []
    else:
        dimension = sa.dimension or sb.dimension or next(
            (ds.row_filter.entitlement for ds in versions
             if ds.row_filter is not None and ds.row_filter.entitlement),
            None,
        )  # fmt: skip
        found = compare_rows(sb, sa, declared, dimension)
    nowhere = Cause(Location("", 0, 0), "")
    for kind, values, note in found:
        draft = Change(
            kind, persona, dataset, column, place, versions[0].platform, sb, sa, values,
            nowhere, identifier, dimension, note,
        )  # fmt: skip
        yield replace(draft, cause=causes.find(draft))


# --------------------------------------------------------------------------------------------
# hand-written predicates


def resolve_expressions(
    project: Project, datasets: list[str], notes: list[str] | None = None
) -> dict[tuple[str, str], State | None]:
    """(persona, dataset) -> the rows a hand-written row predicate admits, as entitlement
    values, by executing it (``accord verify``'s engine, on DuckDB), for datasets whose
    predicate reads a column the replica group filters by an entitlement dimension. Nothing
    is executed (and duckdb not imported) when no dataset has a hand-written predicate."""
    model = project.model
    wanted = [
        d
        for d in datasets
        if d in model.datasets
        and model.datasets[d].row_filter is not None
        and model.datasets[d].row_filter.expression is not None  # type: ignore[union-attr]
    ]
    if not wanted:
        return {}
    from compiler.verify.admitted import admitted_rows

    try:
        admitted = admitted_rows(project, wanted)
    except Exception as err:  # any failure leaves the predicates unresolved, and said so
        if notes is not None:
            told = "; ".join(str(err).splitlines()[:3])
            notes.append(
                f"the hand-written row predicates of {', '.join(wanted)} in {project.origin.file} "
                f"could not be executed ({type(err).__name__}: {told}): their rows are compared "
                "as written, and any change of them is listed as a widening"
            )
        return {}
    out: dict[tuple[str, str], State | None] = {}
    for (persona, dataset), (dimension, values, everything) in admitted.items():
        if everything:
            out[(persona, dataset)] = State("clear")
        elif dimension is None or values is None:
            out[(persona, dataset)] = None
        elif not values:
            out[(persona, dataset)] = State("denied")
        else:
            out[(persona, dataset)] = State("filtered", values=values, dimension=dimension)
    return out


# --------------------------------------------------------------------------------------------
# divergences and probes


def _divergence_key(d: divergence.Divergence) -> tuple[Any, ...]:
    return (d.facts, d.aspect, d.loose.surface, d.loose.dataset, (d.loose.column or "").lower())


def divergence_changes(
    base: Project, head: Project, personas: list[str] | None = None
) -> list[DivergenceChange]:
    """ACC403 divergences (as lint computes them: :func:`compiler.meaning.divergence.divergences`)
    present in one model and not the other, one entry per loose place with its personas;
    only for ``personas`` when given (those whose divergences may differ)."""
    out: list[DivergenceChange] = []
    if personas is not None and not personas:
        return out
    found_b = divergence.divergences(
        base.model,
        [p for p in personas or base.model.personas if p in base.model.personas],
        refused_as_intended=True,
    )
    found_h = divergence.divergences(
        head.model,
        [p for p in personas or head.model.personas if p in head.model.personas],
        refused_as_intended=True,
    )
    for status, mine, other, project in (
        ("new", found_h, found_b, head),
        ("resolved", found_b, found_h, base),
    ):
        theirs = {(d.persona, *_divergence_key(d)) for d in other}
        grouped: dict[tuple[Any, ...], list[divergence.Divergence]] = {}
        for d in mine:
            if (d.persona, *_divergence_key(d)) not in theirs:
                grouped.setdefault(_divergence_key(d), []).append(d)
        for _key, items in sorted(grouped.items()):
            first = items[0]
            s = first.loose.surface
            m = project.model
            if status == "new":
                path: Path_ = (
                    "surfaces",
                    s,
                    "reads",
                    m.surfaces[s].reads.index(first.loose.dataset),
                )
            else:
                hs = head.model.surfaces.get(s)
                path = ("surfaces", s, "reads") if hs is not None else ("surfaces", s)
            out.append(
                DivergenceChange(
                    status,  # type: ignore[arg-type]
                    first.facts,
                    first.aspect,
                    first.loose,
                    first.strict,
                    tuple(sorted({d.persona for d in items})),
                    first.detail,
                    locate(head, path).location,
                )
            )
    return out


def probe_changes(base: Project, head: Project) -> list[dict[str, Any]]:
    """Probes (ACC404): each probe outcome (probe, surface) that fails in the head and did
    not before (``introduced``), passes in the head and failed before (``resolved``), or
    fails on both sides with another answer (``changed``), from ``compiler.meaning.probes.evaluate``
    on each model (the function lint's ACC404 uses)."""
    from compiler.meaning import probes

    def outcomes(p: Project) -> dict[tuple[str, str], Any]:
        return {(o.probe, o.surface): o for o in probes.evaluate(p.model)}

    before, after = outcomes(base), outcomes(head)
    out: list[dict[str, Any]] = []
    for key in sorted(before.keys() | after.keys()):
        b, a = before.get(key), after.get(key)
        if a is not None and not a.ok and (b is None or b.ok):
            status = "introduced"
        elif a is not None and a.ok and b is not None and not b.ok:
            status = "resolved"
        elif a is not None and b is not None and not a.ok and a.actual != b.actual:
            status = "changed"
        else:
            continue
        loc = locate(head, ("probes", key[0], "expect", key[1])).location
        out.append(
            {
                "probe": key[0],
                "surface": key[1],
                "persona": a.persona,
                "expected": a.expected,
                "before": b.actual if b is not None else None,
                "was_probed": b is not None,
                "after": a.actual,
                "status": status,
                "file": loc.file,
                "line": loc.line,
                "column": loc.column,
            }
        )
    return out


# --------------------------------------------------------------------------------------------
# rendering


def verdict(d: ExposureDiff) -> str:
    if not d.changes and d.notes:
        n = len(d.notes)
        return f"no change in exposure on any surface; {n} note{'s' if n != 1 else ''} to read"
    if not d.changes:
        return "no change in exposure"
    w, n = len(d.widenings), len(d.narrowings)
    return f"{w} widening{'s' if w != 1 else ''}, {n} narrowing{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class Line:
    """Changes that differ only by place, shown as one line."""

    first: Change
    places: tuple[str | None, ...]
    everywhere: bool

    def where(self) -> str:
        c = self.first
        if self.everywhere and len(self.places) > 1:
            if None in self.places:
                return f"on every surface reading {c.dataset} (and directly on {c.platform})"
            return f"on every surface reading {c.dataset}"
        return ", ".join(place_text(p, c.platform) for p in self.places)

    def text(self, arrow: str = "->") -> str:
        c = self.first
        if c.gains:
            of = "" if self.everywhere and len(self.places) > 1 else f" of {c.dataset}"
            return f"{c.persona} {c.transition(arrow)}{of} {self.where()}"
        return f"{c.persona}: {c.what()} {self.where()} {c.transition(arrow)}"


def lines(d: ExposureDiff, kind: Kind, all_places: dict[str, tuple[str | None, ...]]) -> list[Line]:
    grouped: dict[tuple[Any, ...], list[Change]] = {}
    for c in d.changes:
        if c.kind != kind:
            continue
        key = (
            c.persona,
            c.dataset,
            (c.column or "").lower(),
            c.before,
            c.after,
            c.values,
            c.cause,
            c.note,
        )
        grouped.setdefault(key, []).append(c)
    out = []
    for items in grouped.values():
        places = tuple(c.surface for c in items)
        out.append(Line(items[0], places, set(places) == set(all_places.get(items[0].dataset, ()))))
    return out


def places_of(base: PolicyModel, head: PolicyModel) -> dict[str, tuple[str | None, ...]]:
    """Per dataset, every place it is read in either model (None: directly)."""
    out: dict[str, dict[str | None, None]] = {}
    for m in (base, head):
        for d, surfaces in _readers(m).items():
            out.setdefault(d, {None: None}).update(dict.fromkeys(surfaces))
    return {d: tuple(v) for d, v in out.items()}


def _cause_text(c: Change) -> str:
    loc = c.cause.location
    return f"{loc}" + (f" ({c.cause.object})" if c.cause.object else "")


def to_text(d: ExposureDiff, places: dict[str, tuple[str | None, ...]]) -> str:
    out = []
    for kind, title in (("widening", "Widenings"), ("narrowing", "Narrowings")):
        found = lines(d, kind, places)  # type: ignore[arg-type]
        if not found:
            continue
        out.append(f"{title}:")
        for line in found:
            out.append(f"  {line.text()}")
            out.append(f"      caused by {_cause_text(line.first)}")
            if line.first.note:
                out.append(f"      note: {line.first.note}")
    for status in ("new", "resolved"):
        found_d = [x for x in d.divergences if x.status == status]
        if found_d:
            out.append(f"{'New' if status == 'new' else 'Resolved'} divergences (ACC403):")
            out.extend(f"  {x.location}: {x.detail} (for {', '.join(x.personas)})" for x in found_d)
    out.extend(_probe_lines(d))
    out.extend(f"note: {n}" for n in d.notes)
    out.append(f"accord diff: {verdict(d)}")
    return "\n".join(out)


def _probe_answer(actual: str | None, probed: bool) -> str:
    if not probed:
        return "no such probe"
    return actual if actual is not None else "cannot tell"


def probe_text(p: dict[str, Any]) -> str:
    return (
        f"probe {p['probe']} ({p['persona']} on {p['surface']}, expects {p['expected']}): "
        f"{p['status']}, {_probe_answer(p['before'], p['was_probed'])} -> "
        f"{_probe_answer(p['after'], True)}"
    )


def _probe_lines(d: ExposureDiff) -> list[str]:
    if not d.probes:
        return []
    return [
        "Probes (ACC404):",
        *[f"  {p['file']}:{p['line']}:{p['column']}: {probe_text(p)}" for p in d.probes],
    ]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(d: ExposureDiff, places: dict[str, tuple[str | None, ...]]) -> str:
    out = ["<!-- accord diff -->", "### accord diff: who sees what", "", f"**{verdict(d)}**", ""]
    header = "| persona | what | where | change | caused by |\n|---|---|---|---|---|"
    for kind, title in (("widening", "Widenings"), ("narrowing", "Narrowings")):
        found = lines(d, kind, places)  # type: ignore[arg-type]
        out.append(f"#### {title}: {sum(len(x.places) for x in found)}")
        out.append("")
        if not found:
            out += ["_none_", ""]
            continue
        out.append(header)
        for line in found:
            c = line.first
            change = c.transition("→") + (f" ({c.note})" if c.note else "")
            out.append(
                f"| {_md(c.persona)} | {_md(c.what())} | {_md(line.where())} | {_md(change)} | "
                f"`{_md(_cause_text(c))}` |"
            )
        out.append("")
    for status, title in (
        ("new", "New divergences (ACC403)"),
        ("resolved", "Resolved divergences (ACC403)"),
    ):
        found_d = [x for x in d.divergences if x.status == status]
        out.append(f"#### {title}: {len(found_d)}")
        out.append("")
        if not found_d:
            out += ["_none_", ""]
            continue
        out.append("| looser surface | facts | detail | personas | at |\n|---|---|---|---|---|")
        for x in found_d:
            out.append(
                f"| {_md(x.loose.surface)} | {_md(' '.join(x.facts))} | {_md(x.detail)} | "
                f"{_md(', '.join(x.personas))} | `{x.location}` |"
            )
        out.append("")
    out.append("#### Probes (ACC404)")
    out.append("")
    if not d.probes:
        out.append("_no probe changes its outcome_")
    else:
        out.extend(f"- {_md(probe_text(p))} (`{p['file']}:{p['line']}`)" for p in d.probes)
    out.append("")
    if d.notes:
        out += ["#### Notes", "", *[f"- {_md(n)}" for n in d.notes], ""]
    return "\n".join(out)


def to_json(d: ExposureDiff, errors: list[Diagnostic] | None = None) -> str:
    doc: dict[str, Any] = {
        "changes": [c.to_json() for c in d.changes],
        "divergences": [x.to_json() for x in d.divergences],
        "probes": d.probes,
        "notes": d.notes,
        "summary": {
            "widenings": len(d.widenings),
            "narrowings": len(d.narrowings),
            "verdict": verdict(d),
        },
    }
    if errors is not None:
        doc["errors"] = [
            {
                "file": e.location.file,
                "line": e.location.line,
                "column": e.location.column,
                "message": e.message,
            }
            for e in errors
        ]
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)


def annotation(command: str, loc: Location, title: str, text: str) -> str:
    """A workflow command, escaped as lint's ``--format github`` escapes it."""
    from compiler.lint.report import _escape_data, _escape_property

    props = ",".join(
        [
            f"file={_escape_property(loc.file)}",
            f"line={loc.line}",
            f"col={loc.column}",
            f"title={_escape_property(title)}",
        ]
    )
    return f"::{command} {props}::{_escape_data(text)}"


def to_github(d: ExposureDiff, places: dict[str, tuple[str | None, ...]]) -> str:
    out = []
    for kind, command in (("widening", "warning"), ("narrowing", "notice")):
        for line in lines(d, kind, places):  # type: ignore[arg-type]
            text = line.text("→") + (f" ({line.first.note})" if line.first.note else "")
            out.append(annotation(command, line.first.cause.location, f"accord diff: {kind}", text))
    for x in d.divergences:
        if x.status == "new":
            out.append(
                annotation(
                    "warning",
                    x.location,
                    "accord diff: new ACC403 divergence",
                    f"{x.detail} (for {', '.join(x.personas)})",
                )
            )
    for p in d.probes:
        if p["status"] != "resolved":
            where = Location(p["file"], p["line"], p["column"])
            out.append(annotation("warning", where, "accord diff: ACC404 probe", probe_text(p)))
    return "\n".join(out)
