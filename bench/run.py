"""The accord benchmark suite: ``make bench``.

Generates estates of N datasets (``bench/lint_bench.py``'s generator: a few hundred principals
and programmes, a dozen columns per dataset, replicas, surfaces, one datasets file per schema)
and runs every command as a fresh process, as a user or a CI job would, several times. Prints
one table: the median wall time and peak RSS of each command, its ratio to the YAML floors
measured in the same run, and how each grows with N. Asserts nothing.

    make bench                          # N = 1,000 and 4,000
    BENCH_LARGE=1 make bench            # adds 16,000
    BENCH_SIZES=500,2000 make bench     # any sizes
    BENCH_RUNS=5 make bench             # runs per measurement (default 3; the median is kept)
    BENCH_ONLY=lint,plan-salt make bench  # some rows only (floors always run)
    BENCH_VERIFY_MAX=4000 make bench    # verify runs up to this N (default 1,000: it is slow)
    BENCH_ONLY=premerge make bench      # the pre-merge check (lint, diff --base, verify), total
    python bench/run.py --keep /tmp/estates   # keep the generated estates

Floors: ``floor: yaml load`` parses every file of the estate with PyYAML's C loader
(``yaml.load(..., CSafeLoader)``), ``floor: compose`` only composes the node graph (which is
what accord does, since it keeps the position of every node); both include interpreter start.
Cold start compares ``accord lint policies`` (the small reference estate) with
``python -c "import yaml, pydantic"``; accord's own modules are byte-compiled first (as an
install does), and one more row runs the cold lint with them compiled from source.
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from lint_bench import estate, write_estate  # noqa: E402

PRINCIPALS = 300
PROGRAMMES = 200

FLOOR = """
import sys, yaml
from pathlib import Path
files = sorted(p for p in Path(sys.argv[2]).rglob("*.yaml"))
if sys.argv[1] == "load":
    for p in files:
        yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)
else:
    for p in files:
        yaml.compose(p.read_bytes().decode(), Loader=yaml.CSafeLoader)
