"""``compiler.live.session.session``: every connection it opened is closed when the block ends,
when the block fails, and when reading a later platform fails."""

from __future__ import annotations

from typing import Any

import pytest

from accord.compiler.connect.config import LiveOptions
from accord.compiler.live import session as live_session
from accord.compiler.model.validate import load_project
from accord.targets.inspect import LiveCatalog
from accord.targets.objects import Catalog
from tests.conftest import ROOT


class Recorder:
    def __init__(self, platform: str, log: list[str]) -> None:
        self.platform = platform
        self.log = log

    def close(self) -> None:
        self.log.append(f"closed {self.platform}")


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    log: list[str] = []

    def open_executor(platform: str, options: LiveOptions) -> Recorder:
        log.append(f"opened {platform}")
        return Recorder(platform, log)

    def introspect(
        platform: str, executor: Any, expected: Any, progress: Any, jobs: int = 1
    ) -> LiveCatalog:
        if platform == "databricks" and "fail databricks" in log:
            raise RuntimeError("cannot read databricks")
        return LiveCatalog(Catalog(platform, f"{platform} catalog", "table"))

    monkeypatch.setattr(live_session, "open_executor", open_executor)
    monkeypatch.setattr(live_session, "introspect", introspect)
    return log


PLATFORMS = ["snowflake", "databricks"]


def test_the_connections_are_open_inside_and_closed_after(opened: list[str]) -> None:
    project = load_project(ROOT / "policies")
    with live_session.session(project, PLATFORMS, LiveOptions()) as live:
        assert set(live.executors) == set(PLATFORMS) == set(live.expected)
        assert {p: c.catalog.governance_schema for p, c in live.catalogs.items()} == {
            p: f"{p} catalog" for p in PLATFORMS
        }
        assert opened == ["opened snowflake", "opened databricks"]
    assert opened[2:] == ["closed snowflake", "closed databricks"]


def test_a_failing_block_still_closes_them(opened: list[str]) -> None:
    project = load_project(ROOT / "policies")
    with pytest.raises(ValueError), live_session.session(project, PLATFORMS, LiveOptions()):
        raise ValueError("drift failed")
    assert opened[2:] == ["closed snowflake", "closed databricks"]


def test_a_platform_that_cannot_be_read_closes_the_ones_opened(opened: list[str]) -> None:
    project = load_project(ROOT / "policies")
    opened.append("fail databricks")
    with pytest.raises(RuntimeError), live_session.session(project, PLATFORMS, LiveOptions()):
        pytest.fail("the block must not run")
    assert opened[1:] == ["opened snowflake", "opened databricks", "closed snowflake",
                          "closed databricks"]  # fmt: skip
