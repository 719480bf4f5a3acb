"""ACC601: rules over the migration history: plans and their ledger."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding


def _paths(ctx: Context) -> tuple[Path, Path] | None:
    """(plans directory, ledger) from ``--plans`` / ``--ledger``: either one implies the other
    (the ledger lives in the plans directory by default)."""
    plans, ledger = ctx.history.plans, ctx.history.ledger
    if plans is None and ledger is None:
        return None
    plans_dir = Path(plans) if plans is not None else Path(str(ledger)).parent
    # imported here: the ledger's module (its file lock imports socket) is needed only when
    # lint is given --plans or --ledger
    from accord.compiler.history.ledger import default_ledger  # noqa: PLC0415 - only with --plans/--ledger

    return plans_dir, Path(ledger) if ledger is not None else default_ledger(plans_dir)


@rule("ACC601")
def half_applied_migration(ctx: Context) -> Iterator[Finding]:
    """A cutover group is applied on some of its platforms and not all.

    ## What it does
    Reads the migration plans and their ledger (`accord lint --plans DIR --ledger FILE`) and
    reports every cutover group of a plan whose stage is applied on some platforms and not on
    the others. The finding points at the ledger line of the group's last record.

    ## Why is this bad?
    A cutover group is one change of meaning that spans platforms: a salt introduced or
    rotated on an identifier domain, or a mask's strategy changed, where the domain is held on
    both the warehouse and the lakehouse. Applied on one side only, it looks done: the
    warehouse shows salted digests, the change window is closed. But the lakehouse still
    serves the old digests, so the masked rows of the two catalogs still join on them (or, for
    a rotation, stop matching what downstream consumers expect), and nobody is looking any
    more.

    ## Example
    `migrations/ledger.jsonl`:
    ```json
    {"plan": "0001_subject-cutover", "stage": "05_snowflake_cutover_subject",
     "platform": "snowflake", "status": "applied", ...}
    ```
    and no `applied` record for `06_databricks_cutover_subject`.

    ## How to fix
    Apply the group's stage on the missing platform
    (`accord migrate apply --platform databricks`), or roll the applied one back
    (`accord migrate rollback --platform snowflake`). `accord migrate status` lists the state
    of every stage.
    """
    paths = _paths(ctx)
    if paths is None:
        return
    plans_dir, ledger = paths
    from accord.compiler.history.ledger import half_applied_groups  # noqa: PLC0415 - only with --plans/--ledger

    for h in half_applied_groups(plans_dir, ledger):
        yield Finding(
            location=h.location,
            rule="ACC601",
            object=f"migrations.{h.plan}.{h.group}",
            message=(
                f"cutover group {h.group!r} of migration {h.plan} is applied on "
                f"{', '.join(h.applied)} but not on {', '.join(h.missing)}: the change is only "
                "done when every platform has it, and until then the platforms disagree"
            ),
            fix=(
                f"apply the group's stage on {', '.join(h.missing)} (accord migrate apply "
                f"--platform {h.missing[0]} --plans {plans_dir}), or roll back the applied one"
            ),
        )
