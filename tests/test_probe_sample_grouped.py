"""`accord probe sample` groups the history on the platform (issue 41, item 8).

A window of 30,000 queries of three kinds (a dashboard's statement, an agent's, an unmapped
analyst's) is generated in each stand-in's history views; `probe sample`, reading as a
least-privilege principal (docs/probes.md's grants: IMPORTED PRIVILEGES on the SNOWFLAKE
database; USE CATALOG system, USE SCHEMA and SELECT on system.query and system.access), asks
one statement per platform and is sent one row per kind of read, never a row per query, and
still counts every query: the window is read whole, past the 20,000 rows the row-by-row
reading stopped at (on the code before this change these tests fail: 30,000 rows come back,
the newest 20,000 are read and the window is not whole). Past the bound (kinds of read, here
made small) the report says, in text and JSON, which kinds were not read, what the window
holds and what was read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.probe_sample import history as sampled
from accord.sandbox.standins.history import history_of
from tests.live_helpers import Platforms
from tests.test_probe_sample import RESULTS, estate, sample, sampler_reads_the_system_tables

QUERIES = 30_000
CNS = f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204'"
IMM = f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE = 'IMM-310'"


def _objects(table: str, *columns: str) -> str:
    return json.dumps(
        [
            {
                "objectDomain": "Table",
                "objectId": 1,
                "objectName": table,
                "columns": [{"columnId": n, "columnName": c} for n, c in enumerate(columns)],
            }
        ]
    )


SNOWFLAKE_SHAPES: list[dict[str, Any]] = [
    {  # the assay dashboard (its query tag), as the bench chemist
        "USER_NAME": "CHEMIST", "ROLE_NAME": "BENCH_CHEMIST", "QUERY_TAG": "assay-dashboard",
        "QUERY_TEXT": IMM, "BASE_OBJECTS_ACCESSED": _objects(RESULTS, "SUBJECT_ID"),
        "CLIENT_APPLICATION_ID": "PythonConnector 3.12.0",
        "CLIENT_ENVIRONMENT": json.dumps({"APPLICATION": "assay-dash"}),
    },
    {  # the warehouse agent, as the pharmacologist (a secondary role tells her apart)
        "USER_NAME": "PHARMA", "ROLE_NAME": "BENCH_CHEMIST",
        "SECONDARY_ROLE_STATS": json.dumps({"roles": "CLINICAL_UNBLINDED", "count": 1}),
        "QUERY_TAG": "", "QUERY_TEXT": CNS,
        "BASE_OBJECTS_ACCESSED": _objects(RESULTS, "SUBJECT_ID"),
        "CLIENT_APPLICATION_ID": "PythonConnector 3.12.0",
        "CLIENT_ENVIRONMENT": json.dumps({"APPLICATION": "warehouse-agent"}),
    },
    {  # a role in no persona
        "USER_NAME": "ANALYST", "ROLE_NAME": "ANALYST", "QUERY_TAG": "", "QUERY_TEXT": CNS,
        "BASE_OBJECTS_ACCESSED": _objects(RESULTS, "SUBJECT_ID"),
        "CLIENT_APPLICATION_ID": "PythonConnector 3.12.0",
        "CLIENT_ENVIRONMENT": json.dumps({"APPLICATION": "warehouse-agent"}),
    },
]  # fmt: skip


def _check(doc: dict[str, Any], answered: list[int]) -> None:
    # one history statement, answered with one row per kind of read, never a row per query
    assert answered == [3], answered
    (source,) = doc["coverage"]
    assert source["complete"] and not source["unseen"], source
    read = source["read"]
    assert (read["queries"], read["kinds of read"]) == (QUERIES, 3), read
    assert (read["queries in the window"], read["kinds of read in the window"]) == (QUERIES, 3)
    c = doc["probe_coverage"]
    assert (c["reads"], c["unmappable_reads"]) == (QUERIES, QUERIES // 3), c
    assert sorted(f["reads"] for f in doc["facts"]) == [QUERIES // 3] * 2
    assert all(f["queries"] == f["reads"] for f in doc["facts"])


def _check_bounded(root: Path, platform: str, answered: list[int]) -> None:
    """40 queries of 40 kinds (every text its own) and a bound of 5: the 5 kinds seen last are
    read, and the report says what was not, in JSON and text."""
    before = len(answered)
    code, text, err = sample(root, platform, "--format", "json")
    assert code == 0, err
    assert answered[before:] == [6]  # the bound, and one more row that shows it was passed
    (source,) = json.loads(text)["coverage"]
    assert source["complete"] is False
    read = source["read"]
    assert (read["queries"], read["kinds of read"]) == (5, 5), read
    assert (read["queries in the window"], read["kinds of read in the window"]) == (40, 40)
    (unseen,) = source["unseen"]
    assert unseen["what"].startswith(f"the {platform} kinds of read last seen at or before ")
    why = (
        "the window holds 40 queries in 40 kinds of read (grouped on the platform), more than "
        "5, and accord probe sample reads the newest 5 (5 of the queries; a shorter --since "
        "reads a window whole)"
    )
    assert unseen["why"] == why
    code, text, err = sample(root, platform)
    assert code == 0, err
    assert (
        f"  {platform}: 5 queries read (5 kinds of read; the window holds 40 queries in 40 "
        "kinds)" in text
    )
    assert f"not seen: the {platform} kinds of read last seen at or before " in text
    assert why in text and f"; {platform} INCOMPLETE" in text


def test_snowflake_history_is_grouped_on_the_platform(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = estate(tmp_path)
    sf = platforms.snowflake
    sf.grant_to_role("SAMPLER", "IMPORTED PRIVILEGES", "DATABASE", "SNOWFLAKE")
    monkeypatch.setenv("SNOWFLAKE_ROLE", "SAMPLER")  # the history's reader, and nothing else
    history = history_of(sf)
    history.generate(SNOWFLAKE_SHAPES, QUERIES)
    code, text, err = sample(root, "snowflake", "--format", "json")
    assert code == 0, err
    doc = json.loads(text)
    _check(doc, history.views.answered)
    facts = {
        (f["persona"], f["surface"], f["column"], json.dumps(f["where"])) for f in doc["facts"]
    }
    assert facts == {
        ("bench_chemist", "assay_dashboard", "SUBJECT_ID", '{"programme": "IMM-310"}'),
        ("clinical_pharmacologist", "warehouse_agent", "SUBJECT_ID", '{"programme": "CNS-204"}'),
    }
    (unmappable,) = doc["unmappable"]
    assert "roles ANALYST" in unmappable["reason"] and unmappable["reads"] == QUERIES // 3

    # past the bound: the kinds seen last are read, and the report says what was not
    monkeypatch.setattr(sampled, "MAX_HISTORY_ROWS", 5)
    history.generate(SNOWFLAKE_SHAPES, 40, distinct=True)  # every text its own: 40 kinds
    _check_bounded(root, "snowflake", history.views.answered)


DATABRICKS_SHAPES: list[dict[str, Any]] = [
    {  # the notebook (its query tag), as the bench chemist
        "executed_by": "chem@example.com", "client_application": "Databricks SQL Notebook",
        "query_tags": json.dumps({"tool": "notebook"}),
        "statement_text": "SELECT subject_id FROM omics.variants.calls "
                          "WHERE programme_code = 'IMM-310'",
        "source_table_full_name": "omics.variants.calls", "columns": ["subject_id"],
    },
    {  # the lakehouse agent, as the pharmacologist
        "executed_by": "pharma@example.com", "client_application": "lakehouse-agent",
        "statement_text": "SELECT subject_id FROM discovery_lake.assays.results "
                          "WHERE programme_code = 'CNS-204'",
        "source_table_full_name": "discovery_lake.assays.results",
        "columns": ["subject_id", "programme_code"],
    },
    {  # a user in no persona's groups
        "executed_by": "temp@example.com", "client_application": "lakehouse-agent",
        "statement_text": "SELECT subject_id FROM omics.variants.calls",
        "source_table_full_name": "omics.variants.calls", "columns": ["subject_id"],
    },
]  # fmt: skip


def test_databricks_history_is_grouped_on_the_platform(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    root = estate(tmp_path)
    dbx = platforms.databricks
    dbx.tokens = {os.environ["DATABRICKS_TOKEN"]: "accord-sampler"}  # no admin
    sampler_reads_the_system_tables(dbx, "accord-sampler")
    history = history_of(dbx)
    history.users.update(
        {
            "chem@example.com": ["bench-chemists"],
            "pharma@example.com": ["bench-chemists", "clinical-unblinded"],
            "temp@example.com": ["contractors"],
        }
    )
    history.generate(DATABRICKS_SHAPES, QUERIES)
    code, text, err = sample(root, "databricks", "--format", "json")
    assert code == 0, err
    doc = json.loads(text)
    _check(doc, history.views.answered)
    facts = {(f["persona"], f["surface"], f["dataset"], f["column"]) for f in doc["facts"]}
    assert facts == {
        ("bench_chemist", "lake_notebook", "variant_calls", "subject_id"),
        ("clinical_pharmacologist", "lakehouse_agent", "assay_results_lake", "subject_id"),
    }
    (unmappable,) = doc["unmappable"]
    assert "temp@example.com (groups contractors)" in unmappable["reason"]

    monkeypatch.setattr(sampled, "MAX_HISTORY_ROWS", 5)
    history.generate(DATABRICKS_SHAPES, 40, distinct=True)
    _check_bounded(root, "databricks", history.views.answered)
