"""Fixtures shared by the suite: a writer of small trees, a private lint cache, the live
stand-ins; ROOT, the repository; and the two markers (pyproject.toml):

* ``slow``: left out of the fast tier, ``make check`` (``pytest -m "not slow"``); ``make test``
  and CI run every test. :func:`fast_sample` marks all but a few cases of an exhaustive list;
* ``standin``: the test starts a stand-in (an HTTP server on 127.0.0.1, sandbox/standins/). A test
  that asks for the ``platforms`` fixture gets it here; one that starts a stand-in itself is
  marked in its file, and a test that started one unmarked fails (:func:`pytest_runtest_call`).

``shared_platforms`` serves the stand-ins to a whole test file, for files whose tests start from
one deploy: the file's module fixture deploys once, each test takes the estates as it left them.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from accord.sandbox.standins import http
from tests.estates import write_files

ROOT = Path(__file__).resolve().parent.parent

#: the fixtures that start the stand-ins: a test asking for one is marked ``standin``
STANDIN_FIXTURES = {"platforms", "shared_platforms"}


def fast_sample(cases: Iterable[Any], keep: Container[Any]) -> list[Any]:
    """``cases`` for ``pytest.mark.parametrize``, each one not in ``keep`` marked ``slow``: the
    fast tier runs ``keep``, ``make test`` every case."""
    return [c if c in keep else pytest.param(c, marks=pytest.mark.slow) for c in cases]


#: the files that take longest in ``make test`` (over 25 s each in a full run's ``--durations``):
#: collected first, so the worker processes (a file each, ``--dist loadfile``) start on them
#: and end on short files, neither waiting long on the other at the end. Order only: every
#: test passes alone and in any order.
LONGEST_FIRST = (
    "test_lint_incremental.py",
    "test_verify_spark.py",
    "test_verify_spark_defects.py",
    "test_docs_getting_started.py",
    "test_live_demo.py",
    "test_databricks_truth.py",
    "test_lint_bypass.py",
    "test_live_e2e.py",
    "test_loader_shared.py",
    "test_sqlwords.py",
    "test_snowflake_reader.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if STANDIN_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.standin)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: files stay whole


_SERVERS = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_SERVERS] = http.STARTED


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that started a stand-in (in its call or its fixtures' set-up) is marked
    ``standin``: ``-m "not standin"`` must leave out every test that serves on loopback."""
    result = yield
    started = http.STARTED - item.stash.get(_SERVERS, http.STARTED)
    if started and not item.get_closest_marker("standin"):
        pytest.fail(f"{item.nodeid} starts a stand-in: mark it @pytest.mark.standin", False)
    return result


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


@pytest.fixture
def git_defaults(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """git as a new machine has it, the same on every machine: no system configuration, and a
    user configuration holding only ``init.defaultBranch = main`` (the last place init looks
    for the branch, where a folder that is no repository yet gets it). Returns that file."""
    config = tmp_path_factory.mktemp("git-home") / "gitconfig"
    config.write_text("[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


@pytest.fixture(autouse=True)
def _known_secrets() -> None:
    """The secrets one test made known (compiler/core/secrets.py) are forgotten before the
    next, as they would be at the end of a process."""
    from accord.compiler.core import secrets

    secrets.forget()


@pytest.fixture
def platforms(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Both live stand-ins (sandbox/standins), seeded with policies/' data tables."""
    from tests.live_helpers import running_platforms

    with running_platforms(monkeypatch) as running:
        yield running


@pytest.fixture(scope="module")
def shared_platforms():  # type: ignore[no-untyped-def]
    """Both live stand-ins for one test file: a module fixture deploys on them once
    (``shared.deploying(tmp)``), each test takes them with ``shared.reset(monkeypatch)``, as
    that deploy left them (tests/live_helpers.py)."""
    from tests.live_helpers import serving_platforms

    with serving_platforms() as shared:
        yield shared
