"""Probes: the governance team's expected answer per persona and surface, against the model.

A probe (``probes:`` in the policy format) names a persona, a fact (a dataset and its
replicas; with ``column``, that column, and when the column carries an identifier domain,
every column of the domain; with ``where``, the rows of one entitlement value, or of one
value of each of several) and the disposition every surface reaching the fact should answer. This module computes what the
model gives (depth 1, rule ACC404), with :mod:`compiler.meaning.semantics` — the same views
``accord analyze`` and ACC403 read — and is what the exposure diff and ``accord probe``
call:

* :func:`reaching` — which surfaces reach a probe's fact, through which dataset and column
  (the structural part, with :class:`Place`, lives in :mod:`compiler.model.probe_places`);
* :func:`evaluate` — one :class:`ProbeOutcome` per probe and reaching surface;
* :func:`unanswered` — the reaching surfaces a probe's ``expect`` does not name (ACC404);
* :func:`probe_init` — a probe with today's dispositions filled in, as YAML.

A surface that reads several places of the fact answers what the loosest of them answers.
A hand-written row-filter predicate cannot be evaluated from the model: the outcome's
``actual`` is then None ("the model cannot tell"), which never counts as a pass; ``accord
verify`` executes the predicate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.meaning import semantics as sem
from accord.compiler.model.probe_places import Place, declared, reaching
from accord.compiler.model.replicas import column_origin, column_path
from accord.compiler.model.schema import PolicyModel, Probe

#: how much of the fact a disposition gives away; the loosest answer of a surface wins (a
#: linear order that extends the order of dispositions, compiler/meaning/order.py)
OPENNESS: dict[str, int] = {
    "ungoverned": 8,
    "clear": 7,
    "filtered": 6,
    "aggregated": 5,
    "masked": 4,
    "hidden": 3,
    "empty": 2,
    "denied": 1,
}
#: what ``accord probe init`` (and ``accord probe sample --out``) says beside the owner
OWNED_BY_GOVERNANCE = (
    "keep probe files owned by the governance team (CODEOWNERS): accord diff "
    "--fail-on widening fails on a probe removed or loosened"
)
DISPOSITIONS: tuple[str, ...] = (
    "clear",
    "masked",
    "filtered",
    "denied",
    "ungoverned",
    "empty",
    "hidden",
    "aggregated",
)

Path = tuple[Any, ...]


@dataclass(frozen=True)
class Answer:
    """What one surface answers of one place, per the model."""

    #: None: the model cannot tell (a hand-written predicate decides the rows)
    disposition: str | None
    place: Place
    detail: str
    #: YAML paths of the model entries that decide it
    deciders: tuple[Path, ...] = ()
    #: live only: why the probe did not run (the session, the table, the control...); None
    #: when it ran
    fault: str | None = None


@dataclass(frozen=True)
class ProbeOutcome:
    """One probe on one surface: expected against actual."""

    probe: str
    owner: str
    persona: str
    surface: str
    expected: str
    #: None: could not be determined at this depth (never a pass)
    actual: str | None
    dataset: str
    column: str | None
    detail: str
    deciders: tuple[Path, ...] = field(default=(), compare=False)
    #: model | compiled | live
    depth: str = "model"
    #: live only: why the probe did not run (never an answer, never a pass)
    fault: str | None = None

    @property
    def ok(self) -> bool:
        return self.fault is None and self.actual is not None and self.actual == self.expected

    def to_json(self) -> dict[str, object]:
        return {
            "probe": self.probe,
            "owner": self.owner,
            "persona": self.persona,
            "surface": self.surface,
            "expected": self.expected,
            "actual": self.actual,
            "ok": self.ok,
            "dataset": self.dataset,
            "column": self.column,
            "depth": self.depth,
            "detail": self.detail,
        }


# --------------------------------------------------------------------------------------------
# what the model answers


def answer(
    model: PolicyModel,
    probe: Probe,
    surface: str,
    place: Place,
    read: int = 0,
    perspective: sem.Perspective | None = None,
) -> Answer:
    """What ``surface`` answers the probe's persona of ``place``, per the model."""
    view_of = perspective or sem.Perspective(model, probe.persona)
    ds = model.datasets[place.dataset]
    d = place.dataset
    persona = ("personas", probe.persona)
    read_path = ("surfaces", surface, "reads", read)
    mode = view_of.mode(surface)
    enf = sem.enforcement(model, surface)
    if not ds.governed:
        return Answer(
            "ungoverned", place, f"{d} has no row filter and no mask", (("datasets", d), read_path)
        )
    if mode == "no-rows":
        return Answer(
            "empty",
            place,
            f"{surface}: {enf.reason}",
            (("surfaces", surface, "runtime"), read_path),
        )
    if mode in ("none", "service"):
        key = "platform" if mode == "none" else "identity"
        return Answer(
            "ungoverned", place, f"{surface}: {enf.reason}", (("surfaces", surface, key), read_path)
        )

    # a catalog enforces the policies for the caller
    view = view_of.view(d, surface, [place.column] if place.column else [])
    rf = ds.row_filter
    deciders: list[Path] = [persona]
    rows: str | None
    if rf is None:
        rows, why = "clear", f"{d} has no row filter"
        if view.rows.aggregated:
            rows = "aggregated"
    elif rf.expression is not None:
        rows = None
        why = (
            f"a hand-written predicate decides which rows of {d} {probe.persona} sees "
            "(accord verify executes it)"
        )
        deciders.append(("datasets", d, "row_filter", "expression", ds.platform))
    else:
        deciders.append(("datasets", d, "row_filter"))
        if view.rows.all:
            deciders.append(("datasets", d, "row_filter", "unfiltered_for"))
        # a dataset filtered by one dimension (a replica of one filtered by several): the
        # named value of that dimension decides
        dim = rf.entitlement if probe.where and rf.entitlement in probe.where else None
        dim = dim or (next(iter(probe.where)) if probe.where else None)
        value = probe.where[dim] if probe.where and dim is not None else None
        keyed = [d for d, _, _ in ds.filter_dimensions]
        if probe.where and rf.dimensions is not None and all(k in keyed for k in probe.where):
            deciders += [("entitlements", k, v) for k, v in probe.where.items()]
            rows, why = _several_where(view.rows, probe.where, probe.persona, d)
        elif dim is not None and rf.entitlement == dim:
            deciders.append(("entitlements", dim, value))
            seen = view.rows.sees(value)
            rows = ("aggregated" if view.rows.aggregated else "clear") if seen else "denied"
            why = f"{probe.persona} {'sees' if seen else 'is not granted'} the {dim} {value} rows of {d}"
        else:
            rows = view.row_disposition
            why = f"{d} shows {probe.persona} {_rows_text(view.rows)}"
    if ds.aggregation is not None and rows == "aggregated":
        deciders.append(("datasets", d, "aggregation"))
        why += (
            f"; an aggregation policy answers {probe.persona} only aggregates over groups of at "
            f"least {ds.aggregation.min_group_size} rows"
        )
    if place.column is None or rows in (None, "denied"):
        return Answer(rows, place, why, tuple(deciders))
    cv = view.column(place.column)
    assert cv is not None
    spec = ds.columns.get(declared(ds.columns, place.column) or "")
    if cv.mask is not None and spec is not None:
        deciders += [
            (*column_path(model, d, place.column), "mask"),
            ("masks", cv.mask, "unmasked_for"),
        ]
        how = "sees through" if cv.disposition == "clear" else "is masked by"
        why += f"; {probe.persona} {how} {cv.mask} on {d}.{cv.column}"
        origin, col = column_origin(model, d, place.column)
        if origin != d:
            why += f" (inherited from {origin}.{col})"
    elif ds.replica_of is not None and spec is None:
        # a replica's undeclared column has the mask of its source's: none there
        src = ds.replica_of
        scol = declared(model.datasets[src].columns, place.column)
        if scol is not None:
            deciders.append(column_path(model, src, scol))
        why += (
            f"; {d}.{cv.column} has no mask: a replica inherits its source's masks, and "
            f"{src}.{scol or cv.column} has none"
        )
    else:
        why += f"; {d}.{cv.column} has no mask"
    if cv.disposition == "hidden" and spec is not None and spec.projection is not None:
        deciders.append((*column_path(model, d, place.column), "projection"))
        why += (
            f"; a projection policy lets only {', '.join(spec.projection.allowed_for) or 'nobody'}"
            f" select {d}.{cv.column}"
        )
    return Answer(cv.disposition, place, why, tuple(deciders))


