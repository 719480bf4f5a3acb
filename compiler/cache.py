"""A cache of parsed policy files and of lint results, so a warm pre-commit run is cheap.

The cache is an optimisation only: every entry is keyed by the SHA-256 of what it was computed
from, so a hit gives exactly what computing afresh would.

* ``parse/``: one entry per YAML file, keyed by accord's code fingerprint, the file's display
  name and its bytes; it holds the plain document :func:`compiler.model.loader.parse_document`
  returned and the texts of its non-string scalars.
* ``pos/``: keyed as ``parse/``: the positions of every value and key of the file, read only
  when something asks for one (a message; a clean lint asks for none).
* ``sem/``: one entry per YAML file, keyed as ``parse/``: its :func:`content_digest`.
* ``lint/``: one entry per linted project, keyed by the code fingerprint, the selected rules
  and the name and content digest of each of its files in order; and one per batch of SQL
  files linted together, keyed by the code fingerprint, ``--dialect``, the selected rules and
  every file's name and bytes (:func:`sql_key`). Each holds the findings and the number of
  files.

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

**What a lint result is keyed by.** ``lint/`` entries are keyed by each file's *content
digest* (``sem/``, :func:`content_digest`), not by its bytes: an edit that changes nothing
accord reads (a comment line added, removed or changed; blank lines at the end; CRLF for LF)
reuses the findings without loading or linting anything but the edited file. The digest
covers everything ``lint`` reads of a file: the parsed document, every node's position, the
text of every non-string scalar, and the file's lines with only the lines that hold nothing
(blank, or a comment outside any scalar) blanked, so the line a finding points into is
compared too (ACC101 finds a column inside a scalar's line). Lines that look like comments
inside a block scalar are content, and the parsed document catches them. Any other edit
changes the digest, and the project is linted afresh: the rules are cross-file (ACC202,
ACC403 compare entries of different files), and a reused finding the engine cannot prove
still true is never given.

**Pruning.** Entries are used least-recently-first: a hit refreshes an entry's mtime, and a
run that wrote entries then removes the oldest ones (never one this run used) until the
cache holds at most 80% of ``$ACCORD_CACHE_MAX_MB`` (default 256 MiB). Temporary files a
killed run left behind are removed after an hour.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = b"accord-cache-3"
_enabled: bool | None = None
#: entries computed by this run, written by :func:`flush` only once the command has read its
#: whole input without error (a run that exits 2 writes nothing, the cache included)
_pending: list[tuple[str, str, bytes]] = []
#: the entries this run read or wrote: pruning never removes them
_used: set[Path] = set()
#: files parsed by this run, by file key, kept for the loader (a file is parsed once per run
#: even when its content digest is computed before the project is loaded)
_parsed: dict[str, tuple[Any, Any]] = {}
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


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on
    _pending.clear()
    _used.clear()
    _parsed.clear()


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
    here = Path(__file__).resolve().parent
    for package in (here, here.parent / "targets"):
        for path in sorted(package.rglob("*.py")):
            h.update(path.relative_to(package.parent).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def file_key(name: str, raw: bytes) -> str:
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(b"\0parse\0" + name.encode() + b"\0")
    h.update(raw)
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


# --------------------------------------------------------------------------------------------
# parsed files


def parse(raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]]) -> Any:
    """``compute(raw, name)`` (``compiler.model.loader.parse_document``), through the cache."""
    if not enabled():
        return compute(raw, name)
    key = file_key(name, raw)
    found = _parsed.pop(key, None)
    if found is not None:
        return found
    return _parse(raw, name, compute, key)


def _parse(
    raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]], key: str
) -> tuple[Any, Any]:
    payload = read("parse", key)
    if payload is not None:
        try:
            doc, texts = marshal.loads(payload)
            if isinstance(doc, dict) and isinstance(texts, dict):
                return doc, _cached_source()(raw, name, texts, key, compute)
        except (ValueError, EOFError, TypeError):
            pass
    doc, source = compute(raw, name)
    with contextlib.suppress(ValueError):  # a value marshal cannot hold: not cached
        parsed = marshal.dumps((doc, source.texts))
        positions = marshal.dumps((source.values, source.keys))
        later("parse", key, parsed)
        later("pos", key, positions)
    return doc, source


@lru_cache(maxsize=1)
def _cached_source() -> type:
    """The class of a file's source map read from ``parse/`` (defined on first use: the
    loader imports this module)."""
    from compiler.model.loader import Positions, SourceMap

    class CachedSource(Positions):
        """The scalar texts of a file at once, its positions (``pos/``) only when first
        asked for: a clean lint asks for none, so a warm run after an edit reads the
        unchanged files' documents only. A ``pos/`` entry that is gone or damaged has the
        file parsed again."""

        def __init__(
            self,
            raw: bytes,
            name: str,
            texts: dict[Any, str],
            key: str,
            compute: Callable[[bytes, str], tuple[Any, Any]],
        ) -> None:
            self.texts = texts
            self._raw, self._name, self._key, self._compute = raw, name, key, compute
            self._full: Any = None

        @property
        def materialised(self) -> bool:
            """Whether the positions were asked for."""
            return self._full is not None

        def _positions(self) -> Any:
            if self._full is None:
                payload = read("pos", self._key)
                with contextlib.suppress(ValueError, EOFError, TypeError):
                    values, keys = marshal.loads(payload or b"")  # b"": EOFError
                    if isinstance(values, dict) and isinstance(keys, dict):
                        self._full = SourceMap(values=values, keys=keys, texts=self.texts)
            if self._full is None:  # the entry is gone or damaged: parse the file again
                _, source = self._compute(self._raw, self._name)
                with contextlib.suppress(ValueError):
                    later("pos", self._key, marshal.dumps((source.values, source.keys)))
                self._full = SourceMap(values=source.values, keys=source.keys, texts=self.texts)
            return self._full

        @property
        def values(self) -> Any:  # type: ignore[override]
            return self._positions().values

        @property
        def keys(self) -> Any:  # type: ignore[override]
            return self._positions().keys

    return CachedSource


def content_digest(raw: bytes, doc: Any, source: Any) -> str:
    """What ``accord lint`` reads of one file (see the module docstring): the parsed
    document, its positions and scalar texts, and its lines with the empty ones blanked.
    Two files with the same digest lint alike.

    The document is hashed by its ``repr``: the loader makes only dicts, lists, strings,
    ints, bools, None and floats (whose written text is in ``source.texts``), and the repr of
    those is exact (``1``, ``1.0``, ``True`` and ``'1'`` differ; so do key orders)."""
    h = hashlib.sha256(b"content\0")
    h.update(
        repr((doc, source.values, source.keys, source.texts)).encode("utf-8", "backslashreplace")
    )
    text = raw.decode("utf-8", "surrogateescape")
    # str.splitlines breaks at every YAML line break (and at characters YAML refuses)
    lines = ["" if _empty(line) else line for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    h.update(b"\0lines\0" + "\n".join(lines).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _empty(line: str) -> bool:
    stripped = line.strip(" \t\ufeff")
    return not stripped or stripped.startswith("#")


def file_digest(
    raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]]
) -> str | None:
    """The :func:`content_digest` of a file: from ``sem/`` (without parsing it) or computed,
    the file parsed through the cache. None when the file does not parse (the loader reports
    why)."""
    key = file_key(name, raw)
    payload = read("sem", key)
    if payload is not None and len(payload) == 64:
        return payload.decode("ascii")
    from compiler.core.errors import InputError

    try:
        doc, source = _parse(raw, name, compute, key)
    except InputError:
        return None
    _parsed[key] = (doc, source)
    digest = content_digest(raw, doc, source)
    later("sem", key, digest.encode("ascii"))
    return digest


# --------------------------------------------------------------------------------------------
# pruning


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


# --------------------------------------------------------------------------------------------
# lint results


def project_key(
    documents: list[tuple[bytes, str]],
    options: str,
    compute: Callable[[bytes, str], tuple[Any, Any]],
) -> str | None:
    """The key of a project's lint result: accord, the options, and each file's name and
    :func:`file_digest` in order. None when a file does not parse (nothing is reused)."""
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(b"\0lint\0" + options.encode() + b"\0")
    for raw, name in documents:
        digest = file_digest(raw, name, compute)
        if digest is None:
            return None
        h.update(name.encode() + b"\0" + digest.encode() + b"\0")
    return h.hexdigest()


def sql_key(blobs: list[tuple[str, bytes]], options: str) -> str:
    """The key of the lint result of SQL files linted together: accord, the options, and
    each file's name and bytes in order."""
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(b"\0sql\0" + options.encode() + b"\0")
    for name, raw in blobs:
        h.update(name.encode() + b"\0" + hashlib.sha256(raw).hexdigest().encode() + b"\0")
    return h.hexdigest()


def findings_to_json(findings: list[Any], files: int) -> bytes:
    def loc(x: Any) -> list[Any]:
        return [x.file, x.line, x.column]

    return json.dumps(
        {
            "files": files,
            "findings": [
                [
                    loc(f.location),
                    f.rule,
                    f.object,
                    f.message,
                    f.fix,
                    f.suppressed,
                    f.reason,
                    [loc(r) for r in f.related],
                ]
                for f in findings
            ],
        },
        sort_keys=True,
    ).encode()


def findings_from_json(payload: bytes) -> tuple[list[Any], int] | None:
    from compiler.core.errors import Location
    from compiler.lint.finding import Finding

    try:
        doc = json.loads(payload)
        out = [
            Finding(
                Location(*where),
                rule,
                obj,
                message,
                fix,
                suppressed,
                reason,
                tuple(Location(*r) for r in related),
            )
            for where, rule, obj, message, fix, suppressed, reason, related in doc["findings"]
        ]
        return out, int(doc["files"])
    except (ValueError, TypeError, KeyError):
        return None
