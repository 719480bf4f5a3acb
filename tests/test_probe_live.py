"""`accord probe --live`: A2A task classification (one case per task state), the denial-code
table (a test per row), canaries, catalog queries as the persona, the result file and JUnit.

Everything runs against local stand-ins on 127.0.0.1 (tests/a2a_standin.py) and connection
doubles; nothing reaches a network."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlglot
import yaml

from accord.compiler.connect.denials import TABLE_FILE, denial_table, find_denial
from accord.compiler.meaning.probes import Place
from accord.compiler.meaning.semantics import apply_mask
from accord.compiler.model.validate import load_project
from accord.compiler.probe_live.a2a import (
    LEGACY_STATES,
    TASK_STATES,
    A2AError,
    classify_error,
    classify_task,
    send_message,
)
from accord.compiler.probe_live.canary import Canary, canary_for
from accord.compiler.probe_live.catalog import (
    DatabricksRunner,
    QueryError,
    SnowflakeRunner,
    probe_query,
    session_statements,
    snowflake_connect_kwargs,
)
from accord.compiler.probe_live.result import digest
from accord.compiler.probe_live.run import LiveOptions, run_live
from accord.sandbox.standins.databricks import DatabricksEstate, workspace
from accord.sandbox.standins.engine import SqlError
from tests.a2a_standin import a2a_standin, base_url, url
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import SALTS

POLICIES = ROOT / "policies"
CANARY = "SUBJ-CANARY-204"
#: the digest the reference mask shows for the canary under each platform's test salt
SF_DIGEST = hashlib.sha256((CANARY + SALTS["SUBJECT_SALT_SNOWFLAKE"]).encode()).hexdigest()
DBX_DIGEST = hashlib.sha256((CANARY + SALTS["SUBJECT_SALT_DATABRICKS"]).encode()).hexdigest()
SUBJECT = Canary(CANARY, masked=(SF_DIGEST,))


@pytest.fixture(autouse=True)
def salts(monkeypatch) -> None:
    """The salts the masks reference: accord recomputes the canary's digest with them."""
    for var, value in SALTS.items():
        monkeypatch.setenv(var, value)


@pytest.fixture(scope="module")
def agent():
    with a2a_standin(canary_text=f"The CNS-204 subjects are: {CANARY}") as server:
        yield server


def ask(server: Any, path: str, canary: Canary | None = SUBJECT, column: bool = True):
    try:
        return classify_task(send_message(url(server, path), "q", timeout=5), canary, column)
    except A2AError as err:
        return classify_error(err, canary)


# --------------------------------------------------------------------------------------------
# one case per task state: a missing branch is a failing test

#: state as sent -> (disposition, kind)
STATE_CASES: dict[str, tuple[str | None, str]] = {
    "TASK_STATE_COMPLETED": ("clear", "answer"),
    "TASK_STATE_FAILED": (None, "fault"),  # no denial code: not a denial
    "TASK_STATE_REJECTED": (None, "no-answer"),  # a refusal without a code is no policy
    "TASK_STATE_CANCELED": (None, "no-answer"),
    "TASK_STATE_INPUT_REQUIRED": (None, "human"),
    "TASK_STATE_AUTH_REQUIRED": (None, "human"),
    "TASK_STATE_SUBMITTED": (None, "fault"),
    "TASK_STATE_WORKING": (None, "fault"),
    "TASK_STATE_UNSPECIFIED": (None, "fault"),
    # the 0.3 wire spellings mean the same
    "completed": ("clear", "answer"),
    "canceled": (None, "no-answer"),
    "input-required": (None, "human"),
    "auth-required": (None, "human"),
    "rejected": (None, "no-answer"),
    # anything else is a fault, never an answer
    "TASK_STATE_PAUSED": (None, "fault"),
    "COMPLETED": (None, "fault"),
    "": (None, "fault"),
}


def test_every_task_state_has_a_case() -> None:
    assert set(TASK_STATES) <= set(STATE_CASES)
    assert len(TASK_STATES) == 9
    assert set(LEGACY_STATES.values()) <= set(TASK_STATES)