"""


@dataclass
class Sample:
    seconds: float
    rss_mb: float
    #: user + system CPU time of the process: what the ratios use, since wall time on a loaded
    #: machine measures the other processes too
    cpu: float


def run(
    argv: list[str],
    cwd: Path,
    ok: tuple[int, ...] = (0, 1),
    cache: Path | None = None,
    env: dict[str, str] | None = None,
) -> Sample:
    """Run one process; wall time and its own peak RSS (``wait4``: this child only)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**_env(cache), **(env or {})},
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        raise SystemExit(
            f"bench: {' '.join(argv)} exited {proc.returncode}:\n{err.decode()[-3000:]}"
        )
    return Sample(elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def _env(cache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if cache is None:
        env["ACCORD_NO_CACHE"] = "1"  # cold runs unless a row asks for the cache
    else:
        env.pop("ACCORD_NO_CACHE", None)
        env["ACCORD_CACHE_DIR"] = str(cache)
    return env


def measure_warm(base: Path, runs: int, scratch: Path) -> dict[str, Sample]:
    """``accord lint`` with the cache (compiler/cache.py): unchanged files, and after a change
    of one datasets file (a different one each run, so every run misses on it). The edits are
    made in a copy of ``base``, so the rows measured after these see the estate unchanged."""
    cache = scratch / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    copy = scratch / "warm-estate"
    shutil.rmtree(copy, ignore_errors=True)
    base = Path(shutil.copytree(base, copy))
    argv = accord("lint", str(base))
    run(argv, ROOT, cache=cache)  # fill the cache
    same = [run(argv, ROOT, cache=cache) for _ in range(runs)]
    changed = []
    files = sorted((base / "datasets").rglob("*.yaml"))
    for i in range(runs):
        path = files[i % len(files)]
        path.write_text(path.read_text(encoding="utf-8") + f"# edit {i}\n", encoding="utf-8")
        changed.append(run(argv, ROOT, cache=cache))
    # an edit of what the file says (one more column on its first dataset): lint's cache
    # reuses findings only for edits that change nothing lint reads (compiler/cache.py), so
    # this row is the incremental path's real case
    entry = []
    for i in range(runs):
        path = files[-1 - i % len(files)]
        text = path.read_text(encoding="utf-8")
        column = f"EDIT_{i}" if "platform: snowflake" in text else f"edit_{i}"
        kind = "VARCHAR" if "platform: snowflake" in text else "STRING"
        added = f"    columns:\n      {column}:\n        type: {kind}\n"
        path.write_text(text.replace("    columns:\n", added, 1), encoding="utf-8")
        entry.append(run(argv, ROOT, cache=cache))
    return {
        "lint, warm cache": _median(same),
        "lint, warm, 1 file changed": _median(changed),
        "lint, warm, 1 entry changed": _median(entry),
    }


PREMERGE = ("lint", "diff --base", "verify")


def measure_premerge(dirs: dict[str, Path], runs: int, scratch: Path) -> dict[str, Sample]:
    """The whole pre-merge check of a pull request making the one-line change (``line``), as a
    CI job runs it: the checkout (one directory, ``premerge-head``) holds the base, the job's
    cache is what a run on the base left there (``accord lint`` of the checkout and of the
    base directory ``diff --base`` reads), then the change lands in the checkout and
    ``accord lint``, ``accord diff --base``, ``accord verify`` run one after the other, each a
    fresh process; each run starts again from that cache. The total is the sum of the three,
    run by run (its median is the median of the sums)."""
    base, line = dirs["base"], dirs["line"]
    head = scratch / "premerge-head"
    shutil.rmtree(head, ignore_errors=True)
    shutil.copytree(base, head)
    filled = scratch / "premerge-cache-base"
    shutil.rmtree(filled, ignore_errors=True)
    run(accord("lint", str(head)), ROOT, cache=filled)
    run(accord("lint", str(base)), ROOT, cache=filled)
    changed = 0
    for path in sorted(line.rglob("*.yaml")):
        target = head / path.relative_to(line)
        if target.read_bytes() != path.read_bytes():
            shutil.copyfile(path, target)
            changed += 1
    assert changed == 1, changed  # the one-line change: one file
    steps = {
        "lint": accord("lint", str(head)),
        "diff --base": accord("diff", str(head), "--base", f"dir:{base}", "--format", "json"),
        "verify": accord("verify", str(head)),
    }
    samples: dict[str, list[Sample]] = {name: [] for name in (*PREMERGE, "total")}
    for _ in range(runs):
        cache = scratch / "premerge-cache"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(filled, cache)
        taken = [run(steps[name], ROOT, cache=cache) for name in PREMERGE]
        for name, sample in zip(PREMERGE, taken, strict=True):
            samples[name].append(sample)
        samples["total"].append(
            Sample(
                sum(s.seconds for s in taken),
                max(s.rss_mb for s in taken),
                sum(s.cpu for s in taken),
            )
        )
    return {f"pre-merge: {name}": _median(found) for name, found in samples.items()}


def _median(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.seconds for s in samples),
        max(s.rss_mb for s in samples),
        statistics.median(s.cpu for s in samples),
    )


def accord(*args: str) -> list[str]:
    return [sys.executable, "-m", "accord.compiler.cli", *args]


def prepare(root: Path | str, n: int | str) -> dict[str, Path]:
    """The estate of ``n`` datasets and its two plan heads (salt rotation + grant, one line)."""
    root, n = Path(root), int(n)
    files = estate(n, principals=PRINCIPALS, programmes=PROGRAMMES, defects=False)
    base = write_estate(root / "base", files)
    # a salt rotation plus one grant
    rotated = {k: _copy(v) for k, v in files.items()}
    salt = rotated["masks.yaml"]["masks"]["pseudonym"]["salt"]
    salt["snowflake"] = "env:PSEUDONYM_SALT_SNOWFLAKE_V2"
    salt["databricks"] = "env:PSEUDONYM_SALT_DATABRICKS_V2"
    grants = rotated["entitlements.yaml"]["entitlements"]["programme"]
    grants["P-000"].append("team_100" if PRINCIPALS > 100 else "steward")
    write_estate(root / "salt", rotated)
    # a one-line change: one more principal sees one dataset's notes
    line = {k: _copy(v) for k, v in files.items()}
    line["masks.yaml"]["masks"]["notes_3"]["unmasked_for"].append("steward")
    write_estate(root / "line", line)
    return {"base": base, "salt": root / "salt", "line": root / "line"}


def prepare_apart(root: Path, n: int) -> dict[str, Path]:
    """:func:`prepare` in a child process: Linux carries a parent's peak RSS into every child
    it forks, so a bench process that built a big estate itself would inflate every reading."""
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import run; run.prepare(*sys.argv[1:])"
    subprocess.run([sys.executable, "-c", code, str(root), str(n)], check=True, cwd=ROOT)
    return {"base": root / "base", "salt": root / "salt", "line": root / "line"}


def _copy(value: object) -> object:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def commands(dirs: dict[str, Path], scratch: Path) -> dict[str, list[str]]:
    base = str(dirs["base"])
    return {
        "floor: yaml load": [sys.executable, "-c", FLOOR, "load", base],
        "floor: compose": [sys.executable, "-c", FLOOR, "compose", base],
        "validate": accord("validate", base),
        "lint": accord("lint", base),
        "compile": accord("compile", base, "--out", str(scratch / "compiled"), "--target", "all"),
        "verify": accord("verify", base),
        "analyze": accord("analyze", base, "--format", "json"),
        "plan-salt": accord(
            "plan", str(dirs["salt"]), "--base", f"dir:{base}", "--out", str(scratch / "plans")
        ),
        "plan-line": accord(
            "plan", str(dirs["line"]), "--base", f"dir:{base}", "--out", str(scratch / "plans")
        ),
        "diff-salt": accord("diff", str(dirs["salt"]), "--base", f"dir:{base}", "--format", "json"),
        "diff-line": accord("diff", str(dirs["line"]), "--base", f"dir:{base}", "--format", "json"),
    }


def measure(argv: list[str], runs: int, scratch: Path, env: dict[str, str] | None = None) -> Sample:
    samples = []
    for _ in range(runs):
        shutil.rmtree(scratch / "plans", ignore_errors=True)
        shutil.rmtree(scratch / "compiled", ignore_errors=True)
        samples.append(run(argv, ROOT, env=env))
    return _median(samples)


#: accord's own packages (an editable install maps ``accord`` to these directories)
OWN = ("accord", "compiler", "targets")


def compile_own() -> None:
    """Byte-compile accord's own modules into their ``__pycache__``, as pip does when it
    installs a package and as an editable install does on its first import. Python reads that
    bytecode even under PYTHONDONTWRITEBYTECODE=1, which would otherwise leave every run
    compiling accord from source (the dependencies and the standard library have theirs)."""
    for d in OWN:
        compileall.compile_dir(ROOT / d, quiet=1)


#: run with PYTHONPYCACHEPREFIX set to an empty directory: lints policies/ twice in process
#: (filling a cache, then reading it), then compiles under the prefix every imported module
#: but accord's own (``py_compile`` writes, PYTHONDONTWRITEBYTECODE or not)
_COMPILE_DEPS = """
import os, py_compile, runpy, sys, tempfile
own = tuple(sys.argv[1:])
with tempfile.TemporaryDirectory() as cache:
    os.environ.pop("ACCORD_NO_CACHE", None)
    os.environ["ACCORD_CACHE_DIR"] = cache
    for _ in range(2):
        sys.argv = ["accord", "lint", "policies"]
        try:
            runpy.run_module("accord.compiler.cli", run_name="__main__", alter_sys=True)
        except SystemExit:
            pass
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None) or ""
    if path.endswith(".py") and not path.startswith(own):
        py_compile.compile(path, doraise=True)
"""


def without_own_bytecode(prefix: Path) -> dict[str, str]:
    """The environment of a run that compiles accord's own modules from source (a user with
    PYTHONDONTWRITEBYTECODE=1 and an editable install that never wrote ``__pycache__``) and
    reads everything else's bytecode: Python looks for bytecode under ``prefix`` only, where
    every other module a lint of policies/ imports was compiled first."""
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [sys.executable, "-c", _COMPILE_DEPS, *(f"{ROOT / d}{os.sep}" for d in OWN)],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the estates here and keep them")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,4000").split(",") if s]
    if os.environ.get("BENCH_LARGE") and "BENCH_SIZES" not in os.environ:
        sizes.append(16_000)
    runs = int(os.environ.get("BENCH_RUNS", "3"))
    compile_own()
    only = {s for s in os.environ.get("BENCH_ONLY", "").split(",") if s}
    print(
        f"accord bench: python {sys.version.split()[0]}, {platform.machine()}, "
        f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}; "
        f"median of {runs} runs; sizes {', '.join(map(str, sizes))}",
        flush=True,
    )
    table: dict[str, dict[int, Sample]] = {}
    keep = args.keep
    for n in sizes:
        root = keep / f"estate_{n}" if keep else Path(tempfile.mkdtemp(prefix="accord-bench-"))
        try:
            dirs = prepare_apart(root, n)
            scratch = root / "scratch"
            scratch.mkdir(exist_ok=True)
            for label, cmd in commands(dirs, scratch).items():
                if only and not label.startswith("floor") and label not in only:
                    continue
                if label == "verify" and n > int(os.environ.get("BENCH_VERIFY_MAX", "1000")):
                    continue
                sample = measure(cmd, runs, scratch)
                table.setdefault(label, {})[n] = sample
                _show(n, label, sample)
            if not only or "warm" in only:
                for label, sample in measure_warm(dirs["base"], runs, scratch).items():
                    table.setdefault(label, {})[n] = sample
                    _show(n, label, sample)
            if "premerge" in only:  # only when asked: it runs verify at every size
                for label, sample in measure_premerge(dirs, runs, scratch).items():
                    table.setdefault(label, {})[n] = sample
                    _show(n, label, sample)
        finally:
            if not keep:
                shutil.rmtree(root, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="accord-bench-pyc-") as pyc:
        source = without_own_bytecode(Path(pyc))
        lint, cold_runs = accord("lint", "policies"), max(runs, 5)
        cold = {
            "cold: accord lint policies": measure(lint, cold_runs, ROOT),
            "cold: accord lint policies, warm cache": _warm_policies(cold_runs),
            "cold: accord lint policies, accord without bytecode": measure(
                lint, cold_runs, ROOT, source
            ),
            "cold: import yaml, pydantic": measure(
                [sys.executable, "-c", "import yaml, pydantic"], cold_runs, ROOT
            ),
        }
    print()
    print(render(table, sizes, cold))
    return 0


