"""End to end on both stand-ins: deploy policies/ from an empty estate through
``plan --base live:all`` + ``migrate apply``; drift is clean; tamper in the stand-ins; drift
reports each difference at the model's file:line:column; a plan from live repairs it; drift is
clean again. And introspection of the deployed estate equals the lowered catalog object by
object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.identity import identity
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = str(ROOT / "policies")

#: end to end, seconds a test: each deploys policies/ on both stand-ins and plans and applies
#: again (the fast tier keeps the stand-in tests of single commands)
pytestmark = pytest.mark.slow


def deploy(plans: Path) -> None:
    code, out, err = run_cli(["plan", POLICIES, "--base", "live:all", "--out", str(plans)])
    assert code == 0, err
    for platform in ("snowflake", "databricks"):
        code, out, err = apply_on(platform, plans)
        assert code == 0, out + err


def apply_on(platform: str, plans: Path) -> tuple[int, str, str]:
    return run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", POLICIES]
    )


def drift_json() -> tuple[int, list[dict[str, object]]]:
    code, out, err = run_cli(["drift", POLICIES, "--platform", "all", "--format", "json"])
    assert code in (0, 1), err
    return code, json.loads(out)["findings"]


def test_deploy_from_empty_then_drift_is_clean(platforms: Platforms, tmp_path: Path) -> None:
    code, findings = drift_json()
    # nothing deployed yet; and a governance database that does not exist yet looks, to the
    # reading role, like one it may not see (Snowflake error 002003 for both): not proven
    assert code == 1 and {f["rule"] for f in findings} <= {"ACC701", "ACC707"}
    assert all(
        "GOVERNANCE" in f["message"] and "does not exist or not authorized" in f["message"]
        for f in findings
        if f["rule"] == "ACC707"
    )
    deploy(tmp_path / "migrations")
    plan = json.loads(next((tmp_path / "migrations").glob("0001_*/plan.json")).read_text())
    assert plan["base_fingerprint"].startswith("live:databricks=")
    assert drift_json() == (0, [])
    # planning again from the deployed estate finds nothing to do
    code, out, _ = run_cli(["plan", POLICIES, "--base", "live:all", "--out", str(tmp_path / "m2")])
    assert code == 0 and "do not differ" in out
    assert "accord plan: base: what is deployed (live:all)" in out.splitlines()


def test_introspect_equals_the_lowered_catalog(platforms: Platforms, tmp_path: Path) -> None:
    deploy(tmp_path / "migrations")
    lowered = lower_all(load_project(POLICIES))
    for platform in ("snowflake", "databricks"):
        code, out, err = run_cli(
            ["introspect", "--platform", platform, POLICIES, "--format", "json"]
        )
        assert code == 0, err
        live = json.loads(out)
        assert live["unreadable"] == [] and live["salt_grants"] == []
        from accord.targets.inspect import object_json

        want = sorted(
            (json.dumps(object_json(o, platform), sort_keys=True) for o in lowered[platform]),
        )
        got = sorted(json.dumps(o, sort_keys=True) for o in live["objects"])
        assert got == want
        assert not any("secret" in json.dumps(o) for o in live["objects"])  # salts never read out
    assert identity  # the comparison is by identity and content, object by object


def test_tamper_drift_repair(platforms: Platforms, tmp_path: Path) -> None:
    deploy(tmp_path / "migrations")
    sf, dbx = platforms.snowflake, platforms.databricks
    # unset a mask (Snowflake), add a console policy on a governed table (Snowflake)
    sf.execute("ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN SUBJECT_ID UNSET MASKING POLICY")
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})
    sf.execute(
        "CREATE MASKING POLICY OPS.ADHOC.CONSOLE_MASK AS (VAL VARCHAR) RETURNS VARCHAR -> VAL"
    )
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET MASKING POLICY "
        "OPS.ADHOC.CONSOLE_MASK FORCE"
    )
    # delete a mapping row on one platform only (Databricks)
    dbx.execute(
        "DELETE FROM governance.policies.programme_grants "
        "WHERE programme_code = 'ONC-101' AND group_name = 'bench-chemists'"
    )
    # widen a salt function grant (Snowflake)
    sf.execute(
        "GRANT USAGE ON FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() TO ROLE ANALYST"
    )

    code, findings = drift_json()
    assert code == 1
    got = {(f["rule"], f["file"], f["line"]) for f in findings}
    by_rule = {f["rule"]: f for f in findings}
    datasets = str(ROOT / "policies/datasets.yaml")
    entitlements = str(ROOT / "policies/entitlements.yaml")
    masks = str(ROOT / "policies/masks.yaml")
    assert {r for r, _, _ in got} == {"ACC701", "ACC702", "ACC704", "ACC705"}
    missing = [f for f in findings if f["rule"] == "ACC701"]
    assert len(missing) == 1 and "SUBJECT_ID is not deployed" in missing[0]["message"]
    assert missing[0]["file"] == datasets
    assert (
        "OPS.ADHOC.CONSOLE_MASK" in by_rule["ACC702"]["message"]
        and by_rule["ACC702"]["file"] == datasets
    )
    grants = [f for f in findings if f["rule"] == "ACC704"]
    assert all(f["file"] == entitlements for f in grants)
    assert any("missing 'ONC-101' -> bench-chemists" in f["message"] for f in grants)
    # the eleven hours: the dimension, the value and the principals each side grants
    assert (
        "dimension 'programme', value 'ONC-101': databricks grants clinical_unblinded, "
        "snowflake grants bench_chemist, clinical_unblinded"
    ) in [f["message"] for f in grants]
    assert "ANALYST" in by_rule["ACC705"]["message"] and by_rule["ACC705"]["file"] == masks
    for f in findings:
        assert f["line"] > 0 and f["column"] > 0

    # a plan from live refuses what accord did not make, unless told
    plans = tmp_path / "migrations"
    code, _, err = run_cli(["plan", POLICIES, "--base", "live:all", "--out", str(plans)])
    assert code == 1 and "OPS.ADHOC.CONSOLE_MASK" in err and "--adopt" in err
    code, out, err = run_cli(
        ["plan", POLICIES, "--base", "live:all", "--out", str(plans), "--adopt"]
    )
    assert code == 0, err
    assert "grants USAGE to ANALYST (ACC705): the plan revokes it" in out
    apply_sql = next(plans.glob("0002_*/*_snowflake_apply.sql")).read_text()
    assert (
        "REVOKE USAGE ON FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() FROM ROLE ANALYST"
        in apply_sql
    )
    verify_sql = next(plans.glob("0002_*/*_snowflake_apply.verify.sql")).read_text()
    assert '"grantee": "ANALYST", "kind": "no_grant"' in verify_sql  # checked after the REVOKE
    for platform in ("snowflake", "databricks"):
        code, out, err = apply_on(platform, plans)
        assert code == 0, out + err
    assert drift_json() == (0, [])


def test_sarif_and_text_formats(platforms: Platforms, tmp_path: Path) -> None:
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "snowflake", "--format", "sarif"])
    assert code == 1
    doc = json.loads(out)
    import jsonschema

    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(doc)
    rules = {r["ruleId"] for r in doc["runs"][0]["results"]}
    assert rules == {"ACC701"}
    code, out, _ = run_cli(["introspect", "--platform", "snowflake", POLICIES])
    assert code == 0 and out.startswith("snowflake: GOVERNANCE.POLICIES (fingerprint ")
    deploy(tmp_path / "migrations")
    code, out, _ = run_cli(["introspect", "--platform", "databricks", POLICIES])
    assert code == 0
    assert "  MaskAttachment       omics.variants.calls  " in out
    assert "governance.policies.subject_pseudonym_salt" in out and "secret" not in out
    platforms.databricks.execute("ALTER TABLE omics.variants.calls DROP ROW FILTER")
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "databricks"])
    assert code == 1 and "ACC701 live-missing" in out and "policies/datasets.yaml" in out


def test_apply_refuses_when_the_live_base_changed(platforms: Platforms, tmp_path: Path) -> None:
    plans = tmp_path / "migrations"
    code, _, err = run_cli(["plan", POLICIES, "--base", "live:all", "--out", str(plans)])
    assert code == 0, err
    # someone deploys a table's filter by hand between the review and the apply
    platforms.databricks.execute(
        "CREATE OR REPLACE FUNCTION governance.policies.adhoc(v STRING) RETURNS BOOLEAN RETURN TRUE"
    )
    code, _, err = apply_on("databricks", plans)
    assert code == 1
    assert "live databricks estate changed since the plan was made" in err
    assert "accord drift --platform databricks" in err
    assert not platforms.databricks.tables["DISCOVERY_LAKE.ASSAYS.RESULTS"].masks  # nothing ran
    # the other platform did not change: its stages run
    code, _, err = apply_on("snowflake", plans)
    assert code == 0, err


def test_a_resumed_apply_is_not_refused_for_its_own_changes(
    platforms: Platforms, tmp_path: Path
) -> None:
    plans = tmp_path / "migrations"
    assert run_cli(["plan", POLICIES, "--base", "live:all", "--out", str(plans)])[0] == 0
    platforms.databricks.fail_on.append("SET ROW FILTER")
    code, out, err = apply_on("databricks", plans)
    assert code == 1 and "prepare: applied" in out and "denied: the deploying role needs" in err
    platforms.databricks.fail_on.clear()
    # the prepare stage changed the estate, as planned: the resumed apply runs the rest
    code, out, err = apply_on("databricks", plans)
    assert code == 0, err
    assert "apply: applied" in out


def test_databricks_tamper_and_salt_drift(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy(tmp_path / "migrations")
    sf, dbx = platforms.snowflake, platforms.databricks
    # a mask dropped in the lakehouse, an ABAC policy added from a console, a salt grant widened
    dbx.execute("ALTER TABLE omics.variants.calls ALTER COLUMN subject_id DROP MASK")
    dbx.execute(
        "CREATE POLICY console_filter ON SCHEMA omics.variants "
        "ROW FILTER governance.policies.programme_row_filter_except_data_steward "
        "TO `account users` FOR TABLES"
    )
    dbx.execute(
        "GRANT EXECUTE ON FUNCTION governance.policies.subject_pseudonym_salt TO `analysts`"
    )
    # a policy body edited in place, and the warehouse's salt function re-created by hand with
    # the lakehouse's salt
    sf.execute("ALTER MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK SET BODY -> VAL")
    sf.execute(
        "CREATE OR REPLACE SECURE FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() "
        "RETURNS VARCHAR AS $$ 'dbx-90aa-secret' $$"
    )
    code, findings = drift_json()
    assert code == 1
    seen = {(f["rule"], f["message"].split(":")[0]) for f in findings}
    assert ("ACC701", "databricks") in seen  # the dropped mask
    messages = "\n".join(f["message"] for f in findings)
    assert "mask of omics.variants.calls.subject_id is not deployed" in messages
    assert "ABAC policy console_filter on schema omics.variants" in messages
    assert "grants EXECUTE to analysts" in messages
    assert "FREE_TEXT_MASK changed on the platform: body" in messages
    assert "does not return the salt env:SUBJECT_SALT_SNOWFLAKE names" in messages
    assert "the live salts give the same canary digest on databricks, snowflake" in messages
    rules = {f["rule"] for f in findings}
    assert rules == {"ACC701", "ACC702", "ACC703", "ACC705", "ACC706"}
    assert "dbx-90aa-secret" not in json.dumps(findings)  # a salt is never printed
    # a plan from live repairs all of it (the console ABAC policy adopted and dropped, the grant
    # revoked, the body set back, the salt function re-created with its own salt)
    plans = tmp_path / "migrations"
    code, out, err = run_cli(
        ["plan", POLICIES, "--base", "live:all", "--out", str(plans), "--adopt"]
    )
    assert code == 0, err
    assert "SUBJECT_PSEUDONYM_SALT does not return its salt (ACC706): re-created" in out
    # the reason is data on the change, not a rewritten field: every file names the mask as is
    written = "".join(f.read_text() for f in plans.rglob("*.sql"))
    assert "Salt of mask 'subject_pseudonym', from env:" in written
    assert "live salt differs" not in written
    for platform in ("snowflake", "databricks"):
        code, out, err = apply_on(platform, plans)
        assert code == 0, out + err
    assert drift_json() == (0, [])
    # without the salts in the environment there is no canary to compare: no ACC706
    sf.execute("ALTER MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK SET BODY -> VAL")
    sf.execute(
        "CREATE OR REPLACE SECURE FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() "
        "RETURNS VARCHAR AS $$ 'dbx-90aa-secret' $$"
    )
    monkeypatch.delenv("SUBJECT_SALT_SNOWFLAKE")
    monkeypatch.delenv("SUBJECT_SALT_DATABRICKS")
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "all", "--format", "json"])
    assert code == 1 and "ACC703" in out and "ACC706" not in out


def abac_estate(platforms: Platforms, tmp_path: Path, govern: bool = True) -> Path:
    """policies/ with `style: abac` on Databricks; the account admin has created the governed
    tags (``govern``; else the plan from the live base creates them)."""
    import shutil

    from accord.targets.objects import Tag

    d = tmp_path / "abac"
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    p.write_text(p.read_text().replace("style: table", "style: abac"))
    for tag in lower_all(load_project(d))["databricks"].of(Tag) if govern else ():
        platforms.databricks.govern_tag(tag.name, tag.allowed_values, tag.comment)
    return d


def test_a_plan_from_live_creates_the_governed_tags_the_account_lacks(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Issue 10 item 10. ``CREATE GOVERNED TAG k [DESCRIPTION d] VALUES (...)`` exists from
    Runtime 18.1 and fails with ALREADY_EXISTS when the key exists
    (sql-language-manual/sql-ref-syntax-ddl-create-governed-tag). A plan from a live base read
    the account's governed tags, so it creates those the account lacks (and its rollback
    drops them: sql-ref-syntax-ddl-drop-governed-tag); each stage that defines one checks,
    with ``tag_policies.get_tag_policy``, that it exists with the model's values."""
    from accord.targets.objects import Tag

    d = abac_estate(platforms, tmp_path, govern=False)
    wanted = {t.name: t.allowed_values for t in lower_all(load_project(d))["databricks"].of(Tag)}
    assert wanted and not platforms.databricks.tags
    plans = tmp_path / "migrations"
    dbx = ["--platform", "databricks"]
    assert run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans)])[0] == 0
    sql = "\n".join(p.read_text() for p in sorted(plans.rglob("*.sql")))
    for name in wanted:
        assert f"CREATE GOVERNED TAG {name} " in sql
        assert f"DROP GOVERNED TAG {name};" in sql  # in the rollback
        assert '"kind": "governed_tag"' in sql and f'"tag": "{name}"' in sql
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    assert {t.name: t.allowed_values for t in platforms.databricks.tags.values()} == wanted
    assert run_cli(["drift", str(d), *dbx])[0] == 0
    # an account admin narrows a governed tag's values: a new plan alters it in place
    name = sorted(wanted)[0]
    platforms.databricks.govern_tag(name, wanted[name][:1])
    plans2 = tmp_path / "migrations2"
    assert run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans2)])[0] == 0
    sql2 = "\n".join(p.read_text() for p in sorted(plans2.rglob("*.sql")))
    assert f"ALTER GOVERNED TAG {name} SET VALUES (" in sql2
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(plans2), "--policies", str(d)]
    )
    assert code == 0, out + err
    assert platforms.databricks.tags[name.upper()].allowed_values == wanted[name]


