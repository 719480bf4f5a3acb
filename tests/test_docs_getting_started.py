"""docs/getting-started.md's live loop runs as the page writes it, from an empty directory.

Every ```console block of the page is played in order, in a fresh virtual environment and an
empty working directory, as one terminal would: ``pip install`` of the checkout, ``accord
init``, the tutorial's estate copied in (docs/tutorial/first-estate/, not the reference estate),
``accord sandbox`` in the background, then plan, apply, drift and ``probe --live`` against it,
a change, and Ctrl-C. Each command's output (stdout and stderr, as a terminal shows them) must
be the lines the page shows after it (``...`` standing for lines left out), and its exit code
the one its line promises (``# exit N``, else 0). What a command leaves in the shell (``.
FILE``, ``export``) carries to the next, as in one terminal.

What the test changes in the page's commands, and nothing else (:data:`REWRITES`; each must
apply, so the page cannot drift from them): ``path/to/accord-checkout`` is a copy of this
checkout, and ``pip install`` installs no dependencies (they come from this environment, so no
package index is needed for them). A command ending in ``&`` starts in the background as a
shell starts it (Ctrl-C ignored, no input) and is read until the last line the page shows after
it; ``kill -INT %1`` sends it SIGINT, and what it prints then is the next block of lines.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_docs_tutorial import Step, matches, steps
from tests.test_install import NOT_SOURCES

PAGE = ROOT / "docs" / "getting-started.md"
CHECKOUT = "path/to/accord-checkout"
#: generous: each command takes seconds; this only keeps a hang from stalling the suite
LIMIT = 600
#: what bash itself sets, not the commands
SHELL_OWN = {"_", "SHLVL", "PWD", "OLDPWD"}


def rewrite(command: str, checkout: Path, used: set[str]) -> str:
    """The command as the test runs it (module docstring)."""
    if CHECKOUT in command:
        command = command.replace(CHECKOUT, str(checkout))
        used.add("checkout")
    if command.startswith("pip install "):
        command = "pip install --no-deps " + command.removeprefix("pip install ")
        used.add("pip")
    return command


REWRITES = {"checkout", "pip"}


def live_steps() -> list[Step]:
    return [s for s in steps(PAGE.read_text(encoding="utf-8")) if s.command is not None]


def test_the_page_walks_the_live_loop_in_order() -> None:
    """What the page promises: install, init, the sandbox in the background, the loop, a drift
    and a probe that fail after a change, Ctrl-C."""
    commands = [s.command or "" for s in live_steps()]
    wanted = [
        "pip install ",
        "git init",
        "accord init ",
        "accord sandbox &",
        ". .accord/sandbox/env",
        "accord plan policies --base live:all",
        "accord migrate apply --platform snowflake",
        "accord migrate apply --platform databricks",
        "accord drift policies --platform all",
        "accord probe --live policies",
        "kill -INT %1",
    ]
    at = 0
    for command in commands:
        if at < len(wanted) and command.startswith(wanted[at]):
            at += 1
    assert at == len(wanted), f"the page lacks, in order: {wanted[at]!r}\n{commands}"
    failing = [s.command for s in live_steps() if s.exit == 1]
    assert any(c and c.startswith("accord drift") for c in failing)
    assert any(c and c.startswith("accord probe --live") for c in failing)


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A fresh virtual environment with pip, borrowing this environment's third-party
    packages through a path file (accord itself is only what the page's ``pip install``
    puts there: this environment's editable accord is not visible through a path file)."""
    made = tmp_path / "venv"
    done = subprocess.run(
        [sys.executable, "-m", "venv", made], capture_output=True, text=True, timeout=LIMIT
    )
    assert done.returncode == 0, done.stderr
    python = made / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        timeout=LIMIT,
    ).stdout.strip()
    Path(purelib, "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return made


class Shell:
    """One terminal: each command runs in bash in ``cwd`` with the environment the previous
    ones left; one background job at most."""

    def __init__(self, cwd: Path, env: dict[str, str], dump: Path) -> None:
        self.cwd, self.env, self.dump = cwd, env, dump
        self.job: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()

    def run(self, command: str) -> tuple[int, list[str]]:
        script = f'{command}\n__rc=$?\nenv -0 > "{self.dump}"\nexit $__rc\n'
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=LIMIT,
        )
        if self.dump.exists():
            pairs = [e.partition("=") for e in self.dump.read_text().split("\0") if e]
            self.env = {k: v for k, _, v in pairs if k not in SHELL_OWN}
            self.dump.unlink()
        return done.returncode, [line.rstrip() for line in done.stdout.splitlines()]

    def background(self, command: str) -> None:
        """``command &`` as bash starts it without job control: SIGINT ignored, no input."""
        assert self.job is None, "one background job at a time"
        self.job = subprocess.Popen(
            ["bash", "-c", "exec " + command],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        threading.Thread(target=self._read, args=(self.job,), daemon=True).start()

    def _read(self, job: subprocess.Popen[str]) -> None:
        assert job.stdout is not None
        for line in job.stdout:
            self.lines.put(line.rstrip())
        self.lines.put(None)

    def job_output(self, until: str | None) -> list[str]:
        """The job's lines up to ``until`` (None: until it ends)."""
        seen: list[str] = []
        while (line := self.lines.get(timeout=LIMIT)) is not None:
            seen.append(line)
            if line == until:
                break
        return seen

    def end(self) -> None:
        if self.job is not None and self.job.poll() is None:
            self.job.kill()
            self.job.wait(timeout=LIMIT)


def closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow  # a fresh virtual environment, a wheel built, a sandbox served, the loop run
@pytest.mark.standin
def test_the_live_loop_runs_as_the_page_writes_it(tmp_path: Path, venv: Path) -> None:
    checkout = tmp_path / "accord-checkout"
    shutil.copytree(ROOT, checkout, ignore=NOT_SOURCES)
    work = tmp_path / "empty"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACCORD_", "SNOWFLAKE_", "DATABRICKS_", "VIRTUAL_ENV", "PYTHON"))
    }
    env |= {
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv),
        "HOME": str(home),  # nothing of this machine's ~/.snowflake, ~/.databrickscfg, git
        "PYTHONUNBUFFERED": "1",  # stdout and stderr interleave as on a terminal
        "NO_COLOR": "1",
        "ACCORD_CACHE_DIR": str(tmp_path / "cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    shell = Shell(work, env, tmp_path / "env.dump")
    used: set[str] = set()
    ports: list[int] = []
    try:
        for step in live_steps():
            assert step.command is not None
            command = rewrite(step.command, checkout, used)
            said = f"$ {step.command}"
            if command.endswith("&"):
                shell.background(command.rstrip("& "))
                seen = shell.job_output(step.output[-1] if step.output else None)
                assert matches(step.output, seen), f"{said}\nprinted:\n" + "\n".join(seen)
                text = "\n".join(seen)
                ports = [int(p) for p in re.findall(r"(?m)^  \w+ +\S*127\.0\.0\.1:(\d+) ", text)]
                assert len(ports) == 2, text
                continue
            if command.split("#")[0].split() == ["kill", "-INT", "%1"]:
                assert shell.job is not None, f"{said}: no job in the background"
                shell.job.send_signal(signal.SIGINT)
                rest = shell.job_output(None)
                code = shell.job.wait(timeout=LIMIT)
                assert code == step.exit, f"{said}: the job exited {code}\n" + "\n".join(rest)
                assert matches(step.output, rest), f"{said}\nprinted:\n" + "\n".join(rest)
                continue
            code, lines = shell.run(command)
            shown = "\n".join(lines)
            assert code == step.exit, f"{said}\nexit {code}, the page says {step.exit}\n{shown}"
            assert matches(step.output, lines), (
                f"{said}\nprinted:\n{shown}\nthe page shows:\n" + "\n".join(step.output)
            )
    finally:
        shell.end()
    assert used == REWRITES, f"the page no longer has what the test rewrites: {REWRITES - used}"
    # the estate was the tutorial's, installed by the page's own pip install into the venv
    assert (work / "policies" / "probes.yaml").read_text() == (
        ROOT / "docs" / "tutorial" / "first-estate" / "probes.yaml"
    ).read_text()
    assert list(venv.glob("lib/python*/site-packages/accord/sandbox/serve.py"))
    # Ctrl-C stopped both stand-ins and removed the settings
    assert ports and all(closed(p) for p in ports)
    assert not (work / ".accord" / "sandbox").exists()


def test_the_shell_keeps_what_a_command_leaves(tmp_path: Path) -> None:
    """The test's terminal: what ``export``, ``unset`` and ``. FILE`` leave reaches the next
    command, and each command's exit code and output are its own."""
    (tmp_path / "vars").write_text("export FROM_FILE=yes\nunset GONE\n")
    shell = Shell(tmp_path, {"PATH": os.environ["PATH"], "GONE": "here"}, tmp_path / "dump")
    assert shell.run("export A=1") == (0, [])
    assert shell.run(". ./vars") == (0, [])
    assert shell.run('echo "$A $FROM_FILE ${GONE:-unset}"; exit 3') == (3, ["1 yes unset"])