def _warm_policies(runs: int) -> Sample:
    with tempfile.TemporaryDirectory(prefix="accord-bench-cache-") as cache:
        argv = accord("lint", "policies")
        run(argv, ROOT, cache=Path(cache))
        return _median([run(argv, ROOT, cache=Path(cache)) for _ in range(runs)])


def _show(n: int, label: str, sample: Sample) -> None:
    print(
        f"  N={n:<6} {label:<26} {sample.seconds:8.2f} s wall "
        f"{sample.cpu:8.2f} s cpu {sample.rss_mb:6.0f} MB",
        flush=True,
    )


def render(table: dict[str, dict[int, Sample]], sizes: list[int], cold: dict[str, Sample]) -> str:
    """One markdown table: per size, median wall and CPU seconds, CPU time over each floor's,
    peak RSS; then CPU growth between sizes."""
    head = ["command"]
    for n in sizes:
        head += [f"N={n:,} wall s", "cpu s", "x load", "x compose", "MB"]
    for a, b in itertools.pairwise(sizes):
        head.append(f"t({b:,})/t({a:,})")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    floor = table.get("floor: yaml load", {})
    compose = table.get("floor: compose", {})
    for label, by_n in table.items():
        row = [label]
        for n in sizes:
            s = by_n.get(n)
            if s is None:
                row += ["", "", "", "", ""]
                continue
            row += [
                f"{s.seconds:.2f}",
                f"{s.cpu:.2f}",
                f"{s.cpu / floor[n].cpu:.2f}" if n in floor else "",
                f"{s.cpu / compose[n].cpu:.2f}" if n in compose else "",
                f"{s.rss_mb:.0f}",
            ]
        for a, b in itertools.pairwise(sizes):
            ok = a in by_n and b in by_n
            row.append(f"{by_n[b].cpu / by_n[a].cpu:.2f}" if ok else "")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    base = cold["cold: import yaml, pydantic"]
    lines.append("| cold start | wall s | cpu s | x floor (wall) | x floor (cpu) | MB |")
    lines.append("|---|---|---|---|---|---|")
    for label, s in cold.items():
        lines.append(
            f"| {label} | {s.seconds:.3f} | {s.cpu:.3f} | {s.seconds / base.seconds:.2f} | "
            f"{s.cpu / base.cpu:.2f} | {s.rss_mb:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
