"""Small estates for the planner's tests: a base model as a dict, edited per test."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from compiler.model.loader import load_documents
from compiler.model.validate import Project, validate_raw
from compiler.plan.model import Plan
from compiler.plan.source import plan_projects

Estate = dict[str, Any]


def base_estate() -> Estate:
    """Both platforms; a filtered and masked table on each; `subject` held on both."""
    return {
        "version": 1,
        "platforms": {
            "snowflake": {"governance_schema": "GOV.POL"},
            "databricks": {"governance_schema": "gov.pol"},
        },
        "principals": {
            "analyst": {"snowflake": "ANALYST", "databricks": "analysts"},
            "steward": {"snowflake": "STEWARD", "databricks": "stewards"},
        },
        "entitlements": {"programme": {"P1": ["analyst"], "P2": ["analyst", "steward"]}},
        "masks": {
            "subject": {"strategy": "hash", "unmasked_for": ["steward"]},
            "notes": {"strategy": "redact", "unmasked_for": ["steward"]},
        },
        "datasets": {
            "wh": {
                "platform": "snowflake",
                "table": "DB.S.T",
                "row_filter": {"entitlement": "programme", "column": "PROGRAMME"},
                "columns": {
                    "PROGRAMME": {"type": "VARCHAR"},
                    "SUBJECT_ID": {"type": "VARCHAR", "mask": "subject", "identifier": "subject"},
                    "NOTES": {"type": "VARCHAR", "mask": "notes"},
                },
            },
            "lake": {
                "platform": "databricks",
                "table": "cat.s.t",
                "row_filter": {"entitlement": "programme", "column": "programme"},
                "columns": {
                    "programme": {"type": "STRING"},
                    "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
                    "notes": {"type": "STRING", "mask": "notes"},
                },
            },
        },
    }


SALTS = {"snowflake": "env:SUBJECT_SALT_SF", "databricks": "env:SUBJECT_SALT_DBX"}


def edited(estate: Estate, change: Callable[[Estate], None]) -> Estate:
    copied = copy.deepcopy(estate)
    change(copied)
    return copied


def project(estate: Estate, name: str = "estate.yaml") -> Project:
    text = yaml.safe_dump(estate, sort_keys=False).encode()
    return validate_raw(load_documents([(text, name)], Path(".")))


def write_estate(directory: Path, estate: Estate) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "estate.yaml").write_text(yaml.safe_dump(estate, sort_keys=False))
    return directory


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


ROOT = Path(__file__).resolve().parent.parent


def reference_plan(out: Path) -> Path:
    """The roll-out from examples/as-found to policies/, written under ``out``."""
    from compiler.model.validate import load_project
    from compiler.plan.write import write_plan

    plan = plan_projects(load_project(ROOT / "examples/as-found"), load_project(ROOT / "policies"))
    plan_id, _ = write_plan(plan, str(out))
    return out / plan_id


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """Run ``accord`` in-process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from compiler.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0
    return code, out.getvalue(), err.getvalue()
