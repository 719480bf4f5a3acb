"""A pull request cannot make ``accord lint`` pass on CI by what it commits (issue 22, items 3,
5, 6 and 10): a marker file that changes the reading mode, a folder the repository walk
skips, a configuration that silences lint, a symbolic link out of the checkout.

Each case is a repository a pull request would commit: written, committed, cloned afresh and
linted as CI lints it (``CI=true``, a real process). The policy SQL is the shape of the
dbt-snow-mask package's masking-policy macros (github.com/entechlog/dbt-snow-mask, README:
``create masking policy if not exists {{database}}.{{schema}}.<name> as (val string) returns
string -> case when current_role() in (...) then val else '**********' end``).

A case takes a second or two (a repository committed, cloned and linted in a process of its
own): the fast tier runs the first case of each test, ``make test`` every case (the others are
marked slow).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_process
from tests.estates import LINT_BASE, edited, write_estate, write_files

#: a dbt-snow-mask style macro whose policy calls CURRENT_ROLE() (ACC101, an error)
MACRO = """\
{% macro create_masking_policy_mp_email(node_database, node_schema) %}
create masking policy if not exists {{node_database}}.{{node_schema}}.mp_email as (val string)
  returns string ->
  case when current_role() in ('ANALYST') then val else '**********' end
{% endmacro %}
"""

#: a policy model with an unsalted pseudonym (ACC201, an error)
BAD_MODEL = edited(LINT_BASE, {"masks": {"subject": {"salt": None}}})


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _clone(repo: Path, root: Path) -> Path:
    """``repo`` committed as a pull request would (every file, symbolic links as links) and
    cloned afresh."""
    _git(repo, "init", "-q")
    _git(repo, "add", "-A", "-f")
    _git(repo, "commit", "-q", "-m", "a pull request")
    clone = root / "clone"
    _git(root, "clone", "-q", str(repo), str(clone))
    return clone


def _ci(clone: Path, *args: str) -> tuple[int, str, str]:
    run = run_process(["lint", *args], cwd=clone, env={"CI": "true"}, timeout=120)
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, run.stdout, run.stderr


def _rules(stdout: str) -> list[str]:
    return sorted(f["rule"] for f in json.loads(stdout)["findings"])


# --------------------------------------------------------------------------------------------
# item 3: no detection of the reading mode lints less than the policy model named


def _dbt_marker(repo: Path) -> None:
    (repo / "policies" / "dbt_project.yml").write_text("", encoding="utf-8")


def _dbt_project_marker(repo: Path) -> None:
    (repo / "policies" / "dbt_project.yml").write_text(
        "name: analytics\nversion: '1.0'\n", encoding="utf-8"
    )


def _sub_folders_and_sql(repo: Path) -> None:
    """The model moved into a sub-folder beside a .sql file: no YAML of its own, SQL files."""
    policies = repo / "policies"
    (policies / "model").mkdir()
    for file in policies.glob("*.yaml"):
        file.rename(policies / "model" / file.name)
    (policies / "readme.sql").write_text("select 1;\n", encoding="utf-8")


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(_dbt_marker, id="empty dbt_project.yml"),
        pytest.param(_dbt_project_marker, id="dbt_project.yml with a name", marks=pytest.mark.slow),
        pytest.param(_sub_folders_and_sql, id="model in a sub-folder", marks=pytest.mark.slow),
    ],
)
def test_a_marker_file_never_switches_the_policy_model_off(tmp_path: Path, attack) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    write_estate(repo / "policies", BAD_MODEL, split=True)
    code, out, err = _ci(repo, "policies", "--format", "json")
    assert code == 1 and "ACC201" in (expected := _rules(out)), err
    attack(repo)
    clone = _clone(repo, tmp_path)
    code, out, err = _ci(clone, "policies", "--format", "json")
    assert (code, _rules(out)) == (1, expected), err
    # a dbt project's own YAML (schema.yml) is not a policy file: `accord lint .` is unchanged
    write_files(
        clone,
        {
            "dbt_project.yml": "name: analytics\nversion: '1.0'\n",
            "models/schema.yml": "version: 2\nmodels:\n  - name: customers\n",
            "macros/mp_email.sql": MACRO,
        },
    )
    code, out, err = _ci(clone, ".", "--format", "json")
    if attack is _dbt_project_marker:  # loaded as a file of the policy directory: said, located
        assert code == 2 and "policies/dbt_project.yml:2:1" in err, err
    else:
        assert (code, _rules(out)) == (1, sorted(["ACC101", *expected])), err


# --------------------------------------------------------------------------------------------
# item 5: only the documented folders are skipped, and every skip is reported


def test_only_documented_folders_are_skipped_and_each_is_reported(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    linted = ["logs", "venv", "dbt_modules", "__pycache__", "macros"]
    skipped = {
        ".hidden/": "a hidden folder",
        "target/": "dbt's build output",
        "dbt_packages/": "dbt's installed packages",
        "env/": "a Python virtual environment (pyvenv.cfg)",
    }
    files = {f"{d}/mp_email.sql": MACRO for d in linted}
    files |= {f"{d}mp_email.sql": MACRO for d in skipped}
    files["env/pyvenv.cfg"] = "home = /usr/bin\n"
    files["dbt_project.yml"] = "name: analytics\nversion: '1.0'\n"
    write_files(repo, files)
    clone = _clone(repo, tmp_path)
    code, out, err = _ci(clone, ".", "--format", "json")
    doc = json.loads(out)
    assert code == 1, err
    assert sorted(f["file"] for f in doc["findings"]) == sorted(f"{d}/mp_email.sql" for d in linted)
    assert {s["path"]: s["reason"] for s in doc["skipped"]} == skipped
    code, out, _ = _ci(clone, ".", "--format", "sarif")
    invocation = json.loads(out)["runs"][0]["invocations"][0]
    assert {s["path"] for s in invocation["properties"]["skipped"]} == set(skipped)
    code, out, _ = _ci(clone, ".", "--statistics")
    assert "not linted: 4 paths" in out
    for path, why in skipped.items():
        assert f"  {path}  ({why})" in out
    # ... and exclude, reported as such
    write_files(clone, {"accord.toml": 'exclude = ["logs/**"]\n'})
    code, out, _ = _ci(clone, ".", "--format", "json")
    assert {"path": "logs/mp_email.sql", "reason": "excluded by the configuration"} in (
        json.loads(out)["skipped"]
    )


# --------------------------------------------------------------------------------------------
# item 6: configuration that silences lint is said on every run


@pytest.mark.parametrize(
    ("config", "args", "code", "warning"),
    [
        pytest.param(
            'select = ["ACC0"]',
            ["."],
            0,
            "accord.toml:2:1: warning: select and ignore disable every error rule",
            id="select ACC0",
        ),
        pytest.param(
            'ignore = ["ACC"]',
            ["."],
            0,
            "accord.toml:2:1: warning: select and ignore disable every error rule",
            id="ignore ACC",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            'exclude = ["**"]',
            ["macros"],
            2,
            "accord.toml:2:1: warning: exclude excludes every file of the repository (1)",
            id="exclude everything",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            'policies = "../elsewhere"',
            [],
            0,
            "accord.toml:2:1: warning: policies = '../elsewhere' is outside the repository",
            id="policies outside",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            'fail-on = "never"',
            ["."],
            0,
            'accord.toml:2:1: warning: fail-on = "never": lint never fails',
            id="fail-on never",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            'select = ["ACC8"]',
            ["."],
            2,
            "accord.toml:1:1: no rule matches 'ACC8'",
            id="prefix matching nothing",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_configuration_that_silences_lint_is_reported(
    tmp_path: Path, config: str, args: list[str], code: int, warning: str
) -> None:
    repo = tmp_path / "repo"
    write_estate(tmp_path / "elsewhere", LINT_BASE, split=True)  # a clean model, not ours
    write_files(repo, {"macros/mp_email.sql": MACRO, "accord.toml": f"# ours\n{config}\n"})
    clone = _clone(repo, tmp_path)
    got, _, err = _ci(clone, *args)
    assert got == code and warning in err, err
    if code == 2:
        return
    for _ in range(2):  # on every run, answered from the cache or not
        got, out, err = _ci(clone, *args, "--format", "sarif")
        assert warning in err
        notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        assert [n["level"] for n in notes] == ["warning"]
        assert warning.split(": ", 1)[1] in notes[0]["message"]["text"]
        location = notes[0]["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "accord.toml"
        assert location["region"]["startLine"] == 2


def test_an_exclude_that_leaves_nothing_is_not_a_pass(tmp_path: Path) -> None:
    repo = write_files(
        tmp_path / "repo",
        {"m.snowflake.sql": MACRO, "accord.toml": 'exclude = ["*.sql"]\nforce-exclude = true\n'},
    )
    clone = _clone(repo, tmp_path)
    code, out, err = _ci(clone, "m.snowflake.sql", "--format", "json")
    assert code == 2, err
    assert json.loads(out)["errors"][0]["message"].startswith("nothing was linted")


# --------------------------------------------------------------------------------------------
# item 10: a symbolic link out of the tree linted is refused, located, never read

SECRET = "CREATE MASKING POLICY top_secret_line_of_the_runner"


@pytest.mark.parametrize(
    ("link", "args"),
    [
        pytest.param("sql/mp_email.sql", ["."], id="SQL file in a repository walk"),
        pytest.param(
            "sql/mp_email.sql", ["sql/mp_email.sql"], id="SQL file named", marks=pytest.mark.slow
        ),
        pytest.param("policies/extra.yaml", ["policies"], id="policy file", marks=pytest.mark.slow),
        pytest.param(
            "policies/extra.yaml",
            ["policies/extra.yaml"],
            id="policy file named",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_symlink_out_of_the_checkout_is_refused(
    tmp_path: Path, link: str, args: list[str]
) -> None:
    outside = write_files(tmp_path / "runner", {"secret.txt": f"{SECRET};\nmasks: [x\n"})
    repo = tmp_path / "repo"
    write_estate(repo / "policies", LINT_BASE, split=True)
    write_files(repo, {"sql/ok.sql": "select 1;\n"})
    os.symlink(outside / "secret.txt", repo / link)
    clone = _clone(repo, tmp_path)
    assert (clone / link).is_symlink()
    for fmt in ("text", "json", "sarif", "github"):
        code, out, err = _ci(clone, *args, "--format", fmt)
        assert code == 2, err
        assert f"{link}:1:1: a symbolic link that leads outside the tree linted" in err
        assert "top_secret" not in out + err


@pytest.mark.parametrize(
    ("table", "line", "where"),
    [
        pytest.param(
            '[per-file-ignores]\n"**" = ["ACC"]\n', 3, "every file", id="every rule, all files"
        ),
        pytest.param(
            '[per-file-ignores]\n"macros/*.sql" = ["ACC1", "ACC2", "ACC3", "ACC4", "ACC5",'
            ' "ACC6", "ACC7"]\n',
            3,
            "the files it matches",
            id="every rule, one folder",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            'per-file-ignores = { "*" = ["ACC"] }\n',
            2,
            "every file",
            id="inline table",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_per_file_ignores_that_disable_every_error_rule_are_reported(
    tmp_path: Path, table: str, line: int, where: str
) -> None:
    """A ``per-file-ignores`` glob that deselects every error rule silences lint for the files
    it matches: warned on every run, as a line, a github ``::warning`` annotation and a SARIF
    notification, located at the glob's line."""
    repo = write_files(
        tmp_path / "repo", {"macros/mp_email.sql": MACRO, "accord.toml": f"# ours\n{table}"}
    )
    clone = _clone(repo, tmp_path)
    warning = f"disables every error rule in {where} (only ACC001 runs there)"
    code, _, err = _ci(clone, ".")
    assert code == 0, err  # the ACC101 of the macro is ignored: hence the warning
    assert f"accord.toml:{line}:1: warning: per-file-ignores" in err and warning in err, err
    code, out, err = _ci(clone, ".", "--format", "sarif")
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["warning"] and warning in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    code, out, err = _ci(clone, ".", "--format", "github")
    (annotation,) = [a for a in out.splitlines() if a.startswith("::warning ")]
    assert annotation.startswith(
        f"::warning file=accord.toml,line={line},col=1,title=accord configuration::per-file-ignores"
    ), out
    assert warning in annotation and "warning: per-file-ignores" not in err


