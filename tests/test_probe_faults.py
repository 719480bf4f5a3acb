"""`accord probe --live`: a probe that did not run is not an answer (issue 20, Build item 4, and
platform fact 6), against the platform stand-ins through the real clients.

A probe's session (log in, USE ROLE, USE SECONDARY ROLES, the warehouse) is set up and checked
apart from its question. A failure of it, a session whose roles are not the persona's, a table
that does not exist, a positive control that fails, or a 403 from the warehouse is a *fault*:
its own outcome in text, JSON, JUnit and the result file, exit 1, the owner named; never
`denied`. Each case below would pass (or read `denied`) if accord ignored it.

* Snowflake (snowflake-connector-python against sandbox/standins/snowflake.py):
  - a refused USE SECONDARY ROLES: "Each named role must have been granted to the current
    user ... if any role has not been granted, the command fails with an error"
    (https://docs.snowflake.com/en/sql-reference/sql/use-secondary-roles, usage notes);
  - fact 6: under a session policy USE SECONDARY ROLES succeeds and "the roles activated for
    each subsequent SQL statement might be a subset of the desired set, for example, if a
    session policy restricts certain secondary roles"; ALLOWED_SECONDARY_ROLES = () fails it
    ("No secondary roles are activated due to the session policy ...") (same page; and
    https://docs.snowflake.com/en/user-guide/session-policies-using). accord reads the
    activated roles back with CURRENT_SECONDARY_ROLES(), a JSON object whose ``roles`` are the
    activated ones (https://docs.snowflake.com/en/sql-reference/functions/current_secondary_roles);
  - a dropped table: 002003 "does not exist or not authorized" (fact 7: a missing table and a
    hidden one look alike, so neither is an answer of the policies).
* Databricks (databricks-sdk against sandbox/standins/databricks.py): a warehouse that answers
  403 PERMISSION_DENIED; a principal whose account groups are not the persona's
  (``is_account_group_member``: true for a direct or indirect member of an account group,
  https://docs.databricks.com/sql/language-manual/functions/is_account_group_member); a missing
  table (SQLSTATE 42P01); a positive control that returns no rows (a denial it would otherwise
  "prove"); a declared control.
* A2A: an answer that shows the canary's clear value is `clear`, whatever denial code rides
  beside it in a data part or in metadata.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.meaning.probes import Place
from accord.compiler.model.validate import Project, load_project
from accord.compiler.probe_live.a2a import A2AError, classify_error, classify_task, send_message
from accord.compiler.probe_live.canary import Canary
from accord.compiler.probe_live.catalog import FAULTS, QueryError, ask_catalog
from accord.compiler.probe_live.result import digest
from accord.compiler.probe_live.run import LiveOptions, run_live
from accord.sandbox.standins.databricks import DatabricksEstate, workspace
from accord.sandbox.standins.probe_runner import StandinRunner
from accord.sandbox.standins.snowflake import SnowflakeEstate
from tests.a2a_standin import a2a_standin, url
from tests.cli import run_cli
from tests.live_helpers import ROOT, SALTS, SharedPlatforms, deployed, persona_groups
from tests.test_probe_live_snowflake import RESULTS, ROWS, deploy_snowflake, outcomes

POLICIES = ROOT / "policies"
PROBE_USER = "accord_ci"  # the login of the Snowflake stand-in's connector parameters

#: the tests ask the platform and agent stand-ins, but for a few that judge answers alone
pytestmark = pytest.mark.standin


# --------------------------------------------------------------------------------------------
# Snowflake, through the connector


@pytest.fixture(scope="module")
def deployed_once(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    """policies/ deployed once for this file, the rows (and canaries) seeded."""
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp) as platforms:
        deploy_snowflake(tmp / "migrations")
        platforms.snowflake.seed_rows(RESULTS, ROWS)
    return shared_platforms


@pytest.fixture
def snowflake(deployed_once: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> SnowflakeEstate:
    """policies/ deployed, the rows (and canaries) seeded, as the deploy left them; no role
    granted to the probe user yet (each test grants what it needs)."""
    return deployed_once.reset(monkeypatch).snowflake


def grant_roles(sf: SnowflakeEstate, *left_out: str) -> None:
    model = load_project(POLICIES).model
    roles = {p.snowflake for p in model.principals.values() if p.snowflake}
    sf.grant_roles(PROBE_USER, sorted(roles - set(left_out)))


def probe_cli(
    tmp_path: Path, platform: str, fmt: str = "json", *extra: str, root: Path = POLICIES
) -> tuple[int, str]:
    config = tmp_path / "probe.yaml"
    if not config.exists():
        config.write_text("timeout_seconds: 10\n")
    code, out, err = run_cli(
        ["probe", "--live", str(root), "--platform", platform, "--format", fmt,
         "--config", str(config), *extra]
    )  # fmt: skip
    assert code in (0, 1), err
    return code, out


def test_the_reference_probes_pass_when_the_session_is_the_personas(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """The control of the cases below: every role granted, no session policy."""
    grant_roles(snowflake)
    code, out = probe_cli(tmp_path, "snowflake")
    doc = json.loads(out)
    assert code == 0, out
    assert doc["faults"] == 0 and all(o["fault"] is None for o in doc["outcomes"])
    assert "SELECT CURRENT_ROLE(), CURRENT_SECONDARY_ROLES()" in snowflake.executed


def test_a_refused_use_secondary_roles_is_a_session_fault(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """The probe user was not granted CLINICAL_UNBLINDED: USE SECONDARY ROLES fails with
    002003 (a code of the denial table), which is a fault of the session, not `denied`."""
    grant_roles(snowflake, "CLINICAL_UNBLINDED")
    code, out = probe_cli(tmp_path, "snowflake")
    assert code == 1
    doc = json.loads(out)
    got = outcomes(doc)["pharmacologist_sees_cns_subjects"]
    assert got["fault"] == "session" and got["actual"] is None, got
    assert "USE SECONDARY ROLES CLINICAL_UNBLINDED was refused" in got["detail"]
    assert got["owner"] == "clinical-data-office"
    assert doc["faults"] == 1 and doc["passed"] is False
    # the other personas' sessions were theirs: answered
    assert outcomes(doc)["cro_cannot_unmask_cns_subjects"]["actual"] == "masked"


def test_a_session_policy_that_activates_fewer_roles_is_a_roles_fault(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """Fact 6: a session policy on the probe user allows DATA_STEWARD only. USE SECONDARY
    ROLES CLINICAL_UNBLINDED succeeds and activates nothing; CURRENT_SECONDARY_ROLES() says
    so, and the pharmacologist's probe refuses to answer (without the check it would read
    her masked view as her answer)."""
    from tests.test_probe_live_snowflake import rows_as

    grant_roles(snowflake)
    snowflake.set_session_policy(PROBE_USER, ["DATA_STEWARD"])
    ((current, secondary),) = rows_as(
        ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES CLINICAL_UNBLINDED",
         "SELECT CURRENT_ROLE(), CURRENT_SECONDARY_ROLES()"]
    )  # fmt: skip
    assert current == "BENCH_CHEMIST"
    assert json.loads(secondary) == {"roles": "", "value": "CLINICAL_UNBLINDED"}
    # the policies see the activated roles only: no CNS-204 row for her in this session
    rows = rows_as(
        ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES CLINICAL_UNBLINDED",
         f"SELECT PROGRAMME_CODE FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204'"]
    )  # fmt: skip
    assert rows == []

    code, out = probe_cli(tmp_path, "snowflake", "text")
    assert code == 1
    assert (
        "  FAULT warehouse_agent: expected clear, the probe did not run (roles): owner "
        "clinical-data-office told"
    ) in out
    assert "not activated: CLINICAL_UNBLINDED" in out
    assert "(1 did not run)" in out


def test_a_session_policy_allowing_no_secondary_role_refuses_the_statement(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """ALLOWED_SECONDARY_ROLES = (): USE SECONDARY ROLES <role> fails (a session fault);
    USE SECONDARY ROLES NONE still succeeds, so the single-role personas are answered."""
    grant_roles(snowflake)
    snowflake.set_session_policy(PROBE_USER, [])
    code, out = probe_cli(tmp_path, "snowflake")
    got = outcomes(json.loads(out))
    assert code == 1
    assert got["pharmacologist_sees_cns_subjects"]["fault"] == "session"
    assert "No secondary roles are activated" in got["pharmacologist_sees_cns_subjects"]["detail"]
    assert got["bench_chemist_reads_redacted_oncology_notes"]["actual"] == "masked"


def test_a_session_policy_that_allows_the_personas_roles_answers(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    grant_roles(snowflake)
    snowflake.set_session_policy(PROBE_USER, ["CLINICAL_UNBLINDED"])
    code, out = probe_cli(tmp_path, "snowflake")
    assert code == 0, out


def with_probe(tmp_path: Path, name: str, probe: dict[str, Any]) -> Path:
    """policies/ with one more probe."""
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    doc = yaml.safe_load((root / "probes.yaml").read_text())
    doc["probes"][name] = probe
    (root / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root


def test_a_snowflake_denial_is_proven_by_its_control(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """The CRO's ONC-101 assay rows: the row access policy answers no rows (`denied`), and
    the control (the CNS-204 rows she is granted) answered in the same session. With those
    rows gone the same empty answer proves nothing: a `control` fault."""
    grant_roles(snowflake)
    root = with_probe(
        tmp_path,
        "cro_sees_no_oncology_assays",
        {
            "owner": "data-governance",
            "persona": "cro_collaborator",
            "dataset": "assay_results",
            "where": {"programme": "ONC-101"},
            "expect": {"warehouse_agent": "denied", "lakehouse_agent": "denied"},
        },
    )
    code, out = probe_cli(tmp_path, "snowflake", root=root)
    got = outcomes(json.loads(out))["cro_sees_no_oncology_assays"]
    assert code == 0 and got["actual"] == "denied", got
    assert "the positive control assay_results where programme = CNS-204" in got["detail"]
    assert (
        "SELECT 1 FROM DISCOVERY.ASSAYS.RESULTS WHERE PROGRAMME_CODE = 'CNS-204' LIMIT 100"
        in snowflake.executed
    )
    snowflake.db.execute(
        f"DELETE FROM {snowflake._quoted(RESULTS)} WHERE PROGRAMME_CODE = 'CNS-204'"
    )
    code, out = probe_cli(tmp_path, "snowflake", root=root)
    got = outcomes(json.loads(out))["cro_sees_no_oncology_assays"]
    assert code == 1 and (got["fault"], got["actual"]) == ("control", None), got


def test_a_missing_table_is_a_fault_in_every_format(
    snowflake: SnowflakeEstate, tmp_path: Path
) -> None:
    """The assay table was dropped: every query answers 002003 "does not exist or not
    authorized", which used to read as `denied`. Text, JSON, JUnit and the result file each
    report the faults apart from wrong answers."""
    grant_roles(snowflake)
    snowflake.db.execute(f"DROP TABLE {snowflake._quoted(RESULTS)}")
    result = tmp_path / "result.json"
    code, out = probe_cli(tmp_path, "snowflake", "junit", "--out", str(result))
    assert code == 1
    suite = ET.fromstring(out).find("testsuite")
    assert suite is not None
    assert (suite.get("errors"), suite.get("failures")) == ("3", "0")
    errors = [c.find("error") for c in suite.findall("testcase")]
    assert all(e is not None and e.get("type") == "probe-fault" for e in errors)
    assert {e.get("message") for e in errors if e is not None} == {
        "owner data-governance: the probe did not run (table)",
        "owner clinical-data-office: the probe did not run (table)",
    }
    doc = json.loads(result.read_text())
    assert doc["sha256"] == digest(doc)
    assert doc["faults"] == 3 and doc["passed"] is False
    for o in doc["outcomes"]:
        assert (o["fault"], o["actual"], o["ok"]) == ("table", None, False), o
        assert "DISCOVERY.ASSAYS.RESULTS does not exist, or" in o["detail"]


# --------------------------------------------------------------------------------------------
# Databricks, through the SDK (one profile per persona, as the probe config names them)


@dataclass
class Lake:
    project: Project
    #: the deployed catalog: its tables and policies
    estate: DatabricksEstate
    #: answers each statement as the persona (its groups overridable per persona)
    runner: StandinRunner
    #: the workspace the SDK talks to
    workspace: DatabricksEstate
    config: Path

    def run(self) -> Any:
        return run_live(self.project, LiveOptions(platform="databricks", config=str(self.config)))

    def statements(self, persona: str) -> list[str]:
        return [s for who, seen in self.runner.seen if who == persona for s in seen]


@pytest.fixture
def lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Lake]]:
    """A factory: the policies of ``root`` deployed on a Databricks stand-in, asked through the
    real SDK (a profile and token per persona)."""
    for var, value in SALTS.items():
        monkeypatch.setenv(var, value)
    for var in ("DATABRICKS_HOST", "DATABRICKS_TOKEN", "DATABRICKS_CONFIG_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    with ExitStack() as stack:

        def make(root: Path = POLICIES) -> Lake:
            project = load_project(root)
            estate = deployed(project, "databricks")
            assert isinstance(estate, DatabricksEstate)
            runner = StandinRunner(estate, persona_groups(project))
            personas = sorted(project.model.personas)
            front = DatabricksEstate()
            front.tokens = {f"tok-{p}": p for p in personas}
            # a refusal is the stand-in's own error, which the workspace answers as a FAILED
            # statement with its SQLSTATE
            front.answer = lambda who, sql: runner.run(who, [sql])
            host = stack.enter_context(workspace(front))
            cfg = tmp_path / "databrickscfg"
            cfg.write_text(
                "".join(f"[probe-{p}]\nhost = {host}\ntoken = tok-{p}\n\n" for p in personas)
            )
            monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(cfg))
            config = tmp_path / "probe.yaml"
            config.write_text(
                yaml.safe_dump(
                    {
                        "databricks": {
                            "warehouse_id": "wh-probe",
                            "probe_profiles": {p: f"probe-{p}" for p in personas},
                        },
                        "timeout_seconds": 10,
                    }
                )
            )
            return Lake(project, estate, runner, front, config)

        yield make


def by_probe(run: Any) -> dict[str, Any]:
    return {o.probe: o for o in run.outcomes}


def test_databricks_reference_probes_pass_with_their_controls(lake: Callable[..., Lake]) -> None:
    """The control of the cases below. The CRO's deny-expecting probe (ONC-101 variant calls)
    ran its positive control, the CNS-204 calls she is granted, in the same session before
    the question; every session checked the principal's groups first."""
    lk = lake()
    run = lk.run()
    assert run.passed, run.text()
    cro = lk.statements("cro_collaborator")
    assert any(s.startswith("SELECT is_account_group_member(") for s in cro)
    control = "SELECT 1 FROM omics.variants.calls WHERE programme_code = 'CNS-204' LIMIT 100"
    question = "SELECT 1 FROM omics.variants.calls WHERE programme_code = 'ONC-101' LIMIT 100"
    assert control in cro and question in cro
    assert cro.index(control) < cro.index(question)
    denied = by_probe(run)["cro_sees_no_oncology_variants"]
    assert denied.actual == "denied"
    assert "positive control omics.variants.calls" not in denied.detail  # names the dataset
    assert "the positive control variant_calls where programme = CNS-204" in denied.detail


