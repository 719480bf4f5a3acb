"""What a live command says when it cannot connect: the host (Databricks) or account and host
(Snowflake) it tried, the connection or profile, and the setting each came from; one line,
exit 2. A refused connection and a name that does not resolve fail at once: the clients'
retries (databricks-sdk retries every ``requests.ConnectionError`` until
``retry_timeout_seconds``, ``databricks/sdk/_base_client.py`` ``_is_retryable``; the Snowflake
connector retries a login's transport errors within ``login_timeout``) are never entered.
No timing is asserted: the connect timeout is 60 s, and each test counts the connection
attempts made (a client in its retry loop makes more than one, and a regression fails on the
count, not on a clock)."""

from __future__ import annotations

import os
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.compiler.connect.config import LiveOptions, Timeouts, databricks_profile_clients
from accord.compiler.connect.executor import DatabricksExecutor, SessionError, SnowflakeExecutor
from accord.sandbox.standins.http import closed_port, silent_host
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = str(ROOT / "policies")
#: a name that never resolves (RFC 6761: ``.invalid`` is reserved for it)
NOWHERE = "accord-test.invalid"


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every TCP connection attempt this process makes, by (host, port)."""
    made: list[tuple[str, int]] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        if isinstance(address, tuple) and len(address) >= 2:
            made.append((str(address[0]), int(address[1])))
        return real(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield made


@pytest.fixture
def connector_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """Each call of ``snowflake.connector.connect`` (the real one is still called)."""
    import snowflake.connector

    calls: list[dict[str, object]] = []
    real = snowflake.connector.connect

    def connect(**params: object) -> object:
        calls.append(params)
        return real(**params)

    monkeypatch.setattr(snowflake.connector, "connect", connect)
    return calls


def _introspect(platform: str, *more: str) -> tuple[int, str, str]:
    argv = ["introspect", "--platform", platform, POLICIES, "--connect-timeout", "60", *more]
    code, out, err = run_cli(argv)
    assert "Traceback" not in err
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_a_refused_databricks_workspace_fails_at_once(
    platforms: Platforms, monkeypatch: pytest.MonkeyPatch, attempts: list[tuple[str, int]]
) -> None:
    port = closed_port()
    monkeypatch.setenv("DATABRICKS_HOST", f"http://127.0.0.1:{port}")
    code, out, err = _introspect("databricks")
    assert code == 2 and out == ""
    assert _one_line(err) == (
        f"accord: cannot reach Databricks at http://127.0.0.1:{port} (host from "
        f"DATABRICKS_HOST): 127.0.0.1 port {port} refused the connection"
    )
    # one attempt: the check's; the SDK (host metadata, then current_user.me) never tried
    assert [a for a in attempts if a[1] == port] == [("127.0.0.1", port)]


def test_a_refused_snowflake_account_fails_at_once(
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    attempts: list[tuple[str, int]],
    connector_calls: list[dict[str, object]],
) -> None:
    port = closed_port()
    monkeypatch.setenv("SNOWFLAKE_PORT", str(port))
    code, out, err = _introspect("snowflake")
    assert code == 2 and out == ""
    assert _one_line(err) == (
        f"accord: cannot reach Snowflake account 'standin' at http://127.0.0.1:{port} (from "
        f"SNOWFLAKE_ACCOUNT, SNOWFLAKE_HOST, SNOWFLAKE_PORT; user 'accord_ci'): 127.0.0.1 "
        f"port {port} refused the connection"
    )
    assert [a for a in attempts if a[1] == port] == [("127.0.0.1", port)]
    assert connector_calls == []  # the connector's login retries were never entered


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_a_name_that_does_not_resolve_fails_at_once(
    platform: str,
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    connector_calls: list[dict[str, object]],
) -> None:
    monkeypatch.setenv("SNOWFLAKE_HOST", NOWHERE)
    monkeypatch.setenv("DATABRICKS_HOST", f"https://{NOWHERE}")
    code, _, err = _introspect(platform)
    line = _one_line(err)
    assert code == 2 and line.startswith("accord: cannot reach ")
    assert f"{NOWHERE} does not resolve" in line
    assert ("SNOWFLAKE_HOST" if platform == "snowflake" else "host from DATABRICKS_HOST") in line
    assert connector_calls == []


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_a_silent_host_is_named_after_the_connect_timeout(
    platform: str, platforms: Platforms, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host that accepts the connection and never answers still gets the connect timeout
    (1 s here), and the message names it."""
    with silent_host() as port:
        monkeypatch.setenv("SNOWFLAKE_PORT", str(port))
        monkeypatch.setenv("DATABRICKS_HOST", f"http://127.0.0.1:{port}")
        argv = ["introspect", "--platform", platform, POLICIES, "--connect-timeout", "1"]
        code, out, err = run_cli(argv)
    line = _one_line(err)
    assert code == 2 and out == ""
    assert f"at http://127.0.0.1:{port} (" in line
    if platform == "databricks":
        assert "(host from DATABRICKS_HOST) within the connect timeout of 1s" in line
    else:  # the connector's own login timeout: 000014 (HYT00)
        assert "account 'standin'" in line and "000014" in line


