"""A value never starts a line of its own, and every machine document is valid for any value
(issue 22, items 13-15, for ``plan``, ``migrate``, ``drift``, ``verify``, ``analyze`` and
``introspect``, as tests/test_output_safety.py shows for lint and diff).

The guard on the standard streams lets line breaks pass (accord's own), so a text renderer
must render the values it interpolates (a name, a path, a reason, a platform's answer) with
:func:`compiler.core.visible.visible`: a line break in one is written ``\\u000a`` and the
output keeps its lines. Each JSON document is parsed, and every string in it must be valid
Unicode (a byte of a file name that is not UTF-8 written ``\\xff``, never a lone surrogate)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import DIFF_BASE, edited, write_files

#: a line break that would forge a workflow command, an escape sequence, a lone surrogate
HOSTILE = "x\n::add-mask::forged\x1b]8;;\x07\udcff"
SHOWN = "x\\u000a::add-mask::forged\\u001b]8;;\\u0007\\xff"
#: a byte that is not UTF-8 in a file name (read as a lone surrogate)
RAW = os.fsdecode(b"dir\xff")


def valid_unicode(doc: Any) -> None:
    """Every string of a parsed JSON document (keys too) encodes as UTF-8."""
    if isinstance(doc, str):
        doc.encode("utf-8")
    elif isinstance(doc, dict):
        for k, v in doc.items():
            valid_unicode(k)
            valid_unicode(v)
    elif isinstance(doc, list):
        for v in doc:
            valid_unicode(v)


def no_forged_line(*texts: str) -> None:
    for text in texts:
        for line in text.splitlines():
            # a value's line break would start a line the guard writes "\u003a:..."
            assert not line.lstrip().startswith(("::", "\\u003a:")), line


# --------------------------------------------------------------------------------------------
# analyze: a suppression reason in its text table, its JSON


def _analyze_estate(root: Path, reason: str) -> Path:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    from lint_bench import estate, write_estate

    files = estate(12, principals=6, programmes=4, defects=True)
    surfaces = files["surfaces/agents.yaml"]["surfaces"]
    pipeline = next(s for s in sorted(surfaces) if surfaces[s]["platform"] == "none")
    surfaces[pipeline]["ignore"] = {"ACC403": reason}
    return write_estate(root, files)


def test_analyze_renders_a_reason_on_its_line_and_writes_valid_json(tmp_path: Path) -> None:
    reason = "reviewed x\n::add-mask::forged\x1b]8;;\x07"  # YAML carries no lone surrogate
    where = _analyze_estate(tmp_path / "estate", reason)
    code, out, err = run_cli(["analyze", str(where)])
    assert code == 1, err
    rows = [line for line in out.splitlines() if "reviewed" in line]
    assert rows and all(
        r.endswith("reviewed x\\u000a::add-mask::forged\\u001b]8;;\\u0007") for r in rows
    )
    no_forged_line(out, err)
    code, out, _ = run_cli(["analyze", str(where), "--format", "json"])
    doc = json.loads(out)
    valid_unicode(doc)
    assert doc["suppressed"][0]["reason"] == reason


# --------------------------------------------------------------------------------------------
# verify: the compiled directory's name in text and JSON


def test_verify_renders_a_directory_name_on_its_line(tmp_path: Path) -> None:
    policies = ROOT / "policies"
    for name in ("out\n::add-mask::forged", RAW):
        out_dir = tmp_path / name
        code, _, err = run_cli(["compile", str(policies), "--out", str(out_dir)])
        assert code == 0, err
    code, out, err = run_cli(
        ["verify", str(policies), "--compiled", str(tmp_path / "out\n::add-mask::forged")]
    )
    assert code == 0, err
    assert (
        out.splitlines()[0]
        == f"verifying the compiled SQL in {tmp_path}/out\\u000a::add-mask::forged"
    )
    no_forged_line(out, err)
    code, out, err = run_cli(
        ["verify", str(policies), "--compiled", str(tmp_path / RAW), "--format", "json"]
    )
    assert code == 0, err
    out.encode("utf-8")
    doc = json.loads(out)
    valid_unicode(doc)
    assert doc["origin"].endswith("dir\\xff")


# --------------------------------------------------------------------------------------------
# plan and migrate: paths and names in their lines


def test_plan_and_migrate_render_a_path_on_its_line(tmp_path: Path) -> None:
    base = write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)})
    head = write_files(
        tmp_path / "head",
        {"policy.yaml": edited(DIFF_BASE, {"masks": {"notes": {"strategy": "nullify"}}})},
    )
    plans = tmp_path / "mig\n::add-mask::forged"
    code, out, err = run_cli(["plan", str(head), "--base", f"dir:{base}", "--out", str(plans)])
    assert code == 0, err
    written = [line for line in out.splitlines() if line.startswith("  ") and "mig" in line]
    assert written and all("mig\\u000a::add-mask::forged/0001_" in line for line in written)
    no_forged_line(out, err)
    (plan_json,) = plans.glob("*/plan.json")
    json.loads(plan_json.read_text())
    code, out, err = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 0, err
    no_forged_line(out, err)
    assert out.splitlines()[0].startswith("0001_")
    empty = tmp_path / "none\n::x"
    empty.mkdir()
    code, out, err = run_cli(["migrate", "status", "--plans", str(empty)])
    assert out == f"{tmp_path}/none\\u000a::x: no plans\n", out + err


# --------------------------------------------------------------------------------------------
# drift and introspect: a platform's answer naming a hostile object


class HostileSnowflake:
    """A Snowflake that answers SHOW ROW ACCESS POLICIES with a policy of a schema whose name
    holds a line break, an escape and a lone surrogate (a JSON answer can carry ``\\udcff``);
    every other statement with no rows."""

    def query(self, sql: str) -> list[dict[str, Any]]:
        if sql.startswith("SHOW ROW ACCESS POLICIES"):
            return [{"name": "KEEP_ME", "database_name": "PROD", "schema_name": HOSTILE}]
        return []

    def run(self, sql: str) -> None:
        return None

    def results(self, sql: str) -> list[Any]:
        return []

    def close(self) -> None:
        return None


@pytest.fixture
def hostile_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    import accord.compiler.live.session as session

    monkeypatch.setattr(session, "open_executor", lambda platform, options, *a: HostileSnowflake())


@pytest.mark.usefixtures("hostile_platform")
def test_drift_and_introspect_render_a_platform_answer_on_its_line(tmp_path: Path) -> None:
    policies = str(ROOT / "policies")
    code, out, err = run_cli(["drift", policies, "--platform", "snowflake"])
    assert code == 1, err  # nothing of the model is deployed on this platform
    (warning,) = [line for line in err.splitlines() if "answered about PROD." in line]
    assert warning.startswith("accord: warning: snowflake: ") and SHOWN in warning
    no_forged_line(out, err)
    for fmt in ("json", "sarif"):
        code, out, _ = run_cli(["drift", policies, "--platform", "snowflake", "--format", fmt])
        valid_unicode(json.loads(out))
    code, out, err = run_cli(["introspect", "--platform", "snowflake", policies])
    assert code == 0, err
    no_forged_line(out, err)
    shutil.copytree(policies, tmp_path / RAW)  # and a policy directory not named in UTF-8
    for where in (policies, str(tmp_path / RAW)):
        argv = ["introspect", "--platform", "snowflake", where, "--format", "json"]
        code, out, err = run_cli(argv)
        assert code == 0, err
        out.encode("utf-8")
        doc = json.loads(out)
        valid_unicode(doc)
        assert any("answered about PROD." in w and "\\xff" in w for w in doc["ignored"])
    # analyze: a policy directory not named in UTF-8 (analyze reads no platform)
    code, out, err = run_cli(["analyze", str(tmp_path / RAW), "--format", "json"])
    out.encode("utf-8")
    valid_unicode(json.loads(out))
