"""Run reviewed stages on a live platform and record them in the ledger.

``accord migrate apply`` executes exactly the files of the plan: a stage whose file no longer
matches the SHA-256 in ``plan.json`` is refused before anything runs. Salt placeholders are
filled in memory, right before execution (``targets.salts.materialize``); nothing with a salt
in it is written anywhere. After a stage, its verification queries run; a stage is recorded
``applied`` only when they all say ``ok``.

Executors speak to the platforms through their official clients, imported only here:
snowflake-connector-python (``execute_string``: statements in order on one session, the first
failure raises) and the Databricks SDK's statement execution API (one statement at a time; a
failed statement comes back with HTTP 200 and ``status.state == FAILED``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from compiler.errors import UsageError
from compiler.filelock import locked
from compiler.plan.ledger import (
    PlanInfo,
    Record,
    StageInfo,
    append_record,
    latest,
    read_ledger,
    read_plans,
    stage_status,
)
from compiler.plan.write import sha256
from targets.salts import SaltBox, SaltError, materialize


class ExecutionError(Exception):
    """A statement failed on the platform."""


class Executor(Protocol):
    def run(self, text: str) -> None:
        """Execute every statement of ``text`` in order; raise ExecutionError on the first
        failure."""

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        """Execute every statement of ``text``; the rows each one returned."""


def split_statements(text: str, dialect: str) -> list[str]:
    """The statements of ``text``, comments dropped, found with sqlglot's tokenizer (so a
    semicolon inside a string or a comment does not split)."""
    tokens = Dialect.get_or_raise(dialect).tokenizer_class().tokenize(text)
    out, start = [], None
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if start is not None:
                out.append(text[start : token.start].strip())
            start = None
        elif start is None:
            start = token.start
    if start is not None:
        out.append(text[start:].strip())
    return out


# --------------------------------------------------------------------------------------------
# executors

_SNOWFLAKE_ENV = {
    "account": "SNOWFLAKE_ACCOUNT",
    "user": "SNOWFLAKE_USER",
    "password": "SNOWFLAKE_PASSWORD",
    "role": "SNOWFLAKE_ROLE",
    "warehouse": "SNOWFLAKE_WAREHOUSE",
    "database": "SNOWFLAKE_DATABASE",
    "schema": "SNOWFLAKE_SCHEMA",
    "authenticator": "SNOWFLAKE_AUTHENTICATOR",
    "private_key_file": "SNOWFLAKE_PRIVATE_KEY_FILE",
    "private_key_file_pwd": "SNOWFLAKE_PRIVATE_KEY_FILE_PWD",
}


class SnowflakeExecutor:
    """Statements through a snowflake-connector-python connection."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    @classmethod
    def from_env(cls) -> SnowflakeExecutor:
        missing = [
            v
            for k, v in _SNOWFLAKE_ENV.items()
            if k in ("account", "user") and not os.environ.get(v)
        ]
        if missing:
            raise UsageError(f"set {' and '.join(missing)} to connect to Snowflake")
        import snowflake.connector

        params = {k: os.environ[v] for k, v in _SNOWFLAKE_ENV.items() if os.environ.get(v)}
        try:
            return cls(snowflake.connector.connect(**params))
        except snowflake.connector.errors.Error as err:
            raise UsageError(f"cannot connect to Snowflake: {err}") from None

    def _execute(self, text: str) -> list[Any]:
        from snowflake.connector.errors import Error

        try:
            return list(self.connection.execute_string(text))
        except Error as err:
            raise ExecutionError(str(err)) from None

    def run(self, text: str) -> None:
        self._execute(text)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        return [list(cursor.fetchall()) for cursor in self._execute(text)]


class DatabricksExecutor:
    """Statements through the Databricks SDK's statement execution API, one at a time."""

    def __init__(self, client: Any, warehouse_id: str, poll_seconds: float = 2.0) -> None:
        self.client = client
        self.warehouse_id = warehouse_id
        self.poll_seconds = poll_seconds

    @classmethod
    def from_env(cls) -> DatabricksExecutor:
        warehouse = os.environ.get("DATABRICKS_WAREHOUSE_ID")
        if not warehouse:
            raise UsageError("set DATABRICKS_WAREHOUSE_ID (and the SDK's DATABRICKS_HOST, ...)")
        from databricks.sdk import WorkspaceClient
        from databricks.sdk.errors import DatabricksError

        try:
            return cls(WorkspaceClient(), warehouse)
        except (DatabricksError, ValueError) as err:
            raise UsageError(f"cannot configure the Databricks client: {err}") from None

    def _execute(self, statement: str) -> Any:
        from databricks.sdk.errors import DatabricksError
        from databricks.sdk.service.sql import StatementState

        api = self.client.statement_execution
        try:
            response = api.execute_statement(
                statement=statement, warehouse_id=self.warehouse_id, wait_timeout="30s"
            )
            while response.status.state in (StatementState.PENDING, StatementState.RUNNING):
                time.sleep(self.poll_seconds)
                response = api.get_statement(response.statement_id)
        except DatabricksError as err:
            raise ExecutionError(str(err)) from None
        if response.status.state != StatementState.SUCCEEDED:
            error = response.status.error
            detail = error.message if error is not None and error.message else "no message"
            raise ExecutionError(f"{response.status.state.value}: {detail}")
        return response

    def run(self, text: str) -> None:
        for statement in split_statements(text, "databricks"):
            self._execute(statement)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        out = []
        for statement in split_statements(text, "databricks"):
            result = self._execute(statement).result
            rows = (result.data_array if result is not None else None) or []
            out.append([tuple(row) for row in rows])
        return out


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


@locked
def apply(
    plans_dir: str,
    ledger: Path,
    platform: str,
    executor: Callable[[], Executor],
    echo: Callable[[str], None],
) -> Outcome:
    """Run the pending stages of ``platform`` in order, stopping at the first failure."""
    stages = pending_stages(read_plans(plans_dir), read_ledger(ledger), platform)
    if not stages:
        return Outcome([])
    bad = changed_files(stages)
    if bad:
        return Outcome([], "changed since the plan was written (sha256 differs): " + ", ".join(bad))
    # every salt is read before anything runs: a missing one stops the run at no cost
    salts = SaltBox()
    runnable = list(prepared(stages, platform, salts))
    run = executor()
    done = []
    for stage, text, checks in runnable:
        echo(f"{stage.plan}/{stage.id}: applying")
        # a platform's error may quote the failed statement: never print a salt with it
        error = salts.redact(_run_stage(run, stage, text, checks, echo))
        status = "failed" if error else "applied"
        _record(ledger, stage, status)
        done.append((stage.id, status))
        if error:
            return Outcome(done, error)
    return Outcome(done)


def _run_stage(
    run: Executor, stage: StageInfo, text: str, checks: str, echo: Callable[[str], None]
) -> str:
    """Run a stage, then its checks; the failure in words, or "" when all went well."""
    try:
        run.run(text)
        results = run.results(checks)
    except ExecutionError as err:
        return f"{stage.plan}/{stage.id} failed: {err}"
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
    try:
        executor().run(text)
    except ExecutionError as err:
        return Outcome([], salts.redact(f"{stage.plan}/{stage.id}: rollback failed: {err}"))
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
