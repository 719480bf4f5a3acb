"""Tests for compiler.sqlscan: statement splitting, header recognition, body parsing,
positions, suppressions and dialect detection for Snowflake and Databricks policy DDL."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from accord.compiler.sqlscan import (
    KINDS,
    Param,
    ScanError,
    Statement,
    Suppression,
    detect_dialect,
    node_position,
    scan,
)

FIXTURES = Path(__file__).parent / "fixtures" / "sqlscan"

# Fields checked by every kind case; a field a case does not name must keep its default.
_FIELDS = [f.name for f in dataclasses.fields(Statement) if not f.name.startswith("_")]
_DEFAULTS = {
    f.name: f.default
    for f in dataclasses.fields(Statement)
    if not f.name.startswith("_") and f.default is not dataclasses.MISSING
}


def _only(text: str, dialect: str, file: str = "f.sql") -> Statement:
    result = scan(text, file, dialect)
    assert result.errors == ()
    assert result.dialect == dialect
    assert len(result.statements) == 1, result.statements
    return result.statements[0]


def _check_fields(stmt: Statement, expected: dict[str, Any]) -> None:
    expected = dict(expected)
    body_sql = expected.pop("body_sql", None)
    abac = expected.pop("abac", None)
    expression_type = expected.pop("expression_type", None)
    actual = {name: getattr(stmt, name) for name in _FIELDS}
    wanted = {**_DEFAULTS, **expected}
    for name in ("body", "expression", "abac"):
        actual.pop(name)
        wanted.pop(name)
    assert actual == wanted
    if body_sql is None:
        assert stmt.body is None
    else:
        assert stmt.body is not None
        assert stmt.body.sql(stmt.dialect) == body_sql
    if expression_type is None:
        assert stmt.expression is None
    else:
        assert isinstance(stmt.expression, expression_type)
    if abac is None:
        assert stmt.abac is None
    else:
        got = dataclasses.asdict(stmt.abac)
        when = got.pop("when")
        assert (when.sql(stmt.dialect) if when is not None else None) == abac.pop("when", None)
        matches = got.pop("match_columns")
        assert [(c.sql(stmt.dialect), a) for c, a in matches] == abac.pop("match_columns", [])
        defaults = {"kind": None, "function": None, "to": (), "except_": ()}
        defaults |= {"on_column": None, "using": (), "comment": None}
        assert got == defaults | abac


# --------------------------------------------------------------------------- one case per kind

SNOWFLAKE_CASES = [
    pytest.param(
        "-- governance\n"
        "CREATE OR REPLACE ROW ACCESS POLICY IF NOT EXISTS gov.rap\n"
        "  AS (programme VARCHAR, region varchar(2)) RETURNS BOOLEAN ->\n"
        "    IS_ROLE_IN_SESSION('STEWARD') OR programme = 'P1'\n"
        "  COMMENT = 'rows; by programme'",
        {
            "kind": "row_access_policy",
            "line": 2,
            "column": 1,
            "name": "gov.rap",
            "policy_kind": "ROW ACCESS",
            "params": (Param("programme", "VARCHAR"), Param("region", "VARCHAR(2)")),
            "returns": "BOOLEAN",
            "body_sql": "IS_ROLE_IN_SESSION('STEWARD') OR programme = 'P1'",
            "body_text": "IS_ROLE_IN_SESSION('STEWARD') OR programme = 'P1'",
            "body_line": 4,
            "body_column": 5,
            "or_replace": True,
            "if_not_exists": True,
            "comment": "rows; by programme",
        },
        id="row_access_policy",
    ),
    pytest.param(
        'SELECT 1; CREATE MASKING POLICY "Gov Db".pol."My Policy" AS (val string, n NUMBER(10,2))\n'
        "RETURNS STRING -> CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE '***' END\n"
        "EXEMPT_OTHER_POLICIES = TRUE COMMENT = 'm'",
        {
            "kind": "masking_policy",
            "line": 1,
            "column": 11,
            "name": "Gov Db.pol.My Policy",
            "policy_kind": "MASKING",
            "params": (Param("val", "STRING"), Param("n", "NUMBER(10, 2)")),
            "returns": "STRING",
            "body_sql": "CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE '***' END",
            "body_text": "CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE '***' END",
            "body_line": 2,
            "body_column": 19,
            "comment": "m",
        },
        id="masking_policy",
    ),
    pytest.param(
        "ALTER MASKING POLICY IF EXISTS gov.mask SET BODY ->\n  SHA2(val, 256)",
        {
            "kind": "alter_policy_body",
            "name": "gov.mask",
            "policy_kind": "MASKING",
            "body_sql": "SHA2(val, 256)",
            "body_text": "SHA2(val, 256)",
            "body_line": 2,
            "body_column": 3,
        },
        id="alter_policy_body_masking",
    ),
    pytest.param(
        "ALTER ROW ACCESS POLICY gov.rap SET BODY -> TRUE",
        {
            "kind": "alter_policy_body",
            "name": "gov.rap",
            "policy_kind": "ROW ACCESS",
            "body_sql": "TRUE",
            "body_text": "TRUE",
            "body_line": 1,
            "body_column": 45,
        },
        id="alter_policy_body_row_access",
    ),
    pytest.param(
        "CREATE OR REPLACE SECURE FUNCTION gov.salt(x VARCHAR DEFAULT 'a')\n"
        "  RETURNS VARCHAR NOT NULL COMMENT = 'c'\n"
        "  AS $$\n    'a;b' || x $$",
        {
            "kind": "function",
            "name": "gov.salt",
            "params": (Param("x", "VARCHAR"),),
            "returns": "VARCHAR",
            "body_sql": "'a;b' || x",
            "body_text": "'a;b' || x",
            "body_line": 4,
            "body_column": 5,
            "or_replace": True,
            "secure": True,
            "comment": "c",
        },
        id="function_sql_dollar",
    ),
    pytest.param(
        "CREATE FUNCTION pi_udf() RETURNS FLOAT AS '3.14::FLOAT'",
        {
            "kind": "function",
            "name": "pi_udf",
            "returns": "FLOAT",
            "body_sql": "CAST(3.14 AS DOUBLE)",
            "body_text": "3.14::FLOAT",
            "body_line": 1,
            "body_column": 44,
        },
        id="function_sql_quoted",
    ),
    pytest.param(
        "CREATE FUNCTION py(a INT) RETURNS INT LANGUAGE PYTHON RUNTIME_VERSION = '3.11'\n"
        "  HANDLER = 'h' AS $$\ndef h(a):\n    return a; # ;\n$$",
        {
            "kind": "function",
            "name": "py",
            "params": (Param("a", "INT"),),
            "returns": "INT",
            "language": "PYTHON",
            "body_text": "\ndef h(a):\n    return a; # ;\n",
            "body_line": 2,
            "body_column": 22,
        },
        id="function_python",
    ),
    pytest.param(
        'ALTER TABLE db.sch.t ADD ROW ACCESS POLICY gov.rap ON (programme, "Region")',
        {
            "kind": "add_row_access",
            "table": "db.sch.t",
            "policy": "gov.rap",
            "columns": ("programme", "Region"),
        },
        id="add_row_access",
    ),
    pytest.param(
        "ALTER TABLE t DROP ROW ACCESS POLICY old_rap, ADD ROW ACCESS POLICY new_rap ON (a)",
        {
            "kind": "add_row_access",
            "table": "t",
            "policy": "new_rap",
            "dropped_policy": "old_rap",
            "columns": ("a",),
        },
        id="add_row_access_swap",
    ),
    pytest.param(
        "ALTER TABLE IF EXISTS t DROP ROW ACCESS POLICY gov.rap",
        {"kind": "drop_row_access", "table": "t", "policy": "gov.rap"},
        id="drop_row_access",
    ),
    pytest.param(
        "ALTER TABLE t MODIFY COLUMN email SET MASKING POLICY gov.mask USING (email, consent) FORCE",
        {
            "kind": "set_masking_policy",
            "table": "t",
            "column_name": "email",
            "policy": "gov.mask",
            "columns": ("email", "consent"),
            "force": True,
        },
        id="set_masking_policy",
    ),
    pytest.param(
        "ALTER TABLE t ALTER COLUMN email SET MASKING POLICY gov.mask",
        {"kind": "set_masking_policy", "table": "t", "column_name": "email", "policy": "gov.mask"},
        id="set_masking_policy_alter",
    ),
    pytest.param(
        "ALTER TABLE t MODIFY COLUMN email UNSET MASKING POLICY",
        {"kind": "unset_masking_policy", "table": "t", "column_name": "email"},
        id="unset_masking_policy",
    ),
    pytest.param(
        "CREATE OR REPLACE TAG IF NOT EXISTS gov.accord_mask ALLOWED_VALUES 'a', 'b' COMMENT = 'x'",
        {
            "kind": "snowflake_tag",
            "name": "gov.accord_mask",
            "or_replace": True,
            "if_not_exists": True,
            "comment": "x",
        },
        id="snowflake_tag",
    ),
    pytest.param(
        "ALTER TAG gov.accord_mask SET MASKING POLICY m1, MASKING POLICY m2 FORCE",
        {
            "kind": "alter_tag_set_masking",
            "name": "gov.accord_mask",
            "policy": "m1",
            "policies": ("m1", "m2"),
            "force": True,
        },
        id="alter_tag_set_masking",
    ),
    pytest.param(
        "ALTER TAG gov.accord_mask UNSET MASKING POLICY m1",
        {
            "kind": "alter_tag_unset_masking",
            "name": "gov.accord_mask",
            "policy": "m1",
            "policies": ("m1",),
        },
        id="alter_tag_unset_masking",
    ),
    pytest.param(
        "ALTER TABLE t MODIFY COLUMN c SET TAG gov.accord_mask = 'subject', gov.pii = 'yes'",
        {
            "kind": "set_column_tag",
            "table": "t",
            "column_name": "c",
            "tags": (("gov.accord_mask", "subject"), ("gov.pii", "yes")),
        },
        id="set_column_tag",
    ),
    pytest.param(
        "ALTER TABLE t SET TAG gov.domain = 'clinical'",
        {"kind": "set_table_tag", "table": "t", "tags": (("gov.domain", "clinical"),)},
        id="set_table_tag",
    ),
    pytest.param(
        "DROP MASKING POLICY IF EXISTS gov.mask",
        {"kind": "drop_masking_policy", "name": "gov.mask", "policy_kind": "MASKING"},
        id="drop_masking_policy",
    ),
    pytest.param(
        "DROP ROW ACCESS POLICY gov.rap",
        {"kind": "drop_row_access_policy", "name": "gov.rap", "policy_kind": "ROW ACCESS"},
        id="drop_row_access_policy",
    ),
    # projection, aggregation and join policies, in the forms docs.snowflake.com documents
    # (sql-reference/sql/create-projection-policy, create-aggregation-policy, create-join-policy,
    # alter-*-policy, alter-table)
    pytest.param(
        "CREATE OR REPLACE PROJECTION POLICY gov.pol.proj AS () RETURNS PROJECTION_CONSTRAINT ->\n"
        "  CASE WHEN IS_ROLE_IN_SESSION('ANALYST') THEN PROJECTION_CONSTRAINT(ALLOW => true)\n"
        "       ELSE PROJECTION_CONSTRAINT(ALLOW => false, ENFORCEMENT => 'NULLIFY') END\n"
        "  COMMENT = 'p'",
        {
            "kind": "projection_policy",
            "name": "gov.pol.proj",
            "policy_kind": "PROJECTION",
            "returns": "PROJECTION_CONSTRAINT",
            "body_sql": "CASE WHEN IS_ROLE_IN_SESSION('ANALYST') THEN PROJECTION_CONSTRAINT(ALLOW => TRUE)"
            " ELSE PROJECTION_CONSTRAINT(ALLOW => FALSE, ENFORCEMENT => 'NULLIFY') END",
            "body_text": "CASE WHEN IS_ROLE_IN_SESSION('ANALYST') THEN PROJECTION_CONSTRAINT(ALLOW => true)\n"
            "       ELSE PROJECTION_CONSTRAINT(ALLOW => false, ENFORCEMENT => 'NULLIFY') END",
            "body_line": 2,
            "body_column": 3,
            "or_replace": True,
            "comment": "p",
        },
        id="projection_policy",
    ),
    pytest.param(
        "CREATE AGGREGATION POLICY IF NOT EXISTS gov.pol.agg AS () RETURNS AGGREGATION_CONSTRAINT ->"
        " CASE WHEN IS_ROLE_IN_SESSION('ADMIN') THEN NO_AGGREGATION_CONSTRAINT()"
        " ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5) END",
        {
            "kind": "aggregation_policy",
            "name": "gov.pol.agg",
            "policy_kind": "AGGREGATION",
            "returns": "AGGREGATION_CONSTRAINT",
            "body_sql": "CASE WHEN IS_ROLE_IN_SESSION('ADMIN') THEN NO_AGGREGATION_CONSTRAINT()"
            " ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5) END",
            "body_text": "CASE WHEN IS_ROLE_IN_SESSION('ADMIN') THEN NO_AGGREGATION_CONSTRAINT()"
            " ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5) END",
            "body_line": 1,
            "body_column": 93,
            "if_not_exists": True,
        },
        id="aggregation_policy",
    ),
    pytest.param(
        "CREATE JOIN POLICY jp1 AS () RETURNS JOIN_CONSTRAINT -> JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)",
        {
            "kind": "join_policy",
            "name": "jp1",
            "policy_kind": "JOIN",
            "returns": "JOIN_CONSTRAINT",
            "body_sql": "JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)",
            "body_text": "JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)",
            "body_line": 1,
            "body_column": 57,
        },
        id="join_policy",
    ),
    pytest.param(
        "CREATE STORAGE LIFECYCLE POLICY gov.pol.expire AS (d DATE) RETURNS BOOLEAN ->\n"
        "  d < DATEADD(day, -30, CURRENT_DATE())",
        {
            "kind": "policy",
            "name": "gov.pol.expire",
            "policy_kind": "STORAGE LIFECYCLE",
            "params": (Param("d", "DATE"),),
            "returns": "BOOLEAN",
            "body_sql": "d < DATEADD(DAY, -30, CURRENT_DATE)",
            "body_text": "d < DATEADD(day, -30, CURRENT_DATE())",
            "body_line": 2,
            "body_column": 3,
        },
        id="policy_of_a_kind_accord_does_not_model",
    ),
    pytest.param(
        "ALTER JOIN POLICY jp1 SET BODY -> JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)",
        {
            "kind": "alter_policy_body",
            "name": "jp1",
            "policy_kind": "JOIN",
            "body_sql": "JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)",
            "body_text": "JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)",
            "body_line": 1,
            "body_column": 35,
        },
        id="alter_policy_body_join",
    ),
    pytest.param(
        "DROP PROJECTION POLICY IF EXISTS gov.pol.proj",
        {"kind": "drop_projection_policy", "name": "gov.pol.proj", "policy_kind": "PROJECTION"},
        id="drop_projection_policy",
    ),
    pytest.param(
        "DROP AGGREGATION POLICY gov.pol.agg",
        {"kind": "drop_aggregation_policy", "name": "gov.pol.agg", "policy_kind": "AGGREGATION"},
        id="drop_aggregation_policy",
    ),
    pytest.param(
        "DROP JOIN POLICY jp1",
        {"kind": "drop_join_policy", "name": "jp1", "policy_kind": "JOIN"},
        id="drop_join_policy",
    ),
    pytest.param(
        "ALTER TABLE customers MODIFY COLUMN email SET PROJECTION POLICY gov.pol.proj FORCE",
        {
            "kind": "set_projection_policy",
            "table": "customers",
            "column_name": "email",
            "policy": "gov.pol.proj",
            "force": True,
        },
        id="set_projection_policy",
    ),
    pytest.param(
        "ALTER TABLE customers ALTER COLUMN email UNSET PROJECTION POLICY",
        {"kind": "unset_projection_policy", "table": "customers", "column_name": "email"},
        id="unset_projection_policy",
    ),
    pytest.param(
        "ALTER TABLE t1 SET AGGREGATION POLICY gov.pol.agg ENTITY KEY (subject_id) FORCE",
        {
            "kind": "set_aggregation_policy",
            "table": "t1",
            "policy": "gov.pol.agg",
            "columns": ("subject_id",),
            "force": True,
        },
        id="set_aggregation_policy",
    ),
    pytest.param(
        "ALTER TABLE t1 UNSET AGGREGATION POLICY",
        {"kind": "unset_aggregation_policy", "table": "t1"},
        id="unset_aggregation_policy",
    ),
    pytest.param(
        "ALTER TABLE join_table_2 SET JOIN POLICY jp1 ALLOWED JOIN KEYS (col1)",
        {
            "kind": "set_join_policy",
            "table": "join_table_2",
            "policy": "jp1",
            "columns": ("col1",),
        },
        id="set_join_policy",
    ),
    pytest.param(
        "ALTER TABLE join_table_2 UNSET JOIN POLICY",
        {"kind": "unset_join_policy", "table": "join_table_2"},
        id="unset_join_policy",
    ),
    pytest.param(
        "CREATE OR REPLACE FUNCTION my_udf(x VARCHAR) RETURNS VARCHAR LANGUAGE PYTHON"
        " RUNTIME_VERSION = '3.10' IMPORTS = ('@my_stage/my_module.py') HANDLER = 'my_module.run'",
        {
            "kind": "function",
            "name": "my_udf",
            "params": (Param("x", "VARCHAR"),),
            "returns": "VARCHAR",
            "language": "PYTHON",
            "or_replace": True,
        },
        id="function_python_staged",
    ),
    pytest.param(
        "CREATE TABLE t (a INT, b VARCHAR)",
        {"kind": "other", "expression_type": exp.Create},
        id="other_create_table",
    ),
    pytest.param(
        "GRANT APPLY ON MASKING POLICY gov.mask TO ROLE steward",
        {"kind": "other"},
        id="other_grant_unparsed",
    ),
    pytest.param(
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.a = s.a",
        {"kind": "other", "expression_type": exp.Merge},
        id="other_merge",
    ),
    pytest.param("BEGIN", {"kind": "other", "expression_type": exp.Transaction}, id="other_begin"),
    pytest.param(
        "ALTER MASKING POLICY gov.mask RENAME TO gov.mask2", {"kind": "other"}, id="other_rename"
    ),
]

DATABRICKS_CASES = [
    pytest.param(
        "CREATE OR REPLACE FUNCTION gov.programme_filter(programme STRING)\n"
        "RETURN EXISTS (\n"
        "  SELECT 1 FROM gov.grants g WHERE g.code = programme\n"
        "    AND is_account_group_member(g.grp))",
        {
            "kind": "function",
            "name": "gov.programme_filter",
            "params": (Param("programme", "STRING"),),
            "body_sql": "EXISTS(SELECT 1 FROM gov.grants AS g WHERE g.code = programme "
            "AND IS_ACCOUNT_GROUP_MEMBER(g.grp))",
            "body_text": "EXISTS (\n  SELECT 1 FROM gov.grants g WHERE g.code = programme\n"
            "    AND is_account_group_member(g.grp))",
            "body_line": 2,
            "body_column": 8,
            "or_replace": True,
        },
        id="function_return",
    ),
    pytest.param(
        "CREATE FUNCTION `my-cat`.gov.m(x ARRAY<STRUCT<a: INT, b: STRING>> DEFAULT NULL,"
        " y decimal(10,2) COMMENT \"c\") RETURNS STRING DETERMINISTIC COMMENT 'mask'"
        " RETURN sha2(cast(x AS STRING), 256)",
        {
            "kind": "function",
            "name": "my-cat.gov.m",
            "params": (
                Param("x", "ARRAY<STRUCT<A: INT, B: STRING>>"),
                Param("y", "DECIMAL(10, 2)"),
            ),
            "returns": "STRING",
            "comment": "mask",
            "body_sql": "SHA2(CAST(x AS STRING), 256)",
            "body_text": "sha2(cast(x AS STRING), 256)",
            "body_line": 1,
            "body_column": 161,
        },
        id="function_types",
    ),
    pytest.param(
        "CREATE TEMPORARY FUNCTION py(s STRING) RETURNS STRING LANGUAGE PYTHON AS $$ return s + ';' $$",
        {
            "kind": "function",
            "name": "py",
            "params": (Param("s", "STRING"),),
            "returns": "STRING",
            "language": "PYTHON",
            "body_text": " return s + ';' ",
            "body_line": 1,
            "body_column": 76,
        },
        id="function_python",
    ),
    pytest.param(
        "ALTER TABLE main.`a-b`.t SET ROW FILTER gov.f ON (programme_code, `odd col`)",
        {
            "kind": "set_row_filter",
            "table": "main.a-b.t",
            "policy": "gov.f",
            "columns": ("programme_code", "odd col"),
        },
        id="set_row_filter",
    ),
    pytest.param(
        "ALTER TABLE t SET ROW FILTER gov.f ON ()",
        {"kind": "set_row_filter", "table": "t", "policy": "gov.f"},
        id="set_row_filter_no_columns",
    ),
    pytest.param(
        "ALTER TABLE t DROP ROW FILTER",
        {"kind": "drop_row_filter", "table": "t"},
        id="drop_row_filter",
    ),
    pytest.param(
        "ALTER TABLE t ALTER COLUMN c SET MASK gov.m USING COLUMNS (other_col, 'literal')",
        {
            "kind": "set_mask",
            "table": "t",
            "column_name": "c",
            "policy": "gov.m",
            "columns": ("other_col", "'literal'"),
        },
        id="set_mask",
    ),
    pytest.param(
        "ALTER TABLE t ALTER COLUMN c DROP MASK",
        {"kind": "drop_mask", "table": "t", "column_name": "c"},
        id="drop_mask",
    ),
    pytest.param(
        "ALTER TABLE t ALTER COLUMN c SET TAGS ('accord_mask' = 'subject', 'pii')",
        {
            "kind": "set_tags",
            "table": "t",
            "column_name": "c",
            "tags": (("accord_mask", "subject"), ("pii", "")),
        },
        id="set_tags_column",
    ),
    pytest.param(
        "ALTER TABLE t SET TAGS ('governed' = 'yes')",
        {"kind": "set_tags", "table": "t", "tags": (("governed", "yes"),)},
        id="set_tags_table",
    ),
    pytest.param(
        "CREATE OR REPLACE POLICY rows_by_programme ON TABLE cat.sch.t COMMENT 'c'\n"
        "  ROW FILTER gov.f TO `account users`, analysts EXCEPT `admins` FOR TABLES\n"
        "  WHEN has_tag('governed') MATCH COLUMNS has_tag('programme') AS prog\n"
        "  USING COLUMNS (prog, 'x')",
        {
            "kind": "abac_policy",
            "name": "rows_by_programme",
            "table": "cat.sch.t",
            "policy": "gov.f",
            "columns": ("prog", "'x'"),
            "or_replace": True,
            "comment": "c",
            "abac": {
                "securable_type": "TABLE",
                "securable": "cat.sch.t",
                "kind": "ROW FILTER",
                "function": "gov.f",
                "to": ("account users", "analysts"),
                "except_": ("admins",),
                "when": "HAS_TAG('governed')",
                "match_columns": [("HAS_TAG('programme')", "prog")],
                "using": ("prog", "'x'"),
                "comment": "c",
            },
        },
        id="abac_row_filter",
    ),
    pytest.param(
        "CREATE POLICY mask_subjects ON SCHEMA research.core COLUMN MASK gov.m TO `account users`"
        " FOR TABLES MATCH COLUMNS has_tag_value('mask', 'subject') subj,"
        " has_tag('pii') AND NOT has_tag('public') AS other ON COLUMN subj",
        {
            "kind": "abac_policy",
            "name": "mask_subjects",
            "policy": "gov.m",
            "column_name": "subj",
            "abac": {
                "securable_type": "SCHEMA",
                "securable": "research.core",
                "kind": "COLUMN MASK",
                "function": "gov.m",
                "to": ("account users",),
                "match_columns": [
                    ("HAS_TAG_VALUE('mask', 'subject')", "subj"),
                    ("HAS_TAG('pii') AND NOT HAS_TAG('public')", "other"),
                ],
                "on_column": "subj",
            },
        },
        id="abac_column_mask",
    ),
    pytest.param(
        "DROP POLICY IF EXISTS rows_by_programme ON CATALOG cat",
        {
            "kind": "drop_abac_policy",
            "name": "rows_by_programme",
            "abac": {"securable_type": "CATALOG", "securable": "cat"},
        },
        id="drop_abac_policy",
    ),
    # a metastore-level policy (Beta, Runtime 19) names no metastore: "the policy targets the
    # metastore you are operating on" (data-governance/unity-catalog/abac/metastore-policies)
    pytest.param(
        "CREATE POLICY org_ssn ON METASTORE COLUMN MASK gov.m TO `account users` FOR TABLES"
        " MATCH COLUMNS has_tag_value('pii', 'ssn') AS ssn ON COLUMN ssn",
        {
            "kind": "abac_policy",
            "name": "org_ssn",
            "policy": "gov.m",
            "column_name": "ssn",
            "abac": {
                "securable_type": "METASTORE",
                "securable": "",
                "kind": "COLUMN MASK",
                "function": "gov.m",
                "to": ("account users",),
                "match_columns": [("HAS_TAG_VALUE('pii', 'ssn')", "ssn")],
                "on_column": "ssn",
            },
        },
        id="abac_metastore",
    ),
    # a pipeline's datasets, in the forms the Lakeflow / DLT SQL reference documents
    # (docs.databricks.com dlt-sql-ref-create-streaming-table, -create-materialized-view)
    pytest.param(
        "CREATE OR REFRESH STREAMING TABLE st (\n"
        "  s STRING, CONSTRAINT ok EXPECT (s IS NOT NULL) ON VIOLATION DROP ROW\n"
        ") COMMENT 'c' AS SELECT CASE WHEN is_member('hr') THEN salary END AS s FROM STREAM(t)",
        {
            "kind": "pipeline_view",
            "name": "st",
            "dataset_kind": "STREAMING TABLE",
            "body_sql": "SELECT CASE WHEN IS_MEMBER('hr') THEN salary END AS s FROM STREAM (t)",
            "body_text": "SELECT CASE WHEN is_member('hr') THEN salary END AS s FROM STREAM(t)",
            "body_line": 3,
            "body_column": 18,
        },
        id="pipeline_view_streaming_table",
    ),
    pytest.param(
        "CREATE OR REPLACE TEMPORARY LIVE VIEW v AS SELECT * FROM LIVE.src",
        {
            "kind": "pipeline_view",
            "name": "v",
            "dataset_kind": "LIVE VIEW",
            "body_sql": "SELECT * FROM LIVE.src",
            "body_text": "SELECT * FROM LIVE.src",
            "body_line": 1,
            "body_column": 44,
        },
        id="pipeline_view_live_view",
    ),
    pytest.param(
        "CREATE OR REFRESH STREAMING TABLE fed_by_flows",
        {"kind": "pipeline_view", "name": "fed_by_flows", "dataset_kind": "STREAMING TABLE"},
        id="pipeline_view_without_a_query",
    ),
    pytest.param(
        "INSERT INTO t VALUES (1, 'a;b')",
        {"kind": "other", "expression_type": exp.Insert},
        id="other_insert",
    ),
    pytest.param(
        "USE CATALOG research", {"kind": "other", "expression_type": exp.Use}, id="other_use"
    ),
    pytest.param(
        "ALTER TABLE t ADD COLUMN z INT",
        {"kind": "other", "expression_type": exp.Alter},
        id="other_alter_table",
    ),
]


def _with_text(text: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The statement text is the source from the first token to the last (no ';')."""
    start = {"line": 1, "column": 1}
    start.update({k: expected[k] for k in ("line", "column") if k in expected})
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: start["line"] - 1]) + start["column"] - 1
    return {**expected, **start, "text": text[offset:].rstrip(";")}


