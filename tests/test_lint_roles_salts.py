"""Lint round three (issue 21, items 2-4), table-driven on the shapes public projects write:

* ACC103 `invoker-role`: INVOKER_ROLE() and IS_GRANTED_TO_INVOKER_ROLE() in Snowflake policy
  bodies (plain SQL, a notebook export, a dbt macro, a secure view, a YAML predicate);
* a public value is not a salt: a hash of the masked value mixed only with another column of
  the row or with context functions (CURRENT_ACCOUNT(), current_catalog(), ...) is ACC201;
* a template expression standing for a name is one name in a signature and a body
  (dbt-snow-mask's `{{masked_column}}`).

Each fixture names the page or project whose shape it imitates; none is copied from it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.sqlscan.template import read_template
from tests.estates import write_files
from tests.sql_lint import lint_sql_files
from tests.test_lint_rules import SF_EXPR, dataset_patch, expr, lint_estate

# --------------------------------------------------------------------------------------------
# fixtures

#: The masking policy example of Snowflake's IS_GRANTED_TO_INVOKER_ROLE page
#: (docs.snowflake.com/en/sql-reference/functions/is_granted_to_invoker_role).
SF_GRANTED_TO_INVOKER = """\
CREATE OR REPLACE MASKING POLICY mask_string AS
(val string) RETURNS string ->
CASE
  WHEN IS_GRANTED_TO_INVOKER_ROLE('ANALYST') then val
  ELSE '*******'
END;
"""

#: The hash example of Snowflake's INVOKER_ROLE page
#: (docs.snowflake.com/en/sql-reference/functions/invoker_role): an invoker check and an
#: unsalted SHA2.
SF_INVOKER_HASH = """\
CREATE OR REPLACE MASKING POLICY mask_string AS
(val string) RETURNS string ->
CASE
  WHEN INVOKER_ROLE() IN ('ANALYST') THEN val
  ELSE SHA2(val)
END;
"""

#: A row access policy with a mapping-table lookup (Snowflake's "Using row access policies"
#: salesmanager_regions example), keyed on the invoker's role instead of the session's.
SF_ROW_LOOKUP = """\
CREATE OR REPLACE ROW ACCESS POLICY security.sales_policy
AS (sales_region varchar) RETURNS BOOLEAN ->
  'SALES_EXECUTIVE_ROLE' = CURRENT_ROLE()
  OR EXISTS (
    SELECT 1 FROM salesmanager_regions
    WHERE sales_manager = INVOKER_ROLE()
      AND region = sales_region
  );
"""

#: A Snowflake secure view in the style of Snowflake's "secure views" documentation.
SF_SECURE_VIEW = """\
CREATE OR REPLACE SECURE VIEW GOV.V.CUSTOMERS AS
SELECT CASE WHEN IS_GRANTED_TO_INVOKER_ROLE('SUPPORT') THEN EMAIL ELSE '***' END AS EMAIL
FROM SALES.CRM.CUSTOMERS;
"""

#: In the style of entechlog/dbt-snow-mask (macros/snow-mask-ddl/create_masking_policy_*.sql).
DBT_SNOW_MASK_INVOKER = """\
{% macro create_masking_policy_mp_phone(node_database, node_schema) %}

CREATE MASKING POLICY IF NOT EXISTS {{node_database}}.{{node_schema}}.mp_phone AS (val string)
  RETURNS string ->
      CASE WHEN IS_GRANTED_TO_INVOKER_ROLE('ANALYST') THEN val
      ELSE '**********'
      END

{% endmacro %}
"""

#: A notebook exported as source (`-- COMMAND ----------` cells), holding Snowflake DDL.
NOTEBOOK_INVOKER = """\
-- Databricks notebook source
-- MAGIC %md
-- MAGIC ## Snowflake masking policies

-- COMMAND ----------

CREATE OR REPLACE MASKING POLICY GOV.POL.EMAIL_MASK AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN INVOKER_ROLE() = 'SUPPORT' THEN val ELSE '***' END
"""

SF_MASK = """\
CREATE OR REPLACE MASKING POLICY GOV.POL.SUBJECT_MASK AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN IS_ROLE_IN_SESSION('UNBLINDED') THEN val ELSE {expr} END;
"""
DBX_MASK = """\
CREATE OR REPLACE FUNCTION gov.pol.subject_mask(v STRING)
  RETURN CASE WHEN is_account_group_member('unblinded') THEN v ELSE {expr} END;
"""

#: A conditional masking policy (Snowflake's "conditional masking" page: the masked value
#: and a second column of the row as arguments), the second column mixed into the hash.
SF_CONDITIONAL = """\
CREATE OR REPLACE MASKING POLICY GOV.POL.EMAIL_VIS AS (email VARCHAR, visibility STRING)
  RETURNS VARCHAR ->
  CASE WHEN IS_ROLE_IN_SESSION('ADMIN') THEN email
       ELSE SHA2(email || visibility, 256) END;
