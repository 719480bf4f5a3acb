"""sqlglot is imported without ``importlib.metadata`` (compiler/core/sqlglot_plugins.py): the
import of its plugin lookup waits for the lookup. These tests run fresh interpreters (under
pytest ``importlib.metadata`` is imported already, so nothing is deferred in-process) and
check that the lookup finds what it finds without accord, and that nothing else changes."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import sqlglot

from tests.conftest import ROOT

PLUGIN = "accordtestplugin"


def _run(code: str, tmp_path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _plugin(tmp_path: Path) -> None:
    """An installed distribution with a sqlglot dialect plugin (an entry point)."""
    info = tmp_path / f"{PLUGIN}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PLUGIN}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[sqlglot.dialects]\n{PLUGIN} = {PLUGIN}_mod:Plugged\n")
    (tmp_path / f"{PLUGIN}_mod.py").write_text(
        "from sqlglot.dialects.dialect import Dialect\n\nclass Plugged(Dialect):\n    pass\n"
    )


PROBE = f"""
import json, sys
{{setup}}
import sqlglot
from sqlglot.dialects import dialect
out = {{{{"metadata_at_import": "importlib.metadata" in sys.modules,
        "loader": type(dialect.__loader__).__name__,
        "spec_loader": type(dialect.__spec__.loader).__name__}}}}
try:
    dialect.Dialect.get_or_raise("nosuchdialect")
except Exception as err:
    out["unknown"] = [type(err).__name__, str(err)]
out["plugin"] = dialect.Dialect.get_or_raise("{PLUGIN}").__class__.__name__
import importlib.metadata
out["real"] = hasattr(importlib.metadata, "version") and importlib.metadata.__file__ is not None
out["eps"] = sorted(e.name for e in importlib.metadata.entry_points(group="sqlglot.dialects"))
out["eps_sqlglot"] = sorted(e.name for e in dialect.entry_points().select(group="sqlglot.dialects"))
print(json.dumps(out))
"""


def test_the_plugin_lookup_is_sqlglots_own(tmp_path) -> None:
    _plugin(tmp_path)
    plain = _run(PROBE.format(setup=""), tmp_path)
    deferred = _run(PROBE.format(setup="import accord.compiler.cli"), tmp_path)
    assert plain["metadata_at_import"] is True
    assert deferred["metadata_at_import"] is False  # the cost this saves
    for key in ("loader", "spec_loader", "unknown", "plugin", "real", "eps", "eps_sqlglot"):
        assert deferred[key] == plain[key], key
    assert deferred["plugin"] == "Plugged"
    assert deferred["loader"] == "SourceFileLoader"
    assert PLUGIN in deferred["eps_sqlglot"]


def test_sqlglot_asks_importlib_metadata_only_for_entry_points() -> None:
    """The stand-in answers ``entry_points`` and forwards the rest; this fails when a sqlglot
    upgrade imports something else of it at import, so the change is looked at."""
    asked: set[str] = set()
    for path in Path(sqlglot.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "importlib.metadata":
                asked.update(alias.name for alias in node.names)
            if isinstance(node, ast.Import) and any(
                a.name.startswith("importlib.metadata") for a in node.names
            ):
                asked.add("*")
    assert asked == {"entry_points"}
