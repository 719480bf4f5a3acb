"""Helpers for the planner's tests: an estate (tests/estates.py) as a Project, a plan between two,
its statements in order, and the repository's reference roll-out."""

from __future__ import annotations

from pathlib import Path

import yaml

from accord.compiler.model.loader import load_documents
from accord.compiler.model.validate import Project, validate_raw
from accord.compiler.plan.model import Plan
from accord.compiler.plan.source import plan_projects
from tests.conftest import ROOT
from tests.estates import Estate


def project(estate: Estate, name: str = "estate.yaml") -> Project:
    text = yaml.safe_dump(estate, sort_keys=False).encode()
    return validate_raw(load_documents([(text, name)], Path(".")))


def plan_between(base: Estate, head: Estate) -> Plan:
    return plan_projects(project(base), project(head))


def statements(plan: Plan, platform: str) -> list[str]:
    """Every statement of ``platform``, in the order the stages run them."""
    return [s.sql for stage in plan.stages if stage.platform == platform for s in stage.steps]


def position(sqls: list[str], *needles: str) -> int:
    """Index of the first statement containing every needle (fails the test if none does)."""
    for i, text in enumerate(sqls):
        if all(n in text for n in needles):
            return i
    raise AssertionError(f"no statement contains {needles}:\n" + "\n---\n".join(sqls))


def reference_plan(out: Path) -> Path:
    """The roll-out from examples/as-found to policies/, written under ``out``."""
    from accord.compiler.model.validate import load_project
    from accord.compiler.plan.write import write_plan

    plan = plan_projects(load_project(ROOT / "examples/as-found"), load_project(ROOT / "policies"))
    plan_id, _ = write_plan(plan, str(out))
    return out / plan_id
