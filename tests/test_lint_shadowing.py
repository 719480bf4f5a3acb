"""ACC104 shadowed-parameter: a policy parameter that a column shadows inside a subquery.

Table-driven over the shapes policy code is written in: a Snowflake script, a Databricks
script with a function used as a row filter, a dbt macro, a Databricks notebook export and a
hand-written `row_filter.expression` of the model, each with near misses that must stay
clean (the reference qualified, the parameter named differently, a subquery over a table
whose columns are known and lack the name). `accord verify` reports the same predicate, and
ACC503 does not call the mapping table it reads unused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.lint.engine import lint_project
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.model.validate import load_project
from accord.compiler.verify.run import verify
from tests.cli import run_cli
from tests.estates import write_files
from tests.sql_lint import lint_sql_files

# --------------------------------------------------------------------------------------------
# SQL files

#: The mapping-table row access policy of Snowflake's documentation ("Understanding row access
#: policies", https://docs.snowflake.com/en/user-guide/security-row-intro, the
#: `salesmanagerregions` example), with the parameter given the mapping column's name, as in
#: issue 21: the subquery's `region` is the mapping table's.
SF_SHADOWED = """\
USE ROLE POLICY_ADMIN;

CREATE OR REPLACE ROW ACCESS POLICY gov.policies.region_filter
  AS (region_code VARCHAR) RETURNS BOOLEAN ->
  EXISTS (
    SELECT 1 FROM gov.policies.region_grants g
    WHERE g.region_code = region_code
      AND IS_ROLE_IN_SESSION(g.role_name)
  );

ALTER TABLE sales.crm.customers ADD ROW ACCESS POLICY gov.policies.region_filter ON (region);
"""
#: the documentation's own form: the parameter named apart from the mapping column
SF_RENAMED = SF_SHADOWED.replace("(region_code VARCHAR)", "(region_value VARCHAR)").replace(
    "= region_code", "= region_value"
)
#: a masking policy whose lookup of the unmasking roles shadows the masked value's name
SF_MASK_SHADOWED = """\
CREATE OR REPLACE MASKING POLICY gov.policies.email_mask AS (email VARCHAR) RETURNS VARCHAR ->
  CASE
    WHEN EXISTS (SELECT 1 FROM gov.policies.email_readers r
                 WHERE r.email = email AND IS_ROLE_IN_SESSION(r.role_name)) THEN email
    ELSE '***MASKED***'
  END;
"""

#: A SQL UDF used as a row filter, in the shape of Databricks' "Filter sensitive table data
#: using row filters and column masks" (https://docs.databricks.com/en/tables/
#: row-and-column-filters.html, the mapping-table example) and the ROW FILTER clause page
#: (sql-ref-syntax-ddl-row-filter.html): CREATE FUNCTION ... RETURN, then SET ROW FILTER.
DBX_SHADOWED = """\
CREATE OR REPLACE FUNCTION main.gov.region_filter(region STRING)
RETURN is_account_group_member('admins') OR EXISTS (
  SELECT 1 FROM main.gov.region_grants g
  WHERE g.region = region AND is_account_group_member(g.group_name)
);

ALTER TABLE main.sales.orders SET ROW FILTER main.gov.region_filter ON (region);
"""
#: the parameter qualified with the function's name (Databricks resolves it to the parameter)
DBX_QUALIFIED = DBX_SHADOWED.replace("g.region = region", "g.region = region_filter.region")
#: the mapping table's columns are known from a CREATE TABLE in the files linted, and it has
#: no column `region`: the parameter is the parameter (the `o.region` of the other lookup
#: would otherwise make it a suspect)
DBX_KNOWN_TABLE = """\
CREATE TABLE IF NOT EXISTS main.gov.region_grants (region_code STRING, group_name STRING);

CREATE OR REPLACE FUNCTION main.gov.region_filter(region STRING)
RETURN EXISTS (
  SELECT 1 FROM main.gov.region_grants g
  WHERE g.region_code = region AND is_account_group_member(g.group_name)
) OR EXISTS (SELECT 1 FROM main.gov.open_regions o WHERE o.region = 'GLOBAL');
"""
#: the same function without the CREATE TABLE: nothing says region_grants lacks `region`
DBX_UNKNOWN_TABLE = DBX_KNOWN_TABLE.split("\n\n", 1)[1]
#: a CREATE TABLE that does have the column: known, not only assumed
DBX_KNOWN_HAS = """\
CREATE TABLE main.gov.region_grants (region STRING, group_name STRING);

