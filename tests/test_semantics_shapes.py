"""The shortcuts of ``divergence.divergences`` (ACC403) answer what the slow path answered.

* :meth:`Perspective.seen` memoises a persona's dispositions by how a dataset is governed
  (:func:`semantics.shape_key`) and the surface's enforcement mode, not by the dataset's name,
  and :meth:`Perspective.view` shares column views between personas: both compared with a
  fresh :func:`semantics.dataset_view` (a new perspective, nothing memoised) for every
  persona, dataset and surface;
* ``divergences`` computes the divergences of one set of facts once for all personas that see
  the same there: compared with an oracle that takes every view afresh, persona by persona;
* ``divergences(..., datasets=...)`` is the full result restricted to the facts of those
  datasets, in the same order.

Estates: the reference ones, and one from the benchmark's generator (``bench/lint_bench.py``:
replicas, two identifier domains, pipelines with no catalog, so divergences exist).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.compiler.meaning import divergence, semantics
from accord.compiler.meaning.divergence import Divergence
from accord.compiler.meaning.semantics import Seen, Shape
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import load_project
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from lint_bench import estate, write_estate


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("generated") / "policies"
    files = estate(90, principals=24, programmes=12, defects=True)
    # a runtime that returns no rows (ACC401): "denied" there is not "denied" by the catalog
    agents = files["surfaces/agents.yaml"]["surfaces"]
    agents[next(s for s in sorted(agents) if s.startswith("lakehouse"))]["runtime"] = "11.3"
    # a persona with no programme and no region: every filtered row denied by the catalog
    files["principals.yaml"]["principals"]["outsider"] = {"snowflake": "OUTSIDER"}
    files["principals.yaml"]["personas"]["outsider"] = ["outsider"]
    return write_estate(where, files)


@pytest.fixture(scope="module", params=["policies", "examples/as-found", "generated"])
def model(request: pytest.FixtureRequest, generated: Path) -> PolicyModel:
    where = generated if request.param == "generated" else ROOT / request.param
    return load_project(where).model


def _seen(view: semantics.DatasetView) -> Seen:
    return Seen(view.rows, view.row_disposition, tuple(c.disposition for c in view.columns))


def test_seen_is_the_fresh_view(model: PolicyModel) -> None:
    shared: dict[tuple[str, ...], object] = {}
    # the surfaces that read each dataset, and one surface of every enforcement mode
    by_mode = {semantics.enforcement(model, s).mode: s for s in sorted(model.surfaces)}
    reading = divergence.reaches(model)
    for persona in sorted(model.personas):
        memo = semantics.Perspective(model, persona, shared)
        for dataset in sorted(model.datasets):
            ds = model.datasets[dataset]
            also = [*sorted(ds.columns)[:2], "not_a_column"]
            surfaces = [None, *by_mode.values(), *(s for s, _ in reading[dataset])]
            for surface in surfaces:
                fresh = semantics.dataset_view(model, persona, dataset, surface)
                assert memo.seen(dataset, surface) == _seen(fresh)
                shape = memo.shape(dataset, also)
                fresh = semantics.dataset_view(model, persona, dataset, surface, also)
                assert shape.columns == tuple(c.column for c in fresh.columns)
                assert memo.seen(dataset, surface, shape) == _seen(fresh)
                # the whole view (masks, strategies, identifiers), from the shared columns
                assert memo.view(dataset, surface, also) == fresh
                assert memo.view(dataset, surface) == semantics.dataset_view(
                    model, persona, dataset, surface
                )


def test_shape_key_tells_apart_what_the_dispositions_depend_on() -> None:
    model = load_project(ROOT / "policies").model
    keys = {
        d: semantics.shape_key(ds, semantics.governed_columns(ds))
        for d, ds in model.datasets.items()
    }
    for d, ds in model.datasets.items():
        assert keys[d][0] == ds.platform
        assert keys[d][1] == ds.governed
        assert tuple(m[0] for m in keys[d][3]) == tuple(
            ds.columns[c].mask for c in semantics.governed_columns(ds)
        )
    # an entitlement named "expression" (no exemptions) is not a hand-written predicate
    ds = next(ds for ds in model.datasets.values() if ds.row_filter and ds.row_filter.entitlement)
    assert ds.row_filter is not None
    named = ds.model_copy(
        update={
            "row_filter": ds.row_filter.model_copy(
                update={"entitlement": "expression", "unfiltered_for": []}
            )
        }
    )
    predicate = ds.model_copy(
        update={
            "row_filter": ds.row_filter.model_copy(
                update={"entitlement": None, "expression": {ds.platform: "TRUE"}}
            )
        }
    )
    cols = semantics.governed_columns(ds)
    assert semantics.shape_key(named, cols) != semantics.shape_key(predicate, cols)


def _oracle(model: PolicyModel, refused_as_intended: bool) -> list[Divergence]:
    """The divergences with every view taken afresh, persona by persona (no memo, nothing
    shared between personas): the algorithm's helpers fed by semantics.dataset_view."""
    by_dataset = divergence.reaches(model)
    root_of = {d: model.replica_root(d) for d in model.datasets}
    groups: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        groups.setdefault(root_of[d], []).append(d)
    domains: dict[str, list[tuple[str, str]]] = {}
    for d in sorted(model.datasets):
        for col, spec in model.datasets[d].columns.items():
            if spec.identifier:
                domains.setdefault(spec.identifier, []).append((d, col))
    refused = {
        s
        for s in model.surfaces
        if refused_as_intended and semantics.enforcement(model, s).mode == "no-rows"
    }
    also: dict[str, list[str]] = {}
    for members in groups.values():
        if len(members) > 1:
            union = sorted(
                {c for d in members for c in semantics.governed_columns(model.datasets[d])}
            )
            also.update((d, union) for d in members)

    out: list[Divergence] = []
    for persona in sorted(model.personas):

        def fresh(surface: str, dataset: str, persona: str = persona) -> semantics.DatasetView:
            through = None if surface in refused else surface
            return semantics.dataset_view(model, persona, dataset, through, also.get(dataset, ()))

        def view(surface: str, dataset: str) -> Seen:
            return _seen(fresh(surface, dataset))

        shapes = {
            d: Shape(d, tuple(c.column for c in fresh(by_dataset[d][0][0], d).columns), ())
            for d in model.datasets
            if by_dataset[d]
        }
        for root, members in sorted(groups.items()):
            places = [r for d in members for r in by_dataset[d]]
            if len(places) < 2 or not any(model.datasets[d].governed for d in members):
                continue
            out.extend(divergence._row_divergences(persona, root, places, view))
            out.extend(divergence._column_divergences(persona, root, places, view, shapes))
        for domain, cols in sorted(domains.items()):
            places3 = [(s, d, c) for d, c in cols for s, _ in by_dataset[d]]
            shown = [fresh(s, d).column(c).disposition for s, d, c in places3]  # type: ignore[union-attr]
            out.extend(divergence._domain_divergences(persona, domain, places3, shown, root_of))
    return out


