"""Small policy projects written on the fly, for tests that need an estate of a given shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from compiler.model.validate import Project, load_project


def make_project(directory: Path, data: dict[str, Any]) -> Project:
    """Write ``data`` as one policy file under ``directory`` and load it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "policy.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_project(directory)


def teams(n: int) -> dict[str, dict[str, str]]:
    """``n`` principals team_01.. with a Databricks group and a Snowflake role each."""
    return {
        f"team_{i:02d}": {"databricks": f"team-{i:02d}", "snowflake": f"TEAM_{i:02d}"}
        for i in range(1, n + 1)
    }


def databricks_estate(style: str = "abac", **sections: Any) -> dict[str, Any]:
    """A Databricks-only estate; ``sections`` replace or add top-level sections."""
    data: dict[str, Any] = {
        "version": 1,
        "platforms": {"databricks": {"governance_schema": "gov.policies", "style": style}},
        "principals": teams(3),
        "entitlements": {"programme": {"P1": ["team_01"], "P2": ["team_02"]}},
        "masks": {"redacted": {"strategy": "redact", "unmasked_for": ["team_03"]}},
        "datasets": {},
    }
    data.update(sections)
    return data
