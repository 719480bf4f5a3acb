"""The cache of parsed files and lint results (compiler/core/store.py, compiler/model/parsecache.py, compiler/lint/incremental/cache.py): an optimisation only.

Every test compares what ``accord lint`` prints with and without the cache, on the same files:
cold (the cache is filled), warm (read back), after an edit that changes a cross-file rule
(ACC202 across masks, ACC403 across datasets and surfaces), a reference (a principal renamed
where other files still name it), a position or the text of a line a finding points into;
after edits that change nothing lint reads (reused without linting); with every entry
corrupted; and with the cache pruned to its bound.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from accord.compiler.commands import lint as lint_command
from accord.compiler.core import store
from accord.compiler.lint import run as lint_run
from accord.compiler.model import parsecache
from accord.compiler.model.loader import parse_document
from accord.compiler.sqlscan import DIALECTS
from tests.cli import run_cli
from tests.conftest import ROOT


def lint(*args: str, cache_dir: Path, cached: bool = True) -> tuple[int, str]:
    argv = ["lint", "--format", "json", *args, *([] if cached else ["--no-cache"])]
    code, out, err = run_cli(argv, env={"ACCORD_CACHE_DIR": str(cache_dir)})
    assert "internal error" not in err, err
    return code, out + err


def of_rule(output: str, rule: str) -> list[object]:
    doc = json.loads(output)
    found = doc["findings"] if isinstance(doc, dict) else doc
    return [f for f in found if f["rule"] == rule]


def entries(cache_dir: Path, kind: str) -> list[Path]:
    return sorted(p for p in (cache_dir / kind).rglob("*") if p.is_file())


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    root = tmp_path / "estate"
    shutil.copytree(ROOT / "examples" / "as-found", root)
    return root


def _replace(path: Path, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in the file."""
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _prepend(path: Path, text: str) -> None:
    path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")


def _same_salt_twice(root: Path) -> None:
    """ACC202: the Databricks salt of subject_pseudonym becomes the Snowflake one."""
    masks = root / "masks.yaml"
    text = masks.read_text(encoding="utf-8")
    assert "databricks: env:" in text
    lines = text.splitlines(keepends=True)
    sf = next(line for line in lines if "snowflake: env:" in line).split("env:")[1].strip()
    out = [
        (line.split("env:")[0] + "env:" + sf + "\n") if "databricks: env:" in line else line
        for line in lines
    ]
    masks.write_text("".join(out), encoding="utf-8")


def _pipeline_reads_nothing_governed(root: Path) -> None:
    """ACC403 (and ACC402) change: the as-found pipeline stops reading governed data."""
    surfaces = root / "surfaces.yaml"
    text = surfaces.read_text(encoding="utf-8")
    assert "variant_calls" in text
    surfaces.write_text(text.replace("reads: [variant_calls]\n", "reads: []\n"), encoding="utf-8")
    # the probes' entries for the pipeline no longer reach anything: the repair drops them too
    probes = root / "probes.yaml"
    kept = [
        line
        for line in probes.read_text(encoding="utf-8").splitlines(keepends=True)
        if "variant_annotation:" not in line
    ]
    probes.write_text("".join(kept), encoding="utf-8")


def _surface_reads_another_dataset(root: Path) -> None:
    """The pipeline reads the lakehouse replica instead of the variant calls: ACC402 and
    ACC403 now concern other facts, and the probes' expectations no longer match (exit 2)."""
    _replace(
        root / "surfaces.yaml", "    reads: [variant_calls]\n", "    reads: [assay_results_lake]\n"
    )


def _principal_renamed(root: Path) -> None:
    """A principal renamed where it is declared only: the files that name it now name an
    unknown principal (exit 2), where the cached findings of before named it fine."""
    _replace(root / "principals.yaml", "\n  bench_chemist:\n", "\n  bench_chemist_2:\n")


def _comment_line_inserted(root: Path) -> None:
    """A comment line at the top: nothing else changes, but every position below moves."""
    _prepend(root / "datasets.yaml", "# reviewed\n")


