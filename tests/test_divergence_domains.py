"""ACC403 without false positives, and one answer (issue 11, item 6): identifier domains are
compared by how the identifier *value* is exposed where the persona reaches rows; ``accord
analyze`` and ``accord lint`` report the same set through ``divergence.divergences``, and
analyze honours ``ignore: {ACC403: ...}``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.lint.engine import lint_project
from accord.compiler.meaning import divergence
from accord.compiler.meaning.analyze import analyze
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import DELETE, edited, write_estate

#: The false positive from the field: one platform, one surface, two datasets holding the
#: same kind of identifier under different entitlement filters, one redact mask.
FIELD: dict[str, Any] = {
    "version": 1,
    "platforms": {"snowflake": {"governance_schema": "GOV.POL"}},
    "principals": {"analyst": {"snowflake": "ANALYST"}, "auditor": {"snowflake": "AUDITOR"}},
    "entitlements": {
        "region": {"EU": ["analyst", "auditor"], "US": ["auditor"]},
        "segment": {"retail": ["auditor"]},
    },
    "masks": {"customer_ref": {"strategy": "redact", "unmasked_for": ["auditor"]}},
    "datasets": {
        "orders": {
            "platform": "snowflake",
            "table": "SALES.CRM.ORDERS",
            "row_filter": {"entitlement": "region", "column": "REGION"},
            "columns": {
                "CUSTOMER_ID": {"type": "VARCHAR", "mask": "customer_ref", "identifier": "customer"}
            },
        },
        "tickets": {
            "platform": "snowflake",
            "table": "SALES.CRM.TICKETS",
            "row_filter": {"entitlement": "segment", "column": "SEGMENT"},
            "columns": {
                "CUSTOMER_ID": {"type": "VARCHAR", "mask": "customer_ref", "identifier": "customer"}
            },
        },
    },
    "surfaces": {
        "sf_agent": {"platform": "snowflake", "reads": ["orders", "tickets"], "identity": "caller"}
    },
    "personas": {"analyst": ["analyst"], "auditor": ["auditor"]},
}


def estate(patch: dict[str, Any]) -> dict[str, Any]:
    return edited(FIELD, patch)


TWO_SURFACES = {
    "surfaces": {
        "sf_agent": {"reads": ["orders"]},
        "sf_tool": {"platform": "snowflake", "reads": ["tickets"], "identity": "caller"},
    }
}
TICKETS_CLEAR = {"datasets": {"tickets": {"columns": {"CUSTOMER_ID": {"mask": DELETE}}}}}
TICKETS_FOR_ANALYST = {"entitlements": {"segment": {"retail": ["auditor", "analyst"]}}}


def _model_case(patches: list[dict[str, Any]]) -> dict[str, Any]:
    return edited(FIELD, *patches)


CASES = [
    # (id, patches, expected divergences as (persona, loose surface, strict surface))
    pytest.param([], set(), id="field: one surface, two filters, one redact mask"),
    pytest.param(
        [TICKETS_CLEAR, TICKETS_FOR_ANALYST], set(), id="one surface is never looser than itself"
    ),
    pytest.param([TWO_SURFACES], set(), id="denied rows on one surface, masked value on another"),
    pytest.param(
        [TWO_SURFACES, TICKETS_CLEAR],
        set(),
        id="clear where the persona reaches no row exposes nothing",
    ),
    pytest.param(
        [TWO_SURFACES, TICKETS_CLEAR, TICKETS_FOR_ANALYST],
        {("analyst", "sf_tool", "sf_agent")},
        id="clear on one surface, masked on another: a divergence",
    ),
]


@pytest.mark.parametrize(("patches", "expected"), CASES)
def test_identifier_domains_compare_value_exposure(
    tmp_path: Path, patches: list[dict[str, Any]], expected: set[tuple[str, str, str]]
) -> None:
    project = load_project(write_estate(tmp_path / "p", _model_case(patches), split=True))
    found = divergence.divergences(project.model)
    assert {(d.persona, d.loose.surface, d.strict.surface) for d in found} == expected
    assert all(d.loose.surface != d.strict.surface for d in found)
    # lint and analyze: the same set, through the same function
    lint = {f.object for f in lint_project(project) if f.rule == "ACC403"}
    assert lint == {f"surfaces.{s}" for _, s, _ in expected}
    a = analyze(project.model)
    assert {(p, d.loose.surface) for d in a.divergences for p in d.personas} == {
        (p, s) for p, s, _ in expected
    }


def test_analyze_and_lint_report_the_same_set_on_the_as_found_estate() -> None:
    project = load_project(ROOT / "examples" / "as-found")
    lint = {
        f.object.split(".", 1)[1]
        for f in lint_project(project)
        if f.rule == "ACC403" and not f.suppressed
    }
    a = analyze(project.model)
    assert lint and lint == {d.loose.surface for d in a.divergences}


def test_analyze_honours_acc403_ignore_and_lists_it_separately(tmp_path: Path) -> None:
    data = _model_case([TWO_SURFACES, TICKETS_CLEAR, TICKETS_FOR_ANALYST])
    data["surfaces"]["sf_tool"]["ignore"] = {"ACC403": "support tool; reviewed 2026-11"}
    root = write_estate(tmp_path / "p", data, split=True)
    code, out, err = run_cli(["analyze", str(root), "--format", "json"])
    assert code == 0, out + err
    doc = json.loads(out + err)
    assert doc["divergences"] == [] and doc["summary"]["divergences"] == 0
    [suppressed] = doc["suppressed"]
    assert suppressed["loose"]["surface"] == "sf_tool"
    assert suppressed["reason"] == "support tool; reviewed 2026-11"
    text = "".join(run_cli(["analyze", str(root)])[1:])
    assert "Suppressed divergences (ACC403)" in text
    assert "no divergences (1 distinct suppressed)" in text
    # lint suppresses the same finding
    findings = [f for f in lint_project(load_project(root)) if f.rule == "ACC403"]
    assert [f.suppressed for f in findings] == [True]
