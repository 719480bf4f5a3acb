"""Snowflake introspection reads in bulk (issue 20, Build item 5): the round trips of a read grow
with the policies and schemas, not with the governed tables, and a read with ``--jobs 8`` says
exactly what a read with ``--jobs 1`` says.

Two estates from the benchmark's generator (``bench/lint_bench.py``), one three times the other,
with the same masks and row filters, are deployed into the Snowflake stand-in; the stand-in
counts the requests it answers (sandbox/standins/http.py). No timing is asserted: the wall time at
a latency per request is bench/live_bench.py's (``make bench-live``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.objects import MaskAttachment, MaskPolicy, RowFilterPolicy
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import Platforms, deploy_compiled, seed_model

sys.path.insert(0, str(ROOT / "bench"))
from lint_bench import estate, write_estate

#: seconds a test: estates of 30 and 90 governed tables deployed and read through the stand-ins
pytestmark = pytest.mark.slow


def deployed(platforms: Platforms, tmp_path: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = write_estate(
        tmp_path / f"estate_{n}", estate(n, principals=20, programmes=12, defects=False)
    )
    for path in base.rglob("*.yaml"):
        for word in path.read_text(encoding="utf-8").split():
            if word.startswith("env:"):
                monkeypatch.setenv(word[4:].strip("'\""), f"test-{word[4:].lower()}")
    out = tmp_path / f"compiled_{n}"
    code, _, err = run_cli(["compile", str(base), "--out", str(out)])
    assert code == 0, err
    sf = platforms.snowflake
    seed_model(sf, load_project(base).model)
    deploy_compiled(sf, out)
    for name in [n for n in os.environ if n.endswith("_SALT_SNOWFLAKE")]:
        monkeypatch.delenv(name)  # no canary queries: only the read is counted
    return base


def introspect(platforms: Platforms, base: Path, jobs: int) -> tuple[int, str]:
    before = platforms.snowflake.round_trips
    code, out, err = run_cli(
        [
            "introspect",
            "--platform",
            "snowflake",
            str(base),
            "--format",
            "json",
            "--jobs",
            str(jobs),
        ]
    )
    assert code == 0, err
    return platforms.snowflake.round_trips - before, out


def test_round_trips_do_not_grow_with_the_governed_tables(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = deployed(platforms, tmp_path, 30, monkeypatch)
    few, out_small = introspect(platforms, small, jobs=4)
    large = deployed(platforms, tmp_path, 90, monkeypatch)
    many, out_large = introspect(platforms, large, jobs=4)
    catalogs = [lower_all(load_project(d))["snowflake"] for d in (small, large)]
    tables = [len({o.table for o in c.of(MaskAttachment)}) for c in catalogs]
    policies = [len(c.of(MaskPolicy)) + len(c.of(RowFilterPolicy)) for c in catalogs]
    assert tables[1] >= 3 * tables[0] > 0 and policies[0] == policies[1]
    assert few == many  # the same policies and schemas: the same round trips
    assert few < 3 * policies[0]  # a DESCRIBE and a POLICY_REFERENCES a policy, a few SHOWs
    # and everything was read: the large estate's live objects are its lowered catalog's
    import json

    live = json.loads(out_large)
    assert live["coverage"]["complete"] is True
    assert len(live["objects"]) == len(catalogs[1].objects)
    assert json.loads(out_small)["coverage"]["complete"] is True


def test_a_concurrent_read_says_what_a_sequential_one_says(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = deployed(platforms, tmp_path, 30, monkeypatch)
    _, sequential = introspect(platforms, base, jobs=1)
    _, concurrent = introspect(platforms, base, jobs=8)
    assert sequential == concurrent


def deployed_databricks(
    platforms: Platforms, tmp_path: Path, n: int, monkeypatch: pytest.MonkeyPatch
) -> Path:
    base = write_estate(
        tmp_path / f"dbx_estate_{n}", estate(n, principals=20, programmes=12, defects=False)
    )
    for path in base.rglob("*.yaml"):
        for word in path.read_text(encoding="utf-8").split():
            if word.startswith("env:"):
                monkeypatch.setenv(word[4:].strip("'\""), f"test-{word[4:].lower()}")
    out = tmp_path / f"dbx_compiled_{n}"
    code, _, err = run_cli(["compile", str(base), "--out", str(out)])
    assert code == 0, err
    dbx = platforms.databricks
    seed_model(dbx, load_project(base).model)
    deploy_compiled(dbx, out)
    for name in [n for n in os.environ if n.endswith("_SALT_DATABRICKS")]:
        monkeypatch.delenv(name)  # no canary queries: only the read is counted
    return base


def introspect_databricks(platforms: Platforms, base: Path, jobs: int = 4) -> tuple[int, str]:
    before = platforms.databricks.round_trips
    argv = ["introspect", "--platform", "databricks", str(base), "--format", "json"]
    code, out, err = run_cli([*argv, "--jobs", str(jobs)])
    assert code == 0, err
    return platforms.databricks.round_trips - before, out


def test_databricks_round_trips_do_not_grow_with_the_governed_tables(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ABAC policies are found per catalog through information_schema.abac_policy_definitions
    (Public Preview; docs.databricks.com sql/language-manual/information-schema/
    abac_policy_definitions: one row per policy attached to a securable of the catalog), and
    ``policies.list_policies`` is called on the catalogs, the schemas and only the tables that
    carry a policy: three times the tables, the same round trips, everything read."""
    import json

    small = deployed_databricks(platforms, tmp_path, 30, monkeypatch)
    few, _ = introspect_databricks(platforms, small)
    large = deployed_databricks(platforms, tmp_path, 90, monkeypatch)
    many, out_large = introspect_databricks(platforms, large)
    catalogs = [lower_all(load_project(d))["databricks"] for d in (small, large)]
    tables = [len({o.table for o in c.of(MaskAttachment)}) for c in catalogs]
    assert tables[1] >= 3 * tables[0] > 0
    assert few == many
    live = json.loads(out_large)
    assert live["coverage"]["complete"] is True
    assert live["coverage"]["notes"] == [  # nothing read another way (ownership: not asked)
        "ownership was not judged: the model names no platforms.databricks.owner"
    ]
    assert len(live["objects"]) == len(catalogs[1].objects)


def test_databricks_without_the_policy_view_lists_each_table_and_says_so(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where abac_policy_definitions cannot be read (a Public Preview not enabled: the view
    is not found), each governed table's policies are listed one by one: the same objects,
    more round trips, and the coverage says which way the read went (a note, nothing
    unseen)."""
    import json

    base = deployed_databricks(platforms, tmp_path, 30, monkeypatch)
    bulk, out_bulk = introspect_databricks(platforms, base)
    platforms.databricks.abac_definitions = False
    each, out_each = introspect_databricks(platforms, base)
    tables = len(lower_all(load_project(base))["databricks"].of(MaskAttachment))
    assert tables > 0 and each > bulk
    a, b = json.loads(out_bulk), json.loads(out_each)
    assert a["objects"] == b["objects"] and b["coverage"]["complete"] is True
    owners = "ownership was not judged: the model names no platforms.databricks.owner"
    notes = [n for n in b["coverage"].pop("notes") if n != owners]
    assert a["coverage"].pop("notes") == [owners]
    assert a["coverage"] == b["coverage"]
    assert notes and all("abac_policy_definitions could not be read" in n for n in notes)
    assert all("TABLE_OR_VIEW_NOT_FOUND" in n and "listed one by one" in n for n in notes)