def test_configuration_warnings_are_escaped_github_annotations(tmp_path: Path) -> None:
    """Under ``--format github`` a configuration warning is a ``::warning`` annotation, its
    values escaped per the workflow-command rules: a glob with a line break, ``%``, ``:`` and
    ``,`` cannot forge a second command (``::add-mask::``) nor end the message early."""
    glob = "x%,y:\\n::add-mask::secret"  # TOML's \n: a line break inside the glob
    repo = write_files(
        tmp_path / "repo",
        {"macros/mp_email.sql": MACRO, "accord.toml": f'[per-file-ignores]\n"{glob}" = ["ACC"]\n'},
    )
    clone = _clone(repo, tmp_path)
    code, out, err = _ci(clone, ".", "--format", "github")
    assert code == 1, err  # the glob matches nothing: the macro's ACC101 still fails
    lines = out.splitlines()
    assert not any(line.startswith("::add-mask::") for line in (out + err).splitlines())
    (annotation,) = [a for a in lines if a.startswith("::warning ")]
    # the glob is quoted with its line break as \\n, its % escaped as the runner reads it back
    assert "per-file-ignores 'x%25,y:\\n::add-mask::secret' disables" in annotation, annotation
    assert annotation.startswith(
        "::warning file=accord.toml,line=2,col=1,title=accord configuration::"
    )
    assert [a.split(" ", 1)[0] for a in lines] == ["::warning", "::error"]


