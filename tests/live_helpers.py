"""Fixtures for the live tests: both stand-ins seeded with the model's data tables, and the
environment that points accord's clients at them (no network: 127.0.0.1 only)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import load_project
from tests.standins.databricks import DatabricksEstate, workspace
from tests.standins.snowflake import SnowflakeEstate, account

ROOT = Path(__file__).resolve().parent.parent
SALTS = {"SUBJECT_SALT_SNOWFLAKE": "sf-7c1d-secret", "SUBJECT_SALT_DATABRICKS": "dbx-90aa-secret"}


def seed(estate: SnowflakeEstate | DatabricksEstate, directory: Path = ROOT / "policies") -> None:
    """The platform's own data tables, as the model's datasets declare them."""
    seed_model(estate, load_project(directory).model)


def seed_model(estate: SnowflakeEstate | DatabricksEstate, model: PolicyModel) -> None:
    """The platform's own data tables, as ``model``'s datasets declare them."""
    for ds in model.datasets.values():
        if ds.platform == estate.platform:
            string = "VARCHAR" if estate.platform == "snowflake" else "STRING"
            columns = {c: spec.type for c, spec in ds.columns.items()}
            for _, key, _ in ds.filter_dimensions:  # every dimension's key column
                columns.setdefault(key, string)
            # a column nobody governs (where a console policy can land)
            columns["RESULT_VALUE" if estate.platform == "snowflake" else "result_value"] = string
            estate.seed_table(ds.table, columns)


@dataclass
class Platforms:
    snowflake: SnowflakeEstate
    databricks: DatabricksEstate


@contextmanager
def running_platforms(monkeypatch: pytest.MonkeyPatch) -> Iterator[Platforms]:
    """Both stand-ins, seeded, with the environment pointing accord at them (the ``platforms``
    fixture of tests/conftest.py)."""
    sf, dbx = SnowflakeEstate(), DatabricksEstate()
    seed(sf)
    seed(dbx)
    for name in [n for n in os.environ if n.startswith(("DATABRICKS_", "SNOWFLAKE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SNOWFLAKE_HOME", "/nonexistent/.snowflake")
    # the connector's cloud-platform detection probes metadata endpoints: no network in tests
    monkeypatch.setenv("SNOWFLAKE_DISABLE_PLATFORM_DETECTION", "true")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name, value in SALTS.items():
        monkeypatch.setenv(name, value)
    with account(sf) as params, workspace(dbx) as host:
        monkeypatch.setenv("SNOWFLAKE_ACCOUNT", params["account"])
        monkeypatch.setenv("SNOWFLAKE_USER", params["user"])
        monkeypatch.setenv("SNOWFLAKE_PASSWORD", params["password"])
        monkeypatch.setenv("SNOWFLAKE_HOST", params["host"])
        monkeypatch.setenv("SNOWFLAKE_PORT", str(params["port"]))
        monkeypatch.setenv("SNOWFLAKE_PROTOCOL", "http")
        monkeypatch.setenv("DATABRICKS_HOST", host)
        monkeypatch.setenv("DATABRICKS_TOKEN", "dapi-local-test")
        monkeypatch.setenv("DATABRICKS_WAREHOUSE_ID", "wh-standin")
        monkeypatch.setenv("DATABRICKS_CONFIG_FILE", "/nonexistent/.databrickscfg")
        yield Platforms(sf, dbx)


def deploy_compiled(estate: SnowflakeEstate | DatabricksEstate, out: Path) -> None:
    """Run the compiled SQL of ``out`` (salts filled in memory) on ``estate`` directly."""
    from accord.compiler.connect.executor import split_statements
    from accord.compiler.model.salts import SaltBox, materialize

    for path in sorted((out / estate.platform).glob("*.sql")):
        text = materialize(path.read_text(), estate.platform, SaltBox())
        for statement in split_statements(text, estate.platform):
            estate.execute(statement)
