"""``accord import --platform P`` of every policy kind issue 40 added, on the stand-ins.

Snowflake: projection, aggregation and join policies deployed by accord (every setting: an
enforcement of ``nullify``, no exempt principal, no join key) come back as the model's
``projection``, ``aggregation`` and ``join`` fields, and the plan right after plans no change;
console-made ones the model cannot say (a ``CURRENT_ROLE()`` check as Snowflake's guide writes
it, an aggregation policy set with an ENTITY KEY, a join policy accord would name otherwise) are
kept unmanaged with why, left alone by plan and drift, and linted. Databricks: an ABAC GRANT
policy, a DENY policy and a metastore-level row filter (Beta) are kept unmanaged with why (the
model has none of them), and drift then leaves them alone instead of reporting ACC702.

The reference estate's own aggregation, join and projection policies round-trip in
tests/test_import_live.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms, seed
from tests.test_import_live import deploy, import_live, lint, model, plans_no_change

pytestmark = pytest.mark.slow  # end-to-end live runs

KINDS = """\
version: 1
platforms:
  snowflake: {governance_schema: GOVERNANCE.POLICIES}
principals:
  auditor: {snowflake: AUDITOR}
  data_steward: {snowflake: DATA_STEWARD}
datasets:
  visits:
    platform: snowflake
    table: CLINIC.CORE.VISITS
    aggregation: {min_group_size: 3}
    join: {unrestricted_for: [auditor, data_steward]}
    columns:
      PATIENT_ID: {type: VARCHAR, projection: {allowed_for: [], enforcement: nullify}}
      NOTES: {type: VARCHAR, projection: {allowed_for: [auditor, data_steward]}}
  claims:
    platform: snowflake
    table: CLINIC.CORE.CLAIMS
    join: {allowed_join_keys: [PATIENT_ID, VISIT_ID]}
    columns:
      PATIENT_ID: {type: VARCHAR, projection: {allowed_for: [], enforcement: nullify}}
