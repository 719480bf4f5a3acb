"""Run every benchmark under bench/ (each ``*_bench.py``, in name order): ``make bench``.

Benchmarks print their timings; none asserts any. Extra arguments are passed to each one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    status = 0
    for script in sorted(HERE.glob("*_bench.py")):
        print(f"### {script.name}", flush=True)
        done = subprocess.run([sys.executable, str(script), *sys.argv[1:]], check=False)
        status = status or done.returncode
    return status


if __name__ == "__main__":
    sys.exit(main())
