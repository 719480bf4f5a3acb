"""The cache store: content-addressed entries on disk, knowing nothing of what they hold.

Every entry is keyed by the SHA-256 of what it was computed from, so a hit gives exactly what
computing afresh would; the cache is an optimisation only. Payloads are written by the modules
that define them: :mod:`compiler.model.parsecache` (``parse/``, ``pos/``, ``sem/``: parsed
policy files) and :mod:`compiler.lint.cache` (``lint/``: lint results).

The *code fingerprint* hashes accord's version and the source of every module of the
``compiler`` and ``targets`` packages: the model's schema, the loader and every rule are
defined there, so any change of accord invalidates every entry.

The directory is ``$ACCORD_CACHE_DIR``, else ``.accord_cache`` in the working directory; it
is safe to delete at any time. ``ACCORD_NO_CACHE=1`` (or ``accord lint --no-cache``) turns the
cache off; git ignores it (it holds a ``.gitignore`` of ``*``). Entries are written only by a
run that read all of its input (:func:`flush`; a run that exits 2 writes nothing), each
atomically (a temporary file renamed into place). An entry is
read as a digest line and a payload; an entry whose digest does not match its payload, or
that does not decode, is ignored and recomputed, never trusted. Payloads are ``marshal`` (plain
values only) or JSON, never pickle: reading an entry cannot run code.

**Pruning.** Entries are used least-recently-first: a hit refreshes an entry's mtime, and a
run that wrote entries then removes the oldest ones (never one this run used) until the
cache holds at most 80% of ``$ACCORD_CACHE_MAX_MB`` (default 256 MiB). Temporary files a
killed run left behind are removed after an hour.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

FORMAT = b"accord-cache-3"
_enabled: bool | None = None
#: entries computed by this run, written by :func:`flush` only once the command has read its
#: whole input without error (a run that exits 2 writes nothing, the cache included)
_pending: list[tuple[str, str, bytes]] = []
#: the entries this run read or wrote: pruning never removes them
_used: set[Path] = set()
#: what :func:`enable` resets besides this module's own state (see :func:`on_enable`)
_resets: list[Callable[[], None]] = []
#: the default bound on the cache's size (``$ACCORD_CACHE_MAX_MB``)
DEFAULT_MAX_MB = 256.0
#: pruning keeps at most this share of the bound, so that it does not run on every write
_KEEP = 0.8
#: a temporary file older than this was left by a run that was killed
_STALE_TMP_SECONDS = 3600.0


def directory() -> Path:
    return Path(os.environ.get("ACCORD_CACHE_DIR") or ".accord_cache")


def enabled() -> bool:
    """Whether this process uses the cache (off unless a command turned it on)."""
    return bool(_enabled) and not os.environ.get("ACCORD_NO_CACHE")


def on_enable(reset: Callable[[], None]) -> None:
    """Call ``reset`` whenever :func:`enable` starts a run afresh (a payload's module keeps
    per-run state of its own, such as the files it has parsed)."""
    _resets.append(reset)


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on
    _pending.clear()
    _used.clear()
    for reset in _resets:
        reset()


def later(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` when the run succeeds (:func:`flush`)."""
    _pending.append((kind, key, payload))


def flush() -> None:
    """Write the entries this run computed (see ``_pending``), then prune when it wrote any."""
    wrote = bool(_pending)
    while _pending:
        write(*_pending.pop(0))
    if wrote:
        prune()


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """accord's version and the SHA-256 of every module of accord's packages."""
    h = hashlib.sha256(FORMAT)
    try:
        from importlib.metadata import version

        h.update(version("accord").encode())
    except Exception:  # pragma: no cover - not installed: the sources below still count
        h.update(b"unversioned")
    here = Path(__file__).resolve().parent.parent  # compiler/
    for package in (here, here.parent / "targets"):
        for path in sorted(package.rglob("*.py")):
            h.update(path.relative_to(package.parent).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _path(kind: str, key: str) -> Path:
    return directory() / kind / key[:2] / key


def read(kind: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None when absent or corrupt. A hit refreshes the
    entry's mtime (pruning removes the least recently used entries first)."""
    path = _path(kind, key)
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    digest, sep, payload = blob.partition(b"\n")
    if not sep or digest != hashlib.sha256(FORMAT + key.encode() + payload).hexdigest().encode():
        return None
    _used.add(path)
    with contextlib.suppress(OSError):
        os.utime(path)
    return payload


def write(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` atomically; a cache that cannot be written is simply not used."""
    path = _path(kind, key)
    digest = hashlib.sha256(FORMAT + key.encode() + payload).hexdigest().encode()
    try:
        if not directory().is_dir():
            directory().mkdir(parents=True)
            # git ignores the whole cache without the user's .gitignore (as ruff's cache does)
            (directory() / ".gitignore").write_text("# written by accord\n*\n", encoding="utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(digest + b"\n" + payload)
            os.replace(tmp, path)
            _used.add(path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return


def max_bytes() -> int:
    """The bound on the cache's size: ``$ACCORD_CACHE_MAX_MB`` mebibytes (default 256; a
    value that is not a positive number means the default)."""
    try:
        mb = float(os.environ.get("ACCORD_CACHE_MAX_MB") or DEFAULT_MAX_MB)
    except ValueError:
        mb = DEFAULT_MAX_MB
    if not mb > 0 or mb == float("inf"):
        mb = DEFAULT_MAX_MB
    return int(mb * 1024 * 1024)


def prune(limit: int | None = None) -> None:
    """Remove the least recently used entries until the cache holds at most 80% of
    ``limit`` (default :func:`max_bytes`), and temporary files a killed run left behind.
    Entries this run read or wrote are kept, even past the bound."""
    limit = max_bytes() if limit is None else limit
    root = directory()
    now = time.time()
    found: list[tuple[float, int, Path]] = []
    total = 0
    try:
        kinds = [k for k in root.iterdir() if k.is_dir() and not k.is_symlink()]
    except OSError:
        return
    for kind in kinds:
        for entry in _files(kind):
            try:
                info = entry.lstat()
            except OSError:
                continue
            if entry.name.startswith(".tmp-"):
                if now - info.st_mtime > _STALE_TMP_SECONDS:
                    with contextlib.suppress(OSError):
                        entry.unlink()
                continue
            total += info.st_size
            if entry not in _used:
                found.append((info.st_mtime, info.st_size, entry))
    if total <= limit:
        return
    keep = int(limit * _KEEP)
    for _, size, entry in sorted(found, key=lambda f: (f[0], str(f[2]))):
        if total <= keep:
            break
        with contextlib.suppress(OSError):
            entry.unlink()
            total -= size


def _files(kind: Path) -> list[Path]:
    """The files of one kind's directory (``kind/xx/key``); links are never followed."""
    out = []
    try:
        shards = [d for d in kind.iterdir() if d.is_dir() and not d.is_symlink()]
    except OSError:
        return out
    for shard in shards:
        with contextlib.suppress(OSError):
            out += [f for f in shard.iterdir() if f.is_file() and not f.is_symlink()]
    return out
