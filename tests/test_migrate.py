"""The ledger, `accord migrate status|apply|rollback`, rule ACC601, and the executors: a
connection double for the Snowflake connector, and a local HTTP server speaking the statement
execution REST API to the real Databricks SDK. No network."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from snowflake.connector.errors import ProgrammingError

from accord.compiler.core import secrets
from accord.compiler.history.ledger import append_record, half_applied_groups, read_ledger
from accord.compiler.lint.checks import History
from accord.compiler.lint.engine import lint_project
from accord.compiler.model.validate import load_project
from accord.compiler.plan.apply import (
    DatabricksExecutor,
    SnowflakeExecutor,
    apply,
    rollback,
    split_statements,
)
from accord.sandbox.standins.http import Handler, serve, silent_host
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.plan_helpers import reference_plan

SECRETS = {"SUBJECT_SALT_SNOWFLAKE": "sf-7c1d-secret", "SUBJECT_SALT_DATABRICKS": "dbx-90aa-secret"}
CUTOVER_SF = "05_snowflake_cutover_subject"
CUTOVER_DBX = "06_databricks_cutover_subject"


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference roll-out, planned once for this file (planning is deterministic)."""
    return reference_plan(tmp_path_factory.mktemp("planned") / "migrations").parent


@pytest.fixture
def plans(planned: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the reference roll-out (each test writes its own ledger)."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    shutil.copytree(planned, tmp_path / "migrations")
    return tmp_path / "migrations"


def record(plans: Path, stage: str, platform: str, status: str = "applied") -> None:
    data = json.loads(next(plans.glob("0001_*/plan.json")).read_text())
    entry = next(s for s in data["stages"] if s["id"] == stage)
    append_record(
        plans / "ledger.jsonl",
        {
            "plan": data["id"],
            "stage": stage,
            "platform": platform,
            "status": status,
            "at": "2026-11-03T10:00:00+00:00",
            "sha256": entry["sha256"],
        },
    )


def apply_all_but_the_lakehouse_cutover(plans: Path) -> None:
    for stage in ("01_snowflake_prepare", "03_snowflake_apply", CUTOVER_SF):
        record(plans, stage, "snowflake")
    for stage in ("02_databricks_prepare", "04_databricks_apply"):
        record(plans, stage, "databricks")


# --------------------------------------------------------------------------------------------
# status and ACC601


def test_status_of_a_fresh_plan(plans: Path) -> None:
    code, out, _ = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 0
    assert out.count("pending") == 8
    assert "05_snowflake_cutover_subject" in out and "[cutover group subject]" in out


def test_status_flags_a_half_applied_group(plans: Path) -> None:
    apply_all_but_the_lakehouse_cutover(plans)
    code, out, err = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 1
    assert out.count(" applied  2026-11-03T10:00:00+00:00") == 5
    assert f"{plans}/ledger.jsonl:3:1: cutover group 'subject'" in err
    assert "applied on snowflake but not on databricks" in err
    record(plans, CUTOVER_DBX, "databricks")
    assert run_cli(["migrate", "status", "--plans", str(plans)])[0] == 0


def test_failed_and_rolled_back_stages(plans: Path) -> None:
    record(plans, "01_snowflake_prepare", "snowflake", "failed")
    record(plans, "02_databricks_prepare", "databricks", "applied")
    record(plans, "02_databricks_prepare", "databricks", "rolled_back")
    code, out, _ = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert " failed " in lines["01_snowflake_prepare"]
    assert " pending" in lines["02_databricks_prepare"]


def test_a_broken_ledger_line_is_located(plans: Path) -> None:
    (plans / "ledger.jsonl").write_text('{"plan": "x"}\nnot json\n')
    code, _, err = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 2
    assert f"{plans}/ledger.jsonl:1:1: a ledger record needs the string fields" in err


def test_acc601_reports_a_half_applied_group(plans: Path) -> None:
    project = load_project(ROOT / "policies")
    ledger = plans / "ledger.jsonl"
    assert not [f for f in lint_project(project) if f.rule == "ACC601"]
    assert not [f for f in lint_project(project, History(plans=str(plans))) if f.rule == "ACC601"]
    apply_all_but_the_lakehouse_cutover(plans)
    (finding,) = [
        f
        for f in lint_project(project, History(plans=str(plans), ledger=str(ledger)))
        if f.rule == "ACC601"
    ]
    assert str(finding.location) == f"{ledger}:3:1"
    assert finding.name == "half-applied-migration" and finding.severity == "error"
    assert "'subject'" in finding.message and "not on databricks" in finding.message
    assert "--platform databricks" in finding.fix
    # --ledger alone implies the plans beside it
    assert [f.rule for f in lint_project(project, History(ledger=str(ledger)))].count("ACC601") == 1
    (half,) = half_applied_groups(plans, ledger)
    assert (half.group, half.applied, half.missing) == ("subject", ("snowflake",), ("databricks",))


def test_acc601_docstring_explains_the_rule() -> None:
    from accord.compiler.lint.rules.migrations import half_applied_migration

    doc = half_applied_migration.__doc__ or ""
    # the sections of every rule page (compiler.lint.docs.SECTIONS)
    for part in ("## What it does", "## Why is this bad?", "## Example", "## How to fix"):
        assert part in doc


# --------------------------------------------------------------------------------------------
# Snowflake: a connection double


class FakeCursor:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class FakeSnowflake:
    """What the connector's ``execute_string`` does: the statements in order, one cursor each,
    the first failure raised (later statements do not run)."""

    def __init__(self, fail_on: str | None = None, check: bool = True) -> None:
        self.fail_on = fail_on
        self.check = check
        self.executed: list[str] = []

    def execute_string(self, text: str) -> list[FakeCursor]:
        cursors = []
        for statement in split_statements(text, "snowflake"):
            if self.fail_on and self.fail_on in statement:
                raise ProgrammingError(
                    msg="002003 (42S02): Object does not exist or not authorized.",
                    errno=2003,
                    sqlstate="42S02",
                )
            self.executed.append(statement)
            rows = [(self.check, "digest")] if statement.startswith("SELECT") else []
            cursors.append(FakeCursor(rows))
        return cursors


def _echo(lines: list[str]) -> Any:
    return lines.append


def test_apply_snowflake_in_order_with_salts_in_memory_only(plans: Path) -> None:
    fake = FakeSnowflake()
    lines: list[str] = []
    outcome = apply(
        str(plans),
        plans / "ledger.jsonl",
        "snowflake",
        lambda: SnowflakeExecutor(fake),
        _echo(lines),
    )
    assert not outcome.error
    assert [s for s, _ in outcome.done] == [
        "01_snowflake_prepare",
        "03_snowflake_apply",
        CUTOVER_SF,
        "07_snowflake_retire",
    ]
    executed = "\n".join(fake.executed)
    assert "  check 1: digest" in lines  # the canary digest, for comparison across platforms
    assert "AS $$ 'sf-7c1d-secret' $$" in executed  # filled, in memory, for execution
    assert "accord_salt" not in executed
    assert (
        fake.executed[-1] == "DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER"
    )
    body = next(i for i, s in enumerate(fake.executed) if s.startswith("ALTER MASKING POLICY"))
    assert body < len(fake.executed) - 1
    assert [r.status for r in read_ledger(plans / "ledger.jsonl")] == ["applied"] * 4
    for path in plans.rglob("*"):
        for value in SECRETS.values():
            assert not path.is_file() or value.encode() not in path.read_bytes(), path
    # a second run has nothing left to do on this platform
    again = apply(
        str(plans),
        plans / "ledger.jsonl",
        "snowflake",
        lambda: SnowflakeExecutor(fake),
        _echo(lines),
    )
    assert again.done == [] and not again.error
    # the group is half applied until the lakehouse catches up
    assert [h.group for h in half_applied_groups(plans, plans / "ledger.jsonl")] == ["subject"]


def test_apply_stops_at_the_first_failure(plans: Path) -> None:
    fake = FakeSnowflake(fail_on="ALTER TABLE DISCOVERY.ASSAYS.RESULTS DROP ROW ACCESS POLICY")
    outcome = apply(
        str(plans), plans / "ledger.jsonl", "snowflake", lambda: SnowflakeExecutor(fake), _echo([])
    )
    assert outcome.done == [("01_snowflake_prepare", "applied"), ("03_snowflake_apply", "failed")]
    assert "03_snowflake_apply failed: denied: the deploying role needs" in outcome.error
    assert "002003 (42S02)" in outcome.error
    assert not any("MASKING POLICY" in s for s in fake.executed)
    assert [r.status for r in read_ledger(plans / "ledger.jsonl")] == ["applied", "failed"]


def test_a_failed_check_fails_the_stage(plans: Path) -> None:
    fake = FakeSnowflake(check=False)
    outcome = apply(
        str(plans), plans / "ledger.jsonl", "snowflake", lambda: SnowflakeExecutor(fake), _echo([])
    )
    assert outcome.done == [("01_snowflake_prepare", "failed")]
    assert "01_snowflake_prepare.verify.sql are not ok" in outcome.error


def test_apply_refuses_a_changed_stage_file(plans: Path) -> None:
    stage = next(plans.glob("0001_*/03_snowflake_apply.sql"))
    stage.write_text(stage.read_text().replace("ADD ROW ACCESS POLICY", "ADD ROW ACCESS POLICY "))
    fake = FakeSnowflake()
    code, _, err = run_cli_with(
        fake, ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans)]
    )
    assert code == 1
    assert "03_snowflake_apply.sql" in err and "sha256 differs" in err
    assert fake.executed == []
    assert not (plans / "ledger.jsonl").exists()