def _expression_escaped(root: Path) -> None:
    """The same predicate spelled with an escape (``\\x46`` is ``F``): the parsed document and
    every position are unchanged, but ACC101 can no longer point inside the scalar's line."""
    old = '"PROGRAMME_CODE IN (SELECT g.PROGRAMME_CODE FROM '
    _replace(root / "datasets.yaml", old, old.replace(" FROM ", " \\x46ROM "))


Lint = tuple[int, str]


def _rule_changed(rule: str) -> Callable[[Lint, Lint], bool]:
    return lambda before, after: of_rule(before[1], rule) != of_rule(after[1], rule)


@pytest.mark.parametrize(
    ("source", "edit", "changed"),
    [
        ("policies", _same_salt_twice, _rule_changed("ACC202")),
        ("examples/as-found", _pipeline_reads_nothing_governed, _rule_changed("ACC403")),
        (
            "examples/as-found",
            _principal_renamed,
            lambda b, a: (
                "unknown principal" not in b[1]
                and "unknown principal 'bench_chemist'" in a[1]
                and not json.loads(a[1][: a[1].rindex("}") + 1])["findings"]
            ),
        ),
        (
            "examples/as-found",
            _surface_reads_another_dataset,
            lambda b, a: "does not reach variant_calls" in a[1] and b[1] != a[1],
        ),
        ("examples/as-found", _comment_line_inserted, _rule_changed("ACC101")),
        ("examples/as-found", _expression_escaped, _rule_changed("ACC101")),
    ],
    ids=[
        "ACC202-salt",
        "ACC403-surface",
        "principal-renamed",
        "surface-dataset",
        "lines-moved",
        "line-text",
    ],
)
def test_results_identical_with_and_without_cache(
    source: str, edit: Callable[[Path], None], changed: Callable[[Lint, Lint], bool], tmp_path: Path
) -> None:
    estate = tmp_path / "estate"
    shutil.copytree(ROOT / source, estate)
    cache_dir = tmp_path / "cache"
    uncached = lint(str(estate), cache_dir=cache_dir, cached=False)
    assert not cache_dir.exists()  # --no-cache writes nothing
    cold = lint(str(estate), cache_dir=cache_dir)
    assert entries(cache_dir, "parse") and entries(cache_dir, "lint")
    warm = lint(str(estate), cache_dir=cache_dir)
    assert cold == warm == uncached

    edit(estate)
    after_uncached = lint(str(estate), cache_dir=cache_dir, cached=False)
    after_cached = lint(str(estate), cache_dir=cache_dir)
    assert after_cached == after_uncached
    # the edit changed what lint reports, and the cache did not hide it
    assert changed(uncached, after_uncached)


def _comment_appended(root: Path) -> None:
    path = root / "datasets.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# reviewed\n", encoding="utf-8")


def _blank_lines_appended(root: Path) -> None:
    path = root / "datasets.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n\n   \n", encoding="utf-8")


def _comment_reworded(root: Path) -> None:
    old = "    # DEFECT: ACC101 current-role.\n"
    _replace(root / "datasets.yaml", old, "  # (reworded) ACC101\n")


def _crlf(root: Path) -> None:
    path = root / "datasets.yaml"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))


