"""Probes at depth 2: a probe's rows and column, executed through the compiled policies.

For every probe and every surface its ``expect`` names, the places of the fact the surface
reads (:func:`compiler.meaning.probes.reaching`) are answered from the DuckDB results the verifier
computed for the probe's persona — the compiled row filter, masks and ABAC policies of the
dataset's platform — when the surface enforces the catalog's policies per caller. Surfaces
without a catalog, with a service identity, or with a runtime that returns nothing are
answered by the model (:func:`compiler.meaning.probes.answer`), since there is no SQL to execute.
A mismatch is a verification mismatch of kind ``probe`` naming the probe, its owner, the
surface and the compiled objects that decided.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.compiler.meaning.probes import Answer, Place, ProbeOutcome, answer, loosest, questions
from accord.compiler.verify.report import Mismatch, SqlObject

if TYPE_CHECKING:
    from accord.compiler.model.schema import Probe
    from accord.compiler.verify.engine import Verifier


def executed_answer(verifier: Verifier, probe: Probe, place: Place) -> Answer:
    """What the compiled policies show the probe's persona of ``place`` on DuckDB."""
    model = verifier.model
    ds = model.datasets[place.dataset]
    table = verifier.tables[place.dataset]
    got = verifier.results[place.dataset][probe.persona]
    if not ds.governed:
        return Answer("ungoverned", place, f"{place.dataset} has no row filter and no mask")
    rows = list(range(table.length))
    what = f"{place.dataset} on {ds.platform}"
    named: list[str] = []
    for dim, value in (probe.where or {}).items():  # the rows that hold every named value
        key = next((c.name for c in table.columns if c.role == f"entitlement:{dim}"), None)
        if key is None:
            if ds.row_filter is not None:
                return Answer(
                    None,
                    place,
                    f"no column of {place.dataset} holds {dim} values: the rows of {value} "
                    "cannot be selected",
                )
        else:
            rows = [r for r in rows if table.value(r, key) == value]
            named.append(f"{key} = {value!r}")
    if named:
        what += f", rows with {' and '.join(named)}"
    visible = [r for r in rows if got[r][0]]
    if not visible:
        return Answer("denied", place, f"the compiled row filter shows no rows ({what})")
    if place.column is None:
        if len(visible) == len(rows):
            return Answer("clear", place, f"the compiled row filter shows every row ({what})")
        return Answer(
            "filtered",
            place,
            f"the compiled row filter shows {len(visible)} of {len(rows)} rows ({what})",
        )
    index = table.column_index(place.column)
    if index is None:
        return Answer(None, place, f"{place.column} is not a column verify generated")
    column = table.columns[index].name
    clear = []
    masked = []
    for r in visible:
        original = table.rows[r][index]
        if original is None:
            continue
        shown = got[r][1][column]
        (clear if shown is not None and str(shown) == str(original) else masked).append(r)
    if clear:
        sample = table.describe(clear[0], column)
        return Answer(
            "clear", place, f"the compiled SQL shows {column} in the clear ({what}: {sample})"
        )
    if masked:
        return Answer("masked", place, f"the compiled SQL masks {column} ({what})")
    return Answer(None, place, f"no visible row of {place.dataset} holds a {column} value")


def check_probes(verifier: Verifier) -> list[ProbeOutcome]:
    """Every probe on every surface it names, answered through the compiled SQL (catalog
    surfaces) or the model (the others); mismatches are added to the verifier's report."""
    model = verifier.model
    out: list[ProbeOutcome] = []
    for q in questions(model):
        probe, surface, name = q.probe, q.surface, q.name
        catalog = q.perspective.mode(surface) == "catalog"
        if catalog:
            a = loosest(
                [
                    executed_answer(verifier, probe, place)
                    if model.datasets[place.dataset].governed
                    else answer(model, probe, surface, place, i, q.perspective)
                    for i, place in q.places
                ]
            )
        else:
            a = q.modelled(model)
        outcome = q.outcome(a, "compiled" if catalog else "model")
        out.append(outcome)
        verifier.report.checks += 1
        if outcome.ok:
            continue
        objects: tuple[SqlObject, ...] = ()
        if catalog and a.place.dataset in verifier.parts_of:
            # rows withheld: the row filter decides; otherwise the column's mask
            by_column = a.place.column is not None and a.disposition not in ("denied", None)
            objects = verifier.objects(
                a.place.dataset, _generated(verifier, a.place) if by_column else None
            )
        got = a.disposition or "no answer"
        verifier.report.mismatches.append(
            Mismatch(
                "probe",
                probe.persona,
                a.place.dataset,
                model.datasets[a.place.dataset].platform if catalog else f"{surface} (model)",
                a.place.column,
                f"{probe.expect[surface]} on {surface}",
                got,
                (),
                objects,
                f"probe {name} (owner {probe.owner}) fails on {surface}: expected "
                f"{probe.expect[surface]}, {'the compiled SQL' if catalog else 'the model'} "
                f"gives {got} ({a.detail})",
            )
        )
    return out


def _generated(verifier: Verifier, place: Place) -> str | None:
    table = verifier.tables[place.dataset]
    index = table.column_index(place.column or "")
    return None if index is None else table.columns[index].name
