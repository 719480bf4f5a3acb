"""Sharing the parse of identical files (``compiler.model.loader.sharing``, used by
``accord diff``, whose two trees hold mostly byte-identical files): a content parsed again
under another name gives exactly what ``parse_fast`` gives under that name (the same values,
types included, the same scalar texts, the same positions once asked for, under the new name,
the same refusal), each tree gets its own copy of the values, and ``accord diff`` says the
same, byte for byte, with and without sharing."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest

from accord.compiler.model import loader
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.test_loader_errors import CASES
from tests.test_loader_fast import BIG, ESTATE_FILES, SNIPPETS, _document, _outcome, snippet_cases

CONTENTS: list[tuple[str, bytes]] = [
    *((case, text.encode()) for case, text in SNIPPETS),
    *(
        (f"{case[0]}/{name}", content if isinstance(content, bytes) else content.encode())
        for case in CASES
        for name, content in case[1].items()
    ),
    *((p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in ESTATE_FILES),
]


def _check(raw: bytes) -> None:
    """The content read under two names (and a third time under the first) in one sharing
    block: each reading as ``parse_fast`` reads it under that name."""
    with loader.sharing():
        got = [
            _outcome(loader.parse_shared, raw, name) for name in ("a.yaml", "b/b.yaml", "a.yaml")
        ]
    want = [_outcome(loader.parse_fast, raw, name) for name in ("a.yaml", "b/b.yaml", "a.yaml")]
    assert got == want


#: read three times each, seconds apiece (slow): the documents at and beyond the node bound,
#: and the alias bomb (its expansion is refused at the bound)
SLOW = {*BIG, "alias-bomb/a.yaml"}


@pytest.mark.parametrize(("case", "raw"), snippet_cases(CONTENTS, SLOW))
def test_shared_equals_fast(case: str, raw: bytes) -> None:
    _check(raw)


def test_shared_equals_fast_on_generated_documents() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.composite(lambda draw: _document(draw))())
    def check(text: str) -> None:
        _check(text.encode())

    check()


def test_estate_files_are_shared() -> None:
    """The repository's policy files are read whole by the fast path, so a repeat is a copy
    (the comparisons above exercise the copy, not only the fallback)."""
    with loader.sharing():
        for path in ESTATE_FILES:
            loader.parse_shared(path.read_bytes(), "x.yaml")
        shared = dict(loader._shared or {})
    assert len(shared) == len({p.read_bytes() for p in ESTATE_FILES})


def test_each_reading_gets_its_own_values() -> None:
    content = sorted((ROOT / "policies").rglob("*.yaml"))[0].read_bytes()
    with loader.sharing():
        first, _ = loader.parse_shared(content, "a.yaml")
        pristine, _ = loader.parse_fast(content, "a.yaml")
        for key in list(first):  # whatever one tree's validation does to its values
            first[key] = {"changed": [1]}
        first["added"] = 1
        second, _ = loader.parse_shared(content, "b.yaml")
        third, _ = loader.parse_shared(content, "c.yaml")
    assert second == pristine and third == pristine and second is not third
    second.clear()
    assert third == pristine


def test_outside_a_block_nothing_is_kept() -> None:
    raw = ESTATE_FILES[0].read_bytes()
    loader.parse_shared(raw, "a.yaml")
    assert loader._shared is None
    with loader.sharing():
        with loader.sharing():
            loader.parse_shared(raw, "a.yaml")
        assert loader._shared  # the inner block shares the outer block's table
    assert loader._shared is None


def _tree(tmp_path: Path, name: str, source: str) -> Path:
    target = tmp_path / name
    shutil.copytree(ROOT / source, target)
    return target


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github"])
def test_diff_is_the_same_with_and_without_sharing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
) -> None:
    """``accord diff`` over the repository's repair (examples/as-found -> policies) and over
    a head that edits one file of a copy of its base (every other file shared)."""
    head = _tree(tmp_path, "head", "policies")
    first = sorted(head.rglob("*.yaml"))[0]
    first.write_text(first.read_text() + "# edited\n")
    pairs = [("policies", "examples/as-found"), (str(head), "policies")]
    shared = [run_cli(["diff", h, "--base", f"dir:{b}", "--format", fmt]) for h, b in pairs]
    monkeypatch.setattr(loader, "sharing", contextlib.nullcontext)
    alone = [run_cli(["diff", h, "--base", f"dir:{b}", "--format", fmt]) for h, b in pairs]
    assert shared == alone
    assert all(r.stdout or r.stderr for r in shared)


def test_a_refusal_reads_the_same_when_shared(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file the base refuses, whose content the head holds too under another name, is
    refused at the base's own place, as without sharing."""
    base = _tree(tmp_path, "base", "policies")
    head = _tree(tmp_path, "head", "policies")
    (base / "zz_bad.yaml").write_text("version: 1\nversion: 1\n")
    (head / "zz_bad_too.yaml").write_text("version: 1\nversion: 1\n")
    args = ["diff", str(head), "--base", f"dir:{base}"]
    (head / "zz_bad_too.yaml").unlink()
    (head / "zz_also.yaml").write_text("version: 1\n")  # shared, then repeated in the base
    (base / "zz_also.yaml").write_text("version: 1\n")
    shared = run_cli(args)
    monkeypatch.setattr(loader, "sharing", contextlib.nullcontext)
    assert shared == run_cli(args)
    assert shared.returncode == 2 and "Traceback" not in shared.stderr
    assert f"{base.as_posix()}/zz_bad.yaml:2:1: duplicate key" in shared.stderr


def test_plan_is_the_same_with_and_without_sharing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``accord plan`` writes the same files, and says the same, with and without sharing."""
    args = ["plan", "policies", "--base", "dir:examples/as-found", "--out"]
    shared = run_cli([*args, str(tmp_path / "shared")])
    monkeypatch.setattr(loader, "sharing", contextlib.nullcontext)
    alone = run_cli([*args, str(tmp_path / "alone")])
    assert shared.returncode == alone.returncode == 0
    assert shared.stdout.replace("shared", "alone") == alone.stdout
    files = sorted(p.relative_to(tmp_path / "shared") for p in (tmp_path / "shared").rglob("*"))
    assert files and files == sorted(
        p.relative_to(tmp_path / "alone") for p in (tmp_path / "alone").rglob("*")
    )
    for rel in files:
        if (tmp_path / "shared" / rel).is_file():
            assert (tmp_path / "shared" / rel).read_bytes() == (
                tmp_path / "alone" / rel
            ).read_bytes()
