"""``accord init`` scaffolds a repository a new user can commit as it is: the scaffold lints
clean, its skeletons' examples (uncommented, as a user edits them) form an estate that lints,
verifies and passes its probes, the pre-commit hook and every ``accord`` line of the generated
GitHub Actions workflow run as written in a git repository (the live job's against the
loopback stand-ins), and nothing is ever overwritten."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from accord.compiler.commands import init as init_command
from accord.compiler.model.scaffold import EXAMPLE_MARK
from accord.compiler.model.schema import PolicyModel
from tests.cli import run_cli

BOTH = ["--snowflake-schema", "GOV.POLICIES", "--databricks-schema", "governance.policies"]
#: git as a new machine has it (tests/conftest.py, git_defaults)
pytestmark = pytest.mark.usefixtures("git_defaults")
VARIANTS = {
    "both": BOTH,
    "snowflake": ["--snowflake-schema", "GOV.POLICIES", "--snowflake-style", "tag"],
    "databricks": ["--databricks-schema", "governance.policies", "--databricks-style", "abac"],
}


def init(repo: Path, *args: str) -> None:
    run = run_cli(["init", str(repo), *args])
    assert run.returncode == 0, run.stderr


def edit(policies: Path) -> None:
    """What a user does first: uncomment each file's example."""
    for path in sorted(policies.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        head, mark, example = text.partition(EXAMPLE_MARK + "\n")
        if mark:
            lines = [line[2:] if line.startswith("# ") else "" for line in example.splitlines()]
            path.write_text(head + mark + "\n".join(lines) + "\n", encoding="utf-8")


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_scaffold_lints_clean_and_its_examples_form_an_estate(
    tmp_path: Path, variant: str
) -> None:
    init(tmp_path, *VARIANTS[variant])
    policies = tmp_path / "policies"
    # a skeleton for every section of the model (version sits in platforms.yaml)
    expected = set(PolicyModel.model_fields) - {"version"}
    assert {"platforms", "masks", "datasets", "surfaces", "probes"} <= expected
    assert {p.stem for p in policies.glob("*.yaml")} == expected
    run = run_cli(["lint", str(policies)])
    assert run.returncode == 0 and "no findings" in run.stdout, run.stdout + run.stderr
    platforms = yaml.safe_load((policies / "platforms.yaml").read_text())
    assert set(platforms["platforms"]) == {variant} if variant != "both" else True
    for path in policies.glob("*.yaml"):
        first = path.read_text().splitlines()[0]
        assert first == "# yaml-language-server: $schema=../.vscode/accord.schema.json"
    edit(policies)
    # (ABAC warns that querying users may need EXECUTE on a salt function: ACC506)
    strict = [] if variant == "databricks" else ["--fail-on", "warning"]
    run = run_cli(["lint", str(policies), *strict])
    assert run.returncode == 0 and (" 0 errors" in run.stdout or "no findings" in run.stdout), (
        run.stdout + run.stderr
    )
    model = run_cli(["validate", str(policies)])
    assert "0 datasets" not in model.stdout and "0 personas" not in model.stdout
    verified = run_cli(["verify", str(policies)])
    assert verified.returncode == 0 and ": 0 mismatches" in verified.stdout, verified.stdout
    probed = run_cli(["probe", str(policies)])
    assert probed.returncode == 0 and "1 probe," in probed.stdout, probed.stdout


def test_the_editor_schema_is_accord_schema_and_validates_the_examples(tmp_path: Path) -> None:
    import jsonschema

    init(tmp_path, *BOTH)
    schema_text = (tmp_path / ".vscode" / "accord.schema.json").read_text()
    assert schema_text == run_cli(["schema"]).stdout
    settings = json.loads((tmp_path / ".vscode" / "settings.json").read_text())
    assert settings == {
        "yaml.schemas": {
            "./.vscode/accord.schema.json": ["policies/**/*.yaml", "policies/**/*.yml"]
        }
    }
    edit(tmp_path / "policies")
    for path in sorted((tmp_path / "policies").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(path.read_text()), json.loads(schema_text))


def test_a_nested_policy_directory_and_no_editor(tmp_path: Path) -> None:
    init(tmp_path, *BOTH, "--policies", "governance/policies", "--no-editor")
    assert not (tmp_path / ".vscode").exists()
    text = (tmp_path / "governance" / "policies" / "masks.yaml").read_text()
    assert "yaml-language-server" not in text
    # the hook and the lint steps lint the repository; the other steps name the directory
    hook = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text())
    (only,) = hook["repos"][0]["hooks"]
    assert only["entry"] == "accord lint ." and "files" not in only
    workflow = yaml.safe_load((tmp_path / ".github/workflows/accord.yml").read_text())
    assert accord_lines(workflow, "lint") == [
        "accord lint . --format sarif > accord.sarif",
        "accord lint . --format github",
    ]
    assert accord_lines(workflow, "verify") == ["accord verify governance/policies"]


