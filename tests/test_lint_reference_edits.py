"""The reference estate (policies/), edited as a governance engineer might, through `accord lint`:
an everyone identity given rows or clear values (ACC508), a new principal on another's role
and group (ACC509), a partial mask that keeps the whole of a column (ACC206, a warning past
half). Each finding is located at the YAML node that causes it, with its severity in JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.lint.finding import Finding
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT


def _estate(tmp_path: Path, edits: dict[str, list[tuple[str, str]]]) -> Path:
    """policies/ copied, each file's text edited (every old text must be there once)."""
    root = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", root)
    for name, changes in edits.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        for old, new in changes:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        path.write_text(text, encoding="utf-8")
    return root


def _lint(root: Path, *options: str) -> tuple[int, list[dict[str, Any]]]:
    result = run_cli(["lint", str(root), "--format", "json", "--no-cache", *options])
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def _at(root: Path, *paths: tuple[Any, ...]) -> list[tuple[str, int, int]]:
    project = load_project(root)
    return sorted(
        (loc.file, loc.line, loc.column) for loc in (project.loc(*path) for path in paths)
    )


def _of(findings: list[dict[str, Any]], rule: str) -> list[tuple[str, int, int]]:
    return sorted((f["file"], f["line"], f["column"]) for f in findings if f["rule"] == rule)


def _findings(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule]


def test_the_reference_estate_is_clean_of_the_new_rules(tmp_path: Path) -> None:
    code, findings = _lint(_estate(tmp_path, {}))
    assert (code, findings) == (0, [])


@pytest.mark.parametrize(
    ("platform", "old", "new"),
    [
        ("databricks", "databricks: clinical-unblinded", "databricks: account users"),
        ("snowflake", "snowflake: CLINICAL_UNBLINDED", "snowflake: PUBLIC"),
    ],
)
def test_an_identity_changed_to_everyone_is_found_where_it_is_granted(
    tmp_path: Path, platform: str, old: str, new: str
) -> None:
    """A principal's identity changed to one every user holds: every user now gets its rows
    and clear values, on that platform, at each place the model grants them."""
    root = _estate(tmp_path, {"principals.yaml": [(old, new)]})
    code, findings = _lint(root)
    assert code == 1
    # clinical_unblinded: two programme values (datasets on both platforms filter by
    # programme) and the clear value of both masks (columns on both platforms use them)
    assert _of(findings, "ACC508") == _at(
        root,
        ("entitlements", "programme", "ONC-101", 1),
        ("entitlements", "programme", "CNS-204", 0),
        ("masks", "subject_pseudonym", "unmasked_for", 0),
        ("masks", "free_text", "unmasked_for", 0),
    )
    for f in _findings(findings, "ACC508"):
        assert f["severity"] == "error"
        assert f"on {platform}, which every user holds" in f["message"]
    # and what follows, judged by identity: every user of the platform now holds the
    # principal's grants, so that platform's agent answers looser than the other's (ACC403)
    # and the probes expecting a mask or a denial there fail (ACC404); nothing else
    assert {f["rule"] for f in findings} == {"ACC508", "ACC403", "ACC404"}
    mine, other = (
        ("warehouse_agent", "lakehouse_agent")
        if platform == "snowflake"
        else ("lakehouse_agent", "warehouse_agent")
    )
    assert _findings(findings, "ACC403")
    for f in _findings(findings, "ACC403"):
        assert f["message"].startswith(f"{mine} is looser than {other} on ")
    assert _findings(findings, "ACC404")
    for f in _findings(findings, "ACC404"):
        assert f" on {mine} expected " in f["message"]