CREATE OR REPLACE FUNCTION main.gov.region_filter(region STRING)
RETURN EXISTS (SELECT 1 FROM main.gov.region_grants WHERE region = region)
"""

#: In the style of entechlog/dbt-snow-mask (macros/snow-mask-ddl/create_masking_policy_*.sql,
#: one macro per policy, `{{node_database}}.{{node_schema}}` names, no `;` before endmacro),
#: written for a row access policy.
DBT_SHADOWED = """\
{% macro create_row_access_policy_region(node_database, node_schema) %}

CREATE ROW ACCESS POLICY IF NOT EXISTS {{node_database}}.{{node_schema}}.region_filter
  AS (region_code VARCHAR) RETURNS BOOLEAN ->
    EXISTS (SELECT 1 FROM {{node_database}}.{{node_schema}}.region_grants g
            WHERE g.region_code = region_code AND IS_ROLE_IN_SESSION(g.role_name))

{% endmacro %}
"""
DBT_RENAMED = DBT_SHADOWED.replace("(region_code VARCHAR)", "(val VARCHAR)").replace(
    "= region_code", "= val"
)

#: A Python notebook exported as source, in the style of the Databricks row-filter labs
#: (`# Databricks notebook source`, `# MAGIC %sql` cells between `# COMMAND` lines).
NOTEBOOK_SHADOWED = """\
# Databricks notebook source
# MAGIC %md
# MAGIC ### Row filters from the grants table

# COMMAND ----------

# MAGIC %sql
# MAGIC CREATE OR REPLACE FUNCTION main.gov.region_filter(region STRING)
# MAGIC RETURN EXISTS (SELECT 1 FROM main.gov.region_grants g
# MAGIC               WHERE g.region = region AND is_account_group_member(g.group_name))

# COMMAND ----------

# MAGIC %sql
# MAGIC ALTER TABLE main.sales.orders SET ROW FILTER main.gov.region_filter ON (region)
"""
NOTEBOOK_QUALIFIED = NOTEBOOK_SHADOWED.replace(
    "g.region = region", "g.region = region_filter.region"
)


#: A Databricks SQL notebook export (`-- Databricks notebook source`, cells between
#: `-- COMMAND` lines), in the shape of issue 38's public notebook: a mapping table of who may
#: see what, then a mask that shows the value to the users the table lists for it.
NB_TABLE = """\
-- Databricks notebook source
-- MAGIC %md
-- MAGIC ## Special access

-- COMMAND ----------

CREATE OR REPLACE TABLE usuarios_acesso_especial (
  email STRING,
  departamento STRING,
  cpf STRING
) USING DELTA;

-- COMMAND ----------

"""
#: `cpf IN (SELECT cpf FROM ...)`: the left `cpf` is the parameter, the subquery's select list
#: is the table's column, as its author means
NB_SELECT_LIST = (
    NB_TABLE
    + """\
CREATE OR REPLACE FUNCTION cpf_mask (cpf STRING)
RETURN CASE
  WHEN cpf IN (SELECT cpf FROM usuarios_acesso_especial f WHERE f.email = CURRENT_USER())
  THEN cpf
  ELSE '***.***.***-**'
END;

-- COMMAND ----------

ALTER TABLE funcionarios ALTER COLUMN cpf SET MASK cpf_mask;
"""
)
#: the same statements in a plain SQL file
SQL_SELECT_LIST = "".join(f"{line}\n" for line in NB_SELECT_LIST.splitlines() if line[:3] != "-- ")
#: near misses: the parameter compared inside the subquery's WHERE with the same-named column,
#: unqualified on both sides, or qualified on one
NB_WHERE_ITSELF = NB_SELECT_LIST.replace(
    "f.email = CURRENT_USER())", "f.email = CURRENT_USER() AND cpf = cpf)"
)
NB_WHERE_QUALIFIED = NB_SELECT_LIST.replace(
    "f.email = CURRENT_USER())", "f.email = CURRENT_USER() AND f.cpf = cpf)"
)
#: `param IN (SELECT col FROM t WHERE col2 = param_shadowed)`: the select list is the column,
#: the WHERE's `email` is a parameter the table's `email` shadows
NB_OTHER_PARAMETER = NB_SELECT_LIST.replace("(cpf STRING)", "(cpf STRING, email STRING)").replace(
    "f.email = CURRENT_USER())", "f.email = email)"
)
#: the notebook's row filter: the select list of its IN is fine, its EXISTS compares the
#: table's `departamento` with itself
NB_ROW_FILTER = (
    NB_TABLE
    + """\
