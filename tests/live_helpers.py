"""Fixtures for the live tests: both stand-ins seeded with the model's data tables, and the
environment that points accord's clients at them (no network: 127.0.0.1 only)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.live.sandbox import seed_of
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import load_project
from accord.sandbox.seed import plant_tables
from accord.sandbox.standins.databricks import DatabricksEstate, workspace
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
    """Run the compiled SQL of ``out`` (salts filled in memory) on ``estate`` directly."""
    from accord.compiler.connect.executor import split_statements
    from accord.compiler.model.salts import SaltBox, materialize

    for path in sorted((out / estate.platform).glob("*.sql")):
        text = materialize(path.read_text(), estate.platform, SaltBox())
        for statement in split_statements(text, estate.platform):
            estate.execute(statement)
