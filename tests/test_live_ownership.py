"""Owners are read and judged (issue 41, item 1), on the stand-ins with a least-privilege reader.

An owner is one more who can call, read or change an object (format "Ownership"): on Snowflake
OWNERSHIP moves with ``GRANT OWNERSHIP`` (docs.snowflake.com/en/sql-reference/sql/
grant-ownership) and ``SHOW GRANTS ON FUNCTION`` names the owner in its OWNERSHIP row
(sql-reference/sql/show-grants); on Databricks ``ALTER FUNCTION ... OWNER TO`` moves it
(sql-ref-syntax-ddl-alter-function) and ``FunctionInfo.owner`` / ``TableInfo.owner`` name it, and
a table's owner can drop its filter and masks (sql-ref-syntax-ddl-row-filter). The model names
the expected owner (``platforms.<p>.owner``). Each test fails on main, where owners are never
read: a salt owned by a role PUBLIC holds drifted clean, and the USAGE granted back to the
deployer was blamed (ACC705) and revoked by the plan, leaving the new owner in place.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from tests.cli import run_cli
from tests.live_helpers import (
    ROOT,
    SNOWFLAKE_READER,
    Platforms,
    databricks_reader,
    snowflake_reader,
)

SALT = "GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT"
DBX_SALT = "governance.policies.subject_pseudonym_salt"
DEPLOYER = "ACCORD_DEPLOYER"  # the Snowflake stand-in's deploying role
DBX_DEPLOYER = "accord-deployer"  # the Databricks stand-in's deploying principal


def owned_estate(tmp_path: Path, owner: bool = True) -> Path:
    """policies/ with (or without) ``owner`` on both platforms."""
    d = tmp_path / "estate"
    shutil.copytree(ROOT / "policies", d)
    if owner:
        p = d / "platforms.yaml"
        text = p.read_text()
        text = text.replace(
            "governance_schema: GOVERNANCE.POLICIES",
            f"governance_schema: GOVERNANCE.POLICIES\n    owner: {DEPLOYER}",
        )
        text = text.replace(
            "governance_schema: governance.policies",
            f"governance_schema: governance.policies\n    owner: {DBX_DEPLOYER}",
        )
        p.write_text(text)
    return d


def deploy(d: Path, platform: str, tmp_path: Path) -> None:
    plans = tmp_path / f"deploy-{platform}"
    code, _, err = run_cli(["plan", str(d), "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err


def drift(d: Path, platform: str) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    code, out, err = run_cli(["drift", str(d), "--platform", platform, "--format", "json"])
    assert code in (0, 1), err
    data = json.loads(out)
    (coverage,) = data["coverage"]
    return code, data["findings"], coverage


def repair(d: Path, platform: str, tmp_path: Path) -> str:
    """Plan from the live base and apply it; the plan's SQL."""
    plans = tmp_path / f"repair-{platform}"
    code, out, err = run_cli(["plan", str(d), "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, out + err
    sql = "\n".join(p.read_text() for p in sorted(plans.rglob("*.sql")))
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    return sql


def least_privilege_snowflake(
    platforms: Platforms, d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snowflake_reader(platforms.snowflake, lower_all(load_project(d))["snowflake"])
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)


def least_privilege_databricks(platforms: Platforms, d: Path) -> None:
    expected = lower_all(load_project(d))["databricks"]
    schemas = {getattr(o, "table", "").rsplit(".", 1)[0] for o in expected} - {""}
    databricks_reader(platforms.databricks, schemas, expected.governance_schema)


def of(findings: list[dict[str, Any]], rule: str) -> list[str]:
    return [f["message"] for f in findings if f["rule"] == rule]


# ------------------------------------------------------------------ Snowflake


def test_a_salt_owned_by_a_role_public_holds_is_acc705_and_the_plan_transfers_it_back(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case: a console moves the salt function's ownership to LAB_ANALYSTS, a role
    PUBLIC holds, and grants USAGE back to the deployer so the policies keep working. Drift
    reports the owner (ACC705, with who holds it), never the deployer's USAGE; the repair plan
    transfers ownership back (GRANT OWNERSHIP ... COPY CURRENT GRANTS) and revokes nothing from
    the deployer; drift is then clean."""
    d = owned_estate(tmp_path)
    deploy(d, "snowflake", tmp_path)
    sf = platforms.snowflake
    sf.grant_to_role("PUBLIC", "USAGE", "ROLE", "LAB_ANALYSTS")
    sf.execute(f"GRANT OWNERSHIP ON FUNCTION {SALT}() TO ROLE LAB_ANALYSTS COPY CURRENT GRANTS")
    sf.grant_on_function(SALT, "USAGE", DEPLOYER, "ROLE")
    least_privilege_snowflake(platforms, d, monkeypatch)
    code, findings, coverage = drift(d, "snowflake")
    assert code == 1 and coverage["complete"] is True, findings
    (owned,) = of(findings, "ACC705")
    assert f"salt function {SALT} is owned by LAB_ANALYSTS" in owned
    assert "granted to PUBLIC: every user of the account" in owned
    assert f"not {DEPLOYER} (platforms.snowflake.owner)" in owned
    assert not any(DEPLOYER in m and "grants USAGE" in m for m in of(findings, "ACC705"))
    monkeypatch.delenv("SNOWFLAKE_ROLE")  # the deployer plans and applies
    sql = repair(d, "snowflake", tmp_path)
    assert f"GRANT OWNERSHIP ON FUNCTION {SALT}() TO ROLE {DEPLOYER} COPY CURRENT GRANTS" in sql
    assert f"FROM ROLE {DEPLOYER}" not in sql
    assert sf.policies[SALT].owner == DEPLOYER
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    assert drift(d, "snowflake")[:2] == (0, [])


def test_a_policy_and_a_mapping_table_owned_by_another_role_are_acc702(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A masking policy's owner can change its body or drop it; a mapping table's owner can
    change who is granted what: each owned by another role than the expected one is ACC702,
    and the plan transfers both back."""
    d = owned_estate(tmp_path)
    deploy(d, "snowflake", tmp_path)
    sf = platforms.snowflake
    sf.set_owner("MASKING_POLICY", "GOVERNANCE.POLICIES.FREE_TEXT_MASK", "CONSOLE_ADMIN")
    sf.set_owner("TABLE", "GOVERNANCE.POLICIES.PROGRAMME_GRANTS", "CONSOLE_ADMIN")
    least_privilege_snowflake(platforms, d, monkeypatch)
    code, findings, _ = drift(d, "snowflake")
    said = "\n".join(of(findings, "ACC702"))
    assert code == 1
    assert "masking policy GOVERNANCE.POLICIES.FREE_TEXT_MASK is owned by CONSOLE_ADMIN" in said
    assert "mapping table GOVERNANCE.POLICIES.PROGRAMME_GRANTS is owned by CONSOLE_ADMIN" in said
    monkeypatch.delenv("SNOWFLAKE_ROLE")
    sql = repair(d, "snowflake", tmp_path)
    assert "GRANT OWNERSHIP ON MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK TO ROLE" in sql
    assert "GRANT OWNERSHIP ON TABLE GOVERNANCE.POLICIES.PROGRAMME_GRANTS TO ROLE" in sql
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    assert drift(d, "snowflake")[:2] == (0, [])


def test_a_governed_table_owned_by_an_identity_not_given_everything_is_acc702(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A governed table owned by a role the model does not give every row and every column
    in the clear: ACC702 at its dataset, and the coverage says the verdict on it holds only
    while its owner leaves its policies alone. The plan does not move a table it does not
    own."""
    d = owned_estate(tmp_path)
    deploy(d, "snowflake", tmp_path)
    sf = platforms.snowflake
    sf.set_owner("TABLE", "DISCOVERY.ASSAYS.RESULTS", "DATA_STEWARD")  # unfiltered, yet masked
    least_privilege_snowflake(platforms, d, monkeypatch)
    code, findings, coverage = drift(d, "snowflake")
    (owned,) = of(findings, "ACC702")
    assert code == 1 and "governed table DISCOVERY.ASSAYS.RESULTS is owned by DATA_STEWARD" in owned
    assert any("DISCOVERY.ASSAYS.RESULTS is owned by DATA_STEWARD" in n for n in coverage["notes"])
    assert next(f for f in findings if f["rule"] == "ACC702")["object"] == "datasets.assay_results"


def test_a_reader_that_cannot_see_a_table_owner_is_incomplete(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without MANAGE GRANTS and without a privilege on a governed table, SHOW TABLES does not
    list it: its owner is unseen (ACC707), never taken for the expected one; the reader check
    names the grant that reads it."""
    d = owned_estate(tmp_path)
    deploy(d, "snowflake", tmp_path)
    sf = platforms.snowflake
    snowflake_reader(sf, lower_all(load_project(d))["snowflake"], without=("MANAGE GRANTS",))
    sf.role_grants[SNOWFLAKE_READER].discard(("SELECT", "TABLE", "DISCOVERY.ASSAYS.RESULTS"))
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    code, out, _ = run_cli(["introspect", "--check-reader", "--platform", "snowflake", str(d)])
    assert code == 1
    assert "the owner of governed table DISCOVERY.ASSAYS.RESULTS" in out
    assert f"GRANT REFERENCES ON TABLE DISCOVERY.ASSAYS.RESULTS TO ROLE {SNOWFLAKE_READER}" in out
    code, findings, coverage = drift(d, "snowflake")
    assert code == 1 and coverage["complete"] is False
    assert any(
        "the owner of governed table DISCOVERY.ASSAYS.RESULTS" in m for m in of(findings, "ACC707")
    )


def test_without_an_expected_owner_ownership_is_said_not_judged(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model without ``owner``: the coverage says ownership was not judged, never that it
    is fine; nothing is read or reported of owners."""
    d = owned_estate(tmp_path, owner=False)
    deploy(d, "snowflake", tmp_path)
    platforms.snowflake.set_owner("FUNCTION", SALT, "LAB_ANALYSTS")
    least_privilege_snowflake(platforms, d, monkeypatch)
    _, findings, coverage = drift(d, "snowflake")
    assert (
        "ownership was not judged: the model names no platforms.snowflake.owner"
        in coverage["notes"]
    )
    assert not any("owned by" in f["message"] for f in findings)


# ------------------------------------------------------------------ Databricks


def test_a_databricks_salt_owned_by_a_group_is_acc705_and_transferred_back(
    platforms: Platforms, tmp_path: Path
) -> None:
    """The issue's Databricks case: the salt's owner changed to a group (ALTER FUNCTION ...
    OWNER TO). Drift reports it (ACC705) with the least-privilege reader; the plan transfers
    it back (ALTER FUNCTION ... OWNER TO `accord-deployer`) and drift is clean."""
    d = owned_estate(tmp_path)
    deploy(d, "databricks", tmp_path)
    dbx = platforms.databricks
    dbx.execute(f"ALTER FUNCTION {DBX_SALT} OWNER TO `analysts`")
    least_privilege_databricks(platforms, d)
    code, findings, coverage = drift(d, "databricks")
    assert code == 1 and coverage["complete"] is True, findings
    (owned,) = of(findings, "ACC705")
    assert f"salt function {DBX_SALT} is owned by analysts, not {DBX_DEPLOYER}" in owned
    dbx.admins.add(dbx.reader)  # the deployer plans and applies
    sql = repair(d, "databricks", tmp_path)
    assert f"ALTER FUNCTION {DBX_SALT} OWNER TO `{DBX_DEPLOYER}`" in sql
    assert dbx.policies[DBX_SALT.upper()].owner == DBX_DEPLOYER
    dbx.admins.clear()
    assert drift(d, "databricks")[:2] == (0, [])


def test_a_databricks_table_owner_that_can_drop_the_filter_is_acc702(
    platforms: Platforms, tmp_path: Path
) -> None:
    """On Databricks a table's owner can drop its row filter and masks: a governed table owned
    by a group the model filters and masks is ACC702 (read from information_schema.tables)."""
    d = owned_estate(tmp_path)
    deploy(d, "databricks", tmp_path)
    dbx = platforms.databricks
    dbx.execute("ALTER TABLE omics.variants.calls OWNER TO `cro-external`")
    least_privilege_databricks(platforms, d)
    code, findings, _ = drift(d, "databricks")
    (owned,) = of(findings, "ACC702")
    assert code == 1 and "governed table omics.variants.calls is owned by cro-external" in owned
    assert "drop its row filter and masks" in owned