"""


def test_every_snowflake_kind_deployed_by_accord_comes_back(
    platforms: Platforms, tmp_path: Path
) -> None:
    estate = tmp_path / "kinds"
    estate.mkdir()
    (estate / "kinds.yaml").write_text(KINDS)
    seed(platforms.snowflake, estate)
    platforms.snowflake.seed_table(
        "CLINIC.CORE.CLAIMS", {"PATIENT_ID": "VARCHAR", "VISIT_ID": "VARCHAR"}
    )
    deploy(estate, "snowflake", tmp_path / "plans")
    out = tmp_path / "imported"
    code, stdout, err = import_live("snowflake", out)
    assert code == 0, stdout + err
    assert not (out / "unmanaged.yaml").exists()
    found = model(out)
    assert found["datasets"]["visits"] == {
        "platform": "snowflake",
        "table": "CLINIC.CORE.VISITS",
        "aggregation": {"min_group_size": 3},
        "join": {"unrestricted_for": ["auditor", "data_steward"]},
        "columns": {
            "NOTES": {
                "type": "VARCHAR",
                "projection": {"allowed_for": ["auditor", "data_steward"]},
            },
            "PATIENT_ID": {
                "type": "VARCHAR",
                "projection": {"allowed_for": [], "enforcement": "nullify"},
            },
        },
    }
    assert found["datasets"]["claims"]["join"] == {"allowed_join_keys": ["PATIENT_ID", "VISIT_ID"]}
    assert found["principals"] == {
        "auditor": {"snowflake": "AUDITOR"},
        "data_steward": {"snowflake": "DATA_STEWARD"},
    }
    # the column types no projection policy says: written as VARCHAR, and said
    assert (
        "datasets.visits.columns.NOTES: a projection policy has no signature"
        in (out / "IMPORT.md").read_text()
    )
    plans_no_change(out, "snowflake", tmp_path)


def test_console_policies_of_the_new_kinds_are_kept_left_alone_and_linted(
    platforms: Platforms, tmp_path: Path
) -> None:
    sf = platforms.snowflake
    estate = tmp_path / "kinds"
    estate.mkdir()
    (estate / "kinds.yaml").write_text(KINDS)
    seed(sf, estate)
    sf.seed_table("CLINIC.CORE.CLAIMS", {"PATIENT_ID": "VARCHAR", "VISIT_ID": "VARCHAR"})
    deploy(estate, "snowflake", tmp_path / "plans")
    sf.seed_table("CLINIC.CORE.SHARED", {"EMAIL": "VARCHAR", "CUSTOMER_ID": "VARCHAR"})
    # the shape of docs.snowflake.com user-guide/projection-policies' example: CURRENT_ROLE()
    sf.execute(
        "CREATE PROJECTION POLICY GOVERNANCE.POLICIES.CONSOLE_PROJECTION AS () RETURNS "
        "PROJECTION_CONSTRAINT -> CASE WHEN CURRENT_ROLE() IN ('ANALYST') THEN "
        "PROJECTION_CONSTRAINT(ALLOW => true) ELSE PROJECTION_CONSTRAINT(ALLOW => false) END"
    )
    sf.execute(
        "ALTER TABLE CLINIC.CORE.SHARED MODIFY COLUMN EMAIL SET PROJECTION POLICY "
        "GOVERNANCE.POLICIES.CONSOLE_PROJECTION"
    )
    # accord's own shape, set with an entity key (sql-reference/sql/alter-table) the model lacks
    sf.execute(
        "CREATE AGGREGATION POLICY GOVERNANCE.POLICIES.CONSOLE_AGGREGATION AS () RETURNS "
        "AGGREGATION_CONSTRAINT -> AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5)"
    )
    sf.execute(
        "ALTER TABLE CLINIC.CORE.SHARED SET AGGREGATION POLICY "
        "GOVERNANCE.POLICIES.CONSOLE_AGGREGATION ENTITY KEY (CUSTOMER_ID)"
    )
    out = tmp_path / "imported"
    code, stdout, err = import_live("snowflake", out)
    assert code == 1, stdout + err
    kept = {e["name"]: e for e in model(out)["unmanaged"].values()}
    assert set(kept) == {
        "GOVERNANCE.POLICIES.CONSOLE_PROJECTION",
        "CLINIC.CORE.SHARED.EMAIL",
        "GOVERNANCE.POLICIES.CONSOLE_AGGREGATION",
        "CLINIC.CORE.SHARED",
    }
    projection = kept["GOVERNANCE.POLICIES.CONSOLE_PROJECTION"]
    assert projection["kind"] == "projection_policy"
    assert "by more than IS_ROLE_IN_SESSION checks" in projection["why"]
    assert "CURRENT_ROLE()" in projection["sql"]
    assert kept["CLINIC.CORE.SHARED.EMAIL"]["kind"] == "projection_attachment"
    entity = kept["CLINIC.CORE.SHARED"]
    assert entity["kind"] == "aggregation_attachment"
    assert "ENTITY KEY (CUSTOMER_ID)" in entity["why"] and "ENTITY KEY" in entity["sql"]
    # the accord-made kinds still come back as the model's fields
    assert model(out)["datasets"]["visits"]["aggregation"] == {"min_group_size": 3}
    said = plans_no_change(out, "snowflake", tmp_path)
    assert "projection policy GOVERNANCE.POLICIES.CONSOLE_PROJECTION (unmanaged entry" in said
    code, drift, err = run_cli(["drift", str(out), "--platform", "snowflake", "--format", "json"])
    assert code == 0, drift + err
    (coverage,) = json.loads(drift)["coverage"]
    # the policies (the governance schema is read whole); their attachments are on a table the
    # model does not govern, which drift does not read
    assert len(coverage["left_alone"]) == 2
    assert ("ACC101", "GOVERNANCE.POLICIES.CONSOLE_PROJECTION") in lint(out)


def test_databricks_grant_deny_and_metastore_policies_are_kept_and_left_alone(
    platforms: Platforms, tmp_path: Path
) -> None:
    dbx = platforms.databricks
    deploy(ROOT / "policies", "databricks", tmp_path / "plans")
    dbx.add_grant_policy("console_select", "CATALOG", "omics", ["SELECT"], ["contractors"])
    dbx.add_grant_policy(
        "no_access_control", "SCHEMA", "omics.variants", ["MANAGE"], ["analysts"], deny=True
    )
    dbx.abac[("METASTORE", "ms-standin", "ORG_WIDE_FILTER")] = {
        "name": "org_wide_filter",
        "on_securable_type": "METASTORE",
        "on_securable_fullname": "ms-standin",
        "for_securable_type": "TABLE",
        "policy_type": "POLICY_TYPE_ROW_FILTER",
        "to_principals": ["account users"],
        "except_principals": [],
        "row_filter": {"function_name": "ops.adhoc.everything", "using": []},
    }
    out = tmp_path / "imported"
    code, stdout, err = import_live("databricks", out)
    assert code == 1, stdout + err
    kept = {e["name"]: e for e in model(out)["unmanaged"].values()}
    assert set(kept) == {
        "console_select ON CATALOG omics",
        "no_access_control ON SCHEMA omics.variants",
        "org_wide_filter ON METASTORE ms-standin",
    }
    assert {e["kind"] for e in kept.values()} == {"abac_policy"}
    grant = kept["console_select ON CATALOG omics"]
    assert "an ABAC GRANT policy" in grant["why"] and "widens what identities reach" in grant["why"]
    assert "GRANT SELECT TO contractors" in grant["sql"]
    deny = kept["no_access_control ON SCHEMA omics.variants"]
    assert "an ABAC DENY policy" in deny["why"] and "DENY MANAGE TO analysts" in deny["sql"]
    assert "at metastore scope" in kept["org_wide_filter ON METASTORE ms-standin"]["why"]
    assert not model(out)["datasets"]["calls"].get("unmanaged")
    plans_no_change(out, "databricks", tmp_path)
    # drift reports both as ACC702 against the reference; against the import it leaves them
    code, drift, err = run_cli(["drift", str(out), "--platform", "databricks", "--format", "json"])
    assert code == 0, drift + err
    (coverage,) = json.loads(drift)["coverage"]
    assert sorted(coverage["left_alone"]) == [
        "ABAC DENY policy no_access_control ON SCHEMA omics.variants (unmanaged entry "
        "'databricks_abac_no_access_control_on_schema_omics_variants')",
        "ABAC GRANT policy console_select ON CATALOG omics (unmanaged entry "
        "'databricks_abac_console_select_on_catalog_omics')",
        "ABAC policy org_wide_filter on metastore ms-standin (unmanaged entry "
        "'databricks_abac_org_wide_filter_on_metastore_ms_standin')",
    ]
    assert lint(out) == set()
