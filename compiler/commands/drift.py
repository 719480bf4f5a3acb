from __future__ import annotations

import contextlib
from typing import Any

import click

from accord.compiler.commands.options import (
    Choice,
    live_options,
    options_from,
    platforms_of,
    progress,
)
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.visible import visible
from accord.compiler.model.validate import load_project


@click.command("drift")
@click.argument("directory", default="policies", type=click.Path())
@click.option("--platform", required=True, type=Choice(["snowflake", "databricks", "all"]))
@click.option("--format", "fmt", default="text", type=Choice(["text", "json", "sarif"]))
@live_options
def command(directory: str, platform: str, fmt: str, **kwargs: Any) -> int:
    """Compare the model with what the platforms hold: findings ACC701-ACC708, located at the
    model's file:line:column, after one coverage line a platform (what was read, as which
    role, what could not be). Exit 1 when anything differs or could not be seen. Reads only."""
    from accord.compiler.lint.engine import finalize
    from accord.compiler.lint.report import render_json, render_sarif, render_text
    from accord.compiler.live.drift import drift
    from accord.compiler.live.hierarchy import read_hierarchies
    from accord.compiler.live.session import session
    from accord.targets.coverage import Coverage

    options = options_from(kwargs)
    with contextlib.ExitStack() as connections:
        try:
            project = load_project(directory)
            live = connections.enter_context(
                session(project, platforms_of(platform), options, progress(fmt))
            )
            read_hierarchies(project, live, options.jobs)  # with `inherits` in the model
        except (InputError, UsageError) as err:
            if fmt == "text":
                raise
            return _could_not_run(err, directory, fmt)
        found = drift(project, live.expected, live.catalogs, live.executors)
    findings = finalize(project, found)  # suppressions and sorting; no lint rule runs
    coverage = [(c.coverage or Coverage(p)).to_json() for p, c in sorted(live.catalogs.items())]
    if fmt == "json":
        click.echo(render_json(findings, coverage=coverage))
    elif fmt == "sarif":
        click.echo(render_sarif(findings, coverage=coverage))
    else:
        for p, c in sorted(live.catalogs.items()):
            for line in (c.coverage or Coverage(p)).lines():
                click.echo(visible(line))
        click.echo(
            render_text(findings, len(project.files)).replace("accord lint:", "accord drift:")
        )
    return 1 if any(not f.suppressed for f in findings) else 0


def _could_not_run(err: InputError | UsageError, directory: str, fmt: str) -> int:
    """Exit 2 with one valid machine document (docs/cli.md): JSON ``errors`` beside
    ``findings``; SARIF ``toolExecutionNotifications`` with ``executionSuccessful: false``."""
    from accord.compiler.lint.report import render_json, render_sarif

    if isinstance(err, InputError):
        problems = list(err.diagnostics)
    else:
        problems = [Diagnostic(Location(directory, 1, 1), str(err))]
    for d in problems:
        click.echo(f"accord: {visible(d.message)}", err=True)
    if fmt == "json":
        click.echo(render_json([], problems=problems))
    else:
        click.echo(render_sarif([], problems, as_results=False))
    return 2