def _several_where(
    rows: sem.RowSet, where: dict[str, str], persona: str, dataset: str
) -> tuple[str, str]:
    """The rows of one value of each named dimension of a filter over several (those that
    hold every named value): every one of them (the unnamed dimensions admit every row),
    some (they admit some), or none (a named value is not granted)."""
    if rows.all:
        return "clear", f"{persona} sees every row of {dataset}"
    named = ", ".join(f"{d} {v}" for d, v in where.items())
    if not rows.sees_row(dict(where)):
        return "denied", f"{persona} sees none of the {named} rows of {dataset}"
    others = [(d, v) for d, v in rows.dims if d not in where]
    if all(v is None for _, v in others):
        return "clear", f"{persona} sees every {named} row of {dataset}"
    told = ", ".join(f"{d} {', '.join(sorted(v)) if v is not None else 'any'}" for d, v in others)
    return "filtered", f"{persona} sees the {named} rows of {dataset} with {told}"


def _rows_text(rows: sem.RowSet) -> str:
    if rows.all:
        return "every row"
    if rows.nothing:
        return "no rows"
    return f"the {rows.dimension} rows of {', '.join(sorted(rows.values))}"


def surface_answer(
    model: PolicyModel,
    probe: Probe,
    surface: str,
    perspective: sem.Perspective | None = None,
) -> Answer:
    """The loosest answer of ``surface`` over the places of the fact it reads. When one of
    them cannot be told, the surface's answer cannot either (unless another already gives
    everything away)."""
    perspective = perspective or sem.Perspective(model, probe.persona)
    answers = [
        answer(model, probe, surface, p, i, perspective)
        for i, p in reaching(model, probe).get(surface, [])
    ]
    assert answers, f"{surface} does not reach the probe's fact"
    return loosest(answers)


