"""Secrets a platform or an agent echoes back never reach accord's output (issue 22, item 9).

A hostile or merely verbose platform quotes what it was sent: a login error repeating the
password, an agent's JSON-RPC error holding the bearer token it received. Every value accord
knows to be a secret (passwords, tokens, private-key passphrases, salts) is removed from every
message, result file and report, as sent and in the forms it comes back in (JSON- and
Python-escaped, SQL-quoted, HTML-escaped, URL-encoded in either case). The attacks run as CI
runs accord (``CI=true``, a real process) against stand-ins on 127.0.0.1; a connections file
with a password that others can read gets a warning, as the Snowflake connector's own check
gives one.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml

from accord.compiler.connect.executor import ExecutionError, UnreachableError
from accord.compiler.core import secrets
from accord.compiler.core.errors import one_line
from accord.compiler.probe_live.a2a import A2AError
from accord.sandbox.standins.http import Handler, base_url, running, serve
from tests.cli import run_process
from tests.conftest import ROOT

PASSWORD = 'Pa55"w/rd+é x&<1>'
TOKEN = "a2a-tok/4f+d=="
SALT = "salt-9c2e'secret"


def every_form(value: str) -> list[str]:
    """The forms a secret comes back in."""
    return [
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        value.replace("'", "''"),
        html.escape(value),
        quote(value, safe=""),
        re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote(value, safe="")),
        quote_plus(value),
        quote(value),
    ]


def leaked(text: str, value: str) -> list[str]:
    return [f for f in every_form(value) if f in text]


@pytest.fixture(autouse=True)
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    secrets.forget()
    for name in secrets.SECRET_ENV:
        monkeypatch.delenv(name, raising=False)
    yield
    secrets.forget()


@pytest.mark.parametrize("value", [PASSWORD, TOKEN, SALT])
@pytest.mark.parametrize("form", range(len(every_form(PASSWORD))))
def test_every_form_is_redacted(value: str, form: int) -> None:
    secrets.register(value)
    shown = every_form(value)[form]
    text = secrets.redact(f"login failed for user X with secret [{shown}] (retry)")
    assert not leaked(text, value), text
    assert text == f"login failed for user X with secret [{secrets.MASK}] (retry)"


def test_env_secrets_are_known_without_registering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNOWFLAKE_PASSWORD", PASSWORD)
    monkeypatch.setenv("DATABRICKS_TOKEN", "dapi0123456789abcdef")
    assert secrets.redact(f"bad password {PASSWORD}, token dapi0123456789abcdef") == (
        "bad password [secret], token [secret]"
    )
    assert secrets.redact("abc") == "abc"  # nothing known in it


@pytest.mark.parametrize(
    "make",
    [
        lambda said: ExecutionError(said),
        lambda said: ExecutionError("failed", said, {"message": said}),
        lambda said: UnreachableError(said),
        lambda said: A2AError(said),
    ],
    ids=["execution", "execution-said", "unreachable", "a2a"],
)
def test_captured_platform_errors_hold_no_secret(make: Any) -> None:
    secrets.register(PASSWORD, TOKEN)
    said = f"denied: password={quote(PASSWORD)} Authorization: Bearer {TOKEN}"
    err = make(said)
    texts = [str(err), getattr(err, "said", ""), json.dumps(getattr(err, "codes", {}))]
    assert not any(leaked(t, PASSWORD) or leaked(t, TOKEN) for t in texts), texts
    assert not leaked(one_line(RuntimeError(said)), TOKEN)


# --------------------------------------------------------------------------------------------
# a Snowflake that repeats the password in its login error


class EchoingLogin(Handler):
    """A Snowflake login endpoint that refuses, quoting what it was sent (raw, URL-encoded
    and JSON-escaped), as a misconfigured proxy or a verbose gateway does."""

    def do_POST(self) -> None:
        data = self.body().get("data", {})
        sent = str(data.get("PASSWORD", ""))
        return self.send_json(
            200,
            {
                "data": {"errorCode": "390100", "nextAction": None},
                "code": "390100",
                "message": (
                    f"Incorrect username or password was specified: {sent} "
                    f"(form: password={quote_plus(sent)}; json: {json.dumps(sent)})"
                ),
                "success": False,
            },
        )


@contextmanager
def echoing_snowflake() -> Iterator[int]:
    with serve(EchoingLogin) as port:
        yield port


def _ci_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "DATABRICKS_"))}
    return {
        **env,
        "CI": "true",
        "NO_COLOR": "1",
        "HOME": str(home),
        "SNOWFLAKE_HOME": str(home / ".snowflake"),
        "SNOWFLAKE_DISABLE_PLATFORM_DETECTION": "true",
        "AWS_EC2_METADATA_DISABLED": "true",
        **extra,
    }


def _introspect(cwd: Path, env: dict[str, str], *extra: str):  # type: ignore[no-untyped-def]
    argv = ["introspect", "--platform", "snowflake", "policies", "--format", "json", *extra]
    return run_process(argv, cwd=cwd, env=env, inherit_env=False, timeout=180)


@pytest.mark.standin
def test_a_login_error_quoting_the_password_is_redacted(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    with echoing_snowflake() as port:
        env = _ci_env(
            tmp_path,
            SNOWFLAKE_ACCOUNT="standin",
            SNOWFLAKE_USER="accord_ci",
            SNOWFLAKE_PASSWORD=PASSWORD,
            SNOWFLAKE_HOST="127.0.0.1",
            SNOWFLAKE_PORT=str(port),
            SNOWFLAKE_PROTOCOL="http",
        )
        run = _introspect(tmp_path, env)
    out = run.stdout + run.stderr
    assert run.returncode == 2, out
    assert "Incorrect username or password" in out  # the platform's message is shown
    assert not leaked(out, PASSWORD), out
    assert secrets.MASK in out


@pytest.mark.parametrize(("mode", "warned"), [(0o644, True), (0o640, True), (0o600, False)])
@pytest.mark.standin
def test_a_connections_file_others_can_read_is_warned_about(
    tmp_path: Path, mode: int, warned: bool
) -> None:
    """The password comes from connections.toml, not the environment: accord still knows it
    (and redacts the platform's echo), and warns when the file is readable by others."""
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    with echoing_snowflake() as port:
        home = tmp_path / ".snowflake"
        home.mkdir()
        connections = home / "connections.toml"
        connections.write_text(
            "[probe]\n"
            'account = "standin"\nuser = "accord_ci"\n'
            f"password = {json.dumps(PASSWORD)}\n"
            f'host = "127.0.0.1"\nport = {port}\nprotocol = "http"\n'
        )
        connections.chmod(mode)
        run = _introspect(tmp_path, _ci_env(tmp_path), "--connection", "probe")
    out = run.stdout + run.stderr
    assert run.returncode == 2, out
    assert not leaked(out, PASSWORD), out
    assert ("readable by group or others" in run.stderr) is warned, run.stderr
    if warned:
        assert str(connections) in run.stderr and "chmod 600" in run.stderr


# --------------------------------------------------------------------------------------------
# an agent that repeats the bearer token in its error


class EchoingAgent(Handler):
    def do_POST(self) -> None:
        self.body()
        auth = self.headers.get("Authorization", "")
        got = auth.removeprefix("Bearer ")
        return self.send_json(
            200,
            {
                "jsonrpc": "2.0",
                "id": "1",
                "error": {
                    "code": -32603,
                    "message": f"upstream refused {auth} (token={quote(got, safe='')})",
                },
            },
        )


@pytest.mark.standin
def test_an_agent_error_quoting_the_token_is_redacted(tmp_path: Path) -> None:
    from http.server import ThreadingHTTPServer

    root = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", root)
    with running(ThreadingHTTPServer(("127.0.0.1", 0), EchoingAgent)) as agent:
        path = root / "surfaces.yaml"
        doc = yaml.safe_load(path.read_text())
        doc["surfaces"]["warehouse_agent"]["a2a"] = {"url": base_url(agent) + "/a2a"}
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        personas = yaml.safe_load((root / "principals.yaml").read_text())["personas"]
        config = tmp_path / "local" / "probe.yaml"
        config.parent.mkdir()
        tokens = {p: {"token": "env:A2A_TOKEN", "origins": [base_url(agent)]} for p in personas}
        config.write_text(yaml.safe_dump({"a2a_tokens": tokens}))
        out = tmp_path / "result.json"
        runs = [
            run_process(
                ["probe", "--live", "policies", "--platform", "a2a", "--format", fmt,
                 "--out", str(out), "--config", str(config)],
                cwd=tmp_path,
                env={"CI": "true", "A2A_TOKEN": TOKEN},
                timeout=120,
            )
            for fmt in ("text", "json", "junit")
        ]  # fmt: skip
    for run in runs:
        assert run.returncode == 1, run.stdout + run.stderr
        shown = run.stdout + run.stderr
        assert "upstream refused" in shown
        assert not leaked(shown, TOKEN), shown
    result = out.read_text()
    assert "upstream refused" in result and not leaked(result, TOKEN), result
