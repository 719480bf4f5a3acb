"""ACC104 and the model's own mapping tables (issue 38, cases 7 and 8).

Case 7: SQL written against a mapping table accord compiles (``<governance_schema>.
<dimension>_grants``) knows its columns when the policy model is linted with it: a policy
directory given beside the SQL file or notebook, or a repository holding both. The same SQL
linted alone knows nothing of the table, as before.

Case 8: the hand-written predicate check resolves the unqualified names of a subquery as SQL
does, so a mapping table's own column (``is_account_group_member(group_name)``) is not taken
for an undeclared argument; a name no table in scope has is still refused. ``accord verify``
executes such a predicate and gives each persona the rows its grants name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.lint.sources import source_line
from accord.compiler.model.grants import grants_tables
from accord.compiler.model.validate import load_project
from accord.compiler.verify.admitted import admitted_rows
from accord.compiler.verify.run import verify
from accord.targets import lower_all
from accord.targets.objects import MappingTable
from tests.cli import run_cli
from tests.estates import edited, write_files

#: Both platforms, one dimension: accord compiles GOV.POLICIES.REGION_GRANTS (REGION_CODE,
#: ROLE_NAME) on Snowflake and governance.policies.region_grants (region_code, group_name) on
#: Databricks. Each platform's table is filtered by it, so the model lints clean.
MODEL: dict[str, Any] = {
    "version": 1,
    "platforms": {
        "snowflake": {"governance_schema": "GOV.POLICIES"},
        "databricks": {"governance_schema": "governance.policies"},
    },
    "principals": {
        "analyst": {"snowflake": "ANALYST", "databricks": "analysts"},
        "auditor": {"snowflake": "AUDITOR", "databricks": "auditors"},
    },
    "entitlements": {"region": {"EU": ["analyst"], "US": ["auditor"]}},
    "datasets": {
        "customers": {
            "platform": "snowflake",
            "table": "SALES.CRM.CUSTOMERS",
            "columns": {"REGION": {"type": "VARCHAR"}, "NAME": {"type": "VARCHAR"}},
            "row_filter": {"entitlement": "region", "column": "REGION"},
        },
        "customers_lake": {
            "platform": "databricks",
            "table": "sales.crm.customers",
            "replica_of": "customers",
            "columns": {"region": {"type": "STRING"}, "name": {"type": "STRING"}},
            "row_filter": {"entitlement": "region", "column": "region"},
        },
    },
    "personas": {"analyst": ["analyst"], "auditor": ["auditor"]},
}

SF_GRANTS = "GOV.POLICIES.REGION_GRANTS"
DBX_GRANTS = "governance.policies.region_grants"

# --------------------------------------------------------------------------------------------
# case 7: SQL against the model's mapping table

#: issue 38's shape: a Databricks function used as a row filter (CREATE FUNCTION ... RETURN,
#: https://docs.databricks.com/en/tables/row-and-column-filters.html) whose lookup in the
#: mapping table names no alias: nothing in the statement says region_grants has region_code
DBX_FILTER = """\
CREATE OR REPLACE FUNCTION governance.policies.region_filter(region_code STRING)
RETURN EXISTS (
  SELECT 1 FROM governance.policies.region_grants
  WHERE region_code = region_code AND is_account_group_member(group_name)
);
"""
#: the documented form: the parameter named apart from the mapping column
DBX_RENAMED = DBX_FILTER.replace("(region_code STRING)", "(region_value STRING)").replace(
    "= region_code AND", "= region_value AND"
)
#: a table the model does not compile: its columns are unknown, and nothing qualifies them
DBX_OTHER_TABLE = DBX_FILTER.replace("region_grants", "region_owners")
#: the grants table named without its schema (as after USE SCHEMA): the same table
DBX_SHORT_NAME = DBX_FILTER.replace("governance.policies.region_grants", "region_grants")
#: a Snowflake row access policy over the mapping table: the key column is known, not assumed
SF_POLICY = """\
CREATE OR REPLACE ROW ACCESS POLICY GOV.POLICIES.REGION_FILTER
  AS (REGION_CODE VARCHAR) RETURNS BOOLEAN ->
  EXISTS (SELECT 1 FROM GOV.POLICIES.REGION_GRANTS
          WHERE REGION_CODE = REGION_CODE AND IS_ROLE_IN_SESSION(ROLE_NAME));
