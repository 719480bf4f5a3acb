"""A Snowflake reader that proves it saw everything (issue 20, Snowflake facts 1-5, 7, 8).

The Snowflake stand-in answers as the platform answers a role with limited privileges
(sandbox/standins/snowflake.py: the reading role is the login's ``role``, its privileges are what
``SHOW GRANTS TO ROLE`` lists for it and for the roles under it). Each test names the fact and
the vendor page it stands for, and fails if accord ignores the fact: a drift that exits 0
where the reader could not see, a tag inherited from the table taken for the column's own, a
console mask hidden behind a tag mask, a revoke spelled for a role that does not reach a
database role's grant. The end-to-end test at the bottom is the issue's done-when for
Snowflake: a least-privilege reader on an estate with a direct mask over a tag mask, a salt
callable through a database role, and a mapping table with an extra row past the first result
chunk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.snowflake import Session, SnowflakeEstate
from accord.targets import lower_all
from accord.targets.objects import MappingTable
from tests.cli import run_cli
from tests.live_helpers import ROOT, SNOWFLAKE_READER, Platforms, snowflake_reader

READER = SNOWFLAKE_READER
SF = ["--platform", "snowflake"]
SALT = "GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT"


def tag_estate(tmp_path: Path) -> Path:
    """The reference estate with Snowflake's tag-based masks (``style: tag``)."""
    d = tmp_path / "tag"
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    schema = "governance_schema: GOVERNANCE.POLICIES"
    p.write_text(p.read_text().replace(schema, f"{schema}\n    style: tag"))
    return d


def deploy(d: Path, tmp_path: Path) -> None:
    """Plan from the (empty) live account and apply, as the deploying role."""
    plans = tmp_path / "migrations"
    code, _, err = run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(["migrate", "apply", *SF, "--plans", str(plans), "--policies", str(d)])
    assert code == 0, out + err


def least_privilege(
    sf: SnowflakeEstate, d: Path, monkeypatch: pytest.MonkeyPatch, without: tuple[str, ...] = ()
) -> None:
    """Log in as READER, which holds what docs/live.md's reader grants give it
    (tests/live_helpers.snowflake_reader). Nothing on the salt function."""
    snowflake_reader(sf, lower_all(load_project(d))["snowflake"], without)
    monkeypatch.setenv("SNOWFLAKE_ROLE", READER)


def drift(d: Path) -> tuple[int, list[dict[str, str]], dict[str, object]]:
    code, out, err = run_cli(["drift", str(d), *SF, "--format", "json"])
    assert code in (0, 1), err
    data = json.loads(out)
    (coverage,) = data["coverage"]
    return code, data["findings"], coverage


def rules(findings: list[dict[str, str]]) -> set[str]:
    return {f["rule"] for f in findings}


def as_reader(sf: SnowflakeEstate, sql: str) -> list[tuple[object, ...]]:
    return sf.execute_as(Session("accord_ci", login_role=READER), sql)[1]


# ------------------------------------------------------------------ the reader check


