"""Hostile-but-plausible input ends in a clear message, never a traceback (issue 22 item 17).

Each row is an input a pull request or a platform can hand accord: deep Jinja nesting (a
generated dbt macro), a column type with a statement after it, deep or non-UTF-8 TOML
configuration, probe configurations that are not UTF-8, not a mapping, mistyped or a
symlink to /dev/zero, and a NUL byte in a SQL file (located on main already: kept here so it
stays located). Every one exits 1 with a located ACC001 or 2 with ``file:line:column``.
Below the table: a deep A2A JSON answer, live rows of the wrong shape and a deep live
policy body, each read by the function that takes them from the network.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.core.errors import UsageError
from accord.compiler.model.validate import load_project
from accord.compiler.probe_live.a2a import A2AError, send_message
from accord.sandbox.standins.http import running
from accord.targets import lower_all
from accord.targets.inspect import introspect
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "as-found"
POLICY = (
    "CREATE MASKING POLICY gov.p.mask_email AS (val string) RETURNS string ->\n"
    "  CASE WHEN IS_ROLE_IN_SESSION('ANALYST') THEN val ELSE '***' END;\n"
)


def _sql(name: str, text: str | bytes) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        path = tmp / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return ["lint", name]

    return setup


def _argument_type(type_text: str) -> Callable[[Path], list[str]]:
    """The example's hand-written row filter with ``type_text`` as its argument's type."""

    def setup(tmp: Path) -> list[str]:
        shutil.copytree(EXAMPLE, tmp / "policies")
        path = tmp / "policies" / "datasets.yaml"
        text = path.read_text(encoding="utf-8")
        old = "arguments: {PROGRAMME_CODE: VARCHAR}"
        assert old in text
        path.write_text(text.replace(old, f"arguments: {{PROGRAMME_CODE: '{type_text}'}}"))
        return ["validate", "policies"]

    return setup


def _lint_config(content: bytes, name: str = "accord.toml") -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        (tmp / name).write_bytes(content)
        (tmp / "ok.sql").write_text(POLICY)
        return ["lint", "ok.sql"]

    return setup


def _probe_config(content: bytes | None) -> Callable[[Path], list[str]]:
    """``accord probe --live`` with ``content`` as its config (None: a symlink to /dev/zero)."""

    def setup(tmp: Path) -> list[str]:
        path = tmp / "probe.yaml"
        if content is None:
            path.symlink_to("/dev/zero")
        else:
            path.write_bytes(content)
        return ["probe", "--live", "--config", "probe.yaml", str(EXAMPLE)]

    return setup


@dataclass(frozen=True)
class Case:
    name: str
    setup: Callable[[Path], list[str]]
    code: int
    #: regex of the location, then a part of the message
    where: str
    message: str


#: a probe config with one persona's token (the cases below break one part of it)
TOKENS = b"timeout_seconds: 5\na2a_tokens:\n  analyst:\n    token: env:T\n    origins: [https://a.example]\n"
DEEP_IF = "select 1;\n" + "{% if a %}\n" * 1500 + POLICY + "{% endif %}\n" * 1500
CASES = [
    Case(
        "deep-jinja-tags",
        _sql("deep.sql", DEEP_IF),
        1,
        r"deep.sql\n  2:1  error  ACC001",
        "the Jinja template cannot be read: it nests too deeply",
    ),
    Case(
        "deep-jinja-expression",
        _sql("deep.sql", "select {{ " + "(" * 3000 + "1" + ")" * 3000 + " }};\n" + POLICY),
        1,
        r"deep.sql\n  1:1  error  ACC001",
        "it nests too deeply",
    ),
    Case(
        "nul-byte-located-at-its-line",
        _sql("nul.sql", b"select 1;\nselect 2;\nselect 3\x00;\n"),
        2,
        r"nul.sql:3:9: ",
        "it holds a NUL byte",
    ),
    Case(
        "statement-after-an-argument-type",
        _argument_type("VARCHAR; DROP TABLE GOVERNANCE.POLICIES.PROGRAMME_GRANTS"),
        2,
        r"datasets.yaml:26:35: ",
        "is not a snowflake data type",
    ),
    Case(
        "comment-in-an-argument-type",
        _argument_type("VARCHAR /* x"),
        2,
        r"datasets.yaml:26:35: ",
        "is not a snowflake data type",
    ),
    Case(
        "deep-toml",
        _lint_config(b"[lint]\nselect = " + b"[" * 5000 + b"]" * 5000 + b"\n"),
        2,
        r"accord.toml:2:\d+: ",
        "invalid TOML: arrays or inline tables nest too deeply",
    ),
    Case(
        "non-utf8-toml",
        _lint_config(b'[lint]\nselect = ["\xff"]\n'),
        2,
        r"accord.toml:2:\d+: ",
        "not valid UTF-8",
    ),
    Case(
        "non-utf8-pyproject",
        _lint_config(b'[tool.accord]\nx = "\xff"\n', "pyproject.toml"),
        2,
        r"pyproject.toml:2:\d+: ",
        "not valid UTF-8",
    ),
    Case(
        "probe-config-not-utf8",
        _probe_config(b'a2a_tokens: "\xff"\n'),
        2,
        r"probe.yaml:1:14: ",
        "not valid UTF-8",
    ),
    Case(
        "probe-config-a-list",
        _probe_config(b"- snowflake\n- databricks\n"),
        2,
        r"probe.yaml:1:1: ",
        "a mapping of settings expected, not list",
    ),
    Case(
        "probe-config-dev-zero",
        _probe_config(None),
        2,
        r"probe.yaml:1:1: ",
        "not a regular file",
    ),
    Case(
        "probe-config-section-a-list",
        _probe_config(b"snowflake: [connection]\n"),
        2,
        r"probe.yaml:1:12: ",
        "snowflake must be a mapping, not list",
    ),
    Case(
        "probe-config-profiles-a-list",
        _probe_config(b"databricks:\n  probe_profiles: [analyst]\n"),
        2,
        r"probe.yaml:2:19: ",
        "databricks.probe_profiles must be a mapping, not list",
    ),
    Case(
        "probe-config-number-and-name-keys",
        _probe_config(b"timeout_seconds: 5\nsnowflak: y\n1: x\n"),
        2,
        r"probe.yaml:2:1: ",  # the first unknown key written
        "unknown key(s) 1, snowflak",
    ),
    Case(
        "probe-config-deep",
        _probe_config(b"a2a_tokens: " + b"[" * 3000 + b"]" * 3000 + b"\n"),
        2,
        r"probe.yaml:1:3012: ",  # the deepest bracket
        "nested too deeply",
    ),
    Case(
        "probe-config-profile-not-a-name",
        _probe_config(b"databricks:\n  probe_profiles:\n    analyst: [x]\n"),
        2,
        r"probe.yaml:3:14: ",
        "databricks.probe_profiles.analyst must be a profile name, not list",
    ),
    Case(
        "probe-config-timeout",
        _probe_config(b"a2a_tokens: {}\ntimeout_seconds: 0\n"),
        2,
        r"probe.yaml:2:18: ",
        "timeout_seconds: a number in (0, 600]",
    ),
    Case(
        "probe-config-token-not-env",
        _probe_config(TOKENS.replace(b"env:T", b"plain")),
        2,
        r"probe.yaml:4:12: ",
        "a2a_tokens: analyst.token must be env:NAME",
    ),
    Case(
        "probe-config-origin-not-an-origin",
        _probe_config(TOKENS.replace(b"]", b", ftp://x]")),
        2,
        r"probe.yaml:5:34: ",
        "a2a_tokens: analyst.origins: 'ftp://x' is not an origin",
    ),
    Case(
        "probe-config-token-keys",
        _probe_config(TOKENS + b"    extra: 1\n"),
        2,
        r"probe.yaml:4:5: ",
        "a2a_tokens: analyst: exactly the keys token and origins",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_input_ends_in_a_located_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = case.setup(tmp_path)
    code, out, err = run_cli(argv, cwd=tmp_path)
    both = out + err
    assert code == case.code, both
    assert "Traceback" not in both and "internal error" not in both, both
    assert re.search(case.where, both), both
    assert case.message in both, both


# ---------------------------------------------------------------------------- network answers


@pytest.fixture
def deep_agent() -> Iterator[str]:
    """An A2A endpoint whose answer is JSON nested 100 000 levels deep."""

    class Agent(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b'{"jsonrpc": "2.0", "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with running(HTTPServer(("127.0.0.1", 0), Agent)) as server:
        yield f"http://127.0.0.1:{server.server_port}/a2a"


@pytest.mark.standin
def test_a_deeply_nested_agent_answer_is_an_a2a_error(deep_agent: str) -> None:
    with pytest.raises(A2AError, match="nested deeper than"):
        send_message(deep_agent, "who sees ONC-101?", timeout=10)


class _Rows:
    """A Snowflake session answering each query with the rows of the first matching prefix."""

    def __init__(self, answers: dict[str, list[Any]]) -> None:
        self.answers = answers

    def query(self, sql: str) -> list[Any]:
        for prefix, rows in self.answers.items():
            if sql.startswith(prefix):
                return rows
        return []


def _snowflake_catalog() -> Any:
    return lower_all(load_project(EXAMPLE))["snowflake"]


_POLICY_ROW = {"database_name": "GOVERNANCE", "schema_name": "POLICIES", "name": "P"}


@pytest.mark.parametrize(
    "answers,message",
    [
        (
            {"SHOW ROW ACCESS": [_POLICY_ROW], "DESCRIBE": [{"body": "TRUE"}]},
            "no column 'signature'",
        ),
        ({"SHOW ROW ACCESS": ["not a row"]}, "AttributeError"),
        ({"SHOW ROW ACCESS": [_POLICY_ROW], "DESCRIBE": [{"signature": "(V VARCHAR)"}]}, "body"),
        (
            {
                "SHOW ROW ACCESS POLICIES IN ACCOUNT": [_POLICY_ROW],
                "SELECT * FROM TABLE": [
                    {
                        "ref_database_name": "DISCOVERY",
                        "ref_schema_name": "ASSAYS",
                        "ref_entity_name": "RESULTS",
                        "policy_db": "GOVERNANCE",
                        "policy_schema": "POLICIES",
                        "policy_name": "P",
                        "ref_arg_column_names": "[not json",
                        "policy_kind": "ROW_ACCESS_POLICY",
                    }
                ],
            },
            "JSONDecodeError",
        ),
    ],
    ids=["missing-column", "row-not-a-mapping", "describe-without-body", "json-column-not-json"],
)
def test_live_rows_of_the_wrong_shape_are_a_usage_error(
    answers: dict[str, list[Any]], message: str
) -> None:
    with pytest.raises(UsageError, match="answered in a shape accord cannot read") as err:
        introspect("snowflake", _Rows(answers), _snowflake_catalog(), lambda _: None)
    assert message in str(err.value)


def test_a_deep_live_policy_body_is_unreadable_not_a_crash() -> None:
    body = "(" * 5000 + "TRUE" + ")" * 5000
    answers = {
        "SHOW ROW ACCESS": [_POLICY_ROW],
        "DESCRIBE": [{"body": body, "signature": "(V VARCHAR)", "return_type": "BOOLEAN"}],
    }
    live = introspect("snowflake", _Rows(answers), _snowflake_catalog(), lambda _: None)
    assert [u for u in live.unreadable if u.startswith("GOVERNANCE.POLICIES.P:")] == [
        "GOVERNANCE.POLICIES.P: its body nests 5000 parentheses deep, deeper than accord's "
        "SQL parser follows; it is not compared"
    ]


class _Session(_Rows):
    def close(self) -> None:
        return None


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_live_rows_of_the_wrong_shape_are_located_in_the_model(
    monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """``accord drift`` over a platform whose DESCRIBE answer lacks a column: exit 2, the
    error located at the model's ``governance_schema`` of that platform (what was being read),
    not at the policy directory's 1:1, in every format."""
    import json

    import accord.compiler.live.session as session

    answers = {"SHOW ROW ACCESS": [_POLICY_ROW], "DESCRIBE": [{"body": "TRUE"}]}
    monkeypatch.setattr(session, "open_executor", lambda *a, **k: _Session(answers))
    lines = (EXAMPLE / "platforms.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "governance_schema" in t)
    column = lines[line - 1].index("governance_schema") + len("governance_schema: ") + 1
    where = f"platforms.yaml:{line}:{column}"
    code, out, err = run_cli(["drift", str(EXAMPLE), "--platform", "snowflake", "--format", fmt])
    assert code == 2, out + err
    assert f"{where}: snowflake answered in a shape accord cannot read" in err or fmt != "text"
    if fmt == "json":
        (error,) = json.loads(out)["errors"]
        assert (error["line"], error["column"]) == (line, column), error
        assert error["file"].endswith("platforms.yaml")
    if fmt == "sarif":
        (note,) = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        region = note["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["startColumn"]) == (line, column), note
