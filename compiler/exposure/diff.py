"""``accord diff``: every cell of both models compared, persona by persona and place by place,
and what changed, with its cause, the ACC403 divergences and the ACC404 probes it moves.

What is compared and how is said in :mod:`compiler.exposure`; this module walks the cells
and skips what cannot differ (a dataset whose views read the same inputs in both models, the
divergences of a persona none of whose views changed)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from accord.compiler.exposure.causes import Causes, locate
from accord.compiler.exposure.cells import Cells, Key, columns_shown, readers
from accord.compiler.exposure.changes import EMPTY, UNGOVERNED, Cell, Change, ExposureDiff
from accord.compiler.exposure.compare import cell_changes, declared_values
from accord.compiler.exposure.configuration import config_edits
from accord.compiler.exposure.divergence import divergence_changes
from accord.compiler.exposure.endpoints import endpoint_changes
from accord.compiler.exposure.predicates import resolve_expressions
from accord.compiler.exposure.probes import probe_changes, probe_edits
from accord.compiler.lint.config import LintConfig
from accord.compiler.meaning import semantics
from accord.compiler.meaning.analyze import governed_groups
from accord.compiler.model.identities import (
    Identity,
    any_caller,
    identities,
    identity_subject,
    persona_identities,
    personas_holding,
    subject,
)
from accord.compiler.model.renames import dataset_renames
from accord.compiler.model.schema import PLATFORMS, PolicyModel
from accord.compiler.model.validate import Project
from accord.compiler.plan.source import outside_catalogs


def _datasets(base: PolicyModel, head: PolicyModel) -> list[str]:
    found = dict.fromkeys(governed_groups(head))
    found.update(dict.fromkeys(governed_groups(base)))
    return sorted(found)


def exposure_diff(
    base: Project, head: Project, configs: tuple[LintConfig, LintConfig] | None = None
) -> ExposureDiff:
    """Every change in what an identity or a persona sees, widenings first; the ACC403
    divergences the change introduces or resolves.

    The platforms check identities, never personas, so every place a catalog decides (a
    dataset queried directly, a surface that asks the catalog as its caller) is compared per
    platform identity, named by a principal in either model, whether or not a persona holds it
    (:mod:`compiler.model.identities`); each change names the personas that hold the
    identity. A persona's own view is compared there only where the identities it holds
    changed (a principal added to the persona, or one whose role or group changed). A place
    that answers every caller alike (a service identity, no catalog, a runtime that returns
    nothing) is compared per persona, as ``any caller``.

    A dataset is identified by its table: a key renamed with the same table is compared with
    itself under its new name (:func:`dataset_renames`), and moves no exposure.

    ``configs``: the lint configuration of the base and of the head, compared for settings
    that lower what fails (:mod:`compiler.exposure.configuration`)."""
    b, h = base.model, head.model
    renames = dataset_renames(b, h)
    old = {new: was for was, new in renames.items()}

    def bname(d: str) -> str:
        """A dataset's name in the base."""
        return old.get(d, d)

    datasets = [d for d in _datasets(b, h) if d not in renames]
    also = columns_shown(b, h, datasets)
    if _inputs(b) == _inputs(h):
        rb, rh = readers(b), readers(h)
        datasets = [d for d in datasets if not _same_inputs(b, h, d, rb, rh, bname(d))]
    also_b = {bname(d): cols for d, cols in also.items()}
    cells_b = Cells(b, [bname(d) for d in datasets], also_b)
    cells_h = Cells(h, datasets, also)
    notes: list[str] = []
    subjects = identity_subjects(b, h)
    resolved_b = resolve_expressions(base, [bname(d) for d in datasets], notes, subjects)
    resolved_h = resolve_expressions(head, datasets, notes, subjects)
    causes = Causes(base, head, renames)

    def declared(dim: str | None) -> frozenset[str]:
        return declared_values((b, h), dim)

    changes: list[Change] = []
    changed: set[str] = set()
    # Cells.at shares one dict among the views governed alike: each pair compared once
    equal: dict[tuple[int, int], bool] = {}

    def compare(who: str, d: str, place: str | None) -> list[Change]:
        vb, va = cells_b.at(who, bname(d), place), cells_h.at(who, d, place)
        pair = (id(vb), id(va))
        same = equal.get(pair)
        if same is None:
            same = equal[pair] = vb == va
        if same:
            return []
        out: list[Change] = []
        for col in dict.fromkeys([*(va or {}), *(vb or {})]):
            key: Key = (who, d, col, place)
            key_b: Key = (who, bname(d), col, place)
            sb = _resolved((vb or {}).get(col) or _absent(b, key_b), key_b, resolved_b)
            sa = _resolved((va or {}).get(col) or _absent(h, key), key, resolved_h)
            if sb != sa:
                out.extend(cell_changes(key, sb, sa, b, h, also, declared, causes))
        return out

    catalog = {d: _catalog_places(b, h, d, bname(d), cells_b, cells_h) for d in datasets}
    #: (persona, the change as it reads) of every identity change
    told: set[tuple[Any, ...]] = set()
    for name, identity in subjects.items():
        held = _holding(b, h, identity)
        for d in datasets:
            if identity.platform not in _platforms_of(b, h, d, bname(d)):
                continue
            for place in catalog[d]:
                found = [
                    replace(c, **_as_identity(identity, held)) for c in compare(name, d, place)
                ]
                changes += found
                for c in found:
                    told.update((p, *_told(c)[1:]) for p in held)  # as each holder's
                if found:
                    changed.update(held)
    for persona in sorted(b.personas.keys() | h.personas.keys()):
        moved = _membership_moves(b, h, persona)
        # the persona's own list of principals as it was: identities it holds that moved
        # (a principal's role or group changed) are judged by the identities' own views
        listed_same = b.personas.get(persona) == h.personas.get(persona)
        for d in datasets:
            places = dict.fromkeys(
                [None, *cells_b.places.get(bname(d), []), *cells_h.places.get(d, [])]
            )
            for place in places:
                if place in catalog[d]:
                    platform = _platforms_of(b, h, d, bname(d))[0]
                    if listed_same and platform in moved:
                        continue
                    identity = moved.get(platform) or _primary(b, h, persona, platform)
                else:
                    identity = any_caller(_surface_platform(b, h, place))
                found = [
                    replace(c, identity=identity, personas=(persona,), subject=persona)
                    for c in compare(persona, d, place)
                ]
                if place in catalog[d]:
                    # what an identity it holds already says (the change of that identity,
                    # naming the persona) is not said again; what only the persona sees (its
                    # identities together, its primary role) is
                    found = [c for c in found if _told(c) not in told]
                changes += found
                if found:
                    changed.add(persona)
    changes.extend(
        _moved(base, head, datasets, cells_b, resolved_b, also, declared, causes, notes, subjects)
    )
    changes.sort(key=Change.sort_key)
    # a persona none of whose views changed keeps its divergences, unless what they compare
    # (replica groups, identifier domains, governed columns, who reads what) changed
    personas = None if _structure(b) != _structure(h) else sorted(changed)
    notes.extend(index_notes(b, h))
    return ExposureDiff(
        changes,
        divergence_changes(base, head, personas, renames),
        probe_changes(base, head),
        notes,
        endpoint_changes(base, head),
        probe_edits(base, head, renames),
        config_edits(*configs) if configs is not None else [],
    )