def loosest(answers: list[Answer]) -> Answer:
    known = [a for a in answers if a.disposition is not None]
    unknown = [a for a in answers if a.disposition is None]
    best = max(known, key=lambda a: OPENNESS[a.disposition or ""], default=None)
    if best is not None and (not unknown or best.disposition == "ungoverned"):
        return best
    return unknown[0]


@dataclass(frozen=True)
class Question:
    """One probe asked of one surface it names: what every depth answers."""

    name: str
    probe: Probe
    surface: str
    #: the places of the fact the surface reads, with their index in its ``reads``
    places: tuple[tuple[int, Place], ...]
    perspective: sem.Perspective = field(compare=False)

    def modelled(self, model: PolicyModel) -> Answer:
        """The model's answer (:func:`surface_answer`)."""
        return loosest(
            [
                answer(model, self.probe, self.surface, p, i, self.perspective)
                for i, p in self.places
            ]
        )

    def outcome(self, a: Answer, depth: str = "model") -> ProbeOutcome:
        p = self.probe
        return ProbeOutcome(
            self.name,
            p.owner,
            p.persona,
            self.surface,
            p.expect[self.surface],
            a.disposition,
            a.place.dataset,
            a.place.column,
            a.detail,
            a.deciders,
            depth,
            a.fault,
        )


