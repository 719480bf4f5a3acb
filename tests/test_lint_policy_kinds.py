"""Lint of every policy kind (issue 40, item 5): hand-written projection, aggregation and join
policies, a policy of a kind accord does not model, pipeline datasets, staged functions and
plain ``.sql`` files of unknown dialect, in SQL files, dbt templates and notebooks.

The fixtures (tests/fixtures/kinds/) are written in the shapes the vendors' documentation and
public guides use, each citing its source; none is copied from them. Every ``CURRENT_ROLE()``
is found, every broken statement is ACC001, and valid SQL is never ACC001.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.sqlscan import scan
from tests.sql_lint import lint_sql_files

FIXTURES = Path(__file__).parent / "fixtures" / "kinds"


def _found(findings: list[Finding], root: Path = FIXTURES) -> list[tuple[str, int, str]]:
    """(rule, line, the text at the finding's column) of each finding."""
    out = []
    for f in findings:
        line = source_line(str(root / f.location.file), f.location.line) or ""
        out.append((f.rule, f.location.line, line[f.location.column - 1 :]))
    return out


def _lint(name: str) -> list[tuple[str, int, str]]:
    return _found(lint_sql_files(FIXTURES, [name]))


def test_current_role_in_projection_policies_is_found() -> None:
    found = _lint("projection_current_role.sql")
    assert [(r, n) for r, n, _ in found] == [("ACC101", 7), ("ACC101", 15)]
    assert all(text.startswith("CURRENT_ROLE()") for _, _, text in found)


def test_current_role_and_invoker_role_in_aggregation_and_join_policies() -> None:
    found = _lint("aggregation_join_current_role.sql")
    assert [(r, n) for r, n, _ in found] == [("ACC101", 6), ("ACC101", 14), ("ACC103", 22)]
    assert [t.split("(")[0] for _, _, t in found] == [
        "CURRENT_ROLE",
        "CURRENT_ROLE",
        "INVOKER_ROLE",
    ]


def test_messages_name_the_kind() -> None:
    findings = lint_sql_files(FIXTURES, ["aggregation_join_current_role.sql"])
    assert findings[0].message.startswith("aggregation policy my_agg_policy calls CURRENT_ROLE()")
    assert findings[1].message.startswith("join policy jp1 calls CURRENT_ROLE()")


def test_sound_policies_of_every_kind_have_no_finding() -> None:
    assert _lint("kinds_sound.snowflake.sql") == []


def test_every_broken_policy_statement_is_acc001() -> None:
    found = _lint("broken_policies.snowflake.sql")
    assert [(r, n) for r, n, _ in found] == [("ACC001", n) for n in (3, 5, 6, 7, 8, 9)]
    messages = [f.message for f in lint_sql_files(FIXTURES, ["broken_policies.snowflake.sql"])]
    assert "projection policy body" in messages[0]
    assert "'->'" in messages[1]
    assert "takes no arguments" in messages[2]
    assert "RETURNS PROJECTION_CONSTRAINT, not BOOLEAN" in messages[3]
    assert "data_quality policy body" in messages[4]  # a kind accord does not model
    assert "join policy body" in messages[5]


def test_staged_functions_are_read_not_acc001() -> None:
    assert _lint("snowflake_staged_functions.sql") == []
    result = scan((FIXTURES / "snowflake_staged_functions.sql").read_text(), "f.sql")
    assert result.dialect == "snowflake"  # IMPORTS = / HANDLER = tell
    assert [(s.kind, s.language, s.body) for s in result.statements] == [
        ("function", "PYTHON", None),
        ("function", "JAVA", None),
    ]


def test_pipeline_datasets_are_linted_like_views() -> None:
    found = _lint("pipeline.sql")
    assert [(r, n) for r, n, _ in found] == [("ACC102", 13), ("ACC102", 18), ("ACC102", 21)]
    assert all(text.startswith("is_member(") for _, _, text in found)
    messages = [f.message for f in lint_sql_files(FIXTURES, ["pipeline.sql"])]
    assert [m.split(" calls")[0] for m in messages] == [
        "streaming table assays_for_caller",
        "materialized view assay_summary",
        "live view recent_assays",
    ]


def test_plain_sql_file_dialect_told_by_its_calls() -> None:
    assert _lint("dynamic_view.sql") == [
        ("ACC102", 7, "is_member('auditors') THEN email ELSE 'REDACTED' END AS email,")
    ]


def test_plain_sql_file_with_both_platforms_calls_is_acc001_with_the_reason() -> None:
    findings = lint_sql_files(FIXTURES, ["mixed_calls.sql"])
    assert [(f.rule, f.location.line) for f in findings] == [("ACC001", 2)]
    assert "is_member() (Databricks only) and CURRENT_ROLE() (Snowflake only)" in (
        findings[0].message
    )


def test_view_deciding_access_in_a_file_nothing_tells_is_acc001(tmp_path: Path) -> None:
    (tmp_path / "v.sql").write_text(
        "CREATE VIEW v AS SELECT * FROM t WHERE owner = current_user();\n", encoding="utf-8"
    )
    findings = lint_sql_files(tmp_path, ["v.sql"])
    assert [(f.rule, f.location.line) for f in findings] == [("ACC001", 1)]
    assert "nothing in the file tells" in findings[0].message
    # a file of plain queries needs no dialect
    (tmp_path / "q.sql").write_text("SELECT current_user();\n", encoding="utf-8")
    assert lint_sql_files(tmp_path, ["q.sql"]) == []


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        pytest.param(
            # a property-only policy (network, password) has no body to read: not ACC001
            "CREATE NETWORK POLICY np ALLOWED_IP_LIST = ('192.168.1.0/24');",
            None,
            id="network-policy",
        ),
        pytest.param(
            "CREATE STORAGE LIFECYCLE POLICY gov.pol.keep AS (d DATE) RETURNS BOOLEAN ->\n"
            "  d < CURRENT_DATE() AND CURRENT_ROLE() <> 'ARCHIVIST';",
            "ACC101",
            id="future-kind-body-linted",
        ),
        pytest.param(
            # a signed policy of a kind accord does not know whose arrow is missing: the body
            # cannot be read, and that is said rather than passed over
            "CREATE DATA_QUALITY POLICY gov.pol.dq AS (v VARCHAR) RETURNS BOOLEAN\n"
            "  CASE WHEN CURRENT_ROLE() = 'A' THEN TRUE END;",
            "ACC001",
            id="future-kind-broken-body",
        ),
    ],
)
def test_policies_of_kinds_accord_does_not_model(
    tmp_path: Path, text: str, rule: str | None
) -> None:
    (tmp_path / "p.sql").write_text(text + "\n", encoding="utf-8")
    rules = [f.rule for f in lint_sql_files(tmp_path, ["p.sql"])]
    assert rules == ([rule] if rule else [])


