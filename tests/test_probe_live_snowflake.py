"""`accord probe --live` on Snowflake catalog surfaces, through the real
snowflake-connector-python, against the Snowflake stand-in (sandbox/standins/snowflake.py).

policies/ is deployed from an empty account through ``plan --base live:snowflake`` +
``migrate apply``; rows (with the probes' canaries) are seeded under the governed tables; the
probe user holds every persona's role and each probe switches its session with ``USE ROLE`` /
``USE SECONDARY ROLES`` (docs.snowflake.com/en/sql-reference/sql/use-secondary-roles). The
stand-in answers from what was deployed: the attached row access policy and masking policies,
``IS_ROLE_IN_SESSION`` seeing primary and secondary roles, ``CURRENT_ROLE()`` the primary only
(docs.snowflake.com/en/sql-reference/functions/is_role_in_session). Tampering with the deployed
estate makes the covering probe fail, naming its owner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms, SharedPlatforms

POLICIES = str(ROOT / "policies")
RESULTS = "DISCOVERY.ASSAYS.RESULTS"

#: rows of the assay results table, among them the canaries policies/probes.yaml names
ROWS = [
    {"PROGRAMME_CODE": "CNS-204", "SUBJECT_ID": "SUBJ-CANARY-0204", "NOTES": "cns note"},
    {"PROGRAMME_CODE": "CNS-204", "SUBJECT_ID": "SUBJ-0007", "NOTES": "second cns note"},
    {"PROGRAMME_CODE": "ONC-101", "SUBJECT_ID": "SUBJ-0101", "NOTES": "canary note ONC-101"},
    {"PROGRAMME_CODE": "IMM-310", "SUBJECT_ID": "SUBJ-0310", "NOTES": "imm note"},
]


def deploy_snowflake(plans: Path) -> None:
    code, _, err = run_cli(["plan", POLICIES, "--base", "live:snowflake", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans), "--policies",
         POLICIES]
    )  # fmt: skip
    assert code == 0, out + err


@pytest.fixture(scope="module")
def deployed_once(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    """policies/ deployed once for this file, the rows seeded, the probe user granted every
    persona's role."""
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp) as platforms:
        deploy_snowflake(tmp / "migrations")
        sf = platforms.snowflake
        sf.seed_rows(RESULTS, ROWS)
        model = load_project(POLICIES).model
        roles = sorted({p.snowflake for p in model.principals.values() if p.snowflake})
        sf.grant_roles("accord_ci", roles)  # the probe user: every persona's role
    return shared_platforms