def identity_subjects(b: PolicyModel, h: PolicyModel) -> dict[str, Identity]:
    """Every identity a principal names in either model, as a subject of exposure (the
    head's spelling first), in accord's platform order."""
    out: dict[str, Identity] = {}
    for platform in PLATFORMS:
        found: dict[str, Identity] = {}
        for m in (b, h):
            if m.platform_config(platform) is None:
                continue
            for i in identities(m, platform):
                found[i.key] = i  # the head's, read last
        out.update({subject(i): i for _, i in sorted(found.items())})
    return out


def _holding(b: PolicyModel, h: PolicyModel, identity: Identity) -> tuple[str, ...]:
    """The personas that hold ``identity`` in either model."""
    return tuple(sorted({*personas_holding(b, identity), *personas_holding(h, identity)}))


def _platforms_of(b: PolicyModel, h: PolicyModel, dataset: str, was: str) -> list[str]:
    """The platforms ``dataset`` (``was`` in the base) is on in either model (the head's
    first)."""
    found = [h.datasets[dataset].platform] if dataset in h.datasets else []
    found += [b.datasets[was].platform] if was in b.datasets else []
    return list(dict.fromkeys(found))


def _surface_platform(b: PolicyModel, h: PolicyModel, surface: str | None) -> str:
    for m in (h, b):
        if surface in m.surfaces:
            return m.surfaces[surface].platform
    return "none"