@pytest.mark.parametrize(
    ("state", "expected"), STATE_CASES.items(), ids=lambda s: str(s) or "empty"
)
@pytest.mark.standin
def test_task_state_is_classified(agent, state: str, expected: tuple[str | None, str]) -> None:
    got = ask(agent, f"/task/{state}" if state else "/task/%20")
    if not state:
        assert (got.disposition, got.kind) == expected
        return
    assert (got.disposition, got.kind) == expected, got.detail
    assert got.state == state


@pytest.mark.standin
def test_canceled_is_never_an_empty_success(agent) -> None:
    got = ask(agent, "/task/TASK_STATE_CANCELED/", canary=SUBJECT, column=False)
    assert got.disposition is None and "no answer" in got.detail


# --------------------------------------------------------------------------------------------
# the denial-code table: a test per row


ROWS = sorted(denial_table().values(), key=lambda r: r.platform)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.platform)
@pytest.mark.standin
def test_denial_row(agent, row) -> None:
    """Every code of the row, under every key of the row, in every place a code may ride:
    a completed task's metadata (a polite sentence beside it), a data part, a failed task,
    a JSON-RPC error. A key the row does not list does not count."""
    assert row.keys and row.codes
    for key in row.keys:
        for code in sorted(row.codes):
            for path in (
                f"/polite/{key}/{code}",
                f"/datapart/{key}/{code}",
                f"/failed/{key}/{code}",
                f"/rpcerror/{key}/{code}",
            ):
                got = ask(agent, path)
                assert got.disposition == "denied", (path, got.detail)
                assert got.denial is not None and got.denial.key == key
                assert got.denial.code == code
    other = next(
        k for k in ("errorCode", "sqlState", "reason", "code", "status") if k not in row.keys
    )
    lone = sorted(c for c in row.codes if all(c not in r.codes for r in ROWS if r is not row))
    for code in lone:
        assert find_denial({other: code}, (row.platform,)) is None


def test_the_table_file_has_one_row_per_catalog_platform() -> None:
    doc = json.loads(TABLE_FILE.read_text())
    assert set(doc["platforms"]) == {"snowflake", "databricks"}
    for row in doc["platforms"].values():
        assert set(row["keys"]) <= {"errorCode", "sqlState", "reason", "code"}
        assert row["sources"]


@pytest.mark.standin
def test_a_polite_sentence_without_a_code_is_not_a_denial(agent) -> None:
    got = ask(agent, "/task/TASK_STATE_COMPLETED/I%20am%20sorry,%20I%20cannot%20share%20that.")
    assert got.disposition == "empty"  # neither the clear value nor a mask of it
    assert got.denial is None


# --------------------------------------------------------------------------------------------
# the exchange itself


@pytest.mark.standin
def test_send_message_sets_the_version_header_and_the_1_0_names(agent) -> None:
    agent.requests.clear()
    ask(agent, "/task/TASK_STATE_COMPLETED")
    (req,) = agent.requests
    assert req["headers"]["A2A-Version"] == "1.0"
    body = req["body"]
    assert body["method"] == "SendMessage"
    message = body["params"]["message"]
    assert message["role"] == "ROLE_USER" and message["messageId"]
    assert message["parts"] == [{"text": "q"}]
    assert body["params"]["configuration"]["returnImmediately"] is False


