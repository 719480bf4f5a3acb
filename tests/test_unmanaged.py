"""The ``unmanaged`` section (docs/policy-format.md, "Unmanaged objects"): what it names, how it
validates, lint reading its SQL where it is written, drift and plan leaving what it names alone
(:func:`targets.unmanaged.leave_alone`), analyze counting what it reaches as unknown."""

from __future__ import annotations

import json
import typing
from pathlib import Path

from sqlglot import exp

from accord.compiler.model.schema import UnmanagedKind
from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.coverage import Coverage
from accord.targets.inspect import LiveCatalog
from accord.targets.kinds import KINDS
from accord.targets.objects import Catalog, MaskAttachment, MaskPolicy, Param
from accord.targets.unmanaged import leave_alone
from tests.cli import run_cli
from tests.estates import write_files

BASE = {
    "platforms.yaml": """\
        version: 1
        platforms:
          snowflake: {governance_schema: GOV.POL}
        datasets:
          people:
            platform: snowflake
            table: HR.CORE.PEOPLE
            columns:
              EMAIL: {type: VARCHAR, mask: email}
        masks:
          email: {strategy: redact}
        """,
}

CONSOLE = """\
    unmanaged:
      console_mask:
        platform: snowflake
        kind: masking_policy
        name: GOV.POL.NOTES_MASK
        sql: |
          CREATE MASKING POLICY GOV.POL.NOTES_MASK AS (val VARCHAR) RETURNS VARCHAR ->
            CASE WHEN CURRENT_ROLE() IN ('HR') THEN val ELSE '***' END;
        why: decided by CURRENT_ROLE()
      console_notes:
        platform: snowflake
        kind: mask_attachment
        name: HR.CORE.PEOPLE.NOTES
        sql: "ALTER TABLE HR.CORE.PEOPLE MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.NOTES_MASK;"
        why: applies a policy the model does not express
    """


def estate(tmp_path: Path, unmanaged: str = CONSOLE) -> Path:
    return write_files(tmp_path / "p", {**BASE, "unmanaged.yaml": unmanaged})


def test_every_kind_has_the_keyword_an_entry_names_it_by() -> None:
    """Each kind's row says its keyword; the format's kinds are exactly those and
    ``statement`` (a kind added without one fails here)."""
    keywords = [k.keyword for k in KINDS.values()]
    assert all(keywords) and len(set(keywords)) == len(keywords)
    assert set(typing.get_args(UnmanagedKind)) == {*keywords, "statement"}


def test_an_entry_on_an_undeclared_platform_or_named_twice_is_invalid(tmp_path: Path) -> None:
    text = CONSOLE.rstrip(" ").replace(
        "        platform: snowflake\n        kind: mask_attachment",
        "        platform: databricks\n        kind: mask_attachment",
    )
    text += (
        "      again:\n"
        "        platform: snowflake\n"
        "        kind: masking_policy\n"
        "        name: gov.pol.notes_mask\n"
        '        sql: "SELECT 1;"\n'
        "        why: twice\n"
    )
    code, _, err = run_cli(["validate", str(estate(tmp_path, text))])
    assert code == 2, err
    assert "unmanaged.yaml:11:15: platform 'databricks' is not declared under platforms" in err
    assert "masking_policy gov.pol.notes_mask is also unmanaged entry 'console_mask'" in err


def test_a_model_without_the_section_fingerprints_as_before(tmp_path: Path) -> None:
    """Plans record the model's fingerprint: a model without ``unmanaged`` dumps without it."""
    project = load_project(write_files(tmp_path / "p", BASE))
    assert "unmanaged" not in project.model.model_dump()


def test_lint_reads_the_sql_where_the_yaml_holds_it(tmp_path: Path) -> None:
    """A block scalar line for line, a quoted scalar at its node; a suppression comment in the
    SQL works as in a SQL file."""
    d = estate(tmp_path)
    code, out, _ = run_cli(["lint", str(d), "--format", "json"])
    assert code == 1
    (f,) = json.loads(out)["findings"]
    lines = (d / "unmanaged.yaml").read_text().split("\n")
    at = next(
        (n + 1, line.index("CURRENT_ROLE") + 1)
        for n, line in enumerate(lines)
        if "CURRENT_ROLE" in line
    )
    assert (f["rule"], f["line"], f["column"]) == ("ACC101", *at)
    quoted = CONSOLE.replace(
        '"ALTER TABLE HR.CORE.PEOPLE MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.NOTES_MASK;"',
        '"CREATE MASKING POLICY GOV.POL.X AS (v VARCHAR) RETURNS VARCHAR -> MD5(v);"',
    )
    code, out, _ = run_cli(["lint", str(estate(tmp_path / "q", quoted)), "--format", "json"])
    at = {(f["rule"], f["line"], f["column"]) for f in json.loads(out)["findings"]}
    lines = (tmp_path / "q" / "p" / "unmanaged.yaml").read_text().split("\n")
    md5 = next((n + 1, line.index("MD5") + 1) for n, line in enumerate(lines) if "MD5" in line)
    assert ("ACC204", *md5) in at  # from the node of the quoted scalar, on its one line
    ignored = CONSOLE.replace(
        "          CREATE MASKING",
        "          -- accord: ignore ACC101 read by HR tooling only\n          CREATE MASKING",
    )
    code, out, _ = run_cli(["lint", str(estate(tmp_path / "r", ignored))])
    assert code == 0, out


