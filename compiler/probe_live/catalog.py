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

A probe that did not run is not an answer: the *session* (log in, ``USE ROLE``, ``USE
SECONDARY ROLES``, the warehouse) is set up and checked apart from the *question*, and every
failure of it is a :data:`FAULTS` outcome, never ``denied``:

* ``session``: the login, ``USE ROLE`` or ``USE SECONDARY ROLES`` failed;
* ``warehouse``: Databricks: the warehouse refused the session's first statement (a 403,
  no ``CAN USE``), before any question was asked; Snowflake: the query found no warehouse
  the session may use (000606 / 57P03);
* ``roles``: the session is not the persona's. Snowflake: ``CURRENT_ROLE()`` is not the
  primary role, or ``CURRENT_SECONDARY_ROLES()`` (a JSON object whose ``roles`` lists the
  *activated* secondary roles, sql-reference/functions/current_secondary_roles) is not the
  persona's other roles: under a session policy ``USE SECONDARY ROLES`` succeeds and
  activates only the roles the policy allows (sql-reference/sql/use-secondary-roles, usage
  notes). Databricks: ``is_account_group_member`` (true for a direct or indirect member of an
  account group, sql/language-manual/functions/is_account_group_member) is not true for
  exactly the persona's groups among the model's;
* ``table``: the probed table does not exist, or the persona may not see that it does
  (Snowflake 002003 / 42S02 "does not exist or not authorized", Databricks
  ``TABLE_OR_VIEW_NOT_FOUND`` / 42P01): the platform cannot tell the two apart, and neither
  is an answer of the policies;
* ``control``: the positive control of a deny-expecting probe (:func:`control_for`: a query
  the persona is expected to see, run in the same session before the question) failed or
  returned no rows, so a denial could not be told from a broken session or table;
* ``query``: the question failed without a denial code.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from accord.compiler.connect.config import LiveOptions, Timeouts, snowflake_params
from accord.compiler.connect.denials import DenialCode, find_denial
from accord.compiler.connect.executor import (
    DatabricksExecutor,
    ExecutionError,
    SnowflakeExecutor,
    UnreachableError,
)
from accord.compiler.core.platforms import facts
from accord.compiler.meaning import semantics as sem
from accord.compiler.meaning.probes import Place
from accord.compiler.model.schema import PolicyModel, Probe
from accord.compiler.probe_live.canary import Canary
from accord.targets import sql

#: rows read per probe query
ROW_LIMIT = 100


#: why a probe did not run (the outcome's ``fault``), in the order a run meets them; ``agent``
#: is an A2A exchange that broke (:mod:`.a2a`: a fault, never an answer)
FAULTS: tuple[str, ...] = ("session", "warehouse", "roles", "control", "table", "query", "agent")

#: the codes that say a table does not exist (or is hidden from the caller): a fault, never a
#: denial (Snowflake: 002003 / 42S02, "does not exist or not authorized"; Databricks:
#: [TABLE_OR_VIEW_NOT_FOUND], SQLSTATE 42P01)
_MISSING: dict[str, dict[str, frozenset[str]]] = {
    "snowflake": {"errorCode": frozenset({"002003", "2003"}), "sqlState": frozenset({"42S02"})},
    "databricks": {
        "reason": frozenset({"TABLE_OR_VIEW_NOT_FOUND", "SCHEMA_NOT_FOUND", "CATALOG_NOT_FOUND"}),
        "errorCode": frozenset({"TABLE_OR_VIEW_NOT_FOUND", "NOT_FOUND"}),
        "sqlState": frozenset({"42P01", "42704", "3F000"}),
    },
}

#: the codes that say the session has no warehouse it may use: a fault of the session
#: (Snowflake 000606 / 57P03 "No active warehouse selected in the current session")
_NO_WAREHOUSE: dict[str, dict[str, frozenset[str]]] = {
    "snowflake": {"errorCode": frozenset({"000606", "606"}), "sqlState": frozenset({"57P03"})},
}


class Session(Protocol):
    """One persona session: statements run in it one at a time, in order."""

    def rows(self, statement: str) -> list[tuple[Any, ...]]: ...


