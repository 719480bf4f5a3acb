"""accord builds its pydantic model classes with no pydantic plugin (compiler/model/schema/base.py):
pydantic's plugin lookup (every installed distribution's entry points) is answered before it
is made. These tests fail when a pydantic upgrade asks something else of its plugin loader,
rather than letting the answer silently differ."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pydantic.plugin


def test_pydantic_asks_its_loader_only_for_get_plugins() -> None:
    """The answer replaces ``pydantic.plugin._loader``: pydantic must import nothing else of
    it (read from the installed pydantic's own source)."""
    package = Path(pydantic.plugin.__file__).parent.parent
    asked: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if module.endswith("_loader") and (node.level or module.startswith("pydantic")):
                asked.update(alias.name for alias in node.names)
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "_loader":
                asked.add(node.attr)
    assert asked == {"get_plugins"}


def test_no_plugin_is_what_pydantic_answers_with_plugins_disabled() -> None:
    """In a fresh interpreter: after accord's model is imported, pydantic's loader answers no
    plugin, as pydantic's own loader does with ``PYDANTIC_DISABLE_PLUGINS=__all__``, and no
    entry point was looked up on the way (``importlib.metadata.entry_points`` never called)."""
    code = (
        "import importlib.metadata as m, sys\n"
        "calls = []\n"
        "real = m.entry_points\n"
        "m.entry_points = lambda *a, **k: calls.append(k) or real(*a, **k)\n"
        "from accord.compiler.model.validate import load_project\n"
        "load_project(sys.argv[1])\n"
        "import pydantic.plugin._loader as loader\n"
        "print(tuple(loader.get_plugins()), [c for c in calls if c.get('group') == 'pydantic'])\n"
    )
    root = Path(__file__).resolve().parent.parent
    ours = subprocess.run(
        [sys.executable, "-c", code, str(root / "policies")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert ours.stdout.split() == ["()", "[]"]
    theirs = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pydantic.plugin._loader as l; print(tuple(l.get_plugins()))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PYDANTIC_DISABLE_PLUGINS": "__all__", "PATH": "/usr/bin:/bin"},
    )
    assert theirs.stdout.split() == ["()"]
