"""One scrubber for every message (issue 39, item 3): a secret a platform quotes back never
reaches accord's output, whatever path the platform's words take and whatever the format.

The stand-ins quote the Snowflake password and the Databricks token back in the errors they
give (``Estate.deny_on``: a privilege denial that repeats, raw, URL-encoded and JSON-escaped,
what the client sent), on every path where accord shows what a platform said: a read refused
during drift (ACC707's reason) and introspect (the coverage), the access history refused in
``probe sample`` (its NOT READ line), a statement refused in ``migrate apply`` (its failure
and the ledger), and a login refused (the connection error). Each runs in every format the
command has; none may show the secret in any of the forms it comes back in. A salt written
inline in the model and an A2A token written as a bare string are refused without being
shown, naming the key and telling the user to rotate it.

Below, the scrubber itself: every output format's escaping of a secret (GitHub annotation,
Markdown, JUnit attribute) is a form it removes, and the one gate on standard output and
standard error scrubs what no earlier step did.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus
from xml.etree import ElementTree

import pytest
import yaml

from accord.compiler.connect.denials import classify
from accord.compiler.connect.executor import DeniedError, ExecutionError, as_reader
from accord.compiler.core import markdown, secrets
from accord.compiler.core.annotations import annotation
from accord.compiler.core.errors import Location
from accord.compiler.core.visible import guarded
from accord.sandbox.standins.http import Handler, serve
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import SALTS, SharedPlatforms
from tests.test_secret_redaction import EchoingLogin, leaked

POLICIES = ROOT / "policies"
#: the Snowflake password and Databricks token of every run here: each character a format
#: escapes (JSON, SQL, HTML and XML, URL, GitHub annotations, Markdown) is in one of them
PASSWORD = "Pa55\"w/rd:+é x&<1>,%|*_'"
TOKEN = "dapi-Ech0/ed+tok==:%,|"
MAPPING = {
    "snowflake": "GOVERNANCE.POLICIES.PROGRAMME_GRANTS",
    "databricks": "governance.policies.programme_grants",
}
HISTORY = {"snowflake": "ACCOUNT_USAGE.ACCESS_HISTORY", "databricks": "system.query.history"}


def cases(every: list[tuple[Any, ...]], keep: set[tuple[Any, ...]]) -> list[Any]:
    """Each case of ``every`` as parameters, named, all but ``keep`` marked slow (the fast
    tier runs a fixed few, as :func:`tests.conftest.fast_sample` does for single values)."""
    return [
        pytest.param(
            *c,
            marks=() if c in keep else pytest.mark.slow,
            id="-".join(
                str(x)
                for part in c
                for x in (part if isinstance(part, tuple) else (part,))
                if not str(x).startswith("--") and x not in ("7", "PLANS")
            ),
        )
        for c in every
    ]


def secret_of(platform: str) -> str:
    return PASSWORD if platform == "snowflake" else TOKEN


def echo(value: str) -> str:
    """What a platform that quotes its input says: the value raw, form-encoded and in JSON."""
    return (
        f"Insufficient privileges for the login sent with {value} "
        f"(form: secret={quote_plus(value)}; json: {json.dumps(value)})"
    )


def clean(text: str, value: str) -> None:
    """``text`` holds the platform's words, and the secret in none of its forms."""
    assert not leaked(text, value), text
    assert secrets.MASK in text and "Insufficient privileges" in text, text


@pytest.fixture(scope="module")
def deployed(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    """policies/ deployed on both stand-ins, once for this file."""
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp):
        plans = tmp / "migrations"
        assert run_cli(["plan", str(POLICIES), "--base", "live:all", "--out", str(plans)])[0] == 0
        for platform in ("snowflake", "databricks"):
            code, out, err = run_cli(
                ["migrate", "apply", "--platform", platform, "--plans", str(plans),
                 "--policies", str(POLICIES)]
            )  # fmt: skip
            assert code == 0, out + err
    return shared_platforms


