"""Incremental lint's input digests from per-file pieces (compiler/lint/incremental/pieces.py) equal the
digests computed from scratch (``deps.input_digests``, ``verdict.entries``), run after run
with the pieces of the unchanged files read from the cache: over random edit sequences of the
incremental lint tests' estates, and over the merge's edge cases (a word moving between files,
a replica group spanning files, case twins, sections in several files, a ``datasets`` the
pieces cannot describe)."""

from __future__ import annotations

import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accord.compiler.core import store
from accord.compiler.core.errors import InputError
from accord.compiler.lint.incremental import cache as lint_cache
from accord.compiler.lint.incremental import deps, pieces, verdict
from accord.compiler.model import loader, parsecache
from tests.test_lint_incremental import BASES, EACH_KIND, KINDS, PROPERTY, Files, _write, edit


def _digests(root: Path, cache: Path) -> tuple[Any, Any] | None:
    """(from the pieces, from scratch) of the project ``root``, the cache in ``cache``: the
    input digests, the datasets' entry digests, the sections' owners and the merged model's
    sections in order. None when the project does not load; then the pieces must not say
    anything either."""
    old = {k: os.environ.get(k) for k in ("ACCORD_CACHE_DIR", "ACCORD_NO_CACHE")}
    os.environ["ACCORD_CACHE_DIR"] = str(cache)
    os.environ.pop("ACCORD_NO_CACHE", None)
    store.enable(True)
    try:
        files, base = loader.directory_files(root)
        documents, _ = loader.read_files(files)
        digests = lint_cache.file_digests(documents, loader.parse_document)
        if digests is None:
            return None
        blobs = {name: blob for blob, name in documents}
        told = pieces.digests(
            digests, lambda n: parsecache.parsed(blobs[n], n, loader.parse_document)
        )
        try:
            raw = loader.load_documents(documents, base)
        except InputError:
            assert told is None, "the pieces say nothing of a project that does not load"
            return None
        store.flush()
        if told is None:
            return None
        src: Any = raw.source
        scratch = deps.input_digests(raw.data, src.texts, src.owners, digests)
        merged = (told.inputs, told.entries, told.owners, told.sections)
        return merged, (scratch, verdict.entries(raw.data), src.owners, list(raw.data))
    finally:
        store.enable(False)
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def check_versions(versions: list[Files]) -> int:
    """Each version of the files written over the last, the digests compared; returns how
    many versions loaded."""
    loaded = 0
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp) / "policies", Path(tmp) / "cache"
        for i, files in enumerate(versions):
            _write(root, copy.deepcopy(files))
            both = _digests(root, cache)
            if both is not None:
                loaded += 1
                assert both[0] == both[1], i
    return loaded


# slow: sequences of up to six edits; the fast tier keeps every kind of edit once (below)
@pytest.mark.slow
@PROPERTY
@given(
    st.sampled_from(sorted(BASES)),
    st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 2**16)), min_size=1, max_size=6),
)
def test_the_pieces_give_the_digests_from_scratch(base: str, edits: list[tuple[str, int]]) -> None:
    files = copy.deepcopy(BASES[base])
    versions = [copy.deepcopy(files)]
    for kind, seed in edits:
        edit(files, kind, seed)
        versions.append(copy.deepcopy(files))
    check_versions(versions)


@pytest.mark.parametrize(("kind", "base"), EACH_KIND)
def test_each_kind_of_edit(kind: str, base: int) -> None:
    files = copy.deepcopy(list(BASES.values())[base])
    versions = [copy.deepcopy(files)]
    for seed in (3 + 7 * base, 11 + 5 * base):
        edit(files, kind, seed)
        versions.append(copy.deepcopy(files))
    check_versions(versions)


def _ds(platform: str, columns: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"platform": platform, "table": "D.S.T", **more, "columns": columns}


PLAIN = {"type": "VARCHAR"}


