"""``accord verify``: execute the compiled policies on embedded DuckDB, per persona, and
compare what they show with what the model says (:mod:`compiler.meaning.semantics`).

The modules: :mod:`~compiler.verify.sources` reads the SQL that ships,
:mod:`~compiler.verify.bind` binds policy bodies to DuckDB, :mod:`~compiler.verify.data`
generates rows, :mod:`~compiler.verify.parts` builds what is evaluated per dataset,
:mod:`~compiler.verify.execute` executes it (it alone imports duckdb),
:mod:`~compiler.verify.results` holds the answers, :mod:`~compiler.verify.compare` compares
them with the model, :mod:`~compiler.verify.engine` runs all of it, and
:mod:`~compiler.verify.report` renders the result.
"""

from __future__ import annotations

from compiler.model.validate import Project
from compiler.verify.report import Report


def verify(project: Project, compiled: str | None = None) -> Report:
    """Verify the SQL compiled from ``project`` (in memory), or the files under ``compiled``
    (a directory written by ``accord compile``) as they are now."""
    from compiler.verify.engine import TestSalts, Verifier
    from compiler.verify.sources import load_sql, read_compiled_dir, render_sql

    salts = TestSalts()
    if compiled is None:
        files = render_sql(project)
        origin = "the SQL `accord compile` writes for this model (compiled in memory)"
    else:
        files = read_compiled_dir(compiled)
        origin = f"the compiled SQL in {compiled}"
    sql = load_sql(files, salts, origin)
    verifier = Verifier(project, sql, salts)
    report = verifier.run()
    if project.model.probes:
        from compiler.verify.probes import check_probes

        report.probes = check_probes(verifier)
    return report
