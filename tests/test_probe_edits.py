"""A removed probe and a loosened ``expect`` are policy changes: ``accord diff`` reports them
as widenings of what is checked, naming the probe's owner, in every format, and ``--fail-on
widening`` fails on them (issue 24, part 2). The base and head are copies of the reference
estate (policies/) with one probe edited; nothing else changes, so no view changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"


def estates(tmp_path: Path, edit) -> tuple[Path, Path]:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(POLICIES, base)
    shutil.copytree(POLICIES, head)
    doc = yaml.safe_load((head / "probes.yaml").read_text())
    edit(doc["probes"])
    (head / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return base, head


def diff(base: Path, head: Path, fmt: str) -> tuple[int, str]:
    code, out, err = run_cli(
        ["diff", str(head), "--base", f"dir:{base}", "--fail-on", "widening", "--format", fmt]
    )
    return code, out + err


def delete(probes: dict) -> None:
    del probes["pharmacologist_sees_cns_subjects"]


def unmask(probes: dict) -> None:
    probes["cro_cannot_unmask_cns_subjects"]["expect"]["warehouse_agent"] = "clear"


def filtered(probes: dict) -> None:
    probes["cro_sees_no_oncology_variants"]["expect"]["lakehouse_agent"] = "filtered"


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "github"])
def test_a_deleted_probe_fails_widening_naming_its_owner(tmp_path: Path, fmt: str) -> None:
    base, head = estates(tmp_path, delete)
    code, out = diff(base, head, fmt)
    assert code == 1, out
    assert "pharmacologist_sees_cns_subjects" in out
    assert "clinical-data-office" in out  # the deleted probe's owner
    assert "removed" in out


@pytest.mark.parametrize("edit", [unmask, filtered])
@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "github"])
def test_a_loosened_expect_fails_widening(tmp_path: Path, edit, fmt: str) -> None:
    base, head = estates(tmp_path, edit)
    code, out = diff(base, head, fmt)
    assert code == 1, out
    assert "loosened" in out and "data-governance" in out


def test_the_json_record_of_an_edit(tmp_path: Path) -> None:
    base, head = estates(tmp_path, unmask)
    code, out = diff(base, head, "json")
    doc = json.loads(out.split("\n}\n")[0] + "\n}")
    assert code == 1
    (edit,) = doc["probe_edits"]
    assert edit["probe"] == "cro_cannot_unmask_cns_subjects"
    assert (edit["surface"], edit["before"], edit["after"]) == (
        "warehouse_agent",
        "masked",
        "clear",
    )
    assert edit["file"] == str(head / "probes.yaml") and edit["line"] > 1
    assert doc["summary"]["probe_edits"] == 1 and doc["summary"]["widenings"] == 0


def test_a_dropped_surface_is_loosened(tmp_path: Path) -> None:
    """An ``expect`` that no longer names a surface it named: reached through a surface that
    stops reading the replica (a narrowing of views, but the probe checks less)."""
    base, head = estates(tmp_path, lambda p: None)
    surfaces = yaml.safe_load((head / "surfaces.yaml").read_text())
    surfaces["surfaces"]["lakehouse_agent"]["reads"] = ["variant_calls"]
    (head / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    doc = yaml.safe_load((head / "probes.yaml").read_text())
    # the CRO probe still reaches the lakehouse agent through its subject domain (variant_calls)
    for name in ("pharmacologist_sees_cns_subjects", "bench_chemist_reads_redacted_oncology_notes"):
        del doc["probes"][name]["expect"]["lakehouse_agent"]
    (head / "probes.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out = diff(base, head, "text")
    assert code == 1, out
    assert "no longer says what lakehouse_agent should answer" in out


def test_a_tightened_expect_and_an_unchanged_estate_pass(tmp_path: Path) -> None:
    base, head = estates(tmp_path, lambda p: None)
    assert diff(base, head, "text")[0] == 0
    base, head = estates(tmp_path / "t", unmask)
    code, out = diff(head, base, "text")  # from the copy expecting clear back to masked
    assert code == 0, out
    assert "loosened" not in out
