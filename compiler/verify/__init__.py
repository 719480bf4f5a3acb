"""``accord verify``: execute the compiled policies on embedded DuckDB, per persona, and
compare what they show with what the model says (:mod:`compiler.semantics`).

The modules: :mod:`~compiler.verify.sources` reads the SQL that ships,
:mod:`~compiler.verify.bind` binds policy bodies to DuckDB, :mod:`~compiler.verify.data`
generates rows, :mod:`~compiler.verify.engine` runs and compares (it alone imports duckdb),
:mod:`~compiler.verify.report` renders the result.
"""

from __future__ import annotations

from compiler.validate import Project
from compiler.verify.report import Report


def verify(project: Project, compiled: str | None = None) -> Report:
    """Verify the SQL compiled from ``project`` (in memory), or the files under ``compiled``
    (a directory written by ``accord compile``) as they are now."""
    from compiler.compile import render_files
    from compiler.verify.engine import TestSalts, Verifier
    from compiler.verify.sources import load_sql, read_compiled_dir

    salts = TestSalts()
    if compiled is None:
        files = render_files(project, "all")
        origin = "the SQL `accord compile` writes for this model (compiled in memory)"
    else:
        files = read_compiled_dir(compiled)
        origin = f"the compiled SQL in {compiled}"
    sql = load_sql(files, salts, origin)
    return Verifier(project, sql, salts).run()


#: (persona, dataset) -> (entitlement dimension, values admitted, every row admitted)
Admitted = dict[tuple[str, str], tuple[str | None, frozenset[str] | None, bool]]


def admitted_rows(project: Project, datasets: list[str]) -> Admitted:
    """What the hand-written row predicates of ``datasets`` admit, per persona, by executing
    the SQL compiled from ``project`` on DuckDB (as :func:`verify` does).

    A predicate is resolved to entitlement values when it reads one argument and the replica
    group filters that column by an entitlement dimension (the generated rows then carry
    every value of the dimension, one granted to nobody, and NULL). The dimension is None
    when it reads anything else; the values are None when it admits a row of no declared
    value (granted to nobody, or NULL) without admitting every row."""
    from compiler.compile import render_files
    from compiler.verify.engine import TestSalts, Verifier
    from compiler.verify.sources import load_sql

    salts = TestSalts()
    sql = load_sql(render_files(project, "all"), salts, "the SQL compiled from the model")
    verifier = Verifier(project, sql, salts)
    verifier.build()
    for dataset in datasets:  # only these are executed, not the whole estate
        _, columns, result = verifier.execute(dataset)
        verifier._collect(dataset, columns, result)
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
            everything = len(visible) == len(table.rows)
            if dimension is None:
                out[(persona, dataset)] = (None, None, everything)
                continue
            seen = {table.value(r, args[0]) for r in visible}
            values = frozenset(str(v) for v in seen) if seen <= declared else None
            out[(persona, dataset)] = (dimension, values, everything)
    return out