@pytest.fixture
def echoing(deployed: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The deployed stand-ins, logged into with PASSWORD and TOKEN (the stand-ins take any)."""
    platforms = deployed.reset(monkeypatch)
    monkeypatch.setenv("SNOWFLAKE_PASSWORD", PASSWORD)
    monkeypatch.setenv("DATABRICKS_TOKEN", TOKEN)
    return platforms


READS = [
    (command, platform, fmt)
    for command, formats in (("drift", ("text", "json", "sarif")), ("introspect", ("text", "json")))
    for platform in ("snowflake", "databricks")
    for fmt in formats
]


@pytest.mark.parametrize(
    ("command", "platform", "fmt"),
    cases(READS, {("drift", "snowflake", "sarif"), ("introspect", "databricks", "json")}),
)
def test_a_refused_read_quoting_the_secret_is_scrubbed(
    echoing: Any, command: str, platform: str, fmt: str
) -> None:
    """ACC707's reason (drift) and the coverage (introspect) say what the platform said."""
    getattr(echoing, platform).deny_on[f"FROM {MAPPING[platform]} ORDER BY"] = echo(
        secret_of(platform)
    )
    code, out, err = run_cli([command, str(POLICIES), "--platform", platform, "--format", fmt])
    assert code == (1 if command == "drift" else 0), out + err  # introspect reports, drift judges
    clean(out + err, secret_of(platform))
    if fmt != "text":
        json.loads(out)


@pytest.mark.parametrize(
    ("platform", "fmt"),
    cases(
        [(p, f) for p in ("snowflake", "databricks") for f in ("text", "json", "yaml")],
        {("snowflake", "text"), ("databricks", "yaml")},
    ),
)
def test_a_refused_history_quoting_the_secret_is_scrubbed(
    echoing: Any, platform: str, fmt: str
) -> None:
    """probe sample's NOT READ line (and its coverage's reason) in every format."""
    getattr(echoing, platform).deny_on[HISTORY[platform]] = echo(secret_of(platform))
    code, out, err = run_cli(
        ["probe", "sample", str(POLICIES), "--platform", platform, "--since", "7", "--format", fmt]
    )
    assert code == 0, out + err
    clean(out + err, secret_of(platform))
    if fmt == "text":
        assert f"{platform}: NOT READ: denied: the reading role" in out
    else:
        doc = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        (coverage,) = doc["coverage"]
        assert coverage["read"] == {"queries": 0} and not coverage["complete"]


#: a fragment of each platform's salt function statement: the salt in it, filled in as sent
SALT_FUNCTION = {
    "snowflake": "SECURE FUNCTION",
    "databricks": "FUNCTION governance.policies.subject",
}


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_a_refused_statement_of_migrate_apply_quoting_the_secret_is_scrubbed(
    platforms: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str
) -> None:
    """The stage's failure on the terminal (and the ledger): the platform quotes the login's
    secret, and the statement it refused with the salt in it."""
    monkeypatch.setenv("SNOWFLAKE_PASSWORD", PASSWORD)
    monkeypatch.setenv("DATABRICKS_TOKEN", TOKEN)
    salt = SALTS[f"SUBJECT_SALT_{platform.upper()}"]
    plans = tmp_path / "migrations"
    code, out, err = run_cli(
        ["plan", str(POLICIES), "--base", f"live:{platform}", "--out", str(plans)]
    )
    assert code == 0, out + err
    estate = getattr(platforms, platform)
    estate.deny_on[SALT_FUNCTION[platform]] = echo(secret_of(platform)) + " in: {statement}"
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans),
         "--policies", str(POLICIES)]
    )  # fmt: skip
    assert code == 1, out + err
    assert SALT_FUNCTION[platform] in out + err  # the statement the salt was sent in, quoted
    clean(out + err, secret_of(platform))
    assert not leaked(out + err, salt), out + err
    ledger = (plans / "ledger.jsonl").read_text()  # it records the failure, never what was said
    assert '"status": "failed"' in ledger
    assert not leaked(ledger, secret_of(platform)) and not leaked(ledger, salt), ledger


class EchoingWorkspace(Handler):
    """A Databricks workspace that refuses every call, quoting the bearer token it was sent
    (raw and URL-encoded), as a misconfigured proxy in front of one does."""

    def _refuse(self) -> None:
        self.body() if self.command == "POST" else None
        sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        self.send_json(
            401,
            {
                "error_code": "UNAUTHENTICATED",
                "message": f"Insufficient privileges: token {sent} ({quote_plus(sent)}) refused",
            },
        )

    do_GET = do_POST = _refuse


