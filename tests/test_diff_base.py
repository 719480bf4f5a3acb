"""What `--base` of `accord diff` and `accord plan` reads (issue 39, items 1 and 2; docs/cli.md):
a bare value is only ever a git revision, `dir:PATH` a directory; the revision is read at the
path the user named, never where a symbolic link leads; and every output says which base was
read.

Each attack is a pull request as CI checks it: a repository whose `main` holds the policies, a
branch on top of it, and a fresh clone with the branch checked out and `origin/main` fetched,
running the line `accord init` writes into the workflow."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.core.annotations import annotation
from tests.cli import run_cli
from tests.estates import DIFF_BASE, Estate, edited, write_files

#: the CI line of `accord init`'s workflow (compiler/model/scaffold.py)
GATE = ["diff", "policies", "--base", "origin/main", "--fail-on", "widening"]


def narrow() -> Estate:
    return edited(DIFF_BASE)


def widened() -> Estate:
    data = edited(DIFF_BASE)
    data["masks"]["notes"]["unmasked_for"].append("steward")  # stewards read notes in the clear
    return data


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def pull_request(
    tmp_path: Path, main: Callable[[Path], None], change: Callable[[Path], None]
) -> Path:
    """The clone a CI job checks a pull request out in: ``main`` writes the main branch,
    ``change`` what the pull request commits on top of it (every file, links as links)."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    main(upstream)
    git(upstream, "add", "-A", "-f")
    git(upstream, "commit", "-q", "-m", "main")
    git(upstream, "checkout", "-q", "-b", "pr")
    change(upstream)
    git(upstream, "add", "-A", "-f")
    git(upstream, "commit", "-q", "--allow-empty", "-m", "a pull request")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "-b", "pr", str(upstream), str(clone))
    return clone


def policies(data: Estate, where: str = "policies") -> Callable[[Path], None]:
    """A change that (re)writes the policy directory ``where`` with ``data``."""

    def write(repo: Path) -> None:
        shutil.rmtree(repo / where, ignore_errors=True)
        _write(repo / where, data)

    return write


def _write(directory: Path, data: Estate) -> None:
    write_files(directory, {"policy.yaml": data})


def ci(clone: Path, argv: list[str]) -> tuple[int, str, str]:
    return run_cli(argv, cwd=clone, env={"CI": "true"})


# --------------------------------------------------------------------------------------------
# item 1: a pull request cannot plant the base


def test_a_planted_directory_named_like_the_base_revision_is_not_read(tmp_path: Path) -> None:
    """The pull request widens its policies and commits `origin/main/` holding the same widened
    copy: the base is still the revision origin/main, so the widening is reported and the
    gate fails."""

    def widen_and_plant(repo: Path) -> None:
        _write(repo / "policies", widened())
        _write(repo / "origin" / "main", widened())

    clone = pull_request(tmp_path, policies(narrow()), widen_and_plant)
    main = git(clone, "rev-parse", "origin/main")
    assert (clone / "origin" / "main" / "policy.yaml").is_file()
    code, out, err = ci(clone, GATE)
    assert code == 1, out + err
    assert f"base: git revision origin/main (commit {main}), policies/" in out.splitlines()[0]
    assert "steward" in out and "2 widenings, 0 narrowings" in out
    assert "origin/main is also a directory here" in err and "--base dir:origin/main" in err
    code, out, err = ci(clone, ["plan", "policies", "--base", "origin/main", "--out", "plans"])
    assert code == 0, err
    assert f"accord plan: base: git revision origin/main (commit {main}), policies/" in out
    assert "do not differ" not in out
    assert [p.name for p in (clone / "plans").iterdir() if p.is_dir()]


@pytest.mark.parametrize("command", ["diff", "plan"])
@pytest.mark.parametrize("in_git", [True, False], ids=["in a repository", "outside one"])
def test_a_bare_directory_name_is_not_read(tmp_path: Path, command: str, in_git: bool) -> None:
    """A bare value that is no revision is exit 2, saying so and naming `dir:`; the directory
    of that name is never read (its one file does not even parse)."""
    root = tmp_path / "repo"
    _write(root / "policies", widened())
    write_files(root / "as-found", {"broken.yaml": "masks: {x: [\n"})
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "main")
    code, out, err = run_cli([command, "policies", "--base", "as-found"], cwd=root)
    assert code == 2, out + err
    assert "--base as-found: " in err and "Traceback" not in err
    assert "not a git revision" in err or "not inside a git repository" in err
    assert "write --base dir:as-found" in err
    assert "broken.yaml" not in out + err  # not read: no message about its content
    assert not (root / "migrations").exists()