CREATE OR REPLACE FUNCTION acesso_especial_filter (departamento STRING)
RETURN EXISTS(
  SELECT 1 FROM usuarios_acesso_especial u
  WHERE u.email = CURRENT_USER()
  AND u.departamento = departamento
) AND departamento IN (SELECT departamento FROM usuarios_acesso_especial f
                       WHERE f.email = CURRENT_USER())
"""
)
#: what a subquery gives, in its select list (an aggregate of the column) or grouping, is the
#: column; a comparison inside the select list is a condition like any other
SQL_GIVES = """\
CREATE TABLE usuarios_acesso_especial (email STRING, departamento STRING, cpf STRING);

CREATE OR REPLACE FUNCTION cpf_mask (cpf STRING)
RETURN CASE
  WHEN cpf = (SELECT MAX(cpf) FROM usuarios_acesso_especial f WHERE f.email = CURRENT_USER())
  THEN cpf
  WHEN cpf IN (SELECT cpf FROM usuarios_acesso_especial GROUP BY cpf) THEN 'listed'
  WHEN 'TI' = (SELECT departamento FROM usuarios_acesso_especial ORDER BY cpf LIMIT 1) THEN cpf
  ELSE '***'
END;
"""
SQL_CONDITION_IN_SELECT = """\
CREATE TABLE usuarios_acesso_especial (email STRING, departamento STRING, cpf STRING);

CREATE OR REPLACE FUNCTION cpf_mask (cpf STRING)
RETURN CASE
  WHEN TRUE IN (SELECT CASE WHEN f.cpf = cpf THEN TRUE END FROM usuarios_acesso_especial f)
  THEN cpf
  ELSE '***'
END;
"""
#: the parameter resolves to the inner table's column, compared with the outer table's: a
#: condition on two columns, neither of them the parameter
SQL_TWO_TABLES = """\
CREATE TABLE usuarios_acesso_especial (email STRING, departamento STRING, cpf STRING);
CREATE TABLE bloqueios (cpf STRING, motivo STRING);

CREATE OR REPLACE FUNCTION cpf_mask (cpf STRING)
RETURN CASE
  WHEN EXISTS (SELECT 1 FROM usuarios_acesso_especial f
               WHERE EXISTS (SELECT 1 FROM bloqueios b WHERE f.cpf = cpf)) THEN '***'
  ELSE cpf