def test_wrong_snowflake_credentials_name_the_account_and_user(platforms: Platforms) -> None:
    """Snowflake refuses a wrong password with 390100 "Incorrect username or password was
    specified." (the stand-in's ``passwords``); the connector raises it with that errno."""
    platforms.snowflake.passwords = {"ACCORD_CI": "not-the-password"}
    code, _, err = _introspect("snowflake")
    line = _one_line(err)
    assert code == 2
    assert line.startswith("accord: cannot connect to Snowflake account 'standin' at http://")
    assert "user 'accord_ci'" in line and "390100" in line and "Incorrect username" in line
    platforms.snowflake.passwords = {"ACCORD_CI": os.environ["SNOWFLAKE_PASSWORD"]}
    assert _introspect("snowflake")[0] == 0


def test_a_wrong_databricks_token_names_the_host_and_where_the_token_came_from(
    platforms: Platforms,
) -> None:
    """A workspace answers an invalid personal access token 403 "Invalid access token." (the
    stand-in's ``accepted``)."""
    platforms.databricks.accepted = {"dapi-another"}
    code, _, err = _introspect("databricks")
    host = os.environ["DATABRICKS_HOST"]
    assert code == 2
    assert _one_line(err) == (
        f"accord: cannot log in to Databricks at {host} (host from DATABRICKS_HOST) with a "
        "token from DATABRICKS_TOKEN: Invalid access token"
    )
    platforms.databricks.accepted = {os.environ["DATABRICKS_TOKEN"]}
    assert _introspect("databricks")[0] == 0


def _connections(home: Path, port: int) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "connections.toml"
    path.write_text(
        '[standin]\naccount = "standin"\nuser = "accord_ci"\npassword = "local-test"\n'
        f'host = "127.0.0.1"\nport = {port}\nprotocol = "http"\n'
    )
    os.chmod(path, 0o600)
    return path


def test_a_named_snowflake_connection_is_named(
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    connector_calls: list[dict[str, object]],
) -> None:
    port = closed_port()
    path = _connections(tmp_path / "sf", port)
    monkeypatch.setenv("SNOWFLAKE_HOME", str(tmp_path / "sf"))
    code, _, err = _introspect("snowflake", "--connection", "standin")
    assert code == 2 and connector_calls == []
    assert _one_line(err) == (
        f"accord: cannot reach Snowflake account 'standin' at http://127.0.0.1:{port} "
        f"(connection 'standin' in {path}, from --connection; user 'accord_ci'): 127.0.0.1 "
        f"port {port} refused the connection"
    )
    code, _, err = _introspect("snowflake", "--connection", "nope")
    line = _one_line(err)
    assert code == 2
    assert line.startswith("accord: cannot connect to Snowflake connection 'nope' (from ")
    assert f"--connection; accord finds none in {path})" in line
    assert "000007" in line  # the connector's configuration errno


def _databrickscfg(path: Path, host: str) -> Path:
    path.write_text(f"[dev]\nhost = {host}\ntoken = dapi-local-test\n")
    return path


