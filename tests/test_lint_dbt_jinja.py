"""dbt's Jinja read as dbt reads it, and template expressions standing for an object kind
(issue 21, items 9 and 10).

The environment dbt builds is ``get_environment`` in dbt-labs/dbt-common
(``dbt_common/clients/jinja.py``): the ``jinja2.ext.do`` and ``jinja2.ext.loopcontrols``
extensions and dbt's block tags. The fixtures are written in the shapes of public projects,
each cited where it is defined; none is copied from them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from accord.compiler.lint.inputs.sqlfiles import read_sql_files
from accord.compiler.sqlscan.template import read_template
from tests.cli import run_cli
from tests.estates import write_files
from tests.sql_lint import lint_sql_files

#: A policy with CURRENT_ROLE() (ACC101), the one real defect of every case below
POLICY = """\
create masking policy if not exists "{{ database }}".{{ schema }}.hide_string_column_values
as (val string) returns string -> case
    when current_role() in ('DATA_OBSERVABILITY') then val else '**********'
end;
"""

#: In the style of dbt-snow-mask's apply macros (entechlog/dbt-snow-mask,
#: macros/snow-mask-apply/): `{% do %}` to collect and run, loop controls to skip columns.
DO_AND_LOOP_CONTROLS = (
    """\
{% macro create_masking_policies_for(columns, database, schema) %}
{% set masked = [] %}
{% for column in columns %}
  {% if column.meta.masking_policy is none %}{% continue %}{% endif %}
  {% do masked.append(column.name) %}
  {% if masked | length > 20 %}{% break %}{% endif %}
{% endfor %}
{% do log("masking " ~ masked | join(", "), info=True) %}
"""
    + POLICY
    + "{% endmacro %}\n"
)

#: dbt's block tags with a policy inside: a custom materialization (dbt docs, "Create new
#: materializations"), a snapshot block and a data_test block as dbt's block reader takes
#: them out of a file, and a `{% call statement() %}` block.
MATERIALIZATION = (
    "{% materialization masking_policy, adapter='snowflake' %}\n"
    "{% call statement('main') %}\n" + POLICY + "{% endcall %}\n"
    "{{ return({'relations': []}) }}\n"
    "{% endmaterialization %}\n"
)
SNAPSHOT = (
    "{% snapshot customers_snapshot %}\n"
    "{{ config(unique_key='id', strategy='check', check_cols='all') }}\n"
    "select * from {{ source('crm', 'customers') }}\n"
    "{% endsnapshot %}\n"
)

#: In the style of GitLab's analytics dbt project (transform/snowflake-dbt/macros/
#: dbt_snowflake_masking/apply_dynamic_data_masking.sql): the object kind is chosen by a
#: `{% set %}` and written as `alter {{ materialization }}`, the policy name is assembled
#: around a template expression.
GITLAB_APPLY = (
    """\
{%- macro apply_dynamic_data_masking(columns) -%}
{% set materialization = "view" if model.config.materialized == "view" else "table" %}
{% set database = generate_database_name(model.config.database) %}
{% set schema = model.config.schema %}
{% set alias = model.config.alias %}
"""
    + POLICY
    + """\
{% for column in columns %}
{% for column_name, column_type in column.items() %}
alter {{ materialization }} "{{database}}".{{ schema }}.{{ alias }}
modify column {{ column_name }}
set masking policy "{{database}}".{{ schema }}.hide_{{ column_type }}_column_values
;
{% endfor %}
{% endfor %}
{%- endmacro -%}
"""
)

#: In the style of navikt/vdl-macros (macros/apply_policy.sql): the kind comes from
#: `config.get("materialized")`, so the template does not say which kinds it takes; an
#: `alter {{materialization}} <name>` is a table or a view. Row access, in an {% set %} block.
NAVIKT_APPLY = (
    """\
{% macro apply_masking_policy(policy, column, using) %}
    {%- set materialization = config.get("materialized") -%}
    {% if materialization != "view" %} {%- set materialization = "table" -%} {% endif %}
    {% set unset_policy_sql %}
        alter {{materialization}} {{ this }} modify column {{column}} unset masking policy;
    {% endset %}
    {% do run_query(unset_policy_sql) %}
    alter {{materialization}} {{ this }}
    modify column {{ column }}
    set masking policy {{ this.database }}.{{ var("policy_schema") }}.{{ policy }}
    using ({{ column }});
    alter {{ materialization }} {{ this }} add row access policy gov.pol.region on (region);