"""

#: A Databricks mask with USING COLUMNS (Unity Catalog "row filters and column masks" page),
#: the extra column mixed into the hash.
DBX_USING_COLUMNS = """\
CREATE OR REPLACE FUNCTION gov.pol.ssn_mask(ssn STRING, region STRING)
  RETURN CASE WHEN is_account_group_member('hr') THEN ssn
              ELSE sha2(concat(ssn, region), 256) END;
ALTER TABLE main.hr.employees ALTER COLUMN ssn SET MASK gov.pol.ssn_mask USING COLUMNS (region);
"""

#: entechlog/dbt-snow-mask's conditional policy macros (macros/snow-mask-ddl/
#: create_masking_policy_mp_conditional_*.sql): the masked value is `{{masked_column}}` in the
#: signature and in the body.
DBT_SNOW_MASK_CONDITIONAL = """\
{% macro create_masking_policy_mp_conditional_pii(node_database, node_schema, masked_column) %}

CREATE MASKING POLICY IF NOT EXISTS {{node_database}}.{{node_schema}}.mp_conditional_pii AS (
        {{masked_column}} string,
        my_conditional_col_1 string
    ) RETURNS string ->
        CASE
            WHEN IS_ROLE_IN_SESSION('ANALYST') AND my_conditional_col_1='foo' THEN {{masked_column}}
            WHEN IS_ROLE_IN_SESSION('SYSADMIN') THEN {body_hash}
        ELSE '**********'
        END

