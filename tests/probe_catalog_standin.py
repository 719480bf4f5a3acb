"""A catalog for `accord probe --live` on both platforms: the compiled SQL deployed on the
platform stand-ins (tests/standins), rows seeded under the governed tables, and a runner that
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

from accord.compiler.model.validate import Project
from accord.compiler.probe_live.catalog import QueryError
from accord.sandbox.standins.databricks import DatabricksEstate
from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.snowflake import Session, SnowflakeEstate
from accord.targets.render import render_files

#: the probe user of the Snowflake stand-in
PROBE_USER = "ACCORD_PROBE"


def deployed(project: Project, platform: str) -> SnowflakeEstate | DatabricksEstate:
    """A stand-in holding ``project``'s data tables, its compiled policies deployed on them
    (salts from the environment, as `migrate apply` reads them), and rows seeded under them."""
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
    _seed_rows(project, estate)
    if isinstance(estate, SnowflakeEstate):
        roles = sorted({p.snowflake for p in project.model.principals.values() if p.snowflake})
        estate.grant_roles(PROBE_USER, roles)
    return estate


def _seed_rows(project: Project, estate: SnowflakeEstate | DatabricksEstate) -> None:
    """Per governed table: a row of each value of its row filter's entitlement, and a row of
    each probe's ``where`` value holding the probe's canary in the probe's column."""
    model = project.model
    for ds in model.datasets.values():
        if ds.platform != estate.platform:
            continue
        table = estate.table(ds.table)
        rf = ds.row_filter
        key = getattr(rf, "column", None) if rf is not None else None
        entitlement = getattr(rf, "entitlement", None) if rf is not None else None
        values = sorted(model.entitlements[entitlement]) if entitlement else [""]
        rows: list[dict[str, Any]] = []
        for value in values:
            row = {name: f"{name.lower()}-{value}" for name, _ in table.columns.values()}
            if key:
                row[table.columns[key.upper()][0]] = value
            rows.append(row)
        for probe in model.probes.values():
            if not (probe.canary and probe.column and probe.where and key):
                continue
            ((dim, value),) = probe.where.items()
            if dim != entitlement or probe.column.upper() not in table.columns:
                continue
            row = {name: f"{name.lower()}-{value}" for name, _ in table.columns.values()}
            row[table.columns[key.upper()][0]] = value
            row[table.columns[probe.column.upper()][0]] = probe.canary
            rows.append(row)
        _insert(estate, ds.table, rows)


def _insert(
    estate: SnowflakeEstate | DatabricksEstate, name: str, rows: list[dict[str, Any]]
) -> None:
    t = estate.table(name)
    for row in rows:
        cols = ", ".join(f'"{c}"' for c in row)
        marks = ", ".join("?" for _ in row)
        estate.db.execute(
            f"INSERT INTO {estate._quoted(t.name)} ({cols}) VALUES ({marks})", list(row.values())
        )


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
