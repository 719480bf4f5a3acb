"""Issue 26 on the live side: the bank estate (region x business_line filters, one grant until a
date) deployed to both stand-ins with ``plan --base live:`` and ``migrate apply``, introspected,
drift clean; then tampered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.live_helpers import Platforms, seed_model
from tests.test_several_dimensions import bank

# the tests marked slow run end to end, seconds each: the bank estate planned, deployed and
# drifted on the stand-ins


def live_bank(style: str = "table") -> str:
    """The bank estate without its role hierarchy (read on the live side separately)."""
    text = bank(style).replace(", inherits: [eu_reader, retail_reader]", "")
    return text.replace(", inherits: [banker]", "")


def estate_dir(platforms: Platforms, tmp_path: Path, style: str = "table") -> Path:
    d = tmp_path / "bank"
    d.mkdir()
    (d / "estate.yaml").write_text(live_bank(style), encoding="utf-8")
    model = load_project(d).model
    seed_model(platforms.snowflake, model)
    seed_model(platforms.databricks, model)
    return d


@pytest.mark.parametrize("style", ["table", "abac"])
@pytest.mark.slow
def test_bank_deploys_introspects_and_drifts_clean(
    platforms: Platforms, tmp_path: Path, style: str
) -> None:
    d = estate_dir(platforms, tmp_path, style)
    deploy(d, tmp_path / "migrations")
    code, out, err = run_cli(["drift", str(d), "--platform", "all", "--format", "json"])
    assert code == 0, out + err
    # introspection reads back exactly the lowered catalog: the two-column attachments (or the
    # ABAC policy matching both key columns) and the region mapping rows with their expiry
    from accord.targets import lower_all
    from accord.targets.inspect import object_json

    lowered = lower_all(load_project(d))
    for platform in ("snowflake", "databricks"):
        code, out, err = run_cli(["introspect", "--platform", platform, str(d), "--format", "json"])
        assert code == 0, err
        want = sorted(
            json.dumps(object_json(o, platform), sort_keys=True) for o in lowered[platform]
        )
        got = sorted(json.dumps(o, sort_keys=True) for o in json.loads(out)["objects"])
        assert got == want
        assert any('"2027-03-31"' in o and "region_grants" in o.lower() for o in got)
    # tamper: one mapping row's expiry (later; NULL, standing), one attachment's column order
    sf, dbx = platforms.snowflake, platforms.databricks
    sf.execute(
        "UPDATE GOV.POL.REGION_GRANTS SET VALID_UNTIL = '2027-12-31' WHERE ROLE_NAME = 'AUDITOR'"
    )
    dbx.execute("UPDATE gov.pol.region_grants SET valid_until = NULL WHERE group_name = 'auditors'")
    policy = "GOV.POL.REGION__BUSINESS_LINE_ROW_FILTER"
    sf.execute(
        f"ALTER TABLE BANK.CRM.CUSTOMERS DROP ROW ACCESS POLICY {policy}, "
        f"ADD ROW ACCESS POLICY {policy} ON (BUSINESS_LINE, REGION)"
    )
    if style == "table":
        dbx.execute(
            "ALTER TABLE bank.crm.customers SET ROW FILTER "
            "gov.pol.region__business_line_row_filter ON (business_line, region)"
        )
    else:
        dbx.execute(ABAC_SWAPPED)
    code, out, err = run_cli(["drift", str(d), "--platform", "all", "--format", "json"])
    assert code == 1, out + err
    text = live_bank(style).splitlines()
    found = {(f["rule"], f["line"], f["column"], f["message"]) for f in json.loads(out)["findings"]}
    until = next(i for i, ln in enumerate(text, 1) if "until: 2027-03-31" in ln)
    until_col = text[until - 1].index("2027-03-31") + 1  # the value of the grant's until
    sf_rf = next(i for i, ln in enumerate(text, 1) if "column: REGION}" in ln)
    dbx_rf = next(i for i, ln in enumerate(text, 1) if "column: region}" in ln)
    # the first dimension whose column is not in its place: row_filter[0]
    rf_col = text[sf_rf - 1].index("[{") + 2
    swapped = "the columns are in another order, so each dimension reads another's column"
    dbx_changed = (
        "databricks: row filter of bank.crm.customers changed on the platform: attached on "
        f"(business_line, region), the model attaches it on (region, business_line): {swapped}"
        if style == "table"
        else "databricks: ABAC policy accord_region__business_line_row_filter on table "
        "bank.crm.customers changed on the platform: matches USING COLUMNS ("
        "has_tag_value('accord_row_key', 'customers_lake__business_line'), "
        "has_tag_value('accord_row_key', 'customers_lake__region')), the model USING COLUMNS ("
        "has_tag_value('accord_row_key', 'customers_lake__region'), "
        f"has_tag_value('accord_row_key', 'customers_lake__business_line')): {swapped}"
    )
    assert found == {
        ("ACC704", until, until_col,
         "snowflake: GOV.POL.REGION_GRANTS: 'US' -> AUDITOR holds through 2027-12-31 on the "
         "platform, the model's grant through 2027-03-31: a widening (the platform grants it "
         "longer)"),
        ("ACC704", until, until_col,
         "databricks: gov.pol.region_grants: 'US' -> auditors holds standing (no end) on the "
         "platform, the model's grant through 2027-03-31: a widening (the platform grants it "
         "longer)"),
        ("ACC704", until, 9,  # the grants of US
         "dimension 'region', value 'US': databricks grants analyst, auditor, snowflake grants "
         "analyst, auditor through 2027-12-31"),
        ("ACC703", sf_rf, rf_col,
         "snowflake: row filter of BANK.CRM.CUSTOMERS changed on the platform: attached on "
         "(BUSINESS_LINE, REGION), the model attaches it on (REGION, BUSINESS_LINE): "
         f"{swapped}"),
        ("ACC703", dbx_rf, rf_col if style == "table" else rf_col - 1, dbx_changed),
    }  # fmt: skip


ABAC_SWAPPED = """\
CREATE OR REPLACE POLICY accord_region__business_line_row_filter
ON TABLE bank.crm.customers
COMMENT 'accord: rows by entitlements region and business_line'
ROW FILTER gov.pol.region__business_line_row_filter
TO `account users`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_row_key', 'customers_lake__region') AS k1,
  has_tag_value('accord_row_key', 'customers_lake__business_line') AS k2