@contextmanager
def refusing_login(platform: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``platform``'s login answered by a server that quotes the secret back."""
    for name in [n for n in os.environ if n.startswith(("SNOWFLAKE_", "DATABRICKS_"))]:
        monkeypatch.delenv(name)
    handler = EchoingLogin if platform == "snowflake" else EchoingWorkspace
    with serve(handler) as port:
        if platform == "snowflake":
            for name, value in {
                "SNOWFLAKE_ACCOUNT": "standin", "SNOWFLAKE_USER": "accord_ci",
                "SNOWFLAKE_PASSWORD": PASSWORD, "SNOWFLAKE_HOST": "127.0.0.1",
                "SNOWFLAKE_PORT": str(port), "SNOWFLAKE_PROTOCOL": "http",
                "SNOWFLAKE_HOME": "/nonexistent/.snowflake",
                "SNOWFLAKE_DISABLE_PLATFORM_DETECTION": "true",
            }.items():  # fmt: skip
                monkeypatch.setenv(name, value)
        else:
            for name, value in {
                "DATABRICKS_HOST": f"http://127.0.0.1:{port}", "DATABRICKS_TOKEN": TOKEN,
                "DATABRICKS_WAREHOUSE_ID": "wh", "DATABRICKS_CONFIG_FILE": "/nonexistent/.cfg",
            }.items():  # fmt: skip
                monkeypatch.setenv(name, value)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        yield


LOGINS = [
    (platform, tuple(argv))
    for platform in ("snowflake", "databricks")
    for argv in (
        *(["drift", "--format", f] for f in ("text", "json", "sarif")),
        *(["introspect", "--format", f] for f in ("text", "json")),
        *(["probe", "sample", "--since", "7", "--format", f] for f in ("text", "json", "yaml")),
        ["plan", "--base", f"live:{platform}", "--out", "PLANS"],
    )
]


@pytest.mark.standin
@pytest.mark.parametrize(
    ("platform", "argv"),
    cases(LOGINS, {LOGINS[1], LOGINS[-2]}),
)
def test_a_refused_login_quoting_the_secret_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: str, argv: tuple[str, ...]
) -> None:
    """The connection error, in every format of every live command."""
    args = [a.replace("PLANS", str(tmp_path / "plans")) for a in argv]
    command = args[:2] if args[0] == "probe" else args[:1]
    rest = args[len(command) :]
    if args[0] != "plan":
        rest += ["--platform", platform]
    with refusing_login(platform, monkeypatch):
        code, out, err = run_cli([*command, str(POLICIES), *rest])
    assert code == 2, out + err
    text = out + err
    assert not leaked(text, secret_of(platform)), text
    assert secrets.MASK in text, text
    assert not (tmp_path / "plans").exists()


# --------------------------------------------------------------------------------------------
# what the model and the probe configuration hold


def test_a_salt_written_inline_is_refused_unshown(tmp_path: Path) -> None:
    salt = "n0rthw1nd-s4lt"
    root = tmp_path / "policies"
    root.mkdir()
    for path in POLICIES.glob("*.yaml"):
        (root / path.name).write_text(path.read_text())
    masks = root / "masks.yaml"
    text = masks.read_text()
    assert text.count("env:SUBJECT_SALT_SNOWFLAKE") == 1
    masks.write_text(text.replace("env:SUBJECT_SALT_SNOWFLAKE", f'"{salt}"'))
    for argv in (
        ["validate"],
        *(["lint", "--format", f] for f in ("text", "json", "sarif", "github")),
        ["compile", "--out", str(tmp_path / "out")],
    ):
        code, out, err = run_cli([argv[0], str(root), *argv[1:]])
        assert code == 2, out + err
        shown = out + err
        assert salt not in shown and "n0rthw1nd" not in shown, shown
        assert "masks.subject_pseudonym.salt.snowflake" in shown
        assert "not a salt reference" in shown and "rotate it" in shown
    assert not (tmp_path / "out").exists()


def test_a_bare_a2a_token_in_the_probe_config_is_refused_unshown(tmp_path: Path) -> None:
    token = "sk-live-2f8a91c0d4e6b7a3"
    config = tmp_path / "probe.yaml"
    config.write_text(yaml.safe_dump({"a2a_tokens": {"cro_collaborator": token}}))
    for fmt in ("text", "json", "junit"):
        code, out, err = run_cli(
            ["probe", "--live", str(POLICIES), "--platform", "a2a", "--config", str(config),
             "--format", fmt]
        )  # fmt: skip
        assert code == 2, out + err
        assert token not in out + err and "sk-live" not in out + err
        assert f"{config}:2:" in err and "a2a_tokens: cro_collaborator" in err
        assert "rotate it" in err


