"""``accord init`` fits the repository it scaffolds (issue 44): the branch CI runs on and
compares pull requests with is read from git (``--branch``, else the remote's default branch,
else the current branch, else ``init.defaultBranch``, else a plain refusal); the hook and the
workflow lint the whole repository (the policy directory, SQL, dbt macros, notebooks), run
here as written; CI installs accord from where this accord came from, never a name a public
index resolves; and ``--install`` on an existing scaffold rewrites that one line."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.commands import init as init_command
from accord.compiler.model.scaffold import PLACEHOLDER, WORKFLOW
from tests.cli import Result, run_cli
from tests.conftest import ROOT
from tests.test_init import (
    BOTH,
    accord_lines,
    edit,
    files_under,
    git,
    init,
)

#: git as a new machine has it (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("git_defaults")

EXTRAS = "accord[snowflake,databricks]"


def workflow_of(repo: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((repo / WORKFLOW).read_text(encoding="utf-8"))
    return loaded


def branch_written(repo: Path) -> str:
    """The branch the workflow names, the same in its three places."""
    workflow = workflow_of(repo)
    pushed = workflow[True]["push"]["branches"]  # YAML 1.1 reads the key `on` as true
    assert workflow[True]["pull_request"]["branches"] == pushed
    (branch,) = pushed
    for line in accord_lines(workflow, "exposure"):
        assert f"--base origin/{branch} " in line, line
    return str(branch)


# --- the branch


def test_a_repository_on_master_gets_master(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "master")  # no commit yet: an unborn branch
    run = run_cli(["init", str(tmp_path), *BOTH])
    assert run.returncode == 0, run.stderr
    assert branch_written(tmp_path) == "master"
    assert "branch: master (the current branch):" in run.stdout


def test_the_remotes_default_branch_wins_over_the_current_one(tmp_path: Path) -> None:
    """A clone records the remote's default branch (origin/HEAD): that is what pull requests
    go into, whatever branch the clone is on."""
    upstream, clone = tmp_path / "upstream", tmp_path / "clone"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "trunk")
    git(upstream, "commit", "-q", "--allow-empty", "-m", "first")
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "checkout", "-q", "-b", "add-accord")
    run = run_cli(["init", str(clone), *BOTH])
    assert run.returncode == 0, run.stderr
    assert branch_written(clone) == "trunk"
    assert "branch: trunk (the remote's default branch, origin/HEAD):" in run.stdout
    given = run_cli(["init", str(clone / "given"), *BOTH, "--branch", "release"])
    assert given.returncode == 0 and branch_written(clone / "given") == "release"
    assert "branch: release (given with --branch):" in given.stdout


def test_a_detached_head_takes_gits_default_branch(tmp_path: Path, git_defaults: Path) -> None:
    git_defaults.write_text("[init]\n\tdefaultBranch = develop\n", encoding="utf-8")
    git(tmp_path, "init", "-q", "-b", "work")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    git(tmp_path, "checkout", "-q", "--detach")
    run = run_cli(["init", str(tmp_path), *BOTH])
    assert run.returncode == 0, run.stderr
    assert branch_written(tmp_path) == "develop"
    assert "branch: develop (git's init.defaultBranch):" in run.stdout


@pytest.mark.parametrize("without", ["configuration", "git"])
def test_when_nothing_tells_it_says_so_and_writes_nothing(
    tmp_path: Path, git_defaults: Path, monkeypatch: pytest.MonkeyPatch, without: str
) -> None:
    """No repository, no ``init.defaultBranch`` (or no git at all): never a guess."""
    git_defaults.write_text("", encoding="utf-8")
    if without == "git":
        empty = tmp_path / "no-git-here"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
    repo = tmp_path / "repo"
    run = run_cli(["init", str(repo), *BOTH])
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "could not tell the branch pull requests are compared with" in run.stderr
    assert "pass --branch NAME" in run.stderr and len(run.stderr.splitlines()) == 1
    assert not repo.exists()


def test_a_branch_the_workflow_cannot_name_is_refused(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "fünf")
    run = run_cli(["init", str(tmp_path), *BOTH])
    assert run.returncode == 2, run.stdout
    assert "the current branch is 'fünf'" in run.stderr and "pass --branch NAME" in run.stderr
    assert files_under(tmp_path) == {}


# --- the hook and the workflow lint the repository

#: a masking policy in a dbt macro that calls CURRENT_ROLE() (ACC101: a user whose grant sits
#: on a secondary role is denied), in the shape of dbt-snow-mask's create macros
DBT_MACRO = """\
{% macro create_masking_policy_hide_email(node_database, node_schema) %}
create masking policy if not exists {{ node_database }}.{{ node_schema }}.hide_email
as (val string) returns string -> case
    when current_role() in ('ANALYST') then val else '**********'
