"""What a live run shows as it works, on standard error only: on a terminal a transient rich
bar (stages and counts), in CI or when standard error is not a terminal one plain line a stage
(no carriage return, no escape sequence). Standard output is byte-identical either way. The
terminal is a real pseudo-terminal (``pty``) on the command's standard error, the command a
real process talking to the stand-ins."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from accord.compiler.core.progress import Bar, Lines, counted, counting, finished
from tests.cli import ENTRY, run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = str(ROOT / "policies")
INTROSPECT = ["introspect", "--platform", "databricks", POLICIES, "--format", "json"]


def _with_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """``accord ARGV`` with standard error on a pseudo-terminal, standard output on a pipe."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*ENTRY, *argv],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = []
    while True:
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # the other end closed: the process is done with its stderr
            break
        if not chunk:
            break
        seen.append(chunk)
    assert proc.stdout is not None
    out = proc.stdout.read()
    code = proc.wait(timeout=120)
    os.close(master)
    return code, out, b"".join(seen)


def _without_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
    run = subprocess.run(
        [*ENTRY, *argv], cwd=ROOT, env=env, capture_output=True, timeout=120, check=False
    )
    return run.returncode, run.stdout, run.stderr


@pytest.fixture
def environment(platforms: Platforms) -> dict[str, str]:
    """The stand-ins' environment, without CI (a person at a terminal); a little latency so
    that the bar is drawn at least once while a stage runs."""
    platforms.databricks.latency = 0.02
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, "NO_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "160"}


# slow: `accord drift` run twice in a process of its own on a pseudo-terminal
@pytest.mark.slow
def test_a_terminal_shows_a_bar_and_stdout_is_the_same(environment: dict[str, str]) -> None:
    code, out, err = _with_terminal(INTROSPECT, environment)
    assert code == 0, err
    shown = err.decode("utf-8", "replace")
    assert "databricks: row filters and column masks in omics" in shown
    # a stage's count, done/total, drawn complete
    assert re.search(r" ([1-9][0-9]*)/\1 ", shown), shown
    assert "\r" in shown and "\x1b[" in shown  # a bar redrawn in place...
    assert shown.endswith("\x1b[2K") or "\x1b[1A\x1b[2K" in shown  # ...and cleared at the end
    plain_code, plain_out, plain_err = _without_terminal(INTROSPECT, environment)
    assert plain_code == 0 and out == plain_out  # byte-identical standard output
    assert b"\r" not in plain_err and b"\x1b" not in plain_err
    lines = plain_err.decode().splitlines()
    assert "accord: databricks: row filters and column masks in omics" in lines
    # a stage that reads several objects says how many, once it knows
    assert any(re.fullmatch(r"accord: databricks: .+ \([1-9][0-9]*\)", line) for line in lines)


# slow: `accord drift` in a process of its own on a pseudo-terminal
@pytest.mark.slow
def test_ci_on_a_terminal_gets_plain_lines(environment: dict[str, str]) -> None:
    """``CI`` set: one line a stage even when standard error is a terminal."""
    code, _, err = _with_terminal(INTROSPECT, {**environment, "CI": "true"})
    assert code == 0
    assert b"\x1b" not in err
    lines = err.decode().replace("\r\n", "\n").splitlines()
    assert "accord: databricks: functions in governance.policies" in lines


def test_without_a_terminal_one_line_a_stage(platforms: Platforms) -> None:
    code, out, err = run_cli(["drift", POLICIES, "--platform", "snowflake", "--format", "json"])
    assert code == 1 and out.startswith("{")
    assert "\r" not in err and "\x1b" not in err
    stages = [line for line in err.splitlines() if line.startswith("accord: snowflake: ")]
    assert stages[:2] == [
        "accord: snowflake: mapping tables in GOVERNANCE.POLICIES",
        "accord: snowflake: policies in GOVERNANCE.POLICIES",
    ]
    assert len(stages) == len(set(stages))  # each stage said once


def test_probe_live_says_its_stage(platforms: Platforms, tmp_path: Path) -> None:
    config = tmp_path / "probe.yaml"
    config.write_text("timeout_seconds: 10\n")
    argv = ["probe", "--live", POLICIES, "--platform", "snowflake", "--config", str(config)]
    code, _, err = run_cli(argv)
    assert code in (0, 1), err
    stages = [line for line in err.splitlines() if line.startswith("accord: probe --live")]
    assert len(stages) == 1 and stages[0].startswith(
        "accord: probe --live: asking each probe's persona ("
    )


class _Collect:
    def __init__(self, into: list[str]) -> None:
        self.into = into

    def write(self, text: str) -> None:
        self.into += text.splitlines()

    def flush(self) -> None:
        pass


def test_lines_say_each_stage_once_with_its_first_count() -> None:
    said: list[str] = []
    lines = Lines(lambda: _Collect(said))
    lines("snowflake: policies in G")
    assert said == []  # said when its count is known, or when it ends
    done = [x * 2 for x in map(counted(lines, lambda x: x, [1, 2, 3]), [1, 2, 3])]
    assert done == [2, 4, 6]
    lines("snowflake: tags in G")
    lines("snowflake: tags in G")  # the same stage again: one line
    list(counting(lines, []))
    lines("snowflake: policy references\x1b[31m")
    finished(lines)
    assert said == [
        "accord: snowflake: policies in G (3)",
        "accord: snowflake: tags in G",
        "accord: snowflake: policy references\\u001b[31m",  # a value's control written visibly
    ]


def test_a_plain_callable_is_a_progress_without_counts() -> None:
    seen: list[str] = []
    fn = counted(seen.append, str, [1, 2])
    assert fn is str  # nothing to count: the function itself
    assert list(counting(seen.append, [1, 2])) == [1, 2]
    finished(seen.append)
    assert seen == []


def test_the_bar_counts_on_any_thread() -> None:
    """The readers count from their pool threads (``--jobs``): every tick is counted."""
    import io
    from concurrent.futures import ThreadPoolExecutor

    stream = io.StringIO()
    bar = Bar(stream)
    bar("databricks: grants")
    work = counted(bar, lambda n: n, list(range(200)))
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sum(pool.map(work, range(200))) == sum(range(200))
    task = bar._bar.tasks[0]
    assert (task.completed, task.total) == (200, 200)
    bar.done()
    assert bar._bar is None and sys.modules.get("rich") is not None