def test_dir_prefix_reads_a_directory(tmp_path: Path) -> None:
    base = write_files(tmp_path / "base", {"policy.yaml": narrow()})
    head = write_files(tmp_path / "head", {"policy.yaml": widened()})
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--fail-on", "widening"])
    assert code == 1, err
    assert out.splitlines()[0] == f"base: directory {base}"
    code, out, err = run_cli(
        ["plan", str(head), "--base", f"dir:{base}", "--out", str(tmp_path / "m")]
    )
    assert code == 0, err
    assert out.splitlines()[0] == f"accord plan: base: directory {base}"
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{head}", "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["base"] == {
        "kind": "directory",
        "name": str(head),
        "commit": None,
        "path": None,
    }


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("-x", "--base -x: starts with '-'"),
        ("--format=json", "--base --format=json: starts with '-'"),
        ("", "--base is empty"),
        ("  ", "--base is empty"),
        ("dir:", "--base dir:: names nothing after 'dir:'"),
        ("live:", "--base live:: names nothing after 'live:'"),
        ("HEAD:policies", "--base HEAD:policies: not a git revision"),  # a tree, not a commit
    ],
)
@pytest.mark.parametrize("command", ["diff", "plan"])
def test_values_that_name_no_base_are_refused(
    tmp_path: Path, command: str, value: str, said: str
) -> None:
    clone = pull_request(tmp_path, policies(narrow()), policies(narrow()))
    code, out, err = ci(clone, [command, "policies", f"--base={value}"])
    assert code == 2, out + err
    assert said in err and "Traceback" not in err


def test_an_ambiguous_revision_is_refused(tmp_path: Path) -> None:
    """A tag named like the remote branch would win git's lookup (refs/tags before
    refs/remotes): the name is refused rather than read as the tag; named in full it is
    read."""
    clone = pull_request(tmp_path, policies(narrow()), policies(widened()))
    git(clone, "tag", "origin/main", "HEAD")  # the widened commit, named like the base
    code, out, err = ci(clone, GATE)
    assert code == 2, out + err
    assert "--base origin/main: the name is ambiguous" in err
    code, out, err = ci(clone, ["diff", "policies", "--base", "refs/remotes/origin/main"])
    assert code == 0 and "2 widenings, 0 narrowings" in out, err


# --------------------------------------------------------------------------------------------
# item 2: the base is read at the path named


@pytest.mark.parametrize("inside", [True, False], ids=["to a folder of the checkout", "out of it"])
def test_a_symlinked_policy_directory_is_refused(tmp_path: Path, inside: bool) -> None:
    """`widened/` was merged earlier; the pull request makes `policies` a link to it. Read at
    the resolved path the base would be `widened/` at origin/main: itself. A link out of the
    checkout is refused the same way, before git is asked about where it leads."""
    _write(tmp_path / "elsewhere", widened())

    def main(repo: Path) -> None:
        _write(repo / "policies", narrow())
        _write(repo / "widened", widened())

    def link(repo: Path) -> None:
        shutil.rmtree(repo / "policies")
        os.symlink("widened" if inside else tmp_path / "elsewhere", repo / "policies")

    clone = pull_request(tmp_path, main, link)
    assert (clone / "policies").is_symlink()
    for argv in (GATE, ["plan", "policies", "--base", "origin/main", "--out", "plans"]):
        code, out, err = ci(clone, argv)
        assert code == 2, out + err
        assert "policies: a symbolic link: `--base origin/main` reads" in err
        assert "Traceback" not in err
    assert not (clone / "plans").exists()


@pytest.mark.parametrize("target", ["archive", "."])
def test_a_symlinked_folder_above_the_policy_directory_is_refused(
    tmp_path: Path, target: str
) -> None:
    """`config/policies` through `config` -> `archive` (or -> `.`: the repository's root
    itself) would be `archive/policies` (or `policies`), widened at origin/main already."""

    def main(repo: Path) -> None:
        _write(repo / "config" / "policies", narrow())
        _write(repo / "archive" / "policies", widened())
        _write(repo / "policies", widened())

    def link(repo: Path) -> None:
        shutil.rmtree(repo / "config")
        os.symlink(target, repo / "config")

    clone = pull_request(tmp_path, main, link)
    code, out, err = ci(clone, ["diff", "config/policies", "--base", "origin/main"])
    assert code == 2, out + err
    assert "config: a symbolic link" in err


