"""Run reviewed stages on a live platform and record them in the ledger.

``accord migrate apply`` executes exactly the files of the plan: a stage whose file no longer
matches the SHA-256 in ``plan.json`` is refused before anything runs. Salt placeholders are
filled in memory, right before execution (``compiler.model.salts.materialize``); nothing with a salt
in it is written anywhere. After a stage, its verification queries run; a stage is recorded
``applied`` only when they all say ``ok``.

Statements run through the one executor per platform in ``compiler.connect.executor``
(snowflake-connector-python; the Databricks SDK's statement execution API), which also names
privilege denials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from accord.compiler.connect.executor import (
    DatabricksExecutor,
    DeniedError,
    ExecutionError,
    Executor,
    SnowflakeExecutor,
    split_statements,
)
from accord.compiler.core.errors import UsageError
from accord.compiler.core.filelock import locked
from accord.compiler.history.ledger import (
    PlanInfo,
    Record,
    StageInfo,
    append_record,
    latest,
    read_ledger,
    read_plans,
    stage_status,
)
from accord.compiler.model.salts import SaltBox, SaltError, materialize
from accord.compiler.plan.write import sha256
from accord.targets import checks as stage_checks

__all__ = [
    "EXECUTORS",
    "DatabricksExecutor",
    "DeniedError",
    "ExecutionError",
    "Executor",
    "SnowflakeExecutor",
    "apply",
    "rollback",
    "split_statements",
]


EXECUTORS: dict[str, Callable[[], Executor]] = {
    "snowflake": SnowflakeExecutor.from_env,
    "databricks": DatabricksExecutor.from_env,
}


# --------------------------------------------------------------------------------------------
# apply


@dataclass(frozen=True)
class Outcome:
    """What ``apply`` did: stage id -> status, and the message of a failure."""

    done: list[tuple[str, str]]
    error: str = ""


def _ok(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _on(plans: list[PlanInfo], records: list[Record], platform: str) -> list[tuple[StageInfo, str]]:
    """Every stage of ``platform`` in order, with its status."""
    last = latest(records)
    return [
        (s, stage_status(s, last)) for plan in plans for s in plan.stages if s.platform == platform
    ]


def pending_stages(plans: list[PlanInfo], records: list[Record], platform: str) -> list[StageInfo]:
    return [s for s, status in _on(plans, records, platform) if status != "applied"]


def changed_files(stages: list[StageInfo]) -> list[str]:
    """The files of ``stages`` that no longer match their checksum in plan.json."""
    bad = []
    for s in stages:
        for path, digest in ((s.file, s.sha256), (s.verify, s.verify_sha256)):
            if not path.is_file() or sha256(path.read_text(encoding="utf-8")) != digest:
                bad.append(str(path))
    return bad


def prepared(
    stages: list[StageInfo], platform: str, salts: SaltBox
) -> Iterator[tuple[StageInfo, str, str]]:
    """Each stage with its statements (salts filled in memory) and its checks."""
    for s in stages:
        text = s.file.read_text(encoding="utf-8")
        checks = s.verify.read_text(encoding="utf-8")
        # the text that runs is the text checked: a file changed since changed_files() is refused
        if sha256(text) != s.sha256 or sha256(checks) != s.verify_sha256:
            raise UsageError(f"{s.file}: changed while being read (sha256 differs); nothing ran")
        try:
            yield s, materialize(text, platform, salts), checks
        except SaltError as err:
            raise UsageError(f"{s.file}: {err}") from None


#: minutes a handover stage waits after the stage before it: "After assigning or modifying a
#: tag, it can take a few minutes for the change to take effect" (unity-catalog/abac/
#: requirements); until then the ABAC policies match nothing and the handover's drops would
#: leave the columns open
DEFAULT_SETTLE_MINUTES = 15.0


def settle_wait(
    stage: StageInfo, records: list[Record], settle_minutes: float, now: datetime
) -> str:
    """Why ``stage`` (a handover) may not start yet, or "". It waits ``settle_minutes`` after
    the last stage of its platform was recorded applied: the stage that tagged the columns
    and created the ABAC policies the handover hands the tables over to."""
    if stage.kind != "handover" or settle_minutes <= 0:
        return ""
    applied = [r for r in records if r.platform == stage.platform and r.status == "applied"]
    if not applied:
        return ""
    last = applied[-1]
    try:
        at = datetime.fromisoformat(last.at)
    except ValueError:
        return f"{stage.plan}/{stage.id}: the ledger's time of {last.stage} ({last.at!r}) is unreadable"
    ready = at + timedelta(minutes=settle_minutes)
    if now >= ready:
        return ""
    return (
        f"{stage.plan}/{stage.id} waits until {ready.isoformat(timespec='seconds')}: it drops "
        f"the table-level filters and masks that the ABAC policies of {last.stage} (applied "
        f"{last.at}) replace, and a governed-tag assignment can take a few minutes to take "
        "effect (unity-catalog/abac/requirements); until it does, the policies match nothing "
        f"and the columns would be open. Run `accord migrate apply` again then (or pass "
        f"--abac-settle 0 once a probe as an affected user shows the ABAC policies in effect)"
    )


@locked
def apply(
    plans_dir: str,
    ledger: Path,
    platform: str,
    executor: Callable[[], Executor],
    echo: Callable[[str], None],
    settle_minutes: float = DEFAULT_SETTLE_MINUTES,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Outcome:
    """Run the pending stages of ``platform`` in order, stopping at the first failure, or
    before a handover stage whose ABAC policies may not be in effect yet (:func:`settle_wait`:
    nothing of it runs, it stays pending)."""
    stages = pending_stages(read_plans(plans_dir), read_ledger(ledger), platform)
    if not stages:
        return Outcome([])
    wait = settle_wait(stages[0], read_ledger(ledger), settle_minutes, clock())
    if wait:
        return Outcome([], wait)
    bad = changed_files(stages)
    if bad:
        return Outcome([], "changed since the plan was written (sha256 differs): " + ", ".join(bad))
    # every salt is read before anything runs: a missing one stops the run at no cost
    salts = SaltBox()
    runnable = list(prepared(stages, platform, salts))
    run = executor()
    done = []
    try:
        for stage, text, checks in runnable:
            wait = settle_wait(stage, read_ledger(ledger), settle_minutes, clock())
            if wait:
                return Outcome(done, wait)
            echo(f"{stage.plan}/{stage.id}: applying")
            # a platform's error may quote the failed statement: never print a salt with it
            error = salts.redact(_run_stage(run, stage, text, checks, echo))
            status = "failed" if error else "applied"
            _record(ledger, stage, status)
            done.append((stage.id, status))
            if error:
                return Outcome(done, error)
    finally:
        _close(run)
    return Outcome(done)


def _close(run: Executor) -> None:
    close = getattr(run, "close", None)
    if close is not None:
        close()


def _run_stage(
    run: Executor, stage: StageInfo, text: str, checks: str, echo: Callable[[str], None]
) -> str:
    """Run a stage, then its checks; the failure in words, or "" when all went well."""
    try:
        run.run(text)
        results = run.results(checks)
    except ExecutionError as err:
        return f"{stage.plan}/{stage.id} failed: {err}"
    structured = stage_checks.parse(checks)
    if structured:
        # checks written as data (read through the platform's API): targets/checks.py
        try:
            results += stage_checks.run(run, stage.platform, structured)
        except Exception as err:  # the SDK's errors, or an executor without a client
            return f"{stage.plan}/{stage.id}: its statements ran, but its checks did not: {err}"
    for i, rows in enumerate(results, start=1):
        for row in rows:
            if len(row) > 1:  # a canary digest: compare it across the group's platforms
                echo(f"  check {i}: " + ", ".join(str(v)[:16] for v in row[1:]))
    failed = [
        str(i)
        for i, rows in enumerate(results, start=1)
        if not rows or not all(_ok(r[0]) for r in rows)
    ]
    if failed:
        return (
            f"{stage.plan}/{stage.id}: its statements ran, but check(s) {', '.join(failed)} of "
            f"{stage.verify.name} are not ok"
        )
    return ""


def last_applied(plans: list[PlanInfo], records: list[Record], platform: str) -> StageInfo | None:
    done = [s for s, status in _on(plans, records, platform) if status == "applied"]
    return done[-1] if done else None


@locked
def rollback(
    plans_dir: str,
    ledger: Path,
    platform: str,
    executor: Callable[[], Executor],
    echo: Callable[[str], None],
) -> Outcome:
    """Undo the last applied stage of ``platform`` with its rollback file."""
    stage = last_applied(read_plans(plans_dir), read_ledger(ledger), platform)
    if stage is None:
        return Outcome([])
    path = stage.rollback
    undo = path.read_text(encoding="utf-8") if path.is_file() else None
    if undo is None or sha256(undo) != stage.rollback_sha256:
        return Outcome([], f"changed since the plan was written (sha256 differs): {path}")
    salts = SaltBox()
    try:
        text = materialize(undo, platform, salts)  # the text checked is the text that runs
    except SaltError as err:
        raise UsageError(f"{path}: {err}") from None
    echo(f"{stage.plan}/{stage.id}: rolling back")
    run = executor()
    try:
        run.run(text)
    except ExecutionError as err:
        return Outcome([], salts.redact(f"{stage.plan}/{stage.id}: rollback failed: {err}"))
    finally:
        _close(run)
    _record(ledger, stage, "rolled_back")
    return Outcome([(stage.id, "rolled_back")])


def _record(ledger: Path, stage: StageInfo, status: str) -> None:
    append_record(
        ledger,
        {
            "plan": stage.plan,
            "stage": stage.id,
            "platform": stage.platform,
            "status": status,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "sha256": stage.sha256,
        },
    )
