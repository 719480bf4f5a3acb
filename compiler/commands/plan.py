from __future__ import annotations

import click

from compiler.validate import load_project


@click.command("plan")
@click.argument("directory", default="policies", type=click.Path())
@click.option(
    "--base",
    required=True,
    help="The version to migrate from: a policy directory, or a git revision "
    "(origin/main) of DIRECTORY.",
)
@click.option(
    "--out", default="migrations", show_default=True, type=click.Path(), help="Plans directory."
)
@click.option(
    "--name", default=None, help="Slug of the plan directory (default: from its changes)."
)
def command(directory: str, base: str, out: str, name: str | None) -> int:
    """Plan the staged migration from BASE to the policy directory DIRECTORY.

    Writes OUT/NNNN_<slug>/plan.json and, per stage, its statements, checks and rollback.
    Exit 1 (nothing written) when no order of the statements keeps every governed table and
    column protected; exit 0 with nothing written when the catalogs do not differ."""
    from compiler.plan.source import load_base, plan_projects
    from compiler.plan.state import PlanError
    from compiler.plan.write import write_plan

    head = load_project(directory)
    try:
        plan = plan_projects(load_base(base, directory), head)
    except PlanError as err:
        click.echo(f"accord plan: refused, nothing written: {err}", err=True)
        return 1
    if plan.empty:
        click.echo(
            f"accord plan: the catalogs of {base} and {directory} do not differ: nothing written"
        )
    else:
        plan_id, written = write_plan(plan, out, name)
        click.echo(f"accord plan: {plan_id}: {len(plan.stages)} stages")
        for stage in plan.stages:
            group = f"  cutover group {stage.group}" if stage.group else ""
            click.echo(f"  {stage.id:<40} {len(stage.steps):>3} statement(s){group}")
        for group in plan.groups:
            click.echo(
                f"cutover group {group.id}: done only when applied on {', '.join(group.platforms)}"
            )
    if plan.outside:
        click.echo("outside the catalogs (no SQL in the plan; rebuild or redeploy by hand):")
        for note in plan.outside:
            click.echo(f"  {note}")
    if not plan.empty and not written:
        click.echo(f"{plan_id} is already in the ledger and unchanged: nothing written")
    elif not plan.empty:
        click.echo("written:")
        for rel in written:
            click.echo(f"  {out.rstrip('/')}/{rel}")
    return 0
