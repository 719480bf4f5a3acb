"""Lint of SQL that is not simply a file of SQL text: policy DDL a Python notebook builds at
run time and passes to ``spark.sql`` (issue 21, item 5), and files that are not UTF-8 text
(issue 21, item 6). Never a silent pass.

The notebooks imitate public Databricks notebook exports (``# Databricks notebook source``,
``# COMMAND ----------``): Unity Catalog setup notebooks that build row filters with
``spark.sql`` from widget values (an implicitly concatenated f-string naming
``{schema_name}``, a list of ``CREATE FUNCTION`` statements run in a loop with ``.format``),
and the Databricks documentation's row filter and column mask examples; none is copied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accord.compiler.lint.engine import lint_sql_batch
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.inputs.sqlfiles import read_sql_files
from accord.compiler.lint.sources import source_line
from tests.cli import run_cli
from tests.estates import write_files

HEADER = "# Databricks notebook source\n"
CELL = "\n# COMMAND ----------\n\n"
WIDGETS = 'catalog = dbutils.widgets.get("catalog")\nschema = "sec"\n'


@dataclass
class Case:
    id: str
    notebook: str
    #: (line, rule, text the finding's line holds) for every finding, in order
    at: list[tuple[int, str, str]]
    #: words each ACC001 message must contain
    says: list[str] = field(default_factory=list)
    #: the text is at the finding's column (else only on its line: a hole's SQL substituted)
    exact: bool = True


def nb(*cells: str) -> str:
    return HEADER + CELL.join(cells)


CASES = [
    Case(
        "a name assigned a triple-quoted DDL string, passed to spark.sql",
        nb(
            WIDGETS,
            'ddl = """\nCREATE OR REPLACE FUNCTION main.sec.region_filter(region STRING)\n'
            "RETURN is_member('admins') OR region = 'EU'\n\"\"\"\nspark.sql(ddl)\n",
        ),
        [(9, "ACC102", "is_member('admins')")],
    ),
    Case(
        "an f-string assigned to a name; its holes are names or the constants they name",
        nb(
            WIDGETS,
            'mask = f"CREATE OR REPLACE FUNCTION {catalog}.{schema}.ssn_mask(ssn STRING) '
            "RETURN CASE WHEN is_member('hr') THEN ssn ELSE sha1(ssn) END\"\nspark.sql(mask)\n",
        ),
        [(7, "ACC102", "is_member('hr')"), (7, "ACC201", "sha1"), (7, "ACC204", "sha1")],
    ),
    Case(
        "a direct f-string whose hole names a constant body",
        nb(
            WIDGETS,
            "body = \"CASE WHEN is_member('pii') THEN email ELSE '***' END\"\n"
            'spark.sql(f"CREATE OR REPLACE FUNCTION {catalog}.sec.email_mask(email STRING) '
            'RETURN {body}")\n',
        ),
        [(8, "ACC102", 'spark.sql(f"CREATE')],  # at the f-string, the body's name beside
        exact=False,
    ),
    Case(
        "implicit concatenation of plain and f-strings, a name built from widgets",
        nb(
            'catalog_prefix = dbutils.widgets.get("env_catalog_identifier")\n'
            'schema_name = f"{catalog_prefix}gold.governance"\n',
            "spark.sql(\n"
            '    "CREATE FUNCTION IF NOT EXISTS "\n'
            '    f"{schema_name}.fx_row_filter_license (license STRING) "\n'
            '    "RETURNS BOOLEAN RETURN ("\n'
            "    \"IS_ACCOUNT_GROUP_MEMBER('admins') OR \"\n"
            '    "is_member(license))"\n'
            ")\n",
        ),
        [(12, "ACC102", "is_member(license)")],
    ),
    Case(
        "+ of a .format(...) string and a constant, across cells",
        nb(
            WIDGETS,
            'base = "CREATE OR REPLACE FUNCTION {cat}.sec.email_mask(email STRING) "',
            "spark.sql(base.format(cat=catalog) + "
            "\"RETURN CASE WHEN is_member('pii') THEN email ELSE '***' END\")\n",
        ),
        [(10, "ACC102", "is_member('pii')")],
    ),
    Case(
        "% formatting, sqlContext.sql, a name reassigned at the top level (the latest wins)",
        nb(
            WIDGETS,
            "q = \"CREATE OR REPLACE FUNCTION %s.sec.f(r STRING) RETURN is_account_group_member('x')\""
            " % catalog\nsqlContext.sql(q)\n"
            "q = \"CREATE OR REPLACE FUNCTION %s.sec.g(r STRING) RETURN is_member('x')\" % catalog\n"
            "sqlContext.sql(q)\n",
        ),
        [(9, "ACC102", "is_member('x')")],
    ),
    Case(
        "sqlQuery= keyword, textwrap.dedent of a triple-quoted name, % with a mapping",
        nb(
            "import textwrap\n"
            'filter_ddl = """\n'
            "    CREATE OR REPLACE FUNCTION %(cat)s.sec.region_filter(region STRING)\n"
            "    RETURN is_member('emea') OR region = 'EU'\n"
            '"""\n'
            'spark.sql(sqlQuery=textwrap.dedent(filter_ddl % {"cat": catalog}).strip())\n'
        ),
        [(5, "ACC102", "is_member('emea')")],
        exact=False,  # dedent moves columns: the line is kept
    ),
    Case(
        "a name rebound in a function: not followed, ACC001",
        nb(
            "ddl = \"CREATE OR REPLACE FUNCTION main.sec.f(r STRING) RETURN is_member('x')\"\n"
            "def rebuild(c):\n"
            "    global ddl\n"
            '    ddl = ddl.replace("main", c)\n'
            "rebuild(catalog)\nspark.sql(ddl)\n"
        ),
        [(7, "ACC001", "ddl)")],
        ["`ddl` is also bound"],
    ),
    Case(
        "a cell nested too deeply for Python's parser: ACC001, no crash",
        HEADER
        + "x = "
        + " + ".join(['"a"'] * 3000)
        + "\nspark.sql(\"CREATE FUNCTION main.sec.f(x INT) RETURN is_member('a')\")\n",
        [(1, "ACC001", HEADER.strip())],
        ["nests too deeply"],
    ),
    Case(
        "a query variable that is not policy DDL: read, no finding",
        nb('q = "SELECT * FROM main.hr.employees"\ndisplay(spark.sql(q))\n'),
        [],
    ),
    Case(
        "a statement built in a loop over a list of DDL: ACC001, never silence",
        nb(
            WIDGETS,
            "ROW_FILTERS = [\n"
            "    \"CREATE OR REPLACE FUNCTION {c}.sec.f_{t} (r STRING) RETURN is_member('x')\",\n"
            "]\n"
            "for stmt in ROW_FILTERS:\n"
            "    spark.sql(stmt.format(c=catalog, t='a'))\n",
        ),
        [(11, "ACC001", "stmt.format(c=catalog")],
        ["cannot be resolved without running the notebook", "`stmt`"],
    ),
    Case(
        "DDL assigned inside a loop, read by a session's .sql: ACC001",
        nb(
            "session = SparkSession.builder.getOrCreate()\n"
            "for t in tables:\n"
            '    ddl = f"ALTER TABLE main.hr.{t} SET ROW FILTER main.sec.f ON (region)"\n'
            "    session.sql(ddl)\n"
        ),
        [(5, "ACC001", "ddl)")],
        ["`ddl` is assigned only in a loop"],
    ),
    Case(
        "DDL from a function's result: ACC001",
        nb(
            "def mask_ddl(col):\n"
            '    return f"CREATE FUNCTION main.sec.{col}_mask(v STRING) RETURN v"\n'
            "ddl = mask_ddl('ssn')\nspark.sql(ddl)\n"
        ),
        [(5, "ACC001", "ddl)")],
        ["computed at run time"],
    ),
    Case(
        "a function of another module: nothing in the notebook to read",
        nb("from governance import build\nspark.sql(build(catalog))\n"),
        [],
    ),
]


