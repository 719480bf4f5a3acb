"""The live clients' failure modes, against the stand-ins and against hosts that never answer:
a 403, a FAILED statement, one that stays RUNNING past the statement timeout, CANCELED and
CLOSED, an unreachable host (one line, exit 2, within the connect timeout), a missing extra, and
the Snowflake connection sources (--connection, the default connection, SNOWFLAKE_*)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from accord.compiler.connect.config import LiveOptions, Timeouts
from accord.compiler.connect.executor import DatabricksExecutor, DeniedError, ExecutionError
from accord.sandbox.standins.http import closed_port, silent_host
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = str(ROOT / "policies")


def databricks(statement_timeout: float = 30) -> DatabricksExecutor:
    executor = DatabricksExecutor.connect(
        LiveOptions(timeouts=Timeouts(connect=10, statement=statement_timeout))
    )
    executor.poll_seconds = 0.01
    return executor


def test_a_failed_statement_with_http_200_is_a_failure(platforms: Platforms) -> None:
    run = databricks()
    with pytest.raises(ExecutionError, match=r"^FAILED: \[PARSE_SYNTAX_ERROR\]") as failed:
        run.run("SELEC 1")
    assert not isinstance(failed.value, DeniedError)
    platforms.databricks.fail_on.append("DROP ROW FILTER")
    with pytest.raises(DeniedError, match="denied: the deploying role needs MANAGE"):
        run.run("ALTER TABLE omics.variants.calls DROP ROW FILTER")


@pytest.mark.parametrize("state", ["CANCELED", "CLOSED"])
def test_canceled_and_closed_are_not_successes(platforms: Platforms, state: str) -> None:
    platforms.databricks.state_on["SELECT 42"] = state
    with pytest.raises(ExecutionError, match=f"^{state}: "):
        databricks().query("SELECT 42")


def test_a_statement_running_past_the_timeout_is_cancelled(platforms: Platforms) -> None:
    platforms.databricks.hang_on.append("SELECT 'slow'")
    run = databricks(statement_timeout=1)
    with pytest.raises(
        ExecutionError, match="timed out: still RUNNING after the statement timeout of 1s"
    ):
        run.query("SELECT 'slow'")
    answered = [a for a in _statements(platforms) if a["status"]["state"] == "CANCELED"]
    assert len(answered) == 1  # the executor cancelled it on the platform


def _statements(platforms: Platforms) -> list[dict[str, object]]:
    return list(platforms.databricks.statements.values())


def test_a_403_is_reported_as_a_denial_and_never_as_clean(platforms: Platforms) -> None:
    what = "ABAC policies on table omics.variants.calls"
    # without information_schema.abac_policy_definitions each table's policies are listed
    platforms.databricks.abac_definitions = False
    platforms.databricks.forbidden.append(
        "/api/2.1/unity-catalog/policies/table/omics.variants.calls"
    )
    code, out, err = run_cli(["introspect", "--platform", "databricks", POLICIES])
    assert code == 0
    # a reader's denial names the reading role (the principal current_user.me names), not
    # the deploying one
    assert f"could not read: {what}: denied: the reading role accord-ci@example.com needs" in err
    assert "deploying role" not in err
    code, out, _ = run_cli(["drift", POLICIES, "--platform", "databricks", "--format", "json"])
    assert code == 1
    doc = json.loads(out)
    messages = [f["message"] for f in doc["findings"] if f["rule"] == "ACC707"]
    assert any(f"the reading role cannot see {what}" in m for m in messages)
    (coverage,) = doc["coverage"]
    assert coverage["platform"] == "databricks" and coverage["complete"] is False
    assert [u["what"] for u in coverage["unseen"]] == [what]


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_an_unreachable_host_is_one_line_exit_2(
    platform: str, monkeypatch: pytest.MonkeyPatch, platforms: Platforms
) -> None:
    with silent_host() as port:
        monkeypatch.setenv("SNOWFLAKE_PORT", str(port))
        monkeypatch.setenv("DATABRICKS_HOST", f"http://127.0.0.1:{port}")
        argv = ["introspect", "--platform", platform, POLICIES, "--connect-timeout", "1"]
        code, out, err = run_cli(argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("accord: cannot ") and "Traceback" not in err


def test_a_refused_port_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, platforms: Platforms
) -> None:
    monkeypatch.setenv("SNOWFLAKE_PORT", str(closed_port()))
    code, _, err = run_cli(["drift", POLICIES, "--platform", "snowflake", "--connect-timeout", "1"])
    assert code == 2 and err.startswith("accord: cannot reach Snowflake account 'standin' at ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("platform", "extra"), [("snowflake", "snowflake"), ("databricks", "databricks")]
)
def test_a_missing_extra_names_the_pip_command(
    platform: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    hidden = {"snowflake": "snowflake.connector", "databricks": "databricks.sdk"}[platform]
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == hidden else real(name, *a)
    )
    code, _, err = run_cli(["introspect", "--platform", platform, POLICIES])
    assert code == 2
    assert f"pip install 'accord[{extra}]'" in err and "internal error" not in err


def _connections(home: Path, params: dict[str, str], default: bool) -> None:
    home.mkdir(parents=True, exist_ok=True)
    if default:  # the connector's default: default_connection_name in config.toml
        (home / "config.toml").write_text('default_connection_name = "standin"\n')
        os.chmod(home / "config.toml", 0o600)
    lines = ["[standin]\n"]
    lines += [f"{k} = {json.dumps(v)}\n" for k, v in params.items()]
    path = home / "connections.toml"
    path.write_text("".join(lines))
    os.chmod(path, 0o600)


@pytest.mark.parametrize("how", ["--connection", "default connection"])
def test_snowflake_named_and_default_connections(
    how: str, platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {
        "account": "standin",
        "user": "accord_ci",
        "password": "local-test",
        "host": "127.0.0.1",
        "port": int(os.environ["SNOWFLAKE_PORT"]),
        "protocol": "http",
    }
    for name in [n for n in os.environ if n.startswith("SNOWFLAKE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SNOWFLAKE_DISABLE_PLATFORM_DETECTION", "true")
    _connections(tmp_path / "sfhome", params, default=how != "--connection")  # type: ignore[arg-type]
    monkeypatch.setenv("SNOWFLAKE_HOME", str(tmp_path / "sfhome"))
    argv = ["introspect", "--platform", "snowflake", POLICIES, "--format", "json"]
    if how == "--connection":
        argv += ["--connection", "standin"]
    code, out, err = run_cli(argv)
    assert code == 0, err
    assert json.loads(out)["governance_schema"] == "GOVERNANCE.POLICIES"


def test_snowflake_needs_some_connection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [n for n in os.environ if n.startswith("SNOWFLAKE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SNOWFLAKE_HOME", str(tmp_path / "none"))
    code, _, err = run_cli(["introspect", "--platform", "snowflake", POLICIES])
    assert code == 2
    assert "SNOWFLAKE_ACCOUNT and SNOWFLAKE_USER" in err and "--connection NAME" in err


def test_databricks_needs_a_warehouse(
    platforms: Platforms, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABRICKS_WAREHOUSE_ID")
    code, _, err = run_cli(["introspect", "--platform", "databricks", POLICIES])
    assert code == 2 and "--warehouse-id" in err
    code, _, err = run_cli(
        ["introspect", "--platform", "databricks", POLICIES, "--warehouse-id", "wh-9"]
    )
    assert code == 0, err


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_drift_machine_formats_still_print_one_document_on_exit_2(
    fmt: str, monkeypatch: pytest.MonkeyPatch, platforms: Platforms
) -> None:
    monkeypatch.setenv("SNOWFLAKE_PORT", str(closed_port()))
    argv = ["drift", POLICIES, "--platform", "snowflake", "--format", fmt, "--connect-timeout", "1"]
    code, out, err = run_cli(argv)
    assert code == 2 and err.startswith("accord: cannot reach Snowflake account 'standin' at ")
    doc = json.loads(out)
    if fmt == "json":
        assert doc["findings"] == [] and doc["errors"][0]["message"].startswith("cannot reach")
    else:
        import jsonschema

        schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
        jsonschema.validators.validator_for(schema)(schema).validate(doc)
        (invocation,) = doc["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        assert "cannot reach" in invocation["toolExecutionNotifications"][0]["message"]["text"]


@pytest.mark.parametrize(
    ("err", "joined", "first"),
    [
        (ValueError("002003 (42S02): SQL compilation error:\n  Object 'X' does not exist"),
         "002003 (42S02): SQL compilation error: Object 'X' does not exist",
         "002003 (42S02): SQL compilation error:"),
        (TimeoutError("  login timed out \n"), "login timed out", "login timed out"),
        (OSError(), "OSError", "OSError"),
        (RuntimeError(" \n "), "RuntimeError", "RuntimeError"),
    ],
)  # fmt: skip
def test_an_error_in_one_line(err: BaseException, joined: str, first: str) -> None:
    """accord.compiler.core.errors.one_line: the one helper every connection message uses."""
    from accord.compiler.core.errors import one_line

    assert one_line(err) == joined
    assert one_line(err, first=True) == first


def test_the_sdk_host_metadata_notice_is_not_said_on_every_command(
    platforms: Platforms, caplog: pytest.LogCaptureFixture
) -> None:
    """The stand-in serves no /.well-known/databricks-config, as many workspaces do not: the
    SDK's notice that it falls back to the given configuration is dropped (it would be printed
    on every command), while the SDK's other records still reach the log."""
    import logging

    with caplog.at_level(logging.DEBUG, logger="databricks.sdk"):
        code, _, err = run_cli(["introspect", "--platform", "databricks", POLICIES])
    assert code == 0, err
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("databricks")]
    assert messages  # the SDK logged (its debug records are kept)
    assert not [m for m in messages if "host metadata" in m]
