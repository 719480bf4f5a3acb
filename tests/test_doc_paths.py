"""The README and docs name only files and folders that exist: a newcomer who follows a path
from the architecture section finds it, and a move that forgets the docs fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = [
    "README.md",
    "CONTRIBUTING.md",
    "bench/README.md",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")),
]
#: a repository path as the docs write one: a top folder, then names (globs allowed)
PATH = re.compile(
    r"(?<![\w./-])((?:compiler|targets|tests|bench|docs|examples|policies|migrations)"
    r"/[A-Za-z0-9_./*-]*[A-Za-z0-9_*/])"
)
#: placeholders the docs use on purpose (a plan directory's number)
PLACEHOLDERS = ("NNNN",)


def _doc(name: str) -> Path:
    return ROOT / name


#: a ```console block: a command and what accord printed for it, in a directory of the page's own
#: example (the tutorial's estate), not a path of this repository
CONSOLE = re.compile(r"^```console\n.*?^```$", re.M | re.S)


def named_paths(text: str) -> list[str]:
    text = CONSOLE.sub("", text)
    return sorted({m for m in PATH.findall(text) if not any(p in m for p in PLACEHOLDERS)})


def missing(paths: list[str], root: Path = ROOT) -> list[str]:
    return [p for p in paths if not (any(root.glob(p)) if "*" in p else (root / p).exists())]


@pytest.mark.parametrize("name", DOCS)
def test_every_path_the_docs_name_exists(name: str) -> None:
    paths = named_paths(_doc(name).read_text(encoding="utf-8"))
    assert missing(paths) == [], name


def test_the_architecture_names_the_packages_of_every_layer() -> None:
    """The check reads real text: CONTRIBUTING.md's architecture section names every package
    and both platform folders."""
    paths = named_paths((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    for package in (
        "compiler/core/",
        "compiler/model/",
        "compiler/lint/",
        "targets/read.py",
        "targets/snowflake/",
        "targets/databricks/",
        "targets/kinds.py",
    ):
        assert package in paths


def test_a_path_that_does_not_exist_is_reported(tmp_path: Path) -> None:
    (tmp_path / "compiler").mkdir()
    (tmp_path / "compiler" / "cli.py").write_text("", encoding="utf-8")
    text = "see `compiler/cli.py`, `compiler/gone.py`, `compiler/*.py` and `migrations/NNNN_x/`"
    assert missing(named_paths(text), tmp_path) == ["compiler/gone.py"]
    # what a console block shows accord printing is not a path of the repository
    shown = "```console\n$ accord lint policies\npolicies/estate.yaml\n```\nand `policies/x.yaml`"
    assert named_paths(shown) == ["policies/x.yaml"]
