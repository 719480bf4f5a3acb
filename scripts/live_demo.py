"""``make live-demo``: the live loop of accord, end to end, without an account.

It starts ``accord sandbox policies`` (the project's Snowflake and Databricks stand-ins on
loopback ports, holding the reference estate's tables: docs/live.md), points accord at them
through the settings the sandbox writes (its ``env`` file), and runs, printing each command and
what it answered:

 1. ``accord plan policies --base live:all`` and ``accord migrate apply`` on both platforms:
    the reference estate deployed from empty;
 2. ``accord drift policies --platform all``: clean;
 3. a tamper on the Snowflake side, as someone at the console would type it (through the
    connector, on the sandbox's own connection): a masking policy unset from a column, and an
    extra row in a mapping table (a grant nobody reviewed);
 4. ``accord drift``: both differences, located in the YAML (exit 1);
 5. the repair: ``accord plan --base live:all`` and ``accord migrate apply``;
 6. ``accord drift``: clean again, and ``accord probe policies --live``: every probe passes,
    each persona asked on each surface (Snowflake through the connector with the persona's
    primary and secondary roles, Databricks through the SDK with one profile per persona).

Then it stops the sandbox as a user does, with Ctrl-C (SIGINT): both stand-ins stop and the
settings are removed. It needs no terminal. When it fails or is interrupted (Ctrl-C, SIGTERM:
exit 130) the sandbox is stopped the same way, and every process it started is ended; its
temporary files (plans, the sandbox's settings) are removed. Exit 0 when every step answered as
it should, else 1.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POLICIES = "policies"
#: the entry point, as the ``accord`` script runs it
ACCORD = [sys.executable, "-c", "from accord.compiler.cli import main; main()"]
#: the most one accord command may take, and the sandbox to start or stop (a stand-in that
#: stopped answering must not hang the demo)
COMMAND_TIMEOUT = 60.0
READY = "accord sandbox: ready; Ctrl-C stops it"
#: the tamper, as a console user would type it
UNSET_MASK = "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES UNSET MASKING POLICY"
EXTRA_GRANT = (
    "INSERT INTO GOVERNANCE.POLICIES.PROGRAMME_GRANTS (PROGRAMME_CODE, ROLE_NAME) "
    "VALUES ('CNS-204', 'BENCH_CHEMIST')"
)


class Interrupted(Exception):
    """SIGTERM, handled as Ctrl-C is: stop everything and exit 130."""


def _terminate(signum: int, frame: Any) -> None:
    raise Interrupted


def say(text: str = "") -> None:
    print(text, flush=True)


def accord(env: dict[str, str], *args: str, expect: int = 0) -> str:
    """Run ``accord ARGS`` as a user would, print it and its output; fail on another exit."""
    say(f"$ accord {shlex.join(args)}")
    run = subprocess.run(
        [*ACCORD, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    for line in run.stdout.rstrip("\n").splitlines():
        say(f"  {line}")
    if run.returncode != expect:
        # what it said on stderr (the clients' warnings too) is shown when it went wrong
        for line in run.stderr.rstrip("\n").splitlines():
            say(f"  {line}")
        raise RuntimeError(f"accord {args[0]} exited {run.returncode}, expected {expect}")
    return run.stdout


class Sandbox:
    """``accord sandbox policies`` in a process of its own, its output read as it comes."""

    def __init__(self, out: Path, env: dict[str, str]) -> None:
        self.out = out
        say(f"$ accord sandbox {POLICIES} --out {out}")
        self.proc = subprocess.Popen(
            [*ACCORD, "sandbox", POLICIES, "--out", str(out)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, last: str | None) -> list[str]:
        """Its lines up to ``last`` (None: until it ends); RuntimeError when it ends first or
        says nothing for COMMAND_TIMEOUT seconds."""
        seen: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=COMMAND_TIMEOUT)
            except queue.Empty:
                raise RuntimeError("accord sandbox said nothing in time") from None
            if line is None:
                if last is None:
                    return seen
                raise RuntimeError("accord sandbox ended:\n" + "\n".join(seen))
            seen.append(line)
            if line == last:
                return seen

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` as the sandbox's ``env`` file leaves it (its ``unset`` and ``export``
        lines, which point accord at the stand-ins)."""
        env = dict(base)
        for line in (self.out / "env").read_text(encoding="utf-8").splitlines():
            words = shlex.split(line)
            if words[:1] == ["unset"]:
                for name in words[1:]:
                    env.pop(name, None)
            elif words[:1] == ["export"]:
                for word in words[1:]:
                    name, _, value = word.partition("=")
                    env[name] = value
        return env

    def stop(self) -> int:
        """Ctrl-C, as a user stops it; its exit code (killed if it does not stop in time)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(timeout=COMMAND_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -1
        return code


def tamper(out: Path) -> None:
    """The tamper, through the connector, on the sandbox's own connection (its deployer)."""
    import snowflake.connector

    entry = tomllib.loads((out / "connections.toml").read_text(encoding="utf-8"))["sandbox"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the connector's notices of its future defaults
        conn = snowflake.connector.connect(**entry, login_timeout=int(COMMAND_TIMEOUT))
        try:
            for statement in (UNSET_MASK, EXTRA_GRANT):
                say(f"snowflake> {statement}")
                conn.cursor().execute(statement)
        finally:
            conn.close()


@contextlib.contextmanager
def sandbox(work: Path) -> Iterator[tuple[Sandbox, dict[str, str]]]:
    """``accord sandbox`` serving policies/, and the environment that points accord at it
    (nothing else of this machine's configuration; the reference estate's salts set, as a
    deployer sets them where SQL is applied). Stopped with Ctrl-C on leaving."""
    from accord.compiler.live.sandbox import salt_references
    from accord.compiler.model.validate import load_project

    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SNOWFLAKE_", "DATABRICKS_", "ACCORD_"))
    }
    base |= {"NO_COLOR": "1", "ACCORD_NO_CACHE": "1"}
    refs = salt_references(load_project(ROOT / POLICIES).model)
    salts = {
        r.removeprefix("env:"): f"demo-{i}" for i, r in enumerate(refs) if r.startswith("env:")
    }
    running = Sandbox(work / "sandbox", base)
    try:
        lines = running.until(READY)
        text = "\n".join(lines)
        m = re.search(r"Snowflake +(\S+) .*\n +Databricks +(\S+) ", text)
        if m is None:
            raise RuntimeError("accord sandbox printed no address:\n" + text)
        say(f"stand-ins: Snowflake on {m[1]}, Databricks on {m[2]}")
        say(f"  (settings in {running.out}; the salts {', '.join(sorted(salts))} set)")
        yield running, running.env(base) | salts
    finally:
        say("stopping the sandbox (Ctrl-C)")
        code = running.stop()
        for line in running.until(None):
            say(f"  {line}")
        if code != 0:
            raise RuntimeError(f"accord sandbox exited {code} on Ctrl-C, expected 0")