def test_check_reader_walks_the_role_hierarchy_and_names_what_is_missing(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Facts 1, 2, 8 (docs.snowflake.com/en/sql-reference/functions/policy_references, usage
    notes; sql-reference/sql/show-grants: ``SHOW GRANTS TO ROLE`` lists the roles granted to a
    role, whose privileges it inherits): the global privileges held through a granted role
    count; without the global APPLY MASKING POLICY the check exits 1 and says what is not
    proven."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    least_privilege(platforms.snowflake, d, monkeypatch)
    code, out, err = run_cli(["introspect", "--check-reader", *SF, str(d)])
    assert code == 0, out + err
    assert f"snowflake: reading as {READER}" in out
    assert "  holds: APPLY MASKING POLICY on ACCOUNT" in out  # through GOVERNANCE_READ
    assert "sees everything drift needs" in out
    platforms.snowflake.role_grants["GOVERNANCE_READ"].discard(
        ("APPLY MASKING POLICY", "ACCOUNT", "")
    )
    code, out, _ = run_cli(["introspect", "--check-reader", *SF, str(d), "--format", "json"])
    coverage = json.loads(out)["coverage"]
    assert code == 1 and coverage["complete"] is False and coverage["reader"] == READER
    (unseen,) = coverage["unseen"]
    assert "global APPLY MASKING POLICY" in unseen["why"]
    assert unseen["unproven"] == "drift of the masks (direct and tag-based) of the governed tables"


def test_a_reader_without_the_global_apply_privilege_never_drifts_clean(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fact 1 (sql-reference/functions/policy_references, usage notes): with APPLY on one
    policy a role sees only that policy's associations on objects it owns; all associations
    need the global APPLY MASKING POLICY. A console mask made with another policy is invisible
    to such a reader: drift must say so (ACC707, exit 1), never pass it."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    sf = platforms.snowflake
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})
    sf.execute(
        "CREATE MASKING POLICY OPS.ADHOC.CONSOLE_MASK AS (VAL VARCHAR) RETURNS VARCHAR -> VAL"
    )
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN RESULT_VALUE SET MASKING POLICY "
        "OPS.ADHOC.CONSOLE_MASK"
    )
    least_privilege(sf, d, monkeypatch)
    code, findings, _ = drift(d)
    # the full reader sees the console mask
    assert code == 1 and rules(findings) == {"ACC702"}
    assert "OPS.ADHOC.CONSOLE_MASK" in findings[0]["message"]
    sf.role_grants["GOVERNANCE_READ"].discard(("APPLY MASKING POLICY", "ACCOUNT", ""))
    for policy in ("FREE_TEXT_MASK", "SUBJECT_PSEUDONYM_MASK"):  # APPLY on accord's own only
        sf.grant_to_role(
            "GOVERNANCE_READ", "APPLY", "MASKING_POLICY", f"GOVERNANCE.POLICIES.{policy}"
        )
    code, findings, coverage = drift(d)
    assert code == 1 and "ACC707" in rules(findings)
    assert not any("CONSOLE_MASK" in f["message"] for f in findings)  # it is unseen ...
    assert any("global APPLY MASKING POLICY" in f["message"] for f in findings)  # ... and said
    assert coverage["complete"] is False
    # the platform's own answer, as the reader: no association of a policy it cannot see
    rows = as_reader(
        sf,
        "SELECT POLICY_NAME FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.POLICY_REFERENCES("
        "REF_ENTITY_NAME => 'DISCOVERY.ASSAYS.RESULTS', REF_ENTITY_DOMAIN => 'table'))",
    )
    assert ("CONSOLE_MASK",) not in rows


