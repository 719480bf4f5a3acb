"""One executor per platform: every statement accord runs on a live platform goes through here.

Snowflake: snowflake-connector-python, one statement at a time on one session (so a failure is
attributed to its statement). Databricks: the SDK's statement execution API, one statement at a
time, polled to completion within the statement timeout; a ``FAILED`` statement comes back with
HTTP 200 and is a failure, ``CANCELED`` and ``CLOSED`` are not successes, and a statement still
running at the deadline is cancelled and reported. A privilege denial (``compiler.connect.denials``)
raises :class:`DeniedError` and is never retried.

Every Databricks SDK call runs under one overall deadline (:meth:`DatabricksExecutor.call`):
the SDK's own timeout is per read, so a server that sends its answer a byte at a time, or
pages forever, would hold a command without end. A statement's rows are read in full: its
first chunk comes with the statement (``result.next_chunk_index``), every later one through
``statement_execution.get_statement_result_chunk_n``, all within the statement's deadline,
and a result whose row count is not the manifest's ``total_row_count`` is a failure, never a
short answer.

Every failure carries what the platform said (:attr:`ExecutionError.said`, its first line) and
the codes it gave (:attr:`ExecutionError.codes`: ``errorCode``, ``sqlState``, ``reason``), so
a caller that reports denials its own way (``accord probe --live``) reads them from here.

A *persona session* (``session()`` on each executor) is one connection opened for one
persona's statements and closed after them: on Snowflake the probe user's session, which the
probe switches to the persona's roles; on Databricks the persona's own SDK client. A session
that cannot be opened is a :class:`SessionError` (that persona has no answer; the others are
still asked), not a usage error.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from accord.compiler.connect.config import (
    LiveOptions,
    Timeouts,
    databricks_client,
    databricks_credentials,
    databricks_target,
    reach_databricks,
    require_extra,
    snowflake_params,
    snowflake_target,
    warehouse_id,
)
from accord.compiler.connect.denials import Denial, classify
from accord.compiler.connect.reach import Target, UnreachableError, preflight
from accord.compiler.core.errors import UsageError, one_line
from accord.compiler.core.platforms import DATABRICKS, SNOWFLAKE
from accord.compiler.core.secrets import redact, redact_tree

Row = dict[str, Any]


#: the SQLSTATE a Databricks message ends with
_SQLSTATE = re.compile(r"SQLSTATE:?\s*([0-9A-Z]{5})")


class ExecutionError(Exception):
    """A statement failed on the platform: ``said`` is the first line of what the platform
    said, ``codes`` the codes it gave (``errorCode``, ``sqlState``, ``reason``)."""

    def __init__(
        self, message: str, said: str | None = None, codes: dict[str, Any] | None = None
    ) -> None:
        # what the platform said may quote a secret it was sent (compiler.core.secrets)
        message = redact(message)
        super().__init__(message)
        self.said = message if said is None else redact(said)
        self.codes: dict[str, Any] = redact_tree(codes or {})


class DeniedError(ExecutionError):
    """The deploying role lacks a privilege: reported as such, never retried."""

    def __init__(
        self, denial: Denial, said: str | None = None, codes: dict[str, Any] | None = None
    ) -> None:
        self.denial = denial
        super().__init__(str(denial), said, codes)


def as_reader(err: Exception, reader: str = "", privilege: str = "", on: str = "") -> str:
    """What a failed read says: a denial names the reading role (``reader``, when known) and
    the grant it lacks (``privilege`` on ``on`` when the read knows what it needs), never the
    deploying role; any other failure as the platform said it. Scrubbed of every secret known
    now (one registered since the error was captured included)."""
    if isinstance(err, DeniedError):
        return redact(str(err.denial.for_reader(reader, privilege, on)))
    return redact(str(err))


class DeadlineError(ExecutionError):
    """A platform call had no complete answer within its deadline (a server that drips its
    answer, or pages without end): the call is abandoned and said so, never waited on."""


class SessionError(ExecutionError):
    """A persona session could not be opened (no codes: the platform denied nothing)."""


class Executor(Protocol):
    platform: str

    def run(self, text: str) -> None:
        """Execute every statement of ``text`` in order; raise ExecutionError on the first
        failure."""

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        """Execute every statement of ``text``; the rows each one returned."""

    def query(self, statement: str) -> list[Row]:
        """Execute one statement; its rows as dicts keyed by lower-case column name."""

    def rows(self, statements: Sequence[str]) -> list[tuple[Any, ...]]:
        """Execute each statement in order, in this session; the rows of the last one."""


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

        target = snowflake_target(params, options)
        if isinstance(target, Target):
            preflight(target, options.timeouts.connect)  # a refused port: at once, not retried
        try:
            return cls(snowflake.connector.connect(**params))
        except snowflake.connector.errors.Error as err:
            # the connector's errno leads its message (250001 a login it could not make,
            # 390100 a wrong user or password, 000007 a connection it cannot find)
            raise UsageError(f"cannot connect to {target}: {one_line(err)}") from None
        except (OSError, TimeoutError) as err:
            raise UsageError(f"cannot connect to {target}: {one_line(err)}") from None

    @classmethod
    def from_env(cls) -> SnowflakeExecutor:
        """The connection ``accord migrate apply`` always made: SNOWFLAKE_* (or connections.toml)."""
        return cls.connect(LiveOptions())

    @staticmethod
    def opener(options: LiveOptions) -> Callable[[], Any]:
        """What opens one more connection with ``options`` (for :meth:`session`): the
        parameters, timeouts included, are read now, so a missing setting is a usage error
        before any session. ImportError when the connector is not installed."""
        import snowflake.connector

        params = snowflake_params(options)
        target = snowflake_target(params, options)

        def connect() -> Any:
            if isinstance(target, Target):
                preflight(target, options.timeouts.connect)
            try:
                return snowflake.connector.connect(**params)
            except snowflake.connector.errors.Error as err:
                raise SessionError(
                    f"cannot connect to {target}: {one_line(err, first=True)}",
                    one_line(err, first=True),
                    snowflake_codes(err),
                ) from None

        return connect

    @classmethod
    @contextlib.contextmanager
    def session(cls, connect: Callable[[], Any]) -> Iterator[SnowflakeExecutor]:
        """A persona session: ``connect()`` opens it (see :meth:`opener`); closed on leaving."""
        try:
            connection = connect()
        except SessionError:
            raise  # the opener's: it names what it tried, with the connector's codes
        except UnreachableError as err:  # it names what it tried
            raise SessionError(str(err), err.said) from None
        except Exception as err:  # the connector's errors, OSError, TimeoutError
            raise SessionError(
                f"cannot connect to Snowflake: {one_line(err, first=True)}"
            ) from None
        executor = cls(connection)
        try:
            yield executor
        finally:
            executor.close()

    def _execute(self, statement: str) -> Any:
        from snowflake.connector.errors import Error

        try:
            return list(self.connection.execute_string(statement))
        except Error as err:
            said, codes = one_line(err, first=True), snowflake_codes(err)
            denial = classify("snowflake", err, statement)
            if denial is not None:
                raise DeniedError(denial, said, codes) from None
            raise ExecutionError(str(err), said, codes) from None

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

    def rows(self, statements: Sequence[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            (cursor,) = self._execute(statement)[-1:]
            rows = [tuple(r) for r in (cursor.fetchall() or [])]
        return rows

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

        tried: list[Target] = []

        def reach() -> Any:
            from databricks.sdk.errors import DatabricksError, PermissionDenied, Unauthenticated

            client = databricks_client(options, tried)  # a refused or unknown host: at once
            chose = "--profile" if options.profile else None
            target = databricks_target(client.config, chose)
            tried[:] = [target]
            reach_databricks(client, options.timeouts.connect, chose)
            try:
                client.current_user.me()
            except (PermissionDenied, Unauthenticated) as err:
                # a wrong token is a 403 "Invalid access token." (401 when none is sent)
                said = one_line(err).split(". Config: ")[0]  # the SDK's dump of its settings
                raise UsageError(
                    f"cannot log in to {target} with {databricks_credentials(client.config)}: "
                    f"{said[:300]}"
                ) from None
            except DatabricksError:
                pass  # the workspace answered: reachable (DatabricksError is an OSError too)
            except (OSError, TimeoutError) as err:
                raise UnreachableError(f"cannot reach {target}: {one_line(err)[:300]}") from None
            return client

        client = within(
            options.timeouts.connect,
            reach,
            "Databricks",
            lambda: str(tried[0]) if tried else "",
        )
        require_databricks_apis()
        return cls(client, warehouse, timeouts=options.timeouts)

    @classmethod
    def from_env(cls) -> DatabricksExecutor:
        return cls.connect(LiveOptions())

    @classmethod
    @contextlib.contextmanager
    def session(
        cls, client: Callable[[], Any], warehouse_id: str, timeouts: Timeouts
    ) -> Iterator[DatabricksExecutor]:
        """A persona session: ``client()`` builds the persona's own client (a usage error
        from it, such as a persona without a profile, is the caller's to report)."""
        try:
            built = client()
        except UnreachableError as err:  # this persona's session: it names what it tried
            raise SessionError(str(err), err.said) from None
        except UsageError:
            raise
        except Exception as err:  # the SDK's configuration errors
            raise SessionError(
                f"cannot connect to Databricks: {one_line(err, first=True)}"
            ) from None
        executor = cls(built, warehouse_id, timeouts=timeouts)
        try:
            yield executor
        finally:
            executor.close()

    def _wait(self) -> str:
        """``wait_timeout`` for execute_statement: 0s (asynchronous) or 5 to 50 seconds."""
        budget = self.timeouts.statement
        if budget >= 30:
            return "30s"
        return "0s" if budget < 5 else f"{int(budget)}s"

    def _fail(self, err: Any, statement: str, said: str, codes: dict[str, Any]) -> ExecutionError:
        denial = classify("databricks", err, statement)
        if denial is not None:
            return DeniedError(denial, said, codes)
        message = one_line(err) if isinstance(err, BaseException) else str(err)
        return ExecutionError(message, said, codes)

    def call(self, what: str, fn: Callable[[], Any], deadline: float | None = None) -> Any:
        """``fn()`` (one or more SDK calls) within ``deadline`` (a :attr:`clock` time; default:
        the statement timeout from now), else :class:`DeadlineError`."""
        if deadline is None:
            deadline = self.clock() + self.timeouts.statement
        return bounded(max(0.0, deadline - self.clock()), fn, what, f"{self.timeouts.statement:g}s")

    def _execute(self, statement: str) -> Any:
        response, _ = self._run(statement)
        return response

    def _run(self, statement: str) -> tuple[Any, list[list[Any]]]:
        """The statement's final response and all its rows, every chunk followed."""
        from databricks.sdk.errors import DatabricksError
        from databricks.sdk.service.sql import StatementState

        api = self.client.statement_execution
        deadline = self.clock() + self.timeouts.statement
        try:
            response = self.call(
                "the statement",
                lambda: api.execute_statement(
                    statement=statement, warehouse_id=self.warehouse_id, wait_timeout=self._wait()
                ),
                deadline,
            )
            while response.status.state in (StatementState.PENDING, StatementState.RUNNING):
                left = deadline - self.clock()
                if left <= 0:
                    # the statement is reported as timed out in any case
                    with contextlib.suppress(DatabricksError, DeadlineError):
                        self.call(
                            "cancelling the statement",
                            lambda r=response: api.cancel_execution(r.statement_id),
                            self.clock() + min(5.0, self.timeouts.connect),
                        )
                    raise ExecutionError(
                        f"timed out: still {response.status.state.value} after the statement "
                        f"timeout of {self.timeouts.statement:g}s (cancelled; statement "
                        f"{response.statement_id})"
                    )
                time.sleep(min(self.poll_seconds, left))
                if deadline - self.clock() <= 0:
                    continue  # out of time: cancelled above on the next turn, not polled
                # a poll near the deadline still gets a moment to answer (then the statement
                # is reported as running past it, not as a poll that timed out)
                response = self.call(
                    "the statement's status",
                    lambda r=response: api.get_statement(r.statement_id),
                    max(deadline, self.clock() + min(5.0, self.timeouts.connect)),
                )
            if response.status.state == StatementState.SUCCEEDED:
                return response, self._chunks(response, deadline)
        except DatabricksError as err:
            said, codes = one_line(err, first=True), databricks_codes(err)
            raise self._fail(err, statement, said, codes) from None
        except (OSError, TimeoutError) as err:
            host = getattr(getattr(self.client, "config", None), "host", "the workspace")
            raise UnreachableError(
                f"cannot reach Databricks at {host} within {self.timeouts.connect:g}s: "
                f"{one_line(err)[:300]}",
                one_line(err, first=True),
            ) from None
        state = response.status.state
        error = response.status.error
        detail = error.message if error is not None and error.message else "no message"
        code = error.error_code.value if error is not None and error.error_code else None
        said, codes = failed_codes(response.status)

        class _Failed:
            error_code = code
            msg = detail
            #: the SQLSTATE the statement failed with (its message format is not a contract)
            sql_state = codes.get("sqlState")

            def __str__(self) -> str:
                return detail

        if state == StatementState.FAILED:
            failure = self._fail(_Failed(), statement, said, codes)
            if isinstance(failure, DeniedError):
                raise failure
        raise ExecutionError(f"{state.value}: {detail}", said, codes)

    def _chunks(self, response: Any, deadline: float) -> list[list[Any]]:
        """Every row of a succeeded statement: the first chunk came with it, each later one is
        fetched by ``next_chunk_index`` (Statement Execution API, "Result chunks")."""
        api = self.client.statement_execution
        result = response.result
        rows: list[list[Any]] = list((result.data_array if result is not None else None) or [])
        following = result.next_chunk_index if result is not None else None
        seen: set[int] = set()
        while following is not None:
            if following in seen:
                raise ExecutionError(
                    f"statement {response.statement_id}: chunk {following} was named twice; "
                    "its result is not read"
                )
            seen.add(following)
            chunk = self.call(
                f"result chunk {following} of statement {response.statement_id}",
                lambda n=following: api.get_statement_result_chunk_n(response.statement_id, n),
                deadline,
            )
            rows += chunk.data_array or []
            following = chunk.next_chunk_index
        manifest = response.manifest
        total = getattr(manifest, "total_row_count", None) if manifest is not None else None
        if total is not None and total != len(rows):
            raise ExecutionError(
                f"statement {response.statement_id} answered {len(rows)} of its "
                f"{total} rows; its result is not read"
            )
        return rows

    def run(self, text: str) -> None:
        statements = split_statements(text, "databricks")
        for n, statement in enumerate(statements, start=1):
            if self.progress is not None:
                self.progress(f"databricks: statement {n} of {len(statements)}")
            self._run(statement)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        return [
            [tuple(row) for row in self._run(statement)[1]]
            for statement in split_statements(text, "databricks")
        ]

    def query(self, statement: str) -> list[Row]:
        response, rows = self._run(statement)
        schema = response.manifest.schema if response.manifest is not None else None
        names = [c.name.lower() for c in (schema.columns or [])] if schema is not None else []
        return [dict(zip(names, row, strict=False)) for row in rows]

    def rows(self, statements: Sequence[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            rows = [tuple(r) for r in self._run(statement)[1]]
        return rows

    def close(self) -> None:
        pass


#: the databricks-sdk release accord needs, and what it reads that older releases lack (the
#: SDK's CHANGELOG: w.policies 0.63.0; w.entity_tag_assignments and w.tag_policies 0.64.0;
#: max_results / page_token on grants.get and get_effective 0.56.0; StatementStatus.sql_state
#: 0.103.0; PolicyType.POLICY_TYPE_GRANT and POLICY_TYPE_DENY 0.123.0)
DATABRICKS_SDK_FLOOR = "0.123.0"
_SDK_APIS = (
    ("w.policies", "0.63.0", lambda w, cat, sql: hasattr(w, "policies")),
    ("w.entity_tag_assignments", "0.64.0", lambda w, cat, sql: hasattr(w, "entity_tag_assignments")),
    ("w.tag_policies", "0.64.0", lambda w, cat, sql: hasattr(w, "tag_policies")),
    ("grants.get_effective(max_results=...)", "0.56.0",
     lambda w, cat, sql: "max_results" in _parameters(cat.GrantsAPI.get_effective)),
    ("StatementStatus.sql_state", "0.103.0",
     lambda w, cat, sql: "sql_state" in getattr(sql.StatementStatus, "__dataclass_fields__", {})),
    ("PolicyType.POLICY_TYPE_GRANT / POLICY_TYPE_DENY", "0.123.0",
     lambda w, cat, sql: hasattr(cat.PolicyType, "POLICY_TYPE_DENY")),
)  # fmt: skip


def _parameters(fn: Any) -> tuple[str, ...]:
    import inspect

    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def require_databricks_apis() -> None:
    """A usage error naming the version when the installed databricks-sdk lacks an API accord
    calls (never an AttributeError from deep in a read): the installed SDK's classes are
    asked, not a client."""
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.service import catalog, sql

    try:
        from databricks.sdk.version import __version__ as installed
    except ImportError:  # pragma: no cover - every release has it
        installed = "unknown"
    for what, since, present in _SDK_APIS:
        if not present(WorkspaceClient, catalog, sql):
            raise UsageError(
                f"databricks-sdk {installed} has no {what} (added in {since}); accord needs "
                f"databricks-sdk>={DATABRICKS_SDK_FLOOR}: pip install "
                f"'databricks-sdk>={DATABRICKS_SDK_FLOOR}'"
            )


# --------------------------------------------------------------------------------------------
# the codes a failure gave


def snowflake_codes(err: Any) -> dict[str, Any]:
    """The connector error's codes: its errno in six digits, its SQLSTATE."""
    errno = getattr(err, "errno", None)
    return {
        "errorCode": f"{errno:06d}" if isinstance(errno, int) else errno,
        "sqlState": getattr(err, "sqlstate", None),
    }


def databricks_codes(err: Any) -> dict[str, Any]:
    """A REST error's codes: its error code, the reason of its first detail."""
    codes = {"errorCode": getattr(err, "error_code", None)}
    for detail in getattr(err, "details", None) or []:
        codes.setdefault("reason", getattr(detail, "reason", None))
    return codes


def failed_codes(status: Any) -> tuple[str, dict[str, Any]]:
    """A statement that did not succeed: the first line of its message (else ``statement
    <state>``), and its codes (the SQLSTATE and the ``[CLASS]`` its message names)."""
    state = getattr(status.state, "value", status.state)
    error = getattr(status, "error", None)
    message = getattr(error, "message", None) or f"statement {state}"
    code = getattr(error, "error_code", None)
    found = _SQLSTATE.search(message or "")
    bracketed = re.match(r"\s*\[([A-Z_]+)\]", message or "")
    return message.splitlines()[0], {
        "errorCode": getattr(code, "value", code),
        "sqlState": getattr(status, "sql_state", None) or (found.group(1) if found else None),
        "reason": bracketed.group(1) if bracketed else None,
    }


def bounded(seconds: float, fn: Callable[[], Any], what: str, timeout: str) -> Any:
    """``fn()``, or :class:`DeadlineError` when it has not returned after ``seconds`` (a daemon
    thread: a call stuck on a server that drips or pages forever never holds the command;
    ``timeout`` names the setting, as the message says it)."""
    from accord.compiler.core.deadline import StillRunning, call_within

    try:
        return call_within(seconds, fn, "accord-databricks-call")
    except StillRunning:
        raise DeadlineError(
            f"{what}: no complete answer within the statement timeout of {timeout} "
            "(--statement-timeout): the server is slow, drips its answer or pages without end"
        ) from None


def within(
    seconds: float, fn: Callable[[], Any], platform: str, tried: Callable[[], str] = lambda: ""
) -> Any:
    """``fn()``, or UnreachableError when it has not returned after ``seconds`` (the worker is
    a daemon thread: a client stuck in its own retries never holds the command); ``tried()``
    names what it was reaching, when it got that far."""
    from accord.compiler.core.deadline import StillRunning, call_within

    try:
        return call_within(seconds, fn, f"accord-connect-{platform}")
    except StillRunning:
        raise UnreachableError(
            f"cannot reach {tried() or platform} within the connect timeout of {seconds:g}s "
            "(--connect-timeout): is the host right and reachable from here?"
        ) from None


def open_executor(
    platform: str, options: LiveOptions, progress: Callable[[str], None] | None = None
) -> SnowflakeExecutor | DatabricksExecutor:
    executor = EXECUTORS[platform].connect(options)
    executor.progress = progress
    return executor


#: the one executor of each platform
EXECUTORS: dict[str, type[SnowflakeExecutor] | type[DatabricksExecutor]] = {
    SNOWFLAKE.name: SnowflakeExecutor,
    DATABRICKS.name: DatabricksExecutor,
}