@pytest.mark.parametrize(("text", "expected"), SNOWFLAKE_CASES)
def test_snowflake_statement_kinds(text: str, expected: dict[str, Any]) -> None:
    result = scan(text, "f.sql", "snowflake")
    assert result.errors == ()
    stmt = result.statements[-1]
    _check_fields(stmt, {**_with_text(text, expected), "dialect": "snowflake", "file": "f.sql"})


@pytest.mark.parametrize(("text", "expected"), DATABRICKS_CASES)
def test_databricks_statement_kinds(text: str, expected: dict[str, Any]) -> None:
    stmt = _only(text, "databricks")
    _check_fields(stmt, {**_with_text(text, expected), "dialect": "databricks", "file": "f.sql"})


def test_every_kind_has_a_case() -> None:
    covered = set()
    for case in SNOWFLAKE_CASES + DATABRICKS_CASES:
        _text, expected = case.values
        covered.add(expected["kind"])
    assert covered == KINDS


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        (dialect, case.values[0])
        for dialect, cases in (("snowflake", SNOWFLAKE_CASES), ("databricks", DATABRICKS_CASES))
        for case in cases
    ]
    + [
        (dialect, (FIXTURES / f"governance.{dialect}.sql").read_text())
        for dialect in ("snowflake", "databricks")
    ],
)
def test_bodies_round_trip(dialect: str, text: str) -> None:
    result = scan(text, "f.sql", dialect)
    assert result.errors == ()
    for stmt in result.statements:
        trees = [stmt.body, stmt.expression]
        if stmt.abac is not None:
            trees += [stmt.abac.when, *(cond for cond, _ in stmt.abac.match_columns)]
        for tree in trees:
            if tree is None:
                continue
            again = sqlglot.parse_one(tree.sql(dialect), read=dialect)
            assert again == tree
            assert again.sql(dialect) == tree.sql(dialect)


