"""Rewrite tests/golden/ from the current compiler: ``make golden`` (review the diff!)."""

from __future__ import annotations

import shutil

from tests.golden_cases import CASES, GOLDEN, render_case


def main() -> None:
    for name in sorted(CASES):
        target = GOLDEN / name
        shutil.rmtree(target, ignore_errors=True)
        for rel, text in render_case(name).items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        print(f"tests/golden/{name}: {len(list(target.rglob('*.*')))} files")


if __name__ == "__main__":
    main()