@pytest.mark.parametrize(
    "edit",
    [_comment_appended, _blank_lines_appended, _comment_reworded, _crlf],
    ids=["comment-appended", "blank-lines", "comment-reworded", "crlf"],
)
def test_an_edit_lint_does_not_read_reuses_the_findings(
    edit: Callable[[Path], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    estate = tmp_path / "estate"
    shutil.copytree(ROOT / "examples" / "as-found", estate)
    cache_dir = tmp_path / "cache"
    before = lint(str(estate), cache_dir=cache_dir)
    edit(estate)
    expected = lint(str(estate), cache_dir=tmp_path / "other", cached=False)
    assert expected == before  # the edit changed nothing lint reports

    import accord.compiler.model.loader

    parsed: list[str] = []
    real = accord.compiler.model.loader.parse_document

    def counting(raw: bytes, name: str):  # type: ignore[no-untyped-def]
        parsed.append(name)
        return real(raw, name)

    def not_linted(*args: object, **kwargs: object) -> object:
        raise AssertionError("the project was linted again")

    monkeypatch.setattr(accord.compiler.model.loader, "parse_document", counting)
    monkeypatch.setattr(lint_run, "lint_project", not_linted)
    assert lint(str(estate), cache_dir=cache_dir) == expected
    assert parsed == [str(estate / "datasets.yaml")]  # only the edited file was read


BLOCK = "datasets:\n  d:\n    note: |\n      first\n      # {}\n    table: T  # {}\n"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (BLOCK.format("x", "c"), BLOCK.format("x", "c") + "# appended\n", True),
        (BLOCK.format("x", "c"), BLOCK.format("x", "c").replace("\n", "\r\n"), True),
        (BLOCK.format("x", "c"), BLOCK.format("x", "c") + "\n\n", True),
        ("# one\n" + BLOCK.format("x", "c"), "# two\n" + BLOCK.format("x", "c"), True),
        # a line inside a block scalar that looks like a comment is content
        (BLOCK.format("x", "c"), BLOCK.format("y", "c"), False),
        # a comment after content: the line differs, so it is not reused (conservative)
        (BLOCK.format("x", "c"), BLOCK.format("x", "d"), False),
        # positions move
        (BLOCK.format("x", "c"), "# top\n" + BLOCK.format("x", "c"), False),
        ("v: 1\n", "v: 1.0\n", False),
        ("v: 1\n", "v: true\n", False),
        ("v: '1'\n", "v: 1\n", False),
        # a float: its value and how it was written (a message quotes it)
        ("v: 1.5\n", "v: 1.5\n# appended\n", True),
        ("v: 1.5\n", "v: 1.50\n", False),
        ("v: 1.5\n", "v: 1.6\n", False),
        ("v: [a, b]\n", "v: [b, a]\n", False),
        ("v: {a: 1, b: 2}\n", "v: {b: 2, a: 1}\n", False),
        ("v: ~\n", "v: null\n", False),
    ],
)
def test_content_digest(a: str, b: str, same: bool) -> None:
    def digest(text: str) -> str:
        raw = text.encode()
        return parsecache.content_digest(raw, *parse_document(raw, "f.yaml"))

    assert (digest(a) == digest(b)) is same


def _size(cache_dir: Path) -> int:
    """The bytes of the cache's entries (``kind/xx/key``), what its bound covers: the
    ``.gitignore`` at its root is not an entry and is never pruned."""
    return sum(p.stat().st_size for p in cache_dir.glob("*/*/*") if p.is_file())


def test_pruning_bounds_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    estate = tmp_path / "estate"
    shutil.copytree(ROOT / "examples" / "as-found", estate)
    cache_dir = tmp_path / "cache"
    lint(str(estate), cache_dir=cache_dir)
    one_run = _size(cache_dir)
    bound = 3 * one_run
    monkeypatch.setenv("ACCORD_CACHE_MAX_MB", str(bound / 2**20))
    datasets = estate / "datasets.yaml"
    for i in range(12):  # each edit moves positions: new parse, content and lint entries
        datasets.write_text(f"# edit {i}\n" + datasets.read_text(encoding="utf-8"))
        expected = lint(str(estate), cache_dir=tmp_path / "other", cached=False)
        assert lint(str(estate), cache_dir=cache_dir) == expected
        assert _size(cache_dir) <= bound
    # the oldest results went, the newest stayed: the last state is still a hit
    assert len(entries(cache_dir, "lint")) < 12
    monkeypatch.setattr(lint_run, "lint_project", lambda *a, **k: pytest.fail("relinted"))
    assert lint(str(estate), cache_dir=cache_dir) == expected


