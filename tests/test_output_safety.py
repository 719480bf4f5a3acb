"""Output that people and CI runners read (issue 22, items 13-15): nothing a pull request
commits can drive the terminal, forge a workflow command, or make a machine document invalid.

The repository under test commits what an attacker can: a folder whose name holds a line break
and ``::add-mask::`` (the forged command of the issue), a SQL file whose policy holds an OSC 8
link and a screen clear, a file name that is not UTF-8, and a file that is not UTF-8 (an input
error on stderr, located in the hostile folder). It is cloned fresh and linted by a real
process with ``CI=true``, in every format, and each stream is read as the GitHub Actions runner
reads it (``actions/runner``, ``ActionCommandManager.TryProcessCommand``: a line that starts
with ``::`` after white space is a command, ``TryParseV2``; failing that the legacy
``##[command]`` is looked for anywhere in the line, ``TryParse``; lines split at CR and LF)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from accord.compiler.core.visible import Guard, plain, visible, xml_text
from accord.compiler.meaning.probes import ProbeOutcome
from accord.compiler.probe_live.result import ProbeRun
from tests.cli import ENTRY
from tests.conftest import ROOT
from tests.estates import DIFF_BASE, edited, write_estate

FORGED = "a\n::add-mask::hunter2"
#: a row access policy whose role literal holds an OSC 8 hyperlink, a bell and a screen clear
#: (ACC101: CURRENT_ROLE())
ESCAPES = (
    "CREATE ROW ACCESS POLICY gov.p.rap AS (r VARCHAR) RETURNS BOOLEAN ->\n"
    "  CURRENT_ROLE() = 'A\x1b]8;;https://evil.example\x07B\x1b[2J ##[add-mask]hunter2';\n"
)
BROKEN = (
    "CREATE MASKING POLICY gov.p.m AS (val VARCHAR) RETURNS VARCHAR ->\n"
    "  CASE WHEN CURRENT_ROLE() = 'S' THEN val ELSE '***';\n"
)
NOT_UTF8_NAME = os.fsdecode(b"sql/bad\xff\x1b[31m.snowflake.sql")
#: what a runner or a terminal acts on: C0 controls but tab and line break, DEL, C1 controls,
#: line separators, bidirectional controls, and lone surrogates
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of a repository that commits the hostile files."""
    root = tmp_path_factory.mktemp("hostile")
    repo = root / "repo"
    hostile = repo / "sql" / FORGED
    hostile.mkdir(parents=True)
    shutil.copy(
        ROOT / "examples/sql/heart-of-problem/warehouse.snowflake.sql", hostile / "x.snowflake.sql"
    )
    (hostile / "broken.snowflake.sql").write_text(BROKEN, encoding="utf-8")
    (hostile / "nonutf.snowflake.sql").write_bytes(b"SELECT \xff;\n")
    (repo / "sql" / "esc.snowflake.sql").write_text(ESCAPES, encoding="utf-8")
    (repo / NOT_UTF8_NAME).write_text(ESCAPES, encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a pull request")
    _git(root, "clone", "-q", str(repo), str(root / "clone"))
    return root / "clone"


def _run(argv: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """A real process as CI runs it: bytes out, nothing decoded for it."""
    env = {**os.environ, "CI": "true", "GITHUB_ACTIONS": "true", "NO_COLOR": "1"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([*ENTRY, *argv], cwd=cwd, capture_output=True, env=env, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    return proc.returncode, proc.stdout, proc.stderr


def _runner_lines(stream: bytes) -> list[str]:
    """The stream as UTF-8 (it must be) split as the runner splits it: at CR, LF and CRLF."""
    return re.split(r"\r\n|\r|\n", stream.decode("utf-8"))


def _commands(stream: bytes) -> list[str]:
    """Every line the runner would take for a workflow command (V2 at the start of the line
    after white space; the legacy form anywhere)."""
    return [
        line for line in _runner_lines(stream) if line.lstrip().startswith("::") or "##[" in line
    ]


def _assert_inert(stream: bytes) -> None:
    text = stream.decode("utf-8")  # valid UTF-8, whatever the file names
    assert RAW_CONTROL.search(text) is None, RAW_CONTROL.search(text)
    assert "\r" not in text


FORMATS = ["text", "json", "sarif", "github"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_lint_of_a_hostile_clone_on_ci(clone: Path, fmt: str) -> None:
    code, out, err = _run(["lint", "sql", "--format", fmt], clone)
    assert code == 2  # the file that is not UTF-8 is an input error
    _assert_inert(out)
    _assert_inert(err)
    # stderr: one line per input error, located in the hostile folder, that no runner obeys
    assert _commands(err) == []
    (located, summary, tail) = _runner_lines(err)
    assert located.startswith("sql/a\\u000a::add-mask::hunter2/nonutf.snowflake.sql:1:8: ")
    assert summary == "accord lint: 1 input error" and tail == ""
    if fmt == "github":
        # every stdout line is accord's own annotation; the only command each is its own
        lines = [line for line in _runner_lines(out) if line]
        assert lines and all(re.match(r"::(error|warning|notice) file=", x) for x in lines)
        assert all("##[" not in x for x in lines)
        files = {re.match(r"::\w+ file=([^,]*),", x).group(1) for x in lines}  # type: ignore[union-attr]
        assert "sql/a%0A%3A%3Aadd-mask%3A%3Ahunter2/x.snowflake.sql" in files
        assert "sql/bad\\xff\\u001b[31m.snowflake.sql" in files
    else:
        assert _commands(out) == []
    if fmt == "json":
        doc = json.loads(out)
        files = {f["file"] for f in doc["findings"]}
        assert f"sql/{FORGED}/x.snowflake.sql" in files  # JSON holds the name as it is
        assert "sql/bad\\xff\x1b[31m.snowflake.sql" in files  # its byte shown as text
        assert [e["file"] for e in doc["errors"]] == [f"sql/{FORGED}/nonutf.snowflake.sql"]
    if fmt == "sarif":
        doc = json.loads(out)
        jsonschema.validators.validator_for(SARIF_SCHEMA)(SARIF_SCHEMA).validate(doc)
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in doc["runs"][0]["results"]
        }
        assert "sql/bad%FF%1B%5B31m.snowflake.sql" in uris  # the file's own bytes
    if fmt == "text":
        text = out.decode("utf-8")
        assert (
            "CURRENT_ROLE() = 'A\\u001b]8;;https://evil.example\\u0007B\\u001b[2J ##\\u005badd-mask]hunter2'"
            in text
        )
        assert "sql/a\\u000a::add-mask::hunter2/x.snowflake.sql\n" in text


def test_the_markers_stay_under_their_column(tmp_path: Path) -> None:
    """A character shown as an escape takes that many columns: the caret still points at the
    column of the finding."""
    sql = tmp_path / "m.snowflake.sql"
    sql.write_text(
        "CREATE ROW ACCESS POLICY gov.p.r AS (r VARCHAR) RETURNS BOOLEAN ->\n"
        "  r = '\x1b[1m\x07\t' OR CURRENT_ROLE() = 'A';\n",
        encoding="utf-8",
    )
    _, out, _ = _run(["lint", sql.name], tmp_path)
    lines = out.decode("utf-8").splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  2:"))
    source, marker = lines[at + 2], lines[at + 3]
    assert "\\u001b[1m\\u0007\t" in source
    assert source[marker.index("^") :].startswith("CURRENT_ROLE()")


DIFF_VALUE = "P9 ##[add-mask]hunter2 \u202egnp.exe"


@pytest.fixture(scope="module")
def hostile_diff(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A change that grants a value holding a legacy workflow command and a right-to-left
    override, in a file whose name is not UTF-8 and holds an escape sequence."""
    root = tmp_path_factory.mktemp("diff")

    def hostile(e: dict) -> None:  # type: ignore[type-arg]
        grants = e["entitlements"]["programme"]
        grants[DIFF_VALUE] = grants.pop("P2")

    before = edited(DIFF_BASE, hostile)
    after = edited(before, lambda e: e["entitlements"]["programme"][DIFF_VALUE].append("chemist"))
    write_estate(root / "base", before)
    write_estate(root / "head", after, name=os.fsdecode(b"est\xff\x1b[1m.yaml"))
    return root


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "github"])
def test_diff_of_hostile_values_and_names(hostile_diff: Path, fmt: str) -> None:
    code, out, err = _run(["diff", "head", "--base", "dir:base", "--format", fmt], hostile_diff)
    assert code == 0, err
    for stream in (out, err):
        _assert_inert(stream)
    assert _commands(err) == []
    if fmt == "github":
        said, *lines = [x for x in _runner_lines(out) if x]
        assert said == "::notice title=accord diff%3A base::base: directory base"
        assert lines and all(
            x.startswith("::warning file=head/est\\xff\\u001b[1m.yaml,") for x in lines
        )
        assert all("##[" not in x for x in lines)
    else:
        assert _commands(out) == []
    if fmt == "json":
        doc = json.loads(out.decode("utf-8"))
        assert {c["cause"]["file"] for c in doc["changes"]} == {"head/est\\xff\x1b[1m.yaml"}
        assert any(DIFF_VALUE in c["after_detail"] for c in doc["changes"])  # the value as it is


# ---- probe results: JUnit, JSON and text for any agent answer ---------------------------------

AGENT_SAYS = "clear\x1b]0;owned\x07\x00\x0b\ud800 \udcff ##[add-mask]x\n::error::forged \u202e"


def _run_with_hostile_answers() -> ProbeRun:
    outcome = ProbeOutcome(
        probe="cro_cannot_unmask",
        owner="data-governance\x1b[8m",
        persona="cro_collaborator",
        surface="warehouse_agent",
        expected="masked",
        actual=AGENT_SAYS,
        dataset="assay_results",
        column="SUBJECT_ID",
        detail=f"the agent answered {AGENT_SAYS!s}",
        depth="live",
    )
    twin = ProbeOutcome(**{**outcome.__dict__, "surface": "lakehouse_agent", "actual": "masked"})
    return ProbeRun("live", "f" * 64, None, [outcome, twin], {"cro_cannot_unmask": "q\x1b[2J"})


def test_junit_parses_with_control_characters_in_an_agent_answer() -> None:
    text = _run_with_hostile_answers().render("junit")
    root = ET.fromstring(text.encode("utf-8"))  # an XML parser accepts it
    failures = root.findall(".//failure")
    assert {f.get("type") for f in failures} == {"probe-mismatch", "surfaces-disagree"}
    detail = next(f.text for f in failures if f.get("type") == "probe-mismatch")
    assert detail is not None and "clear\\u001b]0;owned\\u0007\\u0000" in detail
    assert RAW_CONTROL.search(text.replace("\n", "")) is None


def test_probe_json_and_result_file_are_valid_unicode(tmp_path: Path) -> None:
    run = _run_with_hostile_answers()
    doc = json.loads(run.render("json"))
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no lone surrogate left
    (answer,) = {o["actual"] for o in doc["outcomes"]} - {"masked"}
    assert answer.startswith("clear\x1b]0;owned\x07") and "\\ud800 \\xff" in answer
    run.write(tmp_path / "result.json")
    sealed = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert len(sealed["sha256"]) == 64


def test_probe_text_has_no_raw_control_characters() -> None:
    text = _run_with_hostile_answers().render("text")
    assert RAW_CONTROL.search(text) is None
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert "got clear\\u001b]0;owned" in text


# ---- the pieces -----------------------------------------------------------------------------

ORDINARY = ["policies/masks.yaml:3:5", "Zürich – 東京 😀", "a\tb", "CURRENT_ROLE() = 'X'", ""]


@pytest.mark.parametrize("value", ORDINARY)
def test_ordinary_text_is_unchanged(value: str) -> None:
    assert visible(value, "\t") == value
    assert plain({"k": [value]}) == {"k": [value]}


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J", "\\u001b[2J"),
        ("a\nb\r", "a\\u000ab\\u000d"),
        ("\x9b31m", "\\u009b31m"),
        ("\u2028\u202e\u2066", "\\u2028\\u202e\\u2066"),
        (os.fsdecode(b"\xff\xfe"), "\\xff\\xfe"),
        ("\ud800", "\\ud800"),
    ],
)
def test_control_characters_are_shown(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert xml_text(raw).replace("\\u000a", "\n") == shown.replace("\\u000a", "\n")


class _Sink:
    def __init__(self) -> None:
        self.text = ""

    def write(self, text: str) -> int:
        self.text += text
        return len(text)


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        (["::add-mask::x\n"], "\\u003a:add-mask::x\n"),
        (["ok\n  ::error::x\n"], "ok\n  \\u003a:error::x\n"),
        (["a: ", "::b\n"], "a: ::b\n"),  # continues a line: not a command
        (
            ["see ##[add-mask]x ##vso[task.setvariable]y\n"],
            "see ##\\u005badd-mask]x ##vso\\u005btask.setvariable]y\n",
        ),
        (["\x1b]8;;u\x07l\r\n"], "\\u001b]8;;u\\u0007l\\u000d\n"),
        (['{\n  "k": "v\\u00e9"\n}\n'], '{\n  "k": "v\\u00e9"\n}\n'),
    ],
)
def test_the_guard(writes: list[str], expected: str) -> None:
    sink = _Sink()
    guard = Guard(sink)  # type: ignore[arg-type]
    for w in writes:
        assert guard.write(w) == len(w)
    assert sink.text == expected
    assert not hasattr(guard, "buffer")  # no way around it


def test_the_guard_keeps_json_valid() -> None:
    """Its escapes are JSON's: a document with raw controls the encoder leaves (DEL, C1,
    separators) is still the same document after the guard."""
    doc = {"v": "a\x7f\x85\u2028\u202e b", "w": ["##[x]", "::y"]}
    sink = _Sink()
    Guard(sink).write(json.dumps(doc, ensure_ascii=False, indent=2))  # type: ignore[arg-type]
    assert json.loads(sink.text) == doc
    assert RAW_CONTROL.search(sink.text) is None
