"""Fixtures for the live tests: both stand-ins seeded with the model's data tables, and the
environment that points accord's clients at them (no network: 127.0.0.1 only)."""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.live.sandbox import seed_of
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import Project, load_project
from accord.sandbox.seed import plant_tables
from accord.sandbox.standins.databricks import DatabricksEstate, workspace
from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.probe_runner import PROBE_USER, StandinRunner
from accord.sandbox.standins.reader import split
from accord.sandbox.standins.snowflake import SnowflakeEstate, account

ROOT = Path(__file__).resolve().parent.parent
SALTS = {"SUBJECT_SALT_SNOWFLAKE": "sf-7c1d-secret", "SUBJECT_SALT_DATABRICKS": "dbx-90aa-secret"}


def seed(estate: SnowflakeEstate | DatabricksEstate, directory: Path = ROOT / "policies") -> None:
    """The platform's own data tables, as the model's datasets declare them."""
    seed_model(estate, load_project(directory).model)


def seed_model(estate: SnowflakeEstate | DatabricksEstate, model: PolicyModel) -> None:
    """The platform's own data tables, as ``model``'s datasets declare them: the tables of the
    seed ``accord sandbox`` plants (compiler/live/sandbox.py), without their rows."""
    plant_tables(estate, seed_of(model).of(estate.platform).tables)


@dataclass
class Platforms:
    snowflake: SnowflakeEstate
    databricks: DatabricksEstate


@contextmanager
def running_platforms(monkeypatch: pytest.MonkeyPatch) -> Iterator[Platforms]:
    """Both stand-ins, seeded, with the environment pointing accord at them (the ``platforms``
    fixture of tests/conftest.py)."""
    with serving_platforms() as shared:
        shared.point(monkeypatch)
        yield shared.platforms


@contextmanager
def serving_platforms() -> Iterator[SharedPlatforms]:
    """Both stand-ins, seeded and serving on 127.0.0.1, and the environment that points accord
    at them (set by :meth:`SharedPlatforms.point`)."""
    sf, dbx = SnowflakeEstate(), DatabricksEstate()
    seed(sf)
    seed(dbx)
    with account(sf) as params, workspace(dbx) as host:
        env = {
            "SNOWFLAKE_HOME": "/nonexistent/.snowflake",
            # the connector's cloud-platform detection probes metadata endpoints: no network
            "SNOWFLAKE_DISABLE_PLATFORM_DETECTION": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
            **SALTS,
            "SNOWFLAKE_ACCOUNT": params["account"],
            "SNOWFLAKE_USER": params["user"],
            "SNOWFLAKE_PASSWORD": params["password"],
            "SNOWFLAKE_HOST": params["host"],
            "SNOWFLAKE_PORT": str(params["port"]),
            "SNOWFLAKE_PROTOCOL": "http",
            "DATABRICKS_HOST": host,
            "DATABRICKS_TOKEN": "dapi-local-test",
            "DATABRICKS_WAREHOUSE_ID": "wh-standin",
            "DATABRICKS_CONFIG_FILE": "/nonexistent/.databrickscfg",
        }
        yield SharedPlatforms(Platforms(sf, dbx), env)