# --------------------------------------------------------------------------- multi-action ALTER


def test_snowflake_multi_column_modify_gives_one_statement_per_column() -> None:
    text = (
        "ALTER TABLE t MODIFY (COLUMN a SET MASKING POLICY p1,\n"
        "  b SET MASKING POLICY p2 USING (b, a), COLUMN c SET TAG x = 'y', z = 'w')"
    )
    result = scan(text, "f.sql", "snowflake")
    assert result.errors == ()
    got = [(s.kind, s.column_name, s.policy, s.columns, s.tags) for s in result.statements]
    assert got == [
        ("set_masking_policy", "a", "p1", (), ()),
        ("set_masking_policy", "b", "p2", ("b", "a"), ()),
        ("set_column_tag", "c", None, (), (("x", "y"), ("z", "w"))),
    ]
    assert {(s.line, s.column, s.text) for s in result.statements} == {(1, 1, text)}


# --------------------------------------------------------------------------- positions


def test_node_position_on_multiline_snowflake_body() -> None:
    text = (
        "SELECT 1;\n"
        "CREATE MASKING POLICY p AS (val VARCHAR) RETURNS VARCHAR ->\n"
        "  CASE\n"
        "    WHEN CURRENT_ROLE() IN ('ANALYST') THEN val\n"
        "    ELSE SHA2(val || 'pepper', 256)\n"
        "  END;\n"
    )
    stmt = scan(text, "f.sql", "snowflake").statements[1]
    assert (stmt.line, stmt.column, stmt.body_line, stmt.body_column) == (2, 1, 3, 3)
    assert node_position(stmt, stmt.body.find(exp.CurrentRole)) == (4, 10)
    assert node_position(stmt, stmt.body.find(exp.SHA2)) == (5, 10)
    # A node without its own position: its leftmost positioned descendant.
    assert node_position(stmt, stmt.body.find(exp.DPipe)) == (5, 15)
    assert node_position(stmt, stmt.body.find(exp.In)) == (4, 10)
    # Not a node of this statement: the body's start.
    assert node_position(stmt, exp.column("x")) == (3, 3)


