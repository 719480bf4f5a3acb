"""A cache a pull request commits cannot change what CI's lint says (compiler/core/store.py).

Each test runs the flow an attacker would use: a repository that commits a hostile
``.accord_cache/`` (forged entries, a symbolic link out of the checkout, entries that are links to
``/dev/zero``), cloned afresh and linted as CI lints it (``CI=true``, a real process, a machine
whose cache key the attacker never saw). The lint must report the defect the file holds, and
nothing outside the checkout may be written or deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from accord.compiler.core import store
from tests.cli import run_process
from tests.conftest import ROOT

POLICY = """\
CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.MASK_NOTES AS (val STRING)
  RETURNS STRING ->
  CASE WHEN CURRENT_ROLE() = 'CLINICAL' THEN val ELSE '***' END;
"""
LINT = ["lint", "policies", "sql/mask.snowflake.sql", "--format", "json"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _repository(root: Path) -> Path:
    repo = root / "repo"
    shutil.copytree(ROOT / "policies", repo / "policies")
    (repo / "sql").mkdir()
    (repo / "sql" / "mask.snowflake.sql").write_text(POLICY, encoding="utf-8")
    _git(repo, "init", "-q")
    return repo


def _lint(cwd: Path, user_cache: Path, **env: str) -> tuple[int, list[str]]:
    result = run_process(LINT, cwd=cwd, env={"XDG_CACHE_HOME": str(user_cache), **env}, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, [f["rule"] for f in json.loads(result.stdout)["findings"]]


def _forge(cache: Path, sign) -> int:  # type: ignore[no-untyped-def]
    """Rewrite every lint result in ``cache`` to say "no findings", re-signed by ``sign``."""
    forged = 0
    for entry in sorted((cache / "lint").rglob("*")):
        if not entry.is_file():
            continue
        _, _, payload = entry.read_bytes().partition(b"\n")
        doc = json.loads(payload)
        doc["findings"] = []
        payload = json.dumps(doc, sort_keys=True).encode()
        entry.write_bytes(sign(entry.name, payload) + b"\n" + payload)
        forged += 1
    return forged


def _commit_and_clone(repo: Path, root: Path) -> Path:
    _git(repo, "add", "-A", "-f")
    _git(repo, "commit", "-q", "-m", "a pull request")
    clone = root / "clone"
    _git(root, "clone", "-q", str(repo), str(clone))
    return clone


@pytest.fixture
def attacker(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose committed cache an attacker wrote with accord on their own machine:
    the defect's lint result, rewritten to "no findings" and signed as the old format (anyone
    could compute it) and with the attacker's own machine key."""
    repo = _repository(tmp_path)
    their_machine = tmp_path / "attacker-home"
    env = {"ACCORD_CACHE_DIR": str(repo / ".accord_cache"), "CI": "false"}
    assert _lint(repo, their_machine, **env) == (1, ["ACC101"])
    assert _forge(repo / ".accord_cache", lambda key, p: b"0" * 64) >= 1
    # on the attacker's own machine the forgery works: the run that proves the test can fail
    their_key = (their_machine / "accord" / "key").read_bytes()
    assert _forge(repo / ".accord_cache", lambda key, p: store._digest(their_key, "lint", key, p))
    assert _lint(repo, their_machine, **env) == (0, [])
    return repo, _commit_and_clone(repo, tmp_path)


def test_ci_does_not_read_a_committed_cache(attacker: tuple[Path, Path], tmp_path: Path) -> None:
    _, clone = attacker
    assert (clone / ".accord_cache" / "lint").is_dir()
    ci = tmp_path / "ci-home"
    assert _lint(clone, ci, CI="true") == (1, ["ACC101"])
    # on CI the cache is off unless asked: nothing was written anywhere
    assert not (ci / "accord" / "checkouts").exists()


def test_a_committed_cache_named_explicitly_is_still_not_trusted(
    attacker: tuple[Path, Path], tmp_path: Path
) -> None:
    _, clone = attacker
    before = {p: p.read_bytes() for p in (clone / ".accord_cache").rglob("*") if p.is_file()}
    code, rules = _lint(clone, tmp_path / "ci-home", CI="true", ACCORD_CACHE_DIR=".accord_cache")
    assert (code, rules) == (1, ["ACC101"])
    for path, data in before.items():  # the forged entries were recomputed, not reused
        if "/lint/" in path.as_posix():
            assert path.read_bytes() != data


def test_outside_ci_the_default_cache_is_outside_the_checkout(
    attacker: tuple[Path, Path], tmp_path: Path
) -> None:
    _, clone = attacker
    home = tmp_path / "dev-home"
    env = {"CI": "false", "ACCORD_CACHE_DIR": ""}
    assert _lint(clone, home, **env) == (1, ["ACC101"])
    digest = hashlib.sha256(os.path.realpath(clone).encode()).hexdigest()[:24]
    assert (home / "accord" / "checkouts" / digest / "lint").is_dir()
    assert _lint(clone, home, **env) == (1, ["ACC101"])  # and a warm run says the same
    key = home / "accord" / "key"
    assert key.stat().st_mode & 0o777 == 0o600