def test_a_403_from_the_warehouse_is_a_fault_not_denied(lake: Callable[..., Lake]) -> None:
    """The statement API answers 403 PERMISSION_DENIED (no CAN USE on the warehouse): a code
    of the denial table, which used to pass the CRO's deny-expecting probe."""
    lk = lake()
    lk.workspace.forbidden = ["/api/2.0/sql/statements"]
    run = lk.run()
    assert not run.passed
    got = by_probe(run)["cro_sees_no_oncology_variants"]
    assert (got.fault, got.actual, got.ok) == ("warehouse", None, False)
    assert "the warehouse refused the session" in got.detail
    assert {o.fault for o in run.outcomes} == {"warehouse"}
    assert lk.runner.seen == []  # no question reached the catalog


def test_a_principal_in_other_groups_than_the_personas_is_a_roles_fault(
    lake: Callable[..., Lake],
) -> None:
    lk = lake()
    lk.runner.groups["cro_collaborator"] = {"cro-external", "data-stewards"}
    lk.runner.groups["clinical_pharmacologist"] = {"bench-chemists"}
    run = lk.run()
    got = {(o.probe, o.surface): o for o in run.outcomes}
    cro = got[("cro_sees_no_oncology_variants", "lakehouse_agent")]
    assert cro.fault == "roles" and "also a member of data-stewards" in cro.detail
    pharm = got[("pharmacologist_sees_cns_subjects", "lakehouse_agent")]
    assert pharm.fault == "roles" and "not a member of clinical-unblinded" in pharm.detail
    assert got[("bench_chemist_reads_redacted_oncology_notes", "lakehouse_agent")].ok
    # the question was never asked in a session that was not the persona's
    assert not any("ONC-101" in s for s in lk.statements("cro_collaborator"))


