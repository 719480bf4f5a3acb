from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

MINIMAL = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol}
principals:
  analyst: {snowflake: ANALYST, databricks: analysts}
  auditor: {snowflake: AUDITOR, databricks: auditors}
entitlements:
  region:
    EU: [analyst]
    US: [auditor]
masks:
  email:
    strategy: redact
    unmasked_for: [auditor]
datasets:
  customers:
    platform: snowflake
    table: SALES.CRM.CUSTOMERS
    row_filter: {entitlement: region, column: REGION}
    columns:
      EMAIL: {type: VARCHAR, mask: email}
personas:
  analyst: [analyst]
  auditor: [auditor, analyst]
"""


@pytest.fixture
def write_tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write {relative path: content} under a fresh directory and return it."""

    def write(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "policies"
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(textwrap.dedent(content), encoding="utf-8")
        return root

    return write


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`accord lint` caches parsed files (compiler/model/parsecache.py): never in the repository."""
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path_factory.mktemp("accord_cache")))


@pytest.fixture
def platforms(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Both live stand-ins (tests/standins), seeded with policies/' data tables."""
    from tests.live_helpers import running_platforms

    with running_platforms(monkeypatch) as running:
        yield running