@pytest.mark.standin
def test_without_the_header_a_1_0_agent_assumes_0_3_and_refuses(agent) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}})
    req = urllib.request.Request(
        url(agent, "/task/TASK_STATE_COMPLETED"),
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        doc = json.loads(resp.read())
    assert doc["error"]["code"] == -32009


#: path -> (disposition, kind)
EXCHANGES = {
    "/http/403": ("denied", "denial"),
    "/http/401": (None, "human"),
    "/http/500": (None, "fault"),
    "/redirect": (None, "fault"),  # never followed
    "/nowhere": (None, "fault"),
    "/artifact/" + CANARY: ("clear", "answer"),
    "/message/" + SF_DIGEST: ("masked", "answer"),
    "/message/" + "0" * 64: ("empty", "answer"),  # a digest of something else: not the canary
}


@pytest.mark.parametrize(("path", "expected"), EXCHANGES.items())
@pytest.mark.standin
def test_exchange_outcomes(agent, path: str, expected: tuple[str | None, str]) -> None:
    got = ask(agent, path)
    assert (got.disposition, got.kind) == expected, got.detail


@pytest.mark.standin
def test_a_slow_agent_times_out_as_a_fault(agent) -> None:
    with pytest.raises(A2AError) as err:
        send_message(url(agent, "/sleep/3"), "q", timeout=0.2)
    assert classify_error(err.value).kind == "fault"


# --------------------------------------------------------------------------------------------
# canaries


def test_canary_tells_clear_from_masked_with_the_salt(monkeypatch) -> None:
    model = load_project(POLICIES).model
    monkeypatch.setenv("SUBJECT_SALT_SNOWFLAKE", "pepper")
    canary = canary_for(model, "assay_results", "SUBJECT_ID", CANARY)
    digest_value = apply_mask(model.masks["subject_pseudonym"], CANARY, "pepper")
    assert canary.classify(f"id: {CANARY}") == "clear"
    assert canary.classify(f"id: {digest_value}") == "masked"
    assert canary.classify("id: " + "1" * 64) is None  # a digest of another salt
    notes = canary_for(model, "assay_results", "NOTES", "canary note")
    assert notes.classify("[redacted]") == "masked"
    assert notes.classify("canary note") == "clear"


def test_canary_without_the_salt_never_takes_hex_for_its_digest(monkeypatch) -> None:
    """Without the salt accord cannot recompute the digest: 64 hex digits (a trace id, any
    digest) are no evidence of masking, and the clear value is still clear in any case."""
    monkeypatch.delenv("SUBJECT_SALT_SNOWFLAKE", raising=False)
    model = load_project(POLICIES).model
    canary = canary_for(model, "assay_results", "SUBJECT_ID", CANARY)
    assert canary.masked == () and "SUBJECT_SALT_SNOWFLAKE" in (canary.unknown_mask or "")
    assert canary.classify("id " + "a" * 64) is None
    assert canary.classify(f"trace {SF_DIGEST}") is None  # even the right digest is unprovable
    assert canary.classify(f"{'a' * 64} {CANARY.lower()}") == "clear"


# --------------------------------------------------------------------------------------------
# catalog surfaces


def test_snowflake_session_takes_primary_and_secondary_roles() -> None:
    model = load_project(POLICIES).model
    assert session_statements(model, "clinical_pharmacologist", "snowflake") == [
        "USE ROLE BENCH_CHEMIST",
        "USE SECONDARY ROLES CLINICAL_UNBLINDED",
    ]
    assert session_statements(model, "cro_collaborator", "snowflake") == [
        "USE ROLE CRO_EXTERNAL",
        "USE SECONDARY ROLES NONE",
    ]
    assert session_statements(model, "cro_collaborator", "databricks") == []


def test_probe_query_is_sql_of_the_platform() -> None:
    model = load_project(POLICIES).model
    probe = model.probes["cro_cannot_unmask_cns_subjects"]
    sql = probe_query(model, probe, Place("assay_results", "SUBJECT_ID"))
    tree = sqlglot.parse_one(sql, read="snowflake")
    assert tree.find(sqlglot.exp.Table).sql("snowflake") == "DISCOVERY.ASSAYS.RESULTS"
    assert tree.args["where"].sql("snowflake") == "WHERE PROGRAMME_CODE = 'CNS-204'"
    lake = probe_query(model, probe, Place("variant_calls", "subject_id"))
    assert "omics.variants.calls" in lake and "programme_code = 'CNS-204'" in lake


class FakeCursor:
    def __init__(self, conn: FakeConnection) -> None:
        self.conn = conn

    def execute(self, stmt: str) -> None:
        self.conn.executed.append(stmt)
        if self.conn.fail is not None and not stmt.startswith("USE"):
            raise self.conn.fail

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.conn.rows if not self.conn.executed[-1].startswith("USE") else []


def sf_error(msg: str, errno: int, sqlstate: str) -> Exception:
    """The connector's own ProgrammingError (errno, sqlstate)."""
    from snowflake.connector.errors import ProgrammingError

    return ProgrammingError(msg=msg, errno=errno, sqlstate=sqlstate)


class FakeConnection:
    def __init__(self, rows: list[tuple[Any, ...]], fail: Exception | None = None) -> None:
        self.rows = rows
        self.fail = fail
        self.executed: list[str] = []
        self.closed = False

    def cursor(self) -> FakeCursor:
        return FakeCursor(self)

    def execute_string(self, text: str) -> list[FakeCursor]:
        """The connector's execute_string: one cursor per statement (one here)."""
        cursor = self.cursor()
        cursor.execute(text)
        return [cursor]

    def close(self) -> None:
        self.closed = True


def test_snowflake_runner_denial_codes_come_from_the_connector_error() -> None:
    conn = FakeConnection(
        [], sf_error("002003 (42S02): does not exist or not authorized", 2003, "42S02")
    )
    runner = SnowflakeRunner(lambda: conn)
    with pytest.raises(QueryError) as err:
        runner.run("cro_collaborator", ["USE ROLE CRO_EXTERNAL", "SELECT 1"])
    assert str(err.value) == str(conn.fail).strip().splitlines()[0]  # what the platform said
    assert err.value.codes == {"errorCode": "002003", "sqlState": "42S02"}
    assert find_denial(err.value.codes).code == "002003"
    assert conn.closed


def test_a_platform_that_cannot_be_reached_is_no_answer() -> None:
    def refuse() -> Any:
        raise TimeoutError("login timed out")

    with pytest.raises(QueryError) as err:
        SnowflakeRunner(refuse).run("cro_collaborator", ["SELECT 1"])
    assert "cannot connect to Snowflake: login timed out" in str(err.value)
    assert find_denial(err.value.codes) is None  # a fault, never a denial


def test_snowflake_connections_have_timeouts() -> None:
    kwargs = snowflake_connect_kwargs(12, "accord_probe")
    assert kwargs["connection_name"] == "accord_probe"
    assert kwargs["login_timeout"] == 12
    assert kwargs["session_parameters"] == {"STATEMENT_TIMEOUT_IN_SECONDS": 12}
    assert {"query_timeout", "network_timeout"} & set(kwargs)


class _Status:
    def __init__(self, state: str, message: str | None = None) -> None:
        from databricks.sdk.service.sql import StatementState

        self.state = StatementState(state)
        self.error = type("E", (), {"message": message, "error_code": None})() if message else None


class FakeStatements:
    def __init__(self, response: Any) -> None:
        self.response = response
        self.calls: list[dict[str, Any]] = []

    def execute_statement(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.response


def test_databricks_runner_reads_failed_statements() -> None:
    failed = type(
        "R",
        (),
        {
            "status": _Status(
                "FAILED", "[INSUFFICIENT_PERMISSIONS] Insufficient privileges. SQLSTATE: 42501"
            ),
            "result": None,
        },
    )()
    statements = FakeStatements(failed)
    client = type("C", (), {"statement_execution": statements})()
    runner = DatabricksRunner(lambda persona: client, "wh-1", timeout=30)
    with pytest.raises(QueryError) as err:
        runner.run("cro_collaborator", ["SELECT 1"])
    assert str(err.value) == "[INSUFFICIENT_PERMISSIONS] Insufficient privileges. SQLSTATE: 42501"
    assert err.value.codes["sqlState"] == "42501"
    assert err.value.codes["reason"] == "INSUFFICIENT_PERMISSIONS"
    assert statements.calls[0]["warehouse_id"] == "wh-1"
    assert statements.calls[0]["wait_timeout"] == "30s"


@pytest.mark.standin
def test_databricks_denial_through_the_real_sdk(tmp_path: Path, monkeypatch) -> None:
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.core import Config

    def refuse(persona: str, statement: str) -> list[tuple[Any, ...]]:
        raise SqlError(
            "BAD_REQUEST",
            "42501",
            "[INSUFFICIENT_PERMISSIONS] User does not have SELECT on Table "
            "'omics.variants.calls'. SQLSTATE: 42501",
        )

    lake = DatabricksEstate()
    lake.tokens, lake.answer = {"tok-cro": "cro_collaborator"}, refuse
    with workspace(lake) as host:
        for var in ("DATABRICKS_HOST", "DATABRICKS_TOKEN", "DATABRICKS_CONFIG_PROFILE"):
            monkeypatch.delenv(var, raising=False)
        cfg = tmp_path / "databrickscfg"
        cfg.write_text(f"[probe-cro]\nhost = {host}\ntoken = tok-cro\n")
        monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(cfg))
        runner = DatabricksRunner(
            lambda persona: WorkspaceClient(
                config=Config(profile="probe-cro", http_timeout_seconds=5)
            ),
            "wh-1",
            timeout=10,
        )
        with pytest.raises(QueryError) as err:
            runner.run("cro_collaborator", ["SELECT subject_id FROM omics.variants.calls"])
    assert err.value.codes["sqlState"] == "42501"
    assert err.value.codes["reason"] == "INSUFFICIENT_PERMISSIONS"
    denial = find_denial(err.value.codes)
    assert denial is not None and denial.platform == "databricks"


class TableRunner:
    """Rows per (persona, dataset table[, text the query holds]): what a platform's policies
    would show; the most specific key wins. The session checks are answered as a platform
    would for the session the statements set up: ``CURRENT_ROLE()`` and
    ``CURRENT_SECONDARY_ROLES()`` from the USE statements seen (through ``activate``, which
    a test may narrow), ``is_account_group_member`` from the persona's groups in
    policies/."""

    def __init__(self, answers: dict[tuple[str, ...], list[tuple[Any, ...]] | Exception]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, list[str]]] = []
        self.model = load_project(POLICIES).model

    @contextmanager
    def session(self, persona: str) -> Iterator[Any]:
        statements: list[str] = []
        self.seen.append((persona, statements))
        runner = self

        class Rows:
            def rows(self, statement: str) -> list[tuple[Any, ...]]:
                statements.append(statement)
                return runner.answer(persona, statements)

        yield Rows()

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with self.session(persona) as session:
            for statement in statements:
                rows = session.rows(statement)
        return rows

    def answer(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        query = statements[-1]
        if query.startswith("USE "):
            return []
        if "CURRENT_SECONDARY_ROLES()" in query:
            primary = next(s[9:] for s in statements if s.startswith("USE ROLE "))
            asked = next(s[20:] for s in statements if s.startswith("USE SECONDARY ROLES "))
            roles = [] if asked == "NONE" else [r.strip() for r in asked.split(",")]
            doc = {"roles": ",".join(roles), "value": ",".join(roles)}
            return [(primary, json.dumps(doc))]
        if "is_account_group_member" in query:
            mine = {self.model.principals[p].databricks for p in self.model.personas[persona]}
            asked = re.findall(r"is_account_group_member\('([^']*)'\)", query)
            return [tuple(g in mine for g in asked)]
        for who, table, *more in sorted(self.answers, key=len, reverse=True):
            if who == persona and table in query and all(m in query for m in more):
                rows = self.answers[(who, table, *more)]
                if isinstance(rows, Exception):
                    raise rows
                return rows
        return []


# --------------------------------------------------------------------------------------------
# end to end: the reference probes asked live, the result file, JUnit


def live_estate(tmp_path: Path, agent: Any, paths: dict[str, str]) -> Path:
    """policies/ with canaries on the probes and A2A endpoints on the surfaces in ``paths``."""
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    probes = yaml.safe_load((root / "probes.yaml").read_text())
    probes["probes"]["cro_cannot_unmask_cns_subjects"]["canary"] = CANARY
    probes["probes"]["pharmacologist_sees_cns_subjects"]["canary"] = CANARY
    probes["probes"]["bench_chemist_reads_redacted_oncology_notes"]["canary"] = "canary note"
    probes["probes"]["cro_sees_no_oncology_variants"]["canary"] = "ONC-101"
    (root / "probes.yaml").write_text(yaml.safe_dump(probes, sort_keys=False))
    surfaces = yaml.safe_load((root / "surfaces.yaml").read_text())
    for name, path in paths.items():
        surfaces["surfaces"][name]["a2a"] = {"url": url(agent, path), "timeout_seconds": 5}
    (root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    personas = yaml.safe_load((root / "principals.yaml").read_text())["personas"]
    origins = [base_url(agent)]
    config = {
        "a2a_tokens": {
            p: {"token": f"env:A2A_TOKEN_{p.upper()}", "origins": origins} for p in personas
        }
    }
    (tmp_path / "probe.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture
def tokens(monkeypatch) -> None:
    """A bearer token per persona, as the probe config written by live_estate names them."""
    for persona in load_project(POLICIES).model.personas:
        monkeypatch.setenv(f"A2A_TOKEN_{persona.upper()}", f"tok-{persona}")


def reference_runners() -> dict[str, TableRunner]:
    """What the compiled reference policies show each persona (as accord verify computes)."""
    sf = TableRunner(
        {
            ("cro_collaborator", "DISCOVERY.ASSAYS.RESULTS"): [(SF_DIGEST,)],
            ("clinical_pharmacologist", "DISCOVERY.ASSAYS.RESULTS"): [(CANARY,)],
            ("bench_chemist", "DISCOVERY.ASSAYS.RESULTS"): [("[redacted]",)],
        }
    )
    dbx = TableRunner(
        {
            ("cro_collaborator", "discovery_lake.assays.results"): [(DBX_DIGEST,)],
            ("clinical_pharmacologist", "discovery_lake.assays.results"): [(CANARY,)],
            ("bench_chemist", "discovery_lake.assays.results"): [("[redacted]",)],
            # the CRO's positive control: the CNS-204 variant calls she is granted
            ("cro_collaborator", "omics.variants.calls", "'CNS-204'"): [(1,)],
        }
    )
    return {"snowflake": sf, "databricks": dbx}


@pytest.mark.standin
def test_reference_probes_pass_live_and_agree_with_the_model(tmp_path: Path, agent) -> None:
    project = load_project(live_estate(tmp_path, agent, {}))
    runners = reference_runners()
    run = run_live(project, LiveOptions(runners=runners, config=str(tmp_path / "probe.yaml")))
    assert run.passed, run.text()
    assert {o.depth for o in run.outcomes} == {"live"}
    assert len(run.outcomes) == 7
    # the pharmacologist's session: primary and secondary role
    sessions = [s for p, s in runners["snowflake"].seen if p == "clinical_pharmacologist"]
    assert sessions[0][:2] == ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES CLINICAL_UNBLINDED"]


@pytest.mark.standin
def test_a_live_leak_fails_with_the_owner_and_a_disagreement(tmp_path: Path, agent, tokens) -> None:
    root = live_estate(tmp_path, agent, {"warehouse_agent": "/task/TASK_STATE_COMPLETED"})
    project = load_project(root)
    runners = reference_runners()
    agent.requests.clear()
    run = run_live(project, LiveOptions(runners=runners, config=str(tmp_path / "probe.yaml")))
    # each question asked with the persona's own credentials
    asked = {
        (
            r["body"]["params"]["message"]["metadata"]["accord"]["persona"],
            r["headers"]["Authorization"],
        )
        for r in agent.requests
    }
    assert ("cro_collaborator", "Bearer tok-cro_collaborator") in asked
    assert all(auth == f"Bearer tok-{who}" for who, auth in asked)
    assert not run.passed
    bad = {(o.probe, o.surface): o.actual for o in run.failed}
    # the agent answers the CRO (and the chemist) with the clear canary
    assert bad[("cro_cannot_unmask_cns_subjects", "warehouse_agent")] == "clear"
    (d,) = [d for d in run.disagreements if d.probe == "cro_cannot_unmask_cns_subjects"]
    assert set(d.answers) == {"clear", "masked"} and d.owner == "data-governance"
    # the result file: fingerprints, outcomes and a digest over all of it
    out = tmp_path / "result.json"
    run.write(out)
    doc = json.loads(out.read_text())
    assert doc["model_fingerprint"] == project.fingerprint
    assert len(doc["compiled_fingerprint"]) == 64
    assert doc["sha256"] == digest(doc)
    assert doc["passed"] is False
    body = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert doc["sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    doc["outcomes"][0]["actual"] = "tampered"  # a changed result no longer matches its digest
    assert digest(doc) != doc["sha256"]
    # JUnit: one test case per probe and surface, the owner in each
    suite = ET.fromstring(run.junit()).find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(run.outcomes) + len(run.disagreements)
    for case in cases:
        assert "(owner " in case.get("name")
    failing = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("failures")) == len(failing) > 0
    owners = {p.get("value") for c in cases for p in c.iter("property") if p.get("name") == "owner"}
    assert owners == {"data-governance", "clinical-data-office"}


@pytest.mark.standin
def test_a_catalog_denial_code_is_denied_and_an_empty_answer_is_a_row_filter(
    tmp_path: Path, agent
) -> None:
    project = load_project(live_estate(tmp_path, agent, {}))
    runners = reference_runners()
    runners["databricks"].answers[("cro_collaborator", "omics.variants.calls")] = QueryError(
        "[INSUFFICIENT_PERMISSIONS]", {"sqlState": "42501"}
    )
    config = str(tmp_path / "probe.yaml")
    run = run_live(project, LiveOptions(runners=runners, config=config))
    got = {(o.probe, o.surface): (o.actual, o.detail) for o in run.outcomes}
    actual, detail = got[("cro_sees_no_oncology_variants", "lakehouse_agent")]
    assert actual == "denied" and "42501" in detail
    # the ONC-101 rows withheld from the CRO by the row filter: no rows, which is `denied`
    del runners["databricks"].answers[("cro_collaborator", "omics.variants.calls")]
    run = run_live(project, LiveOptions(runners=runners, config=config))
    got = {(o.probe, o.surface): (o.actual, o.detail) for o in run.outcomes}
    actual, detail = got[("cro_sees_no_oncology_variants", "lakehouse_agent")]
    assert actual == "denied" and "a row filter answers with no rows" in detail
    assert run.passed, run.text()


@pytest.mark.standin
def test_cli_live_on_a2a_surfaces_writes_junit_and_exits_1_on_a_mismatch(
    tmp_path: Path, agent, tokens
) -> None:
    root = live_estate(
        tmp_path,
        agent,
        {
            "warehouse_agent": "/polite/errorCode/002003",
            "lakehouse_agent": "/task/TASK_STATE_INPUT_REQUIRED",
        },
    )
    out = tmp_path / "probe-result.json"

    def probe_live(*extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli(
            [
                "probe",
                "--live",
                str(root),
                "--platform",
                "a2a",
                "--format",
                "junit",
                "--out",
                str(out),
                *extra,
            ],
            cwd=tmp_path,
        )

    run = probe_live("--config", str(tmp_path / "none.yaml"))
    assert run.returncode == 2 and "does not exist" in run.stderr  # an absent config named
    run = probe_live("--config", str(tmp_path / "probe.yaml"))
    assert run.returncode == 1, run.stderr
    suite = ET.fromstring(run.stdout).find("testsuite")
    names = {c.get("name") for c in suite.findall("testcase")}
    assert "warehouse_agent (owner data-governance)" in names
    doc = json.loads(out.read_text())
    answers = {(o["probe"], o["surface"]): o["actual"] for o in doc["outcomes"]}
    # the polite sentence carries a Snowflake denial code: denied, whatever it says
    assert answers[("cro_cannot_unmask_cns_subjects", "warehouse_agent")] == "denied"
    # input required is not an answer
    assert answers[("cro_cannot_unmask_cns_subjects", "lakehouse_agent")] is None


# --------------------------------------------------------------------------------------------
# the three depths agree on the reference estate


@pytest.mark.standin
def test_three_depths_agree_on_the_reference_estate(tmp_path: Path, monkeypatch) -> None:
    """Model (ACC404), compiled SQL on DuckDB (verify) and the live depth against the platform
    stand-ins, the compiled SQL deployed on them and evaluated by their own engine, give every
    probe the same answer, and every answer is the expected one. Databricks is asked through
    the real databricks-sdk client, one profile per persona, against the workspace stand-in."""
    from accord.compiler.meaning.probes import evaluate
    from accord.compiler.verify.run import verify
    from accord.sandbox.standins.probe_runner import StandinRunner
    from tests.live_helpers import SALTS, ProbeRunner, deployed, persona_groups

    for var, value in SALTS.items():
        monkeypatch.setenv(var, value)
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    doc = yaml.safe_load((root / "probes.yaml").read_text())
    for name, p in doc["probes"].items():
        # a canary row per probe: the stand-ins are seeded with it (tests/live_helpers.deployed)
        ((_, value),) = p["where"].items()
        doc["probes"][name]["canary"] = f"CANARY-{name}" if p.get("column") else value
    (root / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    project = load_project(root)

    model = {(o.probe, o.surface): o.actual for o in evaluate(project.model)}
    compiled = {(o.probe, o.surface): o.actual for o in verify(project).probes}
    groups = persona_groups(project)
    runners = {"snowflake": ProbeRunner(StandinRunner(deployed(project, "snowflake")))}
    lakehouse = StandinRunner(deployed(project, "databricks"), groups)
    personas = sorted(project.model.personas)
    tokens = {f"tok-{p}": p for p in personas}
    lake = DatabricksEstate()
    lake.tokens, lake.answer = tokens, lambda who, sql: lakehouse.run(who, [sql])
    with workspace(lake) as host:
        cfg = tmp_path / "databrickscfg"
        cfg.write_text(
            "".join(f"[probe-{p}]\nhost = {host}\ntoken = tok-{p}\n\n" for p in personas)
        )
        for var in ("DATABRICKS_HOST", "DATABRICKS_TOKEN", "DATABRICKS_CONFIG_PROFILE"):
            monkeypatch.delenv(var, raising=False)
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
        live_run = run_live(project, LiveOptions(runners=runners, config=str(config)))
        asked = {(r["persona"], r["body"]["warehouse_id"]) for r in lake.statement_requests}
    assert ("cro_collaborator", "wh-probe") in asked
    live = {(o.probe, o.surface): o.actual for o in live_run.outcomes}
    expected = {(n, s): d for n, p in project.model.probes.items() for s, d in p.expect.items()}
    assert model == compiled == live == expected, live_run.text()
    assert {o.depth for o in live_run.outcomes} == {"live"}
    # the pharmacologist was asked with her secondary role in the session
    assert any(
        s[:2] == ["USE ROLE BENCH_CHEMIST", "USE SECONDARY ROLES CLINICAL_UNBLINDED"]
        for _, s in runners["snowflake"].seen
    )


@pytest.mark.standin
def test_a_caller_agent_is_never_asked_without_the_personas_credentials(
    tmp_path: Path, agent, monkeypatch
) -> None:
    root = live_estate(tmp_path, agent, {"warehouse_agent": "/task/TASK_STATE_COMPLETED"})
    (tmp_path / "probe.yaml").write_text("timeout_seconds: 5\n")
    agent.requests.clear()
    run = run_live(
        load_project(root),
        LiveOptions(
            runners=reference_runners(), config=str(tmp_path / "probe.yaml"), platform="a2a"
        ),
    )
    assert agent.requests == []
    assert run.outcomes and all(o.actual is None for o in run.outcomes)
    assert all("cannot be asked as the persona" in o.detail for o in run.outcomes)
    assert not run.passed


def test_a_run_that_asks_nothing_is_not_a_pass(tmp_path: Path) -> None:
    run = run_cli(["probe", "--live", str(POLICIES), "--platform", "a2a"], cwd=tmp_path)
    assert run.returncode == 1
    assert "no probe was answered" in run.stdout


UNSALTED = Canary(CANARY, unknown_mask="mask subject_pseudonym: the salt is not available here")

ROW_CASES = [
    # (where, column, rows, canary, expected)
    (None, None, [("ONC-101",), ("CNS-204",), ("IMM-310",)], None, "clear"),
    (None, None, [("CNS-204",)], None, "filtered"),
    (None, None, [], None, "empty"),
    ({"programme": "CNS-204"}, None, [(1,)], None, "clear"),
    ({"programme": "CNS-204"}, "subject_id", [(CANARY,)], SUBJECT, "clear"),
    ({"programme": "CNS-204"}, "subject_id", [(SF_DIGEST,)], SUBJECT, "masked"),
    ({"programme": "CNS-204"}, "subject_id", [("f" * 64,)], SUBJECT, "empty"),  # not its digest
    # the salt not available: no hex string is the canary's digest, the clear value still is
    ({"programme": "CNS-204"}, "subject_id", [("f" * 64,)], UNSALTED, None),
    ({"programme": "CNS-204"}, "subject_id", [("f" * 64,), (CANARY.lower(),)], UNSALTED, "clear"),
    ({"programme": "CNS-204"}, "subject_id", [("someone-else",)], SUBJECT, "empty"),
    ({"programme": "CNS-204"}, "subject_id", [(CANARY,)], None, None),  # no canary: no answer
]


@pytest.mark.parametrize(("where", "column", "rows", "canary", "expected"), ROW_CASES)
def test_catalog_rows_are_classified(where, column, rows, canary, expected) -> None:
    from accord.compiler.model.schema import Probe
    from accord.compiler.probe_live.catalog import classify_rows

    model = load_project(POLICIES).model
    probe = Probe(
        owner="o",
        persona="cro_collaborator",
        dataset="variant_calls",
        where=where,
        column=column,
        expect={},
    )
    got, why = classify_rows(model, probe, Place("variant_calls", column), rows, canary)
    assert got == expected, why