USING COLUMNS (k2, k1)"""


def one_dimension(style: str = "table") -> str:
    """The version before: one dimension (region) and no grant until a date."""
    from tests.test_several_dimensions import DBX_ONE, SF_ONE

    text = bank(style, sf=SF_ONE, dbx=DBX_ONE).replace(", inherits: [eu_reader, retail_reader]", "")
    text = text.replace(", inherits: [banker]", "")
    return text.replace("{principal: auditor, until: 2027-03-31}", "auditor")


def deploy(d: Path, plans: Path) -> None:
    """``plan --base live:all`` and ``migrate apply`` on both platforms."""
    code, out, err = run_cli(["plan", str(d), "--base", "live:all", "--out", str(plans)])
    assert code == 0, out + err
    for platform in ("snowflake", "databricks"):
        apply(d, plans, platform)


def apply(d: Path, plans: Path, platform: str) -> None:
    # --abac-settle 0: the stand-in applies a tag at once (a workspace may take minutes)
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(d),
         "--abac-settle", "0"]
    )  # fmt: skip
    assert code == 0, out + err


@pytest.mark.parametrize("style", ["table", "abac"])
@pytest.mark.slow
def test_plan_from_the_live_one_dimension_version(
    platforms: Platforms, tmp_path: Path, style: str
) -> None:
    """From a live estate filtered by region alone, without dated grants: drift with the bank
    model reports the mapping table that lacks the expiry column (ACC703 at the grant's
    until); ``plan --base live:all`` adds the column in the prepare stage and swaps in the
    two-dimension policy (the planner's simulator proves no table unprotected, or the plan
    is refused); after ``migrate apply`` drift is clean. Databricks documents no
    ``ADD COLUMN IF NOT EXISTS`` (sql-ref-syntax-ddl-alter-table-manage-column: ``ADD
    [COLUMN | COLUMNS] (...)``, "The name must be unique within the table"): after a
    rollback, which leaves the column in place, a plan from the live base reads the column
    and does not add it again. Under ABAC the key column is retagged for its table alone in
    the handover stage, after the table's new policy exists."""
    d = estate_dir(platforms, tmp_path, style)
    head_text = (d / "estate.yaml").read_text()
    (d / "estate.yaml").write_text(one_dimension(style), encoding="utf-8")
    plans = tmp_path / "migrations"
    assert run_cli(["plan", str(d), "--base", "live:all", "--out", str(plans)])[0] == 0
    for platform in ("snowflake", "databricks"):
        apply(d, plans, platform)
    assert run_cli(["drift", str(d), "--platform", "all"])[0] == 0
    (d / "estate.yaml").write_text(head_text, encoding="utf-8")
    code, out, _ = run_cli(["drift", str(d), "--platform", "all", "--format", "json"])
    assert code == 1
    text = head_text.splitlines()
    until = next(i for i, ln in enumerate(text, 1) if "until: 2027-03-31" in ln)
    lacking = {
        (f["line"], f["message"])
        for f in json.loads(out)["findings"]
        if f["rule"] == "ACC703" and "has no column" in f["message"]
    }
    assert lacking == {
        (until, "snowflake: GOV.POL.REGION_GRANTS has no column VALID_UNTIL: the model's grants "
         "of 'region' until a date cannot expire there, and the policies that read the column "
         "cannot run"),
        (until, "databricks: gov.pol.region_grants has no column valid_until: the model's "
         "grants of 'region' until a date cannot expire there, and the policies that read the "
         "column cannot run"),
    }  # fmt: skip
    plans2 = tmp_path / "migrations2"
    code, out, err = run_cli(["plan", str(d), "--base", "live:all", "--out", str(plans2)])
    assert code == 0, out + err
    if style == "abac":
        # the table's own policy is created first (it matches nothing: no column carries its
        # key values yet); the region column is retagged for the table alone, and the schema's
        # one-dimension policy dropped, only in the handover stage, once the new policy is in
        # effect: no statement leaves the table without a row filter (the simulator's proof)
        handover = next(
            t
            for n, t in sorted(
                (p.name, p.read_text()) for p in plans2.rglob("*_databricks_handover.sql")
            )
        )
        assert "ALTER COLUMN region SET TAGS ('accord_row_key' = 'customers_lake__region')" in (
            handover
        )
        assert "DROP POLICY accord_region_row_filter ON SCHEMA bank.crm;" in handover
        # its header says it retags from one ABAC policy to another, not table level
        said = " ".join(
            ln.removeprefix("-- ") for ln in handover.splitlines() if ln.startswith("--")
        )
        assert "Why this stage: it retags columns to the values that only the ABAC" in said
        assert "table-level" not in said
    sql = {p.name: p.read_text() for p in sorted(plans2.rglob("*.sql"))}
    prepare = "\n".join(t for n, t in sql.items() if "prepare" in n and "rollback" not in n)
    assert "ALTER TABLE GOV.POL.REGION_GRANTS ADD COLUMN IF NOT EXISTS VALID_UNTIL DATE;" in prepare
    assert "ALTER TABLE gov.pol.region_grants ADD COLUMNS (valid_until DATE);" in prepare
    for platform in ("snowflake", "databricks"):
        apply(d, plans2, platform)
    assert run_cli(["drift", str(d), "--platform", "all"])[0] == 0
    # an expiry brought forward on the platform is a narrowing, located at the until
    platforms.snowflake.execute(
        "UPDATE GOV.POL.REGION_GRANTS SET VALID_UNTIL = '2027-01-31' WHERE ROLE_NAME = 'AUDITOR'"
    )
    code, out, _ = run_cli(["drift", str(d), "--platform", "snowflake", "--format", "json"])
    assert code == 1
    assert [(f["rule"], f["line"], f["message"]) for f in json.loads(out)["findings"]] == [
        ("ACC704", until, "snowflake: GOV.POL.REGION_GRANTS: 'US' -> AUDITOR holds through "
         "2027-01-31 on the platform, the model's grant through 2027-03-31: a narrowing (the "
         "platform ends it sooner)"),
    ]  # fmt: skip
    # roll every Databricks stage of the second plan back: the column stays
    dbx = ["--platform", "databricks", "--plans", str(plans2)]
    stages = sorted({p.name.split(".")[0] for p in plans2.rglob("*_databricks_*.sql")})
    for stage in reversed(stages):
        code, out, err = run_cli(["migrate", "rollback", *dbx])
        assert code == 0 and stage in out + err, out + err
    assert platforms.databricks.execute("SELECT valid_until FROM gov.pol.region_grants")[0] == [
        "valid_until"
    ]
    # what a plan that adds it again would meet (the stand-in answers as the platform does)
    from accord.sandbox.standins.engine import SqlError

    with pytest.raises(SqlError) as refused:
        platforms.databricks.execute(
            "ALTER TABLE gov.pol.region_grants ADD COLUMNS (valid_until DATE)"
        )
    assert refused.value.code == "FIELDS_ALREADY_EXISTS"
    plans3 = tmp_path / "migrations3"
    code, out, err = run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans3)])
    assert code == 0, out + err
    again = "\n".join(p.read_text() for p in sorted(plans3.rglob("*.sql")))
    assert "ADD COLUMNS" not in again
    apply(d, plans3, "databricks")
    assert run_cli(["drift", str(d), "--platform", "databricks"])[0] == 0


