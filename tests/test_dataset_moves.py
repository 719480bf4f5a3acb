"""Moving a dataset to another table is a change in exposure (issue 22, item 7): the plan
strips every policy from the table the base named, which stays in place, so what each persona
saw of it is now ungoverned. ``accord diff`` lists it as a widening caused by the head's
``table`` line, and ``--fail-on widening`` fails on it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from accord.compiler.exposure import exposure_diff, verdict
from accord.compiler.model.validate import load_project
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
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--fail-on", "widening"])
    assert code == 1, out + err
    assert "no change in exposure" not in out and "DB.S.RESULTS" in out
    code, out, _ = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "json"])
    doc = json.loads(out)
    assert doc["summary"]["widenings"] > 0
    assert all(c["after"] == "ungoverned" for c in doc["changes"] if c["kind"] == "widening")


def test_the_same_table_renamed_nowhere_is_no_change(tmp_path: Path) -> None:
    """Control: a dataset whose table does not change gives no change."""
    base, head = _pair(tmp_path, {})
    assert verdict(exposure_diff(load_project(base), load_project(head))) == "no change in exposure"


# --------------------------------------------------------------------------------------------
# the model says the old table is dropped: replaces: {table: OLD, dropped: true}

DROPPED = {
    "datasets": {
        "results": {
            "table": "DB.S.RESULTS_V2",
            "replaces": {"table": "DB.S.RESULTS", "dropped": True},
        }
    }
}


def test_a_move_whose_old_table_the_model_says_is_dropped_is_a_note(tmp_path: Path) -> None:
    base, head = _pair(tmp_path, DROPPED)
    d = exposure_diff(load_project(base), load_project(head))
    assert d.changes == [] and not d.fails
    (note,) = d.notes
    assert "moved from snowflake table DB.S.RESULTS to DB.S.RESULTS_V2" in note
    # located at the replaces key of the head
    line = (head / "policy.yaml").read_text().splitlines().index("    replaces:") + 1
    assert f"policy.yaml:{line}:5" in note and "not checked against the platform" in note
    assert verdict(d) == "no change in exposure on any surface; 1 note to read"
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--fail-on", "widening"])
    assert code == 0, out + err
    assert f"note: {note}" in out
    # accord plan still strips the policies from the old table
    code, out, err = run_cli(
        ["plan", str(head), "--base", f"dir:{base}", "--out", str(tmp_path / "m")]
    )
    assert code == 0, out + err
    (apply,) = (tmp_path / "m").glob("*/01_snowflake_apply.sql")
    sql = apply.read_text()
    assert "ALTER TABLE DB.S.RESULTS DROP ROW ACCESS POLICY" in sql
    assert "ALTER TABLE DB.S.RESULTS MODIFY COLUMN SUBJECT_ID UNSET MASKING POLICY" in sql


def _moved_to(dataset: str, table: str, old: str) -> dict:
    return {"datasets": {dataset: {"table": table, "replaces": {"table": old, "dropped": True}}}}


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(_moved_to("results", "DB.S.RESULTS_V2", "DB.S.ELSEWHERE"), id="warehouse"),
        pytest.param(_moved_to("results_lake", "cat.s.results_v2", "cat.s.other"), id="replica"),
    ],
)
def test_replaces_that_does_not_name_the_old_table_changes_nothing(
    tmp_path: Path, patch: dict
) -> None:
    """Only the base's own table of the dataset can be said dropped: a ``replaces`` naming
    another table leaves the widening in place."""
    base, head = _pair(tmp_path, patch)
    d = exposure_diff(load_project(base), load_project(head))
    assert d.widenings and d.fails and d.notes == []


@pytest.mark.parametrize(
    ("replaces", "key", "message"),
    [
        pytest.param(
            {"table": "DB.S.RESULTS", "dropped": False},
            "dropped:",
            "dropped: true is the only value",
            id="dropped false",
        ),
        pytest.param(
            {"table": "DB.S.RESULTS"},
            "table: DB.S.RESULTS",  # the mapping that lacks the key
            "datasets.results.replaces: missing required key 'dropped'",
            id="dropped missing",
        ),
        pytest.param(
            {"table": "DB.S.RESULTS_V2", "dropped": True},
            "table: DB.S.RESULTS_V2",
            "replaces.table: DB.S.RESULTS_V2 is this dataset's own table",
            id="its own table",
        ),
        pytest.param(
            {"table": "db.s.fields", "dropped": True},
            "table: db.s.fields",
            "replaces.table: db.s.fields is the table of dataset fields: a table the model "
            "declares is not dropped",
            id="another dataset's table",
        ),
        pytest.param(
            {"table": "RESULTS", "dropped": True},
            "table: RESULTS",
            "'RESULTS' is not a valid table name",
            id="not a table name",
        ),
    ],
)
def test_replaces_is_validated_with_a_located_error(
    tmp_path: Path, replaces: dict, key: str, message: str
) -> None:
    estate = edited(
        DIFF_BASE,
        {"datasets": {"results": {"table": "DB.S.RESULTS_V2", "replaces": replaces}}},
        {"datasets": {"fields": {"platform": "snowflake", "table": "DB.S.FIELDS"}}},
    )
    head = write_files(tmp_path / "head", {"policy.yaml": estate})
    lines = (head / "policy.yaml").read_text().splitlines()
    # the last such line: the one under replaces
    line = max(i for i, text in enumerate(lines, 1) if text.strip().startswith(key))
    code, _, err = run_cli(["validate", str(head)])
    assert code == 2 and "Traceback" not in err
    (first, *_) = err.splitlines()
    assert first.startswith(f"{head / 'policy.yaml'}:{line}:") and message in first, err


# slow: three repositories committed, cloned and diffed by `accord diff` in processes of its own
@pytest.mark.slow
def test_a_pull_request_moving_a_dataset_on_ci(tmp_path: Path) -> None:
    """The flow CI runs: the base committed, the pull request's move committed over it, a
    fresh clone, ``accord diff policies --base HEAD~1 --fail-on widening`` with ``CI=true``.
    Without ``replaces`` the move fails; saying the old table is dropped passes, with the
    note; saying a table the model declares is dropped is an input error."""
    from tests.cli import pr_clone, run_process

    def run(patch: dict, name: str) -> tuple[int, str, str]:
        repo = write_files(tmp_path / name / "repo", {"policies/policy.yaml": edited(DIFF_BASE)})
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                cwd=repo,
                check=True,
                capture_output=True,
            )
        write_files(repo, {"policies/policy.yaml": edited(DIFF_BASE, patch)})
        clone = pr_clone(repo, tmp_path / name)
        got = run_process(
            ["diff", "policies", "--base", "HEAD~1", "--fail-on", "widening"],
            cwd=clone,
            env={"CI": "true"},
            timeout=120,
        )
        assert "Traceback" not in got.stderr, got.stderr
        return got.returncode, got.stdout, got.stderr

    code, out, _ = run(MOVES[0][1], "moved")
    assert code == 1 and "ungoverned" in out
    code, out, _ = run(DROPPED, "dropped")
    assert code == 0 and "the model says DB.S.RESULTS is dropped (policies/policy.yaml:" in out
    code, out, err = run(
        edited(DROPPED, {"datasets": {"results": {"replaces": {"table": "DB.S.RESULTS_V2"}}}}),
        "lying",
    )
    assert code == 2 and "is this dataset's own table" in err, out + err
