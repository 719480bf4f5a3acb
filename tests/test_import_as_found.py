"""``accord import --platform P`` of ``examples/as-found`` deployed on the stand-ins (issue 43's
done-when): the estate as first found comes back with its defects as they are, never repaired:
the warehouse's CURRENT_ROLE() lookup is a hand-written predicate (ACC101), the unsalted subject
masks are hashes without a salt (ACC201), its outcomes table keeps its aggregation and projection
policies; the lakehouse's ABAC policies, governed tags and mask
functions come back as ``style: abac``; and ``accord plan DIR --base live:P`` right after plans
no change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.objects import Tag
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms, SharedPlatforms
from tests.test_import_live import deploy, import_live, model, plans_no_change

AS_FOUND = ROOT / "examples" / "as-found"

pytestmark = pytest.mark.slow  # end-to-end live runs


@pytest.fixture(scope="module")
def deployed_once(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp) as platforms:
        # governed tags are account-level: an account admin creates them (targets/abac.py)
        for tag in lower_all(load_project(AS_FOUND))["databricks"].of(Tag):
            platforms.databricks.govern_tag(tag.name, tag.allowed_values, tag.comment)
        for platform in ("snowflake", "databricks"):
            deploy(AS_FOUND, platform, tmp / platform)
    return shared_platforms


@pytest.fixture
def deployed(deployed_once: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> Platforms:
    return deployed_once.reset(monkeypatch)


def findings(directory: Path) -> list[dict[str, object]]:
    code, out, err = run_cli(["lint", str(directory), "--format", "json"])
    assert code == 1, err
    return json.loads(out)["findings"]


def test_the_warehouse_as_found_keeps_its_defects_and_plans_no_change(
    deployed: Platforms, tmp_path: Path
) -> None:
    out = tmp_path / "imported"
    code, stdout, err = import_live("snowflake", out)
    assert code == 0, stdout + err
    found = model(out)
    results = found["datasets"]["assay_results"]
    # named from its hand-written filter (accord's own name for it): the round trip needs it
    assert sorted(found["datasets"]) == ["assay_results", "trial_outcomes"]
    assert "CURRENT_ROLE()" in results["row_filter"]["expression"]["snowflake"]
    # the outcomes shared as aggregates only (issue 40): its aggregation and projection
    # policies, as they are (groups of 5: the as-found defect is ACC403 once a replica is said)
    assert found["datasets"]["trial_outcomes"] == {
        "platform": "snowflake",
        "table": "CLINICAL.OUTCOMES.TRIAL_OUTCOMES",
        "aggregation": {"min_group_size": 5},
        "columns": {
            "SUBJECT_ID": {"type": "VARCHAR", "projection": {"allowed_for": ["clinical_unblinded"]}}
        },
    }
    assert found["masks"]["subject_pseudonym"] == {
        "strategy": "hash",
        "unmasked_for": ["clinical_unblinded"],
    }
    rules = {(f["rule"], f["object"]) for f in findings(out)}
    assert rules == {
        ("ACC101", "datasets.assay_results"),
        ("ACC201", "masks.subject_pseudonym"),
    }
    plans_no_change(out, "snowflake", tmp_path)


def test_the_lakehouse_as_found_comes_back_as_abac_and_plans_no_change(
    deployed: Platforms, tmp_path: Path
) -> None:
    out = tmp_path / "imported"
    code, stdout, err = import_live("databricks", out)
    assert code == 0, stdout + err
    found = model(out)
    assert found["platforms"]["databricks"] == {
        "governance_schema": "governance.policies",
        "style": "abac",
    }
    assert sorted(d["table"] for d in found["datasets"].values()) == [
        "discovery_lake.assays.results",
        "omics.variants.calls",
    ]
    assert found["masks"]["free_text"]["unmasked_for"] == ["clinical_unblinded"]
    assert "salt" not in found["masks"]["subject_pseudonym"]
    assert {f["rule"] for f in findings(out)} == {"ACC201"}
    plans_no_change(out, "databricks", tmp_path)