def _lint(root: Path, names: list[str]) -> list[Finding]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        results, problems = read_sql_files(names, None)
        findings, bad = lint_sql_batch(results)
        assert problems == bad == []
        return findings
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_policy_ddl_built_at_run_time(tmp_path: Path, case: Case) -> None:
    write_files(tmp_path, {"setup.py": case.notebook.encode()})
    findings = _lint(tmp_path, ["setup.py"])
    got = [(f.location.line, f.rule) for f in findings]
    assert got == [(line, rule) for line, rule, _ in case.at], [
        (f.location.line, f.rule, f.message) for f in findings
    ]
    for f, (_, _, text) in zip(findings, case.at, strict=True):
        line = source_line(str(tmp_path / "setup.py"), f.location.line)
        assert line is not None and text in line, (line, text)
        if case.exact:
            assert line[f.location.column - 1 :].startswith(text), (line, f.location.column)
        assert "__j" not in f.message + f.object
        if f.rule == "ACC001":
            for word in case.says:
                assert word in f.message, f.message


# --------------------------------------------------------------------------------------------
# files that are not UTF-8 text: exit 2 at the first bad byte, for every kind of SQL input

#: a Snowflake masking policy that ACC101 flags, so a silent pass cannot look clean by luck
POLICY_SF = (
    "CREATE MASKING POLICY gov.pol.email AS (val STRING) RETURNS STRING ->\n"
    "  CASE WHEN CURRENT_ROLE() = 'PII' THEN val ELSE '***' END;\n"
)
POLICY_DBX = (
    "CREATE OR REPLACE FUNCTION main.sec.ssn_mask(ssn STRING)\n"
    "RETURN CASE WHEN is_member('hr') THEN ssn ELSE '***' END;\n"
)
#: every kind of SQL input lint reads: (file name, text)
KINDS = [
    ("plain.sql", POLICY_SF),
    ("masks.snowflake.sql", POLICY_SF),
    ("masks.databricks.sql", POLICY_DBX),
    ("governance.sql", "-- Databricks notebook source\n" + POLICY_DBX),
    ("setup.py", HEADER + 'spark.sql("""' + POLICY_DBX.rstrip(";\n") + '""")\n'),
    (
        "macros/mp_email.sql",
        "{% macro create_masking_policy_mp_email(node_database, node_schema) %}\n"
        + POLICY_SF.replace("gov.pol", "{{node_database}}.{{node_schema}}")
        + "{% endmacro %}\n",
    ),
]