def test_a_missing_databricks_table_is_a_fault(lake: Callable[..., Lake]) -> None:
    lk = lake()
    lk.estate.db.execute(f"DROP TABLE {lk.estate._quoted('omics.variants.calls')}")
    run = lk.run()
    got = by_probe(run)
    denied = got["cro_sees_no_oncology_variants"]
    assert (denied.fault, denied.actual) == ("table", None), denied.detail
    assert "omics.variants.calls (the positive control) does not exist" in denied.detail
    # a surface that reads the dropped table among others: the whole answer is unknown
    assert got["cro_cannot_unmask_cns_subjects"].fault == "table"


def test_a_control_without_rows_is_a_fault_and_no_proven_denial(
    lake: Callable[..., Lake],
) -> None:
    """The CNS-204 variant calls are gone (or a broken filter shows the CRO nothing): her
    ONC-101 question answers no rows, which alone would read `denied` and pass. The control
    says the session sees nothing it should, so the denial is not proven."""
    lk = lake()
    lk.estate.db.execute(
        f"DELETE FROM {lk.estate._quoted('omics.variants.calls')} WHERE programme_code = 'CNS-204'"
    )
    run = lk.run()
    got = by_probe(run)["cro_sees_no_oncology_variants"]
    assert (got.fault, got.ok) == ("control", False)
    assert "returned no rows" in got.detail
    assert not any("ONC-101" in s for s in lk.statements("cro_collaborator"))


