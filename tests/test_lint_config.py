"""Configuration and selection as ruff users expect them (issue 11, item 7): ``[tool.accord]``
/ ``accord.toml``, ``--select`` / ``--ignore``, ACC002 ``unused-suppression``, ``accord rules
NAME`` and ``--statistics``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import LINT_BASE, edited, write_estate, write_files
from tests.test_lint_coverage import BAD_ROLE_SF, GOOD_SF

#: CURRENT_ROLE (ACC101) and MD5 of the masked value (ACC201, ACC204) in one policy
MIXED_SF = """\
CREATE MASKING POLICY gov.pol.mixed AS (val VARCHAR) RETURNS VARCHAR ->
  CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE MD5(val) END;
"""


def _rules(run_stdout: str) -> list[str]:
    return [f["rule"] for f in json.loads(run_stdout)["findings"]]


@pytest.mark.parametrize(
    ("config", "args", "expected"),
    [
        pytest.param("", [], ["ACC101", "ACC201", "ACC204"], id="no configuration"),
        pytest.param('[tool.accord]\nselect = ["ACC2"]\n', [], ["ACC201", "ACC204"], id="prefix"),
        pytest.param(
            '[tool.accord]\nignore = ["weak-hash"]\n', [], ["ACC101", "ACC201"], id="by name"
        ),
        pytest.param(
            '[tool.accord]\nselect = ["ACC2"]\n', ["--select", "ACC101"], ["ACC101"], id="cli wins"
        ),
        pytest.param("", ["--ignore", "ACC101,ACC204"], ["ACC201"], id="cli ignore"),
        pytest.param(
            '[tool.accord.per-file-ignores]\n"legacy/*.sql" = ["ACC101"]\n',
            [],
            ["ACC201", "ACC204"],
            id="per-file-ignores",
        ),
    ],
)
def test_select_and_ignore(
    tmp_path: Path, config: str, args: list[str], expected: list[str]
) -> None:
    write_files(
        tmp_path, {"legacy/m.snowflake.sql": MIXED_SF, "pyproject.toml": config or "[project]\n"}
    )
    run = run_cli(["lint", "legacy/m.snowflake.sql", *args, "--format", "json"], cwd=tmp_path)
    assert _rules(run.stdout) == expected, run.stderr


def test_accord_toml_wins_and_sets_fail_on_policies_and_exclude(tmp_path: Path) -> None:
    write_estate(tmp_path / "gov" / "model", edited(LINT_BASE, {}), split=True)
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.accord]\nselect = ["ACC9"]\n',  # not used: accord.toml wins
            "accord.toml": textwrap.dedent(
                """\
                policies = "gov/model"
                fail-on = "never"
                exclude = ["vendor/**"]
                """
            ),
            "sql/c_bad.sql": BAD_ROLE_SF,
            "vendor/lib/x.sql": BAD_ROLE_SF,
        },
    )
    run = run_cli(["lint"], cwd=tmp_path)  # the configured policy directory
    assert run.returncode == 0 and run.stdout.startswith("accord lint: no findings in 8 files")
    run = run_cli(["lint", ".", "--format", "json"], cwd=tmp_path)
    assert run.returncode == 0  # fail-on never
    assert {f["file"] for f in json.loads(run.stdout)["findings"]} == {"sql/c_bad.sql"}


def test_bad_configuration_is_a_located_error(tmp_path: Path) -> None:
    write_files(tmp_path, {"accord.toml": 'select = ["ACC999"]\n', "a.sql": GOOD_SF})
    run = run_cli(["lint", "a.sql"], cwd=tmp_path)
    assert run.returncode == 2 and "accord.toml:1:1: no rule matches 'ACC999'" in run.stderr
    write_files(tmp_path, {"accord.toml": "select = [\n"})
    run = run_cli(["lint", "a.sql"], cwd=tmp_path)
    assert run.returncode == 2 and "accord.toml:" in run.stderr and "invalid TOML" in run.stderr
    assert "Traceback" not in run.stderr
    # machine formats still print one document, the files linted with the defaults
    run = run_cli(["lint", "a.sql", "--format", "json"], cwd=tmp_path)
    doc = json.loads(run.stdout)
    assert run.returncode == 2 and doc["errors"][0]["file"] == "accord.toml"
    # a bad --select is bad usage
    run = run_cli(["lint", "a.sql", "--select", "ACC999"], cwd=tmp_path)
    assert run.returncode == 2 and "accord: --select / --ignore: no rule matches" in run.stderr


def test_acc001_cannot_be_deselected(tmp_path: Path) -> None:
    write_files(
        tmp_path, {"b.sql": "CREATE MASKING POLICY p AS (v VARCHAR) RETURNS VARCHAR -> CASE;\n"}
    )
    run = run_cli(["lint", "b.sql", "--select", "ACC101", "--format", "json"], cwd=tmp_path)
    assert _rules(run.stdout) == ["ACC001"]


# --------------------------------------------------------------------------------------------
# ACC002


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        pytest.param(
            "-- accord: ignore ACC101 the support role is always primary\n" + BAD_ROLE_SF,
            [],
            id="used",
        ),
        pytest.param(
            "-- accord: ignore ACC101 the support role is always primary\n" + GOOD_SF,
            [("ACC002", 1)],
            id="unused comment",
        ),
        pytest.param(
            "-- accord: ignore ACC203 reviewed: the other platform salts\n" + GOOD_SF,
            [],
            id="ACC203 depends on the batch",
        ),
    ],
)
def test_unused_suppression_comment(
    tmp_path: Path, sql: str, expected: list[tuple[str, int]]
) -> None:
    write_files(tmp_path, {"m.snowflake.sql": sql})
    run = run_cli(["lint", "m.snowflake.sql", "--format", "json"], cwd=tmp_path)
    found = [(f["rule"], f["line"]) for f in json.loads(run.stdout)["findings"]]
    assert found == expected
    assert run.returncode == 0  # a warning fails only with --fail-on warning
    if expected:
        assert (
            run_cli(["lint", "m.snowflake.sql", "--fail-on", "warning"], cwd=tmp_path).returncode
            == 1
        )


def test_unused_ignore_entry_in_the_model(tmp_path: Path) -> None:
    data = edited(
        LINT_BASE, {"masks": {"email": {"ignore": {"ACC201": "hashing reviewed 2025-03"}}}}
    )
    root = write_estate(tmp_path / "p", data, split=True)
    run = run_cli(["lint", str(root), "--format", "json"])
    [finding] = json.loads(run.stdout)["findings"]
    assert (finding["rule"], finding["object"]) == ("ACC002", "masks.email")
    assert finding["file"].endswith("masks.yaml") and "ACC201" in finding["message"]
    # a rule left out of the run is not judged
    run = run_cli(["lint", str(root), "--ignore", "ACC201", "--format", "json"])
    assert json.loads(run.stdout)["findings"] == []


def test_a_drift_rule_suppression_is_not_judged_by_lint(tmp_path: Path) -> None:
    """ACC701-ACC706 are raised only by `accord drift`, which reads the platforms: plain lint
    cannot know whether `ignore: {ACC704: ...}` is used, so it does not call it unused (it did),
    while a stale suppression of a lint rule beside it still is."""
    data = edited(
        LINT_BASE,
        {
            "masks": {
                "email": {
                    "ignore": {
                        "ACC704": "a console grant, reviewed 2026-11",
                        "ACC201": "hashing reviewed 2025-03",
                    }
                }
            }
        },
    )
    root = write_estate(tmp_path / "p", data, split=True)
    run = run_cli(["lint", str(root), "--format", "json"])
    messages = [f["message"] for f in json.loads(run.stdout)["findings"]]
    assert len(messages) == 1 and "ACC201" in messages[0]


def test_drift_findings_are_finalised_without_the_lint_rules(tmp_path: Path) -> None:
    """`accord drift` finalises its live findings with lint's entry suppressions and order
    (compiler.lint.engine.finalize), without running a lint rule: a finding on an entry that
    ignores its rule is suppressed with the entry's reason, duplicates go, the rest is sorted,
    and nothing the model rules would raise is added."""
    from accord.compiler.core.errors import Location
    from accord.compiler.lint.engine import finalize
    from accord.compiler.lint.finding import Finding
    from accord.compiler.model.validate import load_project

    reason = "a console grant, reviewed 2026-11"
    root = write_estate(
        tmp_path / "p",
        edited(LINT_BASE, {"masks": {"email": {"ignore": {"ACC704": reason}}}}),
        split=True,
    )
    project = load_project(root)
    here = Location("masks.yaml", 3, 5)
    ignored = Finding(here, "ACC704", "masks.email", "snowflake: rows differ")
    kept = Finding(Location("masks.yaml", 1, 1), "ACC701", "masks.email", "snowflake: missing")
    other = Finding(here, "ACC704", "entitlements.programme", "rows differ")
    assert finalize(project, [ignored, other, kept, other]) == [
        kept,
        Finding(here, "ACC704", "entitlements.programme", "rows differ"),
        Finding(here, "ACC704", "masks.email", "snowflake: rows differ", "", True, reason),
    ]
    assert finalize(project, []) == []  # the model's own findings are not drift's


def test_used_ignore_entry_is_not_reported() -> None:
    run = run_cli(["lint", str(ROOT / "policies"), "--format", "json", "--show-suppressed"])
    assert "ACC002" not in {f["rule"] for f in json.loads(run.stdout)["findings"]}


# --------------------------------------------------------------------------------------------
# rules by name, statistics


@pytest.mark.parametrize("name", ["ACC101", "acc101", "current-role"])
def test_rules_finds_a_rule_by_id_or_name(name: str) -> None:
    run = run_cli(["rules", name])
    assert run.returncode == 0 and run.stdout.startswith("ACC101 current-role (error;")


def test_statistics_counts_by_rule(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.snowflake.sql": MIXED_SF, "b.snowflake.sql": BAD_ROLE_SF})
    run = run_cli(["lint", "a.snowflake.sql", "b.snowflake.sql", "--statistics"], cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        "2  ACC101  current-role  (error)",
        "1  ACC201  unsalted-hash  (error)",
        "1  ACC204  weak-hash  (error)",
        "",
        "accord lint: 4 errors, 0 warnings in 2 files",
    ]


# --------------------------------------------------------------------------------------------
# messages a person can act on (item 8)


@pytest.mark.parametrize(
    ("dialect", "body", "fix_names"),
    [
        pytest.param("snowflake", "HASH(val)", "SHA2(val ||", id="snowflake HASH"),
        pytest.param("snowflake", "MD5(val)", "SHA2(val ||", id="MD5"),
        pytest.param("snowflake", "SHA1(val)", "SHA2(val ||", id="SHA1"),
        pytest.param("snowflake", "SHA2(val, 512)", "SHA2(val ||", id="SHA2 keeps SHA2"),
    ],
)
def test_acc201_fix_never_suggests_a_flagged_function(
    tmp_path: Path, dialect: str, body: str, fix_names: str
) -> None:
    sql = (
        "CREATE MASKING POLICY gov.pol.m AS (val VARCHAR) RETURNS VARCHAR ->\n"
        f"  CASE WHEN IS_ROLE_IN_SESSION('A') THEN val ELSE {body} -- legacy digest\n  END;\n"
    )
    write_files(tmp_path, {f"m.{dialect}.sql": sql})
    run = run_cli(["lint", f"m.{dialect}.sql", "--format", "json"], cwd=tmp_path)
    [acc201] = [f for f in json.loads(run.stdout)["findings"] if f["rule"] == "ACC201"]
    assert fix_names in acc201["fix"]
    assert not any(w in acc201["fix"] for w in ("HASH(", "MD5(", "SHA1("))
    assert "legacy" not in acc201["message"] and "/*" not in acc201["message"]


@pytest.mark.parametrize(
    ("sql", "dialect", "says", "column"),
    [
        pytest.param(
            "CREATE FUNCTION f() RETURNS STRING RETURN {{ accord_salt('env:X') }};",
            "databricks",
            "an expression is incomplete here",
            58,
            id="brace in a body",
        ),
        pytest.param(
            "CREATE MASKING POLICY p AS (v VARCHAR) RETURNS VARCHAR -> CASE WHEN THEN v END;",
            "snowflake",
            "a WHEN ... THEN branch is incomplete here",
            76,
            id="WHEN without a condition",
        ),
    ],
)
def test_parse_errors_speak_sql(sql: str, dialect: str, says: str, column: int) -> None:
    from accord.compiler.sqlscan import scan

    [error] = scan(sql, "f.sql", dialect).errors
    assert says in error.message and error.column == column
    assert "<class" not in error.message and "Required keyword" not in error.message


@pytest.mark.parametrize(
    ("args", "writes"),
    [
        pytest.param(["validate", "p"], False, id="validate"),
        pytest.param(["analyze", "p"], False, id="analyze"),
        pytest.param(["compile", "p", "--out", "out"], True, id="compile"),
    ],
)
def test_nothing_was_written_only_from_commands_that_write(
    tmp_path: Path, args: list[str], writes: bool
) -> None:
    write_files(tmp_path, {"p/a.yaml": "version: 1\nmasks: [\n"})
    run = run_cli([*args], cwd=tmp_path)
    assert run.returncode == 2
    assert ("nothing was written" in run.stderr) is writes
    assert "accord: accord" not in run.stderr


def test_usage_errors_are_never_prefixed_twice(tmp_path: Path) -> None:
    run = run_cli(["terraform", "plan", str(tmp_path)], cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.strip()
    assert "accord: accord" not in run.stderr
