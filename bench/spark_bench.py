"""``accord verify --engine spark|all``: what the second engine costs (``make bench-spark``).

Starts one local Spark session (the cost a verify run pays once), then verifies the generated
estate of ``bench/lint_bench.py`` (the suite's settings: 300 principals, 200 programmes, a third
of the datasets on Databricks) at each size with ``--engine duckdb``, ``spark`` and ``all``, in
this process and on that one session, as one verify run would. Prints wall and CPU seconds of
this Python process (Spark's JVM is another process: its CPU is not in the column, its time is
in the wall time). Asserts nothing.

    python bench/spark_bench.py                  # N = 100 and 1,000
    BENCH_SIZES=100 python bench/spark_bench.py
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lint_bench import estate, write_estate  # noqa: E402

PRINCIPALS = 300
PROGRAMMES = 200


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    from accord.compiler.model.validate import load_project
    from accord.compiler.verify.run import verify
    from accord.compiler.verify.spark import session

    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "100,1000").split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    t, c = time.perf_counter(), _cpu()
    spark = session.start()
    print(f"| Spark session start | {time.perf_counter() - t:.1f} s | {_cpu() - c:.1f} s |")
    try:
        rows = []
        for n in sizes:
            with tempfile.TemporaryDirectory(prefix="accord-spark-bench-") as root:
                files = estate(n, principals=PRINCIPALS, programmes=PROGRAMMES, defects=False)
                policies = write_estate(Path(root) / "policies", files)
                project = load_project(str(policies))
                model = project.model
                dbx = sum(1 for d in model.datasets.values() if d.platform == "databricks")
                for engine in ("duckdb", "spark", "all"):
                    t, c = time.perf_counter(), _cpu()
                    report = verify(project, engine=engine, spark=spark)
                    wall, cpu = time.perf_counter() - t, _cpu() - c
                    rows.append(
                        f"| {len(model.datasets)} ({dbx} Databricks), {len(model.personas)} "
                        f"personas | {engine} | {wall:.1f} s | {cpu:.1f} s | "
                        f"{report.checks} | {len(report.mismatches)} |"
                    )
                    print(rows[-1], flush=True)
    finally:
        spark.stop()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