@dataclass
class SharedPlatforms:
    """The stand-ins of one test file (the ``shared_platforms`` fixture of tests/conftest.py):
    a module fixture deploys on them once (:meth:`deploying`), and each test takes them as the
    deploy left them (:meth:`reset`): what an earlier test of the file changed is undone."""

    platforms: Platforms
    env: dict[str, str]
    snapshots: list[tuple[SnowflakeEstate | DatabricksEstate, Snapshot]] = field(
        default_factory=list
    )

    def point(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The environment pointing accord's clients at the stand-ins, and nowhere else."""
        for name in [n for n in os.environ if n.startswith(("DATABRICKS_", "SNOWFLAKE_"))]:
            monkeypatch.delenv(name)
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)

    @contextmanager
    def deploying(self, tmp: Path) -> Iterator[Platforms]:
        """Pointed at the stand-ins, with a private cache under ``tmp`` (as each test's is,
        tests/conftest.py), for a module fixture's deploy; what it leaves is what every test
        of the file starts from."""
        with pytest.MonkeyPatch.context() as monkeypatch:
            self.point(monkeypatch)
            monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp / "accord_cache"))
            monkeypatch.setenv("XDG_CACHE_HOME", str(tmp / "user_cache"))
            yield self.platforms
        self.snapshots = [
            (e, snapshot(e)) for e in (self.platforms.snowflake, self.platforms.databricks)
        ]

    def reset(self, monkeypatch: pytest.MonkeyPatch) -> Platforms:
        """The stand-ins as the deploy left them, and the environment pointing at them."""
        assert self.snapshots, "deploy first (SharedPlatforms.deploying)"
        for estate, taken in self.snapshots:
            restore(estate, taken)
        self.point(monkeypatch)
        return self.platforms


#: what :func:`snapshot` leaves alone: the database (copied table by table), the lock, the name
#: counters (they only need to go on), the per-thread request state and a test's answer hook
_LIVE = {"db", "lock", "_alias", "_temp", "_local", "answer"}


@dataclass
class Snapshot:
    """An estate's attributes, and its tables (copied to ``__snapshot.main.t<i>``)."""

    state: dict[str, Any]
    tables: list[tuple[str, str, str]]


def snapshot(estate: SnowflakeEstate | DatabricksEstate) -> Snapshot:
    """Everything a test can change in ``estate``: its attributes, and the rows and columns of
    its tables (copied into a catalog of their own in its database)."""
    state = {k: copy.deepcopy(v, _kept(estate)) for k, v in vars(estate).items() if k not in _LIVE}
    with estate.lock:
        tables = _tables(estate)
        estate.db.execute("ATTACH IF NOT EXISTS ':memory:' AS __snapshot")
        for i, (catalog, schema, name) in enumerate(tables):
            estate.db.execute(
                f'CREATE OR REPLACE TABLE __snapshot.main."t{i}" AS '
                f'SELECT * FROM "{catalog}"."{schema}"."{name}"'
            )
    return Snapshot(state, tables)


def restore(estate: SnowflakeEstate | DatabricksEstate, taken: Snapshot) -> None:
    """``estate`` as it was when ``taken``: its attributes, its tables (the rows a test wrote or
    deleted, a table it dropped or created) and its catalogs."""
    with estate.lock:
        for catalog in estate._catalogs - taken.state["_catalogs"]:
            estate.db.execute(f'DETACH "{catalog}"')
        for table in _tables(estate):
            if table not in taken.tables:
                estate.db.execute('DROP TABLE "{}"."{}"."{}"'.format(*table))
        for key in [k for k in vars(estate) if k not in _LIVE and k not in taken.state]:
            delattr(estate, key)
        for key, value in taken.state.items():
            value, now = copy.deepcopy(value, _kept(estate)), getattr(estate, key, None)
            if type(now) is type(value) and isinstance(now, dict | list | set):
                # in place: a stand-in's handler may hold the container itself
                now.clear()
                if isinstance(now, list):
                    now.extend(value)
                else:
                    now.update(value)
            else:
                setattr(estate, key, value)
        for i, (catalog, schema, name) in enumerate(taken.tables):
            estate.db.execute(f'CREATE SCHEMA IF NOT EXISTS "{catalog}"."{schema}"')
            estate.db.execute(
                f'CREATE OR REPLACE TABLE "{catalog}"."{schema}"."{name}" AS '
                f'SELECT * FROM __snapshot.main."t{i}"'
            )