"""
#: a grants table with an expiry column (a grant `until` a date): valid_until is its column
DBX_EXPIRY = """\
CREATE OR REPLACE FUNCTION governance.policies.region_filter(region STRING, valid_until DATE)
RETURN EXISTS (
  SELECT 1 FROM governance.policies.region_grants g
  WHERE g.region_code = region AND valid_until >= current_date()
);
"""


def notebook(sql: str) -> str:
    """``sql`` as the ``%sql`` cell of a Databricks Python notebook export."""
    cell = "".join(f"# MAGIC {line}".rstrip() + "\n" for line in sql.splitlines())
    return f"# Databricks notebook source\n\n# COMMAND ----------\n\n# MAGIC %sql\n{cell}"


@dataclass
class ModelCase:
    id: str
    #: files of the repository (the model is written to policies/estate.yaml)
    files: dict[str, str]
    #: the paths given to `accord lint`, relative to the repository
    paths: list[str]
    #: (file, line, text at the finding's column) of every ACC104 finding, in order
    at: list[tuple[str, int, str]] = field(default_factory=list)
    model: dict[str, Any] = field(default_factory=lambda: MODEL)
    #: what the condition does, in every finding's message
    effect: str = "the condition compares the column with itself"


#: the effect of a shadowed name compared with another column, or with no column
READS = "the subquery reads the column where the parameter is meant"

UNTIL = edited(
    MODEL, {"entitlements": {"region": {"EU": [{"principal": "analyst", "until": "2099-12-31"}]}}}
)

MODEL_CASES = [
    ModelCase(
        "sql-file-with-the-policy-directory",
        {"sql/filters.sql": DBX_FILTER},
        ["policies", "sql/filters.sql"],
        [("sql/filters.sql", 4, "region_code = "), ("sql/filters.sql", 4, "region_code AND")],
    ),
    ModelCase(
        "notebook-with-the-policy-directory",
        {"notebooks/filters.py": notebook(DBX_FILTER)},
        ["policies", "notebooks/filters.py"],
        [
            ("notebooks/filters.py", 9, "region_code = "),
            ("notebooks/filters.py", 9, "region_code AND"),
        ],
    ),
    ModelCase(
        "repository",
        {"sql/filters.sql": DBX_FILTER, "notebooks/filters.py": notebook(DBX_FILTER)},
        ["."],
        [
            ("notebooks/filters.py", 9, "region_code = "),
            ("notebooks/filters.py", 9, "region_code AND"),
            ("sql/filters.sql", 4, "region_code = "),
            ("sql/filters.sql", 4, "region_code AND"),
        ],
    ),
    ModelCase(
        "snowflake-policy-in-the-repository",
        {"sql/policies.sql": SF_POLICY},
        ["."],
        [("sql/policies.sql", 4, "REGION_CODE = "), ("sql/policies.sql", 4, "REGION_CODE AND")],
    ),
    ModelCase(
        "table-named-without-its-schema",
        {"sql/filters.sql": DBX_SHORT_NAME},
        ["."],
        [("sql/filters.sql", 4, "region_code = "), ("sql/filters.sql", 4, "region_code AND")],
    ),
    ModelCase(
        "expiry-column-of-dated-grants",
        {"sql/filters.sql": DBX_EXPIRY},
        ["."],
        [("sql/filters.sql", 4, "valid_until >=")],
        UNTIL,
        READS,
    ),
    # near misses
    ModelCase("expiry-column-without-dated-grants", {"sql/filters.sql": DBX_EXPIRY}, ["."]),
    ModelCase("renamed-parameter", {"sql/filters.sql": DBX_RENAMED}, ["."]),
    ModelCase("a-table-the-model-does-not-compile", {"sql/filters.sql": DBX_OTHER_TABLE}, ["."]),
    # without the model, the SQL file alone says nothing of the table's columns
    ModelCase("sql-file-alone", {"sql/filters.sql": DBX_FILTER}, ["sql/filters.sql"]),
    ModelCase(
        "notebook-alone", {"notebooks/filters.py": notebook(DBX_FILTER)}, ["notebooks/filters.py"]
    ),
]


@pytest.mark.parametrize("case", MODEL_CASES, ids=[c.id for c in MODEL_CASES])
def test_sql_against_the_models_mapping_table(tmp_path: Path, case: ModelCase) -> None:
    write_files(tmp_path, {"policies/estate.yaml": case.model, **case.files})
    result = run_cli(["lint", *case.paths, "--format", "json", "--no-cache"], cwd=tmp_path)
    assert result.returncode == (1 if case.at else 0), result.stdout + result.stderr
    records = json.loads(result.stdout)["findings"]
    assert [r["rule"] for r in records if r["rule"] != "ACC104"] == []
    found = [r for r in records if r["rule"] == "ACC104"]
    got = []
    for r in found:
        line = source_line(str(tmp_path / r["file"]), r["line"])
        assert line is not None
        got.append((r["file"], r["line"], line[r["column"] - 1 :]))
    assert [(f, n) for f, n, _ in got] == [(f, n) for f, n, _ in case.at]
    for (_, _, text), (_, _, want) in zip(got, case.at, strict=True):
        assert text.startswith(want), (text, want)
    for r in found:
        assert "the mapping table of entitlement dimension region" in r["message"], r["message"]
        assert case.effect in r["message"], r["message"]
        assert r["severity"] == "error"


def test_the_yaml_predicate_and_the_sql_file_agree(tmp_path: Path) -> None:
    """The same lookup written in the model (a hand-written row filter) and in a SQL file
    linted with the model: ACC104 in both, naming the same table and origin."""
    body = (
        f"EXISTS (SELECT 1 FROM {DBX_GRANTS} WHERE region_code = region_code "
        "AND is_account_group_member(group_name))"
    )

    def hand_written(estate: dict[str, Any]) -> None:
        lake = estate["datasets"]["customers_lake"]
        lake["columns"] = {"region_code": {"type": "STRING"}, "name": {"type": "STRING"}}
        lake["row_filter"] = {
            "expression": {"databricks": body},
            "arguments": {"region_code": "STRING"},
        }

    model = edited(MODEL, hand_written)
    write_files(tmp_path, {"policies/estate.yaml": model, "sql/filters.sql": DBX_FILTER})
    result = run_cli(["lint", ".", "--format", "json", "--no-cache"], cwd=tmp_path)
    found = [r for r in json.loads(result.stdout)["findings"] if r["rule"] == "ACC104"]
    by_file: dict[str, list[str]] = {}
    for r in found:
        by_file.setdefault(r["file"], []).append(r["message"].split(": inside the subquery")[1])
    assert sorted(by_file) == ["policies/estate.yaml", "sql/filters.sql"], result.stdout
    assert by_file["policies/estate.yaml"] == by_file["sql/filters.sql"]
    assert len(by_file["sql/filters.sql"]) == 2


@pytest.mark.parametrize("estate", [MODEL, UNTIL], ids=["standing", "until"])
def test_the_model_tables_are_the_lowered_ones(tmp_path: Path, estate: dict[str, Any]) -> None:
    """What lint and validation know of the mapping tables without lowering is what the
    lowering compiles: one source of their names and columns."""
    write_files(tmp_path, {"estate.yaml": estate})
    project = load_project(tmp_path)
    lowered = {
        (p, o.name, o.dimension, o.key_column, o.principal_column, o.expiry_column)
        for p, catalog in lower_all(project).items()
        for o in catalog.objects
        if isinstance(o, MappingTable)
    }
    known = {
        (t.platform, t.name, t.dimension, t.key_column, t.principal_column, t.expiry_column)
        for t in grants_tables(project.model)
    }
    assert known == lowered and len(known) == 2


# --------------------------------------------------------------------------------------------
# case 8: a mapping table's own column inside the subquery of a hand-written predicate


@dataclass
class PredicateCase:
    id: str
    platform: str
    expression: str
    #: None: valid; else the message validation refuses it with
    refused: str | None = None
    model: dict[str, Any] = field(default_factory=lambda: MODEL)


PREDICATE_CASES = [
    PredicateCase(
        "databricks-principal-column-unqualified",
        "databricks",
        f"EXISTS (SELECT 1 FROM {DBX_GRANTS} g WHERE g.region_code = region "
        "AND is_account_group_member(group_name))",
    ),
    PredicateCase(
        "snowflake-principal-column-unqualified",
        "snowflake",
        f"EXISTS (SELECT 1 FROM {SF_GRANTS} g WHERE g.REGION_CODE = REGION "
        "AND IS_ROLE_IN_SESSION(ROLE_NAME))",
    ),
    PredicateCase(
        "databricks-every-column-unqualified",
        "databricks",
        f"region IN (SELECT region_code FROM {DBX_GRANTS} WHERE is_account_group_member(group_name))",
    ),
    PredicateCase(
        "expiry-column-of-dated-grants",
        "databricks",
        f"EXISTS (SELECT 1 FROM {DBX_GRANTS} g WHERE g.region_code = region "
        "AND is_account_group_member(group_name) AND (valid_until IS NULL "
        "OR valid_until >= current_date()))",
        model=UNTIL,
    ),
    PredicateCase(
        # a table accord does not know the columns of may have the name: SQL resolves it there
        "a-table-of-unknown-columns",
        "databricks",
        "region IN (SELECT code FROM ref.geo.open_regions WHERE is_open)",
    ),
    PredicateCase(
        # a derived table of every column of a table accord does not know: it may have it
        "a-derived-table-of-unknown-columns",
        "snowflake",
        "EXISTS (SELECT 1 FROM (SELECT * FROM REF.GEO.REGIONS) d WHERE CODE = REGION)",
    ),
    # near misses: names no table in scope has are the outer row's, and must be arguments
    PredicateCase(
        "a-name-the-mapping-table-lacks",
        "databricks",
        f"EXISTS (SELECT 1 FROM {DBX_GRANTS} g WHERE g.region_code = country "
        "AND is_account_group_member(group_name))",
        "reads column country, which is not in 'arguments' (region)",
    ),
    PredicateCase(
        "expiry-column-without-dated-grants",
        "databricks",
        f"EXISTS (SELECT 1 FROM {DBX_GRANTS} g WHERE g.region_code = region "
        "AND is_account_group_member(group_name) AND valid_until >= current_date())",
        "reads column valid_until, which is not in 'arguments'",
    ),
    PredicateCase(
        "a-derived-table-lacks-it",
        "snowflake",
        f"EXISTS (SELECT 1 FROM (SELECT REGION_CODE FROM {SF_GRANTS} WHERE "
        "IS_ROLE_IN_SESSION(ROLE_NAME)) d WHERE d.REGION_CODE = COUNTRY)",
        "reads column COUNTRY, which is not in 'arguments' (REGION)",
    ),
    PredicateCase(
        "outside-the-subquery",
        "databricks",
        f"region = country AND EXISTS (SELECT 1 FROM {DBX_GRANTS} g "
        "WHERE is_account_group_member(group_name))",
        "reads column country",
    ),
]


def predicate_model(case: PredicateCase) -> dict[str, Any]:
    """``case.model`` with the dataset of ``case.platform`` filtered by the hand-written
    predicate (its one argument the dataset's region column)."""
    name = "customers" if case.platform == "snowflake" else "customers_lake"
    column = "REGION" if case.platform == "snowflake" else "region"
    model = edited(case.model)
    model["datasets"][name]["row_filter"] = {
        "expression": {case.platform: case.expression},
        "arguments": {column: "VARCHAR" if case.platform == "snowflake" else "STRING"},
    }
    return model


@pytest.mark.parametrize("case", PREDICATE_CASES, ids=[c.id for c in PREDICATE_CASES])
def test_a_mapping_column_inside_the_subquery(tmp_path: Path, case: PredicateCase) -> None:
    write_files(tmp_path, {"policies/estate.yaml": predicate_model(case)})
    for command in (["validate", "policies"], ["lint", "policies", "--no-cache"]):
        result = run_cli(command, cwd=tmp_path)
        if case.refused is None:
            assert result.returncode == 0, result.stdout + result.stderr
            assert "not in 'arguments'" not in result.stdout + result.stderr
        else:
            assert result.returncode == 2, result.stdout + result.stderr
            assert "policies/estate.yaml:" in result.stderr
            assert case.refused in result.stderr, result.stderr
            assert "Traceback" not in result.stderr


@pytest.mark.parametrize("platform", ["databricks", "snowflake"])
def test_verify_gives_the_rows_the_grants_name(tmp_path: Path, platform: str) -> None:
    """The accepted predicate executes on DuckDB: each persona sees the rows of its region,
    as the entitlement filter of the replica does (verify compares the two), and verify
    passes. The same predicate with OR for AND admits every row: verify reports it."""
    case = next(c for c in PREDICATE_CASES if c.id == f"{platform}-principal-column-unqualified")
    name = "customers" if platform == "snowflake" else "customers_lake"
    for expression, right in (
        (case.expression, True),
        (case.expression.replace(" AND ", " OR "), False),
    ):
        root = tmp_path / ("right" if right else "wrong")
        model = predicate_model(PredicateCase(case.id, platform, expression))
        write_files(root, {"policies/estate.yaml": model})
        project = load_project(root / "policies")
        report = verify(project)
        admitted = admitted_rows(project, [name])
        if right:
            assert report.mismatches == [], report.to_text()
            assert admitted[("analyst", name)] == ("region", frozenset({"EU"}), False)
            assert admitted[("auditor", name)] == ("region", frozenset({"US"}), False)
            result = run_cli(["verify", "policies"], cwd=root)
            assert result.returncode == 0 and "0 mismatches" in result.stdout, result.stdout
        else:
            assert report.mismatches, report.to_text()
            assert admitted[("analyst", name)][2] is True  # every row


def test_two_models_linted_together_know_both_tables(tmp_path: Path) -> None:
    """Two policy directories that compile the same mapping table, one with dated grants: the
    table has the columns of both (an expiry column the SQL reads is the table's)."""
    write_files(tmp_path, {"a/estate.yaml": MODEL, "b/estate.yaml": UNTIL})
    write_files(tmp_path, {"sql/filters.sql": DBX_EXPIRY})
    for order in (["a", "b"], ["b", "a"]):
        result = run_cli(
            ["lint", *order, "sql/filters.sql", "--format", "json", "--no-cache"], cwd=tmp_path
        )
        found = [r for r in json.loads(result.stdout)["findings"] if r["rule"] == "ACC104"]
        assert [(r["file"], r["line"]) for r in found] == [("sql/filters.sql", 4)], result.stdout
