"""A catalog for `accord probe --live` on both platforms: the compiled SQL deployed on the
platform stand-ins (sandbox/standins), rows seeded under the governed tables, and a runner that
answers a probe's statements as the platform would, the deployed policies evaluated by the
stand-in's own engine (not by `accord verify`'s evaluation, which is the depth it is compared
with).

The persona is taken from the session, not from the caller: on Snowflake the `USE ROLE` /
`USE SECONDARY ROLES` statements are run in the stand-in's session of the probe user (who
holds every persona's role), so a probe that set the wrong session is answered for the wrong
roles (or refused), as the platform would; on Databricks the caller is the persona (one SDK
profile each) and `is_account_group_member` sees the persona's groups."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from accord.compiler.live.sandbox import PROBE_USER, seed_of
from accord.compiler.model.validate import Project
from accord.compiler.probe_live.catalog import QueryError
from accord.sandbox.seed import plant_members, plant_rows
from accord.sandbox.standins.databricks import DatabricksEstate
from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.snowflake import Session, SnowflakeEstate
from accord.targets.render import render_files


def deployed(project: Project, platform: str) -> SnowflakeEstate | DatabricksEstate:
    """A stand-in holding ``project``'s data tables, its compiled policies deployed on them
    (salts from the environment, as `migrate apply` reads them), then the rest of the seed
    ``accord sandbox`` plants (compiler/live/sandbox.py): rows under the governed tables and,
    on Snowflake, the probe user holding every persona's role."""
    from tests.live_helpers import deploy_compiled, seed_model

    estate: SnowflakeEstate | DatabricksEstate = (
        SnowflakeEstate() if platform == "snowflake" else DatabricksEstate()
    )
    seed_model(estate, project.model)
    with tempfile.TemporaryDirectory() as out:
        for rel, text in render_files(project, "all").items():
            path = Path(out) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        deploy_compiled(estate, Path(out))
    seed = seed_of(project.model).of(platform)
    plant_rows(estate, seed.tables)
    plant_members(estate, seed.members)
    return estate


class StandinRunner:
    """A probe runner (``session(persona)``: one session, statements in order) on a deployed
    stand-in. ``groups`` overrides a persona's Databricks groups (a principal in other groups
    than the persona's: the probe must refuse to answer)."""

    def __init__(self, project: Project, estate: SnowflakeEstate | DatabricksEstate) -> None:
        self.model = project.model
        self.estate = estate
        self.seen: list[tuple[str, list[str]]] = []
        self.groups: dict[str, set[str]] = {}

    @contextmanager
    def session(self, persona: str) -> Iterator[_Session]:
        statements: list[str] = []
        self.seen.append((persona, statements))
        if isinstance(self.estate, SnowflakeEstate):
            yield _Session(self.estate, statements, Session(PROBE_USER), None)
            return
        groups = self.groups.get(persona)
        if groups is None:
            groups = {
                self.model.principals[p].databricks or "" for p in self.model.personas[persona]
            }
        yield _Session(self.estate, statements, None, {g for g in groups if g})

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with self.session(persona) as session:
            for sql in statements:
                rows = session.rows(sql)
        return rows


class _Session:
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
        self.statements.append(sql)
        try:
            if isinstance(self.estate, SnowflakeEstate):
                assert self.snowflake is not None
                return self.estate.execute_as(self.snowflake, sql)[1]
            with self.estate.lock:
                saved, self.estate.session = self.estate.session, set(self.groups)
                try:
                    return self.estate.execute(sql)[1]
                finally:
                    self.estate.session = saved
        except SqlError as err:
            raise QueryError(
                err.message, {"errorCode": err.code, "sqlState": err.sqlstate}
            ) from None