def _kept(estate: SnowflakeEstate | DatabricksEstate) -> dict[int, Any]:
    """A deepcopy memo that copies the estate, and what :func:`snapshot` leaves alone, as
    themselves (a session, say, refers to its estate)."""
    kept = [estate, *(getattr(estate, k) for k in _LIVE if hasattr(estate, k))]
    return {id(o): o for o in kept}


def _tables(estate: SnowflakeEstate | DatabricksEstate) -> list[tuple[str, str, str]]:
    """The base tables of ``estate``'s catalogs (not the temporary ones it answers with)."""
    rows = estate.db.execute(
        "SELECT table_catalog, table_schema, table_name FROM information_schema.tables "
        "WHERE table_type = 'BASE TABLE' ORDER BY ALL"
    ).fetchall()
    return [(c, s, n) for c, s, n in rows if c in estate._catalogs]


def deploy_compiled(estate: SnowflakeEstate | DatabricksEstate, out: Path) -> None:
    """Run the compiled SQL of ``out`` on ``estate`` directly, as accord's apply would: the
    salts filled in memory by accord (the one place that knows the placeholder's grammar), the
    statements cut by the stand-in's own splitter (sandbox/standins/reader.py), never accord's."""
    from accord.compiler.model.salts import SaltBox, materialize

    for path in sorted((out / estate.platform).glob("*.sql")):
        text = materialize(path.read_text(), estate.platform, SaltBox())
        for statement in split(text, estate.platform):
            estate.execute(statement)


# --------------------------------------------------------------------------------------------
# a deployed catalog for `accord probe --live` (the stand-ins' persona sessions:
# sandbox/standins/probe_runner.py)


def deployed(project: Project, platform: str) -> SnowflakeEstate | DatabricksEstate:
    """A stand-in holding ``project``'s data tables, its compiled policies deployed on them
    (salts from the environment, as `migrate apply` reads them), and rows seeded under them:
    per governed table a row of each value of its row filter's entitlement, and a row of each
    probe's ``where`` value holding the probe's canary in the probe's column. On Snowflake the
    probe user (sandbox/standins/probe_runner.py) holds every persona's role."""
    from accord.targets.render import render_files

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


def persona_groups(project: Project) -> dict[str, set[str]]:
    """Each persona's Databricks groups, as the model names them."""
    model = project.model
    return {
        persona: {model.principals[p].databricks or "" for p in principals} - {""}
        for persona, principals in model.personas.items()
    }


def _seed_rows(project: Project, estate: SnowflakeEstate | DatabricksEstate) -> None:
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
        for row in rows:
            cols = ", ".join(f'"{c}"' for c in row)
            marks = ", ".join("?" for _ in row)
            estate.db.execute(
                f"INSERT INTO {estate._quoted(table.name)} ({cols}) VALUES ({marks})",
                list(row.values()),
            )


class ProbeRunner:
    """accord's probe runner protocol (compiler/probe_live/catalog.py: ``Runner``) over a
    stand-in's persona sessions: a refusal (the stand-in's SqlError) becomes accord's
    QueryError with the codes accord's executor reads off a platform error (``errorCode``,
    ``sqlState``), as its own sessions translate the clients' errors."""

    def __init__(self, standin: StandinRunner) -> None:
        self.standin = standin

    @property
    def seen(self) -> list[tuple[str, list[str]]]:
        return self.standin.seen

    @contextmanager
    def session(self, persona: str) -> Iterator[Any]:
        with self.standin.session(persona) as opened:
            yield _Translated(opened)

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with self.session(persona) as session:
            for sql in statements:
                rows = session.rows(sql)
        return rows


class _Translated:
    def __init__(self, session: Any) -> None:
        self.session = session

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        from accord.compiler.probe_live.catalog import QueryError

        try:
            return self.session.rows(sql)  # type: ignore[no-any-return]
        except SqlError as err:
            raise QueryError(
                err.message, {"errorCode": err.code, "sqlState": err.sqlstate}
            ) from None


