"""No product module over 900 lines: a newcomer reads a room at once. The allowance below names
the modules still over the limit, each with the size it may not grow past; it may only shrink
(an entry whose module has come under the limit fails too, so it is removed when it is)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT

LIMIT = 900
#: module -> the most lines it may have while it is being split (may only shrink)
ALLOWANCE: dict[str, int] = {}


def sizes(root: Path = ROOT) -> dict[str, int]:
    out = {}
    for top in ("accord", "compiler", "targets", "sandbox"):
        for path in sorted((root / top).rglob("*.py")):
            out[path.relative_to(root).as_posix()] = len(path.read_bytes().splitlines())
    return out


def over(found: dict[str, int], allowance: dict[str, int] = ALLOWANCE) -> list[str]:
    """Modules over the limit beyond their allowance, and allowances no longer needed."""
    wrong = [
        f"{m}: {n} lines (limit {LIMIT}, allowed {allowance.get(m, LIMIT)})"
        for m, n in sorted(found.items())
        if n > allowance.get(m, LIMIT)
    ]
    wrong += [
        f"{m}: allowed {n} lines, but it has {found.get(m, 0)}: remove it from ALLOWANCE"
        for m, n in sorted(allowance.items())
        if found.get(m, 0) <= LIMIT
    ]
    return wrong


def test_no_module_over_the_limit() -> None:
    assert over(sizes()) == []


def test_the_check_fails_on_a_module_too_long_and_on_a_stale_allowance() -> None:
    assert over({"compiler/x.py": LIMIT}, {}) == []
    assert over({"compiler/x.py": LIMIT + 1}, {}) == [
        f"compiler/x.py: {LIMIT + 1} lines (limit {LIMIT}, allowed {LIMIT})"
    ]
    assert over({"compiler/x.py": LIMIT + 5}, {"compiler/x.py": LIMIT + 9}) == []
    assert len(over({"compiler/x.py": LIMIT + 10}, {"compiler/x.py": LIMIT + 9})) == 1
    assert len(over({"compiler/x.py": LIMIT}, {"compiler/x.py": LIMIT + 9})) == 1  # stale