PROBES = """\
  eu_retail: [eu_reader, retail_reader]
probes:
  analyst_sees_eu:
    owner: governance
    persona: analyst
    dataset: customers
    where: {region: EU}
    expect: {warehouse_agent: clear}
  eu_retail_sees_eu_retail_only:
    owner: governance
    persona: eu_retail
    dataset: customers
    where: {region: EU}
    expect: {warehouse_agent: filtered}
  eu_retail_sees_no_us:
    owner: governance
    persona: eu_retail
    dataset: customers
    where: {region: US}
    expect: {warehouse_agent: denied}
  eu_retail_customers:
    owner: governance
    persona: eu_retail
    dataset: customers
    expect: {warehouse_agent: filtered}
"""

ROWS = [
    {"REGION": r, "BUSINESS_LINE": b, "EMAIL": f"{r.lower()}.{b.lower()}@bank.example"}
    for r in ("EU", "US")
    for b in ("RETAIL", "CORPORATE")
]


def probed_bank(platforms: Platforms, tmp_path: Path, probes: str) -> tuple[Path, Path]:
    """The bank estate with ``probes``, deployed to the Snowflake stand-in, its customers'
    rows seeded, the probe session's user granted every principal's role; the estate's
    directory and a probe configuration with a timeout."""
    d = estate_dir(platforms, tmp_path)
    text = live_bank()
    assert text.endswith("  auditor: [auditor]\n")  # personas: last
    (d / "estate.yaml").write_text(text + probes, encoding="utf-8")
    plans = tmp_path / "migrations"
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    apply(d, plans, "snowflake")
    sf = platforms.snowflake
    sf.seed_rows("BANK.CRM.CUSTOMERS", ROWS)
    model = load_project(d).model
    sf.grant_roles(
        "accord_ci", sorted({p.snowflake for p in model.principals.values() if p.snowflake})
    )
    config = tmp_path / "probe.yaml"
    config.write_text("timeout_seconds: 10\n")
    return d, config