# --------------------------------------------------------------------------------------------
# least-privilege readers: what docs/live.md's reader grants give the drift reader, on each
# stand-in (tests/test_snowflake_reader.py, tests/test_databricks_truth.py, bench/live_bench.py)

#: the Snowflake reading role, and the role it holds the global privileges through
SNOWFLAKE_READER = "ACCORD_READER"
SNOWFLAKE_GLOBALS = (
    "APPLY MASKING POLICY",
    "APPLY ROW ACCESS POLICY",
    "APPLY PROJECTION POLICY",
    "APPLY AGGREGATION POLICY",
    "APPLY JOIN POLICY",
    "APPLY TAG",
    "MANAGE GRANTS",
)
#: the Databricks reading principal (the stand-in's default caller)
DATABRICKS_READER = "accord-ci@example.com"


def snowflake_reader(
    sf: SnowflakeEstate, expected: Any, without: tuple[str, ...] = (), role: str = SNOWFLAKE_READER
) -> None:
    """``role`` holds what docs/live.md's reader grants give it: the global privileges through
    a role granted to it (GOVERNANCE_READ: the hierarchy), USAGE on the databases and schemas
    of the governance schema, the governed and the mapping tables, SELECT on those tables.
    Nothing on the salt functions. ``expected`` is the model's lowered Snowflake catalog; a
    test logs in as ``role`` with ``SNOWFLAKE_ROLE``."""
    from accord.targets.identity import ConstraintAttachment
    from accord.targets.objects import (
        MappingTable,
        MaskAttachment,
        RowFilterAttachment,
        TagAssignment,
    )

    for privilege in SNOWFLAKE_GLOBALS:
        if privilege not in without:
            sf.grant_to_role("GOVERNANCE_READ", privilege, "ACCOUNT")
    sf.grant_to_role(role, "USAGE", "ROLE", "GOVERNANCE_READ")
    kinds = MaskAttachment | RowFilterAttachment | TagAssignment | ConstraintAttachment
    tables = {o.table for o in expected if isinstance(o, kinds)}
    tables |= {o.name for o in expected.of(MappingTable)}
    for table in sorted(tables):
        db, schema, _ = table.split(".")
        sf.grant_to_role(role, "USAGE", "DATABASE", db)
        sf.grant_to_role(role, "USAGE", "SCHEMA", f"{db}.{schema}")
        sf.grant_to_role(role, "SELECT", "TABLE", table)
    db, _ = expected.governance_schema.split(".")
    sf.grant_to_role(role, "USAGE", "DATABASE", db)
    sf.grant_to_role(role, "USAGE", "SCHEMA", expected.governance_schema)


def databricks_reader(
    dbx: DatabricksEstate,
    schemas: Any,
    governance: str = "governance.policies",
    who: str = DATABRICKS_READER,
) -> None:
    """The reader grants of docs/live.md, and nothing else: ``who`` is no longer an admin; READ
    METADATA on the metastore (its ABAC policies, Beta: unity-catalog/abac/metastore-policies,
    apply to every governed table); USE CATALOG and READ METADATA on each catalog (and BROWSE
    on the governance catalog, so that functions.list shows every function), USE SCHEMA and
    MANAGE on each governed table's schema, and on the governance schema SELECT too (the
    mapping tables)."""
    dbx.admins.clear()
    dbx.metastore_readers.add(who)
    for priv in ("USE_CATALOG", "READ_METADATA", "BROWSE"):  # BROWSE: every function listed
        dbx.grant("CATALOG", governance.split(".")[0], priv, who)
    for priv in ("USE_SCHEMA", "MANAGE", "SELECT"):
        dbx.grant("SCHEMA", governance, priv, who)
    for schema in sorted(schemas):
        for priv in ("USE_CATALOG", "READ_METADATA"):
            dbx.grant("CATALOG", schema.split(".")[0], priv, who)
        for priv in ("USE_SCHEMA", "MANAGE"):
            dbx.grant("SCHEMA", schema, priv, who)
