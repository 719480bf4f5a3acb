"""accord verify: the compiled policies executed on DuckDB must mean what the model says.

Every mutation of the compiled SQL below is a real defect class from the design notes; each
must be caught (exit 1, naming persona, dataset, platform and the SQL object), and the
unmutated output must pass."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from accord.compiler.core.outdir import write_tree
from accord.compiler.model.validate import load_project
from accord.compiler.verify.run import verify
from accord.targets.render import render_files
from tests.cli import run_cli
from tests.conftest import ROOT

POLICIES = ROOT / "policies"
AS_FOUND = ROOT / "examples" / "as-found"
FIXTURES = Path(__file__).parent / "fixtures" / "verify"
ABAC = FIXTURES / "abac.databricks.sql"
TAGS = FIXTURES / "tag_masking.snowflake.sql"


@pytest.fixture(scope="module")
def compiled_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compiled") / "out"
    write_tree(out, render_files(load_project(POLICIES), "all"))
    return out


@pytest.fixture
def compiled(compiled_tree: Path, tmp_path: Path) -> Path:
    """A fresh copy of `accord compile policies --out ...` that a test may edit."""
    out = tmp_path / "out"
    shutil.copytree(compiled_tree, out)
    return out


def run(*args: str) -> tuple[int, str]:
    """(exit code, what the command printed: stdout, then stderr)."""
    code, out, err = run_cli(list(args))
    return code, out + err


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count))


def use_abac(out: Path) -> Path:
    """Replace the table-level Databricks policies with the hand-written ABAC fixture."""
    for name in ("030_row_filters.sql", "040_masks.sql", "050_attachments.sql"):
        (out / "databricks" / name).unlink()
    target = out / "databricks" / "030_abac.sql"
    shutil.copy(ABAC, target)
    return target


def use_tags(out: Path) -> Path:
    """Replace the Snowflake attachments with tag-based masking (the tag fixture)."""
    target = out / "snowflake" / "050_attachments.sql"
    shutil.copy(TAGS, target)
    return target


SETUPS: dict[str | None, Callable[[Path], object]] = {
    None: lambda out: None,
    "abac": use_abac,
    "tags": use_tags,
}


# --------------------------------------------------------------------------------------------
# the unmutated output passes


@pytest.mark.parametrize("source", ["in-memory", "compiled", "abac", "tags"])
def test_unmutated_output_passes(source: str, compiled: Path) -> None:
    SETUPS.get(source, SETUPS[None])(compiled)
    report = verify(load_project(POLICIES), None if source == "in-memory" else str(compiled))
    assert report.mismatches == []
    assert report.checks >= 50
    assert report.personas == 4 and report.datasets == 5
    assert report.platforms == ("databricks", "snowflake")


def test_cli_passes_and_counts_checks(compiled: Path) -> None:
    code, out = run("verify", str(POLICIES), "--compiled", str(compiled))
    assert code == 0
    last = out.strip().splitlines()[-1]
    assert (
        last.startswith("accord verify: ")
        and " checks, 4 personas, 5 datasets, 2 platforms" in last
    )
    assert last.endswith(": 0 mismatches")


# --------------------------------------------------------------------------------------------
# mutations


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    old: str
    new: str
    #: (kind, persona, dataset, platform, column) of one mismatch that must be reported
    expect: tuple[str, str | None, str, str, str | None]
    #: the file (relative to OUT) the mismatch must name as responsible
    blames: str
    #: a fixture that replaces part of the compiled output first (see SETUPS)
    setup: str | None = None


MUTATIONS = [
    Mutation(
        "snowflake-mask-current-role",
        "snowflake/040_masking_policies.sql",
        "WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED')\n    THEN VAL",
        "WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED'\n    THEN VAL",
        ("column", "clinical_pharmacologist", "assay_results", "snowflake", "SUBJECT_ID"),
        "snowflake/040_masking_policies.sql",
    ),
    Mutation(
        "snowflake-row-policy-current-role",
        "snowflake/030_row_access_policies.sql",
        "IS_ROLE_IN_SESSION(g.ROLE_NAME)",
        "g.ROLE_NAME = CURRENT_ROLE()",
        ("rows", "clinical_pharmacologist", "assay_results", "snowflake", "PROGRAMME_CODE"),
        "snowflake/030_row_access_policies.sql",
    ),
    Mutation(
        "snowflake-row-policy-available-roles",
        "snowflake/030_row_access_policies.sql",
        "OR IS_ROLE_IN_SESSION('DATA_STEWARD')",
        "OR ARRAY_CONTAINS('CRO_EXTERNAL'::VARIANT, PARSE_JSON(CURRENT_AVAILABLE_ROLES()))",
        ("rows", "cro_collaborator", "assay_results", "snowflake", "PROGRAMME_CODE"),
        "snowflake/030_row_access_policies.sql",
    ),
    Mutation(
        "databricks-mask-is-member",
        "databricks/040_masks.sql",
        "WHEN is_account_group_member('clinical-unblinded')\n    THEN val\n    ELSE sha2",
        "WHEN is_member('clinical-unblinded')\n    THEN val\n    ELSE sha2",
        ("column", "clinical_pharmacologist", "variant_calls", "databricks", "subject_id"),
        "databricks/040_masks.sql",
    ),
    Mutation(
        "snowflake-salt-dropped",
        "snowflake/040_masking_policies.sql",
        "SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
        "SHA2(VAL, 256)",
        ("column", "bench_chemist", "assay_results", "snowflake", "SUBJECT_ID"),
        "snowflake/040_masking_policies.sql",
    ),
    Mutation(
        "databricks-salt-dropped",
        "databricks/040_masks.sql",
        "sha2(concat(val, governance.policies.subject_pseudonym_salt()), 256)",
        "sha2(val, 256)",
        ("column", "cro_collaborator", "variant_calls", "databricks", "subject_id"),
        "databricks/040_masks.sql",
    ),
    Mutation(
        "shared-salt",
        "databricks/020_salt_functions.sql",
        "env:SUBJECT_SALT_DATABRICKS') }}",
        "env:SUBJECT_SALT_SNOWFLAKE') }}",
        (
            "digest",
            None,
            "assay_results / variant_calls",
            "snowflake / databricks",
            "SUBJECT_ID / subject_id",
        ),
        "databricks/040_masks.sql",
    ),
    Mutation(
        "databricks-mapping-row-removed",
        "databricks/010_mapping_tables.sql",
        "    ('CNS-204', 'cro-external'),\n",
        "",
        ("rows", "cro_collaborator", "variant_calls", "databricks", "programme_code"),
        "databricks/010_mapping_tables.sql",
    ),
    Mutation(
        "snowflake-mapping-row-removed",
        "snowflake/010_mapping_tables.sql",
        "  ('IMM-310', 'BENCH_CHEMIST'),\n",
        "",
        ("rows", "bench_chemist", "assay_results", "snowflake", "PROGRAMME_CODE"),
        "snowflake/010_mapping_tables.sql",
    ),
    Mutation(
        "databricks-row-filter-detached",
        "databricks/050_attachments.sql",
        "ALTER TABLE omics.variants.calls SET ROW FILTER "
        "governance.policies.programme_row_filter_except_data_steward ON (programme_code);",
        "",
        ("rows", "cro_collaborator", "variant_calls", "databricks", "programme_code"),
        "omics.variants.calls",
    ),
    Mutation(
        "abac-group-removed-from-except",
        "databricks/030_abac.sql",
        "TO `account users` EXCEPT `data-stewards`",
        "TO `account users`",
        ("rows", "data_steward", "variant_calls", "databricks", "programme_code"),
        "databricks/030_abac.sql",
        setup="abac",
    ),
    Mutation(
        "abac-mask-group-removed-from-except",
        "databricks/030_abac.sql",
        "EXCEPT `clinical-unblinded`",
        "EXCEPT `data-stewards`",
        ("column", "data_steward", "variant_calls", "databricks", "subject_id"),
        "databricks/030_abac.sql",
        setup="abac",
    ),
    Mutation(
        "abac-tag-value-changed",
        "databricks/030_abac.sql",
        "ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET TAGS "
        "('accord_mask' = 'subject_pseudonym');",
        "ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET TAGS "
        "('accord_mask' = 'subject_id');",
        ("column", "bench_chemist", "variant_calls", "databricks", "subject_id"),
        "omics.variants.calls.subject_id",
        setup="abac",
    ),
    Mutation(
        "abac-two-masks-on-one-column",
        "databricks/030_abac.sql",
        "CREATE OR REPLACE POLICY free_text ON SCHEMA discovery_lake.assays",
        "CREATE OR REPLACE POLICY free_text_again ON CATALOG discovery_lake\n"
        "  COLUMN MASK governance.policies.redact TO `account users` FOR TABLES\n"
        "  MATCH COLUMNS has_tag_value('accord_mask', 'free_text') AS c ON COLUMN c;\n"
        "CREATE OR REPLACE POLICY free_text ON SCHEMA discovery_lake.assays",
        ("refused", "bench_chemist", "assay_results_lake", "databricks", "notes"),
        "databricks/030_abac.sql",
        setup="abac",
    ),
    Mutation(
        "snowflake-tag-removed-from-column",
        "snowflake/050_attachments.sql",
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET TAG "
        "GOVERNANCE.POLICIES.FREE_TEXT_TAG = 'notes';",
        "",
        ("column", "cro_collaborator", "assay_results", "snowflake", "NOTES"),
        "DISCOVERY.ASSAYS.RESULTS.NOTES",
        setup="tags",
    ),
    Mutation(
        "snowflake-tag-carries-the-wrong-policy",
        "snowflake/050_attachments.sql",
        "SUBJECT_ID_TAG SET MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK",
        "SUBJECT_ID_TAG SET MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK",
        ("column", "bench_chemist", "assay_results", "snowflake", "SUBJECT_ID"),
        "snowflake/040_masking_policies.sql",
        setup="tags",
    ),
]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_mutation_is_caught(mutation: Mutation, compiled: Path) -> None:
    SETUPS[mutation.setup](compiled)
    edit(compiled / mutation.file, mutation.old, mutation.new)
    code, out = run("verify", str(POLICIES), "--compiled", str(compiled), "--format", "json")
    assert code == 1
    doc = json.loads(out)
    found = [
        m
        for m in doc["mismatches"]
        if (m["kind"], m["persona"], m["dataset"], m["platform"], m["column"]) == mutation.expect
    ]
    assert found, [
        (m["kind"], m["persona"], m["dataset"], m["platform"], m["column"])
        for m in doc["mismatches"]
    ]
    blamed = [f"{o['file']}:{o['line']}" if o["file"] else o["name"] for o in found[0]["objects"]]
    assert any(mutation.blames in b for b in blamed), blamed
    assert doc["summary"]["mismatches"] == len(doc["mismatches"]) > 0


def test_current_role_mismatch_names_expected_and_actual(compiled: Path) -> None:
    edit(
        compiled / "snowflake/040_masking_policies.sql",
        "CASE WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') THEN VAL",
        "CASE WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED' THEN VAL",
    )
    code, out = run("verify", str(POLICIES), "--compiled", str(compiled))
    assert code == 1
    assert (
        "MISMATCH [column] persona clinical_pharmacologist, dataset assay_results on snowflake, "
        "column NOTES" in out
    )
    assert "expected: clear: 'notes-1'" in out
    assert "actual:   '[redacted]'" in out
    assert "masking policy GOVERNANCE.POLICIES.FREE_TEXT_MASK (" in out
    assert "snowflake/040_masking_policies.sql:4)" in out
    # the persona whose grant sits on her primary role is not affected
    assert "persona bench_chemist" not in out


def test_a_salted_mask_mismatch_is_reported_alike_on_every_run(compiled: Path) -> None:
    """The test salts are derived from the salt references, so a wrong hash mask gives the
    same digests, and the same report byte for byte, on every run (same input, same output).
    Each run makes its own salts, as two CI runs would."""
    edit(
        compiled / "snowflake/040_masking_policies.sql",
        "SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
        "SHA2(VAL || VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
    )
    first = run_cli(["verify", str(POLICIES), "--compiled", str(compiled)], cwd=ROOT)
    second = run_cli(["verify", str(POLICIES), "--compiled", str(compiled)], cwd=ROOT)
    assert first.returncode == second.returncode == 1
    assert "expected: hash mask subject_pseudonym: '" in first.stdout
    assert first.stdout == second.stdout


# --------------------------------------------------------------------------------------------
# hand-written predicates and the as-found estate


def test_hand_written_predicate_is_executed_and_compared_across_replicas() -> None:
    report = verify(load_project(AS_FOUND))
    admitted = {o.persona: o.admitted for o in report.observations}
    # CURRENT_ROLE(): the secondary role's CNS-204 grant does not count
    assert admitted["clinical_pharmacologist"] == (
        "row 1 (PROGRAMME_CODE='IMM-310')",
        "row 2 (PROGRAMME_CODE='ONC-101')",
    )
    assert admitted["cro_collaborator"] == ("row 0 (PROGRAMME_CODE='CNS-204')",)
    kinds = {(m.kind, m.persona, m.dataset) for m in report.mismatches}
    assert (
        "replica-rows",
        "clinical_pharmacologist",
        "assay_results / assay_results_lake",
    ) in kinds
    # unsalted SHA2 on both platforms: the same digest joins masked rows
    assert ("digest", None, "assay_results / variant_calls") in kinds
    assert "compared only across replicas" in report.to_text()


# --------------------------------------------------------------------------------------------
# bad input: located message, exit 2, never a traceback


BAD = [
    ("missing-out", None, None, None, "no such directory"),
    (
        "does-not-scan",
        "snowflake/030_row_access_policies.sql",
        "RETURNS BOOLEAN ->",
        "RETURNS BOOLEAN =>",
        "030_row_access_policies.sql:5:",
    ),
    (
        "cannot-transpile",
        "snowflake/040_masking_policies.sql",
        "SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
        "SHA2(VAL, 512)",
        "040_masking_policies.sql:11:3: cannot transpile",
    ),
    (
        "unknown-function",
        "databricks/040_masks.sql",
        "sha2(concat(val, governance.policies.subject_pseudonym_salt()), 256)",
        "no_such_function(val)",
        "040_masks.sql:18:3: governance.policies.subject_pseudonym_mask: calls no_such_function()",
    ),
    (
        "policy-not-created",
        "snowflake/050_attachments.sql",
        "MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK",
        "MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.NO_SUCH_MASK",
        "050_attachments.sql:8:1: GOVERNANCE.POLICIES.NO_SUCH_MASK is not created",
    ),
    (
        "table-not-created",
        "databricks/030_row_filters.sql",
        "FROM governance.policies.programme_grants AS g",
        "FROM governance.policies.no_such_grants AS g",
        "reads table governance.policies.no_such_grants, which the compiled SQL does not create",
    ),
]


@pytest.mark.parametrize(("case", "file", "old", "new", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_exits_2_with_a_located_message(
    case: str, file: str | None, old: str | None, new: str | None, message: str, compiled: Path
) -> None:
    target = compiled
    if file is None:
        target = compiled / "missing"
    else:
        assert old is not None and new is not None
        edit(compiled / file, old, new)
    proc = run_cli(["verify", str(POLICIES), "--compiled", str(target)], cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_salts_are_never_written(compiled: Path) -> None:
    before = {p: p.read_bytes() for p in compiled.rglob("*") if p.is_file()}
    report = verify(load_project(POLICIES), str(compiled))
    assert report.mismatches == []
    assert {p: p.read_bytes() for p in compiled.rglob("*") if p.is_file()} == before


def test_lint_does_not_import_duckdb() -> None:
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "from accord.compiler.lint.engine import lint_project\n"
        "from accord.compiler.model.validate import load_project\n"
        "lint_project(load_project('policies'))\n"
        "try:\n"
        "    main(['validate', 'policies'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'duckdb' not in sys.modules, 'duckdb imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