def test_a_link_from_outside_into_the_repository_is_refused(tmp_path: Path) -> None:
    """A path that enters the repository through a link outside it, below the root: no path in
    the repository is named, so none is guessed."""
    clone = pull_request(
        tmp_path,
        policies(narrow(), "config/policies"),
        policies(widened(), "config/policies"),
    )
    os.symlink(clone / "config", tmp_path / "x")
    code, out, err = ci(clone, ["diff", str(tmp_path / "x" / "policies"), "--base", "origin/main"])
    assert code == 2, out + err
    assert f"{tmp_path / 'x'}: a symbolic link" in err


def test_a_path_through_a_link_and_back_is_refused(tmp_path: Path) -> None:
    """`a/../policies` with `a` a link: the system reads `archive/policies`, the name says
    `policies`."""

    def main(repo: Path) -> None:
        _write(repo / "policies", narrow())
        _write(repo / "archive" / "policies", widened())
        write_files(repo / "archive" / "x", {"README": "x\n"})

    clone = pull_request(tmp_path, main, lambda repo: os.symlink("archive/x", repo / "a"))
    code, out, err = ci(clone, ["diff", "a/../policies", "--base", "origin/main"])
    assert code == 2, out + err
    assert "a/../policies: a path through a symbolic link" in err


def test_a_bare_repository_planted_in_the_policy_directory_is_not_used(tmp_path: Path) -> None:
    """A folder holding `HEAD`, `objects/` and `refs/` is a bare repository to git's discovery,
    with a config the pull request writes: git is told to use none it was not pointed at."""

    def plant(repo: Path) -> None:
        write_files(
            repo / "policies",
            {
                "HEAD": "ref: refs/heads/main\n",
                "objects/info/x": "",
                "refs/heads/x": "",
                "config": "",
            },
        )

    clone = pull_request(tmp_path, policies(narrow()), plant)
    code, out, err = ci(clone, GATE)
    assert code == 2, out + err
    assert "cannot use bare repository" in err


def test_the_base_is_read_at_the_path_named(tmp_path: Path) -> None:
    """A link above the repository (a runner's workspace link) is the machine's: the policy
    directory is read at the path it has in the repository."""
    clone = pull_request(
        tmp_path, policies(narrow(), "config/policies"), policies(widened(), "config/policies")
    )
    os.symlink(clone, tmp_path / "workspace")
    named = tmp_path / "workspace" / "config" / "policies"
    code, out, err = run_cli(["diff", str(named), "--base", "origin/main", "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["base"]["path"] == "config/policies" and doc["summary"]["widenings"] > 0


SECRET = "personas:\n  top_secret_persona_of_the_runner:\n    roles: [TOP_SECRET_ROLE]\n"


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("../outside.yaml", "a symbolic link that leads outside the policy directory: not read"),
        ("missing.yaml", "a symbolic link to no file of the policy directory at that revision"),
    ],
    ids=["out of it", "to no file"],
)
def test_a_link_out_of_the_policy_directory_at_the_base_is_refused(
    tmp_path: Path, target: str, said: str
) -> None:
    """The base revision holds `policies/extra.yaml` -> `../outside.yaml`: refused at the link,
    as the loader refuses one in a directory, and nothing of its target is read."""

    def main(repo: Path) -> None:
        _write(repo / "policies", narrow())
        write_files(repo, {"outside.yaml": SECRET})
        os.symlink(target, repo / "policies" / "extra.yaml")

    def unlink(repo: Path) -> None:
        (repo / "policies" / "extra.yaml").unlink()

    clone = pull_request(tmp_path, main, unlink)
    code, out, err = ci(clone, GATE)
    assert code == 2, out + err
    assert f"origin/main:policies/extra.yaml:1:1: {said}" in err
    assert "top_secret" not in (out + err).lower()


def test_a_policy_directory_that_was_a_link_at_the_base_is_refused(tmp_path: Path) -> None:
    def main(repo: Path) -> None:
        _write(repo / "archive", widened())
        os.symlink("archive", repo / "policies")

    def unlink(repo: Path) -> None:
        (repo / "policies").unlink()
        _write(repo / "policies", widened())

    clone = pull_request(tmp_path, main, unlink)
    code, out, err = ci(clone, GATE)
    assert code == 2, out + err
    assert "--base origin/main: policies is a symbolic link at that revision" in err