@pytest.mark.slow
def test_probe_live_on_a_table_filtered_by_two_dimensions(
    platforms: Platforms, tmp_path: Path
) -> None:
    """``accord probe --live`` through the real connector against the Snowflake stand-in,
    which evaluates the deployed row access policy with one argument per attached column
    (``ON (REGION, BUSINESS_LINE)``, sql-reference/sql/alter-table: the policy's parameters
    take the columns in order) for the persona's roles. A ``where`` names one dimension: the
    rows that come back are clear when they hold every value of the other dimension, filtered
    when some; none, with the positive control seeing rows, is a denial. The expectations
    are the offline probes' (verify agrees with them), and the live answers match."""
    d, config = probed_bank(platforms, tmp_path, PROBES)
    sf = platforms.snowflake
    code, out, err = run_cli(
        ["probe", "--live", str(d), "--platform", "snowflake", "--format", "json",
         "--config", str(config)]
    )  # fmt: skip
    doc = json.loads(out)
    got = {o["probe"]: (o["actual"], o["depth"]) for o in doc["outcomes"]}
    assert got == {
        "analyst_sees_eu": ("clear", "live"),
        "eu_retail_sees_eu_retail_only": ("filtered", "live"),
        "eu_retail_sees_no_us": ("denied", "live"),
        "eu_retail_customers": ("filtered", "live"),
    }, json.dumps(doc["outcomes"], indent=1)
    assert code == 0, out + err
    # the query of the filtered probe: the other dimension's values among the EU rows
    assert any(
        "SELECT DISTINCT BUSINESS_LINE FROM BANK.CRM.CUSTOMERS WHERE REGION = 'EU'" in s
        for s in sf.executed
    )


