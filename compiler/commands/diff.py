"""``accord diff``: what a change of the model changes in who sees what (compiler/exposure/)."""

from __future__ import annotations

import click

from accord.compiler.commands.options import (
    base_option,
    directory_argument,
    fail_on_option,
    format_option,
    say,
)
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.visible import own_commands

FORMATS = ("text", "markdown", "json", "github")


@click.command("diff")
@directory_argument
@base_option(
    "The version to compare with: a git revision (origin/main) of DIRECTORY, read at the path "
    "DIRECTORY names and never checked out, or dir:PATH for a policy directory. A bare value "
    "is only ever a revision. The output says which base was read."
)
@format_option(
    FORMATS, "text for people; markdown for a pull-request comment; json or github annotations."
)
@fail_on_option(
    ("widening", "never"), "Exit 1 when anything widens (with widening).", default="never"
)
def command(directory: str, base: str, fmt: str, fail_on: str) -> int:
    """What the change from BASE to DIRECTORY changes in who sees what: per persona,
    dataset, column and surface, the dispositions that widen or narrow, each with the YAML
    line of DIRECTORY that causes it. Exit 0, or 1 with --fail-on widening when anything
    widens; 2 on invalid input."""
    from accord.compiler import exposure
    from accord.compiler.lint.config import load_config
    from accord.compiler.model.loader import sharing
    from accord.compiler.model.validate import load_project
    from accord.compiler.plan.source import (
        Base,
        load_base,
        parse_base,
        revision_config,
        shadowed,
    )

    read: Base | None = None
    try:
        wanted = parse_base(base)
        if wanted.kind == "live":
            raise UsageError(
                f"--base {base}: accord diff compares two models (personas, surfaces, grants); "
                "what is deployed holds catalog objects only: compare it with `accord drift`"
            )
        with sharing():  # the files both trees hold alike are parsed once
            head = load_project(directory)
            old, read = load_base(wanted, directory)
        # the lint configuration at the base revision and now: a setting that lowers what
        # fails widens (a dir: base is a policy directory alone: no configuration of its own)
        configs = None
        if read.kind == "git":
            configs = (revision_config(read, directory), load_config())
        result = exposure.exposure_diff(old, head, configs)
    except (InputError, UsageError) as err:
        if fmt not in ("json", "github"):
            raise
        problems = (
            err.diagnostics
            if isinstance(err, InputError)
            else [Diagnostic(Location(directory, 1, 1), str(err))]
        )
        if fmt == "json":
            empty = exposure.ExposureDiff([], [], None)
            click.echo(exposure.to_json(empty, problems, read.to_json() if read else None))
        else:
            with own_commands():  # every value in them is escaped
                for p in problems:
                    click.echo(exposure.annotation("error", p.location, "accord diff", p.message))
        for p in problems:
            click.echo(str(p), err=True)
        return 2
    note = shadowed(read)
    if note:
        say(note, err=True)
    said = read.describe()
    places = exposure.places_of(old.model, head.model)
    if fmt == "json":
        click.echo(exposure.to_json(result, base=read.to_json()))
    elif fmt == "markdown":
        drawn = exposure.diagram(result, old.model, head.model)
        click.echo(exposure.to_markdown(result, places, drawn, said), nl=False)
    elif fmt == "github":
        with own_commands():
            click.echo(exposure.to_github(result, places, said))
        click.echo(f"accord diff: {exposure.verdict(result, places)}", err=True)
    else:
        click.echo(exposure.to_text(result, places, said))
    return 1 if fail_on == "widening" and result.fails else 0
