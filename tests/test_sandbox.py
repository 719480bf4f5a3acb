"""``accord sandbox``: both stand-ins for an estate, the settings that point accord at them, and a
clean stop (compiler/live/sandbox.py, sandbox/).

The estate is the tutorial's (docs/tutorial/first-estate/), not the reference one. The command
runs in a process of its own, as a user starts it; what it serves is read through the real
clients. The whole live loop against it, as docs/getting-started.md writes it, is
tests/test_docs_getting_started.py.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from accord.compiler.live.sandbox import FILES, PROBE_USER, seed_of
from accord.compiler.model.validate import load_project
from accord.sandbox.seed import Seed
from accord.sandbox.serve import DEPLOYER_TOKEN, serving, wait_until_answering
from accord.sandbox.standins.http import closed_port, silent_host
from tests.cli import ENTRY, run_cli, run_process
from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial" / "first-estate"
#: generous: a sandbox starts in a second or two; this only keeps a hang from stalling the suite
LIMIT = 120
READY = "accord sandbox: ready; Ctrl-C stops it"
STOPPED = "accord sandbox: stopped; both stand-ins are down and their settings removed"


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    """A working directory holding the tutorial's estate in policies/."""
    work = tmp_path / "work"
    shutil.copytree(TUTORIAL, work / "policies")
    return work


# ------------------------------------------------------------------ the seed


def test_the_seed_is_the_estates_tables_rows_and_logins() -> None:
    model = load_project(TUTORIAL).model
    seed = seed_of(model)
    (trips,) = seed.snowflake.tables
    assert trips.name == "RIDES.CORE.TRIPS"
    assert trips.columns == {"RIDER_PHONE": "VARCHAR", "CITY": "VARCHAR", "RESULT_VALUE": "VARCHAR"}
    # a row per city, each cell naming its column and the row's city; then the probe's canary
    # row, of the probe's city
    assert [(r["CITY"], r["RIDER_PHONE"]) for r in trips.rows] == [
        ("LISBON", "rider_phone-LISBON"),
        ("OSLO", "rider_phone-OSLO"),
        ("LISBON", "+351 910 000 001"),
    ]
    assert trips.rows[0] == {
        "RIDER_PHONE": "rider_phone-LISBON",
        "CITY": "LISBON",
        "RESULT_VALUE": "result_value-LISBON",
    }
    (events,) = seed.databricks.tables
    assert events.name == "rides.lake.trip_events"
    assert set(events.columns) == {"rider_phone", "city", "result_value"}
    # the probe user holds every principal's role; each persona is a principal in its groups
    assert seed.snowflake.members == {PROBE_USER: ("CITY_OPS", "TRUST_SAFETY")}
    assert seed.databricks.members == {
        "lisbon_operator": ("city-ops",),
        "safety_investigator": ("trust-safety",),
    }


def test_a_probe_canary_is_a_row_of_its_where_value() -> None:
    """The canary row lets `accord probe --live` tell clear from masked (docs/probes.md)."""
    model = load_project(ROOT / "policies").model
    probe = next(p for p in model.probes.values() if p.canary and p.where and p.column)
    dataset = model.datasets[probe.dataset]
    seed = seed_of(model).of(dataset.platform)
    table = next(t for t in seed.tables if t.name == dataset.table)
    ((_, value),) = probe.where.items()
    column = next(c for c in table.columns if c.upper() == probe.column.upper())
    assert any(r[column] == probe.canary and value in r.values() for r in table.rows)


BANK_PROBES = """\
probes:
  banker_eu_retail:
    owner: risk
    persona: banker
    dataset: customers
    where: {region: EU, business_line: RETAIL}
    column: EMAIL
    canary: eu-retail@example.com
    expect: {warehouse_agent: masked, lake_agent: masked}
  auditor_us:
    owner: risk
    persona: auditor
    dataset: customers
    where: {region: US}
    column: EMAIL
    canary: us@example.com
    expect: {warehouse_agent: masked, lake_agent: masked}
"""


def test_a_filter_over_several_dimensions_gets_a_row_of_each_combination() -> None:
    """Rows of every combination of the dimensions' values; a canary row for each probe's
    ``where`` values, with each value of a dimension it leaves out, on the fact and its
    replica."""
    from tests.test_several_dimensions import bank, project_of

    seed = seed_of(project_of(bank() + BANK_PROBES).model)
    (customers,) = seed.snowflake.tables
    keyed = [(r["REGION"], r["BUSINESS_LINE"], r["EMAIL"]) for r in customers.rows]
    assert keyed == [
        ("EU", "CORPORATE", "email-EU-CORPORATE"),
        ("EU", "RETAIL", "email-EU-RETAIL"),
        ("US", "CORPORATE", "email-US-CORPORATE"),
        ("US", "RETAIL", "email-US-RETAIL"),
        ("EU", "RETAIL", "eu-retail@example.com"),
        ("US", "CORPORATE", "us@example.com"),
        ("US", "RETAIL", "us@example.com"),
    ]
    (lake,) = seed.databricks.tables
    canaries = [(r["region"], r["business_line"]) for r in lake.rows if "@" in r["email"]]
    assert canaries == [("EU", "RETAIL"), ("US", "CORPORATE"), ("US", "RETAIL")]


