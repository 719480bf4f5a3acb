"""A probe's query on a catalog platform, as the persona, and what its rows say.

Snowflake: a *probe user* granted every role of every persona runs, per probe, ``USE ROLE
<primary>`` and ``USE SECONDARY ROLES <rest>`` (or ``NONE``) before the query, so the policies
see exactly the persona's primary and secondary roles (docs.snowflake.com/en/sql-reference/sql/
use-secondary-roles: "USE SECONDARY ROLES { ALL | NONE | <role_name> [ , <role_name> ... ] }").
Databricks: group membership cannot be switched per session, so each persona has its own SDK
profile (``probe_profiles:`` in the local probe config), a principal holding exactly that
persona's account groups.

Statements are built with sqlglot (identifiers quoted where the dialect needs it, the
``where`` value a literal). The rows are classified: none (``empty``: a row filter answers with
no rows, never an error), the canary's clear or masked value, and, for a row probe without
``where``, which entitlement values came back (``clear`` when all, else ``filtered``). A denial
code in the error (:mod:`~compiler.probe_live.denials`) is ``denied``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from compiler.core.errors import UsageError
from compiler.meaning import semantics as sem
from compiler.meaning.probes import Place
from compiler.model.schema import PolicyModel, Probe
from compiler.probe_live.canary import Canary
from compiler.probe_live.denials import DenialCode, find_denial

#: rows read per probe query
ROW_LIMIT = 100
_SQLSTATE = re.compile(r"SQLSTATE:?\s*([0-9A-Z]{5})")


class Runner(Protocol):
    """Runs statements in one session as a persona; the rows of the last one."""

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]: ...


class QueryError(Exception):
    """A platform refused a statement: the codes it gave (``errorCode``, ``sqlState``)."""

    def __init__(self, message: str, codes: dict[str, Any]) -> None:
        super().__init__(message)
        self.codes = codes


@dataclass(frozen=True)
class CatalogAnswer:
    disposition: str | None
    detail: str
    statements: tuple[str, ...] = ()
    denial: DenialCode | None = None


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name)


def _table(name: str) -> exp.Table:
    return exp.to_table(name)


def key_column(model: PolicyModel, probe: Probe, dataset: str) -> str | None:
    """The column of ``dataset`` holding the ``where`` dimension's values: its entitlement
    filter's column, or a predicate argument of the same name as a replica's."""
    if not probe.where:
        rf = model.datasets[dataset].row_filter
        return rf.column if rf is not None and rf.entitlement else None
    ((dim, _),) = probe.where.items()
    for d in [dataset, *model.replica_group(dataset)]:
        rf = model.datasets[d].row_filter
        if rf is not None and rf.entitlement == dim and rf.column:
            if d == dataset:
                return rf.column
            own = model.datasets[dataset].row_filter
            args = (own.arguments or {}) if own is not None else {}
            match = next((a for a in args if a.lower() == rf.column.lower()), None)
            if match:
                return match
    return None


def session_statements(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """Snowflake: the persona's primary role, then its other roles as secondary roles."""
    if platform != "snowflake":
        return []
    roles = [model.principals[p].snowflake for p in sem.principals_on(model, persona, "snowflake")]
    primary_name = model.principals[sem.primary_principal(model, persona)].snowflake
    if primary_name is None:
        raise ValueError(f"persona {persona}'s primary principal has no Snowflake role")
    rest = [r for r in roles if r and r != primary_name]
    secondary = ", ".join(_ident(r).sql("snowflake") for r in rest) if rest else "NONE"
    return [f"USE ROLE {_ident(primary_name).sql('snowflake')}", f"USE SECONDARY ROLES {secondary}"]


def probe_query(model: PolicyModel, probe: Probe, place: Place) -> str:
    ds = model.datasets[place.dataset]
    dialect = ds.platform
    key = key_column(model, probe, place.dataset)
    if place.column is not None:
        select: exp.Select = exp.select(exp.column(_ident(place.column)))
    elif probe.where or key is None:
        select = exp.select(exp.Literal.number(1))
    else:
        select = exp.select(exp.column(_ident(key))).distinct()
    select = select.from_(_table(ds.table))
    if probe.where and key is not None:
        ((_, value),) = probe.where.items()
        select = select.where(
            exp.EQ(this=exp.column(_ident(key)), expression=exp.Literal.string(value))
        )
    return select.limit(ROW_LIMIT).sql(dialect)


def classify_rows(
    model: PolicyModel,
    probe: Probe,
    place: Place,
    rows: list[tuple[Any, ...]],
    canary: Canary | None,
) -> tuple[str | None, str]:
    if not rows:
        return "empty", "the query returned no rows"
    if place.column is not None:
        text = "\n".join("" if r[0] is None else str(r[0]) for r in rows)
        if canary is None:
            return None, "the probe has no canary: the rows cannot tell clear from masked"
        found = canary.classify(text)
        if found is None:
            return "empty", "no row holds the canary's clear or masked value"
        return found, f"the rows hold the canary's {found} value"
    if probe.where:
        return "clear", f"the query returned the {next(iter(probe.where.values()))} rows"
    key = key_column(model, probe, place.dataset)
    rf = model.datasets[place.dataset].row_filter
    if key is None or rf is None or rf.entitlement is None:
        return "clear", "the query returned rows"
    every = set(model.entitlements[rf.entitlement])
    seen = {str(r[0]) for r in rows if r[0] is not None}
    if every <= seen:
        return "clear", f"rows of every {rf.entitlement} value came back"
    return "filtered", f"rows of {', '.join(sorted(seen)) or 'no value'} came back"


