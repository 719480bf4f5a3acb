"""A clean two-platform estate for lint tests, and patches applied to it case by case."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from compiler.lint.engine import lint_project
from compiler.lint.finding import Finding
from compiler.model.validate import Project, load_project

#: in a patch, removes the key
DELETE = object()

BASE: dict[str, Any] = {
    "version": 1,
    "platforms": {
        "snowflake": {"governance_schema": "GOV.POL"},
        "databricks": {"governance_schema": "gov.pol"},
    },
    "principals": {
        "analyst": {"snowflake": "ANALYST", "databricks": "analysts"},
        "auditor": {"snowflake": "AUDITOR", "databricks": "auditors"},
    },
    "entitlements": {"region": {"EU": ["analyst", "auditor"], "US": ["auditor"]}},
    "masks": {
        "email": {"strategy": "redact", "unmasked_for": ["auditor"]},
        "subject": {
            "strategy": "hash",
            "unmasked_for": ["auditor"],
            "salt": {"snowflake": "env:SUBJECT_SALT_SF", "databricks": "env:SUBJECT_SALT_DBX"},
        },
    },
    "datasets": {
        "customers": {
            "platform": "snowflake",
            "table": "SALES.CRM.CUSTOMERS",
            "row_filter": {"entitlement": "region", "column": "REGION"},
            "columns": {
                "EMAIL": {"type": "VARCHAR", "mask": "email"},
                "SUBJECT_ID": {"type": "VARCHAR", "mask": "subject", "identifier": "subject"},
            },
        },
        "customers_lake": {
            "platform": "databricks",
            "table": "sales.crm.customers",
            "replica_of": "customers",
            "row_filter": {"entitlement": "region", "column": "region"},
            "columns": {
                "email": {"type": "STRING", "mask": "email"},
                "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
            },
        },
        "countries": {
            "platform": "databricks",
            "table": "ref.geo.countries",
            "columns": {"name": {"type": "STRING"}},
        },
    },
    "surfaces": {
        "sf_agent": {"platform": "snowflake", "reads": ["customers"], "identity": "caller"},
        "dbx_agent": {
            "platform": "databricks",
            "reads": ["customers_lake", "countries"],
            "identity": "caller",
            "runtime": "15.4",
        },
    },
    "personas": {"analyst": ["analyst"], "auditor": ["auditor", "analyst"]},
}


def patched(patch: dict[str, Any], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """``base`` (default BASE) with ``patch`` merged in: mappings merge key by key, any other
    value replaces, DELETE removes."""
    out = copy.deepcopy(BASE if base is None else base)
    for key, value in patch.items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = patched(value, out[key])
        else:
            out[key] = copy.deepcopy(value)
    return out


def write_estate(root: Path, data: dict[str, Any]) -> Path:
    """One file per section (as a real estate is split), in a fresh directory."""
    root.mkdir(parents=True, exist_ok=True)
    for section, value in data.items():
        text = yaml.safe_dump({section: value}, sort_keys=False, width=1000)
        (root / f"{section}.yaml").write_text(text, encoding="utf-8")
    return root


def lint_estate(root: Path, patch: dict[str, Any]) -> tuple[Project, list[Finding]]:
    project = load_project(write_estate(root, patched(patch)))
    return project, lint_project(project)