class Runner(Protocol):
    """Opens a session as a persona (a QueryError when it cannot: the login failed)."""

    def session(self, persona: str) -> contextlib.AbstractContextManager[Session]: ...


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
    #: why the probe did not run (one of :data:`FAULTS`), None when it ran
    fault: str | None = None


def key_column(model: PolicyModel, probe: Probe, dataset: str) -> str | None:
    """The column of ``dataset`` holding the ``where`` dimension's values: its entitlement
    filter's column, or a predicate argument of the same name as a replica's."""
    if not probe.where:
        rf = model.datasets[dataset].row_filter
        return rf.column if rf is not None and rf.entitlement else None
    return _dimension_column(model, next(iter(probe.where)), dataset)


def where_columns(model: PolicyModel, probe: Probe, dataset: str) -> list[tuple[str, str]]:
    """(column, value) per dimension the ``where`` names, in its order: the rows that hold
    every named value (one predicate each, joined by AND). A dimension no column of
    ``dataset`` holds adds no predicate (as :func:`key_column` of one dimension)."""
    out = []
    for dim, value in (probe.where or {}).items():
        column = _dimension_column(model, dim, dataset)
        if column is not None:
            out.append((column, value))
    return out


def _dimension_column(model: PolicyModel, dim: str, dataset: str) -> str | None:
    if several(model, dataset):
        return next((c for d, c, _ in model.datasets[dataset].filter_dimensions if d == dim), None)
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


def several(model: PolicyModel, dataset: str) -> bool:
    """Whether ``dataset``'s row filter keys rows by several entitlement dimensions."""
    rf = model.datasets[dataset].row_filter
    return rf is not None and rf.dimensions is not None


def other_dimensions(model: PolicyModel, probe: Probe, dataset: str) -> list[tuple[str, str]]:
    """(dimension, column) of each dimension of a several-dimension filter the probe's
    ``where`` does not name: the rows that came back tell, by their values of these, whether
    the other dimensions admitted all of them (clear) or some (filtered)."""
    named = set(probe.where or {})
    return [(d, c) for d, c, _ in model.datasets[dataset].filter_dimensions if d not in named]


def persona_roles(model: PolicyModel, persona: str) -> tuple[str, list[str]]:
    """Snowflake: the persona's primary role and its other roles (the secondary roles): the
    persona's own (USE SECONDARY ROLES of a role that is only inherited would fail; the
    hierarchy activates it anyway, and CURRENT_SECONDARY_ROLES() lists only those granted to
    the user directly)."""
    roles = [model.principals[p].snowflake for p in sem.listed_on(model, persona, "snowflake")]
    primary_name = model.principals[sem.primary_principal(model, persona)].snowflake
    if primary_name is None:
        raise ValueError(f"persona {persona}'s primary principal has no Snowflake role")
    return primary_name, [r for r in roles if r and r != primary_name]


