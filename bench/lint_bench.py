"""Benchmark of ``accord lint`` on a generated estate of thousands of tables.

    python bench/lint_bench.py                 # ~3,000 tables, plus scaling at 1/4 and 1/2
    python bench/lint_bench.py --tables 6000   # a bigger estate
    python bench/lint_bench.py --keep DIR      # keep the generated estate in DIR

The estate spans both platforms: datasets with entitlement row filters and hash, redact and
partial masks, replicas of half the warehouse tables in the lakehouse, one identifier domain
shared by every table (the worst case for ACC203 and ACC403), Cortex Search indexes, agents,
a few pipelines with no catalog (so ACC402 and ACC403 have something to report), and
hand-written policy SQL files for both platforms. Prints timings per stage and per rule;
asserts nothing about them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REGIONS = ["EU", "US", "APAC", "LATAM"]
TABLES_PER_FILE = 100
#: the unmasked payload columns of every dataset (a dozen columns in all with the governed ones)
PAYLOAD = ["VISIT_DATE", "ASSAY", "RESULT_VALUE", "UNIT", "BATCH", "COMMENTS_CODE"]


def estate(
    tables: int, principals: int = 40, programmes: int = 60, defects: bool = True
) -> dict[str, dict[str, Any]]:
    """File name -> document of a generated estate with about ``tables`` datasets.

    ``principals`` teams and ``programmes`` entitlement values; a dozen columns per dataset
    (row-filter column, two identifier domains, four masks, six payload columns); files split
    as a repository would be: one datasets file per schema (``TABLES_PER_FILE`` tables).
    ``defects`` adds pipelines with no catalog reading governed tables (ACC402, ACC403), for
    the linter to report; without them the estate lints clean, so compile, verify and plan run.
    """
    team = [f"team_{i:03d}" for i in range(principals)]
    people: dict[str, Any] = {
        t: {"snowflake": t.upper(), "databricks": t.replace("_", "-")} for t in team
    }
    people["steward"] = {"snowflake": "STEWARD", "databricks": "stewards"}
    codes = [f"P-{i:03d}" for i in range(programmes)]
    programme = {p: [team[(i + k) % len(team)] for k in range(3)] for i, p in enumerate(codes)}
    region = {r: team[i::4] for i, r in enumerate(REGIONS)}
    # one pseudonym mask per identifier domain every table shares: the same subject is masked
    # alike everywhere (different masks per table would be ACC403 divergences); one salt per
    # mask and platform (a shared salt would be ACC202)
    masks: dict[str, Any] = {
        domain: {
            "strategy": "hash",
            "unmasked_for": ["steward"],
            "salt": {
                "snowflake": f"env:{domain.upper()}_SALT_SNOWFLAKE",
                "databricks": f"env:{domain.upper()}_SALT_DATABRICKS",
            },
        }
        for domain in ("pseudonym", "site_pseudonym")
    }
    for i in range(8):
        masks[f"notes_{i}"] = {"strategy": "redact", "unmasked_for": [team[(i + 8) % len(team)]]}
        masks[f"phone_{i}"] = {"strategy": "partial", "keep_last": 4}
    masks["birth_date"] = {"strategy": "nullify", "unmasked_for": ["steward"]}

    def columns(platform: str, k: int) -> dict[str, Any]:
        text = "VARCHAR" if platform == "snowflake" else "STRING"
        cols = {
            "SUBJECT_ID": {"type": text, "mask": "pseudonym", "identifier": "subject"},
            "SITE_ID": {"type": text, "mask": "site_pseudonym", "identifier": "site"},
            "NOTES": {"type": text, "mask": f"notes_{k % 8}"},
            "PHONE": {"type": text, "mask": f"phone_{k % 8}"},
            "BIRTH_DATE": {"type": "DATE", "mask": "birth_date"},
            **{c: {"type": text} for c in PAYLOAD},
        }
        if platform == "snowflake":
            return cols
        return {c.lower(): spec for c, spec in cols.items()}

    def row_filter(entitlement: str, column: str) -> dict[str, Any]:
        return {"entitlement": entitlement, "column": column, "unfiltered_for": ["steward"]}

    datasets: dict[str, Any] = {}
    warehouse = tables * 2 // 3
    for i in range(warehouse):
        datasets[f"sf_{i:05d}"] = {
            "platform": "snowflake",
            "table": f"DB_{i // 500}.SCH_{i // 50}.T_{i:05d}",
            "row_filter": row_filter("programme" if i % 3 else "region", "GROUP_CODE"),
            "columns": columns("snowflake", i),
        }
    for j in range(tables - warehouse):
        # every other lakehouse table replicates a warehouse table, governed alike
        source = f"sf_{(2 * j) % warehouse:05d}" if j % 2 == 0 else None
        src = datasets[source] if source else None
        i = (2 * j) % warehouse
        datasets[f"dbx_{j:05d}"] = {
            "platform": "databricks",
            "table": f"lake_{j // 500}.sch_{j // 50}.t_{j:05d}",
            **({"replica_of": source} if source else {}),
            "row_filter": row_filter(
                src["row_filter"]["entitlement"] if src else "programme", "group_code"
            ),
            "columns": columns("databricks", i if src else j),
        }
    for k in range(20):
        datasets[f"reference_{k:02d}"] = {
            "platform": "databricks",
            "table": f"reference.public.r_{k:02d}",
            "columns": {"label": {"type": "STRING"}},
        }

    names = sorted(datasets)
    sf_names = [n for n in names if n.startswith("sf_")]
    dbx_names = [n for n in names if n.startswith("dbx_")]
    surfaces: dict[str, Any] = {}
    for s in range(0, len(sf_names), 10):
        surfaces[f"warehouse_agent_{s // 10:04d}"] = {
            "platform": "snowflake",
            "reads": sf_names[s : s + 10],
            "identity": "caller",
        }
    for s in range(0, len(dbx_names), 10):
        surfaces[f"lakehouse_agent_{s // 10:04d}"] = {
            "platform": "databricks",
            "reads": dbx_names[s : s + 10],
            "identity": "caller",
            "runtime": "15.4",
        }
    for p in range(5):
        # with defects: pipelines with no catalog reading governed tables; without, they
        # read the ungoverned reference tables only
        governed = [dbx_names[p * 7 % len(dbx_names)]] if defects else []
        surfaces[f"pipeline_{p}"] = {
            "platform": "none",
            "reads": [*governed, f"reference_{p:02d}"],
            "identity": "service",
        }
    indexes = {
        f"search_{k:03d}": {
            "platform": "snowflake",
            "kind": "cortex_search",
            "source": sf_names[k * 13 % len(sf_names)],
            "columns": ["NOTES"],
            "inherit_governance": True,
        }
        for k in range(50)
    }
    personas = {
        f"persona_{i:02d}": [team[i % len(team)], team[(i + 7) % len(team)]] for i in range(20)
    }
    personas["steward"] = ["steward"]

    files: dict[str, dict[str, Any]] = {
        "platforms.yaml": {
            "version": 1,
            "platforms": {
                "snowflake": {"governance_schema": "GOVERNANCE.POLICIES"},
                "databricks": {"governance_schema": "governance.policies"},
            },
        },
        "principals.yaml": {"principals": people, "personas": personas},
        "entitlements.yaml": {"entitlements": {"programme": programme, "region": region}},
        "masks.yaml": {"masks": masks},
        "surfaces/indexes.yaml": {"indexes": indexes},
        "surfaces/agents.yaml": {"surfaces": surfaces},
    }
    for start in range(0, len(names), TABLES_PER_FILE):
        chunk = names[start : start + TABLES_PER_FILE]
        first = datasets[chunk[0]]["table"].split(".")
        folder = f"{first[0].lower()}/{first[1].lower()}"
        files[f"datasets/{folder}_{start // TABLES_PER_FILE:03d}.yaml"] = {
            "datasets": {n: datasets[n] for n in chunk}
        }
    return files


def sql_files(pairs: int) -> dict[str, str]:
    """Hand-written policy SQL: ``pairs`` Snowflake/Databricks file pairs, each with ten salted
    masks and their attachments, and one unsalted pair (ACC201 twice, ACC203 once)."""
    out = {}
    for f in range(pairs):
        sf, dbx = [], []
        for m in range(10):
            salt = f"GOVERNANCE.POLICIES.SALT_{m}()"
            unsalted = f == 0 and m == 0
            sf.append(
                f"CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.M_{f}_{m}\n"
                "  AS (val VARCHAR) RETURNS VARCHAR ->\n"
                f"  CASE WHEN IS_ROLE_IN_SESSION('TEAM_{m:02d}') THEN val\n"
                f"  ELSE SHA2(val{'' if unsalted else ' || ' + salt}, 256) END;\n"
                f"ALTER TABLE DB.SCH.T_{f}_{m} MODIFY COLUMN C_{m} SET MASKING POLICY "
                f"GOVERNANCE.POLICIES.M_{f}_{m};\n"
            )
            dbx.append(
                f"CREATE OR REPLACE FUNCTION governance.policies.m_{f}_{m}(v STRING)\n"
                f"  RETURN CASE WHEN is_account_group_member('team-{m:02d}') THEN v\n"
                f"  ELSE sha2({'v' if unsalted else f'concat(v, governance.policies.salt_{m}())'}, 256) END;\n"
                f"ALTER TABLE lake.sch.t_{f}_{m} ALTER COLUMN c_{m} SET MASK "
                f"governance.policies.m_{f}_{m};\n"
            )
        out[f"sql/warehouse_{f:03d}.snowflake.sql"] = "\n".join(sf)
        out[f"sql/lakehouse_{f:03d}.databricks.sql"] = "\n".join(dbx)
    return out


def write_estate(policies: Path, files: dict[str, dict[str, Any]]) -> Path:
    """Write the documents of :func:`estate` as YAML files under ``policies``."""
    for name, doc in files.items():
        path = policies / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=120), encoding="utf-8")
    return policies


def write(root: Path, tables: int, pairs: int) -> tuple[Path, list[Path]]:
    policies = write_estate(root / "policies", estate(tables))
    sql = []
    for name, text in sql_files(pairs).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        sql.append(path)
    return policies, sql


@contextmanager
def timed(label: str, results: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    results[label] = time.perf_counter() - start


def run_once(root: Path, tables: int, pairs: int, verbose: bool) -> dict[str, float]:
    from accord.compiler.lint.checks import REGISTRY, Context
    from accord.compiler.lint.engine import lint_project, lint_sql, load_rules
    from accord.compiler.meaning.divergence import divergences as find_divergences
    from accord.compiler.model.validate import load_project
    from accord.compiler.sqlscan import scan

    t: dict[str, float] = {}
    with timed("generate", t):
        policies, sql = write(root, tables, pairs)
    with timed("load + validate", t):
        project = load_project(policies)
    with timed("lower (both catalogs)", t):
        ctx = Context(project)
        _ = ctx.catalogs
    with timed("divergence.divergences", t):
        divergences = find_divergences(project.model, refused_as_intended=True)
    load_rules()
    per_rule: dict[str, float] = {}
    for rule_id, checks in sorted(REGISTRY.items()):
        for check in checks:
            if check.source != "policy" or check.post:  # post checks read other findings
                continue
            start = time.perf_counter()
            list(check.check(ctx))
            per_rule[rule_id] = per_rule.get(rule_id, 0.0) + time.perf_counter() - start
    with timed("lint_project (fresh, all rules)", t):
        findings = lint_project(load_project(policies))
    with timed("scan + lint_sql", t):
        sql_findings = lint_sql([scan(p.read_text(encoding="utf-8"), str(p)) for p in sql])
    lint = [sys.executable, "-m", "accord.compiler.cli", "lint", "--format", "json"]
    t["accord lint <policies> (process)"] = _wall([*lint, str(policies)])
    t["accord lint <sql files> (process)"] = _wall([*lint, *map(str, sql)])
    model = project.model
    print(
        f"\n== {len(model.datasets)} datasets, {len(model.surfaces)} surfaces, "
        f"{len(model.indexes)} indexes, {len(model.personas)} personas, "
        f"{len(project.files)} YAML files; {len(sql)} SQL files ({len(sql) * 10} masks)"
    )
    print(
        f"   findings: {len(findings)} in policies ({len(divergences)} divergences), "
        f"{len(sql_findings)} in SQL"
    )
    for label, seconds in t.items():
        print(f"   {label:<40} {seconds * 1000:9.1f} ms")
    if verbose:
        for rule_id, seconds in sorted(per_rule.items(), key=lambda kv: -kv[1]):
            print(f"     rule {rule_id:<33} {seconds * 1000:9.1f} ms")
    return t


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"lint failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=3000, help="datasets in the big estate")
    parser.add_argument("--sql-pairs", type=int, default=50, help="Snowflake/Databricks file pairs")
    parser.add_argument("--keep", type=Path, help="write the estates here and keep them")
    args = parser.parse_args(argv)
    sizes = [args.tables // 4, args.tables // 2, args.tables]
    print(f"accord lint benchmark (python {sys.version.split()[0]}, {os.cpu_count()} cpus)")
    timings = []
    for size in sizes:
        root = (
            args.keep / f"estate_{size}"
            if args.keep
            else Path(tempfile.mkdtemp(prefix="accord-bench-"))
        )
        try:
            pairs = max(1, args.sql_pairs * size // args.tables)
            timings.append(run_once(root, size, pairs, verbose=size == sizes[-1]))
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    print("\n== scaling (time per table, ms): stays flat when nothing is quadratic")
    for size, t in zip(sizes, timings, strict=True):
        lint = t["lint_project (fresh, all rules)"] + t["load + validate"]
        print(
            f"   {size:>6} tables   load+lint {lint / size * 1000:6.3f}   "
            f"divergences {t['divergence.divergences'] / size * 1000:6.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