@pytest.fixture
def deployed(deployed_once: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> Platforms:
    """The estate as the deploy left it, whatever an earlier test changed."""
    return deployed_once.reset(monkeypatch)


def probe_live(tmp_path: Path) -> tuple[int, dict]:
    config = tmp_path / "probe.yaml"
    config.write_text("timeout_seconds: 10\n")
    code, out, err = run_cli(
        ["probe", "--live", POLICIES, "--platform", "snowflake", "--format", "json",
         "--config", str(config)]
    )  # fmt: skip
    assert code in (0, 1), err
    return code, json.loads(out)


def outcomes(doc: dict) -> dict[str, dict]:
    return {o["probe"]: o for o in doc["outcomes"]}


def rows_as(statements: list[str]) -> list[tuple]:
    """Statements in one session of the probe user, through the real connector."""
    import snowflake.connector

    from accord.compiler.probe_live.catalog import SnowflakeRunner, snowflake_connect_kwargs

    runner = SnowflakeRunner(
        lambda: snowflake.connector.connect(**snowflake_connect_kwargs(10, None))
    )
    return runner.run("-", statements)


def test_reference_probes_pass_on_the_deployed_estate(deployed: Platforms, tmp_path: Path) -> None:
    code, doc = probe_live(tmp_path)
    got = outcomes(doc)
    assert code == 0, json.dumps(doc["outcomes"], indent=1)
    want = {
        "cro_cannot_unmask_cns_subjects": "masked",
        "pharmacologist_sees_cns_subjects": "clear",
        "bench_chemist_reads_redacted_oncology_notes": "masked",
    }
    for probe, disposition in want.items():
        assert got[probe]["actual"] == disposition, got[probe]
        assert got[probe]["depth"] == "live"
    # the pharmacologist's session: primary BENCH_CHEMIST, secondary CLINICAL_UNBLINDED
    executed = deployed.snowflake.executed
    assert "USE SECONDARY ROLES CLINICAL_UNBLINDED" in executed
    assert "USE SECONDARY ROLES NONE" in executed


#: session -> PROGRAMME_CODE, SUBJECT_ID, NOTES rows the deployed policies let through
SESSIONS = {
    "bench chemist": (
        ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES NONE"],
        {("IMM-310", "hash", "[redacted]"), ("ONC-101", "hash", "[redacted]")},
    ),
    "bench chemist + unblinded": (
        ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES CLINICAL_UNBLINDED"],
        {("CNS-204", "SUBJ-CANARY-0204", "cns note"), ("CNS-204", "SUBJ-0007", "second cns note"),
         ("IMM-310", "SUBJ-0310", "imm note"), ("ONC-101", "SUBJ-0101", "canary note ONC-101")},
    ),
    "cro": (
        ["USE ROLE CRO_EXTERNAL", "USE SECONDARY ROLES NONE"],
        {("CNS-204", "hash", "[redacted]")},
    ),
    "data steward": (
        ["USE ROLE DATA_STEWARD", "USE SECONDARY ROLES NONE"],
        {("CNS-204", "hash", "[redacted]"), ("IMM-310", "hash", "[redacted]"),
         ("ONC-101", "hash", "[redacted]")},
    ),
}  # fmt: skip


@pytest.mark.parametrize(("session", "want"), SESSIONS.values(), ids=list(SESSIONS))
def test_a_session_reads_what_its_roles_allow(
    deployed: Platforms, session: list[str], want: set[tuple[str, str, str]]
) -> None:
    rows = rows_as(
        [*session, f"SELECT PROGRAMME_CODE, SUBJECT_ID, NOTES FROM {RESULTS} WHERE 1 = 1"],
    )
    seen = set()
    for programme, subject, notes in rows:
        if subject.startswith("SUBJ-"):
            seen.add((programme, subject, notes))
        else:
            assert len(subject) == 64 and int(subject, 16) >= 0  # SHA-256 hex with the salt
            seen.add((programme, "hash", notes))
    assert seen == want


def test_a_role_the_user_was_not_granted_is_refused(deployed: Platforms) -> None:
    from accord.compiler.probe_live.catalog import QueryError

    with pytest.raises(QueryError) as err:
        rows_as(["USE ROLE ACCOUNTADMIN", f"SELECT 1 FROM {RESULTS}"])
    assert err.value.codes["errorCode"] == "002003"


def test_a_current_role_mask_fails_the_secondary_role_probe(
    deployed: Platforms, tmp_path: Path
) -> None:
    """The as-found bug: CURRENT_ROLE() sees only the primary role, so the pharmacologist
    (primary BENCH_CHEMIST, CLINICAL_UNBLINDED secondary) is masked."""
    deployed.snowflake.execute(
        "ALTER MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK SET BODY -> "
        "CASE WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED' THEN VAL "
        "ELSE SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256) END"
    )
    code, doc = probe_live(tmp_path)
    assert code == 1
    got = outcomes(doc)
    bad = got["pharmacologist_sees_cns_subjects"]
    assert bad["actual"] == "masked" and bad["expected"] == "clear"
    assert bad["owner"] == "clinical-data-office"
    assert got["cro_cannot_unmask_cns_subjects"]["actual"] == "masked"  # still masked
    failed = {o["probe"] for o in doc["outcomes"] if o["actual"] != o["expected"]}
    assert failed == {"pharmacologist_sees_cns_subjects"}


def test_an_unset_mask_fails_the_redaction_probe(deployed: Platforms, tmp_path: Path) -> None:
    deployed.snowflake.execute(f"ALTER TABLE {RESULTS} MODIFY COLUMN NOTES UNSET MASKING POLICY")
    code, doc = probe_live(tmp_path)
    assert code == 1
    bad = outcomes(doc)["bench_chemist_reads_redacted_oncology_notes"]
    assert bad["actual"] == "clear" and bad["expected"] == "masked"
    assert bad["owner"] == "data-governance"
