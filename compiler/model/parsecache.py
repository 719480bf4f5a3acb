"""The cache of parsed policy files, over :mod:`compiler.core.store`.

* ``parse/``: one entry per YAML file, keyed by accord's code fingerprint, the file's display
  name and its bytes; it holds the plain document :func:`compiler.model.loader.parse_document`
  returned and the texts of its non-string scalars.
* ``pos/``: keyed as ``parse/``: the positions of every value and key of the file, read only
  when something asks for one (a message; a clean lint asks for none).
* ``sem/``: one entry per YAML file, keyed as ``parse/``: its :func:`content_digest`, what
  ``accord lint`` reads of the file (the lint-result cache, :mod:`compiler.lint.incremental.cache`, is
  keyed by it).

A file whose digest is computed before its project is loaded is parsed once: the parse is kept
for this run (:data:`_parsed`) and handed to the loader's :func:`parse`.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import re
from collections.abc import Callable
from typing import Any

from accord.compiler.core import store
from accord.compiler.core.errors import InputError
from accord.compiler.model.source import Positions, SourceMap

#: files parsed by this run, by file key, kept for the loader (a file is parsed once per run
#: even when its content digest is computed before the project is loaded)
_parsed: dict[str, tuple[Any, Any]] = {}
store.on_enable(_parsed.clear)
#: a ``sem/`` entry: a SHA-256 in hexadecimal (anything else is a miss)
_HEX_DIGEST = re.compile(rb"[0-9a-f]{64}")


def file_key(name: str, raw: bytes) -> str:
    h = hashlib.sha256(store.code_fingerprint().encode())
    h.update(b"\0parse\0" + os.fsencode(name) + b"\0")
    h.update(raw)
    return h.hexdigest()


def parse(raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]]) -> Any:
    """``compute(raw, name)`` (``compiler.model.loader.parse_document``), through the cache."""
    if not store.enabled():
        return compute(raw, name)
    key = file_key(name, raw)
    found = _parsed.pop(key, None)
    if found is not None:
        return found
    return _parse(raw, name, compute, key)


def parsed(raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]]) -> Any:
    """:func:`parse`, the result kept for this run: the loader's parse of the same file gets
    it again instead of parsing the file a second time."""
    if not store.enabled():
        return compute(raw, name)
    key = file_key(name, raw)
    found = _parsed.get(key)
    if found is None:
        found = _parsed[key] = _parse(raw, name, compute, key)
    return found


def _parse(
    raw: bytes, name: str, compute: Callable[[bytes, str], tuple[Any, Any]], key: str
) -> tuple[Any, Any]:
    payload = store.read("parse", key)
    if payload is not None:
        try:
            doc, texts = store.loads(payload)
            # the texts are read as strings (a scalar's written form): any other is a miss
            if (
                isinstance(doc, dict)
                and isinstance(texts, dict)
                and all(type(t) is str for t in texts.values())
            ):
                return doc, CachedSource(raw, name, texts, key, compute)
        except store.UNREADABLE:
            pass
    doc, source = compute(raw, name)
    with contextlib.suppress(ValueError):  # a value marshal cannot hold: not cached
        parsed = marshal.dumps((doc, source.texts))
        positions = marshal.dumps((source.values, source.keys))
        store.later("parse", key, parsed)
        store.later("pos", key, positions)
    return doc, source


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
            payload = store.read("pos", self._key)
            with contextlib.suppress(*store.UNREADABLE):
                values, keys = store.loads(payload or b"")  # b"": EOFError
                if _positions(values, self._name) and _positions(keys, self._name):
                    self._full = SourceMap(values=values, keys=keys, texts=self.texts)
        if self._full is None:  # the entry is gone or damaged: parse the file again
            _, source = self._compute(self._raw, self._name)
            with contextlib.suppress(ValueError):
                store.later("pos", self._key, marshal.dumps((source.values, source.keys)))
            self._full = SourceMap(values=source.values, keys=source.keys, texts=self.texts)
        return self._full

    @property
    def values(self) -> Any:  # type: ignore[override]
        return self._positions().values

    @property
    def keys(self) -> Any:  # type: ignore[override]
        return self._positions().keys


def _positions(table: Any, name: str) -> bool:
    """Whether ``table`` is a ``pos/`` table of the file ``name``: path -> (``name``, line,
    column); any other is a miss (read only when a message needs a position)."""
    return isinstance(table, dict) and all(
        type(p) is tuple
        and len(p) == 3
        and p[0] == name
        and type(p[1]) is int
        and type(p[2]) is int
        and type(path) is tuple
        for path, p in table.items()
    )


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
    payload = store.read("sem", key)
    if payload is not None and _HEX_DIGEST.fullmatch(payload):
        return payload.decode("ascii")
    try:
        doc, source = _parse(raw, name, compute, key)
    except InputError:
        return None
    _parsed[key] = (doc, source)
    digest = content_digest(raw, doc, source)
    store.later("sem", key, digest.encode("ascii"))
    return digest