def _walk_with_pathlib(root: Path) -> list[tuple[str, str, int]]:
    """The cache's files as the store listed them before it used ``os.scandir``: pathlib's
    ``is_dir``/``is_file`` with links left out, then ``lstat``."""
    out = []
    for kind in [k for k in root.iterdir() if k.is_dir() and not k.is_symlink()]:
        for shard in [d for d in kind.iterdir() if d.is_dir() and not d.is_symlink()]:
            for f in [f for f in shard.iterdir() if f.is_file() and not f.is_symlink()]:
                out.append((f.name, str(f), f.lstat().st_size))
    return out


def test_the_cache_listing_leaves_links_out(tmp_path: Path) -> None:
    """What prune walks (``store._entries``) is every regular file at ``kind/xx/key``: a link
    to a directory or a file, a FIFO, a file at the wrong depth are never listed (so never
    deleted), as with the pathlib walk it replaced."""
    root = tmp_path / "cache"
    outside = tmp_path / "outside"
    (outside / "xx").mkdir(parents=True)
    (outside / "xx" / "victim").write_bytes(b"v" * 7)
    (outside / "file").write_bytes(b"f")
    for kind in ("lint", "parse"):
        for shard in ("ab", "cd"):
            (root / kind / shard).mkdir(parents=True)
            for i in range(3):
                (root / kind / shard / f"{shard}{i}").write_bytes(b"x" * (i + 1))
    (root / "lint" / "ab" / ".tmp-partial").write_bytes(b"p")
    (root / "linked-kind").symlink_to(outside)  # a kind that is a link
    (root / "lint" / "ee").symlink_to(outside / "xx")  # a shard that is a link
    (root / "lint" / "ab" / "link").symlink_to(outside / "file")  # an entry that is a link
    os.mkfifo(root / "lint" / "cd" / "fifo")
    (root / "stray").write_bytes(b"s")  # a file where a kind should be
    (root / "lint" / "stray").write_bytes(b"s")  # a file where a shard should be

    listed = [(name, path, info.st_size) for name, path, info in store._entries(str(root))]
    assert sorted(listed) == sorted(_walk_with_pathlib(root))
    assert len(listed) == 13  # 12 entries and the temporary file
    assert not any("victim" in path or path.endswith("link") for _, path, _ in listed)
    assert list(store._entries(str(tmp_path / "no-such-cache"))) == []


