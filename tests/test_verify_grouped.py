"""accord verify evaluates each distinct policy part once (compiler/verify/execute.py, ``Group``):
the parts of all datasets that bind the same SQL to inputs of the same types share one query
over the distinct input values their generated rows hold, and the comparison with the model
is made per distinct (inputs, value) cell.

These tests hold that grouping to the per-dataset execution it replaces: every persona's
every row and column, as assembled from the groups, equals the dataset's own query over its
generated rows (``Verifier._execute_directly``, the query a failure is located with); the
number of DuckDB queries does not grow with the number of personas; and the defects that
grouping could hide (two datasets sharing a policy, only one attached wrongly; a body that
fails only when executed) are still reported, on the right dataset, or located."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import Project, load_project
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.sources import load_sql, platform_of, read_compiled_dir, render_sql
from accord.targets.render import render_files
from bench.lint_bench import estate, write_estate
from tests import test_verify
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.test_verify import AS_FOUND, POLICIES, SETUPS, edit, run

# the compiled reference estate, a fresh copy per test (test_verify's fixtures)
compiled_tree = test_verify.compiled_tree
compiled = test_verify.compiled


def verifier_for(project: Project, out: Path | None = None) -> Verifier:
    salts = TestSalts()
    files = render_files(project, "all") if out is None else read_compiled_dir(str(out))
    return Verifier(project, load_sql(files, salts, "test"), salts)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small estate of the benchmark's generator: replicas, two identifier domains, masks
    and row filters shared by many tables."""
    root = tmp_path_factory.mktemp("estate") / "policies"
    return write_estate(root, estate(24, principals=12, programmes=8, defects=False))


def _direct_equals_grouped(v: Verifier) -> int:
    """Compare every dataset's own query with the grouped answers; returns the cells seen."""
    seen = 0
    for dataset in sorted(v.model.datasets):
        _, columns = v.parts_of[dataset]
        names = list(columns)
        n = len(names)
        grouped = v.results[dataset]
        conflicts: dict[str, set[str]] = {}
        for record in v._execute_directly(dataset):
            persona, r, visible = record[0], record[1], record[2]
            got_visible, values = grouped[persona][r]
            assert got_visible == bool(visible), (dataset, persona, r)
            for i, name in enumerate(names):
                assert values[name] == record[3 + i], (dataset, persona, r, name)
                assert type(values[name]) is type(record[3 + i]), (dataset, persona, r, name)
                seen += 1
            flags = record[3 + n :]
            for what, flag in zip(["rows", *names], flags, strict=True):
                if flag:
                    conflicts.setdefault(persona, set()).add(what)
        for persona in v.personas:
            assert v.answers.conflicts(dataset, persona) == sorted(conflicts.get(persona, ())), (
                dataset,
                persona,
            )
    return seen


@pytest.mark.parametrize("setup", [None, "abac", "tags"])
def test_grouped_answers_equal_each_datasets_own_query(setup: str | None, compiled: Path) -> None:
    SETUPS[setup](compiled)
    v = verifier_for(load_project(POLICIES), compiled)
    v.evaluate(sorted(v.model.datasets))
    assert _direct_equals_grouped(v) > 100


def test_grouped_answers_equal_on_hand_written_predicates_and_a_generated_estate(
    generated: Path,
) -> None:
    for root in (AS_FOUND, generated):
        v = verifier_for(load_project(root))
        v.evaluate(sorted(v.model.datasets))
        assert _direct_equals_grouped(v) > 100
    # the generated estate's tables share their policies: far fewer parts than columns
    assert len(v._groups) < sum(len(v.parts_of[d][1]) + 1 for d in v.parts_of) / 4


