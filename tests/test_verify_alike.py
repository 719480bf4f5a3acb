"""Datasets governed alike share their verify parts (compiler/verify/parts.py,
``PartBuilder.parts``): the parts made from another dataset's of the same alike key are
exactly the parts computed in full for the dataset itself.

For every dataset, the parts as ``accord verify`` gets them (shared where the key allows) are
compared with the parts computed in full: the SQL, the objects a mismatch blames, the ABAC
conflict SQL, the inputs, and the statements that locate a failure (the very objects). On a
generated estate (with and without the lint defects), ``policies/``, ``examples/as-found``,
the ABAC and tag-masking setups, and compiled trees of the generated estate edited so that
one dataset differs from the others of its kind in exactly one governed property (another
mask policy, a mask's USING columns, another row filter, a mask removed, a column's type).
Whole reports are compared with and without the sharing too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import accord.compiler.verify.parts as parts_module
from accord.compiler.core.errors import InputError
from accord.compiler.core.outdir import write_tree
from accord.compiler.model.validate import Project, load_project
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.parts import Part
from accord.compiler.verify.run import verify
from accord.compiler.verify.sources import load_sql, read_compiled_dir
from accord.targets.render import render_files
from bench.lint_bench import estate, write_estate
from tests.test_verify import AS_FOUND, POLICIES, SETUPS


def _fields(part: Part) -> tuple:
    return (
        part.sql,
        list(part.objects),
        part.conflict,
        part.inputs,
        [id(s) for s in part.statements],
    )


def assert_alike_equals_computed(project: Project, out: Path | None = None) -> int:
    """Compare every dataset's parts both ways; returns how many were shared."""
    salts = TestSalts()
    files = render_files(project, "all") if out is None else read_compiled_dir(str(out))
    v = Verifier(project, load_sql(files, salts, "test"), salts)
    v.build()
    builder = v.builder
    assert builder is not None
    shared = 0
    for dataset in sorted(project.model.datasets):
        before = len(builder._alike_parts)
        try:
            row, columns = builder.parts(dataset)
        except Exception as err:  # the same failure, located the same, computed in full
            with pytest.raises(type(err)) as again:
                builder._computed(dataset)
            assert str(again.value) == str(err)
            continue
        if len(builder._alike_parts) == before:
            shared += 1
        full_row, full_columns = builder._computed(dataset)
        assert _fields(row) == _fields(full_row), dataset
        assert list(columns) == list(full_columns), dataset
        for name in columns:
            assert _fields(columns[name]) == _fields(full_columns[name]), (dataset, name)
    return shared


def _report(project: Project, out: Path | None, alike: bool) -> str:
    """The report's JSON, or the error verify stops with."""
    parts_module.ALIKE = alike
    try:
        return verify(project, None if out is None else str(out)).to_json()
    except InputError as err:
        return "error: " + "\n".join(str(d) for d in err.diagnostics)
    finally:
        parts_module.ALIKE = True


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("alike") / "policies"
    return write_estate(root, estate(60, principals=12, programmes=8, defects=False))


def test_generated_estate(generated: Path) -> None:
    project = load_project(generated)
    assert assert_alike_equals_computed(project) > 30
    assert _report(project, None, True) == _report(project, None, False)


def test_generated_estate_with_defects(tmp_path: Path) -> None:
    root = write_estate(
        tmp_path / "policies", estate(60, principals=12, programmes=8, defects=True)
    )
    project = load_project(root)
    assert assert_alike_equals_computed(project) > 30


@pytest.mark.parametrize("root", [POLICIES, AS_FOUND], ids=["policies", "as-found"])
def test_projects(root: Path) -> None:
    assert_alike_equals_computed(load_project(root))


@pytest.mark.parametrize("setup", ["abac", "tags"])
def test_abac_and_tag_masking(setup: str, tmp_path: Path) -> None:
    project = load_project(POLICIES)
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    SETUPS[setup](out)
    assert_alike_equals_computed(project, out)
    assert _report(project, out, True) == _report(project, out, False)


