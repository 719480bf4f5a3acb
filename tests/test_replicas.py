"""Replicas inherit their source's column masks by name; ``omits`` says which masked source
columns a replica's table lacks, and ``accord drift`` checks it on the live table.

The shape is the one of the reference estate (``policies/datasets.yaml``): a warehouse table
landed in the lakehouse as a copy (``assay_results_lake``, ``replica_of: assay_results``), the
way a Snowflake table is copied to Databricks by a pipeline or shared as a Delta table. The
defect (issue 21 item 7): the copy's declaration leaves out ``notes``, which the source masks;
the compiled SQL attached no mask to it, and platform users read the notes in the clear.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.core.errors import InputError
from accord.compiler.exposure.diff import exposure_diff
from accord.compiler.live.drift import omission_findings
from accord.compiler.meaning.probes import evaluate
from accord.compiler.model.replicas import column_origin
from accord.compiler.model.types import translate_type
from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.inspect import columns_query
from accord.targets.objects import MaskAttachment
from tests.cli import run_cli
from tests.conftest import ROOT

POLICIES = ROOT / "policies"
LAKE = "discovery_lake.assays.results"
NOTES_LINE = "      notes: {type: STRING, mask: free_text}\n"
REPLICA_OF = "    replica_of: assay_results\n"
#: the notes probe without its lakehouse entry: a replica that lacks notes holds none of it
NO_LAKE_NOTES_PROBE = (
    '    canary: "canary note ONC-101"\n    expect:\n      warehouse_agent: masked\n'
    "      lakehouse_agent: masked\n",
    '    canary: "canary note ONC-101"\n    expect:\n      warehouse_agent: masked\n',
)


def estate(tmp_path: Path, *edits: tuple[str, str], name: str = "estate") -> Path:
    """A copy of the reference estate with ``(old, new)`` text edits of datasets.yaml (and of
    probes.yaml, for an edit whose old text is there)."""
    root = tmp_path / name
    shutil.copytree(POLICIES, root)
    for old, new in edits:
        for stem in ("datasets", "probes"):
            path = root / f"{stem}.yaml"
            text = path.read_text(encoding="utf-8")
            if old in text:
                path.write_text(text.replace(old, new, 1), encoding="utf-8")
                break
        else:
            raise AssertionError(f"not in the estate: {old!r}")
    return root


def lake_masks(root: Path) -> dict[str, str]:
    """column -> mask policy the lowering attaches on the lakehouse replica."""
    catalogs = lower_all(load_project(root))
    return {
        o.column: o.policy.rsplit(".", 1)[-1]
        for o in catalogs["databricks"].of(MaskAttachment)
        if o.table == LAKE
    }


#: (case, edits of the replica's declaration, the replica's masks once compiled)
DECLARATIONS = [
    ("declares both masked columns", [], {"subject_id", "notes"}),
    ("leaves notes out: inherits it", [(NOTES_LINE, "")], {"subject_id", "notes"}),
    (
        "declares no column: inherits both",
        [
            (
                "    columns:\n      subject_id: {type: STRING, mask: subject_pseudonym, "
                "identifier: subject}\n" + NOTES_LINE,
                "",
            )
        ],
        {"subject_id", "notes"},
    ),
    (
        "declares notes unmasked: kept as written (ACC403 reports it)",
        [(NOTES_LINE, "      notes: {type: STRING}\n")],
        {"subject_id"},
    ),
    (
        "says the table lacks notes",
        [
            (NOTES_LINE, ""),
            (REPLICA_OF, REPLICA_OF + "    omits: [notes]\n"),
            # the probe of notes then has no lakehouse answer: the replica holds none of it
            NO_LAKE_NOTES_PROBE,
        ],
        {"subject_id"},
    ),
]


@pytest.mark.parametrize(
    ("edits", "masked"), [c[1:] for c in DECLARATIONS], ids=[c[0] for c in DECLARATIONS]
)
def test_the_replica_compiles_the_masks_it_inherits(
    tmp_path: Path, edits: list[tuple[str, str]], masked: set[str]
) -> None:
    root = estate(tmp_path, *edits)
    got = lake_masks(root)
    assert set(got) == masked
    if "notes" in masked:
        assert got["notes"].startswith("free_text")


def test_an_inherited_mask_compiles_byte_identical_to_a_declared_one(tmp_path: Path) -> None:
    """Leaving the column out is the same estate as declaring it: the compiled SQL of both,
    every file, is the same; and the attachment parses back as Databricks SQL."""
    declared = estate(tmp_path, name="declared")
    inherited = estate(tmp_path, (NOTES_LINE, ""), name="inherited")
    outs = []
    for root in (declared, inherited):
        out = tmp_path / f"{root.name}-out"
        run = run_cli(["compile", str(root), "--out", str(out)])
        assert run.returncode == 0, run.stderr
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert outs[0] == outs[1]
    attach = outs[1][Path("databricks/050_attachments.sql")].decode()
    stmt = next(s for s in attach.split(";") if f"{LAKE} ALTER COLUMN notes" in s)
    parsed = sqlglot.parse_one(stmt, read="databricks")
    assert isinstance(parsed, exp.Expression)
    assert "SET MASK governance.policies.free_text_mask" in stmt


def test_the_inherited_column_is_masked_for_every_persona_the_source_masks(tmp_path: Path) -> None:
    """analyze, ACC403 and probes read the same model: the probe of the notes passes on the
    replica, and lint is clean (before, the lakehouse answered clear)."""
    root = estate(tmp_path, (NOTES_LINE, ""))
    project = load_project(root)
    lake = project.model.datasets["assay_results_lake"]
    assert lake.columns["notes"].mask == "free_text"
    assert column_origin(project.model, "assay_results_lake", "NOTES") == ("assay_results", "NOTES")
    notes = [
        o
        for o in evaluate(project.model)
        if o.probe == "bench_chemist_reads_redacted_oncology_notes"
    ]
    assert {(o.surface, o.actual) for o in notes} == {
        ("warehouse_agent", "masked"),
        ("lakehouse_agent", "masked"),
    }
    assert "inherited from assay_results.NOTES" in next(
        o.detail for o in notes if o.surface == "lakehouse_agent"
    )
    run = run_cli(["lint", str(root)])
    assert run.returncode == 0, run.stdout


def test_a_dropped_source_mask_is_blamed_on_the_source(tmp_path: Path) -> None:
    """The replica inherits the notes; the change drops the mask on the source. Every widening,
    the replica's too, is caused by the source's line, never by the replica's declaration."""
    base = estate(tmp_path, (NOTES_LINE, ""), name="base")
    head = estate(
        tmp_path,
        (NOTES_LINE, ""),
        ("      NOTES: {type: VARCHAR, mask: free_text}", "      NOTES: {type: VARCHAR}"),
        name="head",
    )
    diff = exposure_diff(load_project(base), load_project(head))
    lake = [c for c in diff.widenings if c.dataset == "assay_results_lake"]
    assert lake, [c.dataset for c in diff.widenings]
    source_line = next(
        i
        for i, line in enumerate((head / "datasets.yaml").read_text().splitlines(), 1)
        if "NOTES: {type: VARCHAR}" in line
    )
    for c in diff.widenings:
        assert (c.cause.object, c.cause.location.line) == (
            "datasets.assay_results.columns.NOTES",
            source_line,
        )
    # the probe that fails says so too: the replica has no mask because its source has none
    lint = run_cli(["lint", str(head)])
    assert "a replica inherits its source's masks, and assay_results.NOTES has none" in lint.stdout