def test_node_position_on_databricks_body_and_abac_conditions() -> None:
    text = (
        "CREATE FUNCTION f(c STRING)\n"
        "RETURN CASE WHEN is_account_group_member('admins')\n"
        "  THEN c ELSE sha2(c, 256) END;\n"
        "CREATE POLICY p ON TABLE t ROW FILTER f TO g FOR TABLES\n"
        "  WHEN has_tag('a')\n"
        "  MATCH COLUMNS has_tag('b') AS x;\n"
    )
    function, policy = scan(text, "f.sql", "databricks").statements
    assert node_position(function, function.body.find(exp.Anonymous)) == (2, 18)
    assert node_position(function, function.body.find(exp.SHA2)) == (3, 15)
    assert node_position(policy, policy.abac.when) == (5, 8)
    assert node_position(policy, policy.abac.match_columns[0][0]) == (6, 17)


def test_node_position_inside_string_function_body() -> None:
    text = "CREATE FUNCTION f() RETURNS VARCHAR AS $$\n  CURRENT_ROLE() || 'x'\n$$"
    stmt = _only(text, "snowflake")
    assert (stmt.body_line, stmt.body_column) == (2, 3)
    assert node_position(stmt, stmt.body.find(exp.CurrentRole)) == (2, 3)
    assert node_position(stmt, stmt.body.find(exp.Literal)) == (2, 21)


