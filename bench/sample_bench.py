"""``accord probe sample`` over a long history: ``make bench-sample``.

N queries of history (default 1,000,000) are generated in each platform stand-in's history
views (sandbox/standins/history.py: DuckDB tables in this process, standing in for the
warehouse that holds the history), then ``accord probe sample --since 30 --format json`` runs
as a fresh process against the stand-in with a fixed latency per request, reading as the
least-privilege principal of docs/probes.md (Snowflake: a role holding IMPORTED PRIVILEGES on
the SNOWFLAKE database; Databricks: USE CATALOG system, USE SCHEMA and SELECT on system.query
and system.access). Measured: the wall time of the command, the peak resident size of the
accord process (its ``VmHWM``, read while it runs: the process alone, not the stand-in), the
round trips, and what the report says (the window's queries and kinds of read as the
platform counted them, the queries and kinds read, complete).

Two histories per platform:

* **repeating**: the queries are of 1,200 kinds (60 users, each running 20 statements: a
  dashboard's or an agent's statement text, recurring), as a month of an estate's reads are;
* **distinct**: every query's text is its own (a comment with its number), as if every read
  were ad hoc: past ``MAX_HISTORY_ROWS`` kinds the newest are read, and the report says the
  window was not read whole.

Asserts nothing.

    make bench-sample                                  # 1,000,000 queries, 50 ms a request
    BENCH_ROWS=200000 make bench-sample                # other sizes (comma-separated)
    BENCH_LATENCY_MS=20 make bench-sample              # another latency
    BENCH_PLATFORMS=snowflake make bench-sample        # one platform
    BENCH_HISTORIES=repeating make bench-sample        # one history
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from live_bench import CHUNK_ROWS, env_for  # noqa: E402

RESULTS = "DISCOVERY.ASSAYS.RESULTS"
LAKE = "discovery_lake.assays.results"
CALLS = "omics.variants.calls"
PROGRAMMES = ("ONC-101", "CNS-204", "IMM-310")
USERS = 60
STATEMENTS = 20
#: the principal that reads the history, and the Snowflake role it reads as
SAMPLER = "accord-sampler"
SAMPLER_ROLE = "SAMPLER"


def estate(tmp: Path) -> Path:
    """policies/ with the agents' traffic named by their clients."""
    import yaml

    root = tmp / "policies"
    shutil.copytree(ROOT / "policies", root)
    path = root / "surfaces.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["surfaces"]["warehouse_agent"]["traffic"] = {"client": "warehouse-agent"}
    doc["surfaces"]["lakehouse_agent"]["traffic"] = {"client": "lakehouse-agent"}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return root


def _objects(table: str, *columns: str) -> str:
    return json.dumps(
        [
            {
                "objectDomain": "Table",
                "objectId": 1,
                "objectName": table,
                "columns": [{"columnId": n, "columnName": c} for n, c in enumerate(columns)],
            }
        ]
    )


def snowflake_shapes() -> list[dict[str, Any]]:
    """USERS users x STATEMENTS statements: the chemists' and pharmacologists' reads of the
    assay results through the warehouse agent, each statement filtering on a programme."""
    out = []
    for u in range(USERS):
        pharma = u % 2 == 1
        for s in range(STATEMENTS):
            programme = PROGRAMMES[s % len(PROGRAMMES)]
            column = ("SUBJECT_ID", "NOTES")[s % 2]
            out.append(
                {
                    "USER_NAME": f"USER_{u:03d}",
                    "ROLE_NAME": "BENCH_CHEMIST",
                    "SECONDARY_ROLE_STATS": json.dumps({"roles": "CLINICAL_UNBLINDED", "count": 1})
                    if pharma
                    else None,
                    "QUERY_TAG": "",
                    "QUERY_TEXT": f"SELECT {column} FROM {RESULTS} WHERE PROGRAMME_CODE = "
                    f"'{programme}' AND RESULT_VALUE > {s}",
                    "BASE_OBJECTS_ACCESSED": _objects(RESULTS, column, "PROGRAMME_CODE"),
                    "CLIENT_APPLICATION_ID": "PythonConnector 3.12.0",
                    "CLIENT_ENVIRONMENT": json.dumps({"APPLICATION": "warehouse-agent"}),
                }
            )
    return out


def databricks_shapes() -> list[dict[str, Any]]:
    """USERS users x STATEMENTS statements through the lakehouse agent."""
    out = []
    for u in range(USERS):
        for s in range(STATEMENTS):
            programme = PROGRAMMES[s % len(PROGRAMMES)]
            table = (LAKE, CALLS)[s % 2]
            out.append(
                {
                    "executed_by": f"user{u:03d}@example.com",
                    "client_application": "lakehouse-agent",
                    "statement_text": f"SELECT subject_id FROM {table} WHERE programme_code = "
                    f"'{programme}' AND {s} = {s}",
                    "source_table_full_name": table,
                    "columns": ["subject_id", "programme_code"],
                }
            )
    return out


