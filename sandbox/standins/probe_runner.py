"""Persona sessions on a stand-in, for `accord probe --live` tests: a statement answered as the
platform answers the persona, the deployed policies evaluated by the stand-in's own engine.

The persona is taken from the session, not from the caller: on Snowflake the ``USE ROLE`` /
``USE SECONDARY ROLES`` statements run in the stand-in's session of the probe user (who holds
every persona's role), so a probe that set the wrong session is answered for the wrong roles
(or refused), as the platform would; on Databricks the caller is the persona (one SDK profile
each) and ``is_account_group_member`` sees the persona's groups.

A refusal is the platform's own error (:class:`~accord.sandbox.standins.engine.SqlError`, its code and
SQLSTATE), never accord's: the Databricks workspace answers it as a FAILED statement, and a test
that hands these sessions to accord's probe runner translates it as accord's executor would
(tests/live_helpers.py). Nothing here imports accord."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from accord.sandbox.standins.databricks import DatabricksEstate
from accord.sandbox.standins.snowflake import Session, SnowflakeEstate

#: the probe user of the Snowflake stand-in
PROBE_USER = "ACCORD_PROBE"


class StandinRunner:
    """Persona sessions (``session(persona)``: one session, statements in order) on a deployed
    stand-in. ``persona_groups`` is each persona's Databricks groups; ``groups`` overrides a
    persona's (a principal in other groups than the persona's: the probe must refuse to
    answer)."""

    def __init__(
        self,
        estate: SnowflakeEstate | DatabricksEstate,
        persona_groups: dict[str, set[str]] | None = None,
    ) -> None:
        self.estate = estate
        self.persona_groups = persona_groups or {}
        self.seen: list[tuple[str, list[str]]] = []
        self.groups: dict[str, set[str]] = {}

    @contextmanager
    def session(self, persona: str) -> Iterator[StandinSession]:
        statements: list[str] = []
        self.seen.append((persona, statements))
        if isinstance(self.estate, SnowflakeEstate):
            yield StandinSession(self.estate, statements, Session(PROBE_USER), None)
            return
        groups = self.groups.get(persona, self.persona_groups.get(persona, set()))
        yield StandinSession(self.estate, statements, None, {g for g in groups if g})

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        """Statements in one session; the rows of the last one (SqlError when refused)."""
        rows: list[tuple[Any, ...]] = []
        with self.session(persona) as session:
            for sql in statements:
                rows = session.rows(sql)
        return rows


class StandinSession:
    def __init__(
        self,
        estate: SnowflakeEstate | DatabricksEstate,
        statements: list[str],
        snowflake: Session | None,
        groups: set[str] | None,
    ) -> None:
        self.estate = estate
        self.statements = statements
        self.snowflake = snowflake
        self.groups = groups or set()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        """The statement's rows, or the platform's refusal (SqlError)."""
        self.statements.append(sql)
        if isinstance(self.estate, SnowflakeEstate):
            assert self.snowflake is not None
            return self.estate.execute_as(self.snowflake, sql)[1]
        with self.estate.lock:
            saved, self.estate.session = self.estate.session, set(self.groups)
            try:
                return self.estate.execute(sql)[1]
            finally:
                self.estate.session = saved
