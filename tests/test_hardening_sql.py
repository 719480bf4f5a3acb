"""Hardening, what reaches SQL (issue 14, items 10-12): hand-written row-filter expressions
are checked (boolean, reading only their arguments, with types the platform has); names the
platforms reserve are quoted from their documented lists, names over 255 characters refused;
literals holding line and paragraph separators come out byte for byte. Table-driven: exit
code, located message, no traceback, nothing written; compiled SQL parsed back."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.model.validate import load_project
from accord.targets import sql
from accord.targets.render import render_files
from accord.targets.reserved import DATABRICKS, SNOWFLAKE
from tests.cli import run_cli
from tests.conftest import ROOT

AS_FOUND = ROOT / "examples/as-found"
EXPRESSION = (
    "PROGRAMME_CODE IN (SELECT g.PROGRAMME_CODE FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS g "
    "WHERE g.ROLE_NAME = CURRENT_ROLE())"
)


def _estate(tmp_path: Path, source: Path, edits: dict[str, Callable[[str], str]]) -> Path:
    target = tmp_path / "policies"
    shutil.copytree(source, target)
    for name, edit in edits.items():
        path = target / name
        changed = edit(path.read_text(encoding="utf-8"))
        assert changed != path.read_text(encoding="utf-8"), f"the edit of {name} changed nothing"
        path.write_text(changed, encoding="utf-8")
    return target


def _refused(code: int, out: str, err: str, where: str, message: str) -> None:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err and "internal error" not in err
    assert re.search(where, err), err
    assert message in err, err


# --------------------------------------------------------------------------------------------
# 10. hand-written expressions are checked


def _expression(text: str, arguments: str = "{PROGRAMME_CODE: VARCHAR}") -> Callable[[str], str]:
    def edit(yaml_text: str) -> str:
        return yaml_text.replace(json.dumps(EXPRESSION), json.dumps(text)).replace(
            "arguments: {PROGRAMME_CODE: VARCHAR}", f"arguments: {arguments}"
        )

    return edit


EXPRESSIONS = [
    # (case, edit of datasets.yaml, location, message)
    (
        "a-bare-column",
        _expression("PROGRAMME_CODE"),
        r":25:\d+: ",
        "is not a predicate: it returns VARCHAR",
    ),
    ("a-string", _expression("'ONC-101'"), r":25:\d+: ", "is not a predicate: it returns VARCHAR"),
    (
        "a-number",
        _expression("PROGRAMME_CODE_LEN + 1", "{PROGRAMME_CODE_LEN: NUMBER}"),
        r":25:\d+: ",
        "returns",
    ),
    (
        "an-undeclared-column",
        _expression("REGION = 'EU'"),
        r":25:\d+: ",
        "reads column REGION, which is not in 'arguments'",
    ),
    (
        "an-undeclared-column-in-a-subquery",
        _expression(
            "EXISTS (SELECT 1 FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS g WHERE g.PROGRAMME_CODE = "
            "SITE_CODE)"
        ),
        r":25:\d+: ",
        "reads column SITE_CODE",
    ),
    (
        "a-type-snowflake-lacks",
        _expression("PROGRAMME_CODE IS NOT NULL", "{PROGRAMME_CODE: UUID}"),
        r":26:\d+: ",
        "UUID is not a snowflake data type",
    ),
    (
        "money",
        _expression("PROGRAMME_CODE IS NOT NULL", "{PROGRAMME_CODE: MONEY}"),
        r":26:\d+: ",
        "is not a snowflake data type",
    ),
]


@pytest.mark.parametrize(
    "edit,where,message", [c[1:] for c in EXPRESSIONS], ids=[c[0] for c in EXPRESSIONS]
)
def test_a_hand_written_expression_is_checked(
    tmp_path: Path, edit: Callable[[str], str], where: str, message: str
) -> None:
    policies = _estate(tmp_path, AS_FOUND, {"datasets.yaml": edit})
    out = tmp_path / "out"
    for argv in (["validate", str(policies)], ["compile", str(policies), "--out", str(out)]):
        code, stdout, err = run_cli(argv)
        _refused(code, stdout, err, "datasets.yaml" + where, message)
    assert not out.exists()


def test_a_well_formed_expression_still_passes() -> None:
    code, _, err = run_cli(["validate", str(AS_FOUND)])
    assert code == 0, err


# --------------------------------------------------------------------------------------------
# 11. reserved words and long names


RESERVED_COLUMNS = [
    "CHECK",
    "CURRENT",
    "ORGANIZATION",
    "ACCOUNT",
    "CAST",
    "CONNECTION",
    "FOLLOWING",
    "INCREMENT",
    "ISSUE",
    "OF",
    "START",
    "TRY_CAST",
    "WHENEVER",
    "GSCLUSTER",
    "qualify",
]


def test_reserved_words_are_quoted_in_every_attachment(tmp_path: Path) -> None:
    columns = "".join(f"      {w}: {{type: VARCHAR, mask: free_text}}\n" for w in RESERVED_COLUMNS)
    policies = _estate(
        tmp_path,
        ROOT / "policies",
        {
            "datasets.yaml": lambda t: t.replace(
                "      NOTES: {type: VARCHAR, mask: free_text}\n",
                "      NOTES: {type: VARCHAR, mask: free_text}\n" + columns,
                1,
            )
        },
    )
    files = render_files(load_project(policies), "snowflake")
    attachments = files["snowflake/050_attachments.sql"]
    for word in RESERVED_COLUMNS:
        assert f'MODIFY COLUMN "{word.upper()}" SET MASKING POLICY' in attachments, word
    # and each statement reads back naming that column
    for statement in sqlglot.parse(attachments, read="snowflake"):
        assert statement is not None


@pytest.mark.parametrize("platform,words", [("snowflake", SNOWFLAKE), ("databricks", DATABRICKS)])
def test_every_documented_reserved_word_is_quoted(platform: str, words: frozenset[str]) -> None:
    for word in sorted(words):
        node = sql.ident(word, platform)
        assert node.args.get("quoted"), word
        # a quoted reserved word reads back as that one identifier
        tree = sqlglot.parse_one(f"SELECT {node.sql(platform)} FROM t", read=platform)
        assert isinstance(tree, exp.Select) and tree.expressions[0].name.upper() == word


LONG = "A" * 256
LONG_NAMES = [
    ("column", "datasets.yaml", lambda t: t.replace("      NOTES: {", f"      {LONG}: {{", 1)),
    (
        "table",
        "datasets.yaml",
        lambda t: t.replace("DISCOVERY.ASSAYS.RESULTS", f"DISCOVERY.ASSAYS.{LONG}", 1),
    ),
    (
        "role",
        "principals.yaml",
        lambda t: t.replace("snowflake: BENCH_CHEMIST", f"snowflake: {LONG}"),
    ),
]


@pytest.mark.parametrize("name,edit", [c[1:] for c in LONG_NAMES], ids=[c[0] for c in LONG_NAMES])
def test_a_name_over_255_characters_is_refused(
    tmp_path: Path, name: str, edit: Callable[[str], str]
) -> None:
    policies = _estate(tmp_path, ROOT / "policies", {name: edit})
    out = tmp_path / "out"
    code, stdout, err = run_cli(["compile", str(policies), "--out", str(out)])
    _refused(code, stdout, err, name + r":\d+:\d+: ", "accept at most 255")
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# 12. literals byte for byte

SEPARATORS = "A\u2028B\u2029C\x85D"


def _literals(text: str, platform: str) -> set[str]:
    return {
        lit.this
        for statement in sqlglot.parse(text, read=platform)
        if statement is not None
        for lit in statement.find_all(exp.Literal)
        if lit.is_string
    }


def test_line_and_paragraph_separators_come_out_byte_for_byte(tmp_path: Path) -> None:
    policies = _estate(
        tmp_path,
        ROOT / "policies",
        {
            "entitlements.yaml": lambda t: t.replace(
                "    IMM-310: [bench_chemist]",
                '    IMM-310: [bench_chemist]\n    "A\\LB\\PC\\ND": [bench_chemist]',
            ),
            "masks.yaml": lambda t: t.replace(
                'replacement: "[redacted]"', 'replacement: "A\\LB\\PC\\ND"'
            ),
        },
    )
    out = tmp_path / "out"
    code, _, err = run_cli(["compile", str(policies), "--out", str(out)])
    assert code == 0, err
    for platform in ("snowflake", "databricks"):
        grants = (out / platform / "010_mapping_tables.sql").read_text(encoding="utf-8")
        assert SEPARATORS in _literals(grants, platform), platform
        mask_files = sorted((out / platform).glob("040_*.sql"))
        assert mask_files
        # the policy DDL is not sqlglot's to parse: the literal, quotes included, byte for byte
        assert f"'{SEPARATORS}'" in mask_files[0].read_text(encoding="utf-8"), platform
    # and the plan that introduces them holds them the same way
    plans = tmp_path / "migrations"
    code, _, err = run_cli(
        ["plan", str(policies), "--base", f"dir:{ROOT / 'policies'}", "--out", str(plans)]
    )
    assert code == 0, err
    stage_text = "".join(p.read_text(encoding="utf-8") for p in sorted(plans.rglob("*.sql")))
    assert SEPARATORS in stage_text
