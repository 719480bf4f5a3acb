"""The cache of parsed files and lint results (compiler/cache.py): an optimisation only.

Every test compares what ``accord lint`` prints with and without the cache, on the same files:
cold (the cache is filled), warm (read back), after an edit that changes a cross-file rule
(ACC202 across masks, ACC403 across datasets and surfaces), and with every entry corrupted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from compiler import cache
from compiler.cli import cli
from compiler.commands import lint as lint_command
from compiler.loader import parse_document
from compiler.sqlscan import DIALECTS
from tests.conftest import ROOT


def lint(*args: str, cache_dir: Path, cached: bool = True) -> tuple[int, str]:
    argv = ["lint", "--format", "json", *args, *([] if cached else ["--no-cache"])]
    result = CliRunner().invoke(cli, argv, env={"ACCORD_CACHE_DIR": str(cache_dir)})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


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


@pytest.mark.parametrize(
    ("source", "edit"),
    [("policies", _same_salt_twice), ("examples/as-found", _pipeline_reads_nothing_governed)],
    ids=["ACC202-salt", "ACC403-surface"],
)
def test_results_identical_with_and_without_cache(
    source: str, edit: object, tmp_path: Path
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

    edit(estate)  # type: ignore[operator]
    after_uncached = lint(str(estate), cache_dir=cache_dir, cached=False)
    after_cached = lint(str(estate), cache_dir=cache_dir)
    assert after_cached == after_uncached
    # the edit changed what a cross-file rule reports, and the cache did not hide it
    rule = "ACC202" if edit is _same_salt_twice else "ACC403"
    assert of_rule(uncached[1], rule) != of_rule(after_uncached[1], rule)


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
    cache.write("lint", "ab" * 32, b'{"files": 1, "findings": []}')
    assert cache.read("lint", "ab" * 32) == b'{"files": 1, "findings": []}'
    path = next(p for p in (tmp_path / "lint").rglob("ab*") if p.is_file())
    digest, _, payload = path.read_bytes().partition(b"\n")
    path.write_bytes(digest + b"\n" + payload.replace(b"1", b"2"))
    assert cache.read("lint", "ab" * 32) is None


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "policies").glob("*.yaml")))
def test_cached_parse_equals_parse(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(tmp_path))
    raw = (ROOT / "policies" / name).read_bytes()
    doc, source = parse_document(raw, name)
    cache.enable(True)
    try:
        first = cache.parse(raw, name, parse_document)
        cache.flush()
        second = cache.parse(raw, name, lambda *_: pytest.fail("not read from the cache"))
    finally:
        cache.enable(False)
    for got_doc, got_source in (first, second):
        assert got_doc == doc
        assert got_source.values == source.values and got_source.keys == source.keys


def test_keys_change_with_name_content_and_code(monkeypatch) -> None:
    base = cache.file_key("a.yaml", b"x: 1\n")
    assert cache.file_key("b.yaml", b"x: 1\n") != base
    assert cache.file_key("a.yaml", b"x: 2\n") != base
    cache.code_fingerprint.cache_clear()
    try:
        monkeypatch.setattr(cache, "FORMAT", b"accord-cache-other")
        assert cache.file_key("a.yaml", b"x: 1\n") != base
    finally:
        cache.code_fingerprint.cache_clear()


def test_env_turns_the_cache_off(estate: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ACCORD_NO_CACHE", "1")
    lint(str(estate), cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_lint_dialect_choices_are_sqlscans() -> None:
    assert lint_command.DIALECTS == DIALECTS


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
