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
def test_bank_deploys_introspects_and_drifts_clean(
    platforms: Platforms, tmp_path: Path, style: str
) -> None:
    d = estate_dir(platforms, tmp_path, style)
    plans = tmp_path / "migrations"
    code, out, err = run_cli(["plan", str(d), "--base", "live:all", "--out", str(plans)])
    assert code == 0, out + err
    for platform in ("snowflake", "databricks"):
        code, out, err = run_cli(
            ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(d)]
        )
        assert code == 0, out + err
    code, out, err = run_cli(["drift", str(d), "--platform", "all", "--format", "json"], env={"ACCORD_DEBUG": "1"})
    assert code == 0, out + err
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
    rf_col = text[sf_rf - 1].index("[") + 1  # the value of row_filter
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
        ("ACC703", dbx_rf, rf_col, dbx_changed),
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