def test_an_abac_estate_is_told_what_the_stand_in_does_not_apply(tmp_path: Path) -> None:
    """The Databricks stand-in keeps ABAC policies but evaluates no query through them: the
    sandbox says so for a `style: abac` estate, and only for one."""
    from accord.compiler.live.sandbox import describe, settings
    from accord.sandbox.serve import Serving
    from accord.sandbox.standins.databricks import DatabricksEstate
    from accord.sandbox.standins.snowflake import SnowflakeEstate
    from tests.test_several_dimensions import bank, project_of

    for style, told in (("abac", True), ("table", False)):
        project = project_of(bank(style))
        served = Serving(SnowflakeEstate(), DatabricksEstate(), 1, "http://127.0.0.1:2", {})
        found = settings(project.model, served, tmp_path)
        text = describe(project, "policies", served, found, "out")
        assert ("does not apply them to queries" in text) is told, style


# ------------------------------------------------------------------ the stand-ins it serves


@pytest.mark.standin
def test_a_persona_principal_sees_its_own_groups_and_no_other() -> None:
    """A persona's token reaches the workspace as the persona's principal, whose statements see
    exactly its account groups (one SDK profile per persona, docs/probes.md); the deployer's
    token is the metastore admin's."""
    from databricks.sdk import WorkspaceClient

    model = load_project(TUTORIAL).model
    question = "SELECT is_account_group_member('city-ops'), is_account_group_member('trust-safety')"
    with serving(seed_of(model)) as served:

        def ask(token: str) -> list[list[str]]:
            client = WorkspaceClient(host=served.databricks_url, token=token)
            answer = client.statement_execution.execute_statement(
                statement=question, warehouse_id="sandbox", wait_timeout="5s"
            )
            assert answer.result is not None
            return answer.result.data_array or []

        assert ask(served.tokens["lisbon_operator"]) == [["true", "false"]]
        assert ask(served.tokens["safety_investigator"]) == [["false", "true"]]
        me = WorkspaceClient(host=served.databricks_url, token=DEPLOYER_TOKEN).current_user.me()
        assert me.user_name == served.databricks.reader


@pytest.mark.standin
@pytest.mark.filterwarnings("ignore::FutureWarning")  # the connector's notice of a new default
def test_the_probe_user_may_use_the_personas_roles_only() -> None:
    import snowflake.connector

    model = load_project(TUTORIAL).model
    with serving(seed_of(model)) as served:
        conn = snowflake.connector.connect(
            account="sandbox", user=PROBE_USER, password="any", host="127.0.0.1",
            port=served.snowflake_port, protocol="http", login_timeout=10,
        )  # fmt: skip
        try:
            cur = conn.cursor()
            cur.execute("USE ROLE CITY_OPS")
            assert cur.execute("SELECT CURRENT_ROLE()").fetchall() == [("CITY_OPS",)]
            with pytest.raises(snowflake.connector.errors.ProgrammingError, match="002003"):
                cur.execute("USE ROLE ACCOUNTADMIN")
        finally:
            conn.close()


@pytest.mark.standin
def test_a_stand_in_that_does_not_answer_is_not_ready() -> None:
    with silent_host() as port, pytest.raises(TimeoutError, match=f"127.0.0.1:{port}"):
        wait_until_answering(port, 0.5)
    with pytest.raises(TimeoutError):
        wait_until_answering(closed_port(), 0.5)


@pytest.mark.standin
def test_both_servers_stop_when_the_block_ends() -> None:
    with serving(Seed()) as served:
        ports = [served.snowflake_port, served.databricks_port]
        assert all(not closed(p) for p in ports)
    assert all(closed(p) for p in ports)


# ------------------------------------------------------------------ the command


def closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Sandbox:
    """``accord sandbox ARGS`` in a process of its own, read line by line."""

    def __init__(self, cwd: Path, *args: str, ignoring_sigint: bool = False) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "DATA"))}
        self.proc = subprocess.Popen(
            [*ENTRY, "sandbox", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # started as a non-interactive shell starts `accord sandbox &`: Ctrl-C ignored
            preexec_fn=_ignoring_sigint if ignoring_sigint else None,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, last: str) -> list[str]:
        """The lines it prints, up to ``last``; the process's whole output when it ends first."""
        seen: list[str] = []
        while True:
            line = self.lines.get(timeout=LIMIT)
            if line is None:
                self.proc.wait(timeout=LIMIT)
                return seen
            seen.append(line)
            if line == last:
                return seen

    def stop(self, sig: signal.Signals = signal.SIGINT) -> tuple[int, list[str]]:
        self.proc.send_signal(sig)
        rest = self.until("\0never")
        return self.proc.wait(timeout=LIMIT), rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=LIMIT)


