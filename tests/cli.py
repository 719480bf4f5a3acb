"""Running ``accord`` from a test: in-process by default (``run_cli``), in a subprocess
(``run_process``) only for the contracts that need a real process: no traceback at exit,
``PYTHONHASHSEED``, a hang that must fail rather than stall the suite. (The checks of what a
fresh interpreter imports, and of a closed stdout or a lock held by another process, run their
own scripts.)

Both return the same ``Result`` (exit code, stdout, stderr; the field names of
``subprocess.CompletedProcess``, so it unpacks as ``code, out, err = run_cli(...)``)."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from tests.conftest import ROOT

#: the entry point as a fresh interpreter runs it (what the ``accord`` script calls)
ENTRY = [sys.executable, "-c", "from accord.compiler.cli import main; main()"]


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None], cwd: Path | str | None) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    here = os.getcwd()
    try:
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_cli(
    argv: list[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str | None] | None = None,
    stdin: str = "",
) -> Result:
    """Run ``accord ARGV`` in this process: (exit code, stdout, stderr). ``cwd`` and ``env``
    (a value of None unsets the variable) hold for the call only; NO_COLOR is set, as a user's
    captured output has no colour."""
    from accord.compiler.cli import main

    out, err = io.StringIO(), io.StringIO()
    threshold = gc.get_threshold()  # main() raises it for the command's lifetime
    stdin_was = sys.stdin
    code = 0
    try:
        sys.stdin = io.StringIO(stdin)
        with (
            _environment({"NO_COLOR": "1", **(env or {})}, cwd),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                main(list(argv))
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    finally:
        sys.stdin = stdin_was
        gc.set_threshold(*threshold)
    return Result(code, out.getvalue(), err.getvalue())


def run_process(
    argv: list[str],
    *,
    cwd: Path | str = ROOT,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    timeout: float | None = None,
) -> Result:
    """Run ``accord ARGV`` as a fresh process, only for what an in-process call cannot show.
    ``env`` is added to this process's environment (with NO_COLOR set), or with
    ``inherit_env=False`` is the whole environment."""
    base = {**os.environ, "NO_COLOR": "1"} if inherit_env else {}
    proc = subprocess.run(
        [*ENTRY, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def pr_clone(repo: Path, root: Path) -> Path:
    """``repo`` committed as a pull request would commit it (every file, ignored ones too,
    symbolic links as links) and cloned afresh under ``root``: what a CI job checks out."""

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=cwd,
            check=True,
            capture_output=True,
        )

    git(repo, "init", "-q")
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "-m", "a pull request")
    clone = root / "clone"
    git(root, "clone", "-q", str(repo), str(clone))
    return clone