def test_prune_removes_least_recently_used_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path))
    store.enable(True)
    try:
        for i, key in enumerate(["a" * 64, "b" * 64, "c" * 64, "d" * 64]):
            store.write("lint", key, b"x" * 1000)
            os.utime(store._path("lint", key), (1_000_000 + i, 1_000_000 + i))
        store._used.clear()  # as if written by earlier runs
        assert store.read("lint", "a" * 64) is not None  # used now: the newest, and kept
        stale = tmp_path / "lint" / "bb" / ".tmp-left-by-a-killed-run"
        stale.write_bytes(b"partial")
        os.utime(stale, (1_000_000, 1_000_000))
        fresh = tmp_path / "lint" / "bb" / ".tmp-being-written"
        fresh.write_bytes(b"partial")
        store.prune(limit=2700)  # keeps at most 80% (2,160 bytes): two entries of 1,065
        left = {p.name[0] for p in entries(tmp_path, "lint") if not p.name.startswith(".")}
        assert left == {"a", "d"}  # b and c were the least recently used
        assert not stale.exists() and fresh.exists()
        store.prune(limit=10)  # below what this run uses: its entries still stay
        assert store.read("lint", "a" * 64) is not None
    finally:
        store.enable(False)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 256 * 2**20),
        ("64", 64 * 2**20),
        ("0.5", 2**19),
        ("0", 256 * 2**20),
        ("-3", 256 * 2**20),
        ("nan", 256 * 2**20),
        ("inf", 256 * 2**20),
        ("lots", 256 * 2**20),
    ],
)
def test_max_bytes(value: str | None, expected: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv("ACCORD_CACHE_MAX_MB", raising=False)
    else:
        monkeypatch.setenv("ACCORD_CACHE_MAX_MB", value)
    assert store.max_bytes() == expected


def test_corrupt_entries_are_ignored(estate: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    expected = lint(str(estate), cache_dir=cache_dir, cached=False)
    lint(str(estate), cache_dir=cache_dir)
    found = entries(cache_dir, "parse") + entries(cache_dir, "lint")
    assert found
    for i, path in enumerate(found):
        blob = path.read_bytes()
        if i % 3 == 0:
            path.write_bytes(blob[: len(blob) // 2])  # truncated
        elif i % 3 == 1:
            path.write_bytes(blob[:-1] + bytes([blob[-1] ^ 1]))  # one bit flipped
        else:
            path.write_bytes(b"not a cache entry")
    assert lint(str(estate), cache_dir=cache_dir) == expected
    # and the entries were rewritten: a second warm run reads them back
    assert lint(str(estate), cache_dir=cache_dir) == expected


def test_a_forged_payload_with_a_wrong_digest_is_not_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path))
    store.write("lint", "ab" * 32, b'{"files": 1, "findings": []}')
    assert store.read("lint", "ab" * 32) == b'{"files": 1, "findings": []}'
    path = next(p for p in (tmp_path / "lint").rglob("ab*") if p.is_file())
    digest, _, payload = path.read_bytes().partition(b"\n")
    path.write_bytes(digest + b"\n" + payload.replace(b"1", b"2"))
    assert store.read("lint", "ab" * 32) is None


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "policies").glob("*.yaml")))
def test_cached_parse_equals_parse(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path))
    raw = (ROOT / "policies" / name).read_bytes()
    doc, source = parse_document(raw, name)
    store.enable(True)
    try:
        first = parsecache.parse(raw, name, parse_document)
        store.flush()
        second = parsecache.parse(raw, name, lambda *_: pytest.fail("not read from the cache"))
    finally:
        store.enable(False)
    for got_doc, got_source in (first, second):
        assert got_doc == doc
        assert got_source.values == source.values and got_source.keys == source.keys
        assert got_source.texts == source.texts


def test_keys_change_with_name_content_and_code(monkeypatch) -> None:
    base = parsecache.file_key("a.yaml", b"x: 1\n")
    assert parsecache.file_key("b.yaml", b"x: 1\n") != base
    assert parsecache.file_key("a.yaml", b"x: 2\n") != base
    store.code_fingerprint.cache_clear()
    try:
        monkeypatch.setattr(store, "FORMAT", b"accord-cache-other")
        assert parsecache.file_key("a.yaml", b"x: 1\n") != base
    finally:
        store.code_fingerprint.cache_clear()