end;
{% endmacro %}
"""
#: the same defect in a plain SQL script, in a repository whose top holds other YAML
SCRIPT = """\
CREATE MASKING POLICY GOV.POLICIES.HIDE_EMAIL AS (val STRING) RETURNS STRING ->
  CASE WHEN CURRENT_ROLE() IN ('ANALYST') THEN val ELSE '*' END;
"""
LAYOUTS = {
    "dbt project": {
        "dbt_project.yml": "name: shop\nversion: '1.0'\nprofile: shop\n",
        "models/schema.yml": "version: 2\nmodels:\n  - name: orders\n",
        "macros/hide_email.sql": DBT_MACRO,
    },
    "mkdocs.yml at the top": {
        "mkdocs.yml": "site_name: shop\nnav: []\n",
        "scripts/hide_email.sql": SCRIPT,
    },
}


def run_words(line: str, cwd: Path) -> Result:
    """One workflow or hook line as bash runs it, ``accord ARGS [> FILE]``; the output as
    the terminal would show it (a redirected output is written to its file)."""
    words = shlex.split(line)
    out = None
    if ">" in words:
        at = words.index(">")
        words, out = words[:at], words[at + 1]
    assert words[0] == "accord", line
    run = run_cli(words[1:], cwd=cwd)
    if out is not None:
        (cwd / out).write_text(run.stdout, encoding="utf-8")
    return run


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_workflow_and_the_hook_fail_on_policy_sql_outside_the_policy_directory(
    tmp_path: Path, layout: str
) -> None:
    """The lint lines of the generated workflow and the hook's entry, parsed out of the files
    init wrote and run as written in the repository: each fails (exit 1) on a masking policy
    that calls CURRENT_ROLE() in a dbt macro or a SQL script, and passes once it is fixed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel, text in LAYOUTS[layout].items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    (defect,) = [rel for rel in LAYOUTS[layout] if rel.endswith(".sql")]
    init(repo, *BOTH)
    edit(repo / "policies")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "accord init")
    lines = accord_lines(workflow_of(repo), "lint")
    hook = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entry = hook["repos"][0]["hooks"][0]["entry"]
    assert len(lines) == 2 and all(line.startswith("accord lint ") for line in [*lines, entry])

    sarif_line, github_line = lines
    assert run_words(sarif_line, repo).returncode == 1
    (result,) = json.loads((repo / "accord.sarif").read_text())["runs"][0]["results"]
    place = result["locations"][0]["physicalLocation"]
    assert result["ruleId"] == "ACC101" and place["artifactLocation"]["uri"] == defect
    github = run_words(github_line, repo)
    assert github.returncode == 1
    assert re.search(rf"^::error file={re.escape(defect)},line=\d+.*ACC101", github.stdout, re.M)
    committed = run_words(entry, repo)
    assert committed.returncode == 1, committed.stdout + committed.stderr
    assert f"{defect}\n" in committed.stdout and "ACC101 current-role" in committed.stdout

    fixed = (repo / defect).read_text().replace("current_role()", "is_role_in_session('ANALYST')")
    fixed = fixed.replace("CURRENT_ROLE() IN ('ANALYST')", "IS_ROLE_IN_SESSION('ANALYST')")
    (repo / defect).write_text(fixed, encoding="utf-8")
    for line in (*lines, entry):
        run = run_words(line, repo)
        assert run.returncode == 0, (line, run.stdout, run.stderr)


def test_a_policy_directory_elsewhere_is_linted_by_the_hook(tmp_path: Path) -> None:
    """``--policies governance/policies``: the repository's lint still reads that directory's
    model (the hook passes on the edited examples and fails once a mask shares a salt)."""
    git(tmp_path, "init", "-q", "-b", "main")
    init(tmp_path, *BOTH, "--policies", "governance/policies")
    policies = tmp_path / "governance" / "policies"
    edit(policies)
    hook = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entry = hook["repos"][0]["hooks"][0]["entry"]
    clean = run_words(entry, tmp_path)
    every = f"no findings in {len(list(policies.glob('*.yaml')))} files"  # each one read
    assert clean.returncode == 0 and every in clean.stdout, clean.stdout + clean.stderr
    masks = policies / "masks.yaml"
    masks.write_text(
        masks.read_text().replace("env:CUSTOMER_SALT_DATABRICKS", "env:CUSTOMER_SALT_SNOWFLAKE")
    )
    failed = run_words(entry, tmp_path)
    assert failed.returncode == 1 and "governance/policies/masks.yaml" in failed.stdout
    assert "ACC202" in failed.stdout


