"""Moving a dataset to another table is a change in exposure (issue 22, item 7): the plan
strips every policy from the table the base named, which stays in place, so what each persona
saw of it is now ungoverned. ``accord diff`` lists it as a widening caused by the head's
``table`` line, and ``--fail-on widening`` fails on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.exposure import exposure_diff, verdict
from compiler.model.validate import load_project
from tests.cli import run_cli
from tests.estates import DIFF_BASE, edited, write_files

MOVES = [
    ("table-v2", {"datasets": {"results": {"table": "DB.S.RESULTS_V2"}}}, "results", "table"),
    ("other-schema", {"datasets": {"results": {"table": "DB.OTHER.RESULTS"}}}, "results", "table"),
    (
        "replica-moved",
        {"datasets": {"results_lake": {"table": "cat.s.results_v2"}}},
        "results_lake",
        "table",
    ),
]


def _pair(tmp_path: Path, patch: dict) -> tuple[Path, Path]:
    base = write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)})
    head = write_files(tmp_path / "head", {"policy.yaml": edited(DIFF_BASE, patch)})
    return base, head


@pytest.mark.parametrize(
    ("patch", "dataset", "field"), [m[1:] for m in MOVES], ids=[m[0] for m in MOVES]
)
def test_a_moved_dataset_leaves_its_table_ungoverned(
    tmp_path: Path, patch: dict, dataset: str, field: str
) -> None:
    base, head = _pair(tmp_path, patch)
    b, h = load_project(base), load_project(head)
    d = exposure_diff(b, h)
    old = b.model.datasets[dataset].table
    assert d.widenings, verdict(d)
    assert verdict(d) != "no change in exposure"
    personas = set(b.model.personas)
    assert {c.persona for c in d.widenings} == personas
    for c in d.widenings:
        assert (c.dataset, c.surface, c.after.disposition) == (dataset, None, "ungoverned")
        assert c.before.disposition != "ungoverned"
        assert old in c.note
        assert c.cause.object == f"datasets.{dataset}.{field}"
        assert c.cause.location.file.endswith("policy.yaml") and c.cause.location.line > 0
    # the rows and every governed column of the old table, per persona
    rows = [c for c in d.widenings if c.column is None]
    assert {c.persona for c in rows} == personas


def test_cli_fails_on_the_move(tmp_path: Path) -> None:
    base, head = _pair(tmp_path, MOVES[0][1])
    code, out, err = run_cli(["diff", str(head), "--base", str(base), "--fail-on", "widening"])
    assert code == 1, out + err
    assert "no change in exposure" not in out and "DB.S.RESULTS" in out
    code, out, _ = run_cli(["diff", str(head), "--base", str(base), "--format", "json"])
    doc = json.loads(out)
    assert doc["summary"]["widenings"] > 0
    assert all(c["after"] == "ungoverned" for c in doc["changes"] if c["kind"] == "widening")


def test_the_same_table_renamed_nowhere_is_no_change(tmp_path: Path) -> None:
    """Control: a dataset whose table does not change gives no change."""
    base, head = _pair(tmp_path, {})
    assert verdict(exposure_diff(load_project(base), load_project(head))) == "no change in exposure"
