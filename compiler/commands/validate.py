from __future__ import annotations

import click

from accord.compiler.commands.options import directory_argument
from accord.compiler.model.validate import load_project


@click.command("validate")
@directory_argument
def command(directory: str) -> int:
    """Load and validate the policy directory DIRECTORY (default: policies)."""
    project = load_project(directory)
    m = project.model
    click.echo(
        f"{directory}: valid ({len(project.files)} files, {len(m.datasets)} datasets, "
        f"{len(m.masks)} masks, {len(m.surfaces)} surfaces, {len(m.personas)} personas)"
    )
    return 0
