from __future__ import annotations

import click

from compiler.model.validate import load_project


@click.command("verify")
@click.argument("directory", default="policies", type=click.Path())
@click.option(
    "--compiled",
    "compiled",
    type=click.Path(),
    default=None,
    help="Check the SQL files in this directory (written by `accord compile`, perhaps edited "
    "since) instead of compiling afresh.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def command(directory: str, compiled: str | None, fmt: str) -> int:
    """Execute the compiled policies on embedded DuckDB for every persona and compare what
    each sees with the model. Exit 1 on any mismatch."""
    from compiler.verify import verify

    project = load_project(directory)
    report = verify(project, compiled)
    click.echo(report.to_json() if fmt == "json" else report.to_text())
    return 1 if report.mismatches else 0