def questions(model: PolicyModel, names: Iterable[str] | None = None) -> Iterable[Question]:
    """Every probe (or those named) on every reaching surface its ``expect`` names, in a
    deterministic order (probe, surface). An ``expect`` entry for a surface that does not
    reach the fact is a validation error, so a validated model gives one per entry."""
    for name in sorted(model.probes if names is None else names):
        probe = model.probes[name]
        perspective = sem.Perspective(model, probe.persona)
        reach = reaching(model, probe)
        for surface in sorted(probe.expect):
            if surface in reach:
                yield Question(name, probe, surface, tuple(reach[surface]), perspective)


@dataclass(frozen=True)
class Unanswered:
    """A surface that reaches a probe's fact and has no ``expect`` entry (ACC404)."""

    probe: str
    surface: str
    #: the datasets of the fact the surface reads
    reads: tuple[str, ...]
    #: what the model gives the probe's persona there: the suggested entry
    answer: Answer


def unanswered(model: PolicyModel) -> list[Unanswered]:
    """Every (probe, surface) where a surface reaches the probe's fact and ``expect`` does not
    say what it should answer, in a deterministic order, with the model's answer."""
    out: list[Unanswered] = []
    for name in sorted(model.probes):
        probe = model.probes[name]
        reach = reaching(model, probe)
        missing = [s for s in sorted(reach) if s not in probe.expect]
        if not missing:
            continue
        perspective = sem.Perspective(model, probe.persona)
        for surface in missing:
            reads = tuple(sorted({p.dataset for _, p in reach[surface]}))
            a = surface_answer(model, probe, surface, perspective)
            out.append(Unanswered(name, surface, reads, a))
    return out


def evaluate(model: PolicyModel, names: Iterable[str] | None = None) -> list[ProbeOutcome]:
    """Every probe (or those named) on every surface its ``expect`` names, per the model
    (depth 1, what ACC404 checks and the exposure diff compares)."""
    return [q.outcome(q.modelled(model)) for q in questions(model, names)]


# --------------------------------------------------------------------------------------------
# accord probe init


def probe_init(
    model: PolicyModel,
    persona: str,
    dataset: str,
    *,
    name: str | None = None,
    owner: str = "data-governance",
    where: dict[str, str] | None = None,
    column: str | None = None,
) -> str:
    """A ``probes:`` section with one probe whose ``expect`` holds today's dispositions, for
    the governance team to review. Raises KeyError for an unknown persona or dataset."""

    if persona not in model.personas:
        raise KeyError(f"unknown persona {persona!r}")
    if dataset not in model.datasets:
        raise KeyError(f"unknown dataset {dataset!r}")
    probe = Probe(
        owner=owner, persona=persona, dataset=dataset, where=where, column=column, expect={}
    )
    perspective = sem.Perspective(model, persona)
    reach = reaching(model, probe)
    expect = {s: surface_answer(model, probe, s, perspective) for s in sorted(reach)}
    name = name or f"{persona}_{dataset}"

    def q(text: str) -> str:
        return json.dumps(text)  # a JSON string is a YAML double-quoted scalar

    lines = [
        "probes:",
        f"  {name}:",
        f"    owner: {q(owner)}  # {OWNED_BY_GOVERNANCE}",
        f"    persona: {persona}",
        f"    dataset: {dataset}",
    ]
    if where:
        named = ", ".join(f"{dim}: {q(value)}" for dim, value in where.items())
        lines.append(f"    where: {{{named}}}")
    if column:
        lines.append(f"    column: {column}")
    if not expect:
        lines.append("    expect: {}  # no surface reaches this fact")
    else:
        lines.append("    expect:")
        for s, a in expect.items():
            shown = a.disposition or "denied"
            note = a.detail if a.disposition else f"REVIEW: {a.detail}"
            lines.append(f"      {s}: {shown}  # {' '.join(note.split())}")
    return "\n".join(lines) + "\n"
