"""Grants until a date (`{principal: NAME, until: YYYY-MM-DD}` in an entitlement value's grant
list), end to end: located validation; the compiled mapping tables' expiry column and the
policies' CURRENT_DATE check on Snowflake, Databricks (table and ABAC styles) and Terraform,
parsed back with sqlglot; `accord verify --as-of` executing them on DuckDB on both sides of
every expiry, and failing on SQL that gets the expiry wrong; rule ACC507 judged at
ACCORD_TODAY (also through the lint cache); `accord diff` on an extended or shortened expiry;
the commands that do not handle dated grants yet refusing them; and estates without `until`
compiling to exactly the shape they had before."""

from __future__ import annotations

import json
import textwrap
from datetime import date
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.core.outdir import write_tree
from accord.compiler.meaning import semantics
from accord.compiler.model.loader import load_documents
from accord.compiler.model.schema import Grant
from accord.compiler.model.validate import Project, validate_raw
from accord.compiler.verify.engine import TestSalts
from accord.compiler.verify.run import evaluation_dates, verify
from accord.compiler.verify.sources import load_sql
from accord.targets.render import render_files
from tests.cli import run_cli

ESTATE = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol, style: STYLE}
principals:
  analyst: {snowflake: ANALYST, databricks: analysts}
  auditor: {snowflake: AUDITOR, databricks: auditors}
  contractor: {snowflake: CONTRACTOR, databricks: contractors}
entitlements:
  region:
    EU: [analyst, {principal: contractor, until: 2027-03-31}]
    US: [auditor, {principal: analyst, until: 2027-01-15}]
  tier:
    GOLD: [auditor]
masks:
  email:
    strategy: redact
    unmasked_for: [auditor]
datasets:
  customers:
    platform: snowflake
    table: SALES.CRM.CUSTOMERS
    row_filter: {entitlement: region, column: REGION}
    columns:
      EMAIL: {type: VARCHAR, mask: email}
  customers_lake:
    platform: databricks
    table: sales.crm.customers
    replica_of: customers
    row_filter: {entitlement: region, column: region}
    columns:
      email: {type: STRING, mask: email}
  accounts:
    platform: snowflake
    table: SALES.CRM.ACCOUNTS
    row_filter: {entitlement: tier, column: TIER}
personas:
  analyst: [analyst]
  auditor: [auditor, analyst]
  contractor: [contractor]