END;
"""
#: the same cells in a Python notebook export (`# MAGIC %sql`)
PY_SELECT_LIST = "# Databricks notebook source\n" + "".join(
    "\n# COMMAND ----------\n\n# MAGIC %sql\n"
    + "".join(f"# MAGIC {line}".rstrip() + "\n" for line in cell.strip().splitlines())
    for cell in NB_SELECT_LIST.split("-- COMMAND ----------")[1:]
)


@dataclass
class SqlCase:
    id: str
    files: dict[str, str]
    #: (file, line, text at the finding's column) of every ACC104 finding, in order
    at: list[tuple[str, int, str]] = field(default_factory=list)
    #: words every finding's message holds
    says: tuple[str, ...] = ()


SQL_CASES = [
    SqlCase(
        "snowflake-row-access-policy",
        {"policies.sql": SF_SHADOWED},
        [("policies.sql", 7, "region_code\n")],
        ("gov.policies.region_grants", "parameter region_code", "admits every row"),
    ),
    SqlCase("snowflake-renamed-parameter", {"policies.sql": SF_RENAMED}),
    SqlCase(
        "snowflake-masking-policy",
        {"masks.sql": SF_MASK_SHADOWED},
        [("masks.sql", 4, "email AND")],
        ("gov.policies.email_readers", "parameter email"),
    ),
    SqlCase(
        "databricks-row-filter-function",
        {"filters.sql": DBX_SHADOWED},
        [("filters.sql", 4, "region AND")],
        ("main.gov.region_grants", "parameter region"),
    ),
    SqlCase("databricks-qualified-parameter", {"filters.sql": DBX_QUALIFIED}),
    SqlCase("databricks-table-known-without-the-column", {"filters.sql": DBX_KNOWN_TABLE}),
    SqlCase(
        "databricks-table-unknown",
        {"filters.sql": DBX_UNKNOWN_TABLE},
        [("filters.sql", 4, "region AND")],
        # region_code is compared with the table's region: not itself, not the parameter
        ("if that table has one", "o.region", "never looks at the parameter's value"),
    ),
    SqlCase(
        # a file of table DDL alone names its dialect by its suffix (docs/lint.md)
        "databricks-create-table-in-another-file",
        {
            "ddl/tables.databricks.sql": DBX_KNOWN_TABLE.split("\n\n")[0] + "\n",
            "filters.sql": DBX_UNKNOWN_TABLE,
        },
    ),
    SqlCase(
        "databricks-table-known-with-the-column",
        {"filters.sql": DBX_KNOWN_HAS},
        # both sides of `region = region` are the table's column
        [("filters.sql", 4, "region = region"), ("filters.sql", 4, "region)")],
        ("CREATE TABLE at filters.sql:1",),
    ),
    SqlCase(
        "dbt-macro",
        {"macros/row_access/create_row_access_policy_region.sql": DBT_SHADOWED},
        [("macros/row_access/create_row_access_policy_region.sql", 6, "region_code AND")],
        ("parameter region_code",),
    ),
    SqlCase(
        "dbt-macro-renamed", {"macros/row_access/create_row_access_policy_region.sql": DBT_RENAMED}
    ),
    SqlCase(
        "notebook-export",
        {"notebooks/row_filters.py": NOTEBOOK_SHADOWED},
        [("notebooks/row_filters.py", 10, "region AND")],
        ("parameter region",),
    ),
    SqlCase("notebook-qualified", {"notebooks/row_filters.py": NOTEBOOK_QUALIFIED}),
    # issue 38, case 9: what the subquery gives is the column, as its author means
    SqlCase("sql-notebook-in-subquery-select-list", {"notebooks/masks.sql": NB_SELECT_LIST}),
    SqlCase("python-notebook-in-subquery-select-list", {"notebooks/masks.py": PY_SELECT_LIST}),
    SqlCase(
        "sql-file-in-subquery-select-list",
        {"masks.sql": SQL_SELECT_LIST},
    ),
    SqlCase("aggregate-and-grouping-of-the-column", {"masks.sql": SQL_GIVES}),
    SqlCase(
        "where-compares-the-parameter-with-itself",
        {"notebooks/masks.sql": NB_WHERE_ITSELF},
        [("notebooks/masks.sql", 17, "cpf = cpf)"), ("notebooks/masks.sql", 17, "cpf)")],
        ("usuarios_acesso_especial", "parameter cpf", "compares the column with itself"),
    ),
    SqlCase(
        "where-compares-the-qualified-column",
        {"notebooks/masks.sql": NB_WHERE_QUALIFIED},
        [("notebooks/masks.sql", 17, "cpf)")],
        ("parameter cpf", "compares the column with itself"),
    ),
    SqlCase(
        "where-looks-up-another-shadowed-parameter",
        {"notebooks/masks.sql": NB_OTHER_PARAMETER},
        [("notebooks/masks.sql", 17, "email)")],
        ("parameter email", "CREATE TABLE at notebooks/masks.sql:7"),
    ),
    SqlCase(
        "notebook-row-filter-exists-and-in",
        {"notebooks/filters.sql": NB_ROW_FILTER},
        [("notebooks/filters.sql", 19, "departamento\n")],
        ("parameter departamento", "compares the column with itself"),
    ),
    SqlCase(
        "compared-with-another-tables-column",
        {"masks.sql": SQL_TWO_TABLES},
        [("masks.sql", 7, "cpf)")],
        ("column of bloqueios", "parameter cpf", "never looks at the parameter's value"),
    ),
    SqlCase(
        "a-comparison-in-the-select-list",
        {"masks.sql": SQL_CONDITION_IN_SELECT},
        [("masks.sql", 5, "cpf THEN")],
        ("parameter cpf", "compares the column with itself"),
    ),
]


def _lint_sql(root: Path, names: list[str]) -> list[Finding]:
    return lint_sql_files(root, names)


@pytest.mark.parametrize("case", SQL_CASES, ids=[c.id for c in SQL_CASES])
def test_shadowed_parameter_in_sql(tmp_path: Path, case: SqlCase) -> None:
    write_files(tmp_path, case.files)
    every = _lint_sql(tmp_path, sorted(case.files))
    assert [f.message for f in every if f.rule == "ACC001"] == []  # every policy read
    findings = [f for f in every if f.rule == "ACC104"]
    got = []
    for f in findings:
        line = source_line(str(tmp_path / f.location.file), f.location.line)
        assert line is not None
        got.append((f.location.file, f.location.line, line[f.location.column - 1 :] + "\n"))
    assert [(file, line) for file, line, _ in got] == [(file, line) for file, line, _ in case.at]
    for (_, _, text), (_, _, want) in zip(got, case.at, strict=True):
        assert text.startswith(want), (text, want)
    for f in findings:
        assert f.severity == "error"
        assert "rename the parameter" in f.fix
        for word in case.says:
            assert word in f.message, f.message
        assert "__j" not in f.message  # template placeholders never reach a user


def test_databricks_fix_names_the_function_qualifier(tmp_path: Path) -> None:
    write_files(tmp_path, {"filters.sql": DBX_SHADOWED, "policies.sql": SF_SHADOWED})
    fixes = {f.location.file: f.fix for f in _lint_sql(tmp_path, ["filters.sql", "policies.sql"])}
    assert "region_filter.region" in fixes["filters.sql"]
    assert "qualify" not in fixes["policies.sql"]  # a Snowflake policy parameter: rename it


def test_lint_cli_fails_on_the_readme_shape(tmp_path: Path) -> None:
    write_files(tmp_path, {"policies.sql": SF_SHADOWED})
    result = run_cli(["lint", "policies.sql", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    found = [r for r in json.loads(result.stdout)["findings"] if r["rule"] == "ACC104"]
    assert [(r["line"], r["name"], r["severity"]) for r in found] == [
        (7, "shadowed-parameter", "error")
    ]


# --------------------------------------------------------------------------------------------
# the model's hand-written predicates

GRANTS = "GOV.POLICIES.REGION_GRANTS"


def estate(expression: str, arguments: dict[str, str]) -> dict[str, Any]:
    """A Snowflake estate whose one dataset is filtered by a hand-written predicate over the
    `region` dimension's mapping table (which accord compiles as GOV.POLICIES.REGION_GRANTS
    with columns REGION_CODE and ROLE_NAME)."""
    return {
        "version": 1,
        "platforms": {"snowflake": {"governance_schema": "GOV.POLICIES"}},
        "principals": {"analyst": {"snowflake": "ANALYST"}, "auditor": {"snowflake": "AUDITOR"}},
        "entitlements": {"region": {"EU": ["analyst"], "US": ["auditor"]}},
        "datasets": {
            "customers": {
                "platform": "snowflake",
                "table": "SALES.CRM.CUSTOMERS",
                "row_filter": {"expression": {"snowflake": expression}, "arguments": arguments},
            }
        },
        "personas": {"analyst": ["analyst"], "auditor": ["auditor"]},
    }


SHADOWED = (
    f"EXISTS (SELECT 1 FROM {GRANTS} g WHERE g.REGION_CODE = REGION_CODE "
    "AND IS_ROLE_IN_SESSION(g.ROLE_NAME))"
)
RENAMED = SHADOWED.replace("= REGION_CODE", "= REGION_VALUE")
#: the mapping table is known to have REGION_CODE and ROLE_NAME only: COUNTRY is the argument
#: even though another lookup names c.COUNTRY
KNOWN_WITHOUT = (
    f"EXISTS (SELECT 1 FROM {GRANTS} g WHERE g.REGION_CODE = COUNTRY "
    "AND IS_ROLE_IN_SESSION(g.ROLE_NAME)) OR COUNTRY IN (SELECT c.COUNTRY FROM REF.GEO.OPEN c)"
)
IN_SUBQUERY = (
    f"REGION_CODE IN (SELECT g.REGION_CODE FROM {GRANTS} g "
    "WHERE IS_ROLE_IN_SESSION(g.ROLE_NAME) AND g.REGION_CODE = REGION_CODE)"
)


@dataclass
class YamlCase:
    id: str
    expression: str
    arguments: dict[str, str]
    #: the text at each ACC104 finding's column, in order
    at: list[str] = field(default_factory=list)


YAML_CASES = [
    YamlCase(
        "exists-over-the-mapping-table", SHADOWED, {"REGION_CODE": "VARCHAR"}, ["REGION_CODE AND"]
    ),
    YamlCase("renamed-argument", RENAMED, {"REGION_VALUE": "VARCHAR"}),
    YamlCase("mapping-table-known-without-the-name", KNOWN_WITHOUT, {"COUNTRY": "VARCHAR"}),
    # the outer REGION_CODE is the argument; only the one inside the subquery is shadowed
    YamlCase("in-subquery", IN_SUBQUERY, {"REGION_CODE": "VARCHAR"}, ["REGION_CODE)"]),
]


@pytest.mark.parametrize("case", YAML_CASES, ids=[c.id for c in YAML_CASES])
def test_shadowed_argument_in_a_row_filter_expression(tmp_path: Path, case: YamlCase) -> None:
    write_files(tmp_path, {"estate.yaml": estate(case.expression, case.arguments)})
    project = load_project(tmp_path)
    findings = [f for f in lint_project(project) if f.rule == "ACC104"]
    node = project.loc("datasets", "customers", "row_filter", "expression", "snowflake")
    assert len(findings) == len(case.at), [f.message for f in findings]
    for f, text in zip(findings, case.at, strict=True):
        # located on the reference inside the YAML scalar
        assert (f.location.file, f.location.line) == (node.file, node.line)
        line = source_line(f.location.file, f.location.line)
        assert line is not None and line[f.location.column - 1 :].startswith(text), line
        assert f.object == "datasets.customers"
        assert "mapping table of entitlement dimension region" in f.message
        assert "REGION_CODE_VALUE" in f.fix


def test_acc503_does_not_call_the_mapping_table_a_predicate_reads_unused(tmp_path: Path) -> None:
    write_files(tmp_path, {"estate.yaml": estate(SHADOWED, {"REGION_CODE": "VARCHAR"})})
    findings = lint_project(load_project(tmp_path))
    assert [f.object for f in findings if f.rule == "ACC503"] == []
    # a predicate over another table leaves the dimension unused, as before
    other = "REGION_CODE IN (SELECT o.REGION FROM REF.GEO.OPEN_REGIONS o)"
    write_files(tmp_path / "b", {"estate.yaml": estate(other, {"REGION_CODE": "VARCHAR"})})
    findings = lint_project(load_project(tmp_path / "b"))
    assert [f.object for f in findings if f.rule == "ACC503"] == ["entitlements.region"]


@pytest.mark.parametrize(
    ("expression", "arguments", "shadowed"),
    [(SHADOWED, {"REGION_CODE": "VARCHAR"}, True), (RENAMED, {"REGION_VALUE": "VARCHAR"}, False)],
    ids=["shadowed", "renamed"],
)
def test_verify_reports_the_shadowed_argument(
    tmp_path: Path, expression: str, arguments: dict[str, str], shadowed: bool
) -> None:
    """Executing the predicate and reading it from the model agree (it is the same SQL), so
    the comparison alone passes it: verify reports the shadowing itself, located at the
    compiled body and at the YAML node."""
    write_files(tmp_path, {"estate.yaml": estate(expression, arguments)})
    project = load_project(tmp_path)
    report = verify(project)
    found = [m for m in report.mismatches if m.kind == "shadowed"]
    if not shadowed:
        assert report.mismatches == []
        return
    assert len(found) == 1, report.to_text()
    (m,) = found
    assert (m.dataset, m.platform, m.persona, m.column) == ("customers", "snowflake", None, None)
    assert f"column of {GRANTS}" in m.actual
    node = project.loc("datasets", "customers", "row_filter", "expression", "snowflake")
    assert f"written at {node}" in m.message
    assert any(o.kind == "row access policy" for o in m.objects)
    result = run_cli(["verify", str(tmp_path)])
    assert result.returncode == 1 and "MISMATCH [shadowed]" in result.stdout, (
        result.stdout + result.stderr
    )
    assert "1 mismatch" in result.stdout
