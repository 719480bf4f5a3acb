"""The live side of every policy kind (issue 40, items 1 and 4), on the stand-ins.

Snowflake's projection, aggregation and join policies: deployed by a staged plan from the live
account, read back (``SHOW ... POLICIES``, ``DESCRIBE``, ``POLICY_REFERENCES``) into the objects
the model lowers to, and their drift found: missing (ACC701), put there by hand (ACC702),
changed (ACC703), unseen by a reader without the global APPLY privilege of the kind (ACC707).
Databricks: GRANT and DENY ABAC policies and metastore-level policies (Beta) read and judged: a
metastore-level row filter is unmanaged (ACC702), a GRANT over governed tables too, a GRANT of
EXECUTE at the metastore exposes the salt (ACC705), and a reader that may not list the
metastore's policies never drifts clean (ACC707)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.snowflake import Session
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms
from tests.test_snowflake_reader import least_privilege

POLICIES = ROOT / "policies"
SF = ["--platform", "snowflake"]
DBX = ["--platform", "databricks"]
TABLE = "CLINICAL.OUTCOMES.TRIAL_OUTCOMES"
AGG = "GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD"
JOIN = "GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD"
PROJ = "GOVERNANCE.POLICIES.PROJECTION_ALLOWED_FOR_CLINICAL_UNBLINDED"


def deploy(platform: str, tmp_path: Path) -> None:
    plans = tmp_path / f"plans-{platform}"
    code, _, err = run_cli(
        ["plan", str(POLICIES), "--base", f"live:{platform}", "--out", str(plans)]
    )
    assert code == 0, err
    on = ["--platform", platform]
    code, out, err = run_cli(
        ["migrate", "apply", *on, "--plans", str(plans), "--policies", str(POLICIES)]
    )
    assert code == 0, out + err


def drift(platform: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = run_cli(["drift", str(POLICIES), "--platform", platform, "--format", "json"])
    assert code in (0, 1), err
    return code, json.loads(out)["findings"]


# --------------------------------------------------------------------------------------------
# Snowflake


def test_deployed_kinds_read_back_and_drift_clean(platforms: Platforms, tmp_path: Path) -> None:
    deploy("snowflake", tmp_path)
    code, out, err = run_cli(["introspect", *SF, str(POLICIES), "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    kinds = {o["kind"] for o in doc["objects"]}
    assert {
        "ProjectionPolicy",
        "AggregationPolicy",
        "JoinPolicy",
        "ProjectionAttachment",
        "AggregationAttachment",
        "JoinAttachment",
    } <= kinds
    join = next(o for o in doc["objects"] if o["kind"] == "JoinAttachment")
    assert join["allowed_join_keys"] == ["PROGRAMME_CODE"]
    assert drift("snowflake") == (0, [])


def test_a_policy_unset_by_hand_is_missing_and_replanned(
    platforms: Platforms, tmp_path: Path
) -> None:
    deploy("snowflake", tmp_path)
    platforms.snowflake.execute(f"ALTER TABLE {TABLE} UNSET AGGREGATION POLICY")
    code, findings = drift("snowflake")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC701"]
    assert f"aggregation policy of {TABLE} is not deployed" in findings[0]["message"]
    assert findings[0]["file"].endswith("datasets.yaml")  # at the dataset's `aggregation`
    plans = tmp_path / "again"
    code, _, err = run_cli(["plan", str(POLICIES), "--base", "live:snowflake", "--out", str(plans)])
    assert code == 0, err
    written = "".join(p.read_text() for p in plans.rglob("*.sql"))
    assert f"ALTER TABLE {TABLE} SET AGGREGATION POLICY {AGG};" in written


def test_an_entity_key_set_by_hand_is_drift_and_replanned(
    platforms: Platforms, tmp_path: Path
) -> None:
    """The model's aggregation sets no ENTITY KEY; the same policy set with one by hand counts
    entities, not rows (sql-reference/sql/alter-table): another placement, never drift-clean,
    and the plan from live sets it again without the key, in one statement (FORCE)."""
    deploy("snowflake", tmp_path)
    platforms.snowflake.execute(
        f"ALTER TABLE {TABLE} SET AGGREGATION POLICY {AGG} ENTITY KEY (SUBJECT_ID) FORCE"
    )
    code, out, err = run_cli(["introspect", *SF, str(POLICIES), "--format", "json"])
    assert code == 0, err
    agg = next(o for o in json.loads(out)["objects"] if o["kind"] == "AggregationAttachment")
    assert agg["entity_key"] == ["SUBJECT_ID"]
    code, findings = drift("snowflake")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC703"], findings
    assert f"aggregation policy of {TABLE}" in findings[0]["message"]
    plans = tmp_path / "again"
    code, _, err = run_cli(["plan", str(POLICIES), "--base", "live:snowflake", "--out", str(plans)])
    assert code == 0, err
    files = {p.name: p.read_text() for p in plans.rglob("*.sql")}
    apply = files["01_snowflake_apply.sql"]
    rollback = files["01_snowflake_apply.rollback.sql"]
    assert f"ALTER TABLE {TABLE} SET AGGREGATION POLICY {AGG} FORCE;" in apply, files.keys()
    assert "ENTITY KEY" not in apply
    # the rollback puts back what was live, key and all
    assert f"SET AGGREGATION POLICY {AGG} ENTITY KEY (SUBJECT_ID) FORCE;" in rollback


def test_a_projection_policy_set_by_hand_is_unmanaged(platforms: Platforms, tmp_path: Path) -> None:
    deploy("snowflake", tmp_path)
    sf = platforms.snowflake
    sf.execute(
        "CREATE PROJECTION POLICY OPS.ADHOC.SHOW_EVERYTHING AS () RETURNS PROJECTION_CONSTRAINT "
        "-> PROJECTION_CONSTRAINT(ALLOW => TRUE)"
    )
    sf.execute(
        f"ALTER TABLE {TABLE} MODIFY COLUMN SUBJECT_ID SET PROJECTION POLICY "
        "OPS.ADHOC.SHOW_EVERYTHING FORCE"
    )
    code, findings = drift("snowflake")
    assert code == 1 and {f["rule"] for f in findings} == {"ACC702"}
    assert "OPS.ADHOC.SHOW_EVERYTHING, which the model did not put there" in findings[0]["message"]


def test_a_join_policy_whose_body_changed_is_acc703(platforms: Platforms, tmp_path: Path) -> None:
    deploy("snowflake", tmp_path)
    platforms.snowflake.execute(
        f"ALTER JOIN POLICY {JOIN} SET BODY -> JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)"
    )
    code, findings = drift("snowflake")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC703"]
    assert f"join policy {JOIN} changed on the platform: body" in findings[0]["message"]


@pytest.mark.parametrize(
    "privilege", ["APPLY PROJECTION POLICY", "APPLY AGGREGATION POLICY", "APPLY JOIN POLICY"]
)
def test_a_reader_without_the_kinds_apply_privilege_never_drifts_clean(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, privilege: str
) -> None:
    deploy("snowflake", tmp_path)
    least_privilege(platforms.snowflake, POLICIES, monkeypatch, without=(privilege,))
    code, findings = drift("snowflake")
    assert code == 1 and "ACC707" in {f["rule"] for f in findings}
    assert any(f"global {privilege} privilege" in f["message"] for f in findings)


def test_the_standin_answers_a_least_privilege_reader_as_documented(
    platforms: Platforms, tmp_path: Path
) -> None:
    """SHOW <kind> POLICIES lists, DESCRIBE and POLICY_REFERENCES answer, only what the
    reading role holds APPLY (or OWNERSHIP) on, or every policy with the global APPLY privilege
    of the kind (sql-reference/sql/show-projection-policies, desc-projection-policy,
    functions/policy_references, usage notes), in a schema the role can resolve (USAGE on the
    parent database and schema, as for every kind: issue 41, item 4)."""
    deploy("snowflake", tmp_path)
    sf = platforms.snowflake
    reader = Session("READER", primary="NOBODY_SPECIAL", login_role="NOBODY_SPECIAL")
    assert sf.execute_as(reader, "SHOW JOIN POLICIES IN ACCOUNT")[1] == []
    with pytest.raises(SqlError, match="does not exist or not authorized"):
        sf.execute_as(reader, f"DESCRIBE JOIN POLICY {JOIN}")
    sf.grant_to_role("NOBODY_SPECIAL", "APPLY JOIN POLICY", "ACCOUNT")
    assert sf.execute_as(reader, "SHOW JOIN POLICIES IN ACCOUNT")[1] == []  # not resolved yet
    database, schema, _ = JOIN.split(".")
    sf.grant_to_role("NOBODY_SPECIAL", "USAGE", "DATABASE", database)
    sf.grant_to_role("NOBODY_SPECIAL", "USAGE", "SCHEMA", f"{database}.{schema}")
    names = [r[1] for r in sf.execute_as(reader, "SHOW JOIN POLICIES IN ACCOUNT")[1]]
    assert names == [JOIN.rsplit(".", 1)[1]]
    cols, rows = sf.execute_as(reader, f"DESCRIBE JOIN POLICY {JOIN}")
    assert cols == ["name", "signature", "return_type", "body"] and rows[0][1] == "()"
    cols, rows = sf.execute(
        "SELECT POLICY_KIND, REF_COLUMN_NAME, REF_ARG_COLUMN_NAMES FROM TABLE(CLINICAL."
        f"INFORMATION_SCHEMA.POLICY_REFERENCES(REF_ENTITY_NAME => '{TABLE}', "
        "REF_ENTITY_DOMAIN => 'table')) ORDER BY 1"
    )
    assert rows == [
        ("AGGREGATION_POLICY", None, None),
        ("JOIN_POLICY", None, '["PROGRAMME_CODE"]'),
        ("PROJECTION_POLICY", "SUBJECT_ID", None),
    ]


def test_the_standin_refuses_what_snowflake_refuses(platforms: Platforms, tmp_path: Path) -> None:
    """An attached policy cannot be dropped; a second aggregation policy is refused without
    FORCE (alter-table)."""
    deploy("snowflake", tmp_path)
    sf = platforms.snowflake
    with pytest.raises(SqlError, match="cannot be dropped because it is attached"):
        sf.execute(f"DROP PROJECTION POLICY {PROJ}")
    with pytest.raises(SqlError, match="already has a aggregation policy"):
        sf.execute(f"ALTER TABLE {TABLE} SET AGGREGATION POLICY {AGG}")
    sf.execute(f"ALTER TABLE {TABLE} SET AGGREGATION POLICY {AGG} FORCE")


# --------------------------------------------------------------------------------------------
# Databricks: GRANT and DENY policies, metastore scope


def test_a_metastore_level_row_filter_is_unmanaged(platforms: Platforms, tmp_path: Path) -> None:
    deploy("databricks", tmp_path)
    dbx = platforms.databricks
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
    code, findings = drift("databricks")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC702"]
    assert "ABAC policy org_wide_filter on metastore ms-standin" in findings[0]["message"]


def test_a_grant_policy_over_governed_tables_and_one_at_the_metastore(
    platforms: Platforms, tmp_path: Path
) -> None:
    deploy("databricks", tmp_path)
    dbx = platforms.databricks
    dbx.add_grant_policy("console_select", "CATALOG", "omics", ["SELECT"], ["contractors"])
    code, findings = drift("databricks")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC702"]
    assert "a GRANT policy grants SELECT to contractors" in findings[0]["message"]
    dbx.add_grant_policy("org_execute", "METASTORE", "ms-standin", ["EXECUTE"], ["analysts"])
    code, findings = drift("databricks")
    assert "ACC705" in {f["rule"] for f in findings}
    assert any("through policy org_execute on metastore" in f["message"] for f in findings)


def test_a_reader_that_may_not_list_the_metastores_policies_never_drifts_clean(
    platforms: Platforms, tmp_path: Path
) -> None:
    from tests.test_databricks_truth import GOVERNED
    from tests.test_databricks_truth import least_privilege as dbx_reader

    deploy("databricks", tmp_path)
    dbx = platforms.databricks
    dbx_reader(dbx, GOVERNED)
    assert drift("databricks")[0] == 0
    dbx.metastore_readers.clear()  # scoped to its catalogs: the metastore's policies unseen
    code, findings = drift("databricks")
    assert code == 1 and [f["rule"] for f in findings] == ["ACC707"]
    assert "ABAC policies on the metastore" in findings[0]["message"]
