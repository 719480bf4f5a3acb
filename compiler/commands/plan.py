from __future__ import annotations

from typing import Any

import click

from accord.compiler.commands.options import (
    base_option,
    directory_argument,
    live_options,
    options_from,
    progress,
    say,
)
from accord.compiler.model.validate import load_project


@click.command("plan")
@directory_argument
@base_option(
    "The version to migrate from: a git revision (origin/main) of DIRECTORY, read at the path "
    "DIRECTORY names and never checked out; dir:PATH for a policy directory; or what is "
    "deployed: live:snowflake|live:databricks|live:all. A bare value is only ever a revision. "
    "The output says which base was read."
)
@click.option(
    "--out", default="migrations", show_default=True, type=click.Path(), help="Plans directory."
)
@click.option(
    "--name", default=None, help="Slug of the plan directory (default: from its changes)."
)
@click.option(
    "--adopt", is_flag=True, help="--base live:...: take over attachments accord did not make."
)
@click.option(
    "--keep-unmanaged", is_flag=True, help="--base live:...: leave attachments accord did not make."
)
@live_options
def command(
    directory: str,
    base: str,
    out: str,
    name: str | None,
    adopt: bool = False,
    keep_unmanaged: bool = False,
    **kwargs: Any,
) -> int:
    """Plan the staged migration from BASE to the policy directory DIRECTORY.

    Writes OUT/NNNN_<slug>/plan.json and, per stage, its statements, checks and rollback.
    Exit 1 (nothing written) when no order of the statements keeps every governed table and
    column protected; exit 0 with nothing written when the catalogs do not differ."""
    from accord.compiler.model.loader import sharing
    from accord.compiler.plan.source import load_base, parse_base, plan_projects, shadowed
    from accord.compiler.plan.state import PlanError
    from accord.compiler.plan.write import write_plan

    read = parse_base(base)
    with sharing():  # the files both trees hold alike are parsed once
        head = load_project(directory)
        old = None
        if read.kind != "live":
            old, read = load_base(read, directory)
    notes: list[str] = []
    try:
        if old is None:  # live:
            from accord.compiler.live.plan import plan_from_live

            plan, notes = plan_from_live(
                head, base, options_from(kwargs), progress(), adopt, keep_unmanaged
            )
        else:
            plan = plan_projects(old, head)
    except PlanError as err:
        say(f"accord plan: refused, nothing written: {err}", err=True)
        return 1
    note = shadowed(read)
    if note:
        say(note, err=True)
    say(f"accord plan: base: {read.describe()}")
    for note in notes:
        say(note)
    if plan.empty:
        say(f"accord plan: the catalogs of {base} and {directory} do not differ: nothing written")
    else:
        plan_id, written = write_plan(plan, out, name)
        say(f"accord plan: {plan_id}: {len(plan.stages)} stages")
        for stage in plan.stages:
            group = f"  cutover group {stage.group}" if stage.group else ""
            say(f"  {stage.id:<40} {len(stage.steps):>3} statement(s){group}")
        for group in plan.groups:
            say(f"cutover group {group.id}: done only when applied on {', '.join(group.platforms)}")
    if plan.outside:
        say("outside the catalogs (no SQL in the plan; rebuild or redeploy by hand):")
        for note in plan.outside:
            say(f"  {note}")
    if not plan.empty and not written:
        say(f"{plan_id} is already in the ledger and unchanged: nothing written")
    elif not plan.empty:
        say("written:")
        for rel in written:
            say(f"  {out.rstrip('/')}/{rel}")
    return 0