def groups(u: int) -> list[str]:
    return ["bench-chemists", "clinical-unblinded"] if u % 2 else ["bench-chemists"]


def prepare(platform: str, rows: int, distinct: bool) -> Any:
    """The platform's stand-in holding ``rows`` queries of history, and its sampler."""
    from accord.sandbox.standins.databricks import DatabricksEstate
    from accord.sandbox.standins.history import history_of
    from accord.sandbox.standins.snowflake import SnowflakeEstate

    if platform == "snowflake":
        e: Any = SnowflakeEstate()
        e.grant_to_role(SAMPLER_ROLE, "IMPORTED PRIVILEGES", "DATABASE", "SNOWFLAKE")
        history_of(e).generate(snowflake_shapes(), rows, distinct=distinct)
        return e
    e = DatabricksEstate()
    e.admins.clear()
    e.tokens = {"dapi-bench": SAMPLER}
    e.grant("CATALOG", "system", "USE_CATALOG", SAMPLER)
    for schema in ("system.query", "system.access"):
        for privilege in ("USE_SCHEMA", "SELECT"):
            e.grant("SCHEMA", schema, privilege, SAMPLER)
    history = history_of(e)
    history.users.update({f"user{u:03d}@example.com": groups(u) for u in range(USERS)})
    history.generate(databricks_shapes(), rows, distinct=distinct)
    return e


def _high_water(pid: int) -> int:
    """The peak resident size (``VmHWM``, kB) of the process's own memory so far, 0 once it
    has none."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run(argv: list[str], env: dict[str, str]) -> tuple[float, int, int, str, str]:
    """Wall seconds, peak resident MB of the process, exit code, stdout, stderr.

    The peak is the process's ``VmHWM`` (proc(5): "peak resident set size"), read every 10 ms
    while it runs: ``wait4``'s ``ru_maxrss`` would not do, as Linux carries the resident size
    the process had before ``exec`` into it, and that is this process's own, with the
    stand-in's history in it. ``VmHWM`` is a high-water mark, so only growth in the last
    10 ms before the exit can be missed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=err)
        peak = [0]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _high_water(proc.pid))
                done.wait(0.01)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        _, status, _ = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        done.set()
        watcher.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            seconds,
            peak[0] // 1024,
            proc.returncode,
            out.read().decode(),
            err.read().decode(),
        )


def measure(platform: str, rows: int, history: str, latency: float) -> str:
    started = time.perf_counter()
    e = prepare(platform, rows, history == "distinct")
    made = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="accord-sample-bench-") as tmp, ExitStack() as stack:
        from accord.sandbox.standins.databricks import workspace
        from accord.sandbox.standins.snowflake import account

        root = estate(Path(tmp))
        if platform == "snowflake":
            env = env_for(stack.enter_context(account(e)), None)
            env["SNOWFLAKE_ROLE"] = SAMPLER_ROLE
            e.chunk_rows = CHUNK_ROWS  # large results in chunks, as the service sends them
        else:
            env = env_for(None, stack.enter_context(workspace(e)))
        e.latency = latency
        argv = [sys.executable, "-m", "accord.compiler.cli", "probe", "sample", str(root)]
        argv += ["--platform", platform, "--since", "30", "--format", "json"]
        before = e.round_trips
        seconds, peak, code, out, err = run(argv, env)
        trips = e.round_trips - before
    if code != 0:
        raise SystemExit(f"probe sample exited {code}: {err[-3000:]}")
    doc = json.loads(out)
    (source,) = doc["coverage"]
    read = source["read"]
    return (
        f"| {platform} | {history} | {rows:,} | {_n(read, 'queries in the window')} "
        f"| {_n(read, 'kinds of read in the window')} | {_n(read, 'queries')} "
        f"| {_n(read, 'kinds of read')} | {source['complete']} "
        f"| {doc['probe_coverage']['reads']:,} | {trips} "
        f"| {seconds:.1f} | {peak} | {made:.0f} |"
    )


def _n(read: dict[str, Any], key: str) -> str:
    """A figure of the report's ``read``; ``-`` where the report has none (accord before the
    history was grouped, measured with the same script)."""
    return f"{read[key]:,}" if isinstance(read.get(key), int) else "-"


def main() -> int:
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    sizes = [int(s) for s in os.environ.get("BENCH_ROWS", "1000000").split(",") if s]
    latency = float(os.environ.get("BENCH_LATENCY_MS", "50")) / 1000
    platforms = os.environ.get("BENCH_PLATFORMS", "snowflake,databricks").split(",")
    histories = os.environ.get("BENCH_HISTORIES", "repeating,distinct").split(",")
    print(
        f"accord probe sample bench: {latency * 1000:.0f} ms a request, load average "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    print()
    print(
        "| platform | history | queries made | window: queries | window: kinds of read "
        "| queries read | kinds of read read | complete | reads mapped | round trips "
        f"| wall s ({latency * 1000:.0f} ms a request) | peak MB (accord) | history made in s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for platform in platforms:
            for history in histories:
                print(measure(platform, n, history, latency), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
