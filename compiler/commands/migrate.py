from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from accord.compiler.commands.options import Choice, live_options, options_from, progress, say
from accord.compiler.core.progress import finished

if TYPE_CHECKING:
    from accord.compiler.plan.apply import Outcome

PLATFORM = Choice(["snowflake", "databricks"])


def _ledger(plans: str, ledger: str | None) -> Path:
    from accord.compiler.history.ledger import default_ledger

    return Path(ledger) if ledger else default_ledger(plans)


plans_option = click.option(
    "--plans", default="migrations", show_default=True, type=click.Path(), help="Plans directory."
)
ledger_option = click.option(
    "--ledger", default=None, type=click.Path(), help="Ledger file [default: PLANS/ledger.jsonl]."
)


@click.group("migrate")
def command() -> None:
    """Apply staged migration plans, roll them back, and report their state."""


@command.command("status")
@plans_option
@ledger_option
def status(plans: str, ledger: str | None) -> int:
    """Every plan and stage: applied, pending or failed. Exit 1 when a cutover group is applied
    on some of its platforms and not all."""
    from accord.compiler.history.ledger import (
        half_applied,
        latest,
        read_ledger,
        read_plans,
        stage_status,
    )

    path = _ledger(plans, ledger)
    infos, records = read_plans(plans), read_ledger(path)
    last = latest(records)
    if not infos:
        say(f"{plans}: no plans")
    for plan in infos:
        say(plan.id)
        for stage in plan.stages:
            state = stage_status(stage, last)
            record = last.get((plan.id, stage.id))
            when = f"  {record.at}" if record is not None and state != "pending" else ""
            if state == "applied" and record is not None and record.sha256 != stage.sha256:
                state = "applied (from a different file: sha256 differs)"
            group = f"  [cutover group {stage.group}]" if stage.group else ""
            say(f"  {stage.id:<40} {stage.platform:<11} {state}{when}{group}")
    broken = half_applied(infos, records, path)
    for h in broken:
        say(
            f"{h.location}: cutover group {h.group!r} of {h.plan} is applied on "
            f"{', '.join(h.applied)} but not on {', '.join(h.missing)}: it is done only "
            "when every platform is",
            err=True,
        )
    return 1 if broken else 0


@command.command("apply")
@click.option("--platform", required=True, type=PLATFORM, help="The platform to apply on.")
@plans_option
@ledger_option
@click.option("--dry-run", is_flag=True, help="Print the statements; run nothing.")
@click.option(
    "--policies",
    default="policies",
    show_default=True,
    type=click.Path(),
    help="The model a plan from a live base was made for (its live base is checked first).",
)
@click.option(
    "--abac-settle",
    "abac_settle",
    type=click.FloatRange(min=0),
    default=15.0,
    show_default=True,
    metavar="MINUTES",
    help="Databricks: minutes a handover stage waits after the stage that tagged its columns "
    "(a governed-tag assignment takes minutes to take effect); 0 once a probe shows the ABAC "
    "policies in effect.",
)
@live_options
def apply_command(
    platform: str,
    plans: str,
    ledger: str | None,
    dry_run: bool,
    policies: str,
    abac_settle: float,
    **kwargs: Any,
) -> int:
    """Run the next pending stages of PLATFORM in order, stopping at the first failure, and
    record each in the ledger. A stage whose file changed since the plan was written is
    refused (exit 1)."""
    from accord.compiler.history.ledger import read_ledger, read_plans
    from accord.compiler.plan import apply as runner

    path = _ledger(plans, ledger)
    if dry_run:
        stages = runner.pending_stages(read_plans(plans), read_ledger(path), platform)
        bad = runner.changed_files(stages)
        if bad:
            say(f"accord migrate apply: refused: changed since planned: {', '.join(bad)}", err=True)
            return 1
        for stage in stages:
            say(f"-- ===== {stage.plan}/{stage.file.name} =====")
            click.echo(stage.file.read_text(encoding="utf-8"))
        if not stages:
            say(f"nothing pending on {platform}")
        return 0
    from accord.compiler.connect.executor import open_executor
    from accord.compiler.live.plan import check_live_base

    options = options_from(kwargs)
    records = read_ledger(path)
    stages = runner.pending_stages(read_plans(plans), records, platform)
    changed = check_live_base(plans, stages, records, platform, policies, options)
    if changed:
        say(f"accord migrate apply: refused, nothing ran: {changed}", err=True)
        return 1
    shown, echo = _progress()
    outcome = runner.apply(
        plans,
        path,
        platform,
        lambda: open_executor(platform, options, shown),
        echo,
        settle_minutes=abac_settle,
    )
    finished(shown)  # the report is not drawn over
    return _report(outcome, f"nothing pending on {platform}", "apply")


@command.command("rollback")
@click.option("--platform", required=True, type=PLATFORM, help="The platform to roll back on.")
@plans_option
@ledger_option
@live_options
def rollback_command(platform: str, plans: str, ledger: str | None, **kwargs: Any) -> int:
    """Undo the last applied stage of PLATFORM with its rollback file, and record it."""
    from accord.compiler.connect.executor import open_executor
    from accord.compiler.plan import apply as runner

    options = options_from(kwargs)
    shown, echo = _progress()
    outcome = runner.rollback(
        plans,
        _ledger(plans, ledger),
        platform,
        lambda: open_executor(platform, options, shown),
        echo,
    )
    finished(shown)
    return _report(outcome, f"nothing applied on {platform}", "rollback")


def _progress() -> tuple[Callable[[str], None], Callable[[str], None]]:
    """The statements' progress (a bar on a terminal, else nothing), and how the run says a
    line on standard output: the bar cleared first, so that the line is not drawn over."""
    shown = progress()

    def echo(line: str) -> None:
        finished(shown)
        say(line)

    return shown, echo


def _report(outcome: Outcome, nothing: str, verb: str) -> int:
    for stage, state in outcome.done:
        say(f"{stage}: {state}")
    if outcome.error:
        say(f"accord migrate {verb}: {outcome.error}", err=True)
        return 1
    if not outcome.done:
        say(nothing)
    return 0