def test_node_position_in_other_statement() -> None:
    stmt = _only("SELECT a,\n  CURRENT_USER() FROM t", "databricks")
    assert node_position(stmt, stmt.expression.find(exp.CurrentUser)) == (2, 3)


# --------------------------------------------------------------------------- splitting


@pytest.mark.parametrize(
    ("dialect", "text", "expected"),
    [
        pytest.param(
            "snowflake",
            "SELECT 'a;b'; SELECT \"x;y\" FROM t; -- c;d\nSELECT 3 /* e;f */",
            [(1, 1, "SELECT 'a;b'"), (1, 15, 'SELECT "x;y" FROM t'), (2, 1, "SELECT 3")],
            id="snowflake-strings-identifiers-comments",
        ),
        pytest.param(
            "snowflake",
            "CREATE FUNCTION f() RETURNS VARCHAR AS $$ 'x;y' $$;SELECT 'it''s;';\n"
            "CREATE FUNCTION g() RETURNS VARCHAR AS 'select '';'''; // a; comment\nSELECT 1",
            [
                (1, 1, "CREATE FUNCTION f() RETURNS VARCHAR AS $$ 'x;y' $$"),
                (1, 52, "SELECT 'it''s;'"),
                (2, 1, "CREATE FUNCTION g() RETURNS VARCHAR AS 'select '';'''"),
                (3, 1, "SELECT 1"),
            ],
            id="snowflake-dollar-bodies",
        ),
        pytest.param(
            "databricks",
            "SELECT 'a;b', \"c;d\", `e;f`;;\n"
            "CREATE FUNCTION p(x STRING) RETURNS STRING LANGUAGE PYTHON AS $$\n"
            "  return x + ';'\n$$ ; SELECT 2",
            [
                (1, 1, "SELECT 'a;b', \"c;d\", `e;f`"),
                (
                    2,
                    1,
                    "CREATE FUNCTION p(x STRING) RETURNS STRING LANGUAGE PYTHON AS $$\n"
                    "  return x + ';'\n$$",
                ),
                (4, 6, "SELECT 2"),
            ],
            id="databricks-strings-dollar-bodies",
        ),
    ],
)
def test_statement_splitting(dialect: str, text: str, expected: list[tuple[int, int, str]]) -> None:
    result = scan(text, "f.sql", dialect)
    assert result.errors == ()
    assert [(s.line, s.column, s.text) for s in result.statements] == expected


