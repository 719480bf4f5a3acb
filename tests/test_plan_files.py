"""`accord plan`: the files it writes, determinism, numbering, salts, git bases, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import PLAN_BASE, PLAN_SALTS, edited, write_estate
from tests.plan_helpers import reference_plan


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_plan_json_and_stage_files(tmp_path: Path) -> None:
    plan_dir = reference_plan(tmp_path)
    assert plan_dir.name == "0001_subject-cutover-salts-filters-masks-tags-abac-style"
    data = json.loads((plan_dir / "plan.json").read_text())
    assert set(data) >= {"id", "base_fingerprint", "head_fingerprint", "stages", "groups"}
    assert data["id"] == plan_dir.name
    assert [g["id"] for g in data["groups"]] == ["subject"]
    for stage in data["stages"]:
        assert set(stage) >= {"id", "platform", "group", "requires", "file", "sha256"}
        assert set(stage) >= {"verify", "rollback"}
        for role in ("file", "verify", "rollback"):
            text = (plan_dir / stage[role]).read_text()
            assert text.startswith("-- accord migration " + plan_dir.name)
            digest = stage["sha256" if role == "file" else f"{role}_sha256"]
            assert digest == __import__("hashlib").sha256(text.encode()).hexdigest()
    first = (plan_dir / data["stages"][0]["file"]).read_text()
    assert "-- What this stage does:" in first and "-- Why this stage:" in first
    cutover = [s for s in data["stages"] if s["group"] == "subject"]
    assert [s["platform"] for s in cutover] == ["snowflake", "databricks"]
    assert cutover[1]["requires"] == ["04_databricks_apply"]


def test_output_is_deterministic(tmp_path: Path) -> None:
    one = reference_plan(tmp_path / "one")
    two = reference_plan(tmp_path / "two")
    assert tree(one) == tree(two)


def test_no_salt_value_in_any_written_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "SUBJECT_SALT_SNOWFLAKE": "sf-secret-7f3a91",
        "SUBJECT_SALT_DATABRICKS": "dbx-secret-c20e55",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    code, out, _ = run_cli(
        [
            "plan",
            str(ROOT / "policies"),
            "--base",
            f"dir:{ROOT / 'examples/as-found'}",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0, out
    files = tree(tmp_path)
    assert files
    for name, content in files.items():
        for value in secrets.values():
            assert value.encode() not in content, name
    joined = b"".join(files.values())
    assert b"{{ accord_salt('env:SUBJECT_SALT_SNOWFLAKE') }}" in joined
    assert b"{{ accord_salt('env:SUBJECT_SALT_DATABRICKS') }}" in joined


def test_numbering_and_replanning_in_place(tmp_path: Path) -> None:
    base = write_estate(tmp_path / "base", edited(PLAN_BASE))
    head = write_estate(
        tmp_path / "head",
        edited(edited(PLAN_BASE), lambda e: e["masks"]["subject"].update(salt=dict(PLAN_SALTS))),
    )
    other = write_estate(
        tmp_path / "other",
        edited(edited(PLAN_BASE), lambda e: e["entitlements"]["programme"].update(P3=["steward"])),
    )
    out = tmp_path / "plans"
    assert run_cli(["plan", str(head), "--base", f"dir:{base}", "--out", str(out)])[0] == 0
    assert run_cli(["plan", str(other), "--base", f"dir:{base}", "--out", str(out)])[0] == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["0001_subject-cutover-salts-masks", "0002_grants"]
    # the same base and head again: the plan is rewritten where it is, not appended
    before = tree(out)
    assert run_cli(["plan", str(head), "--base", f"dir:{base}", "--out", str(out)])[0] == 0
    assert tree(out) == before
    code, _, _ = run_cli(
        ["plan", str(head), "--base", f"dir:{base}", "--out", str(out), "--name", "salt-subject"]
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["0001_salt-subject", "0002_grants"]


def test_no_difference_writes_nothing(tmp_path: Path) -> None:
    base = write_estate(tmp_path / "base", edited(PLAN_BASE))
    code, out, _ = run_cli(
        ["plan", str(base), "--base", f"dir:{base}", "--out", str(tmp_path / "plans")]
    )
    assert code == 0
    assert "do not differ: nothing written" in out
    assert not (tmp_path / "plans").exists()


def test_refused_plan_exits_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import accord.compiler.plan.source as source
    from accord.compiler.plan.state import PlanError

    def refuse(base: object, head: object) -> None:
        raise PlanError("databricks, apply stage, statement 3: table cat.s.t has no row filter")

    monkeypatch.setattr(source, "plan_projects", refuse)
    base = write_estate(tmp_path / "base", edited(PLAN_BASE))
    code, _, err = run_cli(
        ["plan", str(base), "--base", f"dir:{base}", "--out", str(tmp_path / "plans")]
    )
    assert code == 1
    assert "refused, nothing written" in err and "has no row filter" in err
    assert not (tmp_path / "plans").exists()


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose policies/ was the as-found estate one commit ago."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples/as-found", root / "policies")
    (root / "policies" / ".hidden").mkdir()
    (root / "policies" / ".hidden" / "ignored.yaml").write_text("not: [valid")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "as found")
    shutil.rmtree(root / "policies")
    shutil.copytree(ROOT / "policies", root / "policies")
    return root


def test_base_from_a_git_revision(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, _, err = run_cli(["plan", "policies", "--base", "HEAD", "--out", "migrations"])
    assert code == 0, err
    from_git = tree(repo / "migrations")
    reference = tree(reference_plan(tmp_path / "direct").parent)
    assert from_git == reference


def test_bad_git_revision_exits_2(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    code, _, err = run_cli(["plan", "policies", "--base", "no-such-branch"])
    assert code == 2
    assert "--base no-such-branch: not a git revision of " in err
    assert "Traceback" not in err


def test_base_outside_a_repository_exits_2(tmp_path: Path) -> None:
    head = write_estate(tmp_path / "head", edited(PLAN_BASE))
    code, _, err = run_cli(["plan", str(head), "--base", "origin/main"])
    assert code == 2 and "is not inside a git repository" in err


def test_invalid_base_at_a_revision_is_located(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "policies" / "masks.yaml").write_text("masks:\n  broken: {strategy: hashed}\n")
    git(repo, "commit", "-q", "-am", "broken")
    shutil.copy(ROOT / "policies" / "masks.yaml", repo / "policies" / "masks.yaml")
    monkeypatch.chdir(repo)
    code, _, err = run_cli(["plan", "policies", "--base", "HEAD"])
    assert code == 2
    assert "HEAD:policies/masks.yaml:2:" in err
