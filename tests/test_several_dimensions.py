"""Several entitlement dimensions on one table, on the bank estate of issue 26: customer tables
filtered by region *and* business_line, a two-level role hierarchy and one expiring grant. It
compiles for both platforms and both Databricks styles (one policy per dimension set, one
parameter per dimension, `ON (col1, col2)`; ABAC one ON TABLE policy matching each key column),
parsed back with sqlglot; verifies on DuckDB for every persona over every combination of
values, and fails SQL that combines the dimensions wrongly; analyzes and diffs per dimension;
plans from the one-dimension version with the one-statement DROP/ADD swap (proved on the
simulator); and answers probes with a `where` on one dimension or on both (introspection,
drift, plans from a live base and live probes: tests/test_live_dimensions.py)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.core.outdir import write_tree
from accord.compiler.meaning import semantics
from accord.compiler.meaning.probes import answer
from accord.compiler.model.loader import load_documents
from accord.compiler.model.probe_places import reaching
from accord.compiler.model.validate import Project, validate_raw
from accord.compiler.plan.source import plan_projects
from accord.compiler.verify.engine import TestSalts
from accord.compiler.verify.run import verify
from accord.compiler.verify.sources import load_sql
from accord.targets.render import render_files
from tests.cli import run_cli
from tests.plan_helpers import statements

BANK = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol, style: STYLE}
principals:
  eu_reader: {snowflake: EU_READER, databricks: eu-readers}
  retail_reader: {snowflake: RETAIL_READER, databricks: retail-readers}
  banker: {snowflake: BANKER, databricks: bankers, inherits: [eu_reader, retail_reader]}
  branch_lead: {snowflake: BRANCH_LEAD, databricks: branch-leads, inherits: [banker]}
  analyst: {snowflake: ANALYST, databricks: analysts}
  auditor: {snowflake: AUDITOR, databricks: auditors}
entitlements:
  region:
    EU: [eu_reader, analyst]
    US: [analyst, {principal: auditor, until: 2027-03-31}]
  business_line:
    RETAIL: [retail_reader, analyst]
    CORPORATE: [analyst, auditor]
masks:
  email: {strategy: redact, unmasked_for: [branch_lead]}
datasets:
  customers:
    platform: snowflake
    table: BANK.CRM.CUSTOMERS
    row_filter: SF_FILTER
    columns:
      EMAIL: {type: VARCHAR, mask: email}
  customers_lake:
    platform: databricks
    table: bank.crm.customers
    replica_of: customers
    row_filter: DBX_FILTER
    columns:
      email: {type: STRING, mask: email}
surfaces:
  warehouse_agent: {platform: snowflake, reads: [customers], identity: caller}
  lake_agent:
    platform: databricks
    reads: [customers_lake]
    identity: caller
    runtime: "17.3"
personas:
  banker: [banker]
  branch_lead: [branch_lead]
  analyst: [analyst]
  auditor: [auditor]
"""

SF_TWO = (
    "[{entitlement: region, column: REGION}, {entitlement: business_line, column: BUSINESS_LINE}]"
)
DBX_TWO = (
    "[{entitlement: region, column: region}, {entitlement: business_line, column: business_line}]"
)
SF_ONE = "{entitlement: region, column: REGION}"
DBX_ONE = "{entitlement: region, column: region}"


def bank(style: str = "table", sf: str = SF_TWO, dbx: str = DBX_TWO) -> str:
    return BANK.replace("STYLE", style).replace("SF_FILTER", sf).replace("DBX_FILTER", dbx)


def project_of(text: str) -> Project:
    return validate_raw(load_documents([(text.encode(), "estate.yaml")], Path(".")))


def write(tmp_path: Path, text: str, name: str = "pol") -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "estate.yaml").write_text(text, encoding="utf-8")
    return d


# ---- semantics ---------------------------------------------------------------------------


def test_a_row_is_visible_when_every_dimension_admits_it() -> None:
    model = project_of(bank()).model

    def rows(persona: str, day: date = date(2026, 12, 1)) -> semantics.RowSet:
        return semantics.Perspective(model, persona, as_of=day).rows("customers")

    banker = rows("banker")  # EU through eu_reader, RETAIL through retail_reader
    assert banker.sees_row({"region": "EU", "business_line": "RETAIL"})
    assert not banker.sees_row({"region": "EU", "business_line": "CORPORATE"})
    assert not banker.sees_row({"region": "US", "business_line": "RETAIL"})
    assert not banker.sees_row({"region": None, "business_line": "RETAIL"})
    # two levels up the hierarchy: the same rows
    assert rows("branch_lead").dims == banker.dims
    auditor = rows("auditor")
    assert auditor.sees_row({"region": "US", "business_line": "CORPORATE"})
    assert rows("auditor", date(2027, 4, 1)).nothing  # the US grant has ended
    assert rows("analyst").covers(banker) is True
    assert banker.covers(rows("analyst")) is False