def test_it_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "masks.yaml").write_text("masks: {}\n")
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    before = files_under(tmp_path)
    run = run_cli(["init", str(tmp_path), *BOTH])
    assert run.returncode == 2
    named = sorted(line.split(":", 1)[0] for line in run.stderr.splitlines()[:-1])
    assert named == [
        str(tmp_path / ".pre-commit-config.yaml"),
        str(tmp_path / "policies/masks.yaml"),
    ]
    assert run.stderr.splitlines()[-1] == "accord: 2 errors; nothing was written"
    assert files_under(tmp_path) == before


def test_a_gitignore_is_extended_never_rewritten(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n.accord/\n*.pyc")  # no final newline
    init(tmp_path, *BOTH)
    text = (tmp_path / ".gitignore").read_text()
    assert text.startswith("build/\n.accord/\n*.pyc\n# accord:")
    assert text.splitlines()[-1] == ".accord_cache/"
    assert text.splitlines().count(".accord/") == 1
    other = tmp_path / "again"
    other.mkdir()
    (other / ".gitignore").write_text(".accord_cache/\n.accord/\n")
    init(other, *BOTH)
    assert (other / ".gitignore").read_text() == ".accord_cache/\n.accord/\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--snowflake-schema", "GOV"], "snowflake governance_schema: 'GOV' is not a valid"),
        (["--databricks-schema", "a.b; DROP"], "databricks governance_schema"),
        ([*BOTH, "--policies", "../elsewhere"], "--policies '../elsewhere'"),
        ([*BOTH, "--install", 'accord"; curl x'], "--install"),
        # option-like values: every accord line of the workflow would print help and exit 0
        ([*BOTH, "--policies=--help"], "--policies '--help': starts with '-'"),
        ([*BOTH, "--policies", "-h"], "--policies '-h': starts with '-'"),
        ([*BOTH, "--policies", "gov/--help"], "--policies 'gov/--help': starts with '-'"),
        ([*BOTH, "--branch=--help"], "--branch '--help': starts with '-'"),
        ([*BOTH, "--install=--help"], "--install '--help': starts with '-'"),
        # control characters in what CI installs (a tab, an escape, a YAML line separator)
        ([*BOTH, "--install", "accord\tx"], "--install 'accord\\tx': a control character"),
        ([*BOTH, "--install", "accord\x1b[2J"], "a control character"),
        ([*BOTH, "--install", "accord\u2028x"], "a control character"),
        ([*BOTH, "--install", "accord\x85x"], "a control character"),
    ],
)
def test_bad_choices_exit_2_and_write_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    run = run_cli(["init", str(tmp_path), *args])
    assert run.returncode == 2 and message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1
    assert files_under(tmp_path) == {}


@pytest.mark.parametrize("branch", ["1.10", "null", "0x1F", "yes", "2024-01-01", "release/1.0"])
def test_the_branch_is_a_string_to_yaml(tmp_path: Path, branch: str) -> None:
    """``--branch`` is written quoted: YAML reads ``1.10`` as the number 1.1, ``null`` as no
    branch, ``0x1F`` as 31; the push trigger must name the branch as written."""
    init(tmp_path, *BOTH, "--branch", branch)
    workflow = yaml.safe_load((tmp_path / ".github/workflows/accord.yml").read_text())
    assert workflow[True]["push"]["branches"] == [branch]  # YAML 1.1 reads `on` as true
    assert workflow[True]["pull_request"]["branches"] == [branch]
    assert f"--base origin/{branch} " in (tmp_path / ".github/workflows/accord.yml").read_text()