def test_a_link_out_of_the_policy_directory_at_the_head_is_refused(tmp_path: Path) -> None:
    """The same link committed by the pull request: the loader refuses it (compiler.model.
    loader.directory_files) before the base is read."""

    def link(repo: Path) -> None:
        write_files(repo, {"outside.yaml": SECRET})
        os.symlink("../outside.yaml", repo / "policies" / "extra.yaml")

    clone = pull_request(tmp_path, policies(narrow()), link)
    code, out, err = ci(clone, GATE)
    assert code == 2, out + err
    assert "policies/extra.yaml:1:1: a symbolic link that leads outside the policy directory" in err
    assert "top_secret" not in (out + err).lower()


def test_a_link_inside_the_policy_directory_at_the_base_is_read(tmp_path: Path) -> None:
    """`policies/policy.yaml` -> `.kept/policy.yaml` at the base is the file it leads to, as
    the loader reads it in a directory; the pull request widens that file."""

    def main(repo: Path) -> None:
        _write(repo / "policies" / ".kept", narrow())
        os.symlink(".kept/policy.yaml", repo / "policies" / "policy.yaml")

    clone = pull_request(
        tmp_path, main, lambda repo: _write(repo / "policies" / ".kept", widened())
    )
    code, out, err = ci(clone, GATE)
    assert code == 1, out + err
    assert "2 widenings, 0 narrowings" in out


def test_a_policy_directory_in_a_submodule_is_refused(tmp_path: Path) -> None:
    """A submodule's revisions, and its remote, are what the superproject (so a pull request)
    sets: `origin/main` there is not the repository's base."""
    sub = tmp_path / "sub"
    _write(sub, narrow())
    git(sub, "init", "-q", "-b", "main")
    git(sub, "add", "-A")
    git(sub, "commit", "-q", "-m", "policies")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "policies")
    git(repo, "commit", "-q", "-m", "policies as a submodule")
    code, out, err = run_cli(GATE, cwd=repo)
    assert code == 2, out + err
    assert "is inside the git submodule" in err