def run_cli_with(fake: FakeSnowflake, argv: list[str]) -> tuple[int, str, str]:
    import snowflake.connector

    real = snowflake.connector.connect
    snowflake.connector.connect = lambda **params: fake  # type: ignore[assignment]
    try:
        return run_cli(argv)
    finally:
        snowflake.connector.connect = real


@pytest.mark.standin
def test_cli_apply_snowflake_through_the_connector(
    plans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SNOWFLAKE_ACCOUNT", "acme-test")
    monkeypatch.setenv("SNOWFLAKE_USER", "ci")
    fake = FakeSnowflake()
    # the account's address answers on loopback (accord checks it accepts a connection before
    # the connector logs in; no network in tests)
    with silent_host() as port:
        monkeypatch.setenv("SNOWFLAKE_HOST", "127.0.0.1")
        monkeypatch.setenv("SNOWFLAKE_PORT", str(port))
        code, out, err = run_cli_with(
            fake, ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans)]
        )
    assert code == 0, err
    assert "05_snowflake_cutover_subject: applied" in out
    code, _, err = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 1 and "cutover group 'subject'" in err


def test_cli_apply_needs_connection_settings(plans: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SNOWFLAKE_ACCOUNT", raising=False)
    code, _, err = run_cli(["migrate", "apply", "--platform", "snowflake", "--plans", str(plans)])
    assert code == 2 and "SNOWFLAKE_ACCOUNT" in err


def test_missing_salt_stops_before_anything_runs(
    plans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUBJECT_SALT_SNOWFLAKE")
    fake = FakeSnowflake()
    with pytest.raises(Exception, match="SUBJECT_SALT_SNOWFLAKE is not set"):
        apply(
            str(plans),
            plans / "ledger.jsonl",
            "snowflake",
            lambda: SnowflakeExecutor(fake),
            _echo([]),
        )
    assert fake.executed == []


def test_dry_run_prints_statements_with_placeholders(plans: Path) -> None:
    code, out, _ = run_cli(
        ["migrate", "apply", "--platform", "databricks", "--plans", str(plans), "--dry-run"]
    )
    assert code == 0
    assert "{{ accord_salt('env:SUBJECT_SALT_DATABRICKS') }}" in out
    assert "dbx-90aa-secret" not in out
    assert out.index("02_databricks_prepare.sql") < out.index("08_databricks_retire.sql")
    assert not (plans / "ledger.jsonl").exists()


def test_rollback_undoes_the_last_applied_stage(plans: Path) -> None:
    fake = FakeSnowflake()
    apply(
        str(plans), plans / "ledger.jsonl", "snowflake", lambda: SnowflakeExecutor(fake), _echo([])
    )
    fake.executed.clear()
    outcome = rollback(
        str(plans), plans / "ledger.jsonl", "snowflake", lambda: SnowflakeExecutor(fake), _echo([])
    )
    assert outcome.done == [("07_snowflake_retire", "rolled_back")]
    assert fake.executed[0].startswith(
        "CREATE OR ALTER ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER"
    )
    code, out, _ = run_cli(["migrate", "status", "--plans", str(plans)])
    assert "07_snowflake_retire" in out and out.count("pending") == 5
    assert code == 1  # the cutover stays applied on the warehouse only


# --------------------------------------------------------------------------------------------
# Databricks: the real SDK against a local statement-execution server


class Warehouse(Handler):
    """POST /api/2.0/sql/statements/ and GET /api/2.0/sql/statements/{id}, as the REST API
    answers them: failures come back with HTTP 200 and status.state FAILED."""

    statements: ClassVar[list[dict[str, Any]]] = []
    fail_on: ClassVar[str | None] = None
    #: GET /api/2.1/unity-catalog/tables/{full_name}: TableInfo as the REST API answers it
    #: (row_filter {function_name, input_column_names}; columns[].mask {function_name,
    #: using_column_names}: docs.databricks.com/api/workspace/tables/get)
    tables: ClassVar[dict[str, dict[str, Any]]] = {}
    #: GET /api/2.1/unity-catalog/policies/{type}/{name}: the ABAC policies on a securable
    policies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.body()
        self.statements.append(body)
        sid = f"s-{len(self.statements)}"
        if self.fail_on and self.fail_on in body["statement"]:
            self.send_json(
                200,
                {
                    "statement_id": sid,
                    "status": {
                        "state": "FAILED",
                        "error": {
                            "error_code": "BAD_REQUEST",
                            "message": "[INSUFFICIENT_PERMISSIONS] Insufficient privileges. SQLSTATE: 42501",
                        },
                    },
                },
            )
        elif body["statement"].startswith("SELECT"):
            # a long-running query: answered on the first poll
            self.send_json(200, {"statement_id": sid, "status": {"state": "PENDING"}})
        else:
            self.send_json(200, {"statement_id": sid, "status": {"state": "SUCCEEDED"}})

    def do_GET(self) -> None:
        if self.path.startswith("/api/2.1/unity-catalog/entity-tag-assignments/"):
            # ListEntityTagAssignments: accord's plan unsets every column tag
            self.send_json(200, {"tag_assignments": []})
        elif self.path.startswith("/api/2.1/unity-catalog/policies/"):
            # ListPolicies: {"policies": [PolicyInfo...]}; accord's plan removes every one
            self.send_json(200, {"policies": list(self.policies)})
        elif self.path.startswith("/api/2.1/unity-catalog/tables/"):
            name = self.path.split("?")[0].rsplit("/", 1)[1]
            if name in self.tables:
                self.send_json(200, self.tables[name])
            else:
                self.send_json(404, {"error_code": "TABLE_DOES_NOT_EXIST", "message": name})
        elif self.path.startswith("/api/2.0/sql/statements/"):
            self.send_json(
                200,
                {
                    "statement_id": self.path.rsplit("/", 1)[1],
                    "status": {"state": "SUCCEEDED"},
                    "manifest": {
                        "schema": {
                            "column_count": 1,
                            "columns": [{"name": "ok", "type_name": "BOOLEAN", "position": 0}],
                        }
                    },
                    "result": {
                        "chunk_index": 0,
                        "row_offset": 0,
                        "row_count": 1,
                        "data_array": [["true"]],
                    },
                },
            )
        else:
            self.send_json(404, {"error_code": "NOT_FOUND", "message": "no such endpoint"})


def deployed_tables() -> dict[str, dict[str, Any]]:
    """The lakehouse tables as policies/ deploys them, in the shape tables.get answers."""
    from accord.compiler.model.validate import load_project
    from accord.targets import lower_all
    from accord.targets.objects import MaskAttachment, RowFilterAttachment

    catalog = lower_all(load_project(ROOT / "policies"))["databricks"]
    out: dict[str, dict[str, Any]] = {}
    for obj in catalog.objects:
        if isinstance(obj, RowFilterAttachment | MaskAttachment):
            info = out.setdefault(obj.table, {"full_name": obj.table, "columns": []})
        if isinstance(obj, RowFilterAttachment):
            info["row_filter"] = {
                "function_name": obj.policy,
                "input_column_names": list(obj.columns),
            }
        elif isinstance(obj, MaskAttachment):
            info["columns"].append(
                {
                    "name": obj.column,
                    "mask": {"function_name": obj.policy, "using_column_names": []},
                }
            )
    for info in out.values():
        info["columns"].append({"name": "programme_code"})
    return out


@pytest.fixture
def warehouse(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    Warehouse.statements = []
    Warehouse.fail_on = None
    Warehouse.tables = deployed_tables()
    Warehouse.policies = []
    with serve(Warehouse) as port:
        host = f"http://127.0.0.1:{port}"
        for name in [n for n in __import__("os").environ if n.startswith("DATABRICKS_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("DATABRICKS_HOST", host)
        monkeypatch.setenv("DATABRICKS_TOKEN", "dapi-local-test")
        monkeypatch.setenv("DATABRICKS_WAREHOUSE_ID", "wh-1")
        monkeypatch.setenv("DATABRICKS_CONFIG_FILE", "/nonexistent/.databrickscfg")
        yield host


def _databricks(poll: float = 0.0) -> DatabricksExecutor:
    executor = DatabricksExecutor.from_env()
    executor.poll_seconds = poll
    return executor


@pytest.mark.standin
def test_apply_databricks_one_statement_at_a_time(plans: Path, warehouse: str) -> None:
    outcome = apply(str(plans), plans / "ledger.jsonl", "databricks", _databricks, _echo([]))
    assert not outcome.error
    assert [s for s, _ in outcome.done] == [
        "02_databricks_prepare",
        "04_databricks_apply",
        CUTOVER_DBX,
        "08_databricks_retire",
    ]
    sent = [s["statement"] for s in Warehouse.statements]
    assert all(
        s["warehouse_id"] == "wh-1" and s["wait_timeout"] == "30s" for s in Warehouse.statements
    )
    assert all(";" not in s.rstrip(";") or "'" in s for s in sent)
    assert "RETURN 'dbx-90aa-secret'" in "\n".join(sent)
    assert sent.index(
        next(s for s in sent if s.startswith("ALTER TABLE omics.variants.calls SET ROW FILTER"))
    ) < sent.index("DROP FUNCTION governance.policies.programme_row_filter")
    assert half_applied_groups(plans, plans / "ledger.jsonl")[0].applied == ("databricks",)


@pytest.mark.standin
def test_a_failed_statement_with_http_200_fails_the_stage(plans: Path, warehouse: str) -> None:
    Warehouse.fail_on = "SET ROW FILTER"
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", "databricks", "--plans", str(plans)]
    )
    assert code == 1
    assert "02_databricks_prepare: applied" in out and "04_databricks_apply: failed" in out
    assert "failed: denied: the deploying role needs MANAGE" in err
    assert "([INSUFFICIENT_PERMISSIONS] Insufficient privileges. SQLSTATE: 42501)" in err
    assert [r.status for r in read_ledger(plans / "ledger.jsonl")] == ["applied", "failed"]
    assert not any("DROP FUNCTION" in s["statement"] for s in Warehouse.statements)


def test_split_statements_respects_strings_and_comments() -> None:
    text = (
        "-- a; comment\nSELECT 'a;b' AS x;\n-- only a comment;\nMERGE INTO t USING s ON t.a = s.a"
    )
    assert split_statements(text, "databricks") == [
        "SELECT 'a;b' AS x",
        "MERGE INTO t USING s ON t.a = s.a",
    ]


class QuotingSnowflake(FakeSnowflake):
    """A platform whose error message quotes the failed statement, salt literal included."""

    def execute_string(self, text: str) -> list[FakeCursor]:
        for statement in split_statements(text, "snowflake"):
            if "SECURE FUNCTION" in statement:
                raise ProgrammingError(msg=f"001003 (42000): syntax error in: {statement}")
        return super().execute_string(text)


def test_a_platform_error_quoting_the_statement_never_prints_the_salt(plans: Path) -> None:
    lines: list[str] = []
    outcome = apply(
        str(plans),
        plans / "ledger.jsonl",
        "snowflake",
        lambda: SnowflakeExecutor(QuotingSnowflake()),
        _echo(lines),
    )
    assert outcome.error and "syntax error in" in outcome.error
    assert "sf-7c1d-secret" not in outcome.error + "\n".join(lines)
    assert secrets.MASK in outcome.error


@pytest.mark.standin
def test_databricks_checks_read_table_metadata_and_fail_on_the_wrong_function(
    plans: Path, warehouse: str
) -> None:
    """Unity Catalog information_schema column names differ between the reference page and
    live workspaces: filter and mask checks read TableInfo.row_filter / ColumnInfo.mask through
    tables.get (docs.databricks.com/api/workspace/tables/get). A table whose row filter is
    another function fails the stage after its statements ran."""
    table = "discovery_lake.assays.results"
    Warehouse.tables[table]["row_filter"]["function_name"] = "governance.policies.other"
    outcome = apply(str(plans), plans / "ledger.jsonl", "databricks", _databricks, _echo([]))
    assert outcome.done == [("02_databricks_prepare", "applied"), ("04_databricks_apply", "failed")]
    assert "04_databricks_apply: its statements ran, but check(s)" in outcome.error
    # no information_schema row filter or column mask query was sent
    sent = [s["statement"] for s in Warehouse.statements]
    assert not any("information_schema.row_filters" in s or "column_masks" in s for s in sent)


@pytest.mark.standin
def test_databricks_checks_fail_when_the_table_is_unreadable(plans: Path, warehouse: str) -> None:
    Warehouse.tables.pop("omics.variants.calls")
    outcome = apply(str(plans), plans / "ledger.jsonl", "databricks", _databricks, _echo([]))
    assert outcome.done[-1] == ("04_databricks_apply", "failed")
    assert "its checks did not" in outcome.error


@pytest.mark.standin
def test_databricks_checks_fail_while_a_dropped_abac_policy_is_still_listed(
    plans: Path, warehouse: str
) -> None:
    """ABAC policies appear in no information_schema view: their checks read
    policies.list_policies (PolicyInfo.name, row_filter.function_name)."""
    Warehouse.policies = [
        {
            "name": "accord_programme_row_filter",
            "row_filter": {"function_name": "governance.policies.programme_row_filter"},
        }
    ]
    outcome = apply(str(plans), plans / "ledger.jsonl", "databricks", _databricks, _echo([]))
    assert outcome.done[-1] == ("04_databricks_apply", "failed")
