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
    BENCH_STYLES=tag make bench-live             # Snowflake's styles (default column,tag)
    BENCH_READERS=admin make bench-live          # readers (default least; admin: every answer)

The reader is the least-privilege one the README's reader grants make (tests/live_helpers.py:
``snowflake_reader``, ``databricks_reader``), or an administrator that sees everything.

Goal (issue 20): round trips grow with policies, schemas and catalogs, not with tables;
drift at 4,000 tables under 60 s at 50 ms a request. Issue 41: at most 60 round trips at
4,000 tables per platform, in both Snowflake styles, with the least-privilege reader.
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
    style: str
    reader: str
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


def deploy(base: Path, scratch: Path, platform: str, reader: str) -> object:
    """The platform's stand-in, seeded with the estate's tables and holding what its compiled
    SQL deploys; with ``reader`` "least", the reading role or principal holds the README's
    reader grants only."""
    from accord.compiler.model.validate import load_project
    from accord.sandbox.standins.databricks import DatabricksEstate
    from accord.sandbox.standins.snowflake import SnowflakeEstate
    from accord.targets import lower_all
    from tests.live_helpers import (
        databricks_reader,
        deploy_compiled,
        seed_model,
        snowflake_reader,
    )

    out = scratch / "compiled"
    subprocess.run(
        [sys.executable, "-m", "accord.compiler.cli", "compile", str(base), "--out", str(out)],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    project = load_project(base)
    e = SnowflakeEstate() if platform == "snowflake" else DatabricksEstate()
    seed_model(e, project.model)
    deploy_compiled(e, out)
    if reader == "least":
        expected = lower_all(project)[platform]
        if isinstance(e, SnowflakeEstate):
            snowflake_reader(e, expected)
        else:
            schemas = {t.rsplit(".", 1)[0] for t in _tables(expected)}
            databricks_reader(e, schemas, expected.governance_schema)
    return e


def _tables(catalog: object) -> set[str]:
    return {getattr(o, "table", "") for o in catalog} - {""}  # type: ignore[attr-defined]


def with_style(files: dict, style: str) -> dict:
    """The generated estate with Snowflake's ``style``."""
    import copy

    out = copy.deepcopy(files)
    out["platforms.yaml"]["platforms"]["snowflake"]["style"] = style
    return out


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


def measure(
    n: int, latency: float, jobs: int, platforms: list[str], styles: list[str], readers: list[str]
) -> list[Row]:
    from accord.compiler.model.validate import load_project
    from accord.sandbox.standins.databricks import workspace
    from accord.sandbox.standins.snowflake import account
    from accord.targets import lower_all
    from accord.targets.objects import MaskPolicy, RowFilterPolicy
    from tests.live_helpers import SNOWFLAKE_READER

    rows: list[Row] = []
    generated = estate(n, principals=PRINCIPALS, programmes=PROGRAMMES, defects=False)
    runs = [(p, s, r) for p in platforms for s in (styles if p == "snowflake" else ["table"])
            for r in readers]  # fmt: skip
    for platform, style, reader in runs:
        with tempfile.TemporaryDirectory(prefix="accord-live-bench-") as tmp:
            root = Path(tmp)
            files = with_style(generated, style) if platform == "snowflake" else generated
            base = write_estate(root / "base", files)
            os.environ.update(salts_env(base))
            started = time.perf_counter()
            e = deploy(base, root, platform, reader)
            print(
                f"  N={n}: {platform} ({style}) deployed in {time.perf_counter() - started:.0f} s",
                flush=True,
            )
            catalog = lower_all(load_project(base))[platform]
            tables = len(_tables(catalog))
            policies = len(catalog.of(MaskPolicy)) + len(catalog.of(RowFilterPolicy))
            with ExitStack() as stack:
                params = host = None
                if platform == "snowflake":
                    params = stack.enter_context(account(e))  # type: ignore[arg-type]
                else:
                    host = stack.enter_context(workspace(e))  # type: ignore[arg-type]
                env = env_for(params, host)
                if platform == "snowflake" and reader == "least":
                    env["SNOWFLAKE_ROLE"] = SNOWFLAKE_READER
                for salt in salts_env(base):  # no salts: the canary queries are not measured
                    env.pop(salt, None)
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
                    row = Row(platform, style, reader, command, n, tables, policies, requests,
                              seconds, proc.returncode)  # fmt: skip
                    rows.append(row)
                    print(
                        f"  N={n:<6} {platform:<10} {style:<6} {reader:<5} {command:<10} "
                        f"{tables:>5} tables {policies:>4} policies {requests:>6} round trips "
                        f"{seconds:8.1f} s (exit {proc.returncode})",
                        flush=True,
                    )
                    if os.environ.get("BENCH_SHOW"):
                        print(proc.stdout.decode()[-4000:])
                e.latency = 0.0  # type: ignore[attr-defined]
    return rows


def render(rows: list[Row], latency: float, jobs: int) -> str:
    lines = [
        f"| platform | style | reader | command | N | governed tables | policies | round trips "
        f"| wall s ({latency * 1000:.0f} ms a request, --jobs {jobs}) | exit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.platform} | {r.style} | {r.reader} | {r.command} | {r.n:,} | {r.tables:,} | "
            f"{r.policies:,} | {r.requests:,} | {r.seconds:.1f} | {r.code} |"
        )
    return "\n".join(lines)


def main() -> int:
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # the stand-ins' SHOW fallbacks
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,4000").split(",") if s]
    latency = float(os.environ.get("BENCH_LATENCY_MS", "50")) / 1000
    jobs = int(os.environ.get("BENCH_JOBS", "4"))
    platforms = os.environ.get("BENCH_PLATFORMS", "snowflake,databricks").split(",")
    styles = os.environ.get("BENCH_STYLES", "column,tag").split(",")
    readers = os.environ.get("BENCH_READERS", "least").split(",")
    print(
        f"accord live bench: {latency * 1000:.0f} ms a request, --jobs {jobs}, sizes "
        f"{', '.join(map(str, sizes))}, load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows = [r for n in sizes for r in measure(n, latency, jobs, platforms, styles, readers)]
    print()
    print(render(rows, latency, jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
