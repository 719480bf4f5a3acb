"""`row_filter` as a list of `{entitlement, column[, unfiltered_for]}` entries: the one-entry
list (and a one-entry `dimensions`) is the mapping form and compiles to exactly the same files
on every target and style; malformed lists are located errors (exit 2, nothing written).
Several dimensions are tested in tests/test_several_dimensions.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.compiler.model.loader import load_documents
from accord.compiler.model.validate import validate_raw
from accord.targets.render import render_files
from tests.cli import run_cli

ESTATE = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol, style: STYLE}
principals:
  analyst: {snowflake: ANALYST, databricks: analysts}
  steward: {snowflake: STEWARD, databricks: stewards}
entitlements:
  region: {EU: [analyst], US: [steward]}
  business_line: {RETAIL: [analyst]}
datasets:
  customers:
    platform: snowflake
    table: SALES.CRM.CUSTOMERS
    row_filter: FILTER_SF
  customers_lake:
    platform: databricks
    table: sales.crm.customers
    replica_of: customers
    row_filter: FILTER_DBX
personas:
  analyst: [analyst]
  steward: [steward]
"""

MAPPING = "{entitlement: region, column: REGION, unfiltered_for: [steward]}"
LISTED = "[{entitlement: region, column: REGION, unfiltered_for: [steward]}]"


def estate(sf: str, dbx: str, style: str = "table") -> str:
    return (
        ESTATE.replace("FILTER_SF", sf)
        .replace("FILTER_DBX", dbx.replace("REGION", "region"))
        .replace("STYLE", style)
    )


def files_of(text: str) -> dict[str, str]:
    project = validate_raw(load_documents([(text.encode(), "estate.yaml")], Path(".")))
    return render_files(project, "all")


@pytest.mark.parametrize("style", ["table", "abac"])
def test_a_one_entry_list_compiles_exactly_as_the_mapping(style: str) -> None:
    mapping = files_of(estate(MAPPING, MAPPING, style))
    listed = files_of(estate(LISTED, MAPPING, style))
    both = files_of(estate(LISTED, LISTED, style))
    wide = "{dimensions: [{entitlement: region, column: REGION}], unfiltered_for: [steward]}"
    dims = files_of(estate(wide, MAPPING, style))
    assert listed == mapping
    assert both == mapping
    assert dims == mapping
    assert "ON (REGION)" in mapping["snowflake/050_attachments.sql"]


@pytest.mark.parametrize(
    ("row_filter", "message"),
    [
        (
            "[{entitlement: region, column: REGION}, {entitlement: region, column: LINE}]",
            "dimension 'region' is listed twice",
        ),
        (
            "[{entitlement: region, column: REGION}, {entitlement: business_line, column: region}]",
            "column region keys two dimensions",
        ),
        (
            "[{entitlement: region, column: REGION}, {entitlement: busines_line, column: LINE}]",
            "unknown entitlement 'busines_line' (did you mean 'business_line'?)",
        ),
        ("[]", "a row_filter list needs at least one {entitlement, column} entry"),
        ("[region]", "each row_filter entry is a mapping {entitlement, column}"),
        (
            "[{entitlement: region, column: REGION, expression: {snowflake: 'TRUE'}}]",
            "takes entitlement, column and unfiltered_for, not expression",
        ),
    ],
)
def test_other_lists_are_located_errors(tmp_path: Path, row_filter: str, message: str) -> None:
    text = estate(row_filter, MAPPING)
    d = tmp_path / "pol"
    d.mkdir()
    (d / "estate.yaml").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = run_cli(["compile", str(d), "--out", str(out)])
    assert code == 2, (stdout, err)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "row_filter: [" in ln)
    assert err.startswith(f"{d / 'estate.yaml'}:{line}:"), err
    assert message in err
    assert not out.exists()