"""
    + POLICY
    + "{% endmacro %}\n"
)


@dataclass
class Case:
    id: str
    files: dict[str, str]
    #: (file, line, rule) of every finding, in order
    at: list[tuple[str, int, str]]


CASES = [
    Case(
        "do, break and continue are dbt's tags",
        {"macros/mask_columns.sql": DO_AND_LOOP_CONTROLS},
        [("macros/mask_columns.sql", 11, "ACC101")],
    ),
    Case(
        "materialization with a call block, a snapshot",
        {"macros/materializations/mp.sql": MATERIALIZATION, "snapshots/c.sql": SNAPSHOT},
        [("macros/materializations/mp.sql", 5, "ACC101")],
    ),
    Case(
        "a tag dbt does not define is still a template error",
        {"macros/bad.sql": "{% macro m() %}{% frobnicate %}{% endmacro %}\n" + POLICY},
        [("macros/bad.sql", 1, "ACC001")],
    ),
    Case(
        "gitlab: alter {{ materialization }} chosen by a set",
        {"macros/apply_dynamic_data_masking.sql": GITLAB_APPLY},
        [("macros/apply_dynamic_data_masking.sql", 8, "ACC101")],
    ),
    Case(
        "navikt: alter {{materialization}} from config.get",
        {"macros/apply_policy.sql": NAVIKT_APPLY},
        [("macros/apply_policy.sql", 15, "ACC101")],
    ),
    Case(
        "an expression before MASKING POLICY is no object kind",
        {
            "macros/kw.sql": "{% macro m(verb) %}\n"
            "alter {{ verb }} masking policy gov.pol.x set body -> val\n{% endmacro %}\n"
        },
        [("macros/kw.sql", 2, "ACC001")],
    ),
]


def _lint(root: Path, names: list[str]) -> list[tuple[str, int, str]]:
    return [(f.location.file, f.location.line, f.rule) for f in lint_sql_files(root, names)]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_dbt_templates_report_only_real_defects(tmp_path: Path, case: Case) -> None:
    write_files(tmp_path, case.files)
    assert _lint(tmp_path, sorted(case.files)) == case.at


@pytest.mark.parametrize(
    ("template", "kinds"),
    [
        (GITLAB_APPLY, ["alter table", "alter view"]),
        (NAVIKT_APPLY, ["alter table", "alter view"]),
        (
            '{% set kind_of_obj = "materialized view" %}\nalter {{ kind_of_obj }} t modify column c '
            "set masking policy p;\n",
            ["alter materialized view"],
        ),
    ],
    ids=["gitlab set", "navikt position", "one assigned kind"],
)
def test_an_object_kind_expression_is_read_for_each_kind(
    tmp_path: Path, template: str, kinds: list[str]
) -> None:
    """Each kind the expression stands for is a statement of its own, read as an attachment
    (the statement is analysed for ALTER TABLE and for ALTER VIEW)."""
    write_files(tmp_path, {"m.snowflake.sql": template})
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        results, _ = read_sql_files(["m.snowflake.sql"], None)
    finally:
        os.chdir(cwd)
    attached = [s for s in results[0].statements if s.kind == "set_masking_policy"]
    prefixes = sorted({" ".join(s.text.split()[:2]).lower() for s in attached})
    if kinds == ["alter materialized view"]:
        prefixes = sorted({" ".join(s.text.split()[:3]).lower() for s in attached})
    assert prefixes == kinds
    assert all(s.column_name for s in attached)
    assert not results[0].errors


def test_an_expression_too_short_for_the_kind_is_not_rewritten() -> None:
    """``{{k}}`` has room for ``table`` and ``view`` but not ``materialized view``: the SQL
    keeps every offset, so such an expression stays a placeholder."""
    template = read_template('{% set k = "materialized view" %}\nalter {{k}} t unset tag x;\n')
    assert all("materialized" not in v for v in template.variants)
    assert all(len(v) == len(template.variants[0]) for v in template.variants)


def test_lint_dot_in_a_dbt_project_reports_only_the_real_defects(tmp_path: Path) -> None:
    """A dbt project using `do`, loop controls and templated object kinds: `accord lint .`
    reports the CURRENT_ROLE() of each policy and nothing else (no ACC001)."""
    write_files(
        tmp_path,
        {
            "dbt_project.yml": "name: analytics\nversion: '1.0'\nmacro-paths: ['macros']\n",
            "macros/mask_columns.sql": DO_AND_LOOP_CONTROLS,
            "macros/dbt_snowflake_masking/apply_dynamic_data_masking.sql": GITLAB_APPLY,
            "macros/apply_policy.sql": NAVIKT_APPLY,
            "snapshots/customers.sql": SNAPSHOT,
        },
    )
    run = run_cli(["lint", ".", "--format", "json"], cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    found = sorted((f["file"], f["rule"]) for f in json.loads(run.stdout)["findings"])
    assert found == [
        ("macros/apply_policy.sql", "ACC101"),
        ("macros/dbt_snowflake_masking/apply_dynamic_data_masking.sql", "ACC101"),
        ("macros/mask_columns.sql", "ACC101"),
    ]