TWO_KEY_PROBES = """\
  eu_retail: [eu_reader, retail_reader]
probes:
  eu_retail_sees_eu_retail:
    owner: governance
    persona: eu_retail
    dataset: customers
    where: {region: EU, business_line: RETAIL}
    expect: {warehouse_agent: clear}
  eu_retail_sees_no_eu_corporate:
    owner: governance
    persona: eu_retail
    dataset: customers
    where: {region: EU, business_line: CORPORATE}
    expect: {warehouse_agent: denied}
  analyst_sees_us_corporate:
    owner: governance
    persona: analyst
    dataset: customers
    where: {business_line: CORPORATE, region: US}
    expect: {warehouse_agent: clear}
"""


@pytest.mark.slow
def test_probe_live_with_a_where_on_both_dimensions(platforms: Platforms, tmp_path: Path) -> None:
    """``accord probe --live`` through the real connector against the Snowflake stand-in,
    which evaluates the deployed row access policy with one argument per attached column
    (``ON (REGION, BUSINESS_LINE)``, sql-reference/sql/alter-table) for the persona's roles. A
    ``where`` naming both dimensions is one predicate per dimension joined by AND (the rows
    holding both values): clear when they come back, denied when none does while the positive
    control (per dimension a granted value) sees rows. The live answers are the offline
    probes'."""
    d, config = probed_bank(platforms, tmp_path, TWO_KEY_PROBES)
    sf = platforms.snowflake
    code, out, err = run_cli(["probe", str(d), "--format", "json"])
    offline = {o["probe"]: o["actual"] for o in json.loads(out)["outcomes"]}
    code, out, err = run_cli(
        ["probe", "--live", str(d), "--platform", "snowflake", "--format", "json",
         "--config", str(config)]
    )  # fmt: skip
    doc = json.loads(out)
    got = {o["probe"]: (o["actual"], o["depth"]) for o in doc["outcomes"]}
    assert got == {
        "eu_retail_sees_eu_retail": ("clear", "live"),
        "eu_retail_sees_no_eu_corporate": ("denied", "live"),
        "analyst_sees_us_corporate": ("clear", "live"),
    }, json.dumps(doc["outcomes"], indent=1)
    assert offline == {name: actual for name, (actual, _) in got.items()}
    assert code == 0, out + err
    assert any(
        "SELECT 1 FROM BANK.CRM.CUSTOMERS WHERE REGION = 'EU' AND BUSINESS_LINE = 'CORPORATE'" in s
        for s in sf.executed
    ), sf.executed
    # the denial's positive control: a granted value of each named dimension
    assert any("WHERE REGION = 'EU' AND BUSINESS_LINE = 'RETAIL'" in s for s in sf.executed), (
        sf.executed
    )
    denied = next(o for o in doc["outcomes"] if o["probe"] == "eu_retail_sees_no_eu_corporate")
    assert "region EU, business_line RETAIL" in denied["detail"], denied["detail"]


