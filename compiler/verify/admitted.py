"""What hand-written row predicates admit, per persona, executed as ``accord verify`` executes
them: ``accord diff`` compares a predicate with an entitlement filter by the values it admits
(compiler/exposure/predicates.py, ``resolve_expressions``)."""

from __future__ import annotations

from accord.compiler.model.validate import Project

#: (persona, dataset) -> (entitlement dimension, values admitted, every row admitted)
Admitted = dict[tuple[str, str], tuple[str | None, frozenset[str] | None, bool]]


def admitted_rows(
    project: Project, datasets: list[str], subjects: list[str] | None = None
) -> Admitted:
    """What the hand-written row predicates of ``datasets`` admit, per persona, by executing
    the SQL compiled from ``project`` on DuckDB (as :func:`verify` does).

    A predicate is resolved to entitlement values when it reads one argument and the replica
    group filters that column by an entitlement dimension (the generated rows then carry
    every value of the dimension, one granted to nobody, and NULL). The dimension is None
    when it reads anything else; the values are None when it admits a row of no declared
    value (granted to nobody, or NULL) without admitting every row. ``subjects``: identities
    evaluated beside the personas (:class:`~compiler.verify.engine.Verifier`)."""
    from accord.compiler.verify.engine import TestSalts, Verifier
    from accord.compiler.verify.sources import load_sql, render_sql

    salts = TestSalts()
    sql = load_sql(render_sql(project), salts, "the SQL compiled from the model")
    verifier = Verifier(project, sql, salts, subjects=subjects)
    verifier.evaluate(datasets)  # only these are executed, not the whole estate
    model = project.model
    out: Admitted = {}
    for dataset in datasets:
        rf = model.datasets[dataset].row_filter
        table = verifier.tables[dataset]
        args = [a.lower() for a in (rf.arguments or {})] if rf is not None else []
        roles = [c.role for c in table.columns if c.name.lower() in args]
        dimension = (
            roles[0].split(":", 1)[1]
            if len(roles) == 1 and roles[0].startswith("entitlement:")
            else None
        )
        declared = frozenset(model.entitlements.get(dimension, {})) if dimension else frozenset()
        for persona, rows in verifier.results.get(dataset, {}).items():
            visible = [r for r, (shown, _) in sorted(rows.items()) if shown]
            everything = len(visible) == table.length
            if dimension is None:
                out[(persona, dataset)] = (None, None, everything)
                continue
            seen = {table.value(r, args[0]) for r in visible}
            values = frozenset(str(v) for v in seen) if seen <= declared else None
            out[(persona, dataset)] = (dimension, values, everything)
    return out