def test_a_cache_that_links_out_of_the_checkout_is_not_written_or_pruned(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path)
    outside = tmp_path / "someone-elses"
    (outside / "lint" / "ab").mkdir(parents=True)
    decoy = outside / "lint" / "ab" / ("ab" + "0" * 62)
    decoy.write_bytes(b"precious\n")
    os.symlink(outside, repo / ".accord_cache")
    clone = _commit_and_clone(repo, tmp_path)
    assert (clone / ".accord_cache").is_symlink()
    env = {"CI": "true", "ACCORD_CACHE_DIR": ".accord_cache", "ACCORD_CACHE_MAX_MB": "0.000001"}
    assert _lint(clone, tmp_path / "ci-home", **env) == (1, ["ACC101"])
    assert sorted(p.relative_to(outside).as_posix() for p in outside.rglob("*")) == [
        "lint",
        "lint/ab",
        decoy.relative_to(outside).as_posix(),
    ]
    assert decoy.read_bytes() == b"precious\n"


def test_an_entry_that_links_to_a_device_is_not_read(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    home = tmp_path / "home"
    env = {"CI": "true", "ACCORD_CACHE_DIR": str(tmp_path / "cache")}
    assert _lint(repo, home, **env) == (1, ["ACC101"])
    entries = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.name[0] != "."]
    assert entries
    for entry in entries:
        entry.unlink()
        os.symlink("/dev/zero", entry)
    assert _lint(repo, home, **env) == (1, ["ACC101"])


def test_a_key_others_can_read_is_not_used(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    home = tmp_path / "home"
    env = {"CI": "true", "ACCORD_CACHE_DIR": str(tmp_path / "cache")}
    assert _lint(repo, home, **env) == (1, ["ACC101"])
    key = home / "accord" / "key"
    key.chmod(0o644)
    shutil.rmtree(tmp_path / "cache")
    assert _lint(repo, home, **env) == (1, ["ACC101"])
    assert not (tmp_path / "cache").exists()  # no trusted key: nothing written


# --------------------------------------------------------------------------------------------
# pruning deletes only what accord wrote (issue 39, item 6)

#: other tools' files in a shared cache folder, three levels deep (where pruning looks), one of
#: them under a folder named as accord's lint results are
OTHERS = {
    "pip/http/a1b2": b"a cached wheel",
    "fontconfig/ab/cd": b"fonts",
    "lint/ab/notes.txt": b"another linter's notes",
    "lint/ab/" + "ab" * 32: b"another tool's file, named as an entry is",
    "parse/zz/readme": b"x",
}


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_a_cache_directory_accord_did_not_create_is_not_used(tmp_path: Path) -> None:
    """``ACCORD_CACHE_DIR`` pointed at a shared folder (``~/.cache``) holding other tools'
    files: accord neither writes there nor deletes anything, however small the bound, and says
    so; lint's result is unchanged."""
    repo = _repository(tmp_path)
    shared = tmp_path / "shared-cache"
    for rel, content in OTHERS.items():
        (shared / rel).parent.mkdir(parents=True, exist_ok=True)
        (shared / rel).write_bytes(content)
    env = {"CI": "false", "ACCORD_CACHE_DIR": str(shared), "ACCORD_CACHE_MAX_MB": "0.000001"}
    result = run_process(LINT, cwd=repo, env={"XDG_CACHE_HOME": str(tmp_path / "home"), **env})
    assert result.returncode == 1, result.stderr
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["ACC101"]
    assert _files(shared) == OTHERS  # nothing deleted, nothing written
    assert f"{shared} holds files accord did not write: the cache is not used" in result.stderr


def test_pruning_removes_only_accords_own_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In accord's own cache directory, pruning removes entries in accord's format (a known
    kind, a two-digit shard, a digest name, a digest line) and leaves anything else there."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ACCORD_CACHE_DIR", str(cache))
    store.enable(True)
    try:
        store.write("lint", "cd" * 32, b"x" * 100)
        old = store._path("lint", "cd" * 32)
        os.utime(old, (1_000_000, 1_000_000))
        strays = {rel: content for rel, content in OTHERS.items()}
        strays["lint/ab/" + "ab" * 32] = b"precious\n"  # named as an entry, not one
        strays["lint/cd/" + "ce" * 32] = b"0" * 64 + b"\n"  # in the wrong shard
        for rel, content in strays.items():
            (cache / rel).parent.mkdir(parents=True, exist_ok=True)
            (cache / rel).write_bytes(content)
            os.utime(cache / rel, (1_000, 1_000))  # older than every entry
        store._used.clear()
        store.prune(limit=1)
        assert not old.exists()  # accord's entry, least recently used: pruned
        left = _files(cache)
        assert {rel: left.get(rel) for rel in strays} == strays
    finally:
        store.enable(False)


def test_an_empty_directory_is_adopted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty directory named as the cache becomes accord's (its marker written); a new one
    is created with it."""
    for cache in (tmp_path / "empty", tmp_path / "new"):
        if cache.name == "empty":
            cache.mkdir()
        monkeypatch.setenv("ACCORD_CACHE_DIR", str(cache))
        store.enable(True)
        try:
            store.write("lint", "ef" * 32, b"payload")
            assert store.read("lint", "ef" * 32) == b"payload"
        finally:
            store.enable(False)
        assert (cache / ".gitignore").read_text() == "# written by accord\n*\n"
