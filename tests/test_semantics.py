"""The meaning of the model: which rows and which clear values each persona sees."""

from __future__ import annotations

import hashlib

import pytest

from accord.compiler.meaning import divergence
from accord.compiler.meaning import semantics as sem
from accord.compiler.model.validate import load_project
from tests.conftest import ROOT

REF = load_project(ROOT / "policies").model
ASFOUND = load_project(ROOT / "examples" / "as-found").model


@pytest.mark.parametrize(
    ("persona", "dataset", "values", "all_rows"),
    [
        ("bench_chemist", "assay_results", {"ONC-101", "IMM-310"}, False),
        ("clinical_pharmacologist", "assay_results", {"ONC-101", "IMM-310", "CNS-204"}, False),
        ("cro_collaborator", "assay_results", {"CNS-204"}, False),
        ("data_steward", "assay_results", set(), True),
        ("cro_collaborator", "variant_calls", {"CNS-204"}, False),
        ("bench_chemist", "gene_annotations", set(), True),
    ],
)
def test_rows_visible(persona, dataset, values, all_rows) -> None:
    rows = sem.rows_visible(REF, persona, dataset)
    assert rows.all is all_rows
    if not all_rows:
        assert rows.values == values
        assert not rows.sees(None), "NULL entitlement values are never visible when filtered"
        assert not rows.sees("UNGRANTED")


@pytest.mark.parametrize(
    ("persona", "column", "disposition"),
    [
        ("bench_chemist", "SUBJECT_ID", "masked"),
        # the unblinded grant sits on a secondary role: still clear
        ("clinical_pharmacologist", "SUBJECT_ID", "clear"),
        ("cro_collaborator", "NOTES", "masked"),
        ("clinical_pharmacologist", "NOTES", "clear"),
    ],
)
def test_column_view(persona, column, disposition) -> None:
    assert sem.column_view(REF, persona, "assay_results", column).disposition == disposition


def test_apply_mask_strategies() -> None:
    from accord.compiler.model.schema import Mask

    h = Mask(strategy="hash")
    assert sem.apply_mask(h, "S-1", "pepper") == hashlib.sha256(b"S-1pepper").hexdigest()
    assert sem.apply_mask(h, None, "pepper") is None
    assert sem.apply_mask(Mask(strategy="redact"), "x", None) == "***"
    assert sem.apply_mask(Mask(strategy="redact", replacement="[r]"), None, None) == "[r]"
    assert sem.apply_mask(Mask(strategy="nullify"), "x", None) is None
    assert sem.apply_mask(Mask(strategy="partial", keep_last=4), "5551234567", None) == "******4567"
    assert sem.apply_mask(Mask(strategy="partial", keep_last=4), "123", None) == "123"


def test_views_through_surfaces() -> None:
    direct = sem.dataset_view(REF, "cro_collaborator", "variant_calls")
    agent = sem.dataset_view(REF, "cro_collaborator", "variant_calls", "lakehouse_agent")
    assert direct == sem.dataset_view(REF, "cro_collaborator", "variant_calls", None)
    assert agent.row_disposition == "filtered" and agent.rows.values == {"CNS-204"}
    # as found: a pipeline with no catalog reads the governed table
    pipeline = sem.dataset_view(ASFOUND, "cro_collaborator", "variant_calls", "variant_annotation")
    assert pipeline.row_disposition == "ungoverned"
    assert all(c.disposition == "ungoverned" for c in pipeline.columns)


def test_runtime_refusal() -> None:
    # as found: ABAC on runtime 14.3 returns nothing
    reason = sem.runtime_refusal(ASFOUND, ASFOUND.surfaces["lakehouse_agent"])
    assert reason and "16.4" in reason
    assert sem.runtime_refusal(REF, REF.surfaces["lakehouse_agent"]) is None
    view = sem.dataset_view(ASFOUND, "bench_chemist", "variant_calls", "lakehouse_agent")
    assert view.row_disposition == "denied"


def test_reference_estate_has_no_divergence() -> None:
    assert divergence.divergences(REF) == []


def test_as_found_divergences_name_the_loosest_surface() -> None:
    found = divergence.divergences(ASFOUND)
    loose = {(d.persona, d.loose.surface) for d in found}
    assert ("cro_collaborator", "variant_annotation") in loose
    assert all(d.loose.surface != d.strict.surface for d in found)
    # deterministic
    assert found == divergence.divergences(ASFOUND)
