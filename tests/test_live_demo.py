"""``make live-demo`` (scripts/live_demo.py) runs the live loop end to end against ``accord
sandbox`` without a terminal, and stops every server it started and every process it ran: when
it finishes (the sandbox stopped with Ctrl-C, as a user stops it), and when it is interrupted
(SIGINT, as Ctrl-C sends, and SIGTERM)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "live_demo.py"
#: generous: the demo takes well under a minute; this only keeps a hang from stalling the suite
LIMIT = 300

#: the demo in a process of its own, its stand-ins included (about half a minute)
pytestmark = [pytest.mark.slow, pytest.mark.standin]


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start(ignoring_sigint: bool = False) -> subprocess.Popen[str]:
    """The demo as a user starts it; ``ignoring_sigint``: started by a parent that ignores
    Ctrl-C (a background job, a test runner's worker), whose disposition the demo inherits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "DATABRICKS_"))}
    return subprocess.Popen(
        [sys.executable, str(SCRIPT)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_ignoring_sigint if ignoring_sigint else None,
    )


def ports(output: str) -> list[int]:
    m = re.search(
        r"stand-ins: Snowflake on 127\.0\.0\.1:(\d+), Databricks on http://127\.0\.0\.1:(\d+)",
        output,
    )
    assert m, output
    return [int(m[1]), int(m[2])]


def closed(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


def work_dir(output: str) -> Path:
    m = re.search(r"--out (\S*accord-live-demo-[^/\s]+)/migrations", output)
    assert m, output
    return Path(m[1])


def nothing_left(output: str) -> None:
    assert all(closed(p) for p in ports(output))
    work = work_dir(output)
    assert not work.exists()
    running = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(work) in text:
            running.append(text)
    assert running == []


def test_the_live_demo_runs_the_loop_and_leaves_nothing_behind() -> None:
    proc = start()
    output, _ = proc.communicate(timeout=LIMIT)
    assert proc.returncode == 0, output
    steps = [line for line in output.splitlines() if line.startswith("== ")]
    assert [s.split(".")[0] for s in steps] == [f"== {n}" for n in range(1, 7)]
    assert "ACC701 live-missing" in output and "ACC704 grants-diverge" in output
    assert "policies/datasets.yaml" in output and "policies/entitlements.yaml" in output
    assert output.count("accord drift: no findings") == 2
    assert "0 failed, 0 disagreements" in output
    assert "accord sandbox: stopped; both stand-ins are down and their settings removed" in output
    assert output.rstrip().splitlines()[-1].startswith("live demo: done in")
    nothing_left(output)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_demo_stops_every_server(sig: signal.Signals) -> None:
    # started ignoring Ctrl-C, as under a test runner's worker: Ctrl-C must stop it all the same
    proc = start(ignoring_sigint=True)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:  # until the deployment is under way
        seen.append(line)
        if line.startswith("$ accord migrate apply"):
            break
    proc.send_signal(sig)
    rest, _ = proc.communicate(timeout=LIMIT)
    output = "".join(seen) + rest
    assert proc.returncode == 130, output
    assert "interrupted: every stand-in stopped" in output
    assert "accord sandbox: stopped; both stand-ins are down and their settings removed" in output
    nothing_left(output)