def test_expiry_cells_compare_as_days() -> None:
    """The Snowflake connector answers a DATE column as ``datetime.date``; the Databricks
    statement API (JSON_ARRAY) as an ISO string: both read as the same day, so drift compares
    dates, not spellings; a cell that is no date is an answer accord cannot read."""
    import datetime as dt

    from accord.targets.inspect import live_day, live_rows

    assert live_day(dt.date(2027, 3, 31)) == live_day("2027-03-31") == "2027-03-31"
    assert live_day(dt.datetime(2027, 3, 31, 0, 0)) == "2027-03-31"
    assert live_day(None) is None
    with pytest.raises(ValueError):
        live_day("31/03/2027")
    rows = [
        {"region_code": "US", "group_name": "auditors", "valid_until": "2027-03-31"},
        {"region_code": "EU", "group_name": "analysts", "valid_until": None},
    ]
    assert live_rows(rows, dated=True) == (
        ("EU", "analysts", None),
        ("US", "auditors", "2027-03-31"),
    )


# ---- the whole bank estate: both dimensions, the expiring grant and the role hierarchy -------

BANK_ROLES = ["EU_READER", "RETAIL_READER", "BANKER", "BRANCH_LEAD", "ANALYST", "AUDITOR"]


def bank_hierarchy(platforms: Platforms) -> None:
    """The hierarchy as an administrator holds it (accord describes it, it does not create
    it): Snowflake roles granted to roles (sql-reference/sql/grant-role), Databricks groups
    nested in groups (a member of a group that is a group)."""
    sf, dbx = platforms.snowflake, platforms.databricks
    for role in BANK_ROLES:
        sf.execute(f"CREATE ROLE IF NOT EXISTS {role}")
    for child, parent in [
        ("BANKER", "EU_READER"),
        ("BANKER", "RETAIL_READER"),
        ("BRANCH_LEAD", "BANKER"),
    ]:
        sf.execute(f"GRANT ROLE {parent} TO ROLE {child}")
    for group in [
        "eu-readers",
        "retail-readers",
        "bankers",
        "branch-leads",
        "analysts",
        "auditors",
    ]:
        dbx.group_members.setdefault(group, set())
    dbx.nest("bankers", "eu-readers")
    dbx.nest("bankers", "retail-readers")
    dbx.nest("branch-leads", "bankers")


@pytest.mark.parametrize("style", ["table", "abac"])
@pytest.mark.slow
def test_the_whole_bank_estate_round_trips_through_introspection_and_drift(
    platforms: Platforms, tmp_path: Path, style: str
) -> None:
    """Issue 26's estate as written, its two-level hierarchy included: deployed with
    ``plan --base live:all`` and ``migrate apply``, it drifts clean on both platforms with the
    hierarchy read (coverage says so); an edge an administrator adds by hand on each platform
    (ANALYST inherits everything granted to AUDITOR; analysts nested in auditors) is ACC708,
    located at the inheriting principal, and drift exits 1."""
    d = tmp_path / "bank"
    d.mkdir()
    (d / "estate.yaml").write_text(bank(style), encoding="utf-8")
    model = load_project(d).model
    seed_model(platforms.snowflake, model)
    seed_model(platforms.databricks, model)
    bank_hierarchy(platforms)
    deploy(d, tmp_path / "migrations")
    code, out, err = run_cli(["drift", str(d), "--platform", "all", "--format", "json"])
    assert code == 0, out + err
    data = json.loads(out)
    assert data["findings"] == []
    for coverage in data["coverage"]:
        assert "hierarchy" in json.dumps(coverage), coverage
    for platform in ("snowflake", "databricks"):
        code, out, err = run_cli(["introspect", "--platform", platform, str(d), "--format", "json"])
        assert code == 0, err
        edges = json.dumps(json.loads(out)["hierarchy"])
        assert ("BANKER" if platform == "snowflake" else "bankers") in edges
    platforms.snowflake.execute("GRANT ROLE AUDITOR TO ROLE ANALYST")
    platforms.databricks.nest("analysts", "auditors")
    code, out, err = run_cli(["drift", str(d), "--platform", "all", "--format", "json"])
    assert code == 1, out + err
    text = bank(style).splitlines()
    analyst = next(i for i, ln in enumerate(text, 1) if ln.startswith("  analyst:"))
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "ACC708"]
    assert sorted((f["line"], f["message"].split(":")[0]) for f in found) == [
        (analyst, "databricks"),
        (analyst, "snowflake"),
    ]
    assert any("ANALYST" in f["message"] and "AUDITOR" in f["message"] for f in found)
    assert all(f["rule"] == "ACC708" for f in json.loads(out)["findings"])
