"""The live role hierarchy (issue 26 item 2): introspection reads who inherits each modelled
principal, and `accord drift` reports ACC708 `hierarchy-drift` where it differs from the
model's `inherits`, ACC707 where it could not be read.

The estate is policies/ with a two-level hierarchy: `clinical_unblinded` inherits
`bench_chemist`, and a new `lead` inherits `clinical_unblinded`. accord never creates roles,
groups or their edges: each test sets them up in the stand-in as an administrator would
(Snowflake `CREATE ROLE` / `GRANT ROLE ... TO ROLE ...`; Databricks group members), deploys the
compiled policies with `plan --base live:` + `migrate apply`, and then changes the hierarchy
behind accord's back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from accord.sandbox.standins.databricks import DatabricksEstate
from accord.sandbox.standins.snowflake import Session, SnowflakeEstate
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms

ROLES = ["BENCH_CHEMIST", "CLINICAL_UNBLINDED", "CRO_EXTERNAL", "DATA_STEWARD", "LEAD"]
GROUPS = ["bench-chemists", "clinical-unblinded", "cro-external", "data-stewards", "leads"]


def hierarchy_estate(tmp_path: Path) -> Path:
    d = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", d)
    p = d / "principals.yaml"
    text = p.read_text()
    text = text.replace(
        "    databricks: clinical-unblinded\n",
        "    databricks: clinical-unblinded\n    inherits: [bench_chemist]\n",
    )
    text = text.replace(
        "\npersonas:\n",
        "\n  lead:\n    snowflake: LEAD\n    databricks: leads\n    inherits: [clinical_unblinded]\n"
        "\npersonas:\n  lead: [lead]\n",
    )
    p.write_text(text)
    return d


def line_of(path: Path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line == start)


def deploy(d: Path, tmp_path: Path, platform: str) -> None:
    plans = tmp_path / f"migrations-{platform}"
    code, _, err = run_cli(["plan", str(d), "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err


def drift(d: Path, platform: str) -> tuple[int, list[dict[str, object]], dict[str, object]]:
    code, out, err = run_cli(["drift", str(d), "--platform", platform, "--format", "json"])
    assert code in (0, 1), err
    data = json.loads(out)
    (coverage,) = data["coverage"]
    return code, data["findings"], coverage


def of(findings: list[dict[str, object]], rule: str) -> list[dict[str, object]]:
    return [f for f in findings if f["rule"] == rule]


def snowflake_hierarchy(sf: SnowflakeEstate) -> None:
    """What an administrator runs (sql-reference/sql/create-role, grant-role)."""
    for role in ROLES:
        sf.execute(f"CREATE ROLE {role}")
    sf.execute("GRANT ROLE BENCH_CHEMIST TO ROLE CLINICAL_UNBLINDED")
    sf.execute("GRANT ROLE CLINICAL_UNBLINDED TO ROLE LEAD")


def databricks_hierarchy(dbx: DatabricksEstate) -> None:
    """Account groups assigned to the workspace, nested as the model says."""
    for group in GROUPS:
        dbx.group_members.setdefault(group, set())
    dbx.nest("clinical-unblinded", "bench-chemists")
    dbx.nest("leads", "clinical-unblinded")


# ------------------------------------------------------------------ Snowflake


def test_snowflake_drift_reads_the_hierarchy_and_reports_each_edge_that_differs(
    platforms: Platforms, tmp_path: Path
) -> None:
    """sql-reference/sql/show-grants (`SHOW GRANTS OF ROLE r`: the roles r is granted to) and
    sql-reference/sql/grant-role (a role granted to a role passes it every privilege of the
    granted role): the hierarchy the model states drifts clean and the coverage says it was
    read; a console `GRANT ROLE DATA_STEWARD TO ROLE CRO_EXTERNAL` is ACC708 at the inheriting
    principal, one to a role the model does not name is ACC708 at the granted principal, and a
    revoked edge the model states is ACC708 at its `inherits` item."""
    d = hierarchy_estate(tmp_path)
    sf = platforms.snowflake
    snowflake_hierarchy(sf)
    deploy(d, tmp_path, "snowflake")
    # the planner does not change the hierarchy and does not read it
    assert "SHOW GRANTS OF ROLE LEAD" not in sf.executed
    code, findings, coverage = drift(d, "snowflake")
    assert "SHOW GRANTS OF ROLE LEAD" in sf.executed
    assert (code, findings) == (0, [])
    assert coverage["complete"] is True
    assert coverage["read"]["hierarchy roles"] == 5
    assert coverage["read"]["hierarchy edges"] == 2
    code, out, err = run_cli(["introspect", "--platform", "snowflake", str(d), "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["hierarchy"] == [
        {"parent": "BENCH_CHEMIST", "child": "CLINICAL_UNBLINDED"},
        {"parent": "CLINICAL_UNBLINDED", "child": "LEAD"},
    ]
    code, out, _ = run_cli(["introspect", "--platform", "snowflake", str(d)])
    assert "  hierarchy: LEAD inherits CLINICAL_UNBLINDED" in out

    principals = d / "principals.yaml"
    sf.execute("GRANT ROLE DATA_STEWARD TO ROLE CRO_EXTERNAL")
    sf.execute("CREATE ROLE INTERN")
    sf.execute("GRANT ROLE CLINICAL_UNBLINDED TO ROLE INTERN")
    sf.execute("REVOKE ROLE BENCH_CHEMIST FROM ROLE CLINICAL_UNBLINDED")
    code, findings, _ = drift(d, "snowflake")
    assert code == 1 and {f["rule"] for f in findings} == {"ACC708"}
    by_message = {str(f["message"]): f for f in findings}
    assert len(by_message) == 3
    extra = by_message[
        "snowflake: role DATA_STEWARD is granted to role CRO_EXTERNAL (which "
        "principals.cro_external.inherits does not say): CRO_EXTERNAL inherits everything "
        "granted to DATA_STEWARD"
    ]
    # the principal's entry (its mapping, under its name)
    assert extra["line"] == line_of(principals, "    snowflake: CRO_EXTERNAL")
    assert extra["file"].endswith("principals.yaml")
    assert "REVOKE ROLE DATA_STEWARD FROM ROLE CRO_EXTERNAL" in str(extra["fix"])
    unnamed = by_message[
        "snowflake: role CLINICAL_UNBLINDED is granted to role INTERN (a role the model does "
        "not name): INTERN inherits everything granted to CLINICAL_UNBLINDED"
    ]
    assert unnamed["line"] == line_of(principals, "    snowflake: CLINICAL_UNBLINDED")
    (lost,) = [f for m, f in by_message.items() if "is not granted to" in m]
    assert lost["line"] == line_of(principals, "    inherits: [bench_chemist]")
    assert "CLINICAL_UNBLINDED inherits BENCH_CHEMIST" in str(lost["message"])
    assert "GRANT ROLE BENCH_CHEMIST TO ROLE CLINICAL_UNBLINDED" in str(lost["fix"])
    code, out, _ = run_cli(["drift", str(d), "--platform", "snowflake"])
    assert code == 1 and out.count(" ACC708 ") == 3
    # the per-role reads run --jobs at a time; the output is the same for any value
    one = run_cli(["drift", str(d), "--platform", "snowflake", "--jobs", "1"])
    assert one == (code, out, one[2])


def test_snowflake_a_reader_that_may_not_see_the_roles_is_incomplete_never_clean(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sql-reference/sql/show-grants and show-privileges (MANAGE GRANTS "implicitly allows its
    holder to see every object in the account"): a reading role that does not hold a modelled
    role, own it, or hold MANAGE GRANTS is answered 002003 for `SHOW GRANTS OF ROLE`, as for a
    role that does not exist; drift says it cannot see who inherits it (ACC707, exit 1). With
    the reader grants of docs/live.md (MANAGE GRANTS included) the same estate drifts clean."""
    from tests.test_snowflake_reader import READER, least_privilege

    d = hierarchy_estate(tmp_path)
    sf = platforms.snowflake
    snowflake_hierarchy(sf)
    deploy(d, tmp_path, "snowflake")
    least_privilege(sf, d, monkeypatch)
    code, findings, coverage = drift(d, "snowflake")
    assert (code, findings) == (0, []) and coverage["reader"] == READER
    least_privilege(sf, d, monkeypatch, without=("MANAGE GRANTS",))
    sf.role_grants["GOVERNANCE_READ"].discard(("MANAGE GRANTS", "ACCOUNT", ""))
    code, findings, coverage = drift(d, "snowflake")
    assert code == 1 and coverage["complete"] is False
    unseen = [str(f["message"]) for f in of(findings, "ACC707")]
    for role in ROLES:
        assert any(f"the grantees of role {role} (SHOW GRANTS OF ROLE)" in m for m in unseen)
    assert not of(findings, "ACC708")  # nothing unread is reported as missing either
    # the reader check says so before any read is trusted
    code, out, _ = run_cli(["introspect", "--check-reader", "--platform", "snowflake", str(d)])
    assert code == 1
    assert (
        "  missing: the reading role cannot see the grantees of role LEAD (SHOW GRANTS OF ROLE)"
        in out
    )