def ask_catalog(
    model: PolicyModel,
    probe: Probe,
    place: Place,
    runner: Runner,
    canary: Canary | None,
) -> CatalogAnswer:
    platform = model.datasets[place.dataset].platform
    statements = [*session_statements(model, probe.persona, platform)]
    statements.append(probe_query(model, probe, place))
    try:
        rows = runner.run(probe.persona, statements)
    except QueryError as err:
        denial = find_denial(err.codes)
        if denial is not None:
            return CatalogAnswer(
                "denied", f"{platform}: {err} ({denial})", tuple(statements), denial
            )
        return CatalogAnswer(None, f"{platform}: {err}", tuple(statements))
    disposition, why = classify_rows(model, probe, place, rows, canary)
    return CatalogAnswer(disposition, f"{platform}: {why}", tuple(statements))


# --------------------------------------------------------------------------------------------
# runners on the real clients (imported only when a live run needs them)


def snowflake_connect_kwargs(timeout: float, connection: str | None) -> dict[str, Any]:
    """``snowflake.connector.connect`` arguments for the probe user: the live commands' own
    (:func:`compiler.connect.config.snowflake_params`: the named connection, else the connector's
    default, else ``SNOWFLAKE_*``), with ``timeout`` on the login and on every statement."""
    from compiler.connect.config import LiveOptions, Timeouts, snowflake_params

    return snowflake_params(
        LiveOptions(connection=connection, timeouts=Timeouts(connect=timeout, statement=timeout))
    )


class SnowflakeRunner:
    """One session of the probe user per persona (``connect()`` opens it, with the timeouts
    of :func:`snowflake_connect_kwargs`), statements in order."""

    def __init__(self, connect: Any) -> None:
        self.connect = connect

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        try:
            conn = self.connect()
        except Exception as err:  # the connector's errors, OSError, TimeoutError
            raise QueryError(f"cannot connect to Snowflake: {_first_line(err)}", {}) from None
        try:
            cur = conn.cursor()
            rows: list[tuple[Any, ...]] = []
            for stmt in statements:
                try:
                    cur.execute(stmt)
                except Exception as err:  # the connector's ProgrammingError and friends
                    errno = getattr(err, "errno", None)
                    codes = {
                        "errorCode": f"{errno:06d}" if isinstance(errno, int) else errno,
                        "sqlState": getattr(err, "sqlstate", None),
                    }
                    raise QueryError(_first_line(err), codes) from None
                rows = [tuple(r) for r in (cur.fetchall() or [])]
            return rows
        finally:
            conn.close()


class DatabricksRunner:
    """One SDK client per persona (its ``probe_profiles`` entry), statements through the SQL
    Statement Execution API on one warehouse, waiting at most ``timeout`` seconds."""

    def __init__(self, client_for: Any, warehouse_id: str, timeout: float) -> None:
        self.client_for = client_for
        self.warehouse_id = warehouse_id
        self.timeout = timeout

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        try:
            client = self.client_for(persona)
        except UsageError:
            raise
        except Exception as err:  # the SDK's configuration errors
            raise QueryError(f"cannot connect to Databricks: {_first_line(err)}", {}) from None
        wait = f"{max(5, min(50, int(self.timeout)))}s"  # the API accepts 5s..50s
        rows: list[tuple[Any, ...]] = []
        for stmt in statements:
            try:
                resp = client.statement_execution.execute_statement(
                    statement=stmt, warehouse_id=self.warehouse_id, wait_timeout=wait
                )
            except Exception as err:  # databricks.sdk.errors.DatabricksError
                codes = {"errorCode": getattr(err, "error_code", None)}
                for detail in getattr(err, "details", None) or []:
                    codes.setdefault("reason", getattr(detail, "reason", None))
                raise QueryError(_first_line(err), codes) from None
            status = resp.status
            state = getattr(status.state, "value", status.state) if status else None
            if state != "SUCCEEDED":
                error = getattr(status, "error", None)
                message = getattr(error, "message", None) or f"statement {state}"
                code = getattr(error, "error_code", None)
                found = _SQLSTATE.search(message or "")
                sqlstate = getattr(status, "sql_state", None) or (found.group(1) if found else None)
                raise QueryError(
                    message.splitlines()[0],
                    {
                        "errorCode": getattr(code, "value", code),
                        "sqlState": sqlstate,
                        "reason": _bracketed(message),
                    },
                )
            data = resp.result.data_array if resp.result is not None else None
            rows = [tuple(r) for r in (data or [])]
        return rows


def _bracketed(message: str) -> str | None:
    """``[INSUFFICIENT_PERMISSIONS] ...``: the error class Databricks puts first."""
    m = re.match(r"\s*\[([A-Z_]+)\]", message or "")
    return m.group(1) if m else None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
