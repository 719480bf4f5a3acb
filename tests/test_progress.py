"""Progress (issue 44): every command that can take more than a second (the live reads of
introspect, drift, plan --base live:, probe --live and probe sample; migrate apply and rollback
statement by statement; verify) shows what it is doing on standard error, and only when
standard error is a terminal a person watches and the output is text: never in a pipe, in a
CI log (``CI`` set) or beside a machine format (json, sarif, yaml). Standard output is
byte-identical either way.

The terminal is a real pseudo-terminal (``pty``) on the command's standard error, the command
a real process talking to the stand-ins (slow: several processes); each command's wiring is
also checked in-process, where a recorder stands in for the bar on a terminal."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from accord.compiler.commands import options
from accord.compiler.core import progress as progress_module
from accord.compiler.core.progress import Bar, counted, counting, finished, silent
from tests.cli import ENTRY, run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = str(ROOT / "policies")
INTROSPECT = ["introspect", "--platform", "databricks", POLICIES]


# --- a real terminal


def with_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
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


def without_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, bytes]:
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


def drawn(err: bytes) -> bool:
    """A bar drawn on the terminal: redrawn in place (a carriage return or a cursor move)."""
    return b"\r" in err or b"\x1b[" in err


# slow: introspect and verify, each in a process of their own, nine runs
@pytest.mark.slow
def test_a_terminal_shows_a_bar_and_nothing_else_does(environment: dict[str, str]) -> None:
    code, out, err = with_terminal(INTROSPECT, environment)
    assert code == 0, err
    shown = err.decode("utf-8", "replace")
    assert "databricks: connecting" in shown
    assert "databricks: row filters and column masks in omics" in shown
    assert re.search(r" ([1-9][0-9]*)/\1 ", shown), shown  # a stage's count, drawn complete
    assert drawn(err)
    assert shown.endswith("\x1b[2K") or "\x1b[1A\x1b[2K" in shown  # cleared at the end
    # a pipe, and a CI job's terminal: nothing shown, the same standard output
    for run in (
        without_terminal(INTROSPECT, environment),
        with_terminal(INTROSPECT, {**environment, "CI": "true"}),
    ):
        assert run[0] == 0 and run[1] == out  # byte-identical standard output
        assert b"databricks: " not in run[2] and not drawn(run[2]), run[2]
    # a machine format on a terminal: nothing shown; its output as in a pipe
    machine = [*INTROSPECT, "--format", "json"]
    code, out, err = with_terminal(machine, environment)
    assert code == 0 and b"databricks: " not in err and not drawn(err), err
    assert out.startswith(b"{") and out == without_terminal(machine, environment)[1]
    # verify, which reads no platform
    verify = ["verify", POLICIES]
    code, out, err = with_terminal(verify, environment)
    assert code == 0 and b"verify: every persona's answers on DuckDB" in err and drawn(err)
    assert out == without_terminal(verify, environment)[1]
    code, _, err = with_terminal([*verify, "--format", "json"], environment)
    assert code == 0 and b"verify: " not in err and not drawn(err)


def test_a_terminal_is_one_a_person_watches(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    for key in ("CI", "TERM"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert options.terminal()
    for ci in ("true", "1", "yes"):
        monkeypatch.setenv("CI", ci)
        assert not options.terminal(), ci
    for ci in ("", "0", "false", "FALSE"):
        monkeypatch.setenv("CI", ci)
        assert options.terminal(), ci
    monkeypatch.setenv("TERM", "dumb")
    assert not options.terminal()
    monkeypatch.setenv("TERM", "xterm")
    assert options.terminal()
    assert options.progress("json") is silent and options.progress("yaml") is silent
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert options.progress("text") is silent


# --- each command's wiring


class Recorder:
    """Stands in for the bar on a terminal: what it was told."""

    def __init__(self, made: list[Recorder]) -> None:
        self.stages: list[str] = []
        self.ended = 0
        #: whether a bar would be on the screen now (a stage said, not yet cleared)
        self.drawn = False
        made.append(self)

    def __call__(self, text: str) -> None:
        self.stages.append(text)
        self.drawn = True

    def count(self, total: int) -> Callable[[], None]:
        self.drawn = True
        return lambda: None

    def done(self) -> None:
        self.ended += 1
        self.drawn = False


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[Recorder]]:
    """Call it to make standard error a terminal from then on; it returns the recorders the
    commands made (one a command that shows progress)."""
    made: list[Recorder] = []

    def watch() -> list[Recorder]:
        monkeypatch.setattr(options, "terminal", lambda: True)
        monkeypatch.setattr(progress_module, "Bar", lambda stream: Recorder(made))
        return made

    return watch


def shows(
    argv: list[str], machine: list[str], stage: str, watch: Callable[[], list[Recorder]]
) -> list[str]:
    """``argv`` run without a terminal, then on one, then on one with ``machine``: the stages
    the terminal run showed (one starting ``stage`` at least), its standard output the same as
    without a terminal, and nothing shown beside the machine format."""
    plain = run_cli(argv)
    made = watch()
    shown = run_cli(argv)
    assert (shown.returncode, shown.stdout) == (plain.returncode, plain.stdout)
    assert len(made) == 1 and made[0].ended >= 1  # cleared before the command ended
    stages = made[0].stages
    assert any(s.startswith(stage) for s in stages), stages
    if machine:
        quiet = run_cli([*argv, *machine])
        assert quiet.returncode == plain.returncode, quiet.stderr
        assert len(made) == 1  # no bar made beside a machine format
    return stages


LIVE = {
    "introspect": (INTROSPECT, ["--format", "json"], "databricks: functions in"),
    "introspect --check-reader": (
        [*INTROSPECT, "--check-reader"],
        ["--format", "json"],
        "databricks: what the reading role can see",
    ),
    "drift": (
        ["drift", POLICIES, "--platform", "all"],
        ["--format", "sarif"],
        "snowflake: policies in",
    ),
    "probe sample": (
        ["probe", "sample", POLICIES, "--platform", "snowflake", "--since", "7"],
        ["--format", "yaml"],
        "probe sample: snowflake: reading the access history",
    ),
}


@pytest.mark.parametrize("case", sorted(LIVE))
def test_a_live_read_shows_its_stages(
    platforms: Platforms, terminal: Callable[[], list[Recorder]], case: str
) -> None:
    argv, machine, stage = LIVE[case]
    stages = shows(argv, machine, stage, terminal)
    platform = stage.split(":")[0] if case != "probe sample" else "snowflake"
    assert case == "probe sample" or stages[0] == f"{platform}: connecting", stages


def test_probe_live_shows_its_stage(
    platforms: Platforms, terminal: Callable[[], list[Recorder]], tmp_path: Path
) -> None:
    config = tmp_path / "probe.yaml"
    config.write_text("timeout_seconds: 10\n")
    argv = ["probe", "--live", POLICIES, "--platform", "snowflake", "--config", str(config)]
    shows(argv, ["--format", "json"], "probe --live: asking each probe's persona", terminal)


def test_plan_and_migrate_show_their_stages(
    platforms: Platforms,
    terminal: Callable[[], list[Recorder]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """plan --base live: reads the platform; migrate apply and rollback say each statement,
    and clear the bar before each line they print (a line printed under a drawn bar is drawn
    over at its next redraw)."""
    from accord.compiler.commands import migrate

    plans = tmp_path / "migrations"
    plan = ["plan", POLICIES, "--base", "live:databricks", "--out", str(plans)]
    made = terminal()
    assert run_cli(plan).returncode == 0
    assert "databricks: connecting" in made[0].stages
    under_a_bar: list[str] = []

    def say(line: object, err: bool = False) -> None:
        if any(r.drawn for r in made):
            under_a_bar.append(str(line))
        options.say(line, err)

    monkeypatch.setattr(migrate, "say", say)
    run_on = ["--platform", "databricks", "--plans", str(plans)]
    for verb in (["apply", *run_on, "--policies", POLICIES], ["rollback", *run_on]):
        run = run_cli(["migrate", *verb])
        assert run.returncode == 0, run.stdout + run.stderr
        stages = made[-1].stages
        assert any(re.fullmatch(r"databricks: statement \d+ of \d+", s) for s in stages), stages
    assert len(made) == 3 and under_a_bar == []


def test_verify_shows_its_stages(terminal: Callable[[], list[Recorder]]) -> None:
    stages = shows(
        ["verify", POLICIES], ["--format", "json"], "verify: every persona's answers", terminal
    )
    assert stages[0] == "verify: compiling"


def test_import_shows_its_stages(
    platforms: Platforms, terminal: Callable[[], list[Recorder]], tmp_path: Path
) -> None:
    """accord import (text only): from SQL and from a live platform, the same output with and
    without a terminal."""
    compiled = tmp_path / "compiled"
    assert run_cli(["compile", POLICIES, "--out", str(compiled)]).returncode == 0
    sql = sorted(str(p) for p in (compiled / "databricks").glob("*.sql"))
    argv = [
        ["import", *sql, "--out", "imported"],
        ["import", "--platform", "snowflake", "--out", "imported"],
    ]
    plain = []
    for i, words in enumerate(argv):
        (tmp_path / f"plain{i}").mkdir()
        plain.append(run_cli(words, cwd=tmp_path / f"plain{i}"))
    made = terminal()
    for i, words in enumerate(argv):
        (tmp_path / f"shown{i}").mkdir()
        shown = run_cli(words, cwd=tmp_path / f"shown{i}")
        assert (shown.returncode, shown.stdout) == (plain[i].returncode, plain[i].stdout)
        assert shown.returncode in (0, 1), shown.stderr
    assert len(made) == 2 and all(r.ended >= 1 for r in made)
    assert made[0].stages[0] == "import: reading the SQL"
    assert "import: linting what was written" in made[0].stages
    assert made[1].stages[0] == "snowflake: connecting"


# verify --engine all shows its stages: tests/test_verify_spark.py (it shares that file's Spark)


# --- the pieces


def test_a_plain_callable_is_a_progress_without_counts() -> None:
    seen: list[str] = []
    fn = counted(seen.append, str, [1, 2])
    assert fn is str  # nothing to count: the function itself
    assert list(counting(seen.append, [1, 2])) == [1, 2]
    finished(seen.append)
    assert seen == []
    assert counted(silent, str, [1]) is str and silent("anything") is None


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


def test_a_stage_shows_a_values_control_characters_visibly() -> None:
    import io

    bar = Bar(io.StringIO())
    bar("databricks: grants in \x1b[31mred")
    assert bar._bar.tasks[0].description == "databricks: grants in \\u001b[31mred"
    bar.done()