#: (case, the replica's omits line, line, column, message fragment)
BAD_OMITS = [
    (
        "a column the source does not mask",
        "    omits: [note]\n",
        53,
        13,
        "note is not a masked column of assay_results (did you mean 'NOTES'?)",
    ),
    (
        "a column the replica declares",
        "    omits: [SUBJECT_ID]\n",
        53,
        13,
        "SUBJECT_ID is declared under datasets.assay_results_lake.columns as subject_id and omitted",
    ),
]


@pytest.mark.parametrize(
    ("line_text", "line", "column", "message"),
    [c[1:] for c in BAD_OMITS],
    ids=[c[0] for c in BAD_OMITS],
)
def test_bad_omits_are_located(
    tmp_path: Path, line_text: str, line: int, column: int, message: str
) -> None:
    root = estate(tmp_path, (REPLICA_OF, REPLICA_OF + line_text))
    with pytest.raises(InputError) as err:
        load_project(root)
    found = [d for d in err.value.diagnostics if message in d.message]
    assert found, [str(d) for d in err.value.diagnostics]
    where = found[0].location
    assert (Path(where.file).name, where.line, where.column) == ("datasets.yaml", line, column)
    run = run_cli(["validate", str(root)])
    assert run.returncode == 2 and "Traceback" not in run.stderr


def test_omits_on_a_dataset_that_is_no_replica(tmp_path: Path) -> None:
    root = estate(
        tmp_path,
        ("    table: omics.variants.calls\n", "    table: omics.variants.calls\n    omits: [x]\n"),
    )
    with pytest.raises(InputError) as err:
        load_project(root)
    assert any("'omits' applies to replicas only" in d.message for d in err.value.diagnostics)