def test_a_new_principal_on_the_cros_role_and_group_is_a_collision(tmp_path: Path) -> None:
    """The CRO's own role and group under a new name, granted a programme the CRO is not:
    on each platform the role (group) holds both grants."""
    principals = (
        "  cro_external:\n    snowflake: CRO_EXTERNAL\n    databricks: cro-external\n",
        "  cro_external:\n    snowflake: CRO_EXTERNAL\n    databricks: cro-external\n"
        "  cro_audit:\n    snowflake: CRO_EXTERNAL\n    databricks: CRO-External\n",
    )
    grant = ("IMM-310: [bench_chemist]", "IMM-310: [bench_chemist, cro_audit]")
    root = _estate(
        tmp_path,
        {
            "principals.yaml": [principals],
            "entitlements.yaml": [grant],
        },
    )
    code, findings = _lint(root)
    assert code == 1
    assert _of(findings, "ACC509") == _at(
        root, ("principals", "cro_audit", "snowflake"), ("principals", "cro_audit", "databricks")
    )
    for f in (f for f in findings if f["rule"] == "ACC509"):
        assert "principals cro_external and cro_audit are both" in f["message"]
        assert "only cro_audit: the rows of programme IMM-310" in f["message"]
        assert "only cro_external: the rows of programme CNS-204" in f["message"]


def test_a_partial_mask_is_judged_against_each_columns_declared_length(tmp_path: Path) -> None:
    """`keep_last: 40` on VARCHAR(34) compiles to the clear value: an error there; a warning
    on VARCHAR(60), where it shows more than half; nothing on a VARCHAR without a length.
    Warnings alone fail the lint only with --fail-on warning."""
    mask = "\n  account_tail:\n    strategy: partial\n    keep_last: 40\n"
    columns = (
        "      NOTES: {type: VARCHAR, mask: free_text}\n",
        "      NOTES: {type: VARCHAR, mask: free_text}\n"
        "      IBAN: {type: VARCHAR(34), mask: account_tail}\n"
        "      ADDRESS: {type: VARCHAR(60), mask: account_tail}\n"
        "      REMARK: {type: VARCHAR, mask: account_tail}\n",
    )
    masks_text = (ROOT / "policies" / "masks.yaml").read_text(encoding="utf-8")
    root = _estate(
        tmp_path,
        {"masks.yaml": [(masks_text, masks_text + mask)], "datasets.yaml": [columns]},
    )
    code, findings = _lint(root)
    assert code == 1
    mine = sorted((f["line"], f["severity"]) for f in findings if f["rule"] == "ACC206")
    at = _at(
        root,
        ("datasets", "assay_results", "columns", "IBAN", "mask"),
        ("datasets", "assay_results", "columns", "ADDRESS", "mask"),
    )
    assert _of(findings, "ACC206") == at
    assert mine == [(at[0][1], "error"), (at[1][1], "warning")]
    # the column shown whole on Snowflake is looser than its lakehouse replica's (a STRING
    # without a length, where the same mask keeps a part): ACC403 names it; nothing else
    assert {f["rule"] for f in findings} == {"ACC206", "ACC403"}
    (looser,) = _findings(findings, "ACC403")
    assert "assay_results.IBAN is clear on warehouse_agent" in looser["message"]
    assert "assay_results_lake.iban is masked on lakehouse_agent" in looser["message"]
    # the error alone fails the lint: with the column at VARCHAR(34) gone, only the warning
    (root / "datasets.yaml").write_text(
        (root / "datasets.yaml")
        .read_text(encoding="utf-8")
        .replace("      IBAN: {type: VARCHAR(34), mask: account_tail}\n", ""),
        encoding="utf-8",
    )
    code, findings = _lint(root)
    assert code == 0 and [f["severity"] for f in findings] == ["warning"]
    assert _lint(root, "--fail-on", "warning")[0] == 1


def test_a_findings_own_severity_survives_its_record() -> None:
    """A warning of an error rule is read back from its JSON record (the lint cache stores
    records) as a warning, and an error as the rule's own severity."""
    from accord.compiler.core.errors import Location

    warned = Finding(Location("d.yaml", 3, 7), "ACC206", "datasets.d", "m", "f", level="warning")
    plain = Finding(Location("d.yaml", 4, 7), "ACC206", "datasets.d", "m", "f")
    assert warned.to_record()["severity"] == "warning" and plain.severity == "error"
    for f in (warned, plain):
        assert Finding.from_record(f.to_record()) == f
    with pytest.raises(ValueError):
        Finding.from_record({**plain.to_record(), "severity": "fatal"})
