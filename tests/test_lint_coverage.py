"""Lint of the policy code people have: templates, notebooks, scripts, whole repositories, and
never a false all-clear (issue 11, items 1-5).

The fixtures are written in the shapes of public projects, each cited where it is defined;
none is copied from them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import pytest
import yaml

from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from tests.cli import run_cli, run_process
from tests.conftest import ROOT
from tests.estates import write_files
from tests.sql_lint import lint_sql_files

SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def validate_sarif(text: str) -> dict[str, object]:
    doc: dict[str, object] = json.loads(text)
    jsonschema.validate(doc, SARIF_SCHEMA)
    return doc


# --------------------------------------------------------------------------------------------
# fixtures in real-world shapes

#: In the style of entechlog/dbt-snow-mask (macros/snow-mask-ddl/create_masking_policy_*.sql):
#: one macro per policy, `{{node_database}}.{{node_schema}}` names, no `;` before endmacro.
DBT_SNOW_MASK = """\
{% macro create_masking_policy_mp_email(node_database, node_schema) %}

CREATE MASKING POLICY IF NOT EXISTS {{node_database}}.{{node_schema}}.mp_email AS (val string)
  RETURNS string ->
      CASE WHEN CURRENT_ROLE() IN ('ANALYST') THEN val
           WHEN CURRENT_ROLE() IN ('SYSADMIN') THEN SHA2(val)
      ELSE '**********'
      END

