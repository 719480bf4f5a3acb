"""The bounded work of ``accord probe sample`` and ``accord gate test``: ``make bench-bounds``.

* **probe sample**: N rows of Snowflake access history (every row a read of the reference
  estate's assay table through the warehouse agent, its statement text one of a dozen, as a
  dashboard's are) served by an in-process executor that answers the history statement as
  the platform does (newest first, ``LIMIT`` honoured; each row its own kind of read, the
  grouping left out), then mapped and reported. Past ``MAX_HISTORY_ROWS`` the newest are read
  and the report says the window is not whole. ``bench/sample_bench.py`` measures the
  grouping itself, on the stand-ins, at a million rows.
* **gate test**: accord's default policy proven on a sample manifest of N agents. Past
  ``MAX_VARIED_ITEMS`` agents the keys of the first ones are varied and the proof says so.

Each row is one run in this process (wall and CPU seconds, the peak resident size of the
process so far). Asserts nothing; tests never assert timings.

    make bench-bounds                            # probe sample at 5,000 and 50,000 rows,
                                                 # gate test at 10 and 150 agents
    BENCH_ROWS=2000,20000 make bench-bounds      # other history sizes
    BENCH_AGENTS=20,40 make bench-bounds         # other sample sizes
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

RESULTS = "DISCOVERY.ASSAYS.RESULTS"
DIGEST = "0123456789abcdef" * 4


def _sizes(name: str, default: str) -> list[int]:
    return [int(s) for s in os.environ.get(name, default).split(",") if s.strip()]


def history(n: int) -> list[dict[str, Any]]:
    """N rows of ACCESS_HISTORY joined with QUERY_HISTORY and SESSIONS, oldest first."""
    values = ["ONC-101", "CNS-204", "IMM-310"]
    rows = []
    for i in range(n):
        text = f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE = '{values[i % 3]}'"
        if i % 4 == 0:
            text += f" AND RESULT_VALUE > {i % 12}"
        rows.append(
            {
                "query_id": f"q{i:08d}",
                "query_start_time": f"2026-11-{1 + i * 28 // max(n, 1):02d} 10:00:00.000",
                "user_name": "U",
                "base_objects_accessed": json.dumps(
                    [
                        {
                            "objectDomain": "Table",
                            "objectName": RESULTS,
                            "columns": [{"columnName": "SUBJECT_ID"}],
                        }
                    ]
                ),
                "direct_objects_accessed": None,
                "policies_referenced": None,
                "role_name": "BENCH_CHEMIST",
                "secondary_role_stats": None,
                "query_tag": None,
                "query_text": text,
                "client_application_id": "warehouse-agent 1.0",
                "client_environment": None,
            }
        )
    return rows


class History:
    """An executor answering the grouped history statement as Snowflake would: ``ORDER BY ...
    DESC`` and ``LIMIT`` honoured, each row with the window's queries and kinds (its ``OVER
    ()`` totals), each row its own kind of read (no grouping here: the most rows the bound lets
    through; bench/sample_bench.py measures the grouping on the stand-ins)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def query(self, statement: str) -> list[dict[str, Any]]:
        if "ACCESS_HISTORY" not in statement:
            return []
        rows = self.rows[::-1] if " DESC" in statement else self.rows
        found = re.search(r"LIMIT (\d+)", statement)
        rows = rows[: int(found.group(1))] if found else list(rows)
        total = {"window_queries": len(self.rows), "window_kinds": len(self.rows)}
        return [{**r, **total} for r in rows]


def estate(tmp: Path) -> Path:
    """policies/ with the warehouse agent's traffic named by its client."""
    import yaml

    root = tmp / "policies"
    shutil.copytree(ROOT / "policies", root)
    path = root / "surfaces.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["surfaces"]["warehouse_agent"]["traffic"] = {"client": "warehouse-agent"}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return root


def timed(work: Any) -> tuple[float, float, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    got = work()
    return time.perf_counter() - wall, time.process_time() - cpu, got


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def bench_sample(rows: list[int]) -> None:
    from accord.compiler.model.validate import load_project
    from accord.compiler.probe_sample.run import SampleOptions, sample

    print("| probe sample: history rows | wall s | cpu s | peak MB | reads | complete |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="accord-bounds-bench-") as tmp:
        project = load_project(estate(Path(tmp)))
        for n in rows:
            executor = History(history(n))
            options = SampleOptions(
                platform="snowflake", since=30, executors={"snowflake": executor}
            )
            wall, cpu, got = timed(lambda o=options: sample(project, o))
            complete = got.to_doc()["coverage"][0]["complete"]
            reads = got.coverage()["reads"]
            print(f"| {n:,} | {wall:.1f} | {cpu:.1f} | {peak_mb()} | {reads:,} | {complete} |")


def manifest(n: int) -> dict[str, Any]:
    agents = []
    for i in range(n):
        name = f"agent_{i:03d}"
        agents.append(
            {
                "name": name,
                "url": f"https://{name}.example.com/a2a",
                "card_url": f"https://{name}.example.com/.well-known/agent-card.json",
                "version": "2.3.0",
                "card_digest": DIGEST,
                "registered_card_digest": DIGEST,
                "a2a_version": "1.0",
                "eval_digest": DIGEST,
                "reads_governed_data": True,
                "policy_probe_passed": True,
                "probe_owners": ["data-governance"],
            }
        )
    return {
        "accord_manifest": 1,
        "model_fingerprint": DIGEST,
        "expected_agent_count": n,
        "evidence": {"mesh_eval_digest": DIGEST, "probe_result_digest": DIGEST},
        "manifest": {"negotiated_a2a_version": "1.0", "agents": agents, "retired_agents": []},
    }


def bench_gate(agents: list[int]) -> None:
    from accord.compiler.gate.check import default_policy
    from accord.compiler.gate.prove import prove

    print("| gate test: agents | wall s | cpu s | variants | bounded |")
    print("|---|---|---|---|---|")
    policy = default_policy()
    for n in agents:
        wall, cpu, proof = timed(lambda n=n: prove(policy, "policy.rego", manifest(n), "sample"))
        bounded = bool(getattr(proof, "bounded", False))  # False before the bound existed
        print(f"| {n} | {wall:.1f} | {cpu:.1f} | {len(proof.outcomes)} | {bounded} |")


def main() -> None:
    bench_sample(_sizes("BENCH_ROWS", "5000,50000"))
    print()
    bench_gate(_sizes("BENCH_AGENTS", "10,150"))


if __name__ == "__main__":
    main()
