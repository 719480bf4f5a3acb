"""Running git on the machine, read-only and offline: with a timeout, its messages in English
(callers match them), never a prompt for credentials, and no bare repository a pull request
could commit (``HEAD``, ``objects/``, ``refs/`` in a folder) taken for one.

:func:`run_git` is the one way accord runs git (``accord plan``/``diff --base REV`` read a
revision; ``accord init`` reads the branch and the commit accord was installed from).
:func:`git_line` is for questions whose answer is one line or nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: seconds one git command may take: a slow disk, never a hang
GIT_TIMEOUT = 60.0


class GitMissing(OSError):
    """git is not installed (not on ``PATH``)."""


def run_git(
    args: list[str], cwd: Path, timeout: float = GIT_TIMEOUT
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd``. Raises :class:`GitMissing` when git is not installed,
    OSError when it cannot run, subprocess.TimeoutExpired past ``timeout``."""
    git = shutil.which("git")
    if git is None:
        raise GitMissing("git is not installed")
    options = ["-c", "safe.bareRepository=explicit", "-c", "core.warnAmbiguousRefs=true"]
    return subprocess.run(
        [git, *options, *args],
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=timeout,
        env={**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"},
    )


def git_line(args: list[str], cwd: Path) -> str | None:
    """The first line git prints for ``args`` in ``cwd``; None when git is missing, fails,
    prints nothing or prints what is not UTF-8."""
    try:
        done = run_git(args, cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        lines = done.stdout.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None
    return lines[0].strip() or None if lines else None
