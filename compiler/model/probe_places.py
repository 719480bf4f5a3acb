"""Which places a probe reaches: the structural part of a probe, from the model alone.

A probe (``probes:`` in the policy format) asks about a fact: a dataset and its replicas; with
``column``, that column, and when the column carries an identifier domain, every column of the
domain. This module names those places and the surfaces that read them, without any semantics
(no perspective, no mask, no row filter is evaluated), so that :mod:`compiler.model.validate`
can check a probe's references and reach and :mod:`compiler.meaning.probes` can answer it:

* :func:`probe_columns` — the columns a probe may name on a dataset;
* :func:`places` — the places of a probe's fact;
* :func:`reaching` — which surfaces reach a probe's fact, through which dataset and column;
* :func:`where_problem` — why a ``where`` dimension cannot select rows of a dataset.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from accord.compiler.model.schema import PolicyModel, Probe


@dataclass(frozen=True)
class Place:
    """One place of a probe's fact: a dataset, and the column of it the probe asks about."""

    dataset: str
    column: str | None = None


def declared(columns: Iterable[str], column: str) -> str | None:
    """The name of ``column`` as declared among ``columns`` (compared without case), or None."""
    folded = column.lower()
    return next((c for c in columns if c.lower() == folded), None)


def probe_columns(model: PolicyModel, dataset: str) -> list[str]:
    """Columns a probe may name on ``dataset``: declared ones and the row filter's."""
    ds = model.datasets[dataset]
    out = list(ds.columns)
    rf = ds.row_filter
    extra = [c for _, c, _ in ds.filter_dimensions]
    extra += list((rf.arguments or {}) if rf is not None else {})
    for c in extra:
        if declared(out, c) is None:
            out.append(c)
    return out


def places(model: PolicyModel, probe: Probe) -> list[Place]:
    """The places of a probe's fact, in a stable order: the dataset and its replicas (the
    column of the same name), and with a column of an identifier domain, every column of
    that domain."""
    out: list[Place] = []
    group = model.replica_group(probe.dataset)
    if probe.column is None:
        return [Place(d) for d in group]
    for d in group:
        found = declared(probe_columns(model, d), probe.column)
        if found is None and declared(model.datasets[d].omits, probe.column) is not None:
            continue  # the replica's table lacks the column: it holds none of the fact
        out.append(Place(d, found or probe.column))
    spec = model.datasets[probe.dataset].columns.get(
        declared(model.datasets[probe.dataset].columns, probe.column) or ""
    )
    if spec is not None and spec.identifier:
        for d in sorted(model.datasets):
            if d in group:
                continue  # a replica is asked by the column of the probe's name
            for col, other in model.datasets[d].columns.items():
                if other.identifier == spec.identifier:
                    out.append(Place(d, col))
    return out


def reaching(model: PolicyModel, probe: Probe) -> dict[str, list[tuple[int, Place]]]:
    """surface -> [(index in its ``reads``, place)] for every surface reaching the fact."""
    fact = places(model, probe)
    out: dict[str, list[tuple[int, Place]]] = {}
    for sname in sorted(model.surfaces):
        reads = model.surfaces[sname].reads
        # in the order of the fact's places: the probe's own dataset decides a tie
        found = [(reads.index(p.dataset), p) for p in fact if p.dataset in reads]
        if found:
            out[sname] = found
    return out


def where_problem(m: PolicyModel, dataset: str, dim: str) -> str | None:
    """Why a probe's ``where: {dim: ...}`` cannot name rows of ``dataset``, or None.

    A ``where`` names the rows of one value of an entitlement dimension; only a dimension the
    dataset's row filter is keyed by selects rows (any other would leave every row in, and the
    probe would pass or fail for a reason it does not state). A hand-written predicate may read
    any dimension, so there the rows are left to ``accord verify``, which executes it."""
    rf = m.datasets[dataset].row_filter
    if rf is not None and rf.expression is not None:
        return None
    dims = [d for d, _, _ in m.datasets[dataset].filter_dimensions]
    if dim in dims:
        return None
    if not dims:
        return (
            f"{dataset} has no row filter, so no {dim} value selects rows of it: remove the "
            "'where', or probe a dataset filtered by it"
        )
    return (
        f"{dataset} is not filtered by {dim!r}; its rows are filtered by "
        f"{', '.join(repr(d) for d in dims)}: name one of those dimensions, or probe a dataset "
        f"filtered by {dim!r}"
    )