def test_env_turns_the_cache_off(estate: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCORD_NO_CACHE", "1")
    lint(str(estate), cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_lint_dialect_choice_is_one_the_scanner_reads(tmp_path: Path, dialect: str) -> None:
    """``--dialect`` is offered by the light lint command without importing the scanner: each
    choice it offers must be one the scanner reads a file in (no exit 2, the file counted)."""
    sql = tmp_path / "p.sql"
    sql.write_text("CREATE TABLE t (a INT);\n", encoding="utf-8")
    code, out, err = run_cli(["lint", str(sql), "--dialect", dialect, "--no-cache"])
    assert code == 0, out + err
    assert "in 1 file" in out


def test_a_run_with_bad_input_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    estate = tmp_path / "estate"
    shutil.copytree(ROOT / "policies", estate)
    (estate / "zz_broken.yaml").write_text("masks: [unclosed\n", encoding="utf-8")
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(cache_dir))
    code = lint_command.command.main([str(estate)], standalone_mode=False)
    assert code == 2
    assert "zz_broken.yaml:2:1" in capsys.readouterr().err
    assert not cache_dir.exists()  # not even the files that parsed


def test_git_ignores_the_cache(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    lint(str(ROOT / "policies"), cache_dir=cache_dir)
    assert (cache_dir / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


# --------------------------------------------------------------------------------------------
# SQL files: one entry per batch linted together, keyed by every file's name and bytes


def _sql_estate(tmp_path: Path) -> Path:
    root = tmp_path / "sql"
    shutil.copytree(ROOT / "examples" / "sql" / "heart-of-problem", root)
    return root


def _sql_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob("*.sql"))


def _salted(root: Path) -> None:
    """ACC201 on the warehouse file goes: its hash takes a salt function."""
    old = "ELSE SHA2(val, 256)"
    _replace(
        root / "warehouse.snowflake.sql", old, "ELSE SHA2(val || GOVERNANCE.POLICIES.SALT(), 256)"
    )


def _lakehouse_comment(root: Path) -> None:
    """A comment in one file: SQL files are keyed by their bytes, so the batch is relinted."""
    _prepend(root / "lakehouse.databricks.sql", "-- reviewed\n")


def _bad_suppression(root: Path) -> None:
    """A suppression comment with no reason: exit 2, and nothing stored."""
    policy = "CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_MASK"
    _replace(root / "warehouse.snowflake.sql", policy, "-- accord: ignore ACC201\n" + policy)


@pytest.mark.parametrize(
    ("edit", "changed"),
    [
        (_salted, _rule_changed("ACC201")),
        (_lakehouse_comment, lambda b, a: b[1] != a[1]),
        (_bad_suppression, lambda b, a: "needs a reason" in a[1] and "needs a reason" not in b[1]),
    ],
    ids=["ACC201-salted", "comment-moves-lines", "bad-suppression"],
)
def test_sql_results_identical_with_and_without_cache(
    edit: Callable[[Path], None], changed: Callable[[Lint, Lint], bool], tmp_path: Path
) -> None:
    root = _sql_estate(tmp_path)
    cache_dir = tmp_path / "cache"
    uncached = lint(*_sql_files(root), cache_dir=cache_dir, cached=False)
    cold = lint(*_sql_files(root), cache_dir=cache_dir)
    assert entries(cache_dir, "lint")
    warm = lint(*_sql_files(root), cache_dir=cache_dir)
    assert cold == warm == uncached
    edit(root)
    after_uncached = lint(*_sql_files(root), cache_dir=cache_dir, cached=False)
    assert lint(*_sql_files(root), cache_dir=cache_dir) == after_uncached
    assert lint(*_sql_files(root), cache_dir=cache_dir) == after_uncached  # warm again
    assert changed(uncached, after_uncached)


def test_unchanged_sql_is_not_scanned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository (policies and SQL): a policy edit relints the policies, the unchanged SQL
    batch comes from the cache without scanning, and the options are part of the key."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "as-found", repo / "policies")
    shutil.copytree(ROOT / "examples" / "sql" / "heart-of-problem", repo / "sql")
    cache_dir = tmp_path / "cache"
    lint(str(repo), cache_dir=cache_dir)
    _pipeline_reads_nothing_governed(repo / "policies")
    expected = lint(str(repo), cache_dir=tmp_path / "other", cached=False)

    import accord.compiler.lint.inputs.sqlfiles

    def not_scanned(*args: object) -> object:
        raise AssertionError("an unchanged SQL file was scanned again")

    monkeypatch.setattr(accord.compiler.lint.inputs.sqlfiles, "scan_sql", not_scanned)
    assert lint(str(repo), cache_dir=cache_dir) == expected
    # another dialect or rule selection is another key: scanned (and refused here)
    for argv in (
        [str(repo), "--select", "ACC101"],
        [*_sql_files(repo / "sql"), "--dialect", "snowflake"],
    ):
        argv = ["lint", "--format", "json", *argv]
        code, _, err = run_cli(argv, env={"ACCORD_CACHE_DIR": str(cache_dir)})
        assert code == 2 and "scanned again" in err  # the refusal above, as an internal error


def test_a_warm_lint_of_a_repository_imports_no_scanner(tmp_path: Path) -> None:
    """Policies, SQL files and a Python file that is no notebook: the second run answers
    from the cache without importing the SQL scanner, sqlglot or pydantic."""
    import subprocess
    import sys

    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "as-found", repo / "policies")
    shutil.copytree(ROOT / "examples" / "sql" / "heart-of-problem", repo / "sql")
    (repo / "tool.py").write_text("print('not a notebook')\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "try:\n"
        "    main(['lint', '--format', 'json', sys.argv[1]])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('sqlglot', 'pydantic', 'accord.compiler.sqlscan', 'accord.compiler.model.schema')\n"
        "print(sorted({h for h in heavy for m in sys.modules if (m + '.').startswith(h + '.')}))\n"
    )
    env = {**os.environ, "ACCORD_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ACCORD_NO_CACHE", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(repo)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        for _ in range(2)
    ]
    cold, warm = (r.stdout.strip().splitlines()[-1] for r in runs)
    assert "sqlglot" in cold  # the first run scanned and validated
    assert warm == "[]", runs[1].stderr
    assert runs[0].stdout == runs[1].stdout.replace(warm, cold)  # the same findings


def test_positions_are_read_only_when_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file read from the cache brings its document and scalar texts; its positions come
    from pos/ when first asked for, or from parsing it again when that entry is gone."""
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path))
    raw = (ROOT / "policies" / "datasets.yaml").read_bytes()
    doc, source = parse_document(raw, "datasets.yaml")
    calls: list[str] = []

    def compute(raw: bytes, name: str):  # type: ignore[no-untyped-def]
        calls.append(name)
        return parse_document(raw, name)

    for pos_entry in (True, False):
        store.enable(True)
        try:
            parsecache.parse(raw, "datasets.yaml", compute)
            store.flush()
        finally:
            store.enable(False)
        if not pos_entry:
            for entry in entries(tmp_path, "pos"):
                entry.unlink()
        calls.clear()
        store.enable(True)
        try:
            got_doc, got_source = parsecache.parse(raw, "datasets.yaml", compute)
            assert got_doc == doc and got_source.texts == source.texts
            assert not got_source.materialised and not calls  # nothing parsed, no positions
            assert got_source.values == source.values and got_source.keys == source.keys
            assert calls == ([] if pos_entry else ["datasets.yaml"])
        finally:
            store.enable(False)


def test_lint_with_positions_pruned_is_the_same(estate: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    expected = lint(str(estate), cache_dir=cache_dir, cached=False)
    lint(str(estate), cache_dir=cache_dir)
    _comment_line_inserted(estate)  # relinted from cached documents (positions asked for)
    expected_after = lint(str(estate), cache_dir=tmp_path / "other", cached=False)
    for entry in entries(cache_dir, "pos"):
        entry.unlink()
    assert lint(str(estate), cache_dir=cache_dir) == expected_after != expected


def test_a_lint_entry_holds_the_findings_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """One JSON shape of a finding: the cache stores the record ``--format json`` lists from,
    reads it back equal, and an entry of the older shape (lists) is a miss, never a crash."""
    from accord.compiler.core.errors import Location
    from accord.compiler.lint.finding import Finding
    from accord.compiler.lint.incremental import cache as lint_cache

    f = Finding(
        Location("a.sql", 3, 4),
        "ACC203",
        "m",
        "msg",
        "fix",
        True,
        "why",
        (Location("b.sql", 1, 2),),
    )
    payload = lint_cache.findings_to_json([f], 2)
    assert lint_cache.findings_from_json(payload) == ([f], 2)
    assert json.loads(payload)["findings"] == [f.to_record()]
    old = b'{"files": 1, "findings": [[["a.sql", 1, 1], "ACC203", "m", "x", "", false, "", []]]}'
    assert lint_cache.findings_from_json(old) is None
    key = lint_cache.sql_key([("a.sql", b"x")], "o")
    monkeypatch.setattr(lint_cache, "FORMAT", b"lint-other")
    assert lint_cache.sql_key([("a.sql", b"x")], "o") != key