# --- what CI installs


class Installed:
    """An ``importlib.metadata`` distribution whose PEP 610 record is ``direct`` (None: none,
    as an install from a package index has)."""

    def __init__(self, direct: dict[str, Any] | None) -> None:
        self.direct = direct
        self.version = "0.0.0"

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct is None else json.dumps(self.direct)


def installed(monkeypatch: pytest.MonkeyPatch, direct: dict[str, Any] | None) -> None:
    import importlib.metadata as md

    monkeypatch.setattr(md, "distribution", lambda name: Installed(direct))


def resolves_on_an_index(spec: str) -> bool:
    """Whether pip would look ``spec`` up by name on a package index (PEP 508: a name without
    a URL); a path or ``name @ URL`` is fetched from where it says, a placeholder nowhere."""
    from packaging.requirements import InvalidRequirement, Requirement

    if spec.startswith(("./", "/")):
        return False
    try:
        return Requirement(spec).url is None
    except InvalidRequirement:
        return False


COMMIT = "0123abcd" * 5


@pytest.mark.parametrize(
    ("direct", "expected"),
    [
        (
            {"url": "https://github.com/example/accord", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
            f"{EXTRAS} @ git+https://github.com/example/accord@{COMMIT}",
        ),
        # a user name and token in the URL pip was given: never written
        (
            {"url": "https://ci-bot:ghp_secret@github.com/example/accord.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT}, "subdirectory": "tools/accord"},
            f"{EXTRAS} @ git+https://github.com/example/accord.git@{COMMIT}#subdirectory=tools/accord",
        ),
        # what CI cannot fetch as written: placeholders, never a name
        ({"url": "ssh://git@github.com/example/accord", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}, PLACEHOLDER),
        ({"url": "https://github.com/example/accord", "vcs_info": {"vcs": "git", "commit_id": "v1.0"}}, PLACEHOLDER),
        ({"url": "https://files.example.com/accord-1.0.tar.gz", "archive_info": {}}, PLACEHOLDER),
        (None, PLACEHOLDER),  # from a package index
    ],
    ids=["git", "git with credentials", "ssh", "not a commit", "archive", "an index"],
)  # fmt: skip
def test_ci_installs_the_commit_accord_came_from_or_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, direct: dict[str, Any] | None, expected: str
) -> None:
    installed(monkeypatch, direct)
    spec, why = init_command.installed_from(tmp_path)
    assert spec == expected and why
    assert "secret" not in spec and "ci-bot" not in spec
    assert not resolves_on_an_index(spec), spec


def checkout(path: Path, remote: str) -> str:
    """A git checkout of accord at ``path`` with the remote ``origin`` at ``remote``, its
    commit on origin/main (as a clone or a push leaves it); returns the commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "accord")
    git(path, "remote", "add", "origin", remote)
    git(path, "update-ref", "refs/remotes/origin/main", "HEAD")
    return git(path, "rev-parse", "HEAD").strip()


def test_an_accord_installed_from_a_checkout_installs_its_pushed_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pip install -e path/to/accord``: CI installs the checkout's commit from its https
    remote when that commit is on the remote (credentials left out); a commit not pushed, or
    a remote CI cannot fetch as written, gets the placeholder and the path named."""
    source = tmp_path / "src" / "accord"
    commit = checkout(source, "https://me:hunter2@git.example.com/org/accord.git")
    installed(monkeypatch, {"url": source.as_uri(), "dir_info": {"editable": True}})
    repo = tmp_path / "repo"
    spec, why = init_command.installed_from(repo)
    assert spec == f"{EXTRAS} @ git+https://git.example.com/org/accord.git@{commit}"
    assert "checkout" in why and "hunter2" not in spec
    git(source, "commit", "-q", "--allow-empty", "-m", "not pushed")
    spec, why = init_command.installed_from(repo)
    assert spec == PLACEHOLDER and str(source) in why
    git(source, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(source, "remote", "set-url", "origin", "git@git.example.com:org/accord.git")
    assert init_command.installed_from(repo)[0] == PLACEHOLDER


def test_an_accord_inside_the_repository_is_installed_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    source = repo / "vendor" / "accord"
    source.mkdir(parents=True)
    installed(monkeypatch, {"url": source.as_uri(), "dir_info": {}})
    spec, _ = init_command.installed_from(repo)
    assert spec == "./vendor/accord[snowflake,databricks]"
    assert not resolves_on_an_index(spec)


def test_the_placeholder_is_told_with_the_line_to_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note names the file and line to fill in, and the command that does it; run as it
    says, that command rewrites the line."""
    installed(monkeypatch, None)
    run = run_cli(["init", str(tmp_path), *BOTH])
    assert run.returncode == 0, run.stderr
    assert f"install: CI installs accord from {PLACEHOLDER} (" in run.stdout
    note = re.search(
        r"^note: fill it in: edit ACCORD_INSTALL on line (\d+) of (\S+) .*run `accord init "
        r"(\S+) --install SPEC`",
        run.stdout,
        re.M,
    )
    assert note, run.stdout
    lines = Path(note.group(2)).read_text().splitlines()
    assert lines[int(note.group(1)) - 1] == f'  ACCORD_INSTALL: "{PLACEHOLDER}"'
    spec = "git+https://git.example.com/org/accord@v1.2"
    again = run_cli(["init", *shlex.split(note.group(3)), "--install", spec])
    assert again.returncode == 0, again.stderr
    assert workflow_of(tmp_path)["env"]["ACCORD_INSTALL"] == spec


def test_install_on_an_existing_scaffold_rewrites_only_its_line(tmp_path: Path) -> None:
    """Everything else is still never overwritten: every other file byte for byte, and the
    workflow but for that line (its line endings kept); options given beside it are named as
    not applied."""
    init(tmp_path, *BOTH, "--install", "git+https://git.example.com/org/accord@v1")
    workflow = tmp_path / WORKFLOW
    workflow.write_bytes(workflow.read_bytes().replace(b"\n", b"\r\n"))  # edited on Windows
    before = files_under(tmp_path)
    spec = "accord[snowflake] @ git+https://git.example.com/org/accord@v2"
    run = run_cli(["init", str(tmp_path), "--install", spec, "--snowflake-schema", "OTHER.SCHEMA"])
    assert run.returncode == 0, run.stderr
    assert "(the install line only; nothing else was written)" in run.stdout
    assert "note: --snowflake-schema not applied" in run.stderr
    after = files_under(tmp_path)
    changed = [rel for rel in before if before[rel] != after[rel]]
    assert changed == [WORKFLOW] and set(after) == set(before)
    old, new = before[WORKFLOW].split(b"\r\n"), after[WORKFLOW].split(b"\r\n")
    assert len(old) == len(new)
    differ = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert differ == [(b'  ACCORD_INSTALL: "git+https://git.example.com/org/accord@v1"',
                       f'  ACCORD_INSTALL: "{spec}"'.encode())]  # fmt: skip
    assert workflow_of(tmp_path)["env"]["ACCORD_INSTALL"] == spec
    same = run_cli(["init", str(tmp_path), "--install", spec])
    assert same.returncode == 0 and "nothing written" in same.stdout
    assert files_under(tmp_path) == after


@pytest.mark.parametrize("case", ["edited by hand", "a bad value", "a link"])
def test_install_leaves_a_workflow_it_cannot_rewrite_alone(tmp_path: Path, case: str) -> None:
    init(tmp_path, *BOTH, "--install", "git+https://git.example.com/org/accord@v1")
    workflow = tmp_path / WORKFLOW
    install = "git+https://git.example.com/org/accord@v2"
    if case == "edited by hand":
        text = workflow.read_text().replace(
            '  ACCORD_INSTALL: "git+https://git.example.com/org/accord@v1"\n', ""
        )
        workflow.write_text(text.replace('"$ACCORD_INSTALL"', "-r requirements-ci.txt"))
        message = (
            f'{workflow}:1:1: no line `ACCORD_INSTALL: "..."` as accord init writes it: edit '
            f"what the workflow runs `pip install` on yourself, to {install}"
        )
    elif case == "a bad value":
        install = "accord\x1b[2J"
        message = "a control character"
    else:
        real = tmp_path / "elsewhere.yml"
        workflow.rename(real)
        workflow.symlink_to(real)
        message = f"{workflow}:1:1: not a regular file"
    before = files_under(tmp_path)
    run = run_cli(["init", str(tmp_path), "--install", install])
    assert run.returncode == 2 and message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert files_under(tmp_path) == before


def test_the_workflow_points_to_guides_that_exist(tmp_path: Path) -> None:
    """The generated files point to accord's guides (docs/), never to a README section."""
    init(tmp_path, *BOTH)
    text = "".join(b.decode() for b in files_under(tmp_path).values())
    assert "README" not in text
    links = re.findall(r"docs/([\w-]+\.md)#([\w-]+)", text)
    assert ("live.md", "reader-grants") in links
    for page, anchor in links:
        headings = re.findall(r"^#+ (.+)$", (ROOT / "docs" / page).read_text(), re.M)
        slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
        assert anchor in slugs, (page, anchor)
