"""``accord lint``, ``accord rules`` and the compile gate, from the command line: formats,
exit codes, located errors for bad input, and no heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from accord.compiler.lint import engine
from accord.compiler.lint.checks import REGISTRY, Context, History, RegisteredRule
from accord.compiler.lint.engine import registered_rules
from accord.compiler.lint.finding import Finding
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import LINT_BASE, edited, write_estate

AS_FOUND = "examples/as-found"
HEART = [
    "examples/sql/heart-of-problem/lakehouse.databricks.sql",
    "examples/sql/heart-of-problem/warehouse.snowflake.sql",
]


def test_reference_estate_prints_only_the_clean_summary() -> None:
    run = run_cli(["lint", "policies"])
    assert run.returncode == 0, run.stderr
    assert run.stdout == "accord lint: no findings in 7 files\n"
    assert run.stderr == ""


def test_default_path_is_policies() -> None:
    assert run_cli(["lint"]).stdout == "accord lint: no findings in 7 files\n"


def test_as_found_text_report() -> None:
    run = run_cli(["lint", AS_FOUND])
    assert run.returncode == 1
    out = run.stdout
    assert out.splitlines()[0] == "examples/as-found/datasets.yaml"
    assert "  25:128  error  ACC101 current-role  [datasets.assay_results]" in out
    # the source line, and a marker under the column
    lines = out.splitlines()
    i = lines.index("    20 |   subject_pseudonym:")
    assert lines[i + 1] == "       |   ^"
    assert "fix: " in out
    assert out.rstrip().endswith("accord lint: 21 errors, 0 warnings in 7 files")
    assert "\x1b[" not in out  # no colour off a terminal


def test_json_shape_exactly_as_the_cli_spec() -> None:
    run = run_cli(["lint", AS_FOUND, "--format", "json"])
    assert run.returncode == 1
    doc = json.loads(run.stdout)
    assert set(doc) == {"findings", "summary"}
    assert doc["summary"] == {"error": 21, "warning": 0, "suppressed": 0}
    keys = ["rule", "name", "severity", "file", "line", "column", "object", "message", "fix"]
    for f in doc["findings"]:
        assert list(f) == keys
        assert f["file"].startswith("examples/as-found/")
    assert {f["rule"] for f in doc["findings"]} == {
        "ACC101",
        "ACC201",
        "ACC203",
        "ACC301",
        "ACC401",
        "ACC402",
        "ACC403",
        "ACC404",
    }


def test_json_file_is_the_given_path_joined(tmp_path: Path) -> None:
    write_estate(
        tmp_path / "estate" / "sub",
        edited(LINT_BASE, {"masks": {"subject": {"salt": None}}}),
        split=True,
    )
    run = run_cli(["lint", "estate", "--format", "json"], cwd=tmp_path)
    files = {f["file"] for f in json.loads(run.stdout)["findings"]}
    assert files == {"estate/sub/masks.yaml"}


def test_sarif_validates_against_the_2_1_0_schema() -> None:
    run = run_cli(["lint", AS_FOUND, *HEART, "--format", "sarif"])
    assert run.returncode == 1
    doc = json.loads(run.stdout)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(doc)
    (run_,) = doc["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in registered_rules()]
    for r in rules:
        assert r["name"] and r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert "## How to fix" in r["help"]["markdown"]
    results = run_["results"]
    assert len(results) == 24
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error"
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    joined = [r for r in results if r["ruleId"] == "ACC203" and "relatedLocations" in r]
    assert len(joined) == 1


def test_github_annotations() -> None:
    run = run_cli(["lint", *HEART, "--format", "github"])
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(
        "::error file=examples/sql/heart-of-problem/lakehouse.databricks.sql,line=49,col=10,"
        "title=ACC201 unsalted-hash::"
    )
    assert all("\n" not in line and "%0AFix%3A" not in line for line in lines)
    assert all("%0AFix: " in line for line in lines)


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warning", 1), ("never", 0)])
def test_fail_on_with_a_warning_only(tmp_path: Path, fail_on: str, code: int) -> None:
    write_estate(
        tmp_path / "p", edited(LINT_BASE, {"masks": {"phone": {"strategy": "nullify"}}}), split=True
    )
    run = run_cli(["lint", str(tmp_path / "p"), "--fail-on", fail_on])
    assert run.returncode == code
    assert "ACC503 unused" in run.stdout
    assert "0 errors, 1 warning" in run.stdout


def test_fail_on_never_with_errors() -> None:
    assert run_cli(["lint", AS_FOUND, "--fail-on", "never"]).returncode == 0


def test_suppressed_findings_counted_and_listed_on_demand(tmp_path: Path) -> None:
    patch = {
        "indexes": {
            "search": {
                "platform": "snowflake",
                "kind": "cortex_search",
                "source": "customers",
                "columns": ["REGION"],
                "ignore": {"ACC301": "public abstracts only"},
            }
        }
    }
    write_estate(tmp_path / "p", edited(LINT_BASE, patch), split=True)
    run = run_cli(["lint", str(tmp_path / "p")])
    assert run.returncode == 0
    assert run.stdout.strip().endswith("no findings in 9 files (1 suppressed)")
    assert "ACC301" not in run.stdout
    shown = run_cli(["lint", str(tmp_path / "p"), "--show-suppressed"])
    assert "suppressed error  ACC301" in shown.stdout and "public abstracts only" in shown.stdout
    doc = json.loads(run_cli(["lint", str(tmp_path / "p"), "--format", "json"]).stdout)
    assert doc == {"findings": [], "summary": {"error": 0, "warning": 0, "suppressed": 1}}


def test_yaml_files_of_one_project(tmp_path: Path) -> None:
    root = write_estate(
        tmp_path / "p", edited(LINT_BASE, {"masks": {"subject": {"salt": None}}}), split=True
    )
    files = sorted(str(p) for p in root.glob("*.yaml"))
    run = run_cli(["lint", *files, "--format", "json"])
    assert run.returncode == 1
    assert {f["rule"] for f in json.loads(run.stdout)["findings"]} == {"ACC201", "ACC203"}


@pytest.mark.parametrize(
    ("name", "flag", "found"),
    [
        ("mask.sql", [], ["ACC101"]),  # from the statements: MASKING POLICY -> snowflake
        ("mask.databricks.sql", [], []),  # the suffix wins: read as Databricks
        ("mask.sql", ["--dialect", "databricks"], []),  # the option wins over the statements
        ("mask.databricks.sql", ["--dialect", "snowflake"], ["ACC101"]),  # ... and the suffix
    ],
)
def test_dialect_detection(tmp_path: Path, name: str, flag: list[str], found: list[str]) -> None:
    (tmp_path / name).write_text(
        "CREATE MASKING POLICY p AS (val VARCHAR) RETURNS VARCHAR ->\n"
        "  CASE WHEN CURRENT_ROLE() = 'A' THEN val ELSE '*' END;\n"
    )
    run = run_cli(["lint", name, *flag, "--format", "json"], cwd=tmp_path)
    assert [f["rule"] for f in json.loads(run.stdout)["findings"]] == found
    assert run.returncode == (1 if found else 0)


@pytest.mark.parametrize(
    ("files", "args", "message"),
    [
        ({}, ["missing-dir"], "missing-dir: no such file or directory"),
        ({"notes.txt": "hi"}, ["notes.txt"], "not a policy directory"),
        ({"p/a.yaml": "version: 1\nmasks: [\n"}, ["p"], "p/a.yaml:3:1: invalid YAML"),
        (
            {"p/a.yaml": "version: 1\nmasks:\n  m: {strategy: hash, ignore: {ACC999: x}}\n"},
            ["p"],
            "p/a.yaml:3:32: masks.m.ignore.ACC999: unknown rule id 'ACC999'",
        ),
        (
            {"p/a.yaml": "version: 1\nmasks:\n  m: {strategy: hash, ignore: {ACC201: ''}}\n"},
            ["p"],
            "p/a.yaml:3:40: masks.m.ignore.ACC201: a suppression needs a non-empty reason",
        ),
        (
            {"x.sql": "-- accord: ignore ACC777 why\nSELECT 1;\n"},
            ["x.sql", "--dialect", "snowflake"],
            "x.sql:1:1: suppression names unknown rule ACC777",
        ),
        ({"b.sql": b"SELECT '\xff';\n"}, ["b.sql"], "b.sql:1:9: file is not valid UTF-8"),
    ],
)
def test_bad_input_is_located_exit_2(
    tmp_path: Path, files: dict[str, str | bytes], args: list[str], message: str
) -> None:
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    run = run_cli(["lint", *args], cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert "nothing was written" not in run.stderr  # lint writes nothing anyway


def test_plans_and_ledger_reach_the_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plans").mkdir()
    (tmp_path / "ledger.json").write_text("{}")
    seen: list[History] = []

    def capture(ctx: Context) -> list[Finding]:
        seen.append(ctx.history)
        return []

    engine.load_rules()
    monkeypatch.setitem(REGISTRY, "ACC601", [RegisteredRule("ACC601", capture, "", "policy")])
    args = [
        "lint",
        str(ROOT / "policies"),
        "--plans",
        str(tmp_path / "plans"),
        "--ledger",
        str(tmp_path / "ledger.json"),
    ]
    code, out, err = run_cli(args)
    assert code in (0, 1) and "internal error" not in err, out + err
    assert seen == [History(plans=str(tmp_path / "plans"), ledger=str(tmp_path / "ledger.json"))]


def test_lint_imports_no_heavy_client() -> None:
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "for args in (['lint', 'examples/as-found'], ['lint', *sys.argv[1:]]):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('duckdb', 'snowflake', 'databricks', 'python_terraform', 'terraform', 'regorus',\n"
        "         'rich')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *HEART], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stderr


def test_rules_command_lists_every_registered_rule() -> None:
    run = run_cli(["rules"])
    assert run.returncode == 0
    ids = [line.split()[0] for line in run.stdout.splitlines()]
    assert ids == [r.id for r in registered_rules()]
    page = run_cli(["rules", "acc205"])
    assert page.stdout.startswith("ACC205 literal-salt (error; sql)")
    assert "## Why is this bad?" in page.stdout
    assert run_cli(["rules", "ACC000"]).returncode == 2


def test_compile_refuses_with_the_text_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = run_cli(["compile", AS_FOUND, "--out", str(out)])
    assert run.returncode == 1
    assert not out.exists()
    assert "examples/as-found/masks.yaml\n  20:3  error  ACC201 unsalted-hash" in run.stderr
    assert "    20 |   subject_pseudonym:" in run.stderr
    assert run.stderr.rstrip().endswith("nothing was written")


def test_compile_writes_the_clean_estate(tmp_path: Path) -> None:
    run = run_cli(["compile", "policies", "--out", str(tmp_path / "out")])
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "manifest.json").exists()


def test_pre_commit_hooks_lint_the_whole_policy_directory() -> None:
    import re

    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    policy = hooks["accord-lint"]
    assert policy["entry"] == "accord lint" and policy["language"] == "python"
    assert policy["pass_filenames"] is False and policy["args"] == ["policies"]
    pattern = re.compile(policy["files"])
    assert all(pattern.search(f) for f in ("policies/masks.yaml", "p/x.yml", "sql/a.sql"))
    assert not pattern.search("README.md")
    sql = hooks["accord-lint-sql"]
    assert sql["entry"] == "accord lint" and re.compile(sql["files"]).search("a.snowflake.sql")
    assert sql.get("pass_filenames", True) is True


@pytest.mark.parametrize("color", [True, False])
def test_colour_only_when_asked(color: bool) -> None:
    from accord.compiler.lint.engine import lint_project
    from accord.compiler.lint.report import render_text
    from accord.compiler.model.validate import load_project

    findings = lint_project(load_project(ROOT / AS_FOUND))
    text = render_text(findings, files=7, color=color)
    assert ("\x1b[" in text) is color
    assert text.rstrip().endswith("accord lint: 21 errors, 0 warnings in 7 files")
