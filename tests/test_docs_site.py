"""The documentation site (mkdocs.yml) builds with --strict: no broken link, no missing
anchor, no page outside the navigation, no snippet that names a missing file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_site_builds_strict(tmp_path: Path) -> None:
    done = build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "tutorial" / "index.html").exists()
    # the README's introduction is the landing page's, through a snippet
    assert "governance as code" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_the_validation_is_on() -> None:
    """mkdocs.yml turns every link and anchor check into a warning, which --strict fails on."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *a: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    assert config["validation"] == {
        "omitted_files": "warn",
        "absolute_links": "warn",
        "unrecognized_links": "warn",
        "anchors": "warn",
    }
    pages = set()
    for entry in config["nav"]:
        for value in entry.values():
            pages |= {next(iter(v.values())) for v in value} if isinstance(value, list) else {value}
    assert pages == {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").glob("*.md")}


@pytest.mark.parametrize(
    ("page", "edit", "warning"),
    [
        ("lint.md", "[gone](verify.md#no-such-heading)", "does not contain an anchor"),
        ("lint.md", "[gone](no-such-page.md)", "not found among documentation files"),
        ("index.md", '--8<-- "docs/tutorial/no-such-file.yaml"', "no-such-file.yaml"),
    ],
)
def test_a_broken_link_anchor_or_snippet_fails_the_build(
    tmp_path: Path, page: str, edit: str, warning: str
) -> None:
    """The guard: the same build on a copy with one broken reference fails, naming it."""
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copy(ROOT / "README.md", copy / "README.md")
    shutil.copytree(ROOT / "docs", copy / "docs")
    target = copy / "docs" / page
    target.write_text(target.read_text(encoding="utf-8") + f"\n{edit}\n", encoding="utf-8")
    done = build(copy, tmp_path / "site")
    assert done.returncode != 0
    assert warning in done.stderr + done.stdout
