"""Small things a new user trips on: ``accord lint --plans DIR --ledger FILE`` before the first
apply (no ledger yet) reads an empty ledger; ``accord diff``'s counts are the rows it prints,
and every row names its surfaces; a plan that removes a mask says, in its stage file, that it
widens exposure and for whom."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.plan_helpers import reference_plan

SECRETS = {"SUBJECT_SALT_SNOWFLAKE": "sf-7c1d-secret", "SUBJECT_SALT_DATABRICKS": "dbx-90aa-secret"}


def test_lint_before_the_first_apply_reads_an_empty_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    plans = reference_plan(tmp_path / "migrations").parent
    ledger = plans / "ledger.jsonl"
    assert not ledger.exists()
    args = ["lint", str(ROOT / "policies"), "--plans", str(plans), "--ledger", str(ledger)]
    run = run_cli([*args, "--no-cache"])
    assert run.returncode == 0 and "no findings" in run.stdout, run.stdout + run.stderr
    assert not ledger.exists()  # linting writes no ledger
    # the same options read a ledger once there is one: half a cutover group is ACC601
    data = json.loads(next(plans.glob("0001_*/plan.json")).read_text())
    stage = next(s for s in data["stages"] if s["id"] == "05_snowflake_cutover_subject")
    record = {"plan": data["id"], "stage": stage["id"], "platform": "snowflake"}
    record |= {"status": "applied", "at": "2026-11-03T10:00:00+00:00", "sha256": stage["sha256"]}
    ledger.write_text(json.dumps(record) + "\n")
    run = run_cli([*args, "--no-cache"])
    assert run.returncode == 1 and "ACC601" in run.stdout, run.stdout + run.stderr
    # a directory is still no ledger
    assert run_cli([*args[:-1], str(plans), "--no-cache"]).returncode == 2


def _rows(markdown: str, title: str) -> list[list[str]]:
    """The table rows under ``#### {title}: N`` (cells split), with N."""
    section = markdown.split(f"#### {title}: ", 1)[1].split("\n#### ", 1)[0]
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| persona |", "| whose view |"))
    ]


def test_diff_counts_are_the_rows_printed_and_rows_name_their_surfaces() -> None:
    args = ["diff", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    markdown = run_cli([*args, "--format", "markdown"]).stdout
    text = run_cli(args).stdout
    changes = json.loads(run_cli([*args, "--format", "json"]).stdout)["changes"]
    widen, narrow = _rows(markdown, "Widenings"), _rows(markdown, "Narrowings")
    assert widen and narrow
    told = re.search(r"\*\*(\d+) widenings?, (\d+) narrowings?[;*]", markdown)
    assert told is not None
    assert (int(told[1]), int(told[2])) == (len(widen), len(narrow))
    assert f"#### Widenings: {len(widen)}\n" in markdown
    assert f"#### Narrowings: {len(narrow)}\n" in markdown
    # text: the same rows, one line each, and the same verdict
    listed = {"Widenings:": 0, "Narrowings:": 0}
    current = None
    for line in text.splitlines():
        if line in listed:
            current = line
        elif not line.startswith("  "):
            current = None
        elif current and not line.startswith("      "):
            listed[current] += 1
    assert (listed["Widenings:"], listed["Narrowings:"]) == (len(widen), len(narrow))
    assert text.splitlines()[-1].startswith(
        f"accord diff: {told[1]} widenings, {told[2]} narrowings"
    )
    # every change (JSON: one per place) is in a row of its persona naming its place
    rows = widen + narrow
    for c in changes:
        place = c["surface"] or f"directly on {c['platform']}"
        # whose view: the persona, or the personas holding the identity ("a, b as <identity>")
        holders = c["personas"] if c.get("identity") else [c["persona"]]
        assert any(
            r[0].split(" as ", 1)[0].split(", ") == holders and place in r[2] for r in rows
        ), (holders, place)
    assert all("every surface" not in r[2] or "(" in r[2] for r in rows)


def test_a_plan_that_removes_a_mask_says_it_widens_and_for_whom(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(ROOT / "policies", base)
    shutil.copytree(ROOT / "policies", head)
    datasets = head / "datasets.yaml"
    text = datasets.read_text()
    assert text.count("NOTES: {type: VARCHAR, mask: free_text}") == 1
    datasets.write_text(
        text.replace("NOTES: {type: VARCHAR, mask: free_text}", "NOTES: {type: VARCHAR}")
    )
    out = tmp_path / "migrations"
    run = run_cli(["plan", str(head), "--base", f"dir:{base}", "--out", str(out)])
    assert run.returncode == 0, run.stderr
    model = load_project(base).model
    unmasked = set(model.masks["free_text"].unmasked_for)
    gaining = sorted(p for p, held in model.personas.items() if not unmasked & set(held))
    keeping = sorted(set(model.personas) - set(gaining))
    assert gaining and keeping
    stages = sorted(out.glob("0001_*/*.sql"))
    detach = [
        p for p in stages if "UNSET MASKING POLICY" in p.read_text() and ".rollback" not in p.name
    ]
    assert len(detach) == 1
    header = " ".join(
        line.removeprefix("--").strip()
        for line in detach[0].read_text().splitlines()
        if line.startswith("--")
    )
    assert "WIDENS EXPOSURE" in header
    assert (
        "removes the redact mask free_text from column NOTES of DISCOVERY.ASSAYS.RESULTS" in header
    )
    assert f"the personas {', '.join(gaining)}," in header
    assert (
        f"until now only the principals of its unmasked_for ({', '.join(sorted(unmasked))})"
        in header
    )
    named = header.split("the personas ", 1)[1].split(", and every other role", 1)[0]
    assert named.split(", ") == gaining  # and none who already saw it in the clear
    others = [p for p in stages if p != detach[0]]
    assert all("WIDENS EXPOSURE" not in p.read_text() for p in others)


def test_a_plan_that_removes_no_mask_says_nothing_of_widening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    plan = reference_plan(tmp_path / "migrations")
    assert all("WIDENS EXPOSURE" not in p.read_text() for p in plan.glob("*.sql"))
