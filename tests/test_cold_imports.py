"""What a cold ``accord lint`` and ``accord validate`` import: modules needed only for some
options or on some errors are imported where they are used (the cold start of a pre-commit
hook pays every import). Each test runs a fresh interpreter (pytest itself has imported most
of the standard library) and then checks that the deferred code still runs when it is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

#: imported by a cold lint of policies/ before they were deferred, needed by none of it:
#: the migration ledger (``--plans``/``--ledger`` only) and its file lock's ``socket``, the
#: cache's ``tempfile`` (only when it writes: not under ACCORD_NO_CACHE=1), ``tomllib`` (only
#: when a configuration file is found)
LINT_DEFERRED = (
    "accord.compiler.history.ledger",
    "accord.compiler.core.filelock",
    "socket",
    "tempfile",
    "tomllib",
)

PROBE = """
import json, runpy, sys
sys.argv = ["accord", *json.loads(sys.argv[1])]
try:
    runpy.run_module("accord.compiler.cli", run_name="__main__", alter_sys=True)
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _fresh(args: list[str], cwd: Path = ROOT) -> tuple[int, set[str], str]:
    env = dict(os.environ, ACCORD_NO_CACHE="1")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )
    *messages, last = proc.stderr.strip().splitlines()
    report = json.loads(last)
    return report["code"], set(report["modules"]), "\n".join(messages)


def test_cold_lint_imports_nothing_it_does_not_use():
    code, modules, _ = _fresh(["lint", "policies"])
    assert code == 0
    assert "accord.compiler.lint.run" in modules  # the probe ran a lint
    assert sorted(m for m in LINT_DEFERRED if m in modules) == []


def test_cold_lint_of_policy_files_loads_no_sqlglot_dialect():
    """Quoting while lowering is decided from ``targets/sqlwords.py`` (sqlglot's keywords and
    parser answers, computed once): no dialect module is loaded to lint policy files."""
    code, modules, _ = _fresh(["lint", "policies"])
    assert code == 0
    assert "accord.targets.sql" in modules  # the model was lowered
    loaded = sorted(
        m
        for m in modules
        if m.startswith(("sqlglot.dialects.", "sqlglot.parsers.", "sqlglot.generators."))
    )
    assert loaded == ["sqlglot.dialects.dialect", "sqlglot.parsers.base"]  # sqlglot's own import


def test_the_dialects_still_load_to_render_sql(tmp_path):
    """Rendering SQL (``accord compile``) still loads both dialects: only the quoting decisions
    come from the table."""
    code, modules, _ = _fresh(["compile", "policies", "--out", str(tmp_path / "out")])
    assert code == 0
    assert {"sqlglot.dialects.snowflake", "sqlglot.dialects.databricks"} <= modules


def test_validate_imports_no_difflib_until_a_suggestion_is_made(tmp_path):
    code, modules, _ = _fresh(["validate", "policies"])
    assert code == 0
    assert "accord.compiler.model.validate" in modules
    assert "difflib" not in modules


def test_deferred_imports_still_serve_their_options(tmp_path):
    """The deferred code runs when asked for: a configuration file (tomllib), a ledger
    (ACC601), a misspelt choice (difflib's suggestion)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "accord.toml").write_text('[lint]\nignore = ["ACC9999"]\n')
    code, modules, messages = _fresh(["lint", "policies", "--format", "jsn"])
    assert code == 2
    assert "did you mean 'json'?" in messages.lower()
    assert "difflib" in modules
    code, modules, _ = _fresh(["lint", str(ROOT / "policies")], cwd=project)
    assert "tomllib" in modules
    plans = tmp_path / "plans"
    plans.mkdir()
    code, modules, _ = _fresh(["lint", "policies", "--plans", str(plans)])
    assert code == 0
    assert "accord.compiler.history.ledger" in modules


FREEZE_PROBE = """
import atexit, gc, sys
# registered before accord's own handler, so it runs after it (exit handlers run last first)
atexit.register(lambda: print(f"frozen={gc.get_freeze_count()}", file=sys.stderr))
sys.argv = ["accord", "lint", "policies"]
from accord.compiler.cli import main
main()
"""


def test_the_final_collections_skip_what_the_command_leaves_behind():
    """At exit the objects are in the collector's permanent generation (the interpreter's
    final collections were a fifth of a cold lint); the output and exit code are the
    command's own."""
    env = dict(os.environ, ACCORD_NO_CACHE="1")
    proc = subprocess.run(
        [sys.executable, "-c", FREEZE_PROBE], capture_output=True, text=True, cwd=ROOT, env=env
    )
    plain = subprocess.run(
        [sys.executable, "-m", "accord.compiler.cli", "lint", "policies"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == plain.returncode == 0
    assert proc.stdout == plain.stdout
    frozen = int(proc.stderr.strip().splitlines()[-1].removeprefix("frozen="))
    assert frozen > 10_000


TOKENIZE_PROBE = """
import sys
sys.argv = ["accord", "lint", "policies"]
from accord.compiler.cli import _main
try:
    _main(None)
except SystemExit as exit:
    code = exit.code
tokenize = sys.modules.get("tokenize")
compiled = tokenize._compile.cache_info().currsize if tokenize else 0
print(f"code={code} tokenize_regexes={compiled}", file=sys.stderr)
"""


def test_building_the_model_reads_no_builtin_signature():
    """pydantic reads each default factory's signature while it builds the model's classes; a
    builtin's (``list``) goes through ``tokenize``, whose first use compiles its regular
    expressions. A cold lint compiles none of them."""
    env = dict(os.environ, ACCORD_NO_CACHE="1")
    proc = subprocess.run(
        [sys.executable, "-c", TOKENIZE_PROBE], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert proc.stderr.strip().splitlines()[-1] == "code=0 tokenize_regexes=0"
