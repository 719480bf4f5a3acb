"""Fixtures shared by the suite: a writer of small trees, a private lint cache, the live
stand-ins; and ROOT, the repository."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.estates import write_files

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def write_tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write {relative path: content} under a fresh directory and return it."""

    def write(files: dict[str, str | bytes]) -> Path:
        return write_files(tmp_path / "policies", files)

    return write


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`accord lint` caches parsed files (compiler/model/parsecache.py): never in the repository,
    and its key (compiler/core/store.py) never in the user's own cache directory."""
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path_factory.mktemp("accord_cache")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user_cache")))


@pytest.fixture(autouse=True)
def _known_secrets() -> None:
    """The secrets one test made known (compiler/core/secrets.py) are forgotten before the
    next, as they would be at the end of a process."""
    from accord.compiler.core import secrets

    secrets.forget()


@pytest.fixture
def platforms(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Both live stand-ins (tests/standins), seeded with policies/' data tables."""
    from tests.live_helpers import running_platforms

    with running_platforms(monkeypatch) as running:
        yield running