def test_byte_order_mark_keeps_positions() -> None:
    stmt = _only("\ufeffALTER TABLE t DROP ROW FILTER", "databricks")
    assert (stmt.kind, stmt.line, stmt.column) == ("drop_row_filter", 1, 2)


# --------------------------------------------------------------------------- suppressions


def test_suppressions() -> None:
    text = (
        "SELECT 0; -- accord: ignore ACC900 trailing comment of the previous statement\n"
        "-- an ordinary comment\n"
        "-- accord: ignore ACC101 steward role is primary here\n"
        "/* accord: ignore ACC201, acc202 -- legacy salt */\n"
        "CREATE MASKING POLICY p AS (v STRING) RETURNS STRING -> v;\n"
        "-- accord: ignore ACC301\n"
        "ALTER TABLE t MODIFY COLUMN v SET MASKING POLICY p;\n"
        "-- accord: ignore ACC401 separated by a blank line\n"
        "\n"
        "SELECT 1;\n"
        "    -- accord: IGNORE ACC501: indented\n"
        "    SELECT 2;\n"
    )
    result = scan(text, "f.sql", "snowflake")
    assert result.errors == ()
    by_line = {s.line: s.suppressions for s in result.statements}
    assert by_line == {
        1: (),
        5: (
            Suppression("ACC101", "steward role is primary here", 3, 1),
            Suppression("ACC201", "legacy salt", 4, 1),
            Suppression("ACC202", "legacy salt", 4, 1),
        ),
        7: (Suppression("ACC301", "", 6, 1),),
        10: (),
        12: (Suppression("ACC501", "indented", 11, 5),),
    }


def test_suppression_without_a_rule_is_an_error() -> None:
    result = scan("SELECT 1;\n  -- accord: ignore because\nSELECT 2", "f.sql", "snowflake")
    assert result.errors == (
        ScanError(
            "f.sql",
            2,
            3,
            "suppression comment names no rule: write `-- accord: ignore ACC101 <reason>`",
            "suppression",
        ),
    )
    assert [s.suppressions for s in result.statements] == [(), ()]


# --------------------------------------------------------------------------- dialect detection