@pytest.mark.parametrize("refused_as_intended", [True, False])
def test_divergences_equal_the_fresh_oracle(model: PolicyModel, refused_as_intended: bool) -> None:
    got = divergence.divergences(model, refused_as_intended=refused_as_intended)
    assert got == _oracle(model, refused_as_intended)


def test_the_generated_estate_has_divergences_of_every_kind(generated: Path) -> None:
    """The oracle comparison above is not vacuous: rows, columns and domains all diverge."""
    found = divergence.divergences(load_project(generated).model)
    kinds = {(d.facts[0], d.aspect) for d in found}
    assert kinds == {("dataset", "rows"), ("dataset", "column"), ("identifier", "column")}
    assert len({d.persona for d in found}) > 1


def _facts_of(model: PolicyModel, datasets: set[str]) -> Iterator[tuple[str, str]]:
    for d in datasets:
        yield ("dataset", model.replica_root(d))
        for spec in model.datasets[d].columns.values():
            if spec.identifier:
                yield ("identifier", spec.identifier)


def test_divergences_of_some_datasets_are_the_full_result_restricted(model: PolicyModel) -> None:
    full = divergence.divergences(model)
    names = sorted(model.datasets)
    for chosen in ({names[0]}, set(names[::3]), set(), set(names)):
        facts = set(_facts_of(model, chosen))
        expected = [d for d in full if d.facts in facts]
        assert divergence.divergences(model, datasets=chosen) == expected
    personas = sorted(model.personas)[:2]
    assert divergence.divergences(model, personas, datasets=names) == [
        d for d in full if d.persona in personas
    ]