# ---- compiled output ---------------------------------------------------------------------


def test_snowflake_one_policy_one_parameter_per_dimension() -> None:
    files = render_files(project_of(bank()), "all")
    sql = load_sql(files, TestSalts(), "test").platforms["snowflake"]
    policy = sql.routine("GOV.POL.REGION__BUSINESS_LINE_ROW_FILTER")
    assert [p.name for p in policy.params] == ["REGION_VALUE", "BUSINESS_LINE_VALUE"]
    assert isinstance(policy.body, exp.And)
    tables = {t.name for t in policy.body.find_all(exp.Table)}
    assert tables == {"REGION_GRANTS", "BUSINESS_LINE_GRANTS"}
    attach = files["snowflake/050_attachments.sql"]
    alter = next(
        s
        for s in sqlglot.parse(attach, read="snowflake")
        if s is not None and "ROW ACCESS POLICY" in s.sql("snowflake")
    )
    assert "ON (REGION, BUSINESS_LINE)" in alter.sql("snowflake")
    doc = json.loads(files["terraform/main.tf.json"])
    rap = doc["resource"]["snowflake_row_access_policy"][
        "gov__pol__region__business_line_row_filter"
    ]
    assert [a["name"] for a in rap["argument"]] == ["REGION_VALUE", "BUSINESS_LINE_VALUE"]
    assert sorted(rap["depends_on"]) == [
        "snowflake_table.gov__pol__business_line_grants",
        "snowflake_table.gov__pol__region_grants",
    ]


def test_databricks_table_style_function_and_abac_policy() -> None:
    files = render_files(project_of(bank("table")), "databricks")
    attach = files["databricks/050_attachments.sql"]
    assert (
        "ALTER TABLE bank.crm.customers SET ROW FILTER gov.pol.region__business_line_row_filter "
        "ON (region, business_line);" in attach
    )
    sql = load_sql(files, TestSalts(), "test").platforms["databricks"]
    function = sql.routine("gov.pol.region__business_line_row_filter")
    assert [p.name for p in function.params] == ["region_value", "business_line_value"]

    abac = render_files(project_of(bank("abac")), "databricks")
    policies = abac["databricks/050_policies.sql"]
    assert "ON TABLE bank.crm.customers" in policies
    assert (
        "MATCH COLUMNS has_tag_value('accord_row_key', 'customers_lake__region') AS k1, "
        "has_tag_value('accord_row_key', 'customers_lake__business_line') AS k2" in policies
    )
    assert "USING COLUMNS (k1, k2);" in policies
    tags = abac["databricks/045_tags.sql"]
    assert (
        "ALTER COLUMN business_line SET TAGS ('accord_row_key' = 'customers_lake__business_line')"
        in tags
    )


def test_abac_refuses_an_exemption_of_one_dimension(tmp_path: Path) -> None:
    dbx = (
        "[{entitlement: region, column: region, unfiltered_for: [auditor]}, "
        "{entitlement: business_line, column: business_line}]"
    )
    d = write(tmp_path, bank("abac", dbx=dbx))
    code, out, err = run_cli(["validate", str(d)])
    assert code == 2, (out, err)
    assert "under Databricks style abac, who sees every row is named in the policy's EXCEPT" in err
    assert "estate.yaml:" in err.splitlines()[0]


# ---- verify ------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["table", "abac"])
def test_bank_estate_verifies_for_every_persona(style: str) -> None:
    report = verify(project_of(bank(style)), None, date(2026, 12, 1))
    assert report.mismatches == []
    assert report.dates == ("2026-12-01", "2027-03-31", "2027-04-01")


BROKEN = [
    (
        "snowflake-dimensions-ored",
        "snowflake/030_row_access_policies.sql",
        "\n  AND EXISTS(",
        "\n  OR EXISTS(",
        ("banker", "customers"),
    ),
    (
        "databricks-dimensions-swapped",
        "databricks/050_attachments.sql",
        "ON (region, business_line);",
        "ON (business_line, region);",
        ("banker", "customers_lake"),
    ),
]


