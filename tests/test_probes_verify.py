"""Probes at depth 2: executed on DuckDB through the compiled policies, as the persona."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.compiler.meaning.probes import evaluate
from accord.compiler.model.validate import load_project
from accord.compiler.verify.run import verify
from tests import test_verify
from tests.conftest import ROOT

# the compiled reference output, and a fresh copy of it per test (test_verify's fixtures)
compiled_tree = test_verify.compiled_tree
compiled = test_verify.compiled

POLICIES = ROOT / "policies"
AS_FOUND = ROOT / "examples" / "as-found"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_reference_probes_pass_through_the_compiled_sql_and_agree_with_the_model() -> None:
    project = load_project(POLICIES)
    report = verify(project)
    assert report.mismatches == []
    executed = {(o.probe, o.surface): (o.actual, o.depth) for o in report.probes}
    modelled = {(o.probe, o.surface): o.actual for o in evaluate(project.model)}
    assert {k: v[0] for k, v in executed.items()} == modelled
    # every reference surface is a catalog surface: all answered by executing SQL
    assert {d for _, d in executed.values()} == {"compiled"}


#: (file, text, replacement, probe that must fail, surface, actual)
LEAKS = [
    (
        "snowflake/040_masking_policies.sql",
        "ELSE SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)",
        "ELSE VAL",
        "cro_cannot_unmask_cns_subjects",
        "warehouse_agent",
        "clear",
    ),
    (
        "databricks/040_masks.sql",
        "ELSE sha2(concat(val, governance.policies.subject_pseudonym_salt()), 256)",
        "ELSE val",
        "cro_cannot_unmask_cns_subjects",
        "lakehouse_agent",
        "clear",
    ),
    (
        "databricks/040_masks.sql",
        "ELSE '[redacted]'",
        "ELSE val",
        "bench_chemist_reads_redacted_oncology_notes",
        "lakehouse_agent",
        "clear",
    ),
    (
        "snowflake/040_masking_policies.sql",
        "WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED')\n    THEN VAL",
        "WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED'\n    THEN VAL",
        "pharmacologist_sees_cns_subjects",
        "warehouse_agent",
        "masked",
    ),
]


@pytest.mark.parametrize(("file", "old", "new", "name", "surface", "actual"), LEAKS)
def test_a_hand_edited_compiled_policy_fails_the_probe_covering_it(
    compiled: Path, file: str, old: str, new: str, name: str, surface: str, actual: str
) -> None:
    edit(compiled / file, old, new)
    report = verify(load_project(POLICIES), str(compiled))
    probes = [m for m in report.mismatches if m.kind == "probe"]
    hit = [m for m in probes if f"probe {name} " in m.message and f"on {surface}:" in m.message]
    assert hit, [m.message for m in report.mismatches]
    m = hit[0]
    owner = load_project(POLICIES).model.probes[name].owner
    assert f"(owner {owner})" in m.message
    assert m.actual == actual
    assert any((o.file or "").endswith(file) for o in m.objects), m.objects
    # only the probes that cover the edit fail
    failing = {(o.probe, o.surface) for o in report.probes if not o.ok}
    assert (name, surface) in failing
    assert all(s == surface for _, s in failing)


def test_as_found_compiled_sql_decides_what_the_model_cannot() -> None:
    report = verify(load_project(AS_FOUND))
    got = {(o.probe, o.surface): (o.actual, o.depth) for o in report.probes}
    # the CURRENT_ROLE predicate, executed: the pharmacologist (grant on a secondary role) is
    # denied CNS-204; the CRO and the chemist get what their primary role holds
    assert got[("pharmacologist_sees_cns_subjects", "warehouse_agent")] == ("denied", "compiled")
    assert got[("cro_cannot_unmask_cns_subjects", "warehouse_agent")] == ("masked", "compiled")
    assert got[("bench_chemist_reads_redacted_oncology_notes", "warehouse_agent")] == (
        "masked",
        "compiled",
    )
    # surfaces without a catalog, or whose runtime returns nothing: answered by the model
    assert got[("cro_cannot_unmask_cns_subjects", "variant_annotation")] == ("ungoverned", "model")
    assert got[("cro_sees_no_oncology_variants", "lakehouse_agent")] == ("empty", "model")
    failing = sorted(k for k, (a, _) in got.items() if a is None or not _ok(report, k))
    assert ("pharmacologist_sees_cns_subjects", "warehouse_agent") in failing
    assert ("cro_cannot_unmask_cns_subjects", "warehouse_agent") not in failing


def _ok(report, key) -> bool:  # type: ignore[no-untyped-def]
    return next(o.ok for o in report.probes if (o.probe, o.surface) == key)