def _catalog_places(
    b: PolicyModel, h: PolicyModel, dataset: str, was: str, cells_b: Cells, cells_h: Cells
) -> list[str | None]:
    """The places of ``dataset`` where the catalog decides per caller, in both models: the
    dataset queried directly, and each surface reading it that asks the catalog as its
    caller (in every model that has it)."""
    out: list[str | None] = [None]
    for s in dict.fromkeys([*cells_b.places.get(was, []), *cells_h.places.get(dataset, [])]):
        modes = {semantics.enforcement(m, s).mode for m in (b, h) if s in m.surfaces}
        if modes == {"catalog"}:
            out.append(s)
    return out


def _as_identity(identity: Identity, held: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a change of ``identity``'s view, held by the personas ``held``."""
    return {
        "subject": subject(identity),
        "persona": held[0] if held else "",
        "identity": identity,
        "personas": held,
    }


def _told(c: Change) -> tuple[Any, ...]:
    """A change as it reads, whoever's: to tell a persona's change its identity already said."""
    return (
        c.subject,
        c.kind,
        c.dataset,
        (c.column or "").lower(),
        c.surface,
        c.before,
        c.after,
        c.values,
    )


def _primary(b: PolicyModel, h: PolicyModel, persona: str, platform: str) -> Identity | None:
    """The identity a persona's session starts with on ``platform``: its first principal's
    there (in the head, else the base)."""
    for m in (h, b):
        if persona in m.personas:
            found = persona_identities(m, persona, platform)
            if found:
                return found[0]
    return None


def _membership_moves(b: PolicyModel, h: PolicyModel, persona: str) -> dict[str, Identity]:
    """Per platform where the identities ``persona`` holds differ between the models, the
    first it gained (else the first it lost): its own view is compared there."""
    out: dict[str, Identity] = {}
    for platform in PLATFORMS:
        held = [
            {i.key: i for i in persona_identities(m, persona, platform)}
            if persona in m.personas and m.platform_config(platform) is not None
            else {}
            for m in (b, h)
        ]
        if held[0].keys() == held[1].keys():
            continue
        gained = sorted(held[1].keys() - held[0].keys())
        lost = sorted(held[0].keys() - held[1].keys())
        out[platform] = held[1][gained[0]] if gained else held[0][lost[0]]
    return out


def _moved(
    base: Project,
    head: Project,
    datasets: list[str],
    cells_b: Cells,
    resolved_b: dict[tuple[str, str], Cell | None],
    also: dict[str, list[str]],
    declared: Any,
    causes: Causes,
    notes: list[str],
    subjects: dict[str, Identity],
) -> list[Change]:
    """A dataset retargeted to another table (or platform): its policies leave the table the
    base named, which stays in place with none (the plan strips them). What each persona saw
    of it directly is now ``ungoverned``: a widening, caused by the head's ``table``, unless
    the head says that table is dropped (``replaces: {table: OLD, dropped: true}`` on the same
    platform): then a note says so, where it is written (accord takes the model's word)."""
    b, h = base.model, head.model
    out: list[Change] = []
    for d in datasets:
        db, dh = b.datasets.get(d), h.datasets.get(d)
        if db is None or dh is None or (db.platform, db.table) == (dh.platform, dh.table):
            continue
        if (
            dh.replaces is not None
            and dh.platform == db.platform
            and dh.replaces.table.casefold() == db.table.casefold()
        ):
            said = locate(head, ("datasets", d, "replaces")).location
            notes.append(
                f"datasets.{d}: moved from {db.platform} table {db.table} to {dh.table}; the "
                f"model says {db.table} is dropped ({said}), so its rows widen nothing (not "
                "checked against the platform)"
            )
            continue
        field = "table" if db.table != dh.table else "platform"
        cause = locate(head, ("datasets", d, field))
        note = (
            f"the policies leave {db.platform} table {db.table} (the dataset now names "
            f"{dh.platform} table {dh.table}); it stays in place with no accord policy"
        )
        for name, identity in subjects.items():
            if identity.platform != db.platform:
                continue
            view = cells_b.at(name, d, None) or {}
            held = _holding(b, h, identity)
            for col, cell in view.items():
                key: Key = (name, d, col, None)
                sb = _resolved(cell, key, resolved_b)
                for c in cell_changes(key, sb, UNGOVERNED, b, h, also, declared, causes):
                    out.append(
                        replace(
                            c,
                            platform=db.platform,
                            cause=cause,
                            note=note,
                            **_as_identity(identity, held),
                        )
                    )
    return out


def index_notes(base: PolicyModel, head: PolicyModel) -> list[str]:
    """Indexes are not places the views read (a surface reads datasets), so a change of one
    is not compared per persona; it is said, never passed over (``accord lint`` checks
    indexes: ACC301)."""
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
            readers(model),
            {s: semantics.enforcement(model, s).mode for s in model.surfaces},
        ],
        sort_keys=True,
    )


