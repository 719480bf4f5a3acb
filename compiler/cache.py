"""A cache of parsed policy files and of lint results, so a warm pre-commit run is cheap.

The cache is an optimisation only: every entry is keyed by the SHA-256 of what it was computed
from, so a hit gives exactly what computing afresh would.

* ``parse/``: one entry per YAML file, keyed by accord's code fingerprint, the file's display
  name and its bytes; it holds what :func:`compiler.loader.parse_document` returned (the plain
  document and its positions).
* ``lint/``: one entry per linted project, keyed by the code fingerprint and the keys of all
  its files (names and bytes) in order; it holds the findings and the number of files.

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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = b"accord-cache-1"
_enabled: bool | None = None
#: entries computed by this run, written by :func:`flush` only once the command has read its
#: whole input without error (a run that exits 2 writes nothing, the cache included)
_pending: list[tuple[str, str, bytes]] = []


def directory() -> Path:
    return Path(os.environ.get("ACCORD_CACHE_DIR") or ".accord_cache")


def enabled() -> bool:
    """Whether this process uses the cache (off unless a command turned it on)."""
    return bool(_enabled) and not os.environ.get("ACCORD_NO_CACHE")


def enable(on: bool = True) -> None:
    global _enabled
    _enabled = on
    _pending.clear()


def later(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` when the run succeeds (:func:`flush`)."""
    _pending.append((kind, key, payload))


def flush() -> None:
    """Write the entries this run computed (see ``_pending``)."""
    while _pending:
        write(*_pending.pop(0))


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
    """The payload stored under ``key``, or None when absent or corrupt."""
    try:
        blob = _path(kind, key).read_bytes()
    except OSError:
        return None
    digest, sep, payload = blob.partition(b"\n")
    if not sep or digest != hashlib.sha256(FORMAT + key.encode() + payload).hexdigest().encode():
        return None
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
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return


# --------------------------------------------------------------------------------------------
# parsed files


def parse(raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]]) -> Any:
    """``compute(raw, name)`` (``compiler.loader.parse_document``), through the cache."""
    if not enabled():
        return compute(raw, name)
    from compiler.loader import SourceMap

    key = file_key(name, raw)
    payload = read("parse", key)
    if payload is not None:
        try:
            doc, values, keys = marshal.loads(payload)
            if isinstance(doc, dict) and isinstance(values, dict) and isinstance(keys, dict):
                return doc, SourceMap(values=values, keys=keys)
        except (ValueError, EOFError, TypeError):
            pass
    doc, source = compute(raw, name)
    with contextlib.suppress(ValueError):  # a value marshal cannot hold: not cached
        later("parse", key, marshal.dumps((doc, source.values, source.keys)))
    return doc, source


# --------------------------------------------------------------------------------------------
# lint results


def project_key(documents: list[tuple[bytes, str]], options: str) -> str:
    h = hashlib.sha256(code_fingerprint().encode())
    h.update(b"\0lint\0" + options.encode() + b"\0")
    for raw, name in documents:
        h.update(file_key(name, raw).encode() + b"\0")
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
    from compiler.errors import Location
    from compiler.lint import Finding

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
