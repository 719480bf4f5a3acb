"""``make live-demo``: the live loop of accord, end to end, without an account.

It starts the project's Snowflake and Databricks stand-ins on loopback ports (tests/standins:
the platforms' wire formats served on 127.0.0.1, the policies evaluated by their own engine),
points accord at them through the environment, and runs, printing each command and what it
answered:

 1. ``accord plan policies --base live:all`` and ``accord migrate apply`` on both platforms:
    the reference estate deployed from empty;
 2. ``accord drift policies --platform all``: clean;
 3. a tamper on the Snowflake side, as someone at the console would: a masking policy unset
    from a column, and an extra row in a mapping table (a grant nobody reviewed);
 4. ``accord drift``: both differences, located in the YAML (exit 1);
 5. the repair: ``accord plan --base live:all`` and ``accord migrate apply``;
 6. ``accord drift``: clean again, and ``accord probe policies --live``: every probe passes,
    each persona asked on each surface (Snowflake through the connector with the persona's
    primary and secondary roles, Databricks through the SDK with one profile per persona).

Every server it started is stopped when it ends, fails, or is interrupted (Ctrl-C, SIGTERM:
exit 130); it needs no terminal. Its temporary files (plans, the probe configuration, the SDK
profiles) are removed. Exit 0 when every step answered as it should, else 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from accord.compiler.model.validate import load_project  # noqa: E402
from accord.sandbox.standins.databricks import DatabricksEstate, workspace  # noqa: E402
from accord.sandbox.standins.snowflake import SnowflakeEstate, account  # noqa: E402
from tests.live_helpers import SALTS, seed_model  # noqa: E402
from tests.probe_catalog_standin import StandinRunner  # noqa: E402

POLICIES = "policies"
#: the most one accord command may take (a stand-in that stopped answering must not hang)
COMMAND_TIMEOUT = 60.0
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
        [sys.executable, "-c", "from accord.compiler.cli import main; main()", *args],
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


def seed_rows(project: Any, sf: SnowflakeEstate, dbx: DatabricksEstate) -> None:
    """Rows under the governed tables: one per entitlement value, and the canary row each
    probe of policies/probes.yaml names (so a live answer tells clear from masked)."""
    canary = next(p.canary for p in project.model.probes.values() if p.canary)
    values = sorted(project.model.entitlements["programme"])
    for estate, table, key, subject, notes in (
        (sf, "DISCOVERY.ASSAYS.RESULTS", "PROGRAMME_CODE", "SUBJECT_ID", "NOTES"),
        (dbx, "discovery_lake.assays.results", "programme_code", "subject_id", "notes"),
        (dbx, "omics.variants.calls", "programme_code", "subject_id", None),
    ):
        rows = [
            {key: v, subject: f"SUBJ-{v}"} | ({notes: f"note {v}"} if notes else {}) for v in values
        ]
        rows.append({key: "CNS-204", subject: canary} | ({notes: "canary note"} if notes else {}))
        if isinstance(estate, SnowflakeEstate):
            estate.seed_rows(table, rows)
            continue
        for row in rows:
            columns = ", ".join(row)
            literals = ", ".join("'" + str(v).replace("'", "''") + "'" for v in row.values())
            estate.execute(f"INSERT INTO {table} ({columns}) VALUES ({literals})")


@contextlib.contextmanager
def stand_ins(work: Path) -> Iterator[tuple[SnowflakeEstate, DatabricksEstate, dict[str, str]]]:
    """Both stand-ins serving on 127.0.0.1, seeded with policies/' data tables, and the
    environment that points accord at them (nothing else of this machine's configuration)."""
    project = load_project(ROOT / POLICIES)
    sf, dbx = SnowflakeEstate(), DatabricksEstate()
    seed_model(sf, project.model)
    seed_model(dbx, project.model)
    with account(sf) as params, workspace(dbx) as host:
        say(f"stand-ins: Snowflake on 127.0.0.1:{params['port']}, Databricks on {host}")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("SNOWFLAKE_", "DATABRICKS_", "ACCORD_"))
        }
        env |= SALTS
        env |= {
            "NO_COLOR": "1",
            "ACCORD_NO_CACHE": "1",
            "SNOWFLAKE_HOME": str(work / "snowflake-home"),
            "SNOWFLAKE_DISABLE_PLATFORM_DETECTION": "true",
            "AWS_EC2_METADATA_DISABLED": "true",
            "SNOWFLAKE_ACCOUNT": params["account"],
            "SNOWFLAKE_USER": params["user"],
            "SNOWFLAKE_PASSWORD": params["password"],
            "SNOWFLAKE_HOST": params["host"],
            "SNOWFLAKE_PORT": str(params["port"]),
            "SNOWFLAKE_PROTOCOL": "http",
            "DATABRICKS_HOST": host,
            "DATABRICKS_TOKEN": "dapi-local-test",
            "DATABRICKS_WAREHOUSE_ID": "wh-standin",
            "DATABRICKS_CONFIG_FILE": str(work / "databrickscfg"),
        }
        try:
            yield sf, dbx, env
        finally:
            say("stopping the stand-ins")


def demo(work: Path) -> None:
    project = load_project(ROOT / POLICIES)
    plans = str(work / "migrations")
    with stand_ins(work) as (sf, dbx, env):
        say("\n== 1. deploy policies/ from an empty estate")
        accord(env, "plan", POLICIES, "--base", "live:all", "--out", plans)
        for platform in ("snowflake", "databricks"):
            accord(env, "migrate", "apply", "--platform", platform, "--plans", plans,
                   "--policies", POLICIES)  # fmt: skip
        seed_rows(project, sf, dbx)

        say("\n== 2. drift: the platforms hold what the model compiles to")
        accord(env, "drift", POLICIES, "--platform", "all")

        say("\n== 3. tamper, as at the console")
        for statement in (UNSET_MASK, EXTRA_GRANT):
            say(f"snowflake> {statement}")
            sf.execute(statement)

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
        personas = sorted(project.model.personas)
        roles = sorted({p.snowflake for p in project.model.principals.values() if p.snowflake})
        sf.grant_roles(env["SNOWFLAKE_USER"], roles)  # the probe user switches to each persona
        lakehouse = StandinRunner(project, dbx)
        dbx.tokens = {f"tok-{p}": p for p in personas}
        dbx.answer = lambda persona, sql: lakehouse.run(persona, [sql])
        (work / "databrickscfg").write_text(
            "".join(
                f"[probe-{p}]\nhost = {env['DATABRICKS_HOST']}\ntoken = tok-{p}\n\n"
                for p in personas
            )
        )
        config = work / "probe.yaml"
        profiles = "".join(f"    {p}: probe-{p}\n" for p in personas)
        config.write_text(
            f"databricks:\n  warehouse_id: wh-standin\n  probe_profiles:\n{profiles}"
            "timeout_seconds: 10\n"
        )
        # each persona's SDK profile decides its host and token (DATABRICKS_HOST and
        # DATABRICKS_TOKEN would win over the profile)
        probing = {k: v for k, v in env.items() if k not in ("DATABRICKS_HOST", "DATABRICKS_TOKEN")}
        accord(probing, "probe", POLICIES, "--live", "--config", str(config))


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
    # the stand-ins read SHOW statements with sqlglot, which warns that it keeps them whole
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
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