def test_snowflake_an_answer_about_another_role_is_unseen_never_an_edge(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Every answer is checked against what was asked (docs/live.md, "What each command reads"):
    `SHOW GRANTS OF ROLE CLINICAL_UNBLINDED` answered with BENCH_CHEMIST's rows (column
    `role`, sql-reference/sql/show-grants) is ignored and said; who inherits
    CLINICAL_UNBLINDED is unseen (ACC707), neither a missing edge for LEAD nor a clean read."""
    d = hierarchy_estate(tmp_path)
    sf = platforms.snowflake
    snowflake_hierarchy(sf)
    deploy(d, tmp_path, "snowflake")
    sf.grants_of_answered_as["CLINICAL_UNBLINDED"] = "BENCH_CHEMIST"
    code, findings, _ = drift(d, "snowflake")
    assert code == 1 and not of(findings, "ACC708")
    (unseen,) = [str(f["message"]) for f in of(findings, "ACC707")]
    assert "the grantees of role CLINICAL_UNBLINDED" in unseen
    assert "answer was about another role" in unseen
    code, out, _ = run_cli(["introspect", "--platform", "snowflake", str(d), "--format", "json"])
    assert (
        "SHOW GRANTS OF ROLE CLINICAL_UNBLINDED: the platform answered about role BENCH_CHEMIST, "
        "not CLINICAL_UNBLINDED; ignored"
    ) in json.loads(out)["ignored"]


def test_snowflake_is_role_in_session_sees_inherited_roles(
    platforms: Platforms, tmp_path: Path
) -> None:
    """sql-reference/functions/is_role_in_session ("any role lower in the role hierarchy"):
    the stand-in's policy evaluation follows the grants, so a session whose only role is LEAD
    reads the rows granted to BENCH_CHEMIST two levels down, and loses them when the edge is
    revoked."""
    d = hierarchy_estate(tmp_path)
    sf = platforms.snowflake
    snowflake_hierarchy(sf)
    deploy(d, tmp_path, "snowflake")
    sf.seed_rows(
        "DISCOVERY.ASSAYS.RESULTS",
        [{"PROGRAMME_CODE": "IMM-310"}, {"PROGRAMME_CODE": "CNS-204"}],
    )

    def programmes() -> set[object]:
        rows = sf.execute_as(
            Session("lead_user", primary="LEAD"),
            "SELECT PROGRAMME_CODE FROM DISCOVERY.ASSAYS.RESULTS",
        )[1]
        return {r[0] for r in rows}

    assert programmes() == {"IMM-310", "CNS-204"}
    sf.execute("REVOKE ROLE BENCH_CHEMIST FROM ROLE CLINICAL_UNBLINDED")
    assert programmes() == {"CNS-204"}


# ------------------------------------------------------------------ Databricks


def test_databricks_drift_reads_group_nesting_and_reports_each_edge_that_differs(
    platforms: Platforms, tmp_path: Path
) -> None:
    """The workspace's SCIM Groups API as databricks-sdk calls it (service/iam.py GroupsAPI:
    `w.groups.list`, `w.groups.get`, members whose `$ref` is `Groups/<id>`), and
    sql/language-manual/functions/is_account_group_member ("a direct or indirect member"): the
    nesting the model states drifts clean; `cro-external` nested in `data-stewards` is ACC708
    at `cro_external`; `clinical-unblinded` taken out of `bench-chemists` is ACC708 at the
    `inherits` item."""
    d = hierarchy_estate(tmp_path)
    dbx = platforms.databricks
    databricks_hierarchy(dbx)
    deploy(d, tmp_path, "databricks")
    code, findings, coverage = drift(d, "databricks")
    assert (code, findings) == (0, [])
    assert coverage["read"]["hierarchy groups"] == 5
    assert coverage["read"]["hierarchy edges"] == 2
    code, out, err = run_cli(["introspect", "--platform", "databricks", str(d), "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["hierarchy"] == [
        {"parent": "bench-chemists", "child": "clinical-unblinded"},
        {"parent": "clinical-unblinded", "child": "leads"},
    ]

    principals = d / "principals.yaml"
    dbx.nest("cro-external", "data-stewards")
    dbx.unnest("clinical-unblinded", "bench-chemists")
    code, findings, _ = drift(d, "databricks")
    assert code == 1 and {f["rule"] for f in findings} == {"ACC708"}
    extra, lost = sorted(findings, key=lambda f: "not a member" in str(f["message"]))
    assert extra["message"] == (
        "databricks: group cro-external is nested in group data-stewards (which "
        "principals.cro_external.inherits does not say): cro-external inherits everything "
        "granted to data-stewards"
    )
    assert extra["line"] == line_of(principals, "    snowflake: CRO_EXTERNAL")
    assert lost["line"] == line_of(principals, "    inherits: [bench_chemist]")
    assert "group clinical-unblinded is not a member of group bench-chemists" in str(
        lost["message"]
    )


def test_databricks_nesting_the_reader_cannot_see_is_incomplete_never_clean(
    platforms: Platforms, tmp_path: Path
) -> None:
    """admin/users-groups/groups (the workspace lists the account groups assigned to it) and
    the legacy workspace SCIM reference (a non-admin caller gets each group's name and id
    only): a modelled group the workspace does not list, or a reader refused a group's
    members, leaves who is nested in it unseen: ACC707 and exit 1, never clean and never a
    missing edge."""
    d = hierarchy_estate(tmp_path)
    dbx = platforms.databricks
    databricks_hierarchy(dbx)
    deploy(d, tmp_path, "databricks")
    dbx.unassigned_groups.add("leads")
    code, findings, coverage = drift(d, "databricks")
    assert code == 1 and coverage["complete"] is False
    (unseen,) = [str(f["message"]) for f in of(findings, "ACC707")]
    assert "the members of group leads (SCIM Groups)" in unseen
    assert "does not list it" in unseen
    assert not of(findings, "ACC708")
    dbx.unassigned_groups.clear()
    dbx.workspace_admins.clear()  # the reader is no workspace admin
    code, findings, _ = drift(d, "databricks")
    unseen = [str(f["message"]) for f in of(findings, "ACC707")]
    assert code == 1 and len(unseen) == 5
    assert all("PERMISSION_DENIED" in m or "does not have" in m for m in unseen)


def test_databricks_is_account_group_member_sees_nested_groups(
    platforms: Platforms, tmp_path: Path
) -> None:
    """sql/language-manual/functions/is_account_group_member: true for a direct or indirect
    member of the account group; the stand-in's filter evaluation follows the nesting (a
    session in `leads` only is in `bench-chemists` two levels up)."""
    d = hierarchy_estate(tmp_path)
    dbx = platforms.databricks
    databricks_hierarchy(dbx)
    deploy(d, tmp_path, "databricks")
    dbx.session = {"leads"}
    rows = dbx.execute("SELECT is_account_group_member('bench-chemists') AS yes")[1]
    assert rows == [(True,)]
    dbx.unnest("leads", "clinical-unblinded")
    assert dbx.execute("SELECT is_account_group_member('bench-chemists') AS yes")[1] == [(False,)]


# ------------------------------------------------------------------ probe --live


LEAD_PROBE = """
  lead_sees_immunology_subjects_through_the_hierarchy:
    owner: data-governance
    persona: lead
    dataset: assay_results
    where: {programme: IMM-310}
    column: SUBJECT_ID
    canary: SUBJ-0310
    expect:
      warehouse_agent: clear
