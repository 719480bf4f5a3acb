"""Benchmark of ``accord diff`` on the generated estate of ``lint_bench.py``.

    python bench/diff_bench.py                 # ~3,000 tables, plus scaling at 1/4 and 1/2
    python bench/diff_bench.py --tables 6000

The head differs from the base by three one-line changes (a team added to a programme, a
team added to a mask's ``unmasked_for``, a surface reading one more governed table), so the
diff reads every persona's view of every place on both sides and reports a few hundred
changes. Prints timings; asserts nothing about them.
"""

from __future__ import annotations

import argparse
import copy
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from lint_bench import estate  # noqa: E402


def _write(root: Path, files: dict[str, dict[str, Any]]) -> Path:
    for name, doc in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=120), encoding="utf-8")
    return root


def edited(files: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    head = copy.deepcopy(files)
    programme = head["entitlements.yaml"]["entitlements"]["programme"]
    programme["P-000"].append("team_39")
    head["masks.yaml"]["masks"]["notes_0"]["unmasked_for"].append("team_00")
    surfaces = head["surfaces.yaml"]["surfaces"]
    first = surfaces["warehouse_agent_0000"]
    first["reads"] = [*first["reads"], surfaces["warehouse_agent_0001"]["reads"][0]]
    return head


def run_once(root: Path, tables: int) -> dict[str, float]:
    from compiler.diff import exposure_diff, places_of, to_markdown
    from compiler.validate import load_project

    files = estate(tables)
    base_dir = _write(root / "base", files)
    head_dir = _write(root / "head", edited(files))
    t: dict[str, float] = {}
    start = time.perf_counter()
    base, head = load_project(base_dir), load_project(head_dir)
    t["load + validate (both)"] = time.perf_counter() - start
    start = time.perf_counter()
    result = exposure_diff(base, head)
    t["exposure_diff"] = time.perf_counter() - start
    start = time.perf_counter()
    to_markdown(result, places_of(base.model, head.model))
    t["markdown"] = time.perf_counter() - start
    model = head.model
    print(
        f"\n== {len(model.datasets)} datasets, {len(model.surfaces)} surfaces, "
        f"{len(model.personas)} personas: {len(result.widenings)} widenings, "
        f"{len(result.narrowings)} narrowings, {len(result.divergences)} divergence changes"
    )
    for label, seconds in t.items():
        print(f"   {label:<40} {seconds * 1000:9.1f} ms")
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=3000, help="datasets in the big estate")
    parser.add_argument("--sql-pairs", type=int, default=0, help="ignored (lint_bench option)")
    parser.add_argument("--keep", type=Path, help="write the estates here and keep them")
    args = parser.parse_args(argv)
    gc.set_threshold(100_000, 50, 100)  # as `accord diff` does
    sizes = [args.tables // 4, args.tables // 2, args.tables]
    print(f"accord diff benchmark (python {sys.version.split()[0]})")
    timings = []
    for size in sizes:
        root = args.keep / f"diff_{size}" if args.keep else Path(tempfile.mkdtemp(prefix="accord-"))
        try:
            timings.append(run_once(root, size))
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    print("\n== scaling (time per table, ms): stays flat when nothing is quadratic")
    for size, t in zip(sizes, timings, strict=True):
        print(f"   {size:>6} tables   diff {t['exposure_diff'] / size * 1000:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