def _inputs(model: PolicyModel) -> tuple[Any, ...]:
    """What every view reads: platforms, principals, personas."""
    return (model.platforms, model.principals, model.personas)


def _same_inputs(
    b: PolicyModel,
    h: PolicyModel,
    dataset: str,
    readers_b: dict[str, list[str]],
    readers_h: dict[str, list[str]],
    was: str | None = None,
) -> bool:
    """Whether the views of ``dataset`` are computed from the same inputs in both models
    (given the same :func:`_inputs`): the dataset, its masks, the grants its filter reads
    (every grant for a hand-written predicate, which may read any mapping table), and the
    surfaces that read it. Then its views are the same and it is not read again: a diff of
    a small change costs little more than loading the two models."""
    db, dh = b.datasets.get(was or dataset), h.datasets.get(dataset)
    if db is None or dh is None or db != dh:
        return False
    if any(b.masks.get(c.mask) != h.masks.get(c.mask) for c in dh.columns.values() if c.mask):
        return False
    rf = dh.row_filter
    if rf is not None:
        if rf.expression is not None:
            if b.entitlements != h.entitlements:
                return False
        elif any(
            b.entitlements.get(dim) != h.entitlements.get(dim) for dim, _, _ in dh.filter_dimensions
        ):
            return False
    sb, sh = readers_b.get(was or dataset, []), readers_h.get(dataset, [])
    return sb == sh and all(b.surfaces[s] == h.surfaces[s] for s in sh)


def _absent(model: PolicyModel, key: Key) -> Cell:
    """A cell one model has no view of: a dataset it does not declare is ungoverned on its
    platform; any other missing place (a surface that does not read it, a persona it does
    not declare) is empty."""
    subject_, dataset, _, place = key
    declared = subject_ in model.personas or identity_subject(subject_) is not None
    if place is None and dataset not in model.datasets and declared:
        return UNGOVERNED
    return EMPTY


def _resolved(state: Cell, key: Key, resolved: dict[tuple[str, str], Cell | None]) -> Cell:
    if state.predicate is None or key[2] is not None:
        return state
    found = resolved.get((key[0], key[1]))
    return found if found is not None else state
