from __future__ import annotations

import click

from accord.compiler.commands.options import (
    Choice,
    compiled_option,
    directory_argument,
    format_option,
    progress,
)
from accord.compiler.core.errors import UsageError
from accord.compiler.core.today import parse_day
from accord.compiler.model.validate import load_project


@click.command("verify")
@directory_argument
@compiled_option(
    "Check the SQL files in this directory (written by `accord compile`, perhaps edited "
    "since) instead of compiling afresh."
)
@format_option(("text", "json"))
@click.option(
    "--as-of",
    "as_of",
    metavar="YYYY-MM-DD",
    default=None,
    help="The day CURRENT_DATE() answers and grants with `until` are judged at (default: "
    "ACCORD_TODAY, else today in UTC); both sides of every expiry are checked as well.",
)
@click.option(
    "--engine",
    type=Choice(["duckdb", "spark", "all"]),
    default="duckdb",
    show_default=True,
    help="duckdb: both platforms' SQL on embedded DuckDB, translated by sqlglot. spark: the "
    "Databricks SQL as compiled on a local Spark SQL engine (the extra accord[spark]; the "
    "Snowflake SQL stays on DuckDB). all: both engines, each compared with the model and "
    "with the other.",
)
def command(directory: str, compiled: str | None, fmt: str, as_of: str | None, engine: str) -> int:
    """Execute the compiled policies for every persona and compare what each sees with the
    model: on embedded DuckDB, and with --engine spark|all on a local Spark SQL engine too.
    Exit 1 on any mismatch."""
    from accord.compiler.verify.run import verify

    day = None
    if as_of is not None:
        day = parse_day(as_of)
        if day is None:
            raise UsageError(f"--as-of {as_of!r} is not a date written YYYY-MM-DD")
    project = load_project(directory)
    if engine != "duckdb":
        from accord.compiler.verify.spark.session import available, missing

        if not available():
            raise missing()
    report = verify(project, compiled, day, engine, progress=progress(fmt))
    click.echo(report.to_json() if fmt == "json" else report.to_text())
    return 1 if report.mismatches else 0