def test_an_edit_of_the_sql_alone_is_linted_afresh(tmp_path: Path) -> None:
    """The dependency index knows the sections the policy rules read, not the SQL checks: an
    edit of an entry's SQL alone is linted again, never answered from an earlier run."""
    clean = CONSOLE.replace("CURRENT_ROLE() IN ('HR')", "IS_ROLE_IN_SESSION('HR')")
    d = estate(tmp_path, clean)
    code, out, _ = run_cli(["lint", str(d)])
    assert code == 0, out
    (d / "unmanaged.yaml").write_text(
        (d / "unmanaged.yaml")
        .read_text()
        .replace("IS_ROLE_IN_SESSION('HR')", "CURRENT_ROLE() IN ('HR')")
    )
    code, out, _ = run_cli(["lint", str(d)])
    assert code == 1 and "ACC101" in out


def test_an_edit_elsewhere_keeps_the_sql_findings(tmp_path: Path) -> None:
    """Incremental lint answers an edit that changes no rule's input (a plain column) without
    running the rules: the entries' SQL findings are never lost to it."""
    d = estate(tmp_path)
    assert run_cli(["lint", str(d)])[0] == 1
    for column in ("CITY", "REGION"):
        (d / "platforms.yaml").write_text(
            (d / "platforms.yaml")
            .read_text()
            .replace(
                "EMAIL: {type: VARCHAR, mask: email}",
                f"EMAIL: {{type: VARCHAR, mask: email}}\n      {column}: {{type: VARCHAR}}",
            )
        )
        code, out, _ = run_cli(["lint", str(d)])
        assert code == 1 and "ACC101" in out, out


def test_what_an_entry_names_is_left_alone_and_listed(tmp_path: Path) -> None:
    """The live objects an entry names are taken out of what drift and plan compare, and the
    coverage lists them; an entry naming what the model compiles takes nothing out."""
    project = load_project(estate(tmp_path))
    expected = lower_all(project)["snowflake"]
    console = MaskPolicy(
        "GOV.POL.NOTES_MASK", (Param("VAL", "VARCHAR"),), "VARCHAR", exp.Null(), "", "", ""
    )
    placed = MaskAttachment("HR.CORE.PEOPLE", "NOTES", "GOV.POL.NOTES_MASK", "")
    live = LiveCatalog(
        Catalog("snowflake", "GOV.POL", "column", (*expected.objects, console, placed))
    )
    live.coverage = Coverage("snowflake")
    left = leave_alone(project.model, expected, live)
    assert set(left.catalog.objects) == set(expected.objects)
    assert sorted(left.coverage.left_alone) == [
        "mask of HR.CORE.PEOPLE.NOTES (unmanaged entry 'console_notes')",
        "masking policy GOV.POL.NOTES_MASK (unmanaged entry 'console_mask')",
    ]
    stale = CONSOLE.replace("name: HR.CORE.PEOPLE.NOTES", "name: HR.CORE.PEOPLE.EMAIL")
    project = load_project(estate(tmp_path / "s", stale))
    mine = next(o for o in expected if isinstance(o, MaskAttachment))
    live = LiveCatalog(Catalog("snowflake", "GOV.POL", "column", (mine,)))
    live.coverage = Coverage("snowflake")
    assert leave_alone(project.model, expected, live).catalog.objects == (mine,)
    assert "which the model compiles" in live.coverage.notes[0]


def test_analyze_counts_what_an_entry_reaches_as_unknown(tmp_path: Path) -> None:
    code, out, _ = run_cli(["analyze", str(estate(tmp_path)), "--format", "json"])
    assert code == 0
    reached = {
        (r["entry"], r["table"], r["column"], r["dataset"], r["disposition"])
        for r in json.loads(out)["unmanaged"]
    }
    assert reached == {
        ("console_mask", "", None, None, "unknown"),
        ("console_notes", "HR.CORE.PEOPLE", "NOTES", "people", "unknown"),
    }
    code, out, _ = run_cli(["analyze", str(estate(tmp_path / "t"))])
    assert "2 unmanaged objects not judged (unknown)" in out


def test_a_statement_reaches_the_tables_its_sql_names(tmp_path: Path) -> None:
    view = """\
        unmanaged:
          hr_view:
            platform: snowflake
            kind: statement
            name: HR.CORE.PEOPLE_V
            sql: "ALTER TABLE HR.CORE.PEOPLE MODIFY COLUMN PHONE SET MASKING POLICY GOV.POL.P;"
            why: a console statement
        """
    code, out, _ = run_cli(["analyze", str(estate(tmp_path, view)), "--format", "json"])
    assert code == 0
    (r,) = json.loads(out)["unmanaged"]
    assert (r["kind"], r["table"], r["column"], r["dataset"]) == (
        "statement",
        "HR.CORE.PEOPLE",
        "PHONE",
        "people",
    )
