"""``accord --version`` prints the installed distribution's version, and asking for it (or
importing the entry point) loads no command module: the command table stays lazy, so
``accord lint``'s cold start does not pay for it."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from tests.cli import run_cli
from tests.conftest import ROOT


def test_version_is_the_distributions() -> None:
    run = run_cli(["--version"])
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"accord {version('accord')}\n"
    assert run.stderr == ""


def test_version_loads_no_command_and_no_metadata_until_asked() -> None:
    code = (
        "import sys\n"
        "import accord.compiler.cli\n"
        "before = sorted(m for m in sys.modules if m.startswith('accord.compiler.commands.')\n"
        "                or m == 'importlib.metadata')\n"
        "try:\n"
        "    accord.compiler.cli.main(['--version'])\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "after = sorted(m for m in sys.modules if m.startswith('accord.compiler.commands.'))\n"
        "print(before, after, code, file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.stdout == f"accord {version('accord')}\n"
    assert run.stderr.strip() == "[] [] 0", run.stderr