# --------------------------------------------------------------------------------------------
# issue 39, item 12: every setting that lowers what fails is named in every summary

#: (the setting as a pull request commits it, its line, how the summary names it, what it says)
LOWERING = [
    pytest.param(
        '[tool.accord]\nignore = ["current-role", "unsalted-hash"]\n',
        "ignore",
        3,
        "turns off ACC101 current-role, ACC201 unsalted-hash",
        id="ignore",
    ),
    pytest.param(
        '[tool.accord]\nselect = ["ACC5"]\n',
        "select",
        3,
        "turns off every rule but",
        id="select",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        '[tool.accord]\n[tool.accord.per-file-ignores]\n"macros/*.sql" = ["ACC101"]\n',
        "per-file-ignores 'macros/*.sql'",
        4,
        "turns off ACC101 current-role in the files it matches",
        id="per-file-ignores",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        '[tool.accord]\nfail-on = "never"\n',
        "fail-on",
        3,
        '"never": no finding fails lint',
        id="fail-on never",
        marks=pytest.mark.slow,
    ),
    pytest.param(
        '[tool.accord]\nexclude = ["macros/**"]\n',
        "exclude",
        3,
        "leaves 1 file unlinted",
        id="exclude",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize(("config", "setting", "line", "says"), LOWERING)
def test_a_setting_that_lowers_what_fails_is_named_in_every_summary(
    tmp_path: Path, config: str, setting: str, line: int, says: str
) -> None:
    """A pull request's ``pyproject.toml`` that turns errors into "no findings" (or exit 0):
    the summary of every output format names the setting, where it is written and what it
    turns off, on every run (answered from the cache or not). No setting: no such record."""
    repo = tmp_path / "repo"
    write_estate(repo / "policies", BAD_MODEL, split=True)
    write_files(repo, {"macros/mp_email.sql": MACRO})
    plain = _ci(_clone(repo, tmp_path), ".", "--format", "json")
    assert "lowered" not in json.loads(plain[1])["summary"]
    shutil.rmtree(tmp_path / "clone")
    write_files(repo, {"pyproject.toml": f"# ours\n{config}"})
    clone = _clone(repo, tmp_path)
    where = f"pyproject.toml:{line}:1"
    _, out, _ = _ci(clone, ".")
    summary = out[out.rindex("accord lint: ") :]
    assert f"{setting} ({where}): " in summary and says in summary, summary
    _, out, _ = _ci(clone, ".", "--statistics")
    assert f"{setting} ({where}): " in out[out.rindex("accord lint: ") :]
    for _ in range(2):
        _, out, _ = _ci(clone, ".", "--format", "json")
        (lowered,) = json.loads(out)["summary"]["lowered"]
        assert (lowered["setting"], lowered["file"], lowered["line"]) == (
            setting,
            "pyproject.toml",
            line,
        )
        assert says in lowered["detail"]
    _, out, _ = _ci(clone, ".", "--format", "sarif")
    run = json.loads(out)["runs"][0]
    assert [x["setting"] for x in run["properties"]["lowered"]] == [setting]
    # one notification and one annotation a setting: a note, or the warning that already
    # names it (fail-on "never", an exclude that leaves nothing)
    notes = [
        n
        for n in run["invocations"][0]["toolExecutionNotifications"]
        if n["locations"][0]["physicalLocation"]["region"]["startLine"] == line
    ]
    assert [n["level"] in ("note", "warning") for n in notes] == [True], notes
    _, out, _ = _ci(clone, ".", "--format", "github")
    at = f" file=pyproject.toml,line={line},col=1,title=accord configuration::"
    (annotation,) = [a for a in out.splitlines() if at in a]
    assert annotation.startswith(("::notice", "::warning")), out