"""


def estate(style: str = "table", text: str = ESTATE) -> str:
    return text.replace("STYLE", style)


def project_of(text: str) -> Project:
    return validate_raw(load_documents([(text.encode(), "estate.yaml")], Path(".")))


def write(tmp_path: Path, text: str, name: str = "pol") -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "estate.yaml").write_text(text, encoding="utf-8")
    return d


# ---- the model ---------------------------------------------------------------------------


def test_an_unquoted_date_is_a_grant_until_that_day() -> None:
    model = project_of(estate()).model
    eu = model.entitlements["region"]["EU"]
    assert eu[0] == "analyst"
    assert eu[1] == Grant(principal="contractor", until=date(2027, 3, 31))
    # the model's dump (plans record its fingerprint) writes the day as written
    assert model.model_dump(mode="json")["entitlements"]["region"]["EU"][1] == {
        "principal": "contractor",
        "until": "2027-03-31",
    }


@pytest.mark.parametrize(
    ("entry", "column", "message"),
    [
        ("{principal: contractor, until: 2027-13-01}", 31, "is not a date written YYYY-MM-DD"),
        ("{principal: contractor, until: '31/03/2027'}", 31, "is not a date written YYYY-MM-DD"),
        ("{principal: contractor, until: 2027-03-31T10:00:00}", 31, "YYYY-MM-DD"),
        ("{principal: contractor, until: 20270331}", 31, "YYYY-MM-DD"),
        ("{principal: contractr, until: 2027-03-31}", 20, "unknown principal 'contractr'"),
        ("{principal: contractor}", 9, "until"),
        ("{principal: contractor, until: 2027-03-31, by: me}", 9, "by"),
        ("{principal: analyst, until: 2027-03-31}", 20, "granted 'EU' twice"),
    ],
)
def test_bad_grant_entries_are_located_errors(
    tmp_path: Path, entry: str, column: int, message: str
) -> None:
    text = estate().replace("{principal: contractor, until: 2027-03-31}", entry)
    d = write(tmp_path, text)
    code, out, err = run_cli(["validate", str(d)])
    assert code == 2, (out, err)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("    EU:"))
    first = err.splitlines()[0]
    assert first.startswith(f"{d / 'estate.yaml'}:{line}:"), err
    assert message in err
    assert "Traceback" not in err


# ---- compiled output ---------------------------------------------------------------------


def test_snowflake_mapping_table_carries_the_expiry_and_the_policy_checks_it() -> None:
    files = render_files(project_of(estate()), "snowflake")
    tables = files["snowflake/010_mapping_tables.sql"]
    statements = sqlglot.parse(tables, read="snowflake")
    creates = [s for s in statements if isinstance(s, exp.Create)]
    inserts = [s for s in statements if isinstance(s, exp.Insert)]
    region = next(c for c in creates if c.this.this.name == "REGION_GRANTS")
    tier = next(c for c in creates if c.this.this.name == "TIER_GRANTS")
    columns = {d.name: d.args["kind"].sql("snowflake") for d in region.this.expressions}
    assert columns == {"REGION_CODE": "VARCHAR", "ROLE_NAME": "VARCHAR", "VALID_UNTIL": "DATE"}
    # a dimension without a dated grant keeps the two columns it always had
    assert [d.name for d in tier.this.expressions] == ["TIER_CODE", "ROLE_NAME"]
    rows = {
        tuple(v.sql("snowflake") for v in t.expressions)
        for i in inserts
        if i.this.this.this.name == "REGION_GRANTS"
        for t in i.expression.expressions
    }
    assert rows == {
        ("'EU'", "'ANALYST'", "CAST(NULL AS DATE)"),
        ("'EU'", "'CONTRACTOR'", "CAST('2027-03-31' AS DATE)"),
        ("'US'", "'ANALYST'", "CAST('2027-01-15' AS DATE)"),
        ("'US'", "'AUDITOR'", "CAST(NULL AS DATE)"),
    }
    sql = load_sql(files, TestSalts(), "test").platforms["snowflake"]
    region_body = sql.routine("GOV.POL.REGION_ROW_FILTER").body
    tier_body = sql.routine("GOV.POL.TIER_ROW_FILTER").body
    checks = list(region_body.find_all(exp.LTE))
    assert [c.sql("snowflake") for c in checks] == ["CURRENT_DATE <= g.VALID_UNTIL"]
    assert "g.VALID_UNTIL IS NULL" in region_body.sql("snowflake")
    assert not list(tier_body.find_all(exp.CurrentDate))


@pytest.mark.parametrize("style", ["table", "abac"])
def test_databricks_merge_updates_expiry_and_the_filter_checks_it(style: str) -> None:
    files = render_files(project_of(estate(style)), "databricks")
    tables = files["databricks/010_mapping_tables.sql"]
    statements = sqlglot.parse(tables, read="databricks")
    merge = next(
        s for s in statements if isinstance(s, exp.Merge) and s.this.this.name == "region_grants"
    )
    whens = merge.args["whens"].expressions
    # a kept (value, group) whose expiry changed is updated in the same statement; <=> is
    # equality that holds between two NULLs (a standing grant stays standing)
    update = next(w for w in whens if w.args.get("matched") and not w.args.get("source"))
    assert isinstance(update.args["then"], exp.Update)
    assert list(update.args["condition"].find_all(exp.NullSafeEQ))
    assert "CAST('2027-03-31' AS DATE)" in merge.sql("databricks")
    create = next(
        s for s in statements if isinstance(s, exp.Create) and s.this.this.name == "region_grants"
    )
    assert [d.name for d in create.this.expressions] == [
        "region_code",
        "group_name",
        "valid_until",
    ]
    sql = load_sql(files, TestSalts(), "test").platforms["databricks"]
    body = sql.routine("gov.pol.region_row_filter").body
    assert [c.sql("databricks") for c in body.find_all(exp.LTE)] == [
        "CURRENT_DATE <= g.valid_until"
    ]


def test_terraform_table_and_rows_carry_the_expiry() -> None:
    files = render_files(project_of(estate()), "terraform")
    doc = json.loads(files["terraform/main.tf.json"])
    table = doc["resource"]["snowflake_table"]["gov__pol__region_grants"]
    assert table["column"][-1] == {"name": "VALID_UNTIL", "type": "DATE", "nullable": True}
    rows = doc["resource"]["snowflake_execute"]["gov__pol__region_grants__rows"]["execute"]
    insert = sqlglot.parse_one(rows, read="snowflake")
    assert isinstance(insert, exp.Insert) and insert.args.get("overwrite")
    assert [c.name for c in insert.this.expressions] == ["REGION_CODE", "ROLE_NAME", "VALID_UNTIL"]
    tier = doc["resource"]["snowflake_table"]["gov__pol__tier_grants"]
    assert [c["name"] for c in tier["column"]] == ["TIER_CODE", "ROLE_NAME"]


def test_without_until_the_output_is_what_it_was() -> None:
    dated = render_files(project_of(estate()), "all")
    plain = estate().replace("{principal: contractor, until: 2027-03-31}", "contractor")
    plain = plain.replace("{principal: analyst, until: 2027-01-15}", "analyst")
    files = render_files(project_of(plain), "all")
    assert "VALID_UNTIL" not in "".join(files.values())
    assert "valid_until" not in "".join(files.values()).lower()
    assert "CURRENT_DATE" not in "".join(files.values())
    # the dimension that never had a dated grant is byte-identical in both
    tier = "GOV.POL.TIER_GRANTS"
    block = [b for b in files["snowflake/010_mapping_tables.sql"].split("\n\n") if tier in b]
    assert block and block[0] in dated["snowflake/010_mapping_tables.sql"]


# ---- verify --------------------------------------------------------------------------------


def test_verify_evaluates_as_of_and_both_sides_of_each_expiry() -> None:
    project = project_of(estate())
    days = evaluation_dates(project, date(2026, 12, 1))
    assert [d.isoformat() for d in days] == [
        "2026-12-01",
        "2027-01-15",
        "2027-01-16",
        "2027-03-31",
        "2027-04-01",
    ]
    report = verify(project, None, date(2026, 12, 1))
    assert report.mismatches == []
    assert report.dates == tuple(d.isoformat() for d in days)
    one_day = verify(project_of(estate()), None, date(2026, 12, 1))
    assert one_day.checks == report.checks > 0


@pytest.mark.parametrize("style", ["table", "abac"])
def test_semantics_at_a_date_follow_the_grants(style: str) -> None:
    model = project_of(estate(style)).model

    def values(persona: str, day: date) -> set[str]:
        return set(semantics.Perspective(model, persona, as_of=day).rows("customers").values)

    assert values("analyst", date(2027, 1, 15)) == {"EU", "US"}
    assert values("analyst", date(2027, 1, 16)) == {"EU"}
    assert values("contractor", date(2027, 3, 31)) == {"EU"}
    assert values("contractor", date(2027, 4, 1)) == set()
    # the auditor holds US standing (through its own principal) and EU through analyst
    assert values("auditor", date(2030, 1, 1)) == {"US", "EU"}


# (id, file, old, new, the day and persona that must be named)
BROKEN = [
    (
        "snowflake-expiry-check-dropped",
        "snowflake/030_row_access_policies.sql",
        "g.VALID_UNTIL IS NULL OR CURRENT_DATE <= g.VALID_UNTIL",
        "TRUE",
        ("2027-01-16", "analyst", "customers"),
    ),
    (
        "snowflake-off-by-one",
        "snowflake/030_row_access_policies.sql",
        "CURRENT_DATE <= g.VALID_UNTIL",
        "CURRENT_DATE < g.VALID_UNTIL",
        ("2027-03-31", "contractor", "customers"),
    ),
    (
        "databricks-expiry-later-in-the-merge",
        "databricks/010_mapping_tables.sql",
        "CAST('2027-03-31' AS DATE)",
        "CAST('2027-04-30' AS DATE)",
        ("2027-04-01", "contractor", "customers_lake"),
    ),
    (
        "databricks-expiry-check-dropped",
        "databricks/030_row_filters.sql",
        "g.valid_until IS NULL OR CURRENT_DATE <= g.valid_until",
        "TRUE",
        ("2027-01-16", "analyst", "customers_lake"),
    ),
]


@pytest.mark.parametrize(
    ("file", "old", "new", "named"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_verify_catches_sql_that_gets_the_expiry_wrong(
    tmp_path: Path, file: str, old: str, new: str, named: tuple[str, str, str]
) -> None:
    project = project_of(estate())
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    path = out / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    report = verify(project, str(out), date(2026, 12, 1))
    day, persona, dataset = named
    found = [
        m
        for m in report.mismatches
        if m.kind == "rows" and m.as_of == day and m.persona == persona and m.dataset == dataset
    ]
    assert found, [(m.kind, m.as_of, m.persona, m.dataset) for m in report.mismatches]
    # as of the first day every grant still holds: the broken SQL agrees with the model there
    assert not [m for m in report.mismatches if m.as_of == "2026-12-01" and m.kind == "rows"]


def test_verify_cli_as_of(tmp_path: Path) -> None:
    d = write(tmp_path, estate())
    code, out, err = run_cli(["verify", str(d), "--as-of", "2027-02-01", "--format", "json"])
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary["as_of"] == "2027-02-01"
    assert summary["dates"][0] == "2027-02-01" and "2027-04-01" in summary["dates"]
    code, out, err = run_cli(["verify", str(d), "--as-of", "2027-02-30"])
    assert code == 2 and "--as-of '2027-02-30' is not a date written YYYY-MM-DD" in err
    code, out, err = run_cli(["verify", str(d)], env={"ACCORD_TODAY": "2027-02-01"})
    assert code == 0 and "evaluated as of 2027-02-01" in out


# ---- lint: ACC507 --------------------------------------------------------------------------


def test_expired_grant_is_judged_at_accord_today(tmp_path: Path) -> None:
    d = write(tmp_path, estate())
    args = ["lint", str(d), "--format", "json", "--select", "ACC507"]
    code, out, err = run_cli(args, env={"ACCORD_TODAY": "2027-01-15"})
    assert code == 0 and json.loads(out)["findings"] == [], err
    # the same files, the next day: the cached result of the day before is not reused
    code, out, err = run_cli(args, env={"ACCORD_TODAY": "2027-01-16"})
    findings = json.loads(out)["findings"]
    assert code == 0 and [f["rule"] for f in findings] == ["ACC507"]
    line = next(i for i, ln in enumerate(estate().splitlines(), 1) if ln.startswith("    US:"))
    assert (findings[0]["line"], findings[0]["severity"]) == (line, "warning")
    assert "ended on 2027-01-15" in findings[0]["message"]
    assert "lint judges at 2027-01-16, from ACCORD_TODAY" in findings[0]["message"]
    code, out, err = run_cli(args, env={"ACCORD_TODAY": "2027-04-02"})
    assert len(json.loads(out)["findings"]) == 2
    code, _, _ = run_cli([*args, "--fail-on", "warning"], env={"ACCORD_TODAY": "2027-04-02"})
    assert code == 1
    code, out, err = run_cli(args, env={"ACCORD_TODAY": "tomorrow"})
    assert code == 2 and "ACCORD_TODAY='tomorrow' is not a date written YYYY-MM-DD" in err


# ---- diff ----------------------------------------------------------------------------------


def test_diff_reports_an_extended_expiry_as_a_widening(tmp_path: Path) -> None:
    base = write(tmp_path, estate(), "base")
    longer = estate().replace("until: 2027-03-31", "until: 2027-06-30")
    longer = longer.replace("{principal: analyst, until: 2027-01-15}", "analyst")
    head = write(tmp_path, longer, "head")
    env = {"ACCORD_TODAY": "2026-12-01"}
    code, out, err = run_cli(
        ["diff", str(head), "--base", f"dir:{base}", "--format", "json", "--fail-on", "widening"],
        env=env,
    )
    assert code == 1, err
    changes = json.loads(out)["changes"]
    direct = {(c["persona"], c["dataset"]): c for c in changes if c["surface"] is None}
    contractor = direct[("contractor", "customers")]
    assert contractor["kind"] == "widening" and contractor["values"] == ["EU"]
    assert contractor["note"] == "grant expiry EU: 2027-03-31 -> 2027-06-30"
    assert contractor["cause"]["object"] == "entitlements.region.EU[1].until"
    analyst = direct[("analyst", "customers_lake")]
    assert analyst["kind"] == "widening"
    assert analyst["note"] == "grant expiry US: 2027-01-15 -> standing"
    assert {c["kind"] for c in changes} == {"widening"}
    # the other way round, the same changes are narrowings
    code, out, err = run_cli(
        ["diff", str(base), "--base", f"dir:{head}", "--format", "json", "--fail-on", "widening"],
        env=env,
    )
    assert code == 0, err
    assert {c["kind"] for c in json.loads(out)["changes"]} == {"narrowing"}


# ---- plan ----------------------------------------------------------------------------------


def test_plan_adds_the_expiry_column_before_any_policy_reads_it(tmp_path: Path) -> None:
    from tests.plan_helpers import statements

    plain = estate().replace("{principal: contractor, until: 2027-03-31}", "contractor")
    plain = plain.replace("{principal: analyst, until: 2027-01-15}", "analyst")
    from accord.compiler.plan.source import plan_projects

    plan = plan_projects(project_of(plain), project_of(estate()))
    for platform, add, reads in [
        (
            "snowflake",
            "ALTER TABLE GOV.POL.REGION_GRANTS ADD COLUMN IF NOT EXISTS VALID_UNTIL DATE;",
            "g.VALID_UNTIL",
        ),
        (
            "databricks",
            "ALTER TABLE gov.pol.region_grants ADD COLUMNS (valid_until DATE);",
            "g.valid_until",
        ),
    ]:
        sqls = statements(plan, platform)
        first_add = next(i for i, q in enumerate(sqls) if q == add)
        first_read = next(i for i, q in enumerate(sqls) if reads in q)
        rows = next(i for i, q in enumerate(sqls) if "2027-03-31" in q)
        assert first_add < first_read and first_add < rows, sqls
        # the column is added in a prepare stage: no query answers differently there
        stage = next(st for st in plan.stages if any(s.sql == add for s in st.steps))
        assert stage.kind == "prepare"
        assert all(s.sql == add or "2027" not in s.sql for s in stage.steps)
    # the tier dimension has no dated grant: its table is not touched
    assert not any("TIER_GRANTS" in q for q in statements(plan, "snowflake"))


def test_schema_names_the_grant_form() -> None:
    code, out, err = run_cli(["schema"])
    assert code == 0, err
    schema = json.loads(out)
    grant = schema["$defs"]["Grant"]
    assert grant["required"] == ["principal", "until"]
    assert grant["properties"]["until"]["format"] == "date"
    assert textwrap.dedent(grant["description"]).startswith("A time-bound grant")
