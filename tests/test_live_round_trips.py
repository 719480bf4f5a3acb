"""Round trips with the least-privilege readers (issue 41, item 6): drift's read grows with the
schemas and databases it is given, not with the governed tables, for the readers docs/live.md
grants (tests/live_helpers.py) and in Snowflake's ``style: tag``.

On the code before this change these fail: ``style: tag`` read each governed table's tags with
one ``TAG_REFERENCES_ALL_COLUMNS`` statement (30 more tables, 30 more round trips), and the
Databricks reader that is no admin asked ``schemas.get``, ``catalogs.get`` and
``grants.get_effective`` for every schema (about three round trips a schema). Two estates of
the benchmark's generator (``bench/lint_bench.py``), one three times the other, are deployed
into the stand-ins, which count the requests they answer; no timing is asserted (the numbers
at 4,000 tables are bench/live_bench.py's, in bench/RESULTS.md).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.objects import TagAssignment
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import (
    SNOWFLAKE_READER,
    Platforms,
    databricks_reader,
    deploy_compiled,
    seed_model,
    snowflake_reader,
)

sys.path.insert(0, str(ROOT / "bench"))
from lint_bench import estate, write_estate

#: seconds a test: estates of 30 and 90 datasets deployed and read through the stand-ins
pytestmark = pytest.mark.slow


def deployed(
    platforms: Platforms,
    tmp_path: Path,
    n: int,
    platform: str,
    monkeypatch: pytest.MonkeyPatch,
    style: str = "",
) -> tuple[Path, Any]:
    """The generated estate of ``n`` datasets deployed on ``platform``'s stand-in, Snowflake in
    ``style``; every Databricks table in a schema of its own (the read the issue measured grew
    per schema). Returns the estate's directory and its lowered catalog for ``platform``."""
    files = estate(n, principals=20, programmes=12, defects=False)
    if style:
        files["platforms.yaml"]["platforms"]["snowflake"]["style"] = style
    for name, spec in files.items():
        for ds in (spec.get("datasets") or {}).values() if name.startswith("datasets") else ():
            if ds["platform"] == "databricks" and ds["table"].startswith("lake_"):
                table = ds["table"].rsplit(".", 1)[1]
                ds["table"] = f"lake_0.s_{table}.{table}"
    base = write_estate(tmp_path / f"{platform}_{style}_{n}", files)
    for path in base.rglob("*.yaml"):
        for word in path.read_text(encoding="utf-8").split():
            if word.startswith("env:"):
                monkeypatch.setenv(word[4:].strip("'\""), f"test-{word[4:].lower()}")
    out = tmp_path / f"compiled_{platform}_{style}_{n}"
    code, _, err = run_cli(["compile", str(base), "--out", str(out)])
    assert code == 0, err
    e = getattr(platforms, platform)
    project = load_project(base)
    seed_model(e, project.model)
    deploy_compiled(e, out)
    for var in [v for v in os.environ if v.endswith(f"_SALT_{platform.upper()}")]:
        monkeypatch.delenv(var)  # no canary queries: only the read is counted
    return base, lower_all(project)[platform]


def introspect(platforms: Platforms, platform: str, base: Path) -> tuple[int, dict[str, Any]]:
    e = getattr(platforms, platform)
    before = e.round_trips
    argv = ["introspect", "--platform", platform, str(base), "--format", "json", "--jobs", "4"]
    code, out, err = run_cli(argv)
    assert code == 0, err
    return e.round_trips - before, json.loads(out)


def _tables(catalog: Any) -> set[str]:
    return {getattr(o, "table", "") for o in catalog} - {""}


def test_snowflake_style_tag_reads_tags_per_database_not_per_table(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips, tables = [], []
    for n in (30, 90):
        base, expected = deployed(platforms, tmp_path, n, "snowflake", monkeypatch, "tag")
        snowflake_reader(platforms.snowflake, expected)
        monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
        few, doc = introspect(platforms, "snowflake", base)
        assert doc["coverage"]["complete"] is True, doc["coverage"]
        tags = [o for o in doc["objects"] if o["kind"] == "TagAssignment"]
        assert len(tags) == len(expected.of(TagAssignment)) > 0  # every table's tags were read
        trips.append(few)
        tables.append(len(_tables(expected)))
    assert tables[1] >= 3 * tables[0] > 0
    assert trips[0] == trips[1], trips  # 40 more tables' tags: not one more round trip


def test_databricks_least_privilege_reader_reads_schemas_per_catalog(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips, schemas = [], []
    for n in (30, 90):
        base, expected = deployed(platforms, tmp_path, n, "databricks", monkeypatch)
        governed = {t.rsplit(".", 1)[0] for t in _tables(expected)}
        databricks_reader(platforms.databricks, governed, expected.governance_schema)
        few, doc = introspect(platforms, "databricks", base)
        assert doc["coverage"]["complete"] is True, doc["coverage"]
        trips.append(few)
        schemas.append(len(governed))
    assert schemas[1] >= 2 * schemas[0] > 0
    assert trips[0] == trips[1], trips  # more schemas of one catalog: the same round trips
