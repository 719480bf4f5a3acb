"""``accord verify``: the compiled SQL verified at every date that matters, probes included."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date, timedelta
from typing import TYPE_CHECKING

from accord.compiler.core.platforms import DATABRICKS
from accord.compiler.core.progress import finished, silent
from accord.compiler.core.today import today
from accord.compiler.model.grants import expiry_dates
from accord.compiler.model.validate import Project
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.probes import check_probes
from accord.compiler.verify.report import Report
from accord.compiler.verify.sources import CompiledSQL, load_sql, read_compiled_dir, render_sql

#: the platform a local Spark runs the SQL of
PLATFORM = DATABRICKS.name

if TYPE_CHECKING:
    from accord.compiler.verify.spark.harness import SparkHarness
    from accord.compiler.verify.spark.session import LocalSpark


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
    engine: str = "duckdb",
    spark: LocalSpark | None = None,
    progress: Callable[[str], None] = silent,
) -> Report:
    """Verify the SQL compiled from ``project`` (in memory), or the files under ``compiled``
    (a directory written by ``accord compile``) as they are now, at ``as_of`` (default:
    :func:`compiler.core.today.today`) and, when grants carry ``until``, on both sides of
    every expiry. ``engine``: ``duckdb``, ``spark`` (the Databricks SQL on Spark, the
    Snowflake SQL on DuckDB) or ``all`` (both, and each compared with the other:
    :mod:`compiler.verify.engines`). ``spark``: a started session to use (the tests share one);
    by default one is started for the run and stopped after it. ``progress`` is told each
    stage (``compiler.core.progress``)."""
    try:
        if engine == "duckdb":
            return _verify(project, compiled, as_of, None, progress)
        from accord.compiler.verify.spark import session  # noqa: PLC0415 - pyspark: only for --engine spark|all

        own = spark is None
        if own:
            progress("verify: starting a local Spark")
        spark = spark or session.start()
        try:
            return _verify(project, compiled, as_of, (engine, spark), progress)
        finally:
            if own:
                spark.stop()
    finally:
        finished(progress)  # the report printed next is not drawn over


def _verify(
    project: Project,
    compiled: str | None,
    as_of: date | None,
    engines: tuple[str, LocalSpark] | None,
    progress: Callable[[str], None],
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
    harness = None
    if engines is not None:
        from accord.compiler.verify.spark.harness import SparkHarness  # noqa: PLC0415 - as above

        harness = SparkHarness(engines[1], sql)
    try:
        if harness is not None:
            progress("verify: the compiled Databricks SQL on Spark")
            harness.set_up()  # once: the compiled statements are the same every day
        report = _one_day(project, sql, salts, day, harness, engines, progress)
        if len(days) == 1 and not expiry_dates(project.model):
            return report
        report.dates = tuple(d.isoformat() for d in days)
        report.mismatches = [replace(m, as_of=day.isoformat()) for m in report.mismatches]
        for other in days[1:]:
            # the compiled statements are read once; each day runs on its own DuckDB database
            extra = _one_day(project, sql, salts, other, harness, engines, progress)
            report.checks += extra.checks
            report.mismatches += [replace(m, as_of=other.isoformat()) for m in extra.mismatches]
            report.observations += [o for o in extra.observations if o not in report.observations]
        return report
    finally:
        if harness is not None:
            harness.close()


def _one_day(
    project: Project,
    sql: CompiledSQL,
    salts: TestSalts,
    day: date,
    harness: SparkHarness | None,
    engines: tuple[str, LocalSpark] | None,
    progress: Callable[[str], None],
) -> Report:
    """One day's verification: DuckDB's, and Spark's when it runs (with ``--engine spark``
    DuckDB leaves the Databricks datasets to Spark, and the probes read Spark's answers)."""
    progress(f"verify: every persona's answers on DuckDB, as of {day.isoformat()}")
    if harness is None or engines is None:
        verifier = Verifier(project, sql, salts, day)
        report = verifier.run()
        if project.model.probes:
            progress("verify: the probes")
            report.probes = check_probes(verifier)
        return report
    from accord.compiler.verify.engines import (  # noqa: PLC0415 - as above
        combine,
        engines_disagree,
        model_with_spark,
    )

    engine = engines[0]
    others = {d.platform for d in project.model.datasets.values()} - {PLATFORM}
    verifier = Verifier(project, sql, salts, day, platforms=None if engine == "all" else others)
    report = verifier.run()
    progress(f"verify: every persona's answers on Spark, as of {day.isoformat()}")
    result = harness.evaluate(verifier)
    found, checks = model_with_spark(verifier, result)
    if engine == "all":
        if project.model.probes:
            report.probes = check_probes(verifier)
        disagree, compared = engines_disagree(verifier, result)
        return combine("all", report, found, checks, disagree, compared)
    verifier.uses.update(result.uses)  # type: ignore[arg-type]
    verifier.parts_of.update(result.parts_of)
    if project.model.probes:
        progress("verify: the probes")
        report.probes = check_probes(verifier)
    return combine("spark", report, found, checks)
