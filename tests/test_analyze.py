"""accord analyze: the surface table, per-persona matrices and divergences, from the model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from accord.compiler.commands.analyze import print_rich
from accord.compiler.meaning.analyze import analyze, to_text
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT

POLICIES = ROOT / "policies"
AS_FOUND = ROOT / "examples" / "as-found"


def run(*args: str) -> tuple[int, str]:
    """(exit code, what the command printed: stdout, then stderr)."""
    code, out, err = run_cli(list(args))
    return code, out + err


@pytest.mark.parametrize(("estate", "code"), [(POLICIES, 0), (AS_FOUND, 1)])
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_exit_code_follows_divergences(estate: Any, code: int, fmt: str) -> None:
    got, out = run("analyze", str(estate), "--format", fmt)
    assert got == code
    assert out.strip()


def _json(estate: Any) -> dict[str, Any]:
    code, out = run("analyze", str(estate), "--format", "json")
    assert code in (0, 1)
    return json.loads(out)


def test_json_is_stable_and_sorted() -> None:
    _, first = run("analyze", str(AS_FOUND), "--format", "json")
    _, second = run("analyze", str(AS_FOUND), "--format", "json")
    assert first == second
    doc = json.loads(first)
    assert sorted(doc) == ["divergences", "personas", "summary", "surfaces"]
    assert json.dumps(doc, indent=2, sort_keys=True) == first.strip()


# (surface, mode, enforced by, a phrase of where enforcement stops or None)
SURFACES = [
    (
        AS_FOUND,
        "warehouse_agent",
        "catalog",
        ["row access policy", "masking policies"],
        "owner's rights",
    ),
    (AS_FOUND, "lakehouse_agent", "no-rows", ["nothing"], "16.4 or later"),
    (AS_FOUND, "variant_annotation", "none", ["nothing"], "no catalog"),
    (POLICIES, "lakehouse_agent", "catalog", ["row filter", "column masks"], None),
    (POLICIES, "variant_annotation", "none", ["nothing"], None),
    (
        POLICIES,
        "warehouse_agent",
        "catalog",
        ["row access policy", "masking policies"],
        "re-applies",
    ),
]


@pytest.mark.parametrize(("estate", "surface", "mode", "enforced", "stop"), SURFACES)
def test_surface_table(
    estate: Any, surface: str, mode: str, enforced: list[str], stop: str | None
) -> None:
    rows = {s["surface"]: s for s in _json(estate)["surfaces"]}
    row = rows[surface]
    assert row["mode"] == mode
    assert row["enforced_by"] == enforced
    if stop is None:
        assert row["stops"] == []
    else:
        assert any(stop in s for s in row["stops"]), row["stops"]


# (estate, persona, dataset, column or None for rows, surface, disposition)
CELLS = [
    (AS_FOUND, "cro_collaborator", "variant_calls", None, "variant_annotation", "ungoverned"),
    (AS_FOUND, "cro_collaborator", "variant_calls", None, "lakehouse_agent", "denied"),
    (
        AS_FOUND,
        "clinical_pharmacologist",
        "assay_results",
        "SUBJECT_ID",
        "warehouse_agent",
        "clear",
    ),
    (AS_FOUND, "bench_chemist", "assay_results", "NOTES", "warehouse_agent", "masked"),
    (POLICIES, "cro_collaborator", "variant_calls", None, "lakehouse_agent", "filtered"),
    (POLICIES, "data_steward", "assay_results", None, "warehouse_agent", "clear"),
    (POLICIES, "data_steward", "assay_results_lake", "subject_id", "lakehouse_agent", "masked"),
    (
        POLICIES,
        "clinical_pharmacologist",
        "assay_results_lake",
        "notes",
        "lakehouse_agent",
        "clear",
    ),
]


@pytest.mark.parametrize(
    ("estate", "persona", "dataset", "column", "surface", "disposition"), CELLS
)
def test_matrix_cells(
    estate: Any, persona: str, dataset: str, column: str | None, surface: str, disposition: str
) -> None:
    cells = _json(estate)["personas"][persona]
    found = [
        c for c in cells if (c["dataset"], c["column"], c["surface"]) == (dataset, column, surface)
    ]
    assert [c["disposition"] for c in found] == [disposition]


def test_filtered_rows_name_their_values() -> None:
    cells = _json(POLICIES)["personas"]["cro_collaborator"]
    rows = [c for c in cells if c["dataset"] == "variant_calls" and c["column"] is None]
    assert rows[0]["values"] == ["CNS-204"]


def test_ungoverned_dataset_is_not_in_the_matrix() -> None:
    cells = _json(POLICIES)["personas"]["bench_chemist"]
    assert "gene_annotations" not in {c["dataset"] for c in cells}


def test_as_found_divergences_name_the_deciding_surface() -> None:
    doc = _json(AS_FOUND)
    rows = [
        d
        for d in doc["divergences"]
        if d["aspect"] == "rows" and d["facts"] == ["dataset", "variant_calls"]
    ]
    assert len(rows) == 1
    assert rows[0]["decides"] == "variant_annotation"
    assert rows[0]["loose"]["surface"] == "variant_annotation"
    assert rows[0]["strict"]["surface"] == "lakehouse_agent"
    assert "cro_collaborator" in rows[0]["personas"]
    # the lakehouse agent's runtime returns no rows (ACC401): it is compared by what its
    # policies intend, as lint's ACC403 does, so the pipeline is looser than that
    assert "; lakehouse_agent shows rows of " in rows[0]["detail"]
    # divergence.divergences reports each loose place once, against the strictest place that
    # reads the same facts (linear in places, not pairwise): for the CRO collaborator the
    # pipeline's rows, its clear subject_id against the agent's masked one, and the subject
    # domain; and the lakehouse copy of the trial outcomes, row by row and its SUBJECT_ID in
    # the clear, against the warehouse's aggregates and hidden SUBJECT_ID (issue 40)
    assert doc["summary"]["per_persona"]["cro_collaborator"] == 5
    assert doc["summary"]["divergences"] == 15


def test_policies_have_no_divergence() -> None:
    doc = _json(POLICIES)
    assert doc["divergences"] == []
    assert set(doc["summary"]["per_persona"].values()) == {0}


def test_markdown_is_a_pasteable_table() -> None:
    _, out = run("analyze", str(AS_FOUND), "--format", "markdown")
    assert "### Surfaces\n\n| surface | platform | identity | runtime |" in out
    assert "|---|---|---|---|---|---|" in out
    assert "### Persona cro_collaborator" in out
    assert "### Divergences (ACC403)" in out
    assert out.rstrip().endswith("the loosest surface answers for the mesh")


def test_plain_text_off_a_terminal_and_rich_on_one(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = run("analyze", str(POLICIES))
    assert "┃" not in out and "Persona data_steward" in out
    result = analyze(load_project(POLICIES).model)
    print_rich(result)
    shown = capsys.readouterr().out
    assert "┃" in shown or "│" in shown
    assert "Persona data_steward" in shown
    assert to_text(result).splitlines()[-1] == shown.strip().splitlines()[-1]
