"""A probe's query on a catalog platform, as the persona, and what its rows say.

Snowflake: a *probe user* granted every role of every persona runs, per probe, ``USE ROLE
<primary>`` and ``USE SECONDARY ROLES <rest>`` (or ``NONE``) before the query, so the policies
see exactly the persona's primary and secondary roles (docs.snowflake.com/en/sql-reference/sql/
use-secondary-roles: "USE SECONDARY ROLES { ALL | NONE | <role_name> [ , <role_name> ... ] }").
Databricks: group membership cannot be switched per session, so each persona has its own SDK
profile (``probe_profiles:`` in the local probe config), a principal holding exactly that
persona's account groups.

Statements are built with sqlglot, every name through :mod:`targets.sql` (quoted where the
dialect needs it, reserved words included; the ``where`` value a literal), and run in a persona
session of the platform's executor (:mod:`compiler.connect.executor`). The rows are
classified: none (``empty``: a row filter answers with no rows, never an error), the canary's
clear or masked value, and, for a row probe without ``where``, which entitlement values came
back (``clear`` when all, else ``filtered``). A denial code in the error
(:func:`compiler.connect.denials.find_denial`) is ``denied``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from compiler.connect.config import LiveOptions, Timeouts, snowflake_params
from compiler.connect.denials import DenialCode, find_denial
from compiler.connect.executor import (
    DatabricksExecutor,
    ExecutionError,
    SnowflakeExecutor,
    UnreachableError,
)
from compiler.meaning import semantics as sem
from compiler.meaning.probes import Place
from compiler.model.schema import PolicyModel, Probe
from compiler.probe_live.canary import Canary
from targets import sql

#: rows read per probe query
ROW_LIMIT = 100


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
    # the roles the session activates: the persona's own (USE SECONDARY ROLES of a role that
    # is only inherited would fail; the hierarchy activates it anyway)
    roles = [model.principals[p].snowflake for p in sem.listed_on(model, persona, "snowflake")]
    primary_name = model.principals[sem.primary_principal(model, persona)].snowflake
    if primary_name is None:
        raise ValueError(f"persona {persona}'s primary principal has no Snowflake role")
    rest = [r for r in roles if r and r != primary_name]
    secondary = ", ".join(_role(r) for r in rest) if rest else "NONE"
    return [f"USE ROLE {_role(primary_name)}", f"USE SECONDARY ROLES {secondary}"]


def _role(name: str) -> str:
    return sql.render(sql.ident(name, "snowflake"), "snowflake")


def probe_query(model: PolicyModel, probe: Probe, place: Place) -> str:
    ds = model.datasets[place.dataset]
    dialect = ds.platform
    key = key_column(model, probe, place.dataset)
    if place.column is not None:
        select: exp.Select = exp.select(sql.column(place.column, dialect))
    elif probe.where or key is None:
        select = exp.select(exp.Literal.number(1))
    else:
        select = exp.select(sql.column(key, dialect)).distinct()
    select = select.from_(sql.table(ds.table, dialect))
    if probe.where and key is not None:
        ((_, value),) = probe.where.items()
        select = select.where(exp.EQ(this=sql.column(key, dialect), expression=sql.literal(value)))
    return sql.render(select.limit(ROW_LIMIT), dialect)


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
# runners on the platforms' executors (the clients are imported only when a live run needs them)


def probe_options(timeout: float, connection: str | None = None) -> LiveOptions:
    """The live options of a probe session: ``timeout`` on the login and on every statement."""
    return LiveOptions(connection=connection, timeouts=Timeouts(connect=timeout, statement=timeout))


def snowflake_connect_kwargs(timeout: float, connection: str | None) -> dict[str, Any]:
    """``snowflake.connector.connect`` arguments for the probe user: the live commands' own
    (:func:`compiler.connect.config.snowflake_params`: the named connection, else the connector's
    default, else ``SNOWFLAKE_*``), with ``timeout`` on the login and on every statement."""
    return snowflake_params(probe_options(timeout, connection))


class SnowflakeRunner:
    """One persona session of the probe user per persona (``connect()`` opens it, with the
    timeouts of :func:`snowflake_connect_kwargs`), statements in order."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self.connect = connect

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        try:
            with SnowflakeExecutor.session(self.connect) as session:
                return session.rows(statements)
        except ExecutionError as err:
            raise QueryError(err.said, err.codes) from None


class DatabricksRunner:
    """One persona session per persona (its own SDK client, from its ``probe_profiles``
    entry), statements through the SQL Statement Execution API on one warehouse, each within
    ``timeout`` seconds."""

    def __init__(self, client_for: Callable[[str], Any], warehouse_id: str, timeout: float) -> None:
        self.client_for = client_for
        self.warehouse_id = warehouse_id
        self.timeout = timeout

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        options = probe_options(self.timeout)
        try:
            with DatabricksExecutor.session(
                lambda: self.client_for(persona), self.warehouse_id, options.timeouts
            ) as session:
                return session.rows(statements)
        except ExecutionError as err:
            raise QueryError(err.said, err.codes) from None
        except UnreachableError as err:  # a statement that did not reach: this persona's fault
            raise QueryError(err.said, {}) from None
