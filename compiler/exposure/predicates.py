"""Hand-written row predicates, resolved for ``accord diff``: the rows a predicate admits per
persona, as entitlement values, by executing it with ``accord verify``'s engine (on DuckDB)."""

from __future__ import annotations

from collections.abc import Iterable

from accord.compiler.exposure.changes import Cell
from accord.compiler.model.validate import Project
from accord.compiler.verify.admitted import admitted_rows


def resolve_expressions(
    project: Project,
    datasets: list[str],
    notes: list[str] | None = None,
    subjects: Iterable[str] = (),
) -> dict[tuple[str, str], Cell | None]:
    """(subject, dataset) -> the rows a hand-written row predicate admits, as entitlement
    values, by executing it (``accord verify``'s engine, on DuckDB), for datasets whose
    predicate reads a column the replica group filters by an entitlement dimension, per
    persona and per identity of ``subjects``. Nothing is executed (and duckdb not imported)
    when no dataset has a hand-written predicate."""
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
    try:
        admitted = admitted_rows(project, wanted, list(subjects))
    except Exception as err:  # any failure leaves the predicates unresolved, and said so
        if notes is not None:
            told = "; ".join(str(err).splitlines()[:3])
            notes.append(
                f"the hand-written row predicates of {', '.join(wanted)} in {project.origin.file} "
                f"could not be executed ({type(err).__name__}: {told}): their rows are compared "
                "as written, and any change of them is listed as a widening"
            )
        return {}
    out: dict[tuple[str, str], Cell | None] = {}
    for (persona, dataset), (dimension, values, everything) in admitted.items():
        if everything:
            out[(persona, dataset)] = Cell("clear")
        elif dimension is None or values is None:
            out[(persona, dataset)] = None
        elif not values:
            out[(persona, dataset)] = Cell("denied")
        else:
            out[(persona, dataset)] = Cell("filtered", values=values, dimension=dimension)
    return out
