"""The live benchmark: ``make bench-live``.

Round trips and wall time of ``accord introspect`` and ``accord drift`` against the local
platform stand-ins (sandbox/standins/: the Snowflake connector's and the Databricks SDK's real
protocols on 127.0.0.1) with a fixed latency per request, at N generated datasets
(``bench/lint_bench.py``'s generator, the suite's settings: two thirds on Snowflake, one
third on Databricks). The estate is deployed into the stand-ins first (its compiled SQL run
on them directly, at no latency); then each command runs as a fresh process, as CI would,
and the stand-in counts the requests it answered. Asserts nothing.

    make bench-live                              # N = 1,000 and 4,000, 50 ms a request
    BENCH_SIZES=500 make bench-live              # any sizes
    BENCH_LATENCY_MS=20 make bench-live          # another latency
    BENCH_JOBS=8 make bench-live                 # --jobs of the live commands (default 4)
    BENCH_PLATFORMS=snowflake make bench-live    # one platform

Goal (issue 20): round trips grow with policies, schemas and catalogs, not with tables;
drift at 4,000 tables under 60 s at 50 ms a request.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from lint_bench import estate, write_estate  # noqa: E402

PRINCIPALS = 300
PROGRAMMES = 200
#: rows of a Snowflake result that ride with the answer; the rest come as chunks, one request
#: each (the service sizes its chunks by bytes; a thousand short rows is of that order)
CHUNK_ROWS = 1000


@dataclass
class Row:
    platform: str
    command: str
    n: int
    tables: int
    policies: int
    requests: int
    seconds: float
    code: int


def salts_env(base: Path) -> dict[str, str]:
    """A value for every ``env:NAME`` salt the estate references (bench values only)."""
    names = set()
    for path in base.rglob("*.yaml"):
        names |= set(re.findall(r"env:([A-Z0-9_]+)", path.read_text(encoding="utf-8")))
    return {name: f"bench-{name.lower()}" for name in sorted(names)}


def deploy(base: Path, scratch: Path, platforms: list[str]) -> dict[str, object]:
    """The stand-ins, seeded with the estate's tables and holding what its compiled SQL
    deploys."""
    from accord.compiler.model.validate import load_project
    from accord.sandbox.standins.databricks import DatabricksEstate
    from accord.sandbox.standins.snowflake import SnowflakeEstate
    from tests.live_helpers import deploy_compiled, seed_model

    out = scratch / "compiled"
    subprocess.run(
        [sys.executable, "-m", "accord.compiler.cli", "compile", str(base), "--out", str(out)],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    model = load_project(base).model
    estates: dict[str, object] = {}
    for platform in platforms:
        e = SnowflakeEstate() if platform == "snowflake" else DatabricksEstate()
        seed_model(e, model)
        deploy_compiled(e, out)
        estates[platform] = e
    return estates


def env_for(params: dict[str, object] | None, host: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SNOWFLAKE_", "DATABRICKS_"))}
    env.update(
        SNOWFLAKE_HOME="/nonexistent/.snowflake",
        SNOWFLAKE_DISABLE_PLATFORM_DETECTION="true",
        AWS_EC2_METADATA_DISABLED="true",
        ACCORD_NO_CACHE="1",
    )
    if params is not None:
        env.update(
            SNOWFLAKE_ACCOUNT=str(params["account"]),
            SNOWFLAKE_USER=str(params["user"]),
            SNOWFLAKE_PASSWORD=str(params["password"]),
            SNOWFLAKE_HOST=str(params["host"]),
            SNOWFLAKE_PORT=str(params["port"]),
            SNOWFLAKE_PROTOCOL="http",
        )
    if host is not None:
        env.update(
            DATABRICKS_HOST=host,
            DATABRICKS_TOKEN="dapi-bench",
            DATABRICKS_WAREHOUSE_ID="wh-bench",
            DATABRICKS_CONFIG_FILE="/nonexistent/.databrickscfg",
        )
    return env


def measure(n: int, latency: float, jobs: int, platforms: list[str]) -> list[Row]:
    from accord.sandbox.standins.databricks import workspace
    from accord.sandbox.standins.snowflake import account
    from accord.targets import lower_all
    from accord.targets.objects import MaskPolicy, RowFilterPolicy

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="accord-live-bench-") as tmp:
        root = Path(tmp)
        files = estate(n, principals=PRINCIPALS, programmes=PROGRAMMES, defects=False)
        base = write_estate(root / "base", files)
        os.environ.update(salts_env(base))
        started = time.perf_counter()
        estates = deploy(base, root, platforms)
        print(f"  N={n}: deployed in {time.perf_counter() - started:.0f} s", flush=True)
        from accord.compiler.model.validate import load_project

        lowered = lower_all(load_project(base))
        with ExitStack() as stack:
            params = host = None
            if "snowflake" in estates:
                params = stack.enter_context(account(estates["snowflake"]))  # type: ignore[arg-type]
            if "databricks" in estates:
                host = stack.enter_context(workspace(estates["databricks"]))  # type: ignore[arg-type]
            env = env_for(params, host)
            for salt in salts_env(base):  # no salts: the canary queries are not measured
                env.pop(salt, None)
            for platform, e in estates.items():
                catalog = lowered[platform]
                tables = len({getattr(o, "table", "") for o in catalog} - {""})
                policies = len(catalog.of(MaskPolicy)) + len(catalog.of(RowFilterPolicy))
                e.latency = latency  # type: ignore[attr-defined]
                if platform == "snowflake":  # large results in chunks, as the service sends them
                    e.chunk_rows = CHUNK_ROWS  # type: ignore[attr-defined]
                for command in ("introspect", "drift"):
                    argv = [sys.executable, "-m", "accord.compiler.cli", command, str(base)]
                    argv += ["--platform", platform, "--format", "json", "--jobs", str(jobs)]
                    before = e.round_trips  # type: ignore[attr-defined]
                    start = time.perf_counter()
                    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True)
                    seconds = time.perf_counter() - start
                    if proc.returncode not in (0, 1):
                        raise SystemExit(proc.stderr.decode()[-3000:])
                    requests = e.round_trips - before  # type: ignore[attr-defined]
                    row = Row(
                        platform, command, n, tables, policies, requests, seconds, proc.returncode
                    )
                    rows.append(row)
                    print(
                        f"  N={n:<6} {platform:<10} {command:<10} {tables:>5} tables "
                        f"{policies:>4} policies {requests:>6} round trips {seconds:8.1f} s "
                        f"(exit {proc.returncode})",
                        flush=True,
                    )
                e.latency = 0.0  # type: ignore[attr-defined]
    return rows


def render(rows: list[Row], latency: float, jobs: int) -> str:
    lines = [
        f"| platform | command | N | governed tables | policies | round trips | wall s "
        f"({latency * 1000:.0f} ms a request, --jobs {jobs}) | exit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.platform} | {r.command} | {r.n:,} | {r.tables:,} | {r.policies:,} | "
            f"{r.requests:,} | {r.seconds:.1f} | {r.code} |"
        )
    return "\n".join(lines)


def main() -> int:
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # the stand-ins' SHOW fallbacks
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,4000").split(",") if s]
    latency = float(os.environ.get("BENCH_LATENCY_MS", "50")) / 1000
    jobs = int(os.environ.get("BENCH_JOBS", "4"))
    platforms = os.environ.get("BENCH_PLATFORMS", "snowflake,databricks").split(",")
    print(
        f"accord live bench: {latency * 1000:.0f} ms a request, --jobs {jobs}, sizes "
        f"{', '.join(map(str, sizes))}, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows = [r for n in sizes for r in measure(n, latency, jobs, platforms)]
    print()
    print(render(rows, latency, jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
