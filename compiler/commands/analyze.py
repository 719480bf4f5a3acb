from __future__ import annotations

import sys

import click

from accord.compiler.commands.options import directory_argument, format_option
from accord.compiler.core.visible import own_styles, visible
from accord.compiler.meaning.analyze import (
    Analysis,
    analyze,
    json_chunks,
    markdown_chunks,
    summary,
    tables,
    text_chunks,
)
from accord.compiler.meaning.mermaid import diagram, markdown_section
from accord.compiler.model.validate import load_project


@click.command("analyze")
@directory_argument
@format_option(
    ("text", "markdown", "json", "mermaid"),
    "text or markdown tables (markdown embeds the diagram); json; mermaid: the surface graph.",
)
def command(directory: str, fmt: str) -> int:
    """The surface table and, per persona, what every surface answers of each governed
    dataset and column. Exit 1 when the same facts are looser on one surface (ACC403)."""
    model = load_project(directory).model
    result = analyze(model)
    if fmt == "mermaid":
        click.echo(diagram(model, result.divergences), nl=False)
    elif fmt == "json":
        # written in pieces (the document is every persona's cells: ~100 MB at 4,000
        # datasets); JSON escapes every control character, so there is no ANSI sequence
        # for click.echo to strip and the bytes are those of click.echo(to_json(result))
        out = sys.stdout
        for chunk in json_chunks(result):
            out.write(chunk)
        out.write("\n")
        out.flush()
    elif fmt == "markdown":
        # a table at a time (each ends with a newline, so click.echo strips ANSI sequences
        # as it would from the whole)
        chunks = list(markdown_chunks(result))
        for chunk in chunks[:-1]:
            click.echo(chunk, nl=False)
        click.echo(markdown_section(model, result.divergences), nl=False)
        click.echo(chunks[-1], nl=False)  # the summary line
    elif sys.stdout.isatty():
        print_rich(result)
    else:
        for chunk in text_chunks(result):
            click.echo(chunk, nl=False)
        click.echo("")
    return 1 if result.divergences else 0


def print_rich(result: Analysis) -> None:
    """The text tables as rich tables (used on a terminal only). Every value is text: its
    control characters shown visibly and its brackets not rich markup; only rich's own
    styles reach the terminal."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    def cell(value: str) -> str:
        return escape(visible(value))

    console = Console()
    with own_styles():
        for title, header, rows in tables(result):
            table = Table(title=cell(title), title_justify="left")
            for h in header:
                table.add_column(cell(h))
            for row in rows:
                table.add_row(*(cell(v) for v in row))
            console.print(table)
        console.print(cell(summary(result)))