{% endmacro %}
"""

#: In the style of GitLab's analytics dbt project (transform/snowflake-dbt/macros/
#: dbt_snowflake_masking/): `{%- macro -%}` whitespace control, lower case, a quoted
#: template database name, `{# #}` comments and an `{% if %}` choosing the masked value.
GITLAB_MASKING = """\
{%- macro create_masking_policy_hide_string(database, schema) -%}
{# masks a string column for every role but the listed ones #}
create masking policy if not exists "{{ database }}".{{ schema }}.hide_string
as (val string)
returns string -> case
    when is_role_in_session('{{ var("unmasked_role", "DATA_OBSERVABILITY") }}') then val
    {%- if var("hash_masked", false) %}
    else md5(val)
    {%- else %}
    else null
    {%- endif %}
end
;
{%- endmacro -%}
"""

#: In the style of infinitelambda/dbt-tags (macros/resources/masking-policies/ and the
#: per-tag `create_masking_policy__<tag>` macros of its getting-started guide): a dispatching
#: macro that builds the query in a `{% set %}` block over a `{% for %}` and runs it, and a
#: policy macro with a `--` comment inside the body.
DBT_TAGS_DISPATCH = """\
{% macro create_masking_policies(debug=False) -%}
  {{ return(adapter.dispatch('create_masking_policies', 'dbt_tags')(debug=debug)) }}
{%- endmacro %}

{% macro default__create_masking_policies(debug=False) %}
  {% set ns = dbt_tags.get_resource_ns() %}
  {% set query -%}
    {% for item in dbt_tags.get_dbt_tags() -%}
      {%- if loop.first -%}
        create schema if not exists {{ ns }};
      {%- endif %}
      {{ context.get("create_masking_policy__" ~ item.tag)(ns) }}
    {%- endfor %}
  {%- endset %}
  {{ log("query: " ~ query, info=True) if execute }}
  {% if not debug %}{% set results = run_query(query) %}{% endif %}
{% endmacro %}
"""
DBT_TAGS_POLICY = """\
{% macro create_masking_policy__pii_email(ns) -%}

  create masking policy if not exists {{ ns }}.pii_email as (val string)
    returns string ->
    case --/ your definition starts here
      when is_role_in_session('PII_READER') then val
      else sha2(val, 256)
    end;

{%- endmacro %}
"""

#: A dbt model with a config() call before its SQL (dbt docs, "config" Jinja function); no
#: policy statement: nothing to report.
DBT_MODEL = """\
{{ config(materialized='table', post_hook="grant select on {{ this }} to role reporter") }}
select customer_id, email from {{ ref('stg_customers') }}
"""

#: In the style of the Databricks Academy and dbdemos notebooks exported as SQL source
#: (File > Export > Source file): cells separated by `-- COMMAND ----------`, markdown cells
#: as `-- MAGIC` lines, and a function cell without a `;`.
NOTEBOOK = """\
-- Databricks notebook source
-- MAGIC %md
-- MAGIC ## Row filters and column masks

-- COMMAND ----------

CREATE OR REPLACE FUNCTION main.hr.region_filter(region STRING)
RETURN IF(is_member('hr_admins'), true, region = 'EMEA')

-- COMMAND ----------

CREATE OR REPLACE FUNCTION main.hr.ssn_mask(ssn STRING)
RETURN CASE WHEN is_account_group_member('hr_admins') THEN ssn ELSE sha1(ssn) END

-- COMMAND ----------

ALTER TABLE main.hr.employees SET ROW FILTER main.hr.region_filter ON (region)
"""

#: A Python notebook exported as source, in the style of the Databricks row-filter labs
#: (`# Databricks notebook source`, `# MAGIC %sql` cells between `# COMMAND` lines).
PY_NOTEBOOK = """\
# Databricks notebook source
# MAGIC %md
# MAGIC ### Row filters

# COMMAND ----------

user = dbutils.widgets.get("user")

# COMMAND ----------

# MAGIC %sql
# MAGIC CREATE OR REPLACE FUNCTION main.sec.region_filter(region STRING)
# MAGIC RETURN IF(is_member('admins'), true, region = 'EMEA')

# COMMAND ----------

# MAGIC %sql
# MAGIC ALTER TABLE main.sales.orders SET ROW FILTER main.sec.region_filter ON (region)
"""

#: A Python notebook that sets its policies up from Python cells, in the shape of public
#: Unity Catalog notebooks: an f-string `spark.sql(f\"\"\"...\"\"\")` with a widget-driven
#: catalog, a plain one-line `spark.sql("...")`, a query passed as a variable (not followed),
#: and a backslash-escaped literal whose positions cannot be kept (reported).
PY_SPARK_NOTEBOOK = """\
# Databricks notebook source
catalog = dbutils.widgets.get("catalog")

# COMMAND ----------

spark.sql(f\"\"\"
  CREATE OR REPLACE FUNCTION {catalog}.sec.ssn_mask(ssn STRING)
  RETURN CASE WHEN is_member('hr_admins') THEN ssn ELSE sha1(ssn) END
\"\"\")

# COMMAND ----------

spark.sql("ALTER TABLE main.hr.employees ALTER COLUMN ssn SET MASK main.sec.ssn_mask")
q = "SELECT * FROM main.hr.employees"
display(spark.sql(q))

# COMMAND ----------

spark.sql("CREATE OR REPLACE FUNCTION main.sec.f(r STRING) RETURN is_member(\\'x\\')")
"""

#: A Snowflake worksheet in the style of the Snowflake documentation's masking examples:
#: `//` comments, USE statements, a `$$` function body and an EXECUTE IMMEDIATE block.
WORKSHEET = """\
// governance worksheet: run as PII_ADMIN
USE ROLE PII_ADMIN;
USE SCHEMA GOV.POLICIES;

CREATE OR REPLACE FUNCTION GOV.POLICIES.EMAIL_DOMAIN(val VARCHAR)
  RETURNS VARCHAR
  AS $$ SPLIT_PART(val, '@', 2) $$;

EXECUTE IMMEDIATE $$
BEGIN
  CREATE OR REPLACE MASKING POLICY GOV.POLICIES.EMAIL_MASK AS (val VARCHAR) RETURNS VARCHAR ->
    CASE WHEN CURRENT_ROLE() = 'SUPPORT' THEN val ELSE '***' END;
END;
$$;
"""

#: A Databricks dynamic view in the style of the Unity Catalog documentation's "dynamic
#: views" examples (is_member / is_account_group_member in CASE and WHERE), and a view that
#: only computes an md5 surrogate key (dbt_utils.generate_surrogate_key style): not a policy.
DYNAMIC_VIEW = """\
CREATE OR REPLACE VIEW main.hr.v_employees AS
SELECT
  CASE WHEN is_member('hr_admins') THEN ssn ELSE sha1(ssn) END AS ssn,
  CASE WHEN is_account_group_member('hr') THEN email ELSE sha2(email, 256) END AS email
FROM main.hr.employees
WHERE is_account_group_member('emea') OR region <> 'EMEA';
CREATE OR REPLACE VIEW main.hr.v_keys AS SELECT md5(id) AS k FROM main.hr.employees;
ALTER TABLE main.hr.employees SET ROW FILTER main.hr.f ON (region);
"""

#: A Snowflake secure view in the style of Snowflake's "secure views" documentation; a plain
#: (not secure) view is not read as a policy.
SECURE_VIEW = """\
CREATE OR REPLACE SECURE VIEW GOV.V.CUSTOMERS AS
SELECT CASE WHEN CURRENT_ROLE() IN ('SUPPORT') THEN EMAIL ELSE MD5(EMAIL) END AS EMAIL
FROM SALES.CRM.CUSTOMERS;
CREATE VIEW GOV.V.PLAIN AS SELECT CASE WHEN CURRENT_ROLE() = 'X' THEN 1 END AS A FROM T;
"""

GOOD_SF = """\
CREATE MASKING POLICY gov.pol.notes AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN IS_ROLE_IN_SESSION('CLINICAL') THEN val ELSE '***' END;
"""
BAD_ROLE_SF = """\
CREATE MASKING POLICY gov.pol.email AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN CURRENT_ROLE() = 'SUPPORT' THEN val ELSE '***' END;
"""
#: a body whose CASE has no END, then a good policy after it
BROKEN_SF = """\
CREATE MASKING POLICY gov.pol.broken AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN IS_ROLE_IN_SESSION('A') THEN val ELSE '***';
CREATE MASKING POLICY gov.pol.after AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE '***' END;
"""


@dataclass
class Case:
    id: str
    files: dict[str, str]
    #: (file, line, rule, text at the column) for every finding, in order
    at: list[tuple[str, int, str, str]]
    #: words each ACC001 message must contain
    says: list[str] = field(default_factory=list)


CASES = [
    Case(
        "dbt_snow_mask macro",
        {"macros/create_masking_policy_mp_email.sql": DBT_SNOW_MASK},
        [
            ("macros/create_masking_policy_mp_email.sql", 5, "ACC101", "CURRENT_ROLE()"),
            ("macros/create_masking_policy_mp_email.sql", 6, "ACC101", "CURRENT_ROLE()"),
            ("macros/create_masking_policy_mp_email.sql", 6, "ACC201", "SHA2(val)"),
        ],
    ),
    Case(
        "gitlab-style macro: every branch of an if is linted",
        {"macros/hide_string.sql": GITLAB_MASKING},
        [
            ("macros/hide_string.sql", 8, "ACC201", "md5(val)"),
            ("macros/hide_string.sql", 8, "ACC204", "md5(val)"),
        ],
    ),
    Case("dbt model with config()", {"models/customers.sql": DBT_MODEL}, []),
    Case(
        # dbt's own block tags (a generic test; a custom materialization, in the style of dbt
        # packages that deploy policies as a `masking_policy` materialization)
        "dbt test and materialization blocks",
        {
            "tests/generic/is_masked.sql": """\
            {% test is_masked(model, column_name) %}
            select * from {{ model }} where {{ column_name }} not like '***%'
            {% endtest %}
            """,
            "macros/materializations/masking_policy.sql": """\
            {% materialization masking_policy, adapter='snowflake' %}
            {% set target_relation = this %}
            create masking policy {{ this }} as (val string) returns string ->
              case when current_role() = 'A' then val end;
            {% endmaterialization %}
            """,
        },
        [("macros/materializations/masking_policy.sql", 4, "ACC101", "current_role()")],
    ),
    Case(
        "dbt-tags dispatcher and policy macro",
        {
            "macros/create_masking_policies.sql": DBT_TAGS_DISPATCH,
            "macros/mp-ddl/create_masking_policy__pii_email.sql": DBT_TAGS_POLICY,
        },
        [("macros/mp-ddl/create_masking_policy__pii_email.sql", 7, "ACC201", "sha2(val, 256)")],
    ),
    Case(
        "template syntax error",
        {"macros/broken.sql": "{% macro m() %}\nCREATE MASKING POLICY p AS (v string)\n"},
        [("macros/broken.sql", 1, "ACC001", "{% macro m() %}")],
        ["Jinja template", "endmacro"],
    ),
    Case(
        "template expression where a keyword belongs",
        {
            "macros/kw.sql": """\
            {% macro m(kind) %}
            create {{ kind }} masking policy gov.pol.x as (val string) returns string -> val
            {% endmacro %}
            """
        },
        [("macros/kw.sql", 2, "ACC001", "{{ kind }}")],
        ["{{ kind }}", "cannot be resolved"],
    ),
    Case(
        "template expression in an unparsable body is named",
        {
            "macros/cond.sql": """\
            {% macro m() %}
            create masking policy gov.pol.x as (val string) returns string ->
              case when {{ allowed() }} then val else
            {% endmacro %}
            """
        },
        [("macros/cond.sql", 3, "ACC001", "else")],
        ["{{ allowed() }}", "3:13", "cannot resolve"],
    ),
    Case(
        "a macro call where an expression stands in a policy body",
        {
            "macros/mm.sql": """\
            {% macro create_mp(ns) %}
            create masking policy {{ ns }}.email as (val string) returns string ->
              case when is_role_in_session('{{ var("reader") }}') then val
                   else {{ mask_hash('val') }} end
            {% endmacro %}
            """
        },
        [("macros/mm.sql", 4, "ACC001", "{{ mask_hash('val') }}")],
        ["`{{ mask_hash('val') }}`", "cannot resolve"],
    ),
    Case(
        "notebook: COMMAND lines end statements",
        {"notebooks/governance.sql": NOTEBOOK},
        [
            ("notebooks/governance.sql", 8, "ACC102", "is_member('hr_admins')"),
            ("notebooks/governance.sql", 13, "ACC201", "sha1(ssn)"),
            ("notebooks/governance.sql", 13, "ACC204", "sha1(ssn)"),
        ],
    ),
    Case(
        "Python notebook: %sql cells",
        {"notebooks/rls.py": PY_NOTEBOOK},
        [("notebooks/rls.py", 13, "ACC102", "is_member('admins')")],
    ),
    Case(
        "Python notebook: spark.sql strings, f-strings, an escaped literal",
        {"notebooks/setup.py": PY_SPARK_NOTEBOOK},
        [
            ("notebooks/setup.py", 8, "ACC102", "is_member('hr_admins')"),
            ("notebooks/setup.py", 8, "ACC201", "sha1(ssn)"),
            ("notebooks/setup.py", 8, "ACC204", "sha1(ssn)"),
            ("notebooks/setup.py", 19, "ACC001", '"CREATE OR REPLACE FUNCTION main.sec.f'),
        ],
        ["backslash escapes"],
    ),
    Case(
        "worksheet: // comments, $$ bodies, EXECUTE IMMEDIATE",
        {"worksheets/governance.sql": WORKSHEET},
        [("worksheets/governance.sql", 12, "ACC101", "CURRENT_ROLE()")],
    ),
    Case(
        "broken statement among good ones: the rest is linted",
        {"a_good.sql": GOOD_SF, "b_broken.sql": BROKEN_SF, "c_bad.sql": BAD_ROLE_SF},
        [
            ("b_broken.sql", 2, "ACC001", "'***'"),
            ("b_broken.sql", 4, "ACC101", "CURRENT_ROLE()"),
            ("c_bad.sql", 2, "ACC101", "CURRENT_ROLE()"),
        ],
        ["could not be analysed", "Expected END"],
    ),
    Case(
        "unterminated quote: the rest of the file is reported",
        {"q.snowflake.sql": BAD_ROLE_SF + "SELECT 'oops;\n" + GOOD_SF},
        [
            ("q.snowflake.sql", 2, "ACC101", "CURRENT_ROLE()"),
            ("q.snowflake.sql", 3, "ACC001", "SELECT 'oops;"),
        ],
        ["rest of the file", "unterminated quoted text", "the one at 5:"],
    ),
    Case(
        "function of unknown dialect",
        {"u.sql": "CREATE FUNCTION f(x INT) RETURNS INT LANGUAGE PYTHON AS $$ return x $$;\n"},
        [("u.sql", 1, "ACC001", "CREATE")],
        ["--dialect"],
    ),
    Case(
        "Databricks dynamic view",
        {"views.databricks.sql": DYNAMIC_VIEW},
        [
            ("views.databricks.sql", 3, "ACC102", "is_member('hr_admins')"),
            ("views.databricks.sql", 3, "ACC201", "sha1(ssn)"),
            ("views.databricks.sql", 3, "ACC204", "sha1(ssn)"),
            ("views.databricks.sql", 4, "ACC201", "sha2(email, 256)"),
        ],
    ),
    Case(
        "Snowflake secure view",
        {"views.snowflake.sql": SECURE_VIEW},
        [
            ("views.snowflake.sql", 2, "ACC101", "CURRENT_ROLE()"),
            ("views.snowflake.sql", 2, "ACC201", "MD5(EMAIL)"),
            ("views.snowflake.sql", 2, "ACC204", "MD5(EMAIL)"),
        ],
    ),
    Case(
        "dynamic view that cannot be parsed",
        {
            "broken_view.databricks.sql": (
                "CREATE VIEW main.hr.v AS SELECT CASE WHEN is_member('a') THEN x FROM t;\n"
            )
        },
        [("broken_view.databricks.sql", 1, "ACC001", "CREATE VIEW")],
        ["decides access", "could not be analysed"],
    ),
    Case(
        "no policy statement needs no dialect",
        {"t.sql": "CREATE TABLE t (a INT);\nGRANT SELECT ON t TO ROLE r;\n"},
        [],
    ),
]


def _lint(root: Path, names: list[str]) -> list[Finding]:
    findings = lint_sql_files(root, names)
    for f in findings:  # the text at the column, read from the file as a user sees it
        line = source_line(str(root / f.location.file), f.location.line)
        assert line is not None
        object.__setattr__(f, "reason", line[f.location.column - 1 :])
    return findings


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_sql_in_real_world_shapes(tmp_path: Path, case: Case) -> None:
    write_files(tmp_path, case.files)
    findings = _lint(tmp_path, sorted(case.files))
    got = [(f.location.file, f.location.line, f.rule, f.reason) for f in findings]
    assert len(got) == len(case.at), got
    for (file, line, rule, text), (gfile, gline, grule, gtext) in zip(case.at, got, strict=True):
        assert (gfile, gline, grule) == (file, line, rule)
        assert gtext.startswith(text), (gtext, text)
    for f in findings:
        assert "__j" not in f.message + f.object + f.fix  # placeholders never reach a user
        assert "<class" not in f.message  # nor sqlglot's exception texts
        if f.rule == "ACC001":
            for word in case.says:
                assert word in f.message, f.message


def test_a_jinja_comment_can_suppress(tmp_path: Path) -> None:
    macro = DBT_SNOW_MASK.replace(
        "\nCREATE MASKING POLICY",
        "{# accord: ignore ACC101, ACC201 legacy policy, replaced in Q3 #}\nCREATE MASKING POLICY",
    )
    write_files(tmp_path, {"m.sql": macro})
    findings = _lint(tmp_path, ["m.sql"])
    assert findings and all(f.suppressed for f in findings)


def test_template_positions_point_into_the_template(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.sql": DBT_SNOW_MASK})
    [first, *_] = _lint(tmp_path, ["m.sql"])
    assert (first.location.line, first.location.column) == (5, 17)
    assert first.object == "{{node_database}}.{{node_schema}}.mp_email"
    assert "{{node_database}}.{{node_schema}}.mp_email calls CURRENT_ROLE()" in first.message


# --------------------------------------------------------------------------------------------
# the command line: batches, exit codes, machine formats


def test_batch_with_a_broken_file_reports_every_good_files_findings(tmp_path: Path) -> None:
    files = {"a_good.sql": GOOD_SF, "b_broken.sql": BROKEN_SF, "c_bad.sql": BAD_ROLE_SF}
    write_files(tmp_path, files)
    run = run_cli(["lint", *sorted(files), "--format", "json"], cwd=tmp_path)
    assert run.returncode == 1, run.stderr  # findings only: 1, not 2
    doc = json.loads(run.stdout)
    assert "errors" not in doc
    got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
    assert got == [
        ("b_broken.sql", 2, "ACC001"),
        ("b_broken.sql", 4, "ACC101"),
        ("c_bad.sql", 2, "ACC101"),
    ]
    text = run_cli(["lint", *sorted(files)], cwd=tmp_path)
    assert "no findings" not in text.stdout
    assert text.stdout.rstrip().endswith("accord lint: 3 errors, 0 warnings in 3 files")


def test_no_findings_is_never_said_of_an_unread_policy(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.sql": "{% macro m() %}\nCREATE MASKING POLICY p AS (v string)\n"})
    run = run_cli(["lint", "m.sql"], cwd=tmp_path)
    assert run.returncode == 1
    assert "no findings" not in run.stdout and "ACC001 unanalysed-policy" in run.stdout


INVALID_MODEL = {"p/a.yaml": "version: 1\nmasks:\n  m: {strategy: hash, ignore: {ACC999: x}}\n"}


@pytest.mark.parametrize(
    ("files", "args"),
    [
        pytest.param(INVALID_MODEL, ["p"], id="invalid-model"),
        pytest.param({**INVALID_MODEL, "c_bad.sql": BAD_ROLE_SF}, ["p", "c_bad.sql"], id="mixed"),
        pytest.param(
            {"x.sql": "-- accord: ignore ACC777 why\n" + BAD_ROLE_SF}, ["x.sql"], id="bad-ignore"
        ),
        pytest.param({}, ["missing.sql"], id="missing-file"),
    ],
)
def test_machine_formats_print_one_document_on_exit_2(
    tmp_path: Path, files: dict[str, str], args: list[str]
) -> None:
    write_files(tmp_path, files)
    run = run_cli(["lint", *args, "--format", "json"], cwd=tmp_path)
    assert run.returncode == 2
    doc = json.loads(run.stdout)
    assert doc["errors"] and set(doc["errors"][0]) == {"file", "line", "column", "message"}
    if "c_bad.sql" in files:  # the other files are still linted
        assert [f["rule"] for f in doc["findings"]] == ["ACC101"]
    sarif = run_cli(["lint", *args, "--format", "sarif"], cwd=tmp_path)
    assert sarif.returncode == 2
    run0 = validate_sarif(sarif.stdout)["runs"][0]  # type: ignore[index]
    invocation = run0["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == [e["message"] for e in doc["errors"]]
    located = [r for r in run0["results"] if r["ruleId"] == "input-error"]
    region = located[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (
        doc["errors"][0]["line"],
        doc["errors"][0]["column"],
    )
    github = run_cli(["lint", *args, "--format", "github"], cwd=tmp_path)
    assert github.returncode == 2
    errors = [ln for ln in github.stdout.splitlines() if "title=accord input error" in ln]
    assert len(errors) == len(doc["errors"]) and errors[0].startswith("::error file=")


def test_sarif_of_a_clean_run_says_execution_succeeded(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.sql": DBT_SNOW_MASK})
    run = run_cli(["lint", "m.sql", "--format", "sarif"], cwd=tmp_path)
    assert run.returncode == 1
    run0 = validate_sarif(run.stdout)["runs"][0]  # type: ignore[index]
    assert run0["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]
    assert {r["ruleId"] for r in run0["results"]} == {"ACC101", "ACC201"}


# --------------------------------------------------------------------------------------------
# whole repositories


def test_lint_dot_in_a_dbt_repository_finds_macros_notebooks_and_scripts(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "dbt_project.yml": "name: shop\nversion: '1.0'\nmacro-paths: ['macros']\n",
            "models/schema.yml": "version: 2\nmodels: [{name: customers}]\n",
            "models/customers.sql": DBT_MODEL,
            "macros/snow_mask/create_masking_policy_mp_email.sql": DBT_SNOW_MASK,
            "macros/hide_string.sql": GITLAB_MASKING,
            "notebooks/governance.sql": NOTEBOOK,
            "notebooks/rls.py": PY_NOTEBOOK,
            "scripts/load.py": "import os\nprint(os.environ['X'])\n",  # not a notebook
            "scripts/worksheet.sql": WORKSHEET,
            "target/compiled/ignored.sql": BAD_ROLE_SF,  # dbt's build output: not walked
            "dbt_packages/pkg/macros/x.sql": BAD_ROLE_SF,
        },
    )
    run = run_cli(["lint", ".", "--format", "json"], cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    files = sorted({f["file"] for f in json.loads(run.stdout)["findings"]})
    assert files == [
        "macros/hide_string.sql",
        "macros/snow_mask/create_masking_policy_mp_email.sql",
        "notebooks/governance.sql",
        "notebooks/rls.py",
        "scripts/worksheet.sql",
    ]
    summary = run_cli(["lint", "."], cwd=tmp_path).stdout.splitlines()[-1]
    assert summary == "accord lint: 10 errors, 0 warnings in 6 files"


def test_repository_with_a_policies_directory_lints_both(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "examples" / "as-found", tmp_path / "policies")
    write_files(tmp_path, {"sql/c_bad.sql": BAD_ROLE_SF, "README.md": "# repo\n"})
    run = run_cli(["lint", ".", "--format", "json"], cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    files = {f["file"].split("/")[0] for f in json.loads(run.stdout)["findings"]}
    assert files == {"policies", "sql"}


def test_plain_yaml_lint_never_imports_jinja2() -> None:
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "try:\n"
        "    main(['lint', 'policies', 'examples/sql/heart-of-problem/lakehouse.databricks.sql'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('jinja2' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.stdout.strip().splitlines()[-1] == "False", run.stderr


# --------------------------------------------------------------------------------------------
# accord lints its own output


def test_own_compile_output_and_migration_history_lint_clean(tmp_path: Path) -> None:
    out = tmp_path / "compiled"
    assert run_cli(["compile", "policies", "--out", str(out), "--target", "all"]).returncode == 0
    compiled = sorted(str(p) for p in out.glob("*/*.sql"))
    migrations = sorted(str(p) for p in (ROOT / "migrations").glob("*/*.sql"))
    assert compiled and migrations
    run = run_cli(["lint", *compiled, *migrations])
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.fullmatch(r"accord lint: no findings in \d+ files \(\d+ suppressed\)\n", run.stdout)
    # what is suppressed is the base model's defects a rollback restores, each with its reason
    shown = json.loads(
        run_cli(["lint", *migrations, "--format", "json", "--show-suppressed"]).stdout
    )
    assert shown["findings"] and all(
        f["file"].endswith(".rollback.sql") and "restores the base model" in f["reason"]
        for f in shown["findings"]
    )


def test_pre_commit_sql_hook_runs_clean_on_this_repository() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "accord-lint-sql")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    local = next(h for r in config["repos"] for h in r["hooks"] if h["id"] == "accord-lint-sql")
    assert local["entry"] == hook["entry"] and local["files"] == hook["files"]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    files = [
        f for f in tracked if re.search(hook["files"], f) and not re.search(local["exclude"], f)
    ]
    assert any(f.startswith("migrations/") for f in files)
    run = run_cli([*hook["entry"].split()[1:], *files])
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_repository_walk_never_opens_a_fifo(tmp_path: Path) -> None:
    write_files(tmp_path, {"sql/c_bad.sql": BAD_ROLE_SF})
    os.mkfifo(tmp_path / "sql" / "pipe.py")  # a .py is opened to see if it is a notebook
    run = run_process(["lint", "."], cwd=tmp_path, timeout=120)  # a hang must fail, not stall
    assert run.returncode == 1 and "ACC101" in run.stdout