def test_a_probe_config_that_is_not_yaml_never_quotes_its_line(tmp_path: Path) -> None:
    """PyYAML's message quotes the line it stopped at: the problem is said, not the line."""
    token = "sk-live-2f8a91c0d4e6b7a3"
    config = tmp_path / "probe.yaml"
    config.write_text(f"a2a_tokens:\n  cro_collaborator: {{token: {token}]}}\n")
    code, out, err = run_cli(
        ["probe", "--live", str(POLICIES), "--platform", "a2a", "--config", str(config)]
    )
    assert code == 2 and "not valid YAML" in err, out + err
    assert token not in out + err


# --------------------------------------------------------------------------------------------
# the scrubber


@pytest.fixture
def known(monkeypatch: pytest.MonkeyPatch) -> str:
    for name in secrets.SECRET_ENV:
        monkeypatch.delenv(name, raising=False)
    secrets.register(PASSWORD)
    return PASSWORD


def test_every_output_formats_spelling_of_a_secret_is_scrubbed(known: str) -> None:
    where = Location("policies/x.yaml", 1, 1)
    element = ElementTree.Element("failure", message=f"said {known}")
    element.text = f"said {known}"
    rendered = {
        "github": annotation("error", where, f"t {known}", f"said {known}"),
        "markdown": markdown.text(f"said {known}"),
        "markdown code": markdown.code(f"said {known}"),
        "junit": ElementTree.tostring(element, encoding="unicode"),
        "json": json.dumps({"m": f"said {known}"}),
        "json ascii": json.dumps({"m": f"said {known}"}, ensure_ascii=False),
        "yaml": yaml.safe_dump({"m": f"said {known}"}, allow_unicode=True),
    }
    for fmt, text in rendered.items():
        assert "Pa55" in text, (fmt, text)  # the secret is there, in that format's spelling
        scrubbed = secrets.redact(text)
        assert "Pa55" not in scrubbed and "rd:" not in scrubbed, (fmt, scrubbed)
        assert scrubbed.count(secrets.MASK) == text.count("Pa55"), (fmt, scrubbed)


def test_the_output_gate_scrubs_what_no_step_before_it_did(known: str) -> None:
    """Every write to standard output passes the scrubber, in the entry point's guard."""
    buffer = io.StringIO()
    with redirect_stdout(buffer), guarded(secrets.redact):
        print(json.dumps({"message": f"the platform said {known}"}))
    assert "Pa55" not in buffer.getvalue() and secrets.MASK in buffer.getvalue()


def test_a_denial_holds_no_secret_and_a_reader_says_none(known: str) -> None:
    """The denial a platform's error is classified as keeps what the platform said, scrubbed;
    so does what a read says of it (a secret registered after the error included)."""
    from snowflake.connector.errors import ProgrammingError

    said = f"003001 (42501): SQL access control error: Insufficient privileges ({known})"
    err = ProgrammingError(msg=said, errno=3001, sqlstate="42501")
    denial = classify("snowflake", err, "SELECT K FROM GOVERNANCE.POLICIES.G ORDER BY 1, 2")
    assert denial is not None and "Pa55" not in denial.said and secrets.MASK in denial.said
    failure = DeniedError(denial, said, {})
    assert "Pa55" not in as_reader(failure, "ACCORD_READER")
    later = "a-secret-registered-later"
    captured = ExecutionError(f"no: {later}")  # captured before it is known
    assert later in str(captured)
    secrets.register(later)
    assert later not in as_reader(captured, "R") and secrets.MASK in as_reader(captured, "R")


def test_every_report_file_passes_the_scrubber(known: str, tmp_path: Path) -> None:
    """The files accord writes beside its output: the mesh manifest (agents' cards come from
    the network), the probe result, the ledger of applied stages."""
    from accord.compiler.gate.manifest import Built, write_manifest
    from accord.compiler.history.ledger import append_record
    from accord.compiler.probe_live.result import ProbeRun

    write_manifest(Built({"card": {"description": f"served {known}"}}), str(tmp_path / "m.json"))
    run = ProbeRun("live", f"fp {known}", None, [])
    run.write(tmp_path / "result.json")
    record = {
        "plan": "p", "stage": f"s {known}", "platform": "snowflake", "status": "failed",
        "at": "2026-12-01T00:00:00+00:00", "sha256": "0" * 64,
    }  # fmt: skip
    append_record(tmp_path / "ledger.jsonl", record)
    for name in ("m.json", "result.json", "ledger.jsonl"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert not leaked(text, known) and secrets.MASK in text, (name, text)
        json.loads(text)