def test_a_stage_fails_while_its_governed_tag_does_not_exist(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ABAC conditions match governed tags only (unity-catalog/abac): a column tagged without
    its governed tag matches no policy. The check of the stage that defines the tag reads it
    with ``tag_policies.get_tag_policy``: an account whose statement left no governed tag
    (here, a stand-in that accepts CREATE GOVERNED TAG and keeps nothing) fails the stage,
    and the next stage, which would tag the columns, never runs."""
    d = abac_estate(platforms, tmp_path, govern=False)
    plans = tmp_path / "migrations"
    dbx = ["--platform", "databricks"]
    assert run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans)])[0] == 0
    monkeypatch.setattr(
        type(platforms.databricks), "_do_governed_tag", lambda self, stmt: self._ok("OK")
    )
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 1, out + err
    assert "01_databricks_prepare: failed" in out + err
    assert not any(t.tags for t in platforms.databricks.tables.values())


def test_abac_estate_introspects_equal_drifts_and_repairs(
    platforms: Platforms, tmp_path: Path
) -> None:
    d = abac_estate(platforms, tmp_path)
    plans = tmp_path / "migrations"
    dbx = ["--platform", "databricks"]
    assert run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans)])[0] == 0
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    code, out, err = run_cli(["introspect", *dbx, str(d), "--format", "json"])
    lowered = lower_all(load_project(d))["databricks"]
    from accord.targets.inspect import object_json

    want = sorted(json.dumps(object_json(o, "databricks"), sort_keys=True) for o in lowered)
    assert sorted(json.dumps(o, sort_keys=True) for o in json.loads(out)["objects"]) == want
    # an ABAC policy's kind is its class; ROW FILTER or COLUMN MASK is its policy_kind
    abac = [o for o in json.loads(out)["objects"] if o["kind"] == "AbacPolicy"]
    assert {o["policy_kind"] for o in abac} == {"ROW FILTER", "COLUMN MASK"}
    assert run_cli(["drift", str(d), *dbx])[0] == 0
    # a console edit widens an ABAC policy's EXCEPT list, and a column loses its governed tag
    platforms.databricks.execute(
        "CREATE OR REPLACE POLICY accord_free_text_mask ON SCHEMA discovery_lake.assays "
        "COLUMN MASK governance.policies.free_text_mask TO `account users` "
        "EXCEPT `clinical-unblinded`, `cro-external` FOR TABLES "
        "MATCH COLUMNS has_tag_value('accord_mask', 'free_text') AS c ON COLUMN c"
    )
    table = platforms.databricks.tables["DISCOVERY_LAKE.ASSAYS.RESULTS"]
    del table.tags[("SUBJECT_ID", "accord_mask")]
    code, out, _ = run_cli(["drift", str(d), *dbx, "--format", "json"])
    findings = json.loads(out)["findings"]
    assert code == 1
    assert {(f["rule"], f["message"].split(":")[1].strip()) for f in findings} == {
        ("ACC703", "ABAC policy accord_free_text_mask on schema discovery_lake.assays changed on the platform"),
        ("ACC701", "tag accord_mask on discovery_lake.assays.results.subject_id is not deployed"),
    }  # fmt: skip
    code, out, err = run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    assert run_cli(["drift", str(d), *dbx])[0] == 0


def test_snowflake_tag_estate_introspects_equal_drifts_and_repairs(
    platforms: Platforms, tmp_path: Path
) -> None:
    import shutil

    d = tmp_path / "tag"
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    schema = "governance_schema: GOVERNANCE.POLICIES"
    p.write_text(p.read_text().replace(schema, f"{schema}\n    style: tag"))
    plans = tmp_path / "migrations"
    sf = ["--platform", "snowflake"]
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    code, out, err = run_cli(["migrate", "apply", *sf, "--plans", str(plans), "--policies", str(d)])
    assert code == 0, out + err
    code, out, err = run_cli(["introspect", *sf, str(d), "--format", "json"])
    from accord.targets.inspect import object_json

    lowered = lower_all(load_project(d))["snowflake"]
    want = sorted(json.dumps(object_json(o, "snowflake"), sort_keys=True) for o in lowered)
    live = json.loads(out)
    assert sorted(json.dumps(o, sort_keys=True) for o in live["objects"]) == want
    assert {o["kind"] for o in live["objects"]} >= {"Tag", "TagAssignment"}
    assert run_cli(["drift", str(d), *sf])[0] == 0
    # a tag's masking policy unset from a console: every column carrying the tag is clear
    platforms.snowflake.execute(
        "ALTER TAG GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT UNSET MASKING POLICY "
        "GOVERNANCE.POLICIES.FREE_TEXT_MASK"
    )
    code, out, _ = run_cli(["drift", str(d), *sf, "--format", "json"])
    (finding,) = json.loads(out)["findings"]
    assert code == 1 and finding["rule"] == "ACC703"
    assert "tag GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT changed" in finding["message"]
    assert finding["file"].endswith("masks.yaml")
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    code, out, err = run_cli(["migrate", "apply", *sf, "--plans", str(plans), "--policies", str(d)])
    assert code == 0, out + err
    assert run_cli(["drift", str(d), *sf])[0] == 0


def test_keep_unmanaged_leaves_what_accord_did_not_make(
    platforms: Platforms, tmp_path: Path
) -> None:
    deploy(tmp_path / "migrations")
    sf = platforms.snowflake
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})
    sf.execute(
        "CREATE MASKING POLICY OPS.ADHOC.CONSOLE_MASK AS (VAL VARCHAR) RETURNS VARCHAR -> VAL"
    )
    # on a column the model does not mask: it can be kept
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN RESULT_VALUE SET MASKING POLICY "
        "OPS.ADHOC.CONSOLE_MASK"
    )
    sf.execute("ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN SUBJECT_ID UNSET MASKING POLICY")
    plans = tmp_path / "migrations"
    base = ["plan", POLICIES, "--base", "live:snowflake", "--out", str(plans)]
    code, out, err = run_cli([*base, "--keep-unmanaged"])
    assert code == 0, err
    assert "RESULT_VALUE -> OPS.ADHOC.CONSOLE_MASK is not the model's: kept" in out
    code, out, err = apply_on("snowflake", plans)
    assert code == 0, out + err
    table = sf.tables["DISCOVERY.ASSAYS.RESULTS"]
    assert table.masks["RESULT_VALUE"][0] == "OPS.ADHOC.CONSOLE_MASK"  # left where it was
    assert table.masks["SUBJECT_ID"][0] == "GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK"
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "snowflake", "--format", "json"])
    assert code == 1 and [f["rule"] for f in json.loads(out)["findings"]] == ["ACC702"]
    # on a column the model masks: it cannot be kept
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET MASKING POLICY "
        "OPS.ADHOC.CONSOLE_MASK FORCE"
    )
    code, _, err = run_cli([*base, "--keep-unmanaged"])
    assert code == 1 and "the model needs its place: --keep-unmanaged cannot keep it" in err


def test_table_level_to_abac_waits_before_the_handover(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Issue 10 item 1. "After assigning or modifying a tag, it can take a few minutes for the
    change to take effect" (unity-catalog/abac/requirements): until then the ABAC policies match
    nothing. Table level to ABAC on the Databricks stand-in: the stage that tags the columns and
    creates the policies is applied, then ``migrate apply`` stops before the handover (which
    drops the table-level filters and masks) and says until when; the table-level protection
    is still in place. ``--abac-settle 0`` (once a probe shows the policies in effect) runs it."""
    from tests.estates import PLAN_BASE, edited, write_estate
    from tests.live_helpers import seed

    d = write_estate(tmp_path / "estate", edited(PLAN_BASE))
    seed(platforms.databricks, d)
    dbx = ["--platform", "databricks", "--policies", str(d)]
    first = tmp_path / "m1"
    assert run_cli(["plan", str(d), "--base", "live:databricks", "--out", str(first)])[0] == 0
    code, out, err = run_cli(["migrate", "apply", *dbx, "--plans", str(first)])
    assert code == 0, out + err
    write_estate(
        d, edited(edited(PLAN_BASE), lambda e: e["platforms"]["databricks"].update(style="abac"))
    )
    from accord.targets.objects import Tag

    for tag in lower_all(load_project(d))["databricks"].of(Tag):
        platforms.databricks.govern_tag(tag.name, tag.allowed_values, tag.comment)
    second = tmp_path / "m2"
    code, out, err = run_cli(
        ["plan", str(d), "--base", "live:databricks", "--adopt", "--out", str(second)]
    )
    assert code == 0, err
    assert "databricks_handover" in out
    ledger = str(tmp_path / "ledger.jsonl")
    code, out, err = run_cli(["migrate", "apply", *dbx, "--plans", str(second), "--ledger", ledger])
    assert code == 1
    assert "_databricks_apply: applying" in out and "handover: applying" not in out
    assert "handover waits until" in err and "unity-catalog/abac/requirements" in err
    filtered = [t for t in platforms.databricks.tables.values() if t.row_filter]
    assert filtered  # the table-level filters are still attached
    code, out, err = run_cli(["migrate", "status", "--plans", str(second), "--ledger", ledger])
    assert "handover" in out and "pending" in out
    code, out, err = run_cli(
        ["migrate", "apply", *dbx, "--plans", str(second), "--ledger", ledger, "--abac-settle", "0"]
    )
    assert code == 0, out + err
    assert "handover: applying" in out
    assert not any(t.row_filter for t in platforms.databricks.tables.values())
    assert run_cli(["drift", str(d), "--platform", "databricks"])[0] == 0


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_a_revoke_that_did_not_take_fails_its_stage(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    """A plan from live revokes a grant that exposes a salt (ACC705); its stage then reads the
    function's grants again (Snowflake ``SHOW GRANTS ON FUNCTION``: privilege, grantee_name;
    Databricks ``grants.get_effective``: privilege_assignments) and fails while the grantee still holds
    the privilege. Here the stand-in accepts the REVOKE and keeps the grant."""
    from accord.sandbox.standins.engine import Estate

    deploy(tmp_path / "m1")
    estate = getattr(platforms, platform)
    estate.execute(
        "GRANT USAGE ON FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() TO ROLE ANALYST"
        if platform == "snowflake"
        else "GRANT EXECUTE ON FUNCTION governance.policies.subject_pseudonym_salt TO `analysts`"
    )
    plans = tmp_path / "m2"
    code, out, err = run_cli(["plan", POLICIES, "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, err
    assert "the plan revokes it" in out, out
    # a plan of REVOKEs only has a name (it had none, and `migrate apply` skipped it in silence)
    assert [p.name for p in plans.iterdir() if p.is_dir()] == ["0001_salt-grants-revoked"]
    granted = Estate._grant

    def ignore_revokes(self, tree):  # type: ignore[no-untyped-def]
        from sqlglot import exp

        return (
            self._ok("Statement executed successfully.")
            if isinstance(tree, exp.Revoke)
            else granted(self, tree)
        )

    monkeypatch.setattr(Estate, "_grant", ignore_revokes)
    code, out, err = apply_on(platform, plans)
    assert code == 1, out + err
    assert "check(s)" in err and "not ok" in err
    monkeypatch.setattr(Estate, "_grant", granted)
    code, out, err = run_cli(["plan", POLICIES, "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, err


def test_every_drift_format_states_its_coverage(platforms: Platforms, tmp_path: Path) -> None:
    """A clean verdict states what was read: JSON ``coverage`` (one record a platform), SARIF
    run properties, one text line a platform; a read that saw everything says ``complete``."""
    deploy(tmp_path / "migrations")
    code, out, err = run_cli(["drift", POLICIES, "--platform", "all", "--format", "json"])
    assert code == 0, err
    coverage = json.loads(out)["coverage"]
    assert [c["platform"] for c in coverage] == ["databricks", "snowflake"]
    lowered = lower_all(load_project(POLICIES))
    for c in coverage:
        assert c["complete"] is True and c["unseen"] == []
        # every kind of object the model deploys was read and counted
        assert sum(c["read"].values()) == len(lowered[c["platform"]].objects)
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "all", "--format", "sarif"])
    assert json.loads(out)["runs"][0]["properties"]["coverage"] == coverage
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "all"])
    lines = [line for line in out.splitlines() if line.startswith("coverage ")]
    assert len(lines) == 2 and all(line.endswith("; complete") for line in lines)