def demo(work: Path) -> None:
    plans = str(work / "migrations")
    with sandbox(work) as (running, env):
        say("\n== 1. deploy policies/ from an empty estate")
        accord(env, "plan", POLICIES, "--base", "live:all", "--out", plans)
        for platform in ("snowflake", "databricks"):
            accord(env, "migrate", "apply", "--platform", platform, "--plans", plans,
                   "--policies", POLICIES)  # fmt: skip

        say("\n== 2. drift: the platforms hold what the model compiles to")
        accord(env, "drift", POLICIES, "--platform", "all")

        say("\n== 3. tamper, as at the console")
        tamper(running.out)

        say("\n== 4. drift: both differences, located in the YAML")
        found = accord(env, "drift", POLICIES, "--platform", "all", expect=1)
        for rule in ("ACC701", "ACC704"):
            if rule not in found:
                raise RuntimeError(f"drift did not report {rule}")

        say("\n== 5. repair: a plan from what is deployed, applied")
        accord(env, "plan", POLICIES, "--base", "live:all", "--out", plans)
        accord(env, "migrate", "apply", "--platform", "snowflake", "--plans", plans,
               "--policies", POLICIES)  # fmt: skip

        say("\n== 6. drift is clean again, and every probe passes on the live mesh")
        accord(env, "drift", POLICIES, "--platform", "all")
        accord(env, "probe", POLICIES, "--live")


def stop_children() -> None:
    """End every process this one started and has not reaped: an accord command interrupted
    while it was being started has no handle yet (subprocess.run kills the ones it has).
    Linux: children are found by their parent id in /proc; each is ended by its id."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] != me:  # the parent's id
            continue
        pid = int(stat.parent.name)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def main() -> int:
    signal.signal(signal.SIGTERM, _terminate)
    # Ctrl-C stops the demo even when whoever started it ignores SIGINT (a process started in
    # the background, or by a test runner's worker, inherits the ignored disposition)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    interrupted = False
    try:
        with tempfile.TemporaryDirectory(prefix="accord-live-demo-") as work:
            try:
                demo(Path(work))
            except (KeyboardInterrupt, Interrupted):
                # a second signal while stopping must not leave anything behind either
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                interrupted = True
            finally:
                stop_children()  # before the temporary files go
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        say(f"live demo failed: {err}")
        return 1
    if interrupted:
        say("interrupted: every stand-in stopped")
        return 130
    say(f"\nlive demo: done in {time.monotonic() - started:.0f} s; every stand-in stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
