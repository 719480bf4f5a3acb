"""`accord schema` prints a JSON Schema that editors can use on every policy file."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.cli import run_cli
from tests.conftest import ROOT

POLICY_FILES = sorted(
    p for d in ("policies", "examples/as-found") for p in (ROOT / d).rglob("*.y*ml")
)


@pytest.fixture(scope="module")
def schema() -> dict:
    proc = run_cli(["schema"])
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(document)
    return document


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_policy_file_validates_against_the_schema(schema, path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_schema_rejects_what_the_loader_rejects(schema) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"masks": {"m": {"strategy": "scramble"}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"datasets": {"d": {"platform": "snowflake", "table": "x", "colums": {}}}}, schema
        )