@pytest.mark.parametrize(
    ("file", "old", "new", "named"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_verify_catches_dimensions_combined_wrongly(
    tmp_path: Path, file: str, old: str, new: str, named: tuple[str, str]
) -> None:
    project = project_of(bank())
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    path = out / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    report = verify(project, str(out), date(2026, 12, 1))
    found = {(m.persona, m.dataset) for m in report.mismatches if m.kind == "rows"}
    assert named in found, [(m.kind, m.persona, m.dataset, m.message) for m in report.mismatches]
    rows = next(m for m in report.mismatches if m.kind == "rows" and m.persona == named[0])
    assert "region=" in rows.expected.lower() or "region=" in " ".join(rows.rows).lower()


# ---- analyze, diff, probes ---------------------------------------------------------------


def test_analyze_and_diff_per_dimension(tmp_path: Path) -> None:
    head = write(tmp_path, bank(), "head")
    base = write(tmp_path, bank(sf=SF_ONE, dbx=DBX_ONE), "base")
    env = {"ACCORD_TODAY": "2026-12-01"}
    code, out, err = run_cli(["analyze", str(head), "--format", "json"], env=env)
    assert code == 0, err
    code, out, err = run_cli(
        ["diff", str(head), "--base", f"dir:{base}", "--format", "json"], env=env
    )
    assert code == 0, err
    changes = json.loads(out)["changes"]
    banker = [c for c in changes if c["persona"] == "banker" and c["column"] is None]
    # adding business_line narrows what the banker sees: every business line -> RETAIL only
    assert banker and {c["kind"] for c in banker} == {"narrowing"}
    assert {tuple(c["values"]) for c in banker} == {("business_line=*",)}
    assert {c["dimension"] for c in banker} == {"region+business_line"}
    # the other way, a widening of that dimension, failing --fail-on widening
    code, out, err = run_cli(
        ["diff", str(base), "--base", f"dir:{head}", "--format", "json", "--fail-on", "widening"],
        env=env,
    )
    assert code == 1, err


def test_a_probe_where_on_one_dimension() -> None:
    text = bank() + (
        "probes:\n"
        "  banker_eu:\n"
        "    owner: governance\n"
        "    persona: banker\n"
        "    dataset: customers\n"
        "    where: {region: EU}\n"
        "    expect: {warehouse_agent: filtered, lake_agent: filtered}\n"
        "  banker_us:\n"
        "    owner: governance\n"
        "    persona: banker\n"
        "    dataset: customers\n"
        "    where: {region: US}\n"
        "    expect: {warehouse_agent: denied, lake_agent: denied}\n"
    )
    project = project_of(text)
    model = project.model
    for name, want in [("banker_eu", "filtered"), ("banker_us", "denied")]:
        probe = model.probes[name]
        got = {
            answer(model, probe, surface, place).disposition
            for surface, found in reaching(model, probe).items()
            for _, place in found
        }
        assert got == {want}, (name, got)
    report = verify(project, None, date(2026, 12, 1))
    assert [o for o in report.probes if not o.ok] == []


#: probes whose ``where`` names one value of each of the two dimensions: (name, persona,
#: where, the offline answer on both surfaces)
TWO_KEY_PROBES = [
    ("banker_eu_retail", "banker", "{region: EU, business_line: RETAIL}", "clear"),
    ("banker_eu_corporate", "banker", "{region: EU, business_line: CORPORATE}", "denied"),
    ("banker_retail_eu", "banker", "{business_line: RETAIL, region: EU}", "clear"),
    ("banker_us_retail", "banker", "{region: US, business_line: RETAIL}", "denied"),
    ("analyst_us_corporate", "analyst", "{region: US, business_line: CORPORATE}", "clear"),
]


def two_key_probes() -> str:
    return "probes:\n" + "".join(
        f"  {name}:\n"
        "    owner: governance\n"
        f"    persona: {persona}\n"
        "    dataset: customers\n"
        f"    where: {where}\n"
        f"    expect: {{warehouse_agent: {want}, lake_agent: {want}}}\n"
        for name, persona, where, want in TWO_KEY_PROBES
    )


def test_a_probe_where_on_two_dimensions() -> None:
    """docs/format.md "Several dimensions per table": a row is visible when every dimension admits
    it, so a ``where`` naming a value of each dimension names the rows that hold both:
    clear when the persona is granted every named value (no dimension is left unnamed),
    denied when one named value is not granted. Verify, executing the compiled policies of
    both platforms on DuckDB, agrees."""
    project = project_of(bank() + two_key_probes())
    model = project.model
    for name, _, _, want in TWO_KEY_PROBES:
        probe = model.probes[name]
        got = {
            answer(model, probe, surface, place).disposition
            for surface, found in reaching(model, probe).items()
            for _, place in found
        }
        assert got == {want}, (name, got)
    detail = answer(
        model,
        model.probes["banker_eu_corporate"],
        "warehouse_agent",
        reaching(model, model.probes["banker_eu_corporate"])["warehouse_agent"][0][1],
    ).detail
    assert detail == "banker sees none of the region EU, business_line CORPORATE rows of customers"
    report = verify(project, None, date(2026, 12, 1))
    assert len(report.probes) == 2 * len(TWO_KEY_PROBES)
    assert [o for o in report.probes if not o.ok] == []
    executed = next(
        o for o in report.probes if o.probe == "banker_eu_retail" and o.surface == "warehouse_agent"
    )
    assert "rows with REGION = 'EU' and BUSINESS_LINE = 'RETAIL'" in executed.detail


def test_verify_fails_a_two_key_probe_when_the_dimensions_are_ored(tmp_path: Path) -> None:
    """A Snowflake policy joining the dimensions with OR shows the banker the EU CORPORATE
    rows (EU is granted): the probe expecting none of them fails verify, executed on DuckDB."""
    project = project_of(bank() + two_key_probes())
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    path = out / "snowflake/030_row_access_policies.sql"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\n  AND EXISTS(", "\n  OR EXISTS(", 1), encoding="utf-8")
    report = verify(project, str(out), date(2026, 12, 1))
    failed = {(o.probe, o.surface, o.actual) for o in report.probes if not o.ok}
    assert ("banker_eu_corporate", "warehouse_agent", "clear") in failed, failed
    assert all(s == "warehouse_agent" for _, s, _ in failed), failed
    assert any(m.kind == "probe" and "banker_eu_corporate" in m.message for m in report.mismatches)


def test_a_two_key_where_on_a_replica_filtered_by_one_of_them() -> None:
    """The replica filtered by region only shows the banker every EU row: of the EU
    CORPORATE rows the lake agent answers clear, the warehouse (both dimensions) denied."""
    model = project_of(bank(dbx=DBX_ONE) + two_key_probes()).model
    probe = model.probes["banker_eu_corporate"]
    got = {
        surface: answer(model, probe, surface, place).disposition
        for surface, found in reaching(model, probe).items()
        for _, place in found
    }
    assert got == {"warehouse_agent": "denied", "lake_agent": "clear"}


def test_an_unknown_key_in_a_two_key_where_is_located(tmp_path: Path) -> None:
    text = bank() + (
        "probes:\n"
        "  banker_eu_retail:\n"
        "    owner: governance\n"
        "    persona: banker\n"
        "    dataset: customers\n"
        "    where: {region: EU, busines_line: RETAIL}\n"
        "    expect: {warehouse_agent: clear, lake_agent: clear}\n"
    )
    line = text.splitlines().index("    where: {region: EU, busines_line: RETAIL}") + 1
    code, out, err = run_cli(["validate", str(write(tmp_path, text))])
    assert code == 2, out + err
    assert (
        f"estate.yaml:{line}:25: unknown entitlement dimension 'busines_line' "
        "(did you mean 'business_line'?)"
    ) in err, err
    assert "Traceback" not in err


# ---- plan and the live commands ------------------------------------------------------------


def test_plan_from_one_dimension_swaps_in_one_statement() -> None:
    plan = plan_projects(project_of(bank(sf=SF_ONE, dbx=DBX_ONE)), project_of(bank()))
    sf = statements(plan, "snowflake")
    swap = [q for q in sf if q.startswith("ALTER TABLE") and "DROP ROW ACCESS POLICY" in q]
    assert swap == [
        "ALTER TABLE BANK.CRM.CUSTOMERS DROP ROW ACCESS POLICY GOV.POL.REGION_ROW_FILTER,\n"
        "  ADD ROW ACCESS POLICY GOV.POL.REGION__BUSINESS_LINE_ROW_FILTER "
        "ON (REGION, BUSINESS_LINE);"
    ]
    created = next(i for i, q in enumerate(sf) if "REGION__BUSINESS_LINE_ROW_FILTER\n" in q)
    assert created < sf.index(swap[0])
    dbx = statements(plan, "databricks")
    assert (
        "ALTER TABLE bank.crm.customers SET ROW FILTER gov.pol.region__business_line_row_filter "
        "ON (region, business_line);" in dbx
    )
    # never a detach of the old filter before the new one is in place
    assert not any(q.startswith("ALTER TABLE bank.crm.customers DROP ROW FILTER") for q in dbx)