def _small() -> Files:
    return {
        "masks.yaml": {"version": 1, "masks": {"m": {"strategy": "redact"}}},
        "datasets/a.yaml": {
            "datasets": {
                "src": _ds("snowflake", {"ID": {"type": "VARCHAR", "mask": "m"}, "NOTE": PLAIN}),
                "alone": _ds("snowflake", {"EXTRA": PLAIN, "Extra2": PLAIN}),
            }
        },
        "datasets/b.yaml": {
            "datasets": {"rep": _ds("databricks", {"id": PLAIN, "other": PLAIN})},
        },
        "surfaces.yaml": {"surfaces": {"s": {"platform": "none", "reads": ["src"]}}},
    }


def _versions(*changes: Any) -> list[Files]:
    files = _small()
    out = [copy.deepcopy(files)]
    for change in changes:
        change(files)
        out.append(copy.deepcopy(files))
    return out


def _b(files: Files) -> dict[str, Any]:
    return files["datasets/b.yaml"]["datasets"]


def _a(files: Files) -> dict[str, Any]:
    return files["datasets/a.yaml"]["datasets"]


def test_a_word_moving_between_files() -> None:
    """A plain column of a.yaml (``NOTE``) is kept while another file mentions its name, and
    left out again when it does not: a.yaml is unchanged throughout, so its cached governance
    must follow the words of the other files."""

    def mention_in_b(f: Files) -> None:
        _b(f)["rep"]["row_filter"] = {"expression": "note = 1"}

    def move_to_surfaces(f: Files) -> None:
        del _b(f)["rep"]["row_filter"]
        f["surfaces.yaml"]["surfaces"]["s"]["description"] = "reads NOTE"

    def move_to_a_new_file(f: Files) -> None:
        del f["surfaces.yaml"]["surfaces"]["s"]["description"]
        f["probes.yaml"] = {"probes": {"p": {"column": "Note"}}}

    def forget(f: Files) -> None:
        del f["probes.yaml"]

    versions = _versions(mention_in_b, move_to_surfaces, move_to_a_new_file, forget)
    assert check_versions(versions) == len(versions)


def test_a_replica_group_spanning_files() -> None:
    """``rep`` (b.yaml) becomes a replica of ``src`` (a.yaml), its chain grows and breaks: the
    plain columns the group shares are kept in the unchanged file too."""

    def link(f: Files) -> None:
        _b(f)["rep"]["replica_of"] = "src"
        _b(f)["rep"]["columns"]["note"] = PLAIN

    def chain(f: Files) -> None:
        _b(f)["rep2"] = _ds("databricks", {"NOTE": PLAIN, "other": PLAIN}, replica_of="rep")

    def unlink(f: Files) -> None:
        del _b(f)["rep"]["replica_of"]

    def cycle(f: Files) -> None:
        _b(f)["rep"]["replica_of"] = "rep2"

    def to_missing(f: Files) -> None:
        _b(f)["rep"]["replica_of"] = "nowhere"
        _a(f)["alone"]["replica_of"] = "alone"

    versions = _versions(link, chain, unlink, cycle, to_missing)
    assert check_versions(versions) == len(versions)


def test_case_twins_and_odd_columns() -> None:
    def twins(f: Files) -> None:
        _a(f)["alone"]["columns"]["extra"] = PLAIN
        _a(f)["alone"]["columns"]["EXTRA2"] = {"type": "VARCHAR", "mask": "m"}

    def odd(f: Files) -> None:
        cols = _a(f)["alone"]["columns"]
        cols["NOT A WORD"] = PLAIN
        cols["list"] = ["VARCHAR"]
        cols[7] = PLAIN
        _b(f)["rep"]["columns"] = ["id"]

    def mention_twin(f: Files) -> None:
        f["probes.yaml"] = {"probes": {"p": {"column": "EXTRA"}}}

    versions = _versions(twins, odd, mention_twin)
    assert check_versions(versions) == len(versions)


