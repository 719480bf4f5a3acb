"""``accord probe --live --simulate``: Snowflake personas simulated, not logged in as (issue 41,
item 7).

``EXECUTE USING POLICY_CONTEXT(<context function> => '<value>', ...) AS SELECT ...``
"simulates the results of a query based upon the value of one or more context functions" and
evaluates the masking, row access (and projection, aggregation, join) policies in that context
(docs.snowflake.com/en/sql-reference/functions/policy_context). One simulator role runs every
simulation: "If a table is protected by a policy, the specified user or role must be granted
... OWNERSHIP on the table or view, and the APPLY privilege for the policy, either at the
account-level or on the policy itself", far more than the least-privilege drift reader may hold,
so the simulator connects only through its own entry of the probe config
(``snowflake.simulator_connection``: a connections.toml name), never the drift reader's
connection, its environment or the connector's default.

Each persona is simulated as ``CURRENT_ROLE`` (its primary role) and ``CURRENT_AVAILABLE_ROLES``
(its roles, in square brackets as the reference writes the list). Whether ``IS_ROLE_IN_SESSION``
(which accord's policies use) honours a simulated role list, the reference does not say: before a
persona's simulation is trusted it proves itself, a control asking ``IS_ROLE_IN_SESSION`` of each
of the persona's roles and of a modelled role the persona does not hold, inside the same
context; unless the answers are true, true ... and false, every probe of the persona is a fault
(``session``), never an answer. Any error of a simulated query is a fault too (the simulator's
privileges, not the persona's, are what a refusal reflects): never ``denied``.

What the context cannot simulate is said in the run's output (:data:`CANNOT_SIMULATE`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from sqlglot import exp

from accord.compiler.connect.executor import ExecutionError, SnowflakeExecutor
from accord.compiler.meaning import semantics as sem
from accord.compiler.model.schema import PolicyModel
from accord.compiler.probe_live.catalog import (
    _MISSING,
    SNOWFLAKE_ROLE_CHECK,
    QueryError,
    Session,
    _stored,
    persona_roles,
)
from accord.targets import sql

#: what a simulated answer does not show, stated in the output of every simulated run
CANNOT_SIMULATE = (
    "simulated (EXECUTE USING POLICY_CONTEXT): the persona's privileges on the tables are not "
    "simulated (the simulator owns them), so a denial by a missing grant cannot appear",
    "simulated: a session policy's ALLOWED_SECONDARY_ROLES and the user's default secondary "
    "roles are not simulated: each persona is simulated with all its modelled roles active",
    "simulated: only CURRENT_ROLE and CURRENT_AVAILABLE_ROLES are set; a policy that reads "
    "another context (CURRENT_USER, CURRENT_ACCOUNT, an agent's SYS_CONTEXT) sees the "
    "simulator's",
    "simulated: login, network policy and warehouse access are not exercised",
    "simulated: IS_ROLE_IN_SESSION's answer under a simulated role list is not documented; each "
    "persona's simulation proved it first (a control inside the same context), or its probes "
    "are faults",
)


def context(model: PolicyModel, persona: str) -> str:
    """``POLICY_CONTEXT(CURRENT_ROLE => 'P', CURRENT_AVAILABLE_ROLES => '[...]')`` of a
    persona: its primary role, and all its roles."""
    primary, rest = persona_roles(model, persona)
    roles = [_stored(r) for r in (primary, *rest)]
    listed = "[" + ", ".join(f"'{r}'" for r in roles) + "]"
    return (
        f"POLICY_CONTEXT(CURRENT_ROLE => {sql.render(sql.literal(_stored(primary)), 'snowflake')}, "
        f"CURRENT_AVAILABLE_ROLES => {sql.render(sql.literal(listed), 'snowflake')})"
    )


def proof(model: PolicyModel, persona: str) -> tuple[str, list[tuple[str, bool]]]:
    """The control statement that proves a persona's simulation, and what each column must
    answer: IS_ROLE_IN_SESSION true of each of the persona's roles, false of a modelled role
    it does not hold (directly or through the model's hierarchy), when there is one."""
    primary, rest = persona_roles(model, persona)
    held = {_stored(r) for r in (primary, *rest)}
    effective = {
        _stored(model.principals[p].snowflake or "")
        for p in sem.principals_on(model, persona, "snowflake")
    }
    others = sorted(
        {_stored(p.snowflake) for p in model.principals.values() if p.snowflake}
        - held
        - effective
        - {"PUBLIC"}
    )
    expect = [(r, True) for r in sorted(held)] + [(r, False) for r in others[:1]]
    calls = [
        exp.Anonymous(this="IS_ROLE_IN_SESSION", expressions=[sql.literal(role)])
        for role, _ in expect
    ]
    select = sql.render(exp.select(*calls), "snowflake")
    return f"EXECUTE USING {context(model, persona)} AS {select}", expect


class SimulatorRunner:
    """One simulator session per persona (``connect()`` opens the simulator's connection), each
    query wrapped in the persona's context (:class:`SimulatedSession`)."""

    def __init__(self, connect: Callable[[], Any], model: PolicyModel) -> None:
        self.connect = connect
        self.model = model

    @contextlib.contextmanager
    def session(self, persona: str) -> Iterator[Session]:
        try:
            opened = SnowflakeExecutor.session(self.connect)
            executor = opened.__enter__()
        except ExecutionError as err:
            raise QueryError(f"the simulator could not log in: {err.said}", {}) from None
        with contextlib.ExitStack() as stack:
            stack.push(opened)
            yield SimulatedSession(executor, self.model, persona)

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with self.session(persona) as session:
            for statement in statements:
                rows = session.rows(statement)
        return rows


class SimulatedSession:
    """A persona's session, simulated: ``USE ROLE`` / ``USE SECONDARY ROLES`` set nothing on
    the platform (the persona's roles are its context); the role check runs the proof; every
    query runs in the persona's context."""

    def __init__(self, executor: Any, model: PolicyModel, persona: str) -> None:
        self.executor = executor
        self.model = model
        self.persona = persona

    def rows(self, statement: str) -> list[tuple[Any, ...]]:
        if statement.upper().startswith(("USE ROLE ", "USE SECONDARY ROLES ")):
            return []  # the context carries the roles
        if statement == SNOWFLAKE_ROLE_CHECK:
            return self.prove()
        return self._run(f"EXECUTE USING {context(self.model, self.persona)} AS {statement}")

    def prove(self) -> list[tuple[Any, ...]]:
        """The proof's control; on success the role check's answer (the persona's roles), else
        QueryError: the simulation is not proven, and the probe a fault."""
        statement, expect = proof(self.model, self.persona)
        rows = self._run(statement)
        got = [str(v).strip().lower() in ("true", "1") for v in (rows[0] if rows else ())]
        want = [v for _, v in expect]
        if got != want:
            said = ", ".join(
                f"IS_ROLE_IN_SESSION('{r}') = {g}" for (r, _), g in zip(expect, got, strict=False)
            )
            raise QueryError(
                "the simulation is not proven: inside the persona's POLICY_CONTEXT the control "
                f"answered {said or 'nothing'} (expected true for its roles and false for a role "
                "it does not hold); the reference does not say whether IS_ROLE_IN_SESSION "
                "honours a simulated role list, so its answers are not trusted",
                {},
            )
        primary, rest = persona_roles(self.model, self.persona)
        roles = ",".join(_stored(r) for r in rest)
        return [(_stored(primary), json.dumps({"roles": roles, "value": roles}))]

    def _run(self, statement: str) -> list[tuple[Any, ...]]:
        try:
            return self.executor.rows([statement])  # type: ignore[no-any-return]
        except ExecutionError as err:
            # a refusal is the simulator's, not the persona's: never a denial; a table that
            # does not exist (or is hidden) keeps its codes (a fault: table)
            missing = any(str(err.codes.get(k)) in v for k, v in _MISSING["snowflake"].items())
            raise QueryError(
                f"the simulation did not run: {err.said}", err.codes if missing else {}
            ) from None
