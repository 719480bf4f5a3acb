"""One executor per platform: every statement accord runs on a live platform goes through here.

Snowflake: snowflake-connector-python, one statement at a time on one session (so a failure is
attributed to its statement). Databricks: the SDK's statement execution API, one statement at a
time, polled to completion within the statement timeout; a ``FAILED`` statement comes back with
HTTP 200 and is a failure, ``CANCELED`` and ``CLOSED`` are not successes, and a statement still
running at the deadline is cancelled and reported. A privilege denial (``compiler.connect.denials``)
raises :class:`DeniedError` and is never retried.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from compiler.connect.config import (
    LiveOptions,
    Timeouts,
    databricks_client,
    require_extra,
    snowflake_params,
    warehouse_id,
)
from compiler.connect.denials import Denial, classify
from compiler.core.errors import UsageError

Row = dict[str, Any]


class ExecutionError(Exception):
    """A statement failed on the platform."""


class DeniedError(ExecutionError):
    """The deploying role lacks a privilege: reported as such, never retried."""

    def __init__(self, denial: Denial) -> None:
        self.denial = denial
        super().__init__(str(denial))


class UnreachableError(UsageError):
    """The platform cannot be reached within the connect timeout: exit 2, one line."""


class Executor(Protocol):
    platform: str

    def run(self, text: str) -> None:
        """Execute every statement of ``text`` in order; raise ExecutionError on the first
        failure."""

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        """Execute every statement of ``text``; the rows each one returned."""

    def query(self, statement: str) -> list[Row]:
        """Execute one statement; its rows as dicts keyed by lower-case column name."""


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


def _first_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


# --------------------------------------------------------------------------------------------
# Snowflake


class SnowflakeExecutor:
    """Statements through a snowflake-connector-python connection, one at a time."""

    platform = "snowflake"

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        #: on a terminal: "statement n of m" (None in CI logs)
        self.progress: Callable[[str], None] | None = None

    @classmethod
    def connect(cls, options: LiveOptions | None = None) -> SnowflakeExecutor:
        require_extra("snowflake")
        options = options or LiveOptions()
        params = snowflake_params(options)
        import snowflake.connector

        try:
            return cls(snowflake.connector.connect(**params))
        except snowflake.connector.errors.Error as err:
            raise UsageError(f"cannot connect to Snowflake: {_first_line(err)}") from None
        except (OSError, TimeoutError) as err:
            raise UsageError(f"cannot connect to Snowflake: {_first_line(err)}") from None

    @classmethod
    def from_env(cls) -> SnowflakeExecutor:
        """The connection ``accord migrate apply`` always made: SNOWFLAKE_* (or connections.toml)."""
        return cls.connect(LiveOptions())

    def _execute(self, statement: str) -> Any:
        from snowflake.connector.errors import Error

        try:
            return list(self.connection.execute_string(statement))
        except Error as err:
            denial = classify("snowflake", err, statement)
            if denial is not None:
                raise DeniedError(denial) from None
            raise ExecutionError(str(err)) from None

    def _each(self, text: str) -> list[Any]:
        cursors = []
        statements = split_statements(text, "snowflake")
        for n, statement in enumerate(statements, start=1):
            if self.progress is not None:
                self.progress(f"snowflake: statement {n} of {len(statements)}")
            cursors += self._execute(statement)
        return cursors

    def run(self, text: str) -> None:
        self._each(text)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        return [list(cursor.fetchall()) for cursor in self._each(text)]

    def query(self, statement: str) -> list[Row]:
        (cursor,) = self._execute(statement)[-1:]
        names = [d[0].lower() for d in cursor.description or ()]
        return [dict(zip(names, row, strict=False)) for row in cursor.fetchall()]

    def close(self) -> None:
        close = getattr(self.connection, "close", None)
        if close is not None:
            # closing is best effort: the session expires on its own
            with contextlib.suppress(Exception):
                close()


# --------------------------------------------------------------------------------------------
# Databricks


class DatabricksExecutor:
    """Statements through the Databricks SDK's statement execution API, one at a time."""

    platform = "databricks"

    def __init__(
        self,
        client: Any,
        warehouse_id: str,
        poll_seconds: float = 2.0,
        timeouts: Timeouts | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.warehouse_id = warehouse_id
        self.poll_seconds = poll_seconds
        self.timeouts = timeouts or Timeouts()
        self.clock = clock
        #: on a terminal: "statement n of m" (None in CI logs)
        self.progress: Callable[[str], None] | None = None

    @classmethod
    def connect(cls, options: LiveOptions | None = None) -> DatabricksExecutor:
        """Configure the client and check it reaches the workspace (``current_user.me()``),
        all within the connect timeout: the SDK retries a silent host for several request
        timeouts, so the whole connect runs under one deadline."""
        require_extra("databricks")
        options = options or LiveOptions()
        warehouse = warehouse_id(options)

        def reach() -> Any:
            from databricks.sdk.errors import DatabricksError, PermissionDenied, Unauthenticated

            client = databricks_client(options)
            try:
                client.current_user.me()
            except (PermissionDenied, Unauthenticated) as err:
                raise UsageError(
                    f"cannot log in to Databricks at {client.config.host}: {_first_line(err)[:300]}"
                ) from None
            except DatabricksError:
                pass  # the workspace answered: reachable (DatabricksError is an OSError too)
            except (OSError, TimeoutError) as err:
                raise UnreachableError(
                    f"cannot reach Databricks at {client.config.host}: {_first_line(err)[:300]}"
                ) from None
            return client

        client = within(options.timeouts.connect, reach, "Databricks")
        return cls(client, warehouse, timeouts=options.timeouts)

    @classmethod
    def from_env(cls) -> DatabricksExecutor:
        return cls.connect(LiveOptions())

    def _wait(self) -> str:
        """``wait_timeout`` for execute_statement: 0s (asynchronous) or 5 to 50 seconds."""
        budget = self.timeouts.statement
        if budget >= 30:
            return "30s"
        return "0s" if budget < 5 else f"{int(budget)}s"

    def _fail(self, err: Any, statement: str) -> ExecutionError:
        denial = classify("databricks", err, statement)
        if denial is not None:
            return DeniedError(denial)
        return ExecutionError(_first_line(err) if isinstance(err, BaseException) else str(err))

    def _execute(self, statement: str) -> Any:
        from databricks.sdk.errors import DatabricksError
        from databricks.sdk.service.sql import StatementState

        api = self.client.statement_execution
        deadline = self.clock() + self.timeouts.statement
        try:
            response = api.execute_statement(
                statement=statement, warehouse_id=self.warehouse_id, wait_timeout=self._wait()
            )
            while response.status.state in (StatementState.PENDING, StatementState.RUNNING):
                left = deadline - self.clock()
                if left <= 0:
                    # the statement is reported as timed out in any case
                    with contextlib.suppress(DatabricksError):
                        api.cancel_execution(response.statement_id)
                    raise ExecutionError(
                        f"timed out: still {response.status.state.value} after the statement "
                        f"timeout of {self.timeouts.statement:g}s (cancelled; statement "
                        f"{response.statement_id})"
                    )
                time.sleep(min(self.poll_seconds, left))
                response = api.get_statement(response.statement_id)
        except DatabricksError as err:
            raise self._fail(err, statement) from None
        except (OSError, TimeoutError) as err:
            host = getattr(getattr(self.client, "config", None), "host", "the workspace")
            raise UnreachableError(
                f"cannot reach Databricks at {host} within {self.timeouts.connect:g}s: "
                f"{_first_line(err)[:300]}"
            ) from None
        state = response.status.state
        if state != StatementState.SUCCEEDED:
            error = response.status.error
            detail = error.message if error is not None and error.message else "no message"
            code = error.error_code.value if error is not None and error.error_code else None

            class _Failed:
                error_code = code
                msg = detail

                def __str__(self) -> str:
                    return detail

            if state == StatementState.FAILED:
                failure = self._fail(_Failed(), statement)
                if isinstance(failure, DeniedError):
                    raise failure
            raise ExecutionError(f"{state.value}: {detail}")
        return response

    def run(self, text: str) -> None:
        statements = split_statements(text, "databricks")
        for n, statement in enumerate(statements, start=1):
            if self.progress is not None:
                self.progress(f"databricks: statement {n} of {len(statements)}")
            self._execute(statement)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        out = []
        for statement in split_statements(text, "databricks"):
            result = self._execute(statement).result
            rows = (result.data_array if result is not None else None) or []
            out.append([tuple(row) for row in rows])
        return out

    def query(self, statement: str) -> list[Row]:
        response = self._execute(statement)
        schema = response.manifest.schema if response.manifest is not None else None
        names = [c.name.lower() for c in (schema.columns or [])] if schema is not None else []
        rows = (response.result.data_array if response.result is not None else None) or []
        return [dict(zip(names, row, strict=False)) for row in rows]

    def close(self) -> None:
        pass


def within(seconds: float, fn: Callable[[], Any], platform: str) -> Any:
    """``fn()``, or UnreachableError when it has not returned after ``seconds`` (the worker is
    a daemon thread: a client stuck in its own retries never holds the command)."""
    import threading

    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    worker = threading.Thread(target=work, daemon=True, name=f"accord-connect-{platform}")
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise UnreachableError(
            f"cannot reach {platform} within the connect timeout of {seconds:g}s "
            "(--connect-timeout): is the host right and reachable from here?"
        )
    if "error" in box:
        raise box["error"]
    return box["value"]


def open_executor(
    platform: str, options: LiveOptions, progress: Callable[[str], None] | None = None
) -> SnowflakeExecutor | DatabricksExecutor:
    executor: SnowflakeExecutor | DatabricksExecutor
    if platform == "snowflake":
        executor = SnowflakeExecutor.connect(options)
    else:
        executor = DatabricksExecutor.connect(options)
    executor.progress = progress
    return executor