def test_sections_in_several_files() -> None:
    def spread(f: Files) -> None:
        f["datasets/b.yaml"]["masks"] = {"m2": {"strategy": "nullify", "note": 1.50}}
        f["datasets/a.yaml"]["masks"] = {}
        f["more.yaml"] = {"datasets": {}, "surfaces": {"t": {"platform": "none", "x": True}}}

    def extra_section(f: Files) -> None:
        f["more.yaml"]["custom"] = {"c1": ["Other", {"NOTE": None}]}
        f["datasets/b.yaml"]["custom"] = {"c2": 2.50}
        f["masks.yaml"]["listed"] = ["Extra2", 1]

    def version_elsewhere(f: Files) -> None:
        f["more.yaml"]["version"] = f["masks.yaml"].pop("version")

    versions = _versions(spread, extra_section, version_elsewhere)
    assert check_versions(versions) == len(versions)


def test_datasets_the_pieces_cannot_describe() -> None:
    """A datasets section that is no mapping of mappings (or none) is not for the pieces: the
    model is loaded and digested from scratch."""

    def not_a_mapping(f: Files) -> None:
        _b(f)["rep"] = "nothing"

    def empty(f: Files) -> None:
        f["datasets/b.yaml"]["datasets"] = {}

    def none_at_all(f: Files) -> None:
        del f["datasets/a.yaml"]
        del f["datasets/b.yaml"]

    versions = _versions(not_a_mapping, empty, none_at_all)
    assert check_versions(versions) == 2  # the first, and the empty section


def test_what_the_loader_refuses() -> None:
    """A project the loader refuses to merge gets no digests from the pieces (checked in
    ``_digests``): the same dataset or mask in two files, a section that is a mapping in one
    file and not in another; a section that is not a mapping in two files is left to the
    loader too, even when they agree."""

    def dataset_twice(f: Files) -> None:
        _b(f)["src"] = _ds("snowflake", {"X": PLAIN})

    def mask_twice(f: Files) -> None:
        del _b(f)["src"]
        f["datasets/b.yaml"]["masks"] = {"m": {"strategy": "nullify"}}

    def not_a_mapping_here(f: Files) -> None:
        f["datasets/b.yaml"]["masks"] = ["m"]

    def version_twice(f: Files) -> None:
        del f["datasets/b.yaml"]["masks"]
        f["datasets/b.yaml"]["version"] = 1

    versions = _versions(dataset_twice, mask_twice, not_a_mapping_here, version_twice)
    assert check_versions(versions) == 1  # the first only


def test_the_bench_edit_loads_only_the_edited_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's edit (a dataset gains a column nothing refers to) on a clean estate: the
    pieces give every digest, so the project is never merged and only the edited file is
    parsed (its new content); the output is a full lint's, run after run."""
    from tests.test_lint_incremental import CLEAN, _column_edit, _lint

    root, cache = tmp_path / "policies", tmp_path / "cache"
    _write(root, copy.deepcopy(CLEAN))
    _lint(root, cache, "json", True)
    merged: list[int] = []
    parsed: list[str] = []
    real_load, real_parse = loader.load_documents, parsecache._parse

    def load(*args: Any, **kwargs: Any) -> Any:
        merged.append(1)
        return real_load(*args, **kwargs)

    def parse(raw: bytes, name: str, *args: Any) -> Any:
        parsed.append(name)
        return real_parse(raw, name, *args)

    monkeypatch.setattr(loader, "load_documents", load)
    monkeypatch.setattr(parsecache, "_parse", parse)
    edited = sorted((root / "datasets").rglob("*.yaml"))[-1]
    for i in (1, 2):
        _column_edit(root, i)
        merged.clear()
        parsed.clear()
        incremental = _lint(root, cache, "json", True)
        assert (merged, parsed) == ([], [str(edited)]), (merged, parsed)
        assert incremental == _lint(root, cache, "json", False)