def _latin1(text: str) -> tuple[bytes, str]:
    """A comment in Latin-1 (an editor's default on Windows) on the second line."""
    lines = text.split("\n")
    lines.insert(
        1, "-- r\u00e9sum\u00e9 of the owner" if not text.startswith("#") else "# caf\u00e9"
    )
    data = "\n".join(lines).encode("latin-1")
    where = "2:5" if not text.startswith("#") else "2:6"
    return data, f"{where}: file is not valid UTF-8 (byte 0xe9)"


def _utf16(text: str) -> tuple[bytes, str]:
    """UTF-16 LE without a byte-order mark (PowerShell's Out-File, SSMS's Unicode save): every
    ASCII letter followed by a NUL, which decodes as valid UTF-8."""
    return text.encode("utf-16-le"), "1:2: file is not UTF-8 text: it holds a NUL byte"


def _utf16_bom(text: str) -> tuple[bytes, str]:
    return text.encode("utf-16"), "1:1: file is UTF-16 (it starts with a UTF-16 byte-order mark)"


def _after_multibyte(text: str) -> tuple[bytes, str]:
    """UTF-8 up to a stray byte: the column counts characters, not bytes."""
    first, rest = text.split("\n", 1)
    comment = "-- \u00e9t\u00e9 " if not text.startswith("#") else "# \u00e9t\u00e9 "
    return (first + "\n" + comment).encode() + b"\xff\n" + rest.encode(), (
        f"2:{len(comment) + 1}: file is not valid UTF-8 (byte 0xff)"
    )


ENCODINGS = [_latin1, _utf16, _utf16_bom, _after_multibyte]


@pytest.mark.parametrize("encode", ENCODINGS, ids=[e.__name__.strip("_") for e in ENCODINGS])
@pytest.mark.parametrize("name,text", KINDS, ids=[k[0] for k in KINDS])
@pytest.mark.parametrize("walk", [False, True], ids=["named", "walked"])
def test_a_file_that_is_not_utf8_is_a_located_exit_2(
    tmp_path: Path, name: str, text: str, encode: object, walk: bool
) -> None:
    data, where = encode(text)  # type: ignore[operator]
    write_files(tmp_path, {name: data})
    run = run_cli(["lint", "--no-cache", "." if walk else name], cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert f"{name}:{where}" in run.stderr
    assert "Traceback" not in run.stderr
    assert "ACC" not in run.stdout  # no finding from a file read wrongly


@pytest.mark.parametrize("name,text", KINDS, ids=[k[0] for k in KINDS])
def test_a_utf8_byte_order_mark_is_read(tmp_path: Path, name: str, text: str) -> None:
    write_files(tmp_path, {name: b"\xef\xbb\xbf" + text.encode()})
    run = run_cli(["lint", "--no-cache", "--format", "json", name], cwd=tmp_path)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert '"errors"' not in run.stdout