@pytest.mark.parametrize("link", ["policies", ".github", ".github/workflows", ".vscode"])
def test_it_never_writes_through_a_link_out_of_the_repository(tmp_path: Path, link: str) -> None:
    """A folder init writes into that is a symbolic link to a directory outside DIR is refused
    (exit 2, naming the link) and nothing is written, there or anywhere; a link that stays
    inside DIR is written through."""
    repo, outside = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    outside.mkdir()
    (repo / link).parent.mkdir(parents=True, exist_ok=True)
    (repo / link).symlink_to(outside, target_is_directory=True)
    run = run_cli(["init", str(repo), *BOTH])
    assert run.returncode == 2, run.stderr
    assert f"{repo / link}:1:1: a symbolic link to {outside}, outside {repo}" in run.stderr
    assert "Traceback" not in run.stderr
    assert list(outside.iterdir()) == []
    assert files_under(repo) == {}
    # a link inside the repository is the repository's own folder
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "governance").mkdir()
    (inside / "policies").symlink_to(inside / "governance", target_is_directory=True)
    init(inside, *BOTH)
    assert (inside / "governance" / "platforms.yaml").is_file()


def test_without_options_it_asks_only_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = run_cli(["init", str(tmp_path)], env={"CI": None})
    assert run.returncode == 2 and "--snowflake-schema" in run.stderr
    assert "only on a terminal, never in CI" in run.stderr
    monkeypatch.setattr(init_command, "_terminal", lambda: True)
    run = run_cli(["init", str(tmp_path)], env={"CI": "true"})
    assert run.returncode == 2 and files_under(tmp_path) == {}
    run = run_cli(["init", str(tmp_path)], env={"CI": None}, stdin="GOV.POLICIES\n\n")
    assert run.returncode == 0, run.stderr
    platforms = yaml.safe_load((tmp_path / "policies" / "platforms.yaml").read_text())
    assert platforms["platforms"] == {
        "snowflake": {"governance_schema": "GOV.POLICIES", "style": "column"}
    }


def test_the_output_is_the_same_every_time(tmp_path: Path) -> None:
    init(tmp_path / "a", *BOTH)
    init(tmp_path / "b", *BOTH)
    assert files_under(tmp_path / "a") == files_under(tmp_path / "b")


# --- the generated CI, run as written


def git(repo: Path, *args: str) -> str:
    run = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout


def accord_lines(workflow: dict, job: str) -> list[str]:
    """Every ``accord ...`` line of a job's ``run`` steps, in order."""
    lines = []
    for step in workflow["jobs"][job]["steps"]:
        for line in str(step.get("run", "")).splitlines():
            if line.strip().startswith("accord "):
                lines.append(line.strip())
    return lines


#: pre-commit's file types: identify's tags by extension (pre-commit/identify,
#: identify/extensions.py, EXTENSIONS), the ones a policy repository holds
IDENTIFY_TAGS = {
    "yaml": {"text", "yaml"},
    "yml": {"text", "yaml"},
    "sql": {"text", "sql"},
    "py": {"text", "python"},
    "toml": {"text", "toml"},
    "md": {"text", "markdown"},
}


def run_line(line: str, cwd: Path, env: dict[str, str | None] | None = None) -> int:
    """One workflow line as bash runs it: ``accord ARGS [> FILE]``."""
    words = shlex.split(line)
    out = None
    if ">" in words:
        at = words.index(">")
        words, out = words[:at], words[at + 1]
        assert len(words) + 2 == len(shlex.split(line)), line
    run = run_cli(words[1:], cwd=cwd, env=env)
    if out is not None:
        (cwd / out).write_text(run.stdout, encoding="utf-8")
    return run.returncode


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A user's repository after `accord init`, the examples edited in, committed on main and
    pushed (origin/main is the same commit)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    init(repo, *BOTH)
    edit(repo / "policies")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "accord init")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo


def test_the_workflow_has_the_jobs_it_promises(repo: Path) -> None:
    workflow = yaml.safe_load((repo / ".github/workflows/accord.yml").read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"push", "pull_request", "schedule", "workflow_dispatch"}
    lint = workflow["jobs"]["lint"]
    upload = next(s for s in lint["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "accord.sarif" and upload["if"] == "always()"
    assert lint["permissions"]["security-events"] == "write"
    assert accord_lines(workflow, "lint") == [
        "accord lint . --format sarif > accord.sarif",
        "accord lint . --format github",
    ]
    assert accord_lines(workflow, "exposure") == [
        "accord diff policies --base origin/main --format markdown > exposure.md",
        "accord diff policies --base origin/main --fail-on widening",
    ]
    comment = next(s for s in workflow["jobs"]["exposure"]["steps"] if "gh pr" in s.get("run", ""))
    assert "--body-file exposure.md" in comment["run"]
    assert workflow["jobs"]["exposure"]["permissions"]["pull-requests"] == "write"
    assert accord_lines(workflow, "verify") == ["accord verify policies"]
    assert accord_lines(workflow, "live") == [
        "accord probe policies --live",
        "accord drift policies --platform all",
    ]
    assert "schedule" in workflow["jobs"]["live"]["if"]
    assert "<org>" not in (repo / ".pre-commit-config.yaml").read_text()


def test_the_workflow_commands_run_as_written(repo: Path) -> None:
    workflow = yaml.safe_load((repo / ".github/workflows/accord.yml").read_text())
    for job in ("lint", "verify", "exposure"):
        for line in accord_lines(workflow, job):
            assert run_line(line, repo) == 0, (job, line)
    sarif = json.loads((repo / "accord.sarif").read_text())
    assert sarif["runs"][0]["results"] == [] and sarif["version"] == "2.1.0"
    assert "no change in exposure" in (repo / "exposure.md").read_text()
    # a pull request that widens: the comment says so, and the gate fails
    grants = repo / "policies" / "entitlements.yaml"
    grants.write_text(grants.read_text().replace("US: [steward]", "US: [analyst, steward]"))
    git(repo, "commit", "-q", "-am", "grant US to analysts")
    diff, gate = accord_lines(workflow, "exposure")
    assert run_line(diff, repo) == 0
    comment = (repo / "exposure.md").read_text()
    assert "**2 widenings, 0 narrowings**" in comment
    # whose view: the persona as the identity that gains the rows, on each platform
    for who in ("analyst as Snowflake role ANALYST", "analyst as Databricks group analysts"):
        assert f"| {who} | rows of " in comment and "| gains region US |" in comment
    assert run_line(gate, repo) == 1


def test_the_pre_commit_hook_runs_as_written(repo: Path) -> None:
    """The hook as pre-commit runs a `language: system` hook with `pass_filenames: false`:
    its entry, split as a shell would, in the repository; it runs on a change of any file whose
    type (pre-commit's, identify's tags) is among its `types_or`."""
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    (hook,) = config["repos"][0]["hooks"]
    assert config["repos"][0]["repo"] == "local" and hook["language"] == "system"
    assert hook["pass_filenames"] is False and "files" not in hook
    for changed in (
        "policies/masks.yaml",
        "macros/mask.sql",
        "notebooks/masks.py",  # a Databricks notebook
        "pyproject.toml",  # lint's configuration
        "accord.toml",
        "dbt_project.yml",
    ):
        assert IDENTIFY_TAGS[changed.rsplit(".", 1)[1]] & set(hook["types_or"]), changed
    assert not IDENTIFY_TAGS["md"] & set(hook["types_or"])
    words = shlex.split(hook["entry"])
    assert words[0] == "accord"
    assert run_cli(words[1:], cwd=repo).returncode == 0
    masks = repo / "policies" / "masks.yaml"
    masks.write_text(
        masks.read_text().replace("env:CUSTOMER_SALT_DATABRICKS", "env:CUSTOMER_SALT_SNOWFLAKE")
    )
    failed = run_cli(words[1:], cwd=repo)
    assert failed.returncode == 1 and "ACC202" in failed.stdout


@pytest.mark.standin
def test_the_live_job_runs_against_the_stand_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheduled job's lines on a fresh scaffold, against the loopback stand-ins: the
    probes (none yet) and drift (nothing to deploy yet) pass."""
    from tests.live_helpers import running_platforms

    init(tmp_path, *BOTH)
    workflow = yaml.safe_load((tmp_path / ".github/workflows/accord.yml").read_text())
    config = tmp_path.parent / f"{tmp_path.name}-probe.yaml"
    config.write_text("\n")  # the job writes the secret's text; an empty config is valid
    with running_platforms(monkeypatch):
        for line in accord_lines(workflow, "live"):
            assert run_line(line, tmp_path, env={"ACCORD_PROBE_CONFIG": str(config)}) == 0, line
