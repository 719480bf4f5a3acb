from __future__ import annotations

import contextlib
import os
import sys

import click

from accord.compiler.commands.options import Choice, directory_argument
from accord.compiler.core.outdir import check_out, write_tree
from accord.compiler.core.visible import own_styles
from accord.compiler.model.validate import load_project
from accord.targets.render import TARGET_CHOICES, render_files


@click.command("compile")
@directory_argument
@click.option("--out", "out", required=True, type=click.Path(), help="Output directory.")
@click.option(
    "--target",
    type=Choice(TARGET_CHOICES),
    default="all",
    show_default=True,
    help="Which platform(s) to write.",
)
def command(directory: str, out: str, target: str) -> int:
    """Compile DIRECTORY to native policy SQL (and Terraform) under OUT.

    Lint runs first: while an error-level finding remains unsuppressed, nothing is written
    and the exit code is 1."""
    from accord.compiler.lint.engine import lint_project
    from accord.compiler.lint.report import format_findings

    check_out(out, directory)
    project = load_project(directory)
    blocking = [f for f in lint_project(project) if f.severity == "error" and not f.suppressed]
    if blocking:
        color = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
        # the colours pass the guard; format_findings renders every value visibly
        with own_styles() if color else contextlib.nullcontext():
            click.echo(format_findings(blocking, color) + "\n", err=True, color=color)
        click.echo(
            f"accord compile: refused: {len(blocking)} error-level lint finding(s); "
            "nothing was written",
            err=True,
        )
        return 1
    files = render_files(project, target)
    written = write_tree(out, files)
    for rel in written:
        click.echo(f"{out.rstrip('/')}/{rel}")
    return 0
