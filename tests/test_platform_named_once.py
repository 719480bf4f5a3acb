"""The platform is named once (CONTRIBUTING.md, "Where a change goes"): shared code reads a
platform's facts (compiler/core/platforms.py) or its bound parts (targets/platform.py), and
never compares a platform's name with a string. Only those two modules and the platform
folders (targets/snowflake/, targets/databricks/) may say ``platform == "snowflake"``."""

from __future__ import annotations

import ast
from pathlib import Path

from accord.compiler.core.platforms import PLATFORMS
from tests.conftest import ROOT

#: where a platform may be named in a comparison
ALLOWED = (
    "compiler/core/platforms.py",
    "targets/platform.py",
    *(f"targets/{name}/" for name in PLATFORMS),
)


def comparisons(path: Path) -> list[tuple[int, str]]:
    """(line, the comparison's source) of every ``==``, ``!=``, ``in`` or ``not in`` in
    ``path`` with a platform's name as a string on either side (or in a tuple, list or set
    compared with ``in``)."""
    source = path.read_text(encoding="utf-8")
    if not any(name in source for name in PLATFORMS):
        return []
    tree = ast.parse(source, str(path))
    names = set(PLATFORMS)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if not all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
            continue
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
            if any(isinstance(i, ast.Constant) and i.value in names for i in items):
                out.append((node.lineno, ast.get_source_segment(source, node) or ""))
                break
    return out


def test_no_shared_module_compares_a_platform_name() -> None:
    found = []
    for folder in ("compiler", "targets"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(ALLOWED):
                continue
            found += [f"{rel}:{line}: {text}" for line, text in comparisons(path)]
    assert not found, "\n".join(found)


def test_the_check_finds_a_comparison(tmp_path: Path) -> None:
    """Not vacuous: each spelling of a comparison is found, a fact read is not."""
    p = tmp_path / "m.py"
    p.write_text(
        "def f(platform, facts):\n"
        "    a = platform == 'snowflake'\n"
        "    b = 'databricks' != platform\n"
        "    c = platform in ('snowflake', 'x')\n"
        "    d = facts.fold('snowflake')\n"
        "    return a, b, c, d\n"
    )
    assert [line for line, _ in comparisons(p)] == [2, 3, 4]