def test_git_that_does_not_answer_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every git call is bounded: a git that hangs ends the command with exit 2, never a
    stall (here a stand-in `git` that sleeps, and a bound of half a second)."""
    import accord.compiler.plan.source as source

    clone = pull_request(tmp_path, policies(narrow()), policies(narrow()))
    fake = write_files(tmp_path / "bin", {"git": "#!/bin/sh\nexec sleep 60\n"})
    (fake / "git").chmod(0o755)
    monkeypatch.setattr(source, "GIT_TIMEOUT", 0.5)
    path = f"{fake}{os.pathsep}{os.environ.get('PATH', '')}"
    code, out, err = run_cli(GATE, cwd=clone, env={"PATH": path})
    assert code == 2, out + err
    assert "git did not answer within 0.5 s" in err


# --------------------------------------------------------------------------------------------
# every output says which base was read


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_every_diff_format_names_the_base(tmp_path: Path, fmt: str) -> None:
    clone = pull_request(tmp_path, policies(narrow()), policies(widened()))
    main = git(clone, "rev-parse", "origin/main")
    said = f"base: git revision origin/main (commit {main}), policies/"
    argv = ["diff", "policies", "--base", "origin/main", "--format", fmt]
    code, out, err = ci(clone, argv)
    assert code == 0, err
    assert ci(clone, argv)[1] == out  # byte-identical again
    if fmt == "json":
        base = {"kind": "git", "name": "origin/main", "commit": main, "path": "policies"}
        assert json.loads(out)["base"] == base
    elif fmt == "markdown":
        assert f"Compared with the base: {said[len('base: ') :]}" in out.splitlines()
    elif fmt == "github":
        assert out.splitlines()[0] == annotation("notice", None, "accord diff: base", said)
        assert out.splitlines()[0].startswith("::notice title=accord diff%3A base::base: git")
    else:
        assert out.splitlines()[0] == said


def test_the_json_error_document_names_the_base_it_read(tmp_path: Path) -> None:
    """Exit 2 before a base was read: `base` is null, never a guess."""
    clone = pull_request(tmp_path, policies(narrow()), policies(narrow()))
    code, out, _ = ci(clone, ["diff", "policies", "--base", "no-such-ref", "--format", "json"])
    assert code == 2
    doc = json.loads(out)
    assert doc["base"] is None and doc["errors"]


# --------------------------------------------------------------------------------------------
# issue 39, item 12: a configuration change that lowers what fails is a widening


def configured(files: dict[str, str | None]) -> Callable[[Path], None]:
    """A change that writes the configuration files (None: deletes one)."""

    def write(repo: Path) -> None:
        for name, text in files.items():
            if text is None:
                (repo / name).unlink()
            else:
                (repo / name).write_text(text, encoding="utf-8")

    return write


def both(*changes: Callable[[Path], None]) -> Callable[[Path], None]:
    def write(repo: Path) -> None:
        for change in changes:
            change(repo)

    return write


#: (main's configuration, the pull request's, the settings reported: (setting, file, line))
CONFIG_CHANGES = [
    pytest.param(
        {},
        {"pyproject.toml": '[tool.accord]\nignore = ["current-role", "probe-mismatch"]\n'},
        [("ignore", "pyproject.toml", 2)],
        id="ignore added",
    ),
    pytest.param(
        {"accord.toml": 'fail-on = "warning"\n'},
        {"accord.toml": 'fail-on = "never"\n'},
        [("fail-on", "accord.toml", 1)],
        id="fail-on lowered",
    ),
    pytest.param(
        {"accord.toml": 'fail-on = "warning"\n'},
        {"accord.toml": None},
        [("fail-on", "origin/main:accord.toml", 1)],
        id="the configuration deleted",
    ),
    pytest.param(
        {},
        {"accord.toml": '[per-file-ignores]\n"policies/*" = ["ACC201"]\n'},
        [("per-file-ignores 'policies/*'", "accord.toml", 2)],
        id="per-file-ignores added",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        {"accord.toml": 'select = ["ACC"]\n'},
        {"accord.toml": '# narrowed\nselect = ["ACC1"]\n'},
        [("select", "accord.toml", 2)],
        id="select narrowed",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        {},
        {"accord.toml": 'exclude = ["policies/**"]\nforce-exclude = true\n'},
        [("exclude", "accord.toml", 1), ("force-exclude", "accord.toml", 2)],
        id="exclude added",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        {"accord.toml": 'ignore = ["ACC503"]\nfail-on = "error"\n'},
        {"accord.toml": 'fail-on = "warning"\n'},
        [],
        id="tightened: no widening",
    ),
]


@pytest.mark.parametrize(("main", "pr", "settings"), CONFIG_CHANGES)
def test_a_configuration_that_lowers_what_fails_is_a_widening(
    tmp_path: Path, main: dict[str, str], pr: dict[str, str | None], settings: list[Any]
) -> None:
    """The pull request leaves its policies alone and commits configuration that lowers what
    lint fails on: the exposure check the pull request cannot choose the base of reports it
    as a widening, as it does a removed probe, so the gate fails; in every format."""
    clone = pull_request(tmp_path, both(policies(narrow()), configured(main)), configured(pr))
    code, out, err = ci(clone, [*GATE, "--format", "json"])
    assert code == (1 if settings else 0), out + err
    doc = json.loads(out)
    got = [(e["setting"], e["file"], e["line"]) for e in doc["config_edits"]]
    assert got == settings
    assert doc["summary"]["config_edits"] == len(settings)
    if not settings:
        return
    first = doc["config_edits"][0]
    assert first["before"] != first["after"] and first["detail"]
    code, out, err = ci(clone, GATE)
    assert "Configuration that lowers what fails (widenings of what is checked):" in out
    assert f"{settings[0][1]}:{settings[0][2]}:1: {settings[0][0]}" in out
    code, out, _ = ci(clone, ["diff", "policies", "--base", "origin/main", "--format", "markdown"])
    assert f"#### Configuration that lowers what fails: {len(settings)}" in out
    code, out, _ = ci(clone, ["diff", "policies", "--base", "origin/main", "--format", "github"])
    said = [a for a in out.splitlines() if "title=accord diff%3A lint configuration" in a]
    assert len(said) == len(settings)
    assert said[0].startswith("::warning file=") and f",line={settings[0][2]}," in said[0]


def test_a_dir_base_has_no_configuration_to_compare(tmp_path: Path) -> None:
    """A ``dir:`` base is a policy directory alone (docs/diff.md): the configuration is
    compared only with a git revision's, which is what CI's line names."""
    clone = pull_request(
        tmp_path,
        policies(narrow()),
        configured({"accord.toml": 'fail-on = "never"\n'}),
    )
    _write(tmp_path / "old", narrow())
    argv = ["diff", "policies", "--base", f"dir:{tmp_path / 'old'}", "--format", "json"]
    code, out, err = ci(clone, argv)
    assert code == 0, err
    assert json.loads(out)["config_edits"] == []
    code, out, err = ci(clone, [*GATE, "--format", "json"])
    assert code == 1 and json.loads(out)["config_edits"][0]["setting"] == "fail-on", out + err
