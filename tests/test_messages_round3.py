"""Messages that say what is wrong and what fixes it (issue 21, item 12): no empty ``[]`` in
text output, the nesting limit a deep body exceeds, the policy format versions that exist, an
indentation mistake told as one, and "did you mean" for a mistyped command-line choice."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from accord.compiler.cli import COMMANDS, cli
from accord.compiler.commands.options import Choice
from accord.compiler.sqlscan import scan
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import write_files

# --------------------------------------------------------------------------------------------
# text output: the object in brackets only when there is one

BAD_TEMPLATE = "{% macro m() %}\ncreate masking policy p as (v string) returns string -> v\n"
BAD_ROLE = (
    "CREATE MASKING POLICY gov.pol.email AS (val VARCHAR) RETURNS VARCHAR ->\n"
    "  CASE WHEN CURRENT_ROLE() = 'SUPPORT' THEN val ELSE '***' END;\n"
)


@pytest.mark.parametrize(
    ("name", "text", "header"),
    [
        ("macros/broken.sql", BAD_TEMPLATE, "1:1  error  ACC001 unanalysed-policy\n"),
        ("p.snowflake.sql", BAD_ROLE, "2:13  error  ACC101 current-role  [gov.pol.email]\n"),
    ],
    ids=["no object: no brackets", "an object: in brackets"],
)
def test_text_output_shows_brackets_only_around_an_object(
    tmp_path: Path, name: str, text: str, header: str
) -> None:
    write_files(tmp_path, {name: text})
    code, out, _ = run_cli(["lint", name], cwd=tmp_path)
    assert code == 1
    assert f"  {header}" in out
    assert "[]" not in out


# --------------------------------------------------------------------------------------------
# a body nested deeper than the parser follows


def _deep_policy(levels: int) -> str:
    body = "(" * levels + "'***'" + ")" * levels
    return (
        "CREATE MASKING POLICY gov.pol.deep AS (val VARCHAR) RETURNS VARCHAR ->\n"
        f"  CASE WHEN IS_ROLE_IN_SESSION('A') THEN val ELSE {body} END;\n"
    )


def test_a_body_too_deep_names_the_limit_it_exceeds() -> None:
    result = scan(_deep_policy(400), "deep.snowflake.sql", "snowflake")
    [error] = result.errors
    assert (error.line, error.column) == (1, 1)
    assert "401 levels deep" in error.message  # 400 parentheses and the CASE
    assert re.search(r"recursion limit \(\d+ nested calls\)", error.message)
    assert "does not recognise its syntax" not in error.message
    assert scan(_deep_policy(5), "ok.snowflake.sql", "snowflake").errors == ()


# --------------------------------------------------------------------------------------------
# policy YAML mistakes


@dataclass
class YamlCase:
    id: str
    file: str
    old: str
    new: str
    #: (line, column) of each error, and words each message must hold
    at: list[tuple[int, int]]
    says: list[str]
    never: list[str]


YAML_CASES = [
    YamlCase(
        "version 2 names the versions that exist",
        "platforms.yaml",
        "version: 1",
        "version: 2",
        [(23, 10)],
        ["version: 2 is not a version", "the versions that exist are: 1"],
        ["quote it"],
    ),
    YamlCase(
        "a mask's keys not indented under its name",
        "masks.yaml",
        '  free_text:\n    strategy: redact\n    replacement: "[redacted]"\n    unmasked_for:',
        '  free_text:\n  strategy: redact\n  replacement: "[redacted]"\n  unmasked_for:',
        [(34, 13), (35, 13), (36, 16), (37, 17)],
        ["a mask", "indent"],
        ["Input should be", "instance of"],
    ),
]


@pytest.mark.parametrize("case", YAML_CASES, ids=[c.id for c in YAML_CASES])
def test_policy_yaml_mistakes_say_the_fix(tmp_path: Path, case: YamlCase) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", policies)
    path = policies / case.file
    text = path.read_text()
    assert case.old in text
    path.write_text(text.replace(case.old, case.new, 1))
    code, _, err = run_cli(["validate", "policies"], cwd=tmp_path)
    assert code == 2
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith(f"policies/{case.file}:")]
    got = [tuple(int(n) for n in line.split(":")[1:3]) for line in lines]
    assert got == case.at, err
    for line in lines:
        for word in case.says:
            assert word in line, line
        for word in case.never:
            assert word not in line, line


def test_an_unindented_mask_key_names_the_mask_to_indent_it_under(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", policies)
    path = policies / "masks.yaml"
    case = YAML_CASES[1]
    path.write_text(path.read_text().replace(case.old, case.new, 1))
    _, _, err = run_cli(["validate", "policies"], cwd=tmp_path)
    assert "masks.free_text: a mask (with keys such as strategy" in err
    assert "indent them under 'free_text'" in err
    assert "masks.strategy: 'strategy' is a key of a mask" in err
    assert "indent it under the mask 'free_text'" in err


# --------------------------------------------------------------------------------------------
# a mistyped choice on the command line


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["lint", "--format", "jsn", "policies"], "json"),
        (["lint", "--dialect", "snowflak", "x.sql"], "snowflake"),
        (["probe", "--platform", "a2", "policies"], "a2a"),
        (["drift", "--platform", "snowfake", "policies"], "snowflake"),
        (["compile", "--target", "databrick", "policies"], "databricks"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_a_mistyped_choice_gets_did_you_mean(argv: list[str], meant: str) -> None:
    code, _, err = run_cli(argv, cwd=ROOT)
    assert code == 2
    assert f"did you mean {meant!r}?" in err
    assert "Traceback" not in err


def test_a_choice_nothing_resembles_lists_the_choices() -> None:
    code, _, err = run_cli(["lint", "--format", "xml", "policies"], cwd=ROOT)
    assert code == 2
    assert "'xml' is not one of 'text', 'json', 'sarif', 'github'" in err
    assert "did you mean" not in err


def test_every_choice_option_of_every_command_suggests() -> None:
    """One implementation for all commands: every choice parameter is options.Choice."""
    ctx = click.Context(cli)
    seen = 0
    for name in COMMANDS:
        command = cli.get_command(ctx, name)  # type: ignore[attr-defined]
        assert command is not None
        commands = [command]
        if isinstance(command, click.Group):
            commands += [command.get_command(ctx, sub) for sub in command.list_commands(ctx)]
        for cmd in commands:
            for param in cmd.params:  # type: ignore[union-attr]
                if isinstance(param.type, click.Choice):
                    seen += 1
                    assert isinstance(param.type, Choice), (name, param.name)
    assert seen >= 10