def session_statements(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """Where a session holds roles (Snowflake): the persona's primary role, then its other
    roles as secondary roles; where identities are groups, nothing (the profile decides)."""
    if facts(platform).principal_kind != "role":
        return []
    primary_name, rest = persona_roles(model, persona)
    secondary = ", ".join(_role(r) for r in rest) if rest else "NONE"
    return [f"USE ROLE {_role(primary_name)}", f"USE SECONDARY ROLES {secondary}"]


def _role(name: str) -> str:
    return sql.render(sql.ident(name, "snowflake"), "snowflake")


def _stored(name: str) -> str:
    """A Snowflake role name as Snowflake stores it (and CURRENT_ROLE() returns it): an
    unquoted identifier upper-cased, a quoted one as written."""
    rendered = _role(name)
    if rendered.startswith('"'):
        return rendered[1:-1].replace('""', '"')
    return rendered.upper()


#: Snowflake: which roles the session activated (sql-reference/functions/current_role,
#: current_secondary_roles)
SNOWFLAKE_ROLE_CHECK = "SELECT CURRENT_ROLE(), CURRENT_SECONDARY_ROLES()"


def group_check(model: PolicyModel) -> tuple[list[str], str]:
    """Databricks: every account group the model names, and one statement asking
    ``is_account_group_member`` of each (one column per group, in that order)."""
    groups = sorted({p.databricks for p in model.principals.values() if p.databricks})
    calls = [
        exp.Anonymous(this="is_account_group_member", expressions=[sql.literal(g)]) for g in groups
    ]
    return groups, sql.render(exp.select(*calls) if calls else exp.select("1"), "databricks")


def _secondary_roles(value: Any) -> set[str] | None:
    """The activated roles of a CURRENT_SECONDARY_ROLES() answer; None when unreadable."""
    try:
        doc = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return None
    roles = doc.get("roles") if isinstance(doc, dict) else None
    if not isinstance(roles, str):
        return None
    return {r.strip() for r in roles.split(",") if r.strip()}


def _true(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1")


def check_session(model: PolicyModel, persona: str, platform: str, session: Session) -> str | None:
    """Whether the session holds exactly the persona's roles (Snowflake) or groups
    (Databricks): None when it does, else why not. QueryError when the check cannot run."""
    if facts(platform).principal_kind == "role":
        primary, rest = persona_roles(model, persona)
        rows = session.rows(SNOWFLAKE_ROLE_CHECK)
        if len(rows) != 1 or len(rows[0]) != 2:
            return f"{SNOWFLAKE_ROLE_CHECK} answered {len(rows)} rows: cannot tell the roles"
        current, secondary = rows[0]
        active = _secondary_roles(secondary)
        if active is None:
            return (
                f"CURRENT_SECONDARY_ROLES() answered {str(secondary)[:200]!r}: cannot tell "
                "which secondary roles are active"
            )
        want = {_stored(r) for r in rest}
        if current != _stored(primary):
            return f"the primary role is {current}, not the persona's {_stored(primary)}"
        if active != want:
            missing_roles = ", ".join(sorted(want - active))
            extra = ", ".join(sorted(active - want))
            said = [f"not activated: {missing_roles}"] if missing_roles else []
            said += [f"activated beyond the persona's: {extra}"] if extra else []
            return (
                "the session's secondary roles are not the persona's ("
                + "; ".join(said)
                + "; a session policy's ALLOWED_SECONDARY_ROLES activates only the roles it "
                "allows, and USE SECONDARY ROLES still succeeds)"
            )
        return None
    groups, statement = group_check(model)
    if not groups:
        return None
    rows = session.rows(statement)
    if len(rows) != 1 or len(rows[0]) != len(groups):
        return f"the group check answered {len(rows)} rows: cannot tell the groups"
    member = {g for g, v in zip(groups, rows[0], strict=True) if _true(v)}
    # the persona's groups and those they are nested in (principals.*.inherits): an indirect
    # member is a member for is_account_group_member
    want = {
        model.principals[p].databricks or ""
        for p in sem.principals_on(model, persona, "databricks")
    } - {""}
    if member != want:
        missing_groups = ", ".join(sorted(want - member))
        extra = ", ".join(sorted(member - want))
        said = [f"not a member of {missing_groups}"] if missing_groups else []
        said += [f"also a member of {extra}"] if extra else []
        return (
            "the principal's account groups are not the persona's (" + "; ".join(said) + "): "
            "its probe profile must be a principal in exactly the persona's groups"
        )
    return None


@dataclass(frozen=True)
class Control:
    """A positive control: a query the persona is expected to see rows of."""

    dataset: str
    where: dict[str, str] | None
    #: how it was chosen (declared, or the probe's fact with a granted value)
    how: str

    def describe(self) -> str:
        text = self.dataset
        if self.where:
            text += " where " + " and ".join(f"{d} = {v}" for d, v in self.where.items())
        return f"{text} ({self.how})"


def control_for(model: PolicyModel, probe: Probe, place: Place) -> Control | str:
    """The positive control of a deny-expecting probe at ``place``: the probe's declared
    ``control`` (its dataset, or that dataset's replica on the place's platform), else the
    probe's own fact with a ``where`` value the model grants the persona. A string says why
    there is none."""
    platform = model.datasets[place.dataset].platform
    declared = getattr(probe, "control", None)
    if declared is not None:
        name = declared.dataset or place.dataset
        if declared.dataset is not None and model.datasets[name].platform != platform:
            name = next(
                (d for d in model.replica_group(name) if model.datasets[d].platform == platform),
                "",
            )
            if not name:
                return (
                    f"the declared control's dataset {declared.dataset} has no replica on "
                    f"{platform}, where {place.dataset} is probed"
                )
        return Control(name, dict(declared.where) if declared.where else None, "declared")
    if not probe.where:
        return (
            "the probe has no where value to vary and declares no control: declare "
            "probes.*.control (a query the persona is expected to see)"
        )
    if len(probe.where) > 1:
        return _several_control(model, probe, place)
    ((dim, value),) = probe.where.items()
    perspective = sem.Perspective(model, probe.persona)
    rows = perspective.rows(place.dataset)
    if rows.dimension != dim and not rows.all:
        rows = perspective.rows(probe.dataset)
    if rows.expression:
        return "a hand-written predicate decides the rows: declare probes.*.control"
    # over several dimensions a view's values read ``dimension=value`` (per dimension: dims)
    admitted = dict(rows.dims).get(dim, frozenset()) if rows.dims else rows.values
    granted = sorted(
        v for v in model.entitlements.get(dim, {}) if v != value and (rows.all or v in admitted)
    )
    if not granted:
        return (
            f"the model grants {probe.persona} no other {dim} value to run as a control: "
            "declare probes.*.control"
        )
    return Control(place.dataset, {dim: granted[0]}, f"the probe's fact with {dim} {granted[0]}")


def _several_control(model: PolicyModel, probe: Probe, place: Place) -> Control | str:
    """The default control of a ``where`` naming several dimensions: per named dimension a
    value the model grants the persona (another than the probe's when there is one), and
    not the probe's rows themselves."""
    assert probe.where
    perspective = sem.Perspective(model, probe.persona)
    rows = perspective.rows(place.dataset)
    if not rows.dims and not rows.all:
        rows = perspective.rows(probe.dataset)
    if rows.expression:
        return "a hand-written predicate decides the rows: declare probes.*.control"
    admitted = dict(rows.dims)
    where: dict[str, str] = {}
    for dim, value in probe.where.items():
        granted = sorted(
            v
            for v in model.entitlements.get(dim, {})
            if rows.all or admitted.get(dim) is None or v in (admitted.get(dim) or ())
        )
        if not granted:
            return (
                f"the model grants {probe.persona} no {dim} value to run as a control: "
                "declare probes.*.control"
            )
        where[dim] = next((v for v in granted if v != value), granted[0])
    if where == dict(probe.where):
        return (
            f"the model grants {probe.persona} no other rows of the named dimensions to run as "
            "a control: declare probes.*.control"
        )
    told = ", ".join(f"{d} {v}" for d, v in where.items())
    return Control(place.dataset, where, f"the probe's fact with {told}")


def _missing(platform: str, codes: dict[str, Any], table: dict[str, Any] = _MISSING) -> bool:
    known = table.get(platform, {})
    return any(str(codes.get(key)) in values for key, values in known.items())


def _not_read(platform: str, what: str, persona: str, err: QueryError) -> tuple[str, str] | None:
    """A read that failed for want of a warehouse or a table: (fault, why); None otherwise
    (a denial code, or some other failure, is the caller's to tell)."""
    if _missing(platform, err.codes, _NO_WAREHOUSE):
        return "warehouse", f"the session has no warehouse to use: {err}"
    if _missing(platform, err.codes):
        return "table", f"{what} does not exist, or {persona} may not see that it does: {err}"
    return None


def probe_query(model: PolicyModel, probe: Probe, place: Place) -> str:
    ds_name = place.dataset
    ds = model.datasets[ds_name]
    dialect = ds.platform
    key = key_column(model, probe, place.dataset)
    others = other_dimensions(model, probe, place.dataset) if several(model, ds_name) else []
    if place.column is not None:
        select: exp.Select = exp.select(sql.column(place.column, dialect))
    elif others:
        # a filter over several dimensions: the distinct values of each dimension the
        # ``where`` does not name (all of them without one) among the rows the persona sees
        select = exp.select(*(sql.column(c, dialect) for _, c in others)).distinct()
    elif probe.where or key is None:
        select = exp.select(exp.Literal.number(1))
    else:
        select = exp.select(sql.column(key, dialect)).distinct()
    select = select.from_(sql.table(ds.table, dialect))
    for column, value in where_columns(model, probe, ds_name):
        select = select.where(
            exp.EQ(this=sql.column(column, dialect), expression=sql.literal(value))
        )
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
        if found is None and canary.unknown_mask:
            return None, f"no row holds the canary's clear value; {canary.unknown_mask}"
        if found is None:
            return "empty", "no row holds the canary's clear or masked value"
        return found, f"the rows hold the canary's {found} value"
    if several(model, place.dataset):
        return _classify_several(model, probe, place, rows)
    if probe.where:
        return "clear", f"the query returned the {' '.join(probe.where.values())} rows"
    key = key_column(model, probe, place.dataset)
    rf = model.datasets[place.dataset].row_filter
    if key is None or rf is None or rf.entitlement is None:
        return "clear", "the query returned rows"
    every = set(model.entitlements[rf.entitlement])
    seen = {str(r[0]) for r in rows if r[0] is not None}
    if every <= seen:
        return "clear", f"rows of every {rf.entitlement} value came back"
    return "filtered", f"rows of {', '.join(sorted(seen)) or 'no value'} came back"


def _classify_several(
    model: PolicyModel, probe: Probe, place: Place, rows: list[tuple[Any, ...]]
) -> tuple[str, str]:
    """Rows of a table filtered by several dimensions (the query selected the distinct values
    of the dimensions the ``where`` does not name): clear when rows of every value of each of
    them came back, filtered when some value of one did not (docs/format.md "Several
    dimensions per table": the other dimensions admit only some)."""
    where = " ".join(probe.where.values()) if probe.where else None
    of = f"the {where} rows" if where is not None else "the rows"
    narrowed = []
    for i, (dim, _) in enumerate(other_dimensions(model, probe, place.dataset)):
        every = set(model.entitlements.get(dim, {}))
        seen = {str(r[i]) for r in rows if r[i] is not None}
        if not every <= seen:
            narrowed.append(f"{dim} {', '.join(sorted(seen)) or 'no value'}")
    if narrowed:
        return "filtered", f"{of} came back of {'; '.join(narrowed)} only"
    return "clear", f"{of} came back of every value of the other dimensions"


def ask_catalog(
    model: PolicyModel,
    probe: Probe,
    place: Place,
    runner: Runner,
    canary: Canary | None,
    expects_denial: bool = False,
) -> CatalogAnswer:
    """Ask the probe at ``place`` in one persona session: the session set up and checked
    (a fault when it is not the persona's), the positive control when the probe expects a
    denial, then the question."""
    platform = model.datasets[place.dataset].platform
    statements: list[str] = []

    def fault(stage: str, why: str) -> CatalogAnswer:
        return CatalogAnswer(
            None, f"{platform}: the probe did not run ({stage}): {why}", tuple(statements),
            fault=stage,
        )  # fmt: skip

    control: Control | str | None = None
    if expects_denial:
        control = control_for(model, probe, place)
        if isinstance(control, str):
            return fault("control", f"no positive control: {control}")
    with contextlib.ExitStack() as stack:
        try:
            opened = stack.enter_context(runner.session(probe.persona))
        except QueryError as err:
            return fault("session", f"cannot open a session as {probe.persona}: {err}")
        session = _Recording(opened, statements)
        for statement in session_statements(model, probe.persona, platform):
            try:
                session.rows(statement)
            except QueryError as err:
                return fault("session", f"{statement} was refused: {err}")
        try:
            wrong = check_session(model, probe.persona, platform, session)
        except QueryError as err:
            if facts(platform).principal_kind == "group":  # asked through a SQL warehouse
                return fault("warehouse", f"the warehouse refused the session: {err}")
            return fault("session", f"the session's roles cannot be read: {err}")
        if wrong is not None:
            return fault("roles", wrong)
        if isinstance(control, Control):
            stand_in = probe.model_copy(
                update={"dataset": control.dataset, "where": control.where, "column": None}
            )
            what = f"{model.datasets[control.dataset].table} (the positive control)"
            try:
                rows = session.rows(probe_query(model, stand_in, Place(control.dataset, None)))
            except QueryError as err:
                stage, why = _not_read(platform, what, probe.persona, err) or (
                    "control",
                    f"the positive control {control.describe()} failed: {err}",
                )
                return fault(stage, why)
            if not rows:
                return fault(
                    "control",
                    f"the positive control {control.describe()} returned no rows: a denial "
                    "would not be proven to come from the policy",
                )
        try:
            rows = session.rows(probe_query(model, probe, place))
        except QueryError as err:
            table = model.datasets[place.dataset].table
            found = _not_read(platform, table, probe.persona, err)
            if found is not None:
                return fault(*found)
            denial = find_denial(err.codes)
            if denial is None:
                return fault("query", str(err))
            proven = f"; control {control.describe()} answered" if control else ""
            return CatalogAnswer(
                "denied", f"{platform}: {err} ({denial}{proven})", tuple(statements), denial
            )
    disposition, why = classify_rows(model, probe, place, rows, canary)
    if isinstance(control, Control) and disposition in ("empty", "denied"):
        why += f" (the positive control {control.describe()} returned rows)"
    return CatalogAnswer(disposition, f"{platform}: {why}", tuple(statements))


class _Recording:
    """A session that records the statements run through it."""

    def __init__(self, session: Session, statements: list[str]) -> None:
        self.session = session
        self.statements = statements

    def rows(self, statement: str) -> list[tuple[Any, ...]]:
        self.statements.append(statement)
        return self.session.rows(statement)


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


class _ExecutorSession:
    """A :class:`Session` on an executor: its errors as QueryError."""

    def __init__(self, executor: SnowflakeExecutor | DatabricksExecutor) -> None:
        self.executor = executor

    def rows(self, statement: str) -> list[tuple[Any, ...]]:
        try:
            return self.executor.rows([statement])
        except ExecutionError as err:
            raise QueryError(err.said, err.codes) from None
        except UnreachableError as err:  # a statement that did not reach: this persona's fault
            raise QueryError(err.said, {}) from None


def _run_all(runner: Runner, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    with runner.session(persona) as session:
        for statement in statements:
            rows = session.rows(statement)
    return rows


class SnowflakeRunner:
    """One persona session of the probe user per persona (``connect()`` opens it, with the
    timeouts of :func:`snowflake_connect_kwargs`), statements in order."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self.connect = connect

    @contextlib.contextmanager
    def session(self, persona: str) -> Iterator[Session]:
        try:
            opened = SnowflakeExecutor.session(self.connect)
            executor = opened.__enter__()
        except ExecutionError as err:
            raise QueryError(err.said, err.codes) from None
        with contextlib.ExitStack() as stack:
            stack.push(opened)
            yield _ExecutorSession(executor)

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        """Statements in one session; the rows of the last one."""
        return _run_all(self, persona, statements)


class DatabricksRunner:
    """One persona session per persona (its own SDK client, from its ``probe_profiles``
    entry), statements through the SQL Statement Execution API on one warehouse, each within
    ``timeout`` seconds."""

    def __init__(self, client_for: Callable[[str], Any], warehouse_id: str, timeout: float) -> None:
        self.client_for = client_for
        self.warehouse_id = warehouse_id
        self.timeout = timeout

    @contextlib.contextmanager
    def session(self, persona: str) -> Iterator[Session]:
        options = probe_options(self.timeout)
        try:
            opened = DatabricksExecutor.session(
                lambda: self.client_for(persona), self.warehouse_id, options.timeouts
            )
            executor = opened.__enter__()
        except ExecutionError as err:
            raise QueryError(err.said, err.codes) from None
        with contextlib.ExitStack() as stack:
            stack.push(opened)
            yield _ExecutorSession(executor)

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        """Statements in one session; the rows of the last one."""
        return _run_all(self, persona, statements)
