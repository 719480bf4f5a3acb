"""The table of common column types (``compiler.model.typenames``) answers what sqlglot answers, and
what it saves: validating policy files imports no sqlglot, linting them imports no sqlscan."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from sqlglot import exp

from accord.compiler.model import types as sqltypes
from accord.compiler.model.typenames import KNOWN, lookup
from tests.conftest import ROOT

#: parameters each arity is tried with (lengths, precisions and scales at their edges)
PARAMS = {
    0: [()],
    1: [(0,), (1,), (17,), (38,), (255,), (16777216,)],
    2: [(1, 0), (10, 2), (38, 0), (38, 37)],
}


def _spellings(name: str, params: tuple[int, ...]) -> list[str]:
    out = []
    for written in (name, name.lower(), name.capitalize()):
        if not params:
            out.append(written)
        else:
            out.append(f"{written}({','.join(map(str, params))})")
            out.append(f"{written}({', '.join(map(str, params))})")
    return out


def _sqlglot(text: str, platform: str) -> tuple[str, bool] | None:
    """What the table stands for: sqlglot's own answer."""
    sqltypes.parse_type.cache_clear()
    dtype = sqltypes.parse_type(text, platform)
    if dtype is None:
        return None
    return dtype.sql(platform), dtype.is_type(*exp.DataType.TEXT_TYPES)


@pytest.mark.parametrize(("platform", "name", "arity"), sorted(KNOWN))
def test_every_entry_is_what_sqlglot_says(platform: str, name: str, arity: int) -> None:
    for params in PARAMS[arity]:
        for text in _spellings(name, params):
            assert lookup(text, platform) == _sqlglot(text, platform), text


@pytest.mark.parametrize(
    ("text", "platform"),
    [
        ("VARCHAR (10)", "snowflake"),  # a space before the parameters
        ("NUMBER( 10, 2)", "snowflake"),
        ("NUMBER(010)", "snowflake"),  # a leading zero
        ("NUMBER(1,2,3)", "snowflake"),
        ("NUMBER(10,  2)", "snowflake"),
        ("BOOLEAN(1)", "snowflake"),  # an arity the table does not hold
        ("ARRAY<STRING>", "databricks"),
        ("STRUCT<a: INT>", "databricks"),
        ("NOT_A_TYPE", "snowflake"),
        ("VARCHAR ", "snowflake"),
        (" VARCHAR", "snowflake"),
        ("", "snowflake"),
    ],
)
def test_anything_else_goes_to_sqlglot(text: str, platform: str) -> None:
    assert lookup(text, platform) is None
    # and the public answers are sqlglot's either way
    answer = _sqlglot(text, platform)
    assert sqltypes.is_type(text, platform) == (answer is not None)
    assert sqltypes.is_string(text, platform) == (answer is not None and answer[1])


@pytest.mark.parametrize(("platform", "name", "arity"), sorted(KNOWN))
def test_public_answers_from_the_table(platform: str, name: str, arity: int) -> None:
    text = name + {0: "", 1: "(12)", 2: "(12, 4)"}[arity]
    dtype = sqltypes.parse_type(text, platform)
    assert dtype is not None and sqltypes.is_type(text, platform)
    string = dtype.is_type(*exp.DataType.TEXT_TYPES)
    assert sqltypes.is_string(text, platform) == string
    assert sqltypes.render_type(text, platform) == dtype.sql(platform)
    policy = ("VARCHAR" if platform == "snowflake" else "STRING") if string else dtype.sql(platform)
    assert sqltypes.policy_type(text, platform) == policy


def _imported(argv: list[str], prefixes: tuple[str, ...]) -> list[str]:
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in sys.modules if m.startswith({prefixes!r})))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return ast.literal_eval(run.stdout.strip().splitlines()[-1])


def test_validate_imports_no_sqlglot() -> None:
    assert _imported(["validate", "policies"], ("sqlglot",)) == []


def test_lint_of_policy_files_imports_no_sqlscan() -> None:
    assert _imported(["lint", "--no-cache", "policies"], ("accord.compiler.sqlscan",)) == []
    # the SQL path does (so the check above can fail)
    sql = sorted(str(p) for p in (ROOT / "examples").rglob("*.sql"))[:1]
    assert sql and _imported(["lint", "--no-cache", *sql], ("accord.compiler.sqlscan",))