def test_a_declared_control_is_run_in_the_same_session(
    lake: Callable[..., Lake], tmp_path: Path
) -> None:
    """``control: {dataset: assay_results, ...}`` on a Databricks probe: assay_results is a
    Snowflake dataset, so its Databricks replica (assay_results_lake) stands in for it."""
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    doc = yaml.safe_load((root / "probes.yaml").read_text())
    doc["probes"]["cro_sees_no_oncology_variants"]["control"] = {
        "dataset": "assay_results",
        "where": {"programme": "CNS-204"},
    }
    (root / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    lk = lake(root)
    run = lk.run()
    assert run.passed, run.text()
    control = (
        "SELECT 1 FROM discovery_lake.assays.results WHERE programme_code = 'CNS-204' LIMIT 100"
    )
    cro = lk.statements("cro_collaborator")
    assert control in cro
    detail = by_probe(run)["cro_sees_no_oncology_variants"].detail
    assert "assay_results_lake where programme = CNS-204 (declared)" in detail


@pytest.mark.parametrize(
    ("control", "message"),
    [
        ({"dataset": "assay_resluts"}, "unknown dataset 'assay_resluts'"),
        ({"where": {"programme": "CNS-999"}}, "unknown programme value 'CNS-999'"),
        ({"where": {"programe": "CNS-204"}}, "unknown entitlement dimension 'programe'"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_control_is_a_validation_error(
    tmp_path: Path, control: dict[str, Any], message: str
) -> None:
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    doc = yaml.safe_load((root / "probes.yaml").read_text())
    doc["probes"]["cro_sees_no_oncology_variants"]["control"] = control
    (root / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out, err = run_cli(["validate", str(root)])
    assert code == 2, out + err
    assert message in err and "probes.yaml:" in err and "Traceback" not in err


def test_a_deny_expecting_probe_without_a_possible_control_is_a_fault() -> None:
    """No ``where`` to vary and no declared control: the run says to declare one, and opens
    no session."""
    model = load_project(POLICIES).model
    probe = model.probes["cro_sees_no_oncology_variants"].model_copy(update={"where": None})

    class Unused:
        def session(self, persona: str) -> Any:
            raise AssertionError("no session should open")

    got = ask_catalog(model, probe, Place("variant_calls", None), Unused(), None, True)
    assert got.fault == "control" and "declare probes.*.control" in got.detail
    assert got.fault in FAULTS


# --------------------------------------------------------------------------------------------
# A2A: the clear canary outranks a denial-looking code

CANARY = "SUBJ-CANARY-204"


@pytest.mark.parametrize(
    "path", ["/leak/errorCode/002003", "/leak/sqlState/42501", "/leak/code/PERMISSION_DENIED"]
)
def test_an_answer_with_the_clear_canary_and_a_denial_code_is_clear(path: str) -> None:
    with a2a_standin(canary_text=f"The CNS-204 subjects are: {CANARY}") as agent:
        result = send_message(url(agent, path), "q", timeout=5)
    got = classify_task(result, Canary(CANARY), True)
    assert got.disposition == "clear", got.detail
    assert got.denial is not None and "outranks" in got.detail


def test_the_clear_canary_outranks_a_code_in_metadata_and_in_a_rejected_task() -> None:
    canary = Canary(CANARY)
    for state in ("TASK_STATE_COMPLETED", "TASK_STATE_REJECTED", "TASK_STATE_FAILED"):
        task = {
            "task": {
                "id": "t",
                "status": {
                    "state": state,
                    "message": {"parts": [{"text": f"denied, but: {CANARY.lower()}"}]},
                },
                "metadata": {"errorCode": "003001"},
            }
        }
        got = classify_task(task, canary, True)
        assert got.disposition == "clear", (state, got.detail)
    # without the value, the code still decides
    task["task"]["status"]["message"]["parts"] = [{"text": "I cannot share that."}]
    assert classify_task(task, canary, True).disposition == "denied"


# --------------------------------------------------------------------------------------------
# what a session's answers mean, one statement at a time


class Scripted:
    """A runner whose session answers each statement from ``answers`` (the first key the
    statement contains), raising the QueryError given there."""

    def __init__(self, answers: dict[str, list[tuple[Any, ...]] | QueryError]) -> None:
        self.answers = answers
        self.statements: list[str] = []

    @contextmanager
    def session(self, persona: str) -> Iterator[Any]:
        outer = self

        class Rows:
            def rows(self, statement: str) -> list[tuple[Any, ...]]:
                outer.statements.append(statement)
                for key, answer in outer.answers.items():
                    if key in statement:
                        if isinstance(answer, QueryError):
                            raise answer
                        return answer
                return []

        yield Rows()


PHARMA = {"CURRENT_SECONDARY_ROLES": [("BENCH_CHEMIST", '{"roles":"CLINICAL_UNBLINDED"}')]}


@pytest.mark.parametrize(
    ("answers", "fault", "said"),
    [
        # CURRENT_SECONDARY_ROLES() answers something that is not its JSON object
        ({"CURRENT_SECONDARY_ROLES": [("BENCH_CHEMIST", "CLINICAL_UNBLINDED")]}, "roles",
         "cannot tell which secondary roles are active"),
        ({"CURRENT_SECONDARY_ROLES": [("BENCH_CHEMIST", None)]}, "roles", "cannot tell"),
        # a primary role other than the persona's
        ({"CURRENT_SECONDARY_ROLES": [("PUBLIC", '{"roles":"CLINICAL_UNBLINDED"}')]}, "roles",
         "the primary role is PUBLIC"),
        # more roles than the persona's
        ({"CURRENT_SECONDARY_ROLES": [
            ("BENCH_CHEMIST", '{"roles":"CLINICAL_UNBLINDED,DATA_STEWARD","value":"ALL"}')]},
         "roles", "activated beyond the persona's: DATA_STEWARD"),
        # the role check itself refused
        ({"CURRENT_SECONDARY_ROLES": QueryError("boom", {})}, "session", "cannot be read"),
        # no warehouse for the question: a session fault, not a failed question
        ({**PHARMA, "FROM DISCOVERY": QueryError(
            "No active warehouse selected", {"errorCode": "000606", "sqlState": "57P03"})},
         "warehouse", "no warehouse"),
        # an error without a denial code
        ({**PHARMA, "FROM DISCOVERY": QueryError("internal", {"errorCode": "000603"})},
         "query", "internal"),
    ],
)  # fmt: skip
def test_a_snowflake_session_answer_decides_the_fault(
    answers: dict[str, Any], fault: str, said: str
) -> None:
    model = load_project(POLICIES).model
    probe = model.probes["pharmacologist_sees_cns_subjects"]
    runner = Scripted(answers)
    got = ask_catalog(model, probe, Place("assay_results", "SUBJECT_ID"), runner, Canary("x"))
    assert (got.fault, got.disposition) == (fault, None), got.detail
    assert said in got.detail
    if fault in ("roles", "session"):  # the question is never asked
        assert not any("FROM DISCOVERY" in s for s in runner.statements)


def test_a_denial_of_the_question_after_a_good_session_is_denied() -> None:
    model = load_project(POLICIES).model
    probe = model.probes["pharmacologist_sees_cns_subjects"]
    runner = Scripted(
        {**PHARMA, "FROM DISCOVERY": QueryError("Insufficient privileges", {"errorCode": "003001"})}
    )
    got = ask_catalog(model, probe, Place("assay_results", "SUBJECT_ID"), runner, Canary("x"))
    assert (got.fault, got.disposition) == (None, "denied"), got.detail


@pytest.mark.parametrize("path", ["/rpcleak/errorCode/002003", "/rpcleak/code/PERMISSION_DENIED"])
def test_a_json_rpc_error_that_quotes_the_clear_canary_is_clear(path: str) -> None:
    """No task came back, only a JSON-RPC error with a denial code: when its payload quotes the
    canary's clear value the value was shown, and the answer is ``clear``, never ``denied``.
    Without the canary the same error is still the denial its code says."""
    text = f"The CNS-204 subjects are: {CANARY}"
    with a2a_standin(canary_text=text) as agent, pytest.raises(A2AError) as err:
        send_message(url(agent, path), "q", timeout=5)
    got = classify_error(err.value, Canary(CANARY))
    assert got.disposition == "clear" and "outranks" in got.detail
    assert classify_error(err.value).disposition == "denied"