@pytest.mark.parametrize(
    ("filename", "text", "expected"),
    [
        pytest.param(
            "a/b.snowflake.sql",
            "ALTER TABLE t SET ROW FILTER f ON (a)",
            "snowflake",
            id="suffix-wins",
        ),
        pytest.param("B.DATABRICKS.SQL", "SELECT 1", "databricks", id="suffix-case"),
        pytest.param(
            "x.sql",
            "SELECT 1;\nCREATE ROW ACCESS POLICY p AS (a INT) RETURNS BOOLEAN -> TRUE",
            "snowflake",
            id="row-access-policy",
        ),
        pytest.param(
            "x.sql",
            "ALTER TABLE t MODIFY COLUMN c SET MASKING POLICY m",
            "snowflake",
            id="masking-policy",
        ),
        pytest.param(
            "x.sql", "ALTER TABLE `t` SET ROW FILTER f ON (a)", "databricks", id="set-row-filter"
        ),
        pytest.param(
            "x.sql", "ALTER TABLE t ALTER COLUMN c SET MASK m", "databricks", id="set-mask"
        ),
        pytest.param(
            "x.sql",
            "CREATE OR REPLACE FUNCTION f(a INT) RETURNS INT RETURN a + 1",
            "databricks",
            id="function-return",
        ),
        pytest.param(
            "x.sql",
            "CREATE POLICY p ON SCHEMA s ROW FILTER f TO g FOR TABLES",
            "databricks",
            id="create-policy",
        ),
        pytest.param(
            "x.sql",
            "SELECT 'ROW ACCESS POLICY'; -- MASKING POLICY\nSELECT 1",
            None,
            id="words-in-strings-and-comments-do-not-count",
        ),
        pytest.param(
            "x.sql",
            "CREATE FUNCTION f() RETURNS INT AS 'RETURN 1'",
            "snowflake",
            id="snowflake-function-by-its-string-body",
        ),
        pytest.param(
            "x.sql",
            "CREATE SECURE FUNCTION s() RETURNS VARCHAR AS $$ 'x' $$",
            "snowflake",
            id="secure-function-is-snowflake",
        ),
        pytest.param(
            "x.sql",
            "CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE PYTHON AS $$ return x $$",
            None,
            id="python-function-is-undetectable",
        ),
        pytest.param("x.sql", "", None, id="empty"),
    ],
)
def test_detect_dialect(filename: str, text: str, expected: str | None) -> None:
    assert detect_dialect(text, filename) == expected


def test_scan_detects_the_dialect() -> None:
    for dialect in ("snowflake", "databricks"):
        path = FIXTURES / f"governance.{dialect}.sql"
        text = path.read_text()
        # Renamed without the suffix, the statements still tell.
        assert scan(text, "renamed.sql").dialect == dialect
        assert scan(text, str(path)).dialect == dialect


def test_undetectable_file_is_a_located_error() -> None:
    # A file with no policy statement needs no dialect (tables, grants, queries)...
    path = FIXTURES / "undetectable.sql"
    result = scan(path.read_text(), str(path))
    assert (result.dialect, result.statements, result.errors) == (None, (), ())
    # ... a function in either dialect does: its body decides access or masks a value.
    text = path.read_text() + (
        "CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE PYTHON AS $$ return x $$;\n"
    )
    result = scan(text, str(path))
    assert result.dialect is None
    assert result.statements == ()
    assert [(e.line, e.column, e.kind) for e in result.errors] == [(4, 1, "dialect")]
    assert "--dialect" in result.errors[0].message
    assert scan(text, str(path), "snowflake").errors == ()
    assert scan("-- only a comment\n", "x.sql") == scan("", "x.sql")
    assert scan("", "x.sql").errors == ()


def test_unknown_dialect_argument_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        scan("SELECT 1", "x.sql", "postgres")


# --------------------------------------------------------------------------- fixture files


def test_snowflake_fixture() -> None:
    path = FIXTURES / "governance.snowflake.sql"
    result = scan(path.read_text(), str(path))
    assert result.errors == ()
    assert [(s.kind, s.line) for s in result.statements] == [
        ("other", 2),
        ("snowflake_tag", 4),
        ("row_access_policy", 8),
        ("masking_policy", 18),
        ("function", 26),
        ("add_row_access", 30),
        ("set_masking_policy", 31),
        ("set_column_tag", 32),
        ("alter_tag_set_masking", 33),
        ("alter_policy_body", 34),
    ]
    rap, mask, salt = result.statements[2:5]
    assert rap.suppressions == (
        Suppression("ACC101", "the steward role is always primary in this account", 7, 1),
    )
    assert rap.comment == "rows by programme; a ; in a comment string is fine"
    assert (rap.body_line, rap.body_column) == (10, 5)
    assert isinstance(rap.body, exp.Or)
    assert mask.body.find(exp.SHA2) is not None
    assert node_position(mask, mask.body.find(exp.SHA2)) == (22, 12)
    assert (salt.secure, salt.body_text, salt.body_line, salt.body_column) == (
        True,
        "'not;a;real;salt'",
        28,
        9,
    )


