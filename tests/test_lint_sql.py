"""SQL rules, table-driven: each case is a set of policy DDL files linted together; the rule
fires where expected (file, line and the text at the column) or, for a near miss, not at all."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accord.compiler.core.errors import InputError
from accord.compiler.lint.engine import lint_sql
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.sqlscan import scan
from tests.conftest import ROOT

SF_MASK = """\
CREATE OR REPLACE MASKING POLICY GOV.POL.SUBJECT_MASK AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN IS_ROLE_IN_SESSION('UNBLINDED') THEN val ELSE {expr} END;
ALTER TABLE CLINIC.TRIALS.SUBJECTS MODIFY COLUMN SUBJECT_ID SET MASKING POLICY GOV.POL.SUBJECT_MASK;
"""
DBX_MASK = """\
CREATE OR REPLACE FUNCTION gov.pol.subject_mask(v STRING)
  RETURN CASE WHEN is_account_group_member('unblinded') THEN v ELSE {expr} END;
ALTER TABLE omics.calls.variants ALTER COLUMN subject_id SET MASK gov.pol.subject_mask;
"""


def sf(expr: str) -> str:
    return SF_MASK.format(expr=expr)


def dbx(expr: str) -> str:
    return DBX_MASK.format(expr=expr)


@dataclass
class Case:
    id: str
    rule: str
    files: dict[str, str]
    #: (file name, line, text found at the finding's column) per expected finding
    at: list[tuple[str, int, str]] = field(default_factory=list)
    says: str = ""


CASES = [
    # ---- ACC101 -------------------------------------------------------------------------------
    Case(
        "CURRENT_ROLE in a masking policy",
        "ACC101",
        {
            "m.snowflake.sql": """\
            CREATE MASKING POLICY gov.pol.notes AS (val VARCHAR) RETURNS VARCHAR ->
              CASE WHEN CURRENT_ROLE() = 'CLINICAL' THEN val ELSE '***' END;
            """
        },
        [("m.snowflake.sql", 2, "CURRENT_ROLE()")],
        "CURRENT_ROLE()",
    ),
    Case(
        "CURRENT_AVAILABLE_ROLES in a row access policy",
        "ACC101",
        {
            "r.snowflake.sql": """\
            CREATE ROW ACCESS POLICY gov.pol.rap AS (region VARCHAR) RETURNS BOOLEAN ->
              ARRAY_CONTAINS('GLOBAL'::VARIANT, CURRENT_AVAILABLE_ROLES()) OR region = 'EU';
            """
        },
        [("r.snowflake.sql", 2, "CURRENT_AVAILABLE_ROLES()")],
        "CURRENT_AVAILABLE_ROLES()",
    ),
    Case(
        "CURRENT_ROLE in ALTER ... SET BODY",
        "ACC101",
        {
            "a.snowflake.sql": """\
            ALTER ROW ACCESS POLICY gov.pol.rap SET BODY ->
              CURRENT_ROLE() = 'ADMIN';
            """
        },
        [("a.snowflake.sql", 2, "CURRENT_ROLE()")],
    ),
    Case(
        "near-miss: IS_ROLE_IN_SESSION, and the words in a comment and a string",
        "ACC101",
        {
            "m.snowflake.sql": """\
            -- never CURRENT_ROLE() here
            CREATE MASKING POLICY gov.pol.notes AS (val VARCHAR) RETURNS VARCHAR ->
              CASE WHEN IS_ROLE_IN_SESSION('CLINICAL') THEN val ELSE 'CURRENT_ROLE()' END;
            """
        },
    ),
    # ---- ACC102 -------------------------------------------------------------------------------
    Case(
        "is_member in a row filter function",
        "ACC102",
        {
            "f.databricks.sql": """\
            CREATE FUNCTION gov.pol.region_filter(region STRING)
              RETURN region = 'EU' OR is_member('global-readers');
            """
        },
        [("f.databricks.sql", 2, "is_member(")],
        "is_member()",
    ),
    Case(
        "near-miss: is_account_group_member",
        "ACC102",
        {
            "f.databricks.sql": """\
            CREATE FUNCTION gov.pol.region_filter(region STRING)
              RETURN region = 'EU' OR is_account_group_member('global-readers');
            """
        },
    ),
    # ---- ACC201 -------------------------------------------------------------------------------
    Case(
        "SHA2 of the value alone",
        "ACC201",
        {"m.snowflake.sql": sf("SHA2(val, 256)")},
        [("m.snowflake.sql", 2, "SHA2(val, 256)")],
        "hashes the masked value val",
    ),
    Case(
        "through casts, trimming and case",
        "ACC201",
        {"m.snowflake.sql": sf("SHA2(UPPER(TRIM(val::VARCHAR)), 256)")},
        [("m.snowflake.sql", 2, "SHA2(")],
    ),
    Case(
        "Databricks sha2 of a cast value",
        "ACC201",
        {"f.databricks.sql": dbx("sha2(cast(v AS STRING), 256)")},
        [("f.databricks.sql", 2, "sha2(")],
    ),
    Case(
        "near-miss: concatenated with a salt function",
        "ACC201",
        {"m.snowflake.sql": sf("SHA2(val || GOV.POL.SUBJECT_SALT(), 256)")},
    ),
    Case(
        # another column of the row is no secret: whoever may read the row reads it
        "concatenated with another column (even one called a salt)",
        "ACC201",
        {"f.databricks.sql": dbx("sha2(concat(v, salt_col), 256)")},
        [("f.databricks.sql", 2, "sha2(")],
        "only public values mixed in, column salt_col",
    ),
    Case(
        "ALTER MASKING POLICY ... SET BODY, signature from its CREATE",
        "ACC201",
        {
            "m.snowflake.sql": sf("SHA2(val || GOV.POL.SALT(), 256)")
            + "ALTER MASKING POLICY GOV.POL.SUBJECT_MASK SET BODY -> SHA2(val, 256);\n"
        },
        [("m.snowflake.sql", 4, "SHA2(val, 256)")],
    ),
    Case(
        "near-miss: ALTER ROW ACCESS POLICY ... SET BODY of a row policy",
        "ACC201",
        {
            "r.snowflake.sql": """\
            CREATE ROW ACCESS POLICY gov.pol.rap AS (k VARCHAR) RETURNS BOOLEAN -> TRUE;
            ALTER ROW ACCESS POLICY gov.pol.rap SET BODY -> SHA2(k, 256) IN (SELECT h FROM t);
            """
        },
    ),
    Case(
        "near-miss: a row access policy comparing a hash",
        "ACC201",
        {
            "r.snowflake.sql": """\
            CREATE ROW ACCESS POLICY gov.pol.rap AS (k VARCHAR) RETURNS BOOLEAN ->
              SHA2(k, 256) IN (SELECT h FROM gov.pol.allowed);
            """
        },
    ),
    # ---- ACC205 -------------------------------------------------------------------------------
    Case(
        "a literal concatenated in a Snowflake policy",
        "ACC205",
        {"m.snowflake.sql": sf("SHA2(val || 'pepper', 256)")},
        [("m.snowflake.sql", 2, "SHA2(")],
        "salts its hash with a literal",
    ),
    Case(
        "a literal in a Databricks mask function",
        "ACC205",
        {"f.databricks.sql": dbx("sha2(concat(v, 'pepper'), 256)")},
        [("f.databricks.sql", 2, "sha2(")],
    ),
    Case(
        "near-miss: a separator between the value and a salt function",
        "ACC205",
        {"m.snowflake.sql": sf("SHA2(val || '|' || GOV.POL.SUBJECT_SALT(), 256)")},
    ),
    Case(
        "near-miss: a secure Snowflake function hides its body",
        "ACC205",
        {
            "s.snowflake.sql": """\
            CREATE SECURE FUNCTION gov.pol.pseudo(v VARCHAR) RETURNS VARCHAR
              AS 'SHA2(v || ''pepper'', 256)';
            """
        },
    ),
    # ---- ACC204 -------------------------------------------------------------------------------
    Case(
        "MD5",
        "ACC204",
        {"m.snowflake.sql": sf("MD5(val || GOV.POL.SALT())")},
        [("m.snowflake.sql", 2, "MD5(")],
        "MD5()",
    ),
    Case(
        "Snowflake HASH()",
        "ACC204",
        {"m.snowflake.sql": sf("HASH(val)::VARCHAR")},
        [("m.snowflake.sql", 2, "HASH(")],
        "non-cryptographic",
    ),
    Case(
        "Databricks sha1 and hash",
        "ACC204",
        {"f.databricks.sql": dbx("concat(sha1(v), hash(v))")},
        [("f.databricks.sql", 2, "sha1("), ("f.databricks.sql", 2, "hash(")],
    ),
    Case("near-miss: SHA2", "ACC204", {"m.snowflake.sql": sf("SHA2(val || GOV.POL.SALT(), 256)")}),
    # ---- ACC203 -------------------------------------------------------------------------------
    Case(
        "unsalted SHA2 on both platforms, same column name",
        "ACC203",
        {"a.snowflake.sql": sf("SHA2(val, 256)"), "b.databricks.sql": dbx("sha2(v, 256)")},
        [("a.snowflake.sql", 2, "SHA2(")],
        "column subject_id gets identical digests on databricks and snowflake",
    ),
    Case(
        "the same literal salt on both",
        "ACC203",
        {
            "a.snowflake.sql": sf("SHA2(val || 'pepper', 256)"),
            "b.databricks.sql": dbx("sha2(concat(v, 'pepper'), 256)"),
        },
        [("a.snowflake.sql", 2, "SHA2(")],
    ),
    Case(
        "salt functions whose bodies are the same literal",
        "ACC203",
        {
            "a.snowflake.sql": "CREATE SECURE FUNCTION GOV.POL.SALT() RETURNS VARCHAR AS $$ 'p' $$;\n"
            + sf("SHA2(val || GOV.POL.SALT(), 256)"),
            "b.databricks.sql": "CREATE FUNCTION gov.pol.salt() RETURN 'p';\n"
            + dbx("sha2(concat(v, gov.pol.salt()), 256)"),
        },
        [("a.snowflake.sql", 3, "SHA2(")],
    ),
    Case(
        "near-miss: salted with opaque salt functions",
        "ACC203",
        {
            "a.snowflake.sql": sf("SHA2(val || GOV.POL.SALT(), 256)"),
            "b.databricks.sql": dbx("sha2(concat(v, gov.pol.salt()), 256)"),
        },
    ),
    Case(
        "near-miss: different literal salts",
        "ACC203",
        {
            "a.snowflake.sql": sf("SHA2(val || 'one', 256)"),
            "b.databricks.sql": dbx("sha2(concat(v, 'two'), 256)"),
        },
    ),
    Case(
        "near-miss: different bit lengths",
        "ACC203",
        {"a.snowflake.sql": sf("SHA2(val, 512)"), "b.databricks.sql": dbx("sha2(v, 256)")},
    ),
    Case(
        "near-miss: two files on one platform",
        "ACC203",
        {"a.snowflake.sql": sf("SHA2(val, 256)"), "b.snowflake.sql": sf("SHA2(val, 256)")},
    ),
    Case(
        "near-miss: different column names",
        "ACC203",
        {
            "a.snowflake.sql": sf("SHA2(val, 256)"),
            "b.databricks.sql": dbx("sha2(v, 256)").replace("subject_id", "patient_id"),
        },
    ),
]


def lint_files(root: Path, files: dict[str, str]) -> list[Finding]:
    root.mkdir(parents=True, exist_ok=True)
    results = []
    for name, text in sorted(files.items()):
        path = root / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        results.append(scan(path.read_text(encoding="utf-8"), str(path)))
    return lint_sql(results)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule} {c.id}" for c in CASES])
def test_sql_rule(case: Case, tmp_path: Path) -> None:
    findings = [f for f in lint_files(tmp_path, case.files) if f.rule == case.rule]
    if not case.at:
        assert findings == [], [f"{f.location} {f.message}" for f in findings]
        return
    assert len(findings) == len(case.at)
    for f, (name, line, text) in zip(findings, case.at, strict=True):
        assert Path(f.location.file).name == name and f.location.line == line
        source = source_line(f.location.file, line)
        assert source is not None and source[f.location.column - 1 :].startswith(text), source
        assert case.says in f.message
        assert f.fix


def test_literal_salt_never_printed(tmp_path: Path) -> None:
    findings = lint_files(tmp_path, {"m.snowflake.sql": sf("SHA2(val || 'hunter2', 256)")})
    assert any(f.rule == "ACC205" for f in findings)
    assert all("hunter2" not in f.message + f.fix for f in findings)


# --------------------------------------------------------------------------------------------
# the heart of the problem


HEART = ROOT / "examples" / "sql" / "heart-of-problem"


def test_heart_of_problem_pair() -> None:
    paths = sorted(HEART.glob("*.sql"))
    findings = lint_sql([scan(p.read_text(encoding="utf-8"), str(p)) for p in paths])
    by_rule = sorted((f.rule, Path(f.location.file).name, f.location.line) for f in findings)
    assert by_rule == [
        ("ACC201", "lakehouse.databricks.sql", 49),
        ("ACC201", "warehouse.snowflake.sql", 55),
        ("ACC203", "lakehouse.databricks.sql", 49),
    ]
    (joinable,) = [f for f in findings if f.rule == "ACC203"]
    assert "lakehouse.databricks.sql:49" in joinable.message
    assert "warehouse.snowflake.sql:55" in joinable.message
    assert [Path(r.file).name for r in joinable.related] == ["warehouse.snowflake.sql"]


@pytest.mark.parametrize("name", ["warehouse.snowflake.sql", "lakehouse.databricks.sql"])
def test_heart_of_problem_alone_has_no_join_and_sound_role_checks(name: str) -> None:
    path = HEART / name
    findings = lint_sql([scan(path.read_text(encoding="utf-8"), str(path))])
    assert [f.rule for f in findings] == ["ACC201"]


# --------------------------------------------------------------------------------------------
# suppressions


def test_sql_suppression_with_reason(tmp_path: Path) -> None:
    text = "-- accord: ignore ACC201 test fixture: synthetic ids only\n" + sf("SHA2(val, 256)")
    findings = lint_files(tmp_path, {"m.snowflake.sql": text})
    (f,) = [f for f in findings if f.rule == "ACC201"]
    assert f.suppressed and f.reason == "test fixture: synthetic ids only"


def test_sql_suppression_on_either_statement_silences_acc203(tmp_path: Path) -> None:
    files = {
        "a.snowflake.sql": sf("SHA2(val, 256)"),
        "b.databricks.sql": dbx("sha2(v, 256)").replace(
            "ALTER TABLE",
            "-- accord: ignore ACC203 the lakehouse copy holds test subjects\nALTER TABLE",
        ),
    }
    (f,) = [f for f in lint_files(tmp_path, files) if f.rule == "ACC203"]
    assert f.suppressed


@pytest.mark.parametrize(
    ("comment", "message"),
    [
        ("-- accord: ignore ACC999 because", "unknown rule ACC999"),
        ("-- accord: ignore ACC201", "needs a reason"),
    ],
)
def test_bad_sql_suppression_is_a_located_error(tmp_path: Path, comment: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        lint_files(tmp_path, {"m.snowflake.sql": comment + "\n" + sf("SHA2(val, 256)")})
    (d,) = err.value.diagnostics
    assert (d.location.line, d.location.column) == (1, 1)
    assert message in d.message