def test_the_schema_knows_omits() -> None:
    run = run_cli(["schema"])
    assert '"omits"' in run.stdout


@pytest.mark.parametrize(
    ("text", "source", "target", "expected"),
    [
        ("VARCHAR", "snowflake", "databricks", "STRING"),
        ("VARCHAR(64)", "snowflake", "databricks", "STRING"),
        ("STRING", "databricks", "snowflake", "VARCHAR"),
        ("NUMBER(38,0)", "snowflake", "databricks", "DECIMAL(38, 0)"),
        ("DATE", "databricks", "snowflake", "DATE"),
        ("VARCHAR", "snowflake", "snowflake", "VARCHAR"),
    ],
)
def test_an_inherited_type_is_spelled_for_the_replica(
    text: str, source: str, target: str, expected: str
) -> None:
    assert translate_type(text, source, target) == expected


# --------------------------------------------------------------------------------------------
# accord drift: the omits claim against the live table


class Columns:
    """An executor that answers the columns query from a fixed table (the rows are what
    ``information_schema.columns`` returns, keyed by lower-case column name)."""

    def __init__(self, columns: list[str] | None) -> None:
        self.columns = columns
        self.queries: list[str] = []

    def query(self, sql: str) -> list[dict[str, Any]]:
        from accord.compiler.connect.executor import ExecutionError

        self.queries.append(sql)
        if self.columns is None:
            raise ExecutionError("SQL access control error: insufficient privileges")
        return [{"column_name": c} for c in self.columns]


#: (case, the live table's columns (None: unreadable), findings' message fragments)
LIVE = [
    ("the table lacks it, as omits says", ["subject_id", "programme_code", "assay_value"], []),
    (
        "the table has it: read in the clear",
        ["subject_id", "programme_code", "notes"],
        [
            f"{LAKE} has column notes, which datasets.assay_results_lake.omits says it lacks: the mask free_text of assay_results.notes is not applied"
        ],
    ),
    ("the columns cannot be read", None, ["could not read the columns of " + LAKE]),
    ("no rows: no table, or not visible", [], ["information_schema.columns lists none"]),
]


@pytest.mark.parametrize(("live", "messages"), [c[1:] for c in LIVE], ids=[c[0] for c in LIVE])
def test_drift_checks_omits_on_the_live_table(
    tmp_path: Path, live: list[str] | None, messages: list[str]
) -> None:
    root = estate(
        tmp_path,
        (NOTES_LINE, ""),
        (REPLICA_OF, REPLICA_OF + "    omits: [notes]\n"),
        NO_LAKE_NOTES_PROBE,
    )
    project = load_project(root)
    executor = Columns(live)
    found = omission_findings(project, {"databricks": executor})
    assert [f.rule for f in found] == ["ACC701"] * len(messages)
    for f, fragment in zip(found, messages, strict=True):
        assert fragment in f.message
        assert (Path(f.location.file).name, f.location.line) == ("datasets.yaml", 53)
    # the query is Unity Catalog SQL: it parses, and names the replica's table
    (sql,) = executor.queries
    where = sqlglot.parse_one(sql, read="databricks").find(exp.Where)
    assert where is not None and {lit.this for lit in where.find_all(exp.Literal)} == {
        "assays",
        "results",
    }


def test_the_columns_query_is_each_platforms_sql() -> None:
    for table, platform, values in (
        ("DISCOVERY.ASSAYS.RESULTS", "snowflake", {"ASSAYS", "RESULTS"}),
        (LAKE, "databricks", {"assays", "results"}),
    ):
        parsed = sqlglot.parse_one(columns_query(table, platform), read=platform)
        table_node = parsed.find(exp.Table)
        assert table_node is not None and table_node.name.lower() == "columns"
        assert {lit.this for lit in parsed.find_all(exp.Literal)} == values


def test_an_omitted_column_is_no_divergence(tmp_path: Path) -> None:
    """A column the replica's table lacks shows nothing there: no ACC403 for it (the source
    masks it on the warehouse; the lakehouse has no such column to leak)."""
    root = estate(
        tmp_path,
        (NOTES_LINE, ""),
        (REPLICA_OF, REPLICA_OF + "    omits: [notes]\n"),
        NO_LAKE_NOTES_PROBE,
    )
    run = run_cli(["lint", str(root)])
    assert run.returncode == 0, run.stdout
    assert "no findings" in run.stdout