def test_databricks_fixture() -> None:
    path = FIXTURES / "governance.databricks.sql"
    result = scan(path.read_text(), str(path))
    assert result.errors == ()
    assert [(s.kind, s.line) for s in result.statements] == [
        ("other", 2),
        ("function", 4),
        ("function", 10),
        ("set_row_filter", 18),
        ("set_mask", 19),
        ("set_tags", 20),
        ("abac_policy", 22),
    ]
    mask = result.statements[2]
    assert mask.comment == "pseudonymise; keep joins"
    assert mask.params == (Param("subject_id", "STRING"), Param("programme", "STRING"))
    assert node_position(mask, mask.body.find(exp.SHA2)) == (15, 8)
    policy = result.statements[-1]
    assert policy.abac.to == ("account users",)
    assert policy.abac.except_ == ("clinicians",)
    assert policy.column_name == "subject"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("dialect", "text", "line", "column", "message"),
    [
        pytest.param(
            "snowflake",
            "SELECT 1;\nCREATE MASKING POLICY p AS (v STRING) RETURNS STRING ->\n"
            "  CASE WHEN x THEN v\n  ELSE SHA2(v, 256)) END;\nSELECT 2;",
            4,
            19,
            "cannot parse the masking policy body: Expected END after CASE",
            id="broken-body",
        ),
        pytest.param(
            "snowflake",
            "CREATE ROW ACCESS POLICY p AS (a INT) RETURNS BOOLEAN a = 1;\nSELECT 2;",
            1,
            55,
            "expected '->' before the policy body, found 'a'",
            id="missing-arrow",
        ),
        pytest.param(
            "snowflake",
            "CREATE ROW ACCESS POLICY p AS (a INT) RETURNS BOOLEAN -> COMMENT = 'x';\nSELECT 2;",
            1,
            55,
            "the row access policy body is missing after '->'",
            id="missing-body",
        ),
        pytest.param(
            "snowflake",
            "CREATE MASKING POLICY p (v STRING) RETURNS STRING -> v;\nSELECT 2;",
            1,
            25,
            "expected AS, found '('",
            id="missing-as",
        ),
        pytest.param(
            "snowflake",
            "ALTER TABLE t ADD ROW ACCESS POLICY p;\nSELECT 2;",
            1,
            37,
            "expected ON, but the statement ends here",
            id="missing-on",
        ),
        pytest.param(
            "snowflake",
            "CREATE FUNCTION f(a INT) RETURNS INT AS 'a +\n  ';\nSELECT 2;",
            1,
            44,
            # said in SQL terms, never sqlglot's "Required keyword ... <class ...>"
            "cannot parse the function body: the + operator has no right-hand operand",
            id="broken-string-body",
        ),
        pytest.param(
            "databricks",
            "CREATE FUNCTION f(a INT) RETURNS INT\n  RETURN a + ) 2;\nSELECT 2;",
            2,
            14,
            "cannot parse the function body: the + operator has no right-hand operand",
            id="broken-return-body",
        ),
        pytest.param(
            "databricks",
            "CREATE FUNCTION f(a INT) RETURNS INT LANGUAGE SQL;\nSELECT 2;",
            1,
            47,
            "expected RETURN <expression> or AS '<body>' in CREATE FUNCTION, "
            "but the statement ends here",
            id="function-without-body",
        ),
        pytest.param(
            "databricks",
            "CREATE POLICY p ON VOLUME v ROW FILTER f TO a FOR TABLES;\nSELECT 2;",
            1,
            20,
            "expected CATALOG, SCHEMA, TABLE or METASTORE after ON, found 'VOLUME'",
            id="abac-securable",
        ),
        pytest.param(
            "databricks",
            "CREATE POLICY p ON TABLE t ROW FILTER f TO a;\nSELECT 2;",
            1,
            44,
            "expected FOR TABLES, but the statement ends here",
            id="abac-for-tables",
        ),
        pytest.param(
            "databricks",
            "CREATE POLICY p ON TABLE t ROW FILTER f TO a FOR TABLES WHEN has_tag(;\nSELECT 2;",
            1,
            69,
            "cannot parse the WHEN condition: Expecting )",
            id="abac-when",
        ),
        pytest.param(
            "databricks",
            "ALTER TABLE t ALTER COLUMN c SET MASK m USING (a);\nSELECT 2;",
            1,
            41,
            "unexpected 'USING' after the ALTER TABLE action",
            id="set-mask-using-without-columns",
        ),
    ],
)
def test_errors_are_located(dialect: str, text: str, line: int, column: int, message: str) -> None:
    result = scan(text, "f.sql", dialect)
    assert result.errors == (ScanError("f.sql", line, column, message),)
    assert str(result.errors[0]) == f"f.sql:{line}:{column}: {message}"
    # The other statements still scan; the broken one is left out.
    assert [s.text for s in result.statements][-1:] == ["SELECT 2"]
    assert all(s.kind == "other" for s in result.statements)


def test_unterminated_string_keeps_the_statements_before_it() -> None:
    result = scan("SELECT 1;\nSELECT 'abc;\nSELECT 2;", "f.sql", "snowflake")
    assert result.errors == (
        # located at the first statement not read, naming the quote that is not closed
        ScanError(
            "f.sql", 2, 1, "unterminated quoted text: no closing ' for the one at 2:8", "tokenize"
        ),
    )
    assert [s.text for s in result.statements] == ["SELECT 1"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "CREATE",
                "OR",
                "REPLACE",
                "MASKING",
                "ROW",
                "ACCESS",
                "POLICY",
                "FUNCTION",
                "ALTER",
                "TABLE",
                "SET",
                "MASK",
                "FILTER",
                "TAGS",
                "TAG",
                "ON",
                "AS",
                "RETURNS",
                "RETURN",
                "->",
                "(",
                ")",
                ",",
                ";",
                "'s'",
                "$$",
                "`q`",
                '"q"',
                "x",
                "1",
                "--",
                "\n",
                "MODIFY",
                "COLUMN",
                "USING",
                "COLUMNS",
                "TO",
                "FOR",
                "TABLES",
                "WHEN",
                "MATCH",
                "DROP",
                "ADD",
                "BODY",
                "CASE",
                "END",
                "=",
                ".",
                "/*",
                "*/",
            ]
        ),
        max_size=30,
    ),
    st.sampled_from([None, "snowflake", "databricks"]),
)
def test_scan_never_raises(words: list[str], dialect: str | None) -> None:
    result = scan(" ".join(words), "fuzz.sql", dialect)
    for error in result.errors:
        assert error.line >= 1 and error.column >= 1


# --------------------------------------------------------------------------- statement dispatch


def test_each_file_is_read_with_every_dialects_readers() -> None:
    """The dialect picks the tokenizer and sqlglot's parser, not which statements are read: the
    keyword table holds both dialects' readers, so a statement in the other dialect's syntax is
    still recognised."""
    text = (
        "ALTER TABLE t SET ROW FILTER f ON (a);\n"
        "ALTER TABLE t ADD ROW ACCESS POLICY p ON (a);\n"
        "DROP POLICY q ON TABLE t;\n"
        "DROP MASKING POLICY m;\n"
        "CREATE GOVERNED TAG k;\n"
        "CREATE OR REPLACE GOVERNED TAG k;\n"
        "CREATE OR REPLACE TAG g;\n"
        "CREATE ROW FILTER x"
    )
    for dialect in ("snowflake", "databricks"):
        result = scan(text, "f.sql", dialect)
        assert result.errors == ()
        assert [s.kind for s in result.statements] == [
            "set_row_filter",
            "add_row_access",
            "drop_abac_policy",
            "drop_masking_policy",
            "governed_tag",
            "other",
            "snowflake_tag",
            "other",
        ]