def _ports(lines: list[str]) -> list[int]:
    text = "\n".join(lines)
    m = re.search(
        r"Snowflake   127\.0\.0\.1:(\d+) .*\n  Databricks  http://127\.0\.0\.1:(\d+) ", text
    )
    assert m, text
    return [int(m[1]), int(m[2])]


@pytest.mark.standin
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_it_prints_and_writes_the_settings_and_stops_cleanly(
    estate: Path, sig: signal.Signals
) -> None:
    # started ignoring Ctrl-C, as a background job of a script is: a signal stops it all the same
    sandbox = Sandbox(estate, ignoring_sigint=True)
    try:
        lines = sandbox.until(READY)
        assert lines[-1] == READY, lines
        printed = "\n".join(lines)
        out = estate / ".accord" / "sandbox"
        for name in FILES:
            text = (out / name).read_text(encoding="utf-8")
            assert f"# .accord/sandbox/{name}: " in printed
            assert text.rstrip("\n") in printed  # the file, as printed
            assert (out / name).stat().st_mode & 0o077 == 0  # the user's alone
        assert "RIDER_SALT_DATABRICKS and RIDER_SALT_SNOWFLAKE" in printed
        ports = _ports(lines)
        env = (out / "env").read_text(encoding="utf-8")
        assert f"export SNOWFLAKE_HOME={out}\n" in env
        assert f"port = {ports[0]}\n" in (out / "connections.toml").read_text(encoding="utf-8")
        assert f"host = http://127.0.0.1:{ports[1]}\n" in (out / "databrickscfg").read_text()
        code, rest = sandbox.stop(sig)
    finally:
        sandbox.kill()
    assert code == 0, rest
    assert rest == [STOPPED]
    assert all(closed(p) for p in ports)
    assert not (estate / ".accord").exists()  # its files, and the directories it made


@pytest.mark.standin
@pytest.mark.slow
def test_the_same_estate_prints_the_same_settings_but_for_the_ports(estate: Path) -> None:
    printed = []
    for _ in range(2):
        sandbox = Sandbox(estate)
        try:
            lines = sandbox.until(READY)
            assert sandbox.stop()[0] == 0
        finally:
            sandbox.kill()
        text = "\n".join(lines)
        for port in _ports(lines):
            text = re.sub(rf"\b{port}\b", "PORT", text)
        printed.append(text)
    assert printed[0] == printed[1]
    assert "PORT" in printed[0]


@pytest.mark.standin
def test_port_chooses_both_ports_and_a_taken_one_is_refused(estate: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, out, err = run_process(["sandbox", "--port", str(port)], cwd=estate, timeout=LIMIT)
        assert code == 2, out + err
        assert f"accord: cannot serve on 127.0.0.1:{port} and {port + 1}: " in err
        assert not (estate / ".accord").exists()  # nothing written
    sandbox = Sandbox(estate, "--port", str(port), "--out", str(tmp_path / "settings"))
    try:
        lines = sandbox.until(READY)
        assert _ports(lines) == [port, port + 1]
        assert sandbox.stop()[0] == 0
    finally:
        sandbox.kill()
    assert not (tmp_path / "settings").exists()


def test_no_model_or_an_invalid_one_exits_2_with_its_place(estate: Path) -> None:
    code, out, err = run_cli(["sandbox", "nowhere"], cwd=estate)
    assert (code, out) == (2, "")
    assert "accord: nowhere: no such policy directory" in err
    (estate / "policies" / "masks.yaml").write_text("masks:\n  rider_phone: [\n")
    code, out, err = run_cli(["sandbox"], cwd=estate)
    assert (code, out) == (2, "")
    assert re.search(r"^policies/masks\.yaml:3:1: ", err, re.M), err
    assert "Traceback" not in err
    assert not (estate / ".accord").exists()  # nothing written, nothing served


@pytest.mark.standin
def test_a_settings_directory_that_is_a_link_is_refused(estate: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (estate / ".accord").mkdir()
    (estate / ".accord" / "sandbox").symlink_to(elsewhere)
    code, out, err = run_process(["sandbox"], cwd=estate, timeout=LIMIT)
    assert code == 2, out + err
    assert "a symbolic link; accord sandbox writes no file through one" in err
    assert list(elsewhere.iterdir()) == []