{% endmacro %}
"""


def snow_mask(body_hash: str) -> str:
    return DBT_SNOW_MASK_CONDITIONAL.replace("{body_hash}", body_hash)


@dataclass
class Case:
    id: str
    files: dict[str, str]
    #: (file, line, rule, text at the column) for every finding of the rules looked at
    at: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: text each finding's message contains
    says: str = ""
    rules: tuple[str, ...] = ("ACC101", "ACC103", "ACC201", "ACC205")


CASES = [
    # ---- ACC103 invoker-role ------------------------------------------------------------------
    Case(
        "Snowflake docs: IS_GRANTED_TO_INVOKER_ROLE in a masking policy (not ACC101)",
        {"m.snowflake.sql": SF_GRANTED_TO_INVOKER},
        [("m.snowflake.sql", 4, "ACC103", "IS_GRANTED_TO_INVOKER_ROLE('ANALYST')")],
        "view's owner role",
    ),
    Case(
        "Snowflake docs: INVOKER_ROLE with an unsalted SHA2",
        {"m.snowflake.sql": SF_INVOKER_HASH},
        [
            ("m.snowflake.sql", 4, "ACC103", "INVOKER_ROLE()"),
            ("m.snowflake.sql", 5, "ACC201", "SHA2(val)"),
        ],
    ),
    Case(
        "row access policy: mapping lookup on INVOKER_ROLE, CURRENT_ROLE stays ACC101",
        {"r.snowflake.sql": SF_ROW_LOOKUP},
        [
            ("r.snowflake.sql", 3, "ACC101", "CURRENT_ROLE()"),
            ("r.snowflake.sql", 6, "ACC103", "INVOKER_ROLE()"),
        ],
    ),
    Case(
        "secure view",
        {"v.snowflake.sql": SF_SECURE_VIEW},
        [("v.snowflake.sql", 2, "ACC103", "IS_GRANTED_TO_INVOKER_ROLE('SUPPORT')")],
    ),
    Case(
        "dbt-snow-mask macro",
        {"macros/create_masking_policy_mp_phone.sql": DBT_SNOW_MASK_INVOKER},
        [("macros/create_masking_policy_mp_phone.sql", 5, "ACC103", "IS_GRANTED_TO_INVOKER_ROLE(")],
    ),
    Case(
        "notebook export",
        {"notebooks/masks.snowflake.sql": NOTEBOOK_INVOKER},
        [("notebooks/masks.snowflake.sql", 8, "ACC103", "INVOKER_ROLE()")],
    ),
    Case(
        "near-miss: IS_ROLE_IN_SESSION, the names in a comment and a string, a plain view",
        {
            "m.snowflake.sql": """\
            -- not INVOKER_ROLE() here
            CREATE MASKING POLICY gov.pol.notes AS (val VARCHAR) RETURNS VARCHAR ->
              CASE WHEN IS_ROLE_IN_SESSION('CLINICAL') THEN val ELSE 'INVOKER_ROLE()' END;
            CREATE VIEW gov.v.plain AS SELECT INVOKER_ROLE() AS r FROM t;
            """
        },
    ),
    Case(
        "near-miss: a suppression with its reason (a policy that follows the view's owner)",
        {
            "m.snowflake.sql": """\
            -- accord: ignore ACC103 unmasked for the reporting views owned by REPORTING_OWNER
            CREATE MASKING POLICY gov.pol.notes AS (val VARCHAR) RETURNS VARCHAR ->
              CASE WHEN IS_GRANTED_TO_INVOKER_ROLE('REPORTING_OWNER') THEN val ELSE '***' END;
            """
        },
    ),
    # ---- ACC201: a public value is not a salt -------------------------------------------------
    Case(
        "the account name",
        {"m.snowflake.sql": SF_MASK.format(expr="SHA2(val || CURRENT_ACCOUNT(), 256)")},
        [("m.snowflake.sql", 2, "ACC201", "SHA2(val || CURRENT_ACCOUNT(), 256)")],
        "CURRENT_ACCOUNT()",
    ),
    Case(
        "the catalog (Databricks)",
        {"f.databricks.sql": DBX_MASK.format(expr="sha2(concat(v, current_catalog()), 256)")},
        [("f.databricks.sql", 2, "ACC201", "sha2(concat(v, current_catalog()), 256)")],
        "CURRENT_CATALOG()",
    ),
    Case(
        "the metastore (Databricks)",
        {"f.databricks.sql": DBX_MASK.format(expr="sha2(concat(v, current_metastore()), 256)")},
        [("f.databricks.sql", 2, "ACC201", "sha2(")],
        "CURRENT_METASTORE()",
    ),
    Case(
        "database and schema, with a separator literal (ACC201, not ACC205)",
        {
            "m.snowflake.sql": SF_MASK.format(
                expr="SHA2(CURRENT_DATABASE() || '|' || val || CURRENT_SCHEMA(), 256)"
            )
        },
        [("m.snowflake.sql", 2, "ACC201", "SHA2(")],
        "CURRENT_DATABASE() and CURRENT_SCHEMA()",
    ),
    Case(
        "session context",
        {
            "m.snowflake.sql": SF_MASK.format(
                expr="SHA2(val || CURRENT_REGION() || INVOKER_SHARE())"
            )
        },
        [("m.snowflake.sql", 2, "ACC201", "SHA2(")],
    ),
    Case(
        "another column of the row (conditional masking policy)",
        {"m.snowflake.sql": SF_CONDITIONAL},
        [("m.snowflake.sql", 4, "ACC201", "SHA2(email || visibility, 256)")],
        "column visibility",
    ),
    Case(
        "another column of the row (Databricks USING COLUMNS)",
        {"f.databricks.sql": DBX_USING_COLUMNS},
        [("f.databricks.sql", 3, "ACC201", "sha2(concat(ssn, region), 256)")],
        "column region",
    ),
    Case(
        "near-miss: a salt function, qualified or not, possibly through SUBSTR",
        {
            "a.snowflake.sql": SF_MASK.format(expr="SHA2(val || GOV.POL.SUBJECT_SALT(), 256)"),
            "b.snowflake.sql": SF_MASK.format(expr="SHA2(val || subject_salt(), 256)"),
            "c.snowflake.sql": SF_MASK.format(
                expr="SHA2(val || CURRENT_ACCOUNT() || SUBSTR(GOV.POL.SALT(), 1, 16), 256)"
            ),
        },
    ),
    Case(
        "near-miss: Databricks secret()",
        {"f.databricks.sql": DBX_MASK.format(expr="sha2(concat(v, secret('gov', 'salt')), 256)")},
    ),
    Case(
        "a literal stays ACC205",
        {"m.snowflake.sql": SF_MASK.format(expr="SHA2(val || 'pepper', 256)")},
        [("m.snowflake.sql", 2, "ACC205", "SHA2(")],
    ),
    # ---- templated parameter names ------------------------------------------------------------
    Case(
        "dbt-snow-mask: SHA2({{masked_column}})",
        {"macros/mp_conditional_pii.sql": snow_mask("SHA2({{masked_column}})")},
        [("macros/mp_conditional_pii.sql", 9, "ACC201", "SHA2({{masked_column}})")],
        "masked value {{masked_column}}",
    ),
    Case(
        "dbt-snow-mask as published: CURRENT_ROLE() and SHA2({{masked_column}}) both found",
        {
            "macros/mp_conditional_pii.sql": snow_mask("SHA2({{masked_column}})").replace(
                "IS_ROLE_IN_SESSION('SYSADMIN')", "CURRENT_ROLE() IN ('SYSADMIN')"
            )
        },
        [
            ("macros/mp_conditional_pii.sql", 9, "ACC101", "CURRENT_ROLE()"),
            ("macros/mp_conditional_pii.sql", 9, "ACC201", "SHA2({{masked_column}})"),
        ],
    ),
    Case(
        "dbt-snow-mask: the body spells the expression with spaces",
        {"macros/mp_conditional_pii.sql": snow_mask("SHA2({{ masked_column }}, 256)")},
        [("macros/mp_conditional_pii.sql", 9, "ACC201", "SHA2({{ masked_column }}, 256)")],
    ),
    Case(
        "dbt-snow-mask: mixed with the row's other column",
        {
            "macros/mp_conditional_pii.sql": snow_mask(
                "SHA2({{masked_column}} || my_conditional_col_1)"
            )
        },
        [("macros/mp_conditional_pii.sql", 9, "ACC201", "SHA2(")],
        "column my_conditional_col_1",
    ),
    Case(
        "near-miss: dbt-snow-mask salted with a templated salt function",
        {
            "macros/mp_conditional_pii.sql": snow_mask(
                "SHA2({{masked_column}} || {{node_database}}.{{node_schema}}.pii_salt(), 256)"
            )
        },
    ),
    Case(
        "near-miss: dbt-snow-mask hashing another template expression",
        {"macros/mp_conditional_pii.sql": snow_mask("SHA2({{other_column}})")},
    ),
]


def _lint(root: Path, names: list[str]) -> list[Finding]:
    return lint_sql_files(root, names)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_roles_and_salts_in_real_world_shapes(tmp_path: Path, case: Case) -> None:
    files = {name: textwrap.dedent(text) for name, text in case.files.items()}
    write_files(tmp_path, files)
    all_findings = _lint(tmp_path, sorted(files))
    findings = [f for f in all_findings if f.rule in case.rules and not f.suppressed]
    got = []
    for f in findings:
        line = source_line(str(tmp_path / f.location.file), f.location.line)
        assert line is not None
        got.append((f.location.file, f.location.line, f.rule, line[f.location.column - 1 :]))
    assert len(got) == len(case.at), got
    for (file, line, rule, text), (gfile, gline, grule, gtext) in zip(case.at, got, strict=True):
        assert (gfile, gline, grule) == (file, line, rule)
        assert gtext.startswith(text), (gtext, text)
    for f in findings:
        assert case.says in f.message
        assert f.fix
        if f.rule == "ACC103":
            assert "IS_ROLE_IN_SESSION" in f.fix and f.severity == "warning"
        assert "pepper" not in f.message
    if "suppression" in case.id:  # suppressed with its reason, not missed
        assert [f.rule for f in all_findings if f.suppressed] == ["ACC103"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("REGION = 'EU' OR INVOKER_ROLE() = 'GLOBAL_READER'", 1),
        ("REGION = 'EU' OR IS_GRANTED_TO_INVOKER_ROLE('GLOBAL_READER')", 1),
        ("REGION = 'EU' OR IS_ROLE_IN_SESSION('GLOBAL_READER')", 0),
        ("REGION = 'INVOKER_ROLE()'", 0),
    ],
)
def test_invoker_role_in_a_yaml_predicate(tmp_path: Path, text: str, found: int) -> None:
    patch = dataset_patch("customers", **expr("snowflake", text, {"REGION": "VARCHAR"}))
    project, findings = lint_estate(tmp_path, patch)
    hits = [f for f in findings if f.rule == "ACC103"]
    assert len(hits) == found
    assert not [f for f in findings if f.rule == "ACC101"]
    for f in hits:
        assert f.location == project.loc(*SF_EXPR) or f.location.line == project.loc(*SF_EXPR).line
        assert "IS_ROLE_IN_SESSION" in f.fix


def test_one_expression_is_one_placeholder() -> None:
    """The rendered signature and body name the masked value with the same identifier, and
    an expression glued to a name keeps its width (and stays one identifier)."""
    template = read_template(snow_mask("SHA2({{ masked_column }})"))
    (sql,) = template.variants
    signature = sql.index("AS (") + len("AS (")
    param = sql[signature:].split()[0]
    assert param.startswith("__j") and template.restore(param) == "{{masked_column}}"
    assert sql.count(param + " ") == 3  # the signature, THEN and SHA2(...)
    assert f"SHA2({param} " in sql and f"THEN {param}" in sql
    glued = read_template("select {{ prefix }}_raw, {{prefix}} from t").variants[0]
    assert len(glued) == len("select {{ prefix }}_raw, {{prefix}} from t")
    first, second = glued[len("select ") :].split(",")[0], glued.split(", ")[1].split()[0]
    assert first.endswith("_raw") and " " not in first and first.startswith(second)
