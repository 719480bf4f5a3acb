"""``accord verify``: the compiled SQL verified at every date that matters, probes included."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta

from accord.compiler.core.progress import finished, silent
from accord.compiler.core.today import today
from accord.compiler.model.grants import expiry_dates
from accord.compiler.model.validate import Project
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.probes import check_probes
from accord.compiler.verify.report import Report
from accord.compiler.verify.sources import load_sql, read_compiled_dir, render_sql


def evaluation_dates(project: Project, as_of: date) -> list[date]:
    """The days verification evaluates at: ``as_of``, then for every grant's ``until`` that
    day (the grant holds) and the next (it no longer does), each once. A grant until the last
    day a date can be (9999-12-31) has no next day: it never lapses."""
    days = [as_of]
    for until in expiry_dates(project.model):
        after = [until + timedelta(days=1)] if until < date.max else []
        for day in (until, *after):
            if day not in days:
                days.append(day)
    return days


def verify(
    project: Project,
    compiled: str | None = None,
    as_of: date | None = None,
    progress: Callable[[str], None] = silent,
) -> Report:
    """Verify the SQL compiled from ``project`` (in memory), or the files under ``compiled``
    (a directory written by ``accord compile``) as they are now, at ``as_of`` (default:
    :func:`compiler.core.today.today`) and, when grants carry ``until``, on both sides of
    every expiry. ``progress`` is told each stage (``compiler.core.progress``)."""
    try:
        return _verify(project, compiled, as_of, progress)
    finally:
        finished(progress)  # the report printed next is not drawn over


def _verify(
    project: Project, compiled: str | None, as_of: date | None, progress: Callable[[str], None]
) -> Report:
    day = as_of or today()
    days = evaluation_dates(project, day)

    salts = TestSalts()
    progress("verify: compiling" if compiled is None else f"verify: reading {compiled}")
    if compiled is None:
        files = render_sql(project)
        origin = "the SQL `accord compile` writes for this model (compiled in memory)"
    else:
        files = read_compiled_dir(compiled)
        origin = f"the compiled SQL in {compiled}"
    sql = load_sql(files, salts, origin)
    progress(f"verify: every persona's answers on DuckDB, as of {day.isoformat()}")
    verifier = Verifier(project, sql, salts, day)
    report = verifier.run()
    if project.model.probes:
        progress("verify: the probes")
        report.probes = check_probes(verifier)
    if len(days) == 1 and not expiry_dates(project.model):
        return report
    report.dates = tuple(d.isoformat() for d in days)
    report.mismatches = [replace(m, as_of=day.isoformat()) for m in report.mismatches]
    for other in days[1:]:
        # the compiled statements are read once; each day runs on its own DuckDB database
        progress(f"verify: every persona's answers on DuckDB, as of {other.isoformat()}")
        extra = Verifier(project, sql, salts, other).run()
        report.checks += extra.checks
        report.mismatches += [replace(m, as_of=other.isoformat()) for m in extra.mismatches]
        report.observations += [o for o in extra.observations if o not in report.observations]
    return report