def test_a_databricks_profile_is_named(
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    attempts: list[tuple[str, int]],
) -> None:
    port = closed_port()
    cfg = _databrickscfg(tmp_path / "databrickscfg", f"http://127.0.0.1:{port}")
    for name in ("DATABRICKS_HOST", "DATABRICKS_TOKEN"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(cfg))
    code, _, err = _introspect("databricks", "--profile", "dev")
    assert code == 2
    assert _one_line(err) == (
        f"accord: cannot reach Databricks at http://127.0.0.1:{port} (host of profile 'dev' "
        f"in {cfg}, from --profile): 127.0.0.1 port {port} refused the connection"
    )
    assert len([a for a in attempts if a[1] == port]) == 1
    code, _, err = _introspect("databricks", "--profile", "nope")
    line = _one_line(err)
    assert code == 2
    assert line.startswith(
        "accord: cannot configure the Databricks client (profile 'nope', from --profile): "
    )
    assert f"{cfg} has no nope profile configured" in line


def test_a_persona_session_that_is_refused_names_the_host(
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    attempts: list[tuple[str, int]],
) -> None:
    """``probe --live`` opens one session per persona: a refused one is that persona's
    SessionError (no answer), at once, naming the host."""
    port = closed_port()
    monkeypatch.setenv("SNOWFLAKE_PORT", str(port))
    options = LiveOptions(timeouts=Timeouts(connect=60, statement=60))
    opener = SnowflakeExecutor.opener(options)
    with pytest.raises(SessionError, match="refused the connection") as refused:
        SnowflakeExecutor.session(opener).__enter__()
    assert f"Snowflake account 'standin' at http://127.0.0.1:{port}" in str(refused.value)
    cfg = _databrickscfg(tmp_path / "databrickscfg", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("DATABRICKS_HOST")
    monkeypatch.setenv("DATABRICKS_CONFIG_FILE", str(cfg))
    client_of = databricks_profile_clients(options.timeouts)
    with pytest.raises(SessionError, match="refused the connection") as refused:
        DatabricksExecutor.session(lambda: client_of("dev"), "wh", options.timeouts).__enter__()
    assert f"(host of profile 'dev' in {cfg}, from the probe config's" in str(refused.value)
    assert len([a for a in attempts if a[1] == port]) == 2  # one per session, no retry


def _no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_the_proxy_the_environment_names_is_what_is_checked(
    platforms: Platforms, monkeypatch: pytest.MonkeyPatch, attempts: list[tuple[str, int]]
) -> None:
    """requests (under the SDK) goes through ``HTTP_PROXY`` unless ``NO_PROXY`` exempts the
    host: the check connects where the client would."""
    _no_proxy_settings(monkeypatch)
    proxy = closed_port()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy}")
    code, _, err = _introspect("databricks")
    assert code == 2
    line = _one_line(err)
    assert f"(through the proxy 127.0.0.1:{proxy}, HTTP_PROXY): 127.0.0.1 port {proxy}" in line
    # the proxy is what was tried, never the workspace directly (run after the rest of the
    # suite, the check was seen to try the proxy twice in one process: each fails at once)
    assert {a for a in attempts if a[1] == proxy} == {("127.0.0.1", proxy)}
    workspace = urllib.parse.urlsplit(os.environ["DATABRICKS_HOST"]).port
    assert not any(a[1] == workspace for a in attempts)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the workspace is exempt: reached directly
    assert _introspect("databricks", "--format", "json")[0] == 0


def test_a_snowflake_connection_s_own_proxy_is_what_is_checked(
    platforms: Platforms,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    connector_calls: list[dict[str, object]],
) -> None:
    """The connector's ``proxy_host``/``proxy_port`` win over the environment's proxy."""
    _no_proxy_settings(monkeypatch)
    proxy = closed_port()
    path = _connections(tmp_path / "sf", int(os.environ["SNOWFLAKE_PORT"]))
    with path.open("a") as fh:
        fh.write(f'proxy_host = "127.0.0.1"\nproxy_port = {proxy}\n')
    monkeypatch.setenv("SNOWFLAKE_HOME", str(tmp_path / "sf"))
    code, _, err = _introspect("snowflake", "--connection", "standin")
    assert code == 2 and connector_calls == []
    assert f"(through the proxy 127.0.0.1:{proxy}, its proxy_host setting)" in _one_line(err)
