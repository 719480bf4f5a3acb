"""The cache's code fingerprint reads accord's version without importing
``importlib.metadata`` (compiler/core/store.py ``installed_version``): the same version, from
the same metadata folder, wherever the path puts one."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from accord.compiler.core import store


def test_the_installed_version_is_importlib_metadatas() -> None:
    assert store.installed_version() == importlib.metadata.version("accord")


@pytest.mark.parametrize(
    ("folders", "expected"),
    [
        ({"accord-9.9.9.dist-info": ("METADATA", "9.9.9")}, "9.9.9"),
        ({"accord.egg-info": ("PKG-INFO", "8.8.8")}, "8.8.8"),
        ({"Accord-7.7.dist-info": ("METADATA", "7.7")}, "7.7"),
        ({"accordion-1.0.dist-info": ("METADATA", "1.0")}, None),  # another distribution
    ],
)
def test_the_first_metadata_folder_on_the_path_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folders: dict, expected: str | None
) -> None:
    for name, (meta, version) in folders.items():
        (tmp_path / name).mkdir()
        body = f"Metadata-Version: 2.1\nName: accord\nVersion: {version}\n\nVersion: 0\n"
        (tmp_path / name / meta).write_text(body, encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    want = importlib.metadata.version("accord")
    if expected is not None:
        assert want == expected
    assert store.installed_version() == want


@pytest.mark.parametrize(
    "path",
    [
        "/c/accord/lint/ab/abcdef",
        "/c/accord/x",
        "/c/accord",
        "/c",
        "/c/accord2/lint/ab/key",
        "/d/accord/lint/ab/key",
        "/c/accord/a/b/c/d/e",
        "relative/accord/lint/key",
    ],
)
@pytest.mark.parametrize("root", ["/c/accord", "/", "relative/accord", "/c/accord/lint"])
def test_the_folders_checked_for_links(root: str, path: str) -> None:
    """The folders the store checks are no links before reading or writing an entry: the
    cache directory and every folder between it and the entry."""
    r, p = Path(root), Path(path)
    assert store._folders(r, p) == [r, *(q for q in p.parents if r in q.parents)]