#: one statement of one table edited in the compiled SQL: (file, pattern, replacement)
EDITS = {
    "another mask": (
        "snowflake/050_attachments.sql",
        r"(T_00007 MODIFY COLUMN SUBJECT_ID SET MASKING POLICY GOVERNANCE\.POLICIES\.)"
        r"PSEUDONYM_MASK",
        r"\1SITE_PSEUDONYM_MASK",
    ),
    "mask using columns": (
        "snowflake/050_attachments.sql",
        r"(T_00007 MODIFY COLUMN NOTES SET MASKING POLICY [A-Z_.0-9]+);",
        r"\1 USING (NOTES, GROUP_CODE);",
    ),
    "another row filter": (
        "snowflake/050_attachments.sql",
        r"(T_00007 ADD ROW ACCESS POLICY GOVERNANCE\.POLICIES\.)[A-Z_]+",
        r"\1REGION_ROW_FILTER_EXCEPT_STEWARD",
    ),
    "a mask removed": (
        "snowflake/050_attachments.sql",
        r"ALTER TABLE DB_0\.SCH_0\.T_00007 MODIFY COLUMN PHONE [^;]*;",
        "",
    ),
    "databricks: another mask": (
        "databricks/050_attachments.sql",
        r"(t_00009 ALTER COLUMN subject_id SET MASK governance\.policies\.)pseudonym_mask",
        r"\1site_pseudonym_mask",
    ),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_one_dataset_differs_in_one_governed_property(
    name: str, generated: Path, tmp_path: Path
) -> None:
    project = load_project(generated)
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    file, pattern, replacement = EDITS[name]
    path = out / file
    text = path.read_text()
    edited, count = re.subn(pattern, replacement, text)
    assert count == 1, name
    path.write_text(edited)
    assert assert_alike_equals_computed(project, out) > 30
    assert _report(project, out, True) == _report(project, out, False)


def test_a_column_of_another_type(tmp_path: Path) -> None:
    """One dataset's column of another type than the same column elsewhere."""
    root = write_estate(tmp_path / "policies", estate(60, principals=12, programmes=8))
    datasets = sorted(root.rglob("*.yaml"))
    for path in datasets:
        text = path.read_text()
        edited = re.sub(r"(RESULT_VALUE:\n\s+type: )VARCHAR", r"\1NUMBER", text, count=1)
        if edited != text:
            path.write_text(edited)
            break
    else:
        raise AssertionError("no column to retype")
    project = load_project(root)
    assert assert_alike_equals_computed(project) > 30
    assert _report(project, None, True) == _report(project, None, False)


def _compiled(generated: Path, tmp_path: Path) -> tuple[Project, Path]:
    project = load_project(generated)
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    return project, out


def test_one_mask_given_other_columns(generated: Path, tmp_path: Path) -> None:
    """Two tables governed alike but for the columns their NOTES mask is given (the masked
    column is given first, as USING lists it, then the others)."""
    project, out = _compiled(generated, tmp_path)
    masks = out / "snowflake" / "040_masking_policies.sql"
    masks.write_text(
        masks.read_text() + "\nCREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.NOTES_BY_KEY\n"
        "  AS (VAL VARCHAR, V VARCHAR, K VARCHAR) RETURNS VARCHAR ->\n"
        "  CASE WHEN K LIKE 'subject%' THEN VAL ELSE '***' END;\n"
    )
    path = out / "snowflake" / "050_attachments.sql"
    text = path.read_text()
    for table, key in (("T_00002", "GROUP_CODE"), ("T_00010", "SUBJECT_ID")):
        text, count = re.subn(
            rf"({table} MODIFY COLUMN NOTES SET MASKING POLICY )[A-Z_.0-9]+;",
            rf"\1GOVERNANCE.POLICIES.NOTES_BY_KEY USING (NOTES, {key});",
            text,
        )
        assert count == 1
    path.write_text(text)
    assert assert_alike_equals_computed(project, out) > 30
    assert _report(project, out, True) == _report(project, out, False)


def test_an_abac_policy_on_one_table_of_many(generated: Path, tmp_path: Path) -> None:
    """One Databricks table, governed as others are, also covered by an ABAC column mask."""
    project, out = _compiled(generated, tmp_path)
    tables = re.findall(
        r"ALTER TABLE (\S+) SET ROW FILTER",
        (out / "databricks" / "050_attachments.sql").read_text(),
    )
    assert len(tables) > 4
    table = tables[-1]  # governed as an earlier one is
    (out / "databricks" / "060_abac.sql").write_text(
        "CREATE OR REPLACE FUNCTION governance.policies.abac_redact(val STRING)\n"
        "  RETURNS STRING\n"
        "  RETURN '[redacted]';\n\n"
        f"ALTER TABLE {table} ALTER COLUMN unit SET TAGS ('accord_mask' = 'abac');\n\n"
        f"CREATE OR REPLACE POLICY abac_unit ON CATALOG {table.split('.')[0]}\n"
        "  COLUMN MASK governance.policies.abac_redact\n"
        "  TO `account users`\n"
        "  FOR TABLES\n"
        "  MATCH COLUMNS has_tag_value('accord_mask', 'abac') AS c\n"
        "  ON COLUMN c;\n"
    )
    assert assert_alike_equals_computed(project, out) > 30
    assert _report(project, out, True) == _report(project, out, False)