"""


def test_probe_live_asks_as_the_persona_and_the_platform_applies_the_hierarchy(
    platforms: Platforms, tmp_path: Path
) -> None:
    """sql-reference/functions/is_role_in_session and sql-reference/sql/use-role: `probe
    --live` takes the persona's role (`USE ROLE LEAD`) and the platform's policies see every
    role under it. The expectation comes from the model's effective principals (LEAD inherits
    CLINICAL_UNBLINDED, which inherits BENCH_CHEMIST, granted IMM-310 and unmasked), so the probe
    passes on the hierarchy the model states, and fails, naming its owner, once the live edge
    is revoked: probe --live needs no refusal of `inherits`."""
    d = hierarchy_estate(tmp_path)
    probes = d / "probes.yaml"
    probes.write_text(probes.read_text().replace("\nprobes:\n", "\nprobes:" + LEAD_PROBE, 1))
    sf = platforms.snowflake
    snowflake_hierarchy(sf)
    deploy(d, tmp_path, "snowflake")
    sf.seed_rows(
        "DISCOVERY.ASSAYS.RESULTS",
        [{"PROGRAMME_CODE": "IMM-310", "SUBJECT_ID": "SUBJ-0310", "NOTES": "imm note"}],
    )
    sf.grant_roles("accord_ci", ROLES)  # the probe user may take every persona's role
    config = tmp_path / "probe.yaml"
    config.write_text("timeout_seconds: 10\n")

    def probe() -> tuple[int, dict[str, object]]:
        code, out, err = run_cli(
            ["probe", "--live", str(d), "--platform", "snowflake", "--format", "json",
             "--config", str(config)]
        )  # fmt: skip
        assert code in (0, 1), err
        doc = json.loads(out)
        (lead,) = [
            o
            for o in doc["outcomes"]
            if o["probe"] == "lead_sees_immunology_subjects_through_the_hierarchy"
        ]
        return code, lead

    _, lead = probe()  # (the reference probes whose canaries are not seeded here fail)
    assert lead["ok"] is True and lead["actual"] == "clear" and lead["depth"] == "live", lead
    assert "USE ROLE LEAD" in sf.executed
    sf.execute("REVOKE ROLE BENCH_CHEMIST FROM ROLE CLINICAL_UNBLINDED")
    code, lead = probe()
    assert code == 1 and lead["ok"] is False and lead["actual"] == "empty", lead
    assert lead["owner"] == "data-governance"
