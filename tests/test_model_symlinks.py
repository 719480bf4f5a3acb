"""The policy model never reads a file through a symbolic link that leads outside its policy
directory (issue 22, item 10): ``accord validate``, ``compile`` and ``verify`` refuse it, located
at the link, exit 2, and print nothing of the target, as ``accord lint`` does (one helper:
compiler.model.loader.directory_files).

Each case is a repository a pull request would commit (the link committed as a link), cloned
afresh and checked as CI checks it (``CI=true``, a real process)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli import pr_clone, run_process
from tests.estates import LINT_BASE, write_estate, write_files

#: what the runner keeps outside the checkout; valid YAML of the policy format, so that only
#: the refusal keeps it out of the model (and of any message)
SECRET = "personas:\n  top_secret_persona_of_the_runner:\n    roles: [TOP_SECRET_ROLE]\n"

COMMANDS = {
    "validate": ["validate", "policies"],
    "compile": ["compile", "policies", "--out", "out"],
    "verify": ["verify", "policies"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("link", "target"),
    [
        pytest.param("policies/extra.yaml", "runner/secret.yaml", id="file link out"),
        pytest.param("policies/sub/extra.yml", "runner/secret.yaml", id="file link in a folder"),
        pytest.param(
            "policies/up.yaml", "repo/other.yaml", id="link to the checkout, not policies"
        ),
    ],
)
def test_a_symlink_out_of_the_policy_directory_is_refused(
    tmp_path: Path, command: str, link: str, target: str
) -> None:
    write_files(tmp_path / "runner", {"secret.yaml": SECRET})
    repo = tmp_path / "repo"
    write_estate(repo / "policies", LINT_BASE, split=True)
    write_files(repo, {"other.yaml": SECRET})
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(tmp_path / target, (repo / link).parent), repo / link)
    clone = pr_clone(repo, tmp_path)
    assert (clone / link).is_symlink()
    run = run_process(COMMANDS[command], cwd=clone, env={"CI": "true"}, timeout=120)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert (
        f"{link}:1:1: a symbolic link that leads outside the policy directory: not read"
        in run.stderr
    ), run.stderr
    assert "top_secret" not in (run.stdout + run.stderr).lower()
    assert not (clone / "out").exists()  # nothing written when the input is refused


def test_a_symlink_inside_the_policy_directory_is_read(tmp_path: Path) -> None:
    """A link that stays inside the directory is an ordinary file of the model (its target in
    a hidden folder, which the loader does not read on its own)."""
    repo = tmp_path / "repo"
    write_estate(repo / "policies", LINT_BASE, split=True)
    names = sorted(p.name for p in (repo / "policies").iterdir())
    (repo / "policies" / ".kept").mkdir()
    os.replace(repo / "policies" / names[0], repo / "policies" / ".kept" / names[0])
    os.symlink(f".kept/{names[0]}", repo / "policies" / names[0])
    clone = pr_clone(repo, tmp_path)
    run = run_process(["validate", "policies"], cwd=clone, env={"CI": "true"}, timeout=120)
    assert run.returncode == 0, run.stderr