class _Counting:
    """A DuckDB connection that counts the statements it is given."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self.count = 0

    def execute(self, *args: Any) -> Any:
        self.count += 1
        return self._con.execute(*args)

    def executemany(self, *args: Any) -> Any:
        self.count += 1
        return self._con.executemany(*args)


def _queries(project: Project) -> int:
    v = verifier_for(project)
    counting = _Counting(v.con)
    v.con = counting  # type: ignore[assignment]
    report = v.run()
    assert report.mismatches == []
    return counting.count


def _with_more_personas(project: Project, copies: int) -> Project:
    """The project with every persona repeated ``copies`` times under new names."""
    personas = dict(project.model.personas)
    for name, principals in project.model.personas.items():
        for i in range(copies):
            personas[f"{name}_copy_{i}"] = principals
    model = project.model.model_copy(update={"personas": personas})
    return dataclasses.replace(project, model=model)


@pytest.mark.parametrize("root", ["policies", "generated"])
def test_the_number_of_queries_does_not_grow_with_personas(root: str, generated: Path) -> None:
    path = POLICIES if root == "policies" else generated
    base = _queries(load_project(path))
    assert _queries(_with_more_personas(load_project(path), 3)) == base


# --------------------------------------------------------------------------------------------
# defects grouping must not hide


def _shared_filter_on_the_wrong_column(out: Path) -> None:
    # assay_results_lake and variant_calls attach the same row filter; only variant_calls's
    # attachment now passes another column (a different input: a different group)
    edit(
        out / "databricks/050_attachments.sql",
        "ALTER TABLE omics.variants.calls SET ROW FILTER "
        "governance.policies.programme_row_filter_except_data_steward ON (programme_code);",
        "ALTER TABLE omics.variants.calls SET ROW FILTER "
        "governance.policies.programme_row_filter_except_data_steward ON (subject_id);",
    )


def _shared_mask_edited_for_one_table(out: Path) -> None:
    # the same mask body attached to one more column: that column alone is wrong
    edit(
        out / "snowflake/050_attachments.sql",
        "MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK",
        "MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK",
    )


GROUPING_DEFECTS: list[
    tuple[str, Callable[[Path], None], tuple[str, str, str, str | None], str]
] = [
    (
        "shared-row-filter-one-attachment-wrong",
        _shared_filter_on_the_wrong_column,
        ("rows", "variant_calls", "databricks", "programme_code"),
        "assay_results_lake",
    ),
    (
        "shared-mask-on-one-more-column",
        _shared_mask_edited_for_one_table,
        ("column", "assay_results", "snowflake", "NOTES"),
        "assay_results_lake",
    ),
]


@pytest.mark.parametrize(
    ("case", "mutate", "expect", "untouched"),
    GROUPING_DEFECTS,
    ids=[d[0] for d in GROUPING_DEFECTS],
)
def test_a_defect_of_one_of_the_datasets_sharing_a_policy_is_reported_on_it(
    case: str,
    mutate: Callable[[Path], None],
    expect: tuple[str, str, str, str | None],
    untouched: str,
    compiled: Path,
) -> None:
    mutate(compiled)
    code, out = run("verify", str(POLICIES), "--compiled", str(compiled), "--format", "json")
    assert code == 1
    doc = json.loads(out)
    found = {(m["kind"], m["dataset"], m["platform"], m["column"]) for m in doc["mismatches"]}
    assert expect in found, found
    assert not any(m["dataset"] == untouched for m in doc["mismatches"]), found


def _refused(compiled: Path) -> str:
    """``accord verify --compiled``, run as a user runs it: exit 2, a located message on
    stderr, no report and no traceback. Returns stderr."""
    proc = run_cli(["verify", str(POLICIES), "--compiled", str(compiled)], cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    return proc.stderr


def test_a_body_that_fails_when_executed_is_located(compiled: Path) -> None:
    """Binds and transpiles, fails in DuckDB on a generated value: located at the body, with
    DuckDB's message naming the dataset's own column (the failing dataset's query is
    re-executed over its rows, by name)."""
    edit(
        compiled / "snowflake/040_masking_policies.sql",
        "SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
        "CAST(VAL AS INT)::VARCHAR",
    )
    stderr = _refused(compiled)
    assert (
        "040_masking_policies.sql:11:3: GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK: cannot "
        "execute on DuckDB: Conversion Error: Could not convert string 'subject-001' to INT32"
        in stderr
    )
    assert "SUBJECT_ID" in stderr


def test_statement_positions_are_kept(compiled: Path) -> None:
    """Mapping-table statements are generated for DuckDB with their tables renamed in place
    and restored: the scanned statements still name the platform's tables."""
    v = verifier_for(load_project(POLICIES), compiled)
    before = [
        (s.file, s.line, s.expression.sql("snowflake") if s.expression else "")
        for p in v.compiled.platforms.values()
        for s in p.table_statements
    ]
    v.run()
    after = [
        (s.file, s.line, s.expression.sql("snowflake") if s.expression else "")
        for p in v.compiled.platforms.values()
        for s in p.table_statements
    ]
    assert before == after and before
    # DuckDB's names of the mapping tables ("<platform>:<NAME>") did not stay behind
    assert not any('"snowflake:' in t or '"databricks:' in t for _, _, t in after)


@pytest.mark.parametrize("root", ["policies", "as-found", "generated"])
def test_verify_reads_exactly_the_sql_files_compile_writes(root: str, generated: Path) -> None:
    """In memory, verify renders the SQL targets only (not Terraform, which it does not
    read): the same files, byte for byte, as ``accord compile --target all`` writes there."""
    path = {"policies": POLICIES, "as-found": AS_FOUND, "generated": generated}[root]
    project = load_project(path)
    everything = render_files(project, "all")
    assert any(platform_of(p) is None for p in everything)  # Terraform is written too
    assert render_sql(project) == {p: t for p, t in everything.items() if platform_of(p)}


def test_a_part_reading_a_column_the_table_lacks_is_located(compiled: Path) -> None:
    """An ABAC policy's USING names a column no table has: there are no inputs to group on,
    so the dataset's own query is executed and DuckDB's binder error located at the policy's
    function (as before grouping)."""
    abac = SETUPS["abac"](compiled)
    assert isinstance(abac, Path)
    edit(abac, "USING COLUMNS (p);", "USING COLUMNS (q);")
    stderr = _refused(compiled)
    assert (
        "030_abac.sql:7:10: governance.policies.programme_rows: cannot execute on DuckDB: Binder "
        'Error: Table "accord_t" does not have a column named "q"' in stderr
    )
    assert "Traceback" not in stderr


def test_a_column_is_found_by_any_spelling_as_by_its_folded_name() -> None:
    """``GenTable.column_index`` looks a name up as written before folding it: the answer is
    the folded lookup's for every spelling, including two columns whose names fold alike."""
    from accord.compiler.verify.data import GenColumn, GenTable

    names = ["Id", "ID", "name", "Straße", "ǅemal"]
    table = GenTable("d", tuple(GenColumn(n, "VARCHAR", ("x",), "other") for n in names), 1)
    first: dict[str, int] = {}
    for i, n in enumerate(names):
        first.setdefault(n.lower(), i)
    asked = {v for n in names for v in (n, n.lower(), n.upper(), n.title(), n.swapcase())}
    for name in sorted(asked | {"missing", "MISSING"}):
        assert table.column_index(name) == first.get(name.lower()), name
    assert table.column_index("Id") == table.column_index("ID") == 0