def test_shadowed_parameter_in_a_policy_of_another_kind(tmp_path: Path) -> None:
    # ACC104 reads every policy kind's body: the parameter `region` also names a column of
    # the mapping table, so `g.region = region` compares the column with itself
    (tmp_path / "p.snowflake.sql").write_text(
        textwrap.dedent(
            """\
            CREATE TABLE gov.pol.region_grants (region VARCHAR, role_name VARCHAR);
            CREATE STORAGE LIFECYCLE POLICY gov.pol.expire AS (region VARCHAR) RETURNS BOOLEAN ->
              NOT EXISTS (SELECT 1 FROM gov.pol.region_grants g WHERE g.region = region);
            """
        ),
        encoding="utf-8",
    )
    assert [f.rule for f in lint_sql_files(tmp_path, ["p.snowflake.sql"])] == ["ACC104"]


#: a dbt macro in the shape of public projects' projection-policy macros (an `alter
#: {{ materialization }} ... modify column ... set projection policy ... force` call and a
#: `create projection policy` with CURRENT_ROLE)
DBT_MACRO = """\
{% macro create_projection_policy(schema) %}
create or replace projection policy {{ schema }}.hide_email as () returns projection_constraint ->
  case when current_role() in ('SUPPORT') then projection_constraint(allow => true)
       else projection_constraint(allow => false) end;
{% endmacro %}
{% macro set_column_projection_policy(materialization, model, column, policy) %}
alter {{ materialization }} {{ model }} modify column {{ column }} set projection policy {{ policy }} force;
{% endmacro %}
"""

#: a Python notebook exported as source whose %sql cell defines a pipeline's streaming table
PY_NOTEBOOK = """\
# Databricks notebook source
# MAGIC %sql
# MAGIC CREATE OR REFRESH STREAMING TABLE salaries_for_caller
# MAGIC AS SELECT CASE WHEN is_member('hr') THEN salary END AS salary FROM STREAM(raw_salaries)
"""


def test_templates_and_notebooks(tmp_path: Path) -> None:
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "projection.sql").write_text(DBT_MACRO, encoding="utf-8")
    (tmp_path / "pipeline.py").write_text(PY_NOTEBOOK, encoding="utf-8")
    findings = lint_sql_files(tmp_path, ["macros/projection.sql", "pipeline.py"])
    assert [(Path(f.location.file).name, f.rule, f.location.line) for f in findings] == [
        ("projection.sql", "ACC101", 3),
        ("pipeline.py", "ACC102", 4),
    ]
