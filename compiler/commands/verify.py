from __future__ import annotations

import click

from compiler.commands.options import compiled_option, directory_argument, format_option
from compiler.model.validate import load_project


@click.command("verify")
@directory_argument
@compiled_option(
    "Check the SQL files in this directory (written by `accord compile`, perhaps edited "
    "since) instead of compiling afresh."
)
@format_option(("text", "json"))
def command(directory: str, compiled: str | None, fmt: str) -> int:
    """Execute the compiled policies on embedded DuckDB for every persona and compare what
    each sees with the model. Exit 1 on any mismatch."""
    from compiler.verify import verify

    project = load_project(directory)
    report = verify(project, compiled)
    click.echo(report.to_json() if fmt == "json" else report.to_text())
    return 1 if report.mismatches else 0