def test_filtered_show_is_reported_unseen_not_undeployed(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fact 2 (sql-reference/sql/show-row-access-policies, show-user-functions: SHOW lists
    only objects on which the role holds a privilege; sql-reference/sql/show-privileges:
    MANAGE GRANTS sees every object): a reader without the global APPLY ROW ACCESS POLICY
    and MANAGE GRANTS sees no row access policy and no salt function. drift says it cannot
    see them (ACC707), and the SHOW answers are empty for that reader."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    sf = platforms.snowflake
    least_privilege(sf, d, monkeypatch, without=("APPLY ROW ACCESS POLICY", "MANAGE GRANTS"))
    assert as_reader(sf, "SHOW ROW ACCESS POLICIES IN SCHEMA GOVERNANCE.POLICIES") == []
    assert as_reader(sf, "SHOW USER FUNCTIONS IN SCHEMA GOVERNANCE.POLICIES") == []
    code, findings, coverage = drift(d)
    assert code == 1
    unseen = [f["message"] for f in findings if f["rule"] == "ACC707"]
    assert any("global APPLY ROW ACCESS POLICY" in m for m in unseen)
    assert any(f"salt function {SALT} and its grants" in m for m in unseen)
    assert {u["what"] for u in coverage["unseen"]} >= {  # type: ignore[attr-defined]
        "every row access policy's associations and bodies",
        f"salt function {SALT} and its grants",
    }


def test_describe_needs_apply_or_ownership_and_hidden_means_missing(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Facts 7 and 8 (sql-reference/sql/desc-masking-policy, access control requirements:
    APPLY MASKING POLICY on the account, or APPLY or OWNERSHIP on the policy; error 002003
    "does not exist or not authorized" for what does not exist and for what the role may not
    see, tables and roles alike). The stand-in answers both the same way."""
    deploy(ROOT / "policies", tmp_path)
    sf = platforms.snowflake
    policy = "GOVERNANCE.POLICIES.FREE_TEXT_MASK"
    for sql, missing in (
        (f"DESCRIBE MASKING POLICY {policy}", "DESCRIBE MASKING POLICY GOVERNANCE.POLICIES.NOPE"),
        (
            "SELECT * FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.TAG_REFERENCES_ALL_COLUMNS("
            "'DISCOVERY.ASSAYS.RESULTS', 'table'))",
            "SELECT * FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.TAG_REFERENCES_ALL_COLUMNS("
            "'DISCOVERY.ASSAYS.NOPE', 'table'))",
        ),
        ("SHOW GRANTS TO ROLE SOMEONE_ELSE", None),
    ):
        with pytest.raises(SqlError) as hidden:
            as_reader(sf, sql)
        assert (hidden.value.code, hidden.value.sqlstate) == ("002003", "42S02")
        assert "does not exist or not authorized" in hidden.value.message
        if missing is not None:
            with pytest.raises(SqlError) as absent:
                as_reader(sf, missing)
            assert absent.value.code == hidden.value.code
    sf.grant_to_role(READER, "APPLY", "MASKING_POLICY", policy)
    with pytest.raises(SqlError) as unresolved:  # USAGE on the parent database and schema too
        as_reader(sf, f"DESCRIBE MASKING POLICY {policy}")
    assert unresolved.value.code == "002003"
    sf.grant_to_role(READER, "USAGE", "DATABASE", "GOVERNANCE")
    sf.grant_to_role(READER, "USAGE", "SCHEMA", "GOVERNANCE.POLICIES")
    (row,) = as_reader(sf, f"DESCRIBE MASKING POLICY {policy}")
    assert row[0] == "FREE_TEXT_MASK"


def test_a_reader_without_select_on_the_mapping_table_is_refused_and_drift_unproven(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fact 7 (sql-reference/sql/select, access control requirements; error 002003 "does not
    exist or not authorized"): a role without SELECT (or OWNERSHIP) on a table cannot read it,
    and the platform says so as if it did not exist. A reader that lacks SELECT on the mapping
    table is refused its rows: drift reports ACC707 naming the reading role and the grant it
    lacks, never ACC704 (rows that differ) nor ACC701 (a table not deployed), and exits 1;
    ``introspect --check-reader`` names the missing SELECT."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    sf = platforms.snowflake
    least_privilege(sf, d, monkeypatch)
    (mapping,) = lower_all(load_project(d))["snowflake"].of(MappingTable)
    assert as_reader(sf, f"SELECT COUNT(*) FROM {mapping.name}")[0][0] > 0
    sf.role_grants[READER].discard(("SELECT", "TABLE", mapping.name.upper()))
    with pytest.raises(SqlError) as refused:  # the platform's own answer, as the reader
        as_reader(sf, f"SELECT * FROM {mapping.name}")
    assert refused.value.code == "002003" and "does not exist or not authorized" in str(
        refused.value
    )
    code, findings, coverage = drift(d)
    assert code == 1 and rules(findings) == {"ACC707"}
    said = "\n".join(f["message"] for f in findings)
    assert f"mapping table {mapping.name}" in said and "deploying role" not in said
    assert f"GRANT SELECT ON TABLE {mapping.name} TO ROLE {READER}" in said
    assert coverage["complete"] is False
    code, out, _ = run_cli(["introspect", "--check-reader", *SF, str(d)])
    assert code == 1
    assert f"the rows of mapping table {mapping.name}" in out and "lacks SELECT" in out
    assert f"GRANT SELECT ON TABLE {mapping.name} TO ROLE {READER}" in out


def test_a_reader_that_cannot_resolve_a_governed_schema_is_incomplete(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fact 7 (sql-reference/sql/show-grants; error 002003): without a privilege on a
    governed table's schema nothing in it resolves, and a missing schema answers alike, so
    the check reports it unseen (ACC707) instead of taking its policies for absent."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    sf = platforms.snowflake
    least_privilege(sf, d, monkeypatch, without=("MANAGE GRANTS",))
    sf.role_grants[READER].discard(("USAGE", "SCHEMA", "DISCOVERY.ASSAYS"))
    sf.role_grants[READER].discard(("SELECT", "TABLE", "DISCOVERY.ASSAYS.RESULTS"))
    code, out, _ = run_cli(["introspect", "--check-reader", *SF, str(d)])
    assert code == 1
    assert "missing: the reading role cannot see schema DISCOVERY.ASSAYS" in out
    assert "does not exist or not authorized" in out


# ------------------------------------------------------------------ what the read reports


def test_a_tag_inherited_from_the_table_is_not_the_columns_own(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 3 (sql-reference/functions/tag_references_all_columns: every tag on every
    column, "directly assigned to a column or through tag inheritance", with LEVEL and
    APPLY_METHOD; user-guide/object-tagging/inheritance): a column whose own accord tag was
    removed while its table carries the tag still inherits it, and the inherited one is
    reported as inherited. drift reports the column's lost tag (ACC701), saying it only
    inherits it."""
    d = tag_estate(tmp_path)
    deploy(d, tmp_path)
    sf = platforms.snowflake
    tag = "GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT"
    # a console unsets the column's tag (ALTER TABLE ... MODIFY COLUMN NOTES UNSET TAG ...)
    del sf.tables["DISCOVERY.ASSAYS.RESULTS"].tags[("NOTES", tag)]
    sf.execute(f"ALTER TABLE DISCOVERY.ASSAYS.RESULTS SET TAG {tag} = 'free_text'")
    rows = sf.execute(
        "SELECT LEVEL, APPLY_METHOD FROM TABLE(DISCOVERY.INFORMATION_SCHEMA."
        "TAG_REFERENCES_ALL_COLUMNS('DISCOVERY.ASSAYS.RESULTS', 'table')) "
        "WHERE COLUMN_NAME = 'NOTES' AND TAG_NAME = 'ACCORD_MASK_FREE_TEXT'"
    )[1]
    assert rows == [("TABLE", "INHERITED")]
    code, findings, _ = drift(d)
    assert code == 1
    (lost,) = [f for f in findings if f["rule"] == "ACC701"]
    assert f"tag {tag} on DISCOVERY.ASSAYS.RESULTS.NOTES is not deployed" in lost["message"]
    assert "the column only inherits it" in lost["message"] and "inherited" in lost["message"]
    code, out, _ = run_cli(["introspect", *SF, str(d), "--format", "json"])
    inherited = json.loads(out)["inherited_tags"]
    assert any(i.startswith(f"DISCOVERY.ASSAYS.RESULTS.NOTES: tag {tag}") for i in inherited)


def test_a_direct_mask_over_a_tag_mask_is_reported_as_overriding_it(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 4 (user-guide/tag-based-masking-policies: a masking policy set directly on a
    column takes precedence over a tag-based one; POLICY_REFERENCES lists both, POLICY_STATUS
    MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN): the stand-in enforces the direct one,
    and drift reports it as ACC702 "this policy overrides the tag's"."""
    d = tag_estate(tmp_path)
    deploy(d, tmp_path)
    sf = platforms.snowflake
    sf.execute("CREATE MASKING POLICY OPS.ADHOC.SHOW_ALL AS (VAL VARCHAR) RETURNS VARCHAR -> VAL")
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET MASKING POLICY "
        "OPS.ADHOC.SHOW_ALL"
    )
    statuses = sf.execute(
        "SELECT POLICY_NAME, TAG_NAME, POLICY_STATUS FROM TABLE(DISCOVERY.INFORMATION_SCHEMA."
        "POLICY_REFERENCES(REF_ENTITY_NAME => 'DISCOVERY.ASSAYS.RESULTS', REF_ENTITY_DOMAIN => "
        "'table')) WHERE REF_COLUMN_NAME = 'NOTES' ORDER BY 1"
    )[1]
    both = "MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN"
    assert statuses == [
        ("FREE_TEXT_MASK", "ACCORD_MASK_FREE_TEXT", both),
        ("SHOW_ALL", None, both),
    ]
    code, findings, _ = drift(d)
    (over,) = [f for f in findings if f["rule"] == "ACC702"]
    assert code == 1 and "OPS.ADHOC.SHOW_ALL" in over["message"]
    assert (
        "this policy overrides the tag's (tag GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT's "
        "masking policy GOVERNANCE.POLICIES.FREE_TEXT_MASK)" in over["message"]
    )


@pytest.mark.parametrize(
    "kind,grantee,spelled",
    [
        ("DATABASE_ROLE", "GOVERNANCE.SALT_READERS", "DATABASE ROLE GOVERNANCE.SALT_READERS"),
        ("SHARE", "PARTNER_SHARE", "SHARE PARTNER_SHARE"),
        ("APPLICATION_ROLE", "LAB_APP.APP_USER", "APPLICATION ROLE LAB_APP.APP_USER"),
    ],
)
def test_a_salt_revoke_is_spelled_for_the_grantees_kind(
    platforms: Platforms, tmp_path: Path, kind: str, grantee: str, spelled: str
) -> None:
    """Fact 5 (sql-reference/sql/show-grants: ``granted_to`` is ROLE, DATABASE_ROLE, SHARE or
    APPLICATION_ROLE; sql-reference/sql/revoke-privilege, revoke-privilege-share): a revoke
    spelled ``FROM ROLE`` does not reach a database role's grant (002003). ACC705's fix and
    the plan's revoke name the kind, and the plan's revoke takes."""
    d = ROOT / "policies"
    deploy(d, tmp_path)
    sf = platforms.snowflake
    sf.grant_on_function(SALT, "USAGE", grantee, kind)
    code, findings, _ = drift(d)
    (exposed,) = [f for f in findings if f["rule"] == "ACC705"]
    fix = f"REVOKE USAGE ON FUNCTION {SALT}() FROM {spelled}"
    assert exposed["fix"] == fix
    assert f"grants USAGE to {kind.replace('_', ' ').lower()} {grantee}" in exposed["message"]
    if kind != "ROLE":
        with pytest.raises(SqlError) as wrong:
            sf.execute(f"REVOKE USAGE ON FUNCTION {SALT}() FROM ROLE {grantee.split('.')[-1]}")
        assert wrong.value.code == "002003"
    plans = tmp_path / "repair"
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    sql = "\n".join(p.read_text() for p in sorted(plans.rglob("*.sql")))
    assert fix in sql
    code, out, err = run_cli(["migrate", "apply", *SF, "--plans", str(plans), "--policies", str(d)])
    assert code == 0, out + err
    assert sf.grants[SALT] == set()
    assert drift(d)[:2] == (0, [])


# ------------------------------------------------------------------ the done-when


def test_least_privilege_drift_sees_override_salt_grant_and_extra_row_past_a_chunk(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20's done-when for Snowflake: drift with a least-privilege reader (docs/live.md's
    reader grants: the global APPLY privileges through a granted role, MANAGE GRANTS, USAGE
    and SELECT, nothing on the salt) on an estate where a console-made direct mask overrides a
    tag mask, the salt is callable through a database role, and the mapping table holds an
    extra row past the first result chunk (the stand-in serves every result past 2 rows as
    chunks the connector downloads, the way the service does): drift reports all three. With a
    reader that cannot see the override, drift reports ACC707 and exits 1, never 0."""
    d = tag_estate(tmp_path)
    deploy(d, tmp_path)
    sf = platforms.snowflake
    sf.execute("CREATE MASKING POLICY OPS.ADHOC.SHOW_ALL AS (VAL VARCHAR) RETURNS VARCHAR -> VAL")
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET MASKING POLICY "
        "OPS.ADHOC.SHOW_ALL"
    )
    sf.grant_on_function(SALT, "USAGE", "GOVERNANCE.SALT_READERS", "DATABASE_ROLE")
    sf.grant_on_function(SALT, "USAGE", "LAB_ANALYSTS", "ROLE")  # and a role PUBLIC holds
    sf.grant_to_role("PUBLIC", "USAGE", "ROLE", "LAB_ANALYSTS")
    sf.execute(
        "INSERT INTO GOVERNANCE.POLICIES.PROGRAMME_GRANTS (PROGRAMME_CODE, ROLE_NAME) "
        "VALUES ('ZZZ-999', 'CONSOLE_ROLE')"
    )
    rows = sf.execute("SELECT COUNT(*) FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS")[1][0][0]
    sf.chunk_rows = 2
    assert int(str(rows)) > 2 * sf.chunk_rows  # the extra row (sorted last) is past a chunk
    least_privilege(sf, d, monkeypatch)
    code, findings, coverage = drift(d)
    assert code == 1 and coverage["complete"] is True and coverage["reader"] == READER
    assert sf.chunks_downloaded > 0 and sf.chunks_downloaded == sf.chunks_served
    messages = {(f["rule"], f["message"]) for f in findings}
    assert rules(findings) == {"ACC702", "ACC704", "ACC705"}
    assert any("this policy overrides the tag's" in m for r, m in messages if r == "ACC702")
    assert any("extra 'ZZZ-999' -> CONSOLE_ROLE" in m for r, m in messages if r == "ACC704")
    exposed = sorted(m for r, m in messages if r == "ACC705")
    assert len(exposed) == 2
    assert "to database role GOVERNANCE.SALT_READERS:" in exposed[0]
    assert "to role LAB_ANALYSTS (granted to PUBLIC: every user of the account)" in exposed[1]
    # a reader that cannot see the override: never a clean verdict
    sf.role_grants["GOVERNANCE_READ"].discard(("APPLY MASKING POLICY", "ACCOUNT", ""))
    code, findings, coverage = drift(d)
    assert code == 1 and "ACC707" in rules(findings) and coverage["complete"] is False
    assert not any("overrides the tag's" in f["message"] for f in findings)
