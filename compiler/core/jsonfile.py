"""Read JSON that accord wrote once and someone may have edited since (plans, ledgers,
manifests) with bounds: a size limit checked before reading, a nesting limit checked before
parsing, UTF-8 decoding, and every failure a located ``file:line:column`` diagnostic. Only
regular files are read (never a FIFO or a device)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from accord.compiler.core.errors import Diagnostic, InputError, Location

#: Bound on the size of one policy or SQL file, checked before it is read.
MAX_FILE_BYTES = 8 * 1024 * 1024
#: a plan.json or manifest.json is a few kilobytes; a ledger grows by one line per stage
MAX_JSON_BYTES = 16 * 1024 * 1024
#: the deepest any accord JSON file nests is 4; anything far deeper was not written by accord
MAX_JSON_DEPTH = 32


def read_bytes(
    path: Path, what: str, limit: int = MAX_JSON_BYTES, name: str | None = None
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (``name``: the path as
    reported). A FIFO, a device (a symlink to ``/dev/zero``) or a directory is refused without
    reading from it; the size is checked before reading and again while reading."""
    where = Location(name if name is not None else str(path), 1, 1)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as err:
        raise InputError(Diagnostic(where, f"cannot read {what}: {err.strerror}")) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(Diagnostic(where, f"{what} is not a regular file"))
        if info.st_size > limit:
            raise InputError(
                Diagnostic(where, f"{what} holds {info.st_size} bytes; at most {limit} are read")
            )
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputError(Diagnostic(where, f"{what} holds more than {limit} bytes"))
        return b"".join(chunks)
    except OSError as err:
        raise InputError(Diagnostic(where, f"cannot read {what}: {err.strerror}")) from None
    finally:
        os.close(fd)


#: byte-order marks of the encodings a text editor saves instead of UTF-8 (longest first)
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def decode(raw: bytes, name: str, what: str) -> str:
    """``raw`` as UTF-8 (a UTF-8 byte-order mark is kept: readers treat it as one blank
    column), or a diagnostic at the first byte that makes it not UTF-8 text: a UTF-16 or
    UTF-32 byte-order mark (1:1), a byte that is not UTF-8, or a NUL byte (text in UTF-16
    without a byte-order mark decodes as UTF-8 with a NUL after every ASCII letter; no
    policy, SQL or JSON file holds one). The column counts characters, as every other
    diagnostic does."""
    for bom, encoding in _OTHER_BOMS:
        if raw.startswith(bom):
            raise InputError(
                Diagnostic(
                    Location(name, 1, 1),
                    f"{what} is {encoding} (it starts with a {encoding} byte-order mark), "
                    "not UTF-8: save it as UTF-8",
                )
            )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line, column = _byte_position(raw, err.start)
        raise InputError(
            Diagnostic(
                Location(name, line, column),
                f"{what} is not valid UTF-8 (byte 0x{raw[err.start]:02x})",
            )
        ) from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, column = _byte_position(raw, nul)
        raise InputError(
            Diagnostic(
                Location(name, line, column),
                f"{what} is not UTF-8 text: it holds a NUL byte (0x00), as UTF-16 text "
                "does; save it as UTF-8",
            )
        )
    return text


def _byte_position(raw: bytes, offset: int) -> tuple[int, int]:
    """(line, column) of byte ``offset``: the column counts the characters before it."""
    start = raw.rfind(b"\n", 0, offset) + 1
    before = raw[start:offset].decode("utf-8", errors="replace")
    return raw.count(b"\n", 0, offset) + 1, len(before) + 1


def depth_problem(text: str, max_depth: int = MAX_JSON_DEPTH) -> tuple[int, str] | None:
    """(offset, message) of the first place ``text`` nests deeper than ``max_depth`` (strings
    skipped), or None. Checked before parsing: a deep document would exhaust the parser's
    recursion."""
    depth, in_string, escaped = 0, False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > max_depth:
                return i, f"nested deeper than {max_depth} levels"
        elif c in "]}":
            depth -= 1
    return None


def position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def loads(text: str, name: str, what: str, first_line: int = 1) -> Any:
    """Parse one JSON document, located in ``name`` (``first_line`` for one line of a file)."""
    deep = depth_problem(text)
    if deep is not None:
        line, column = position(text, deep[0])
        raise InputError(
            Diagnostic(Location(name, first_line + line - 1, column), f"{what}: {deep[1]}")
        )
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except _Twice:
        offset, key = _written_twice(text)
        line, column = position(text, offset)
        raise InputError(
            Diagnostic(
                Location(name, first_line + line - 1, column),
                f"{what}: invalid JSON: the key {key!r} is written twice in one object (readers "
                "disagree on which one counts)",
            )
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(
            Diagnostic(
                Location(name, first_line + err.lineno - 1, err.colno),
                f"{what}: invalid JSON: {err.msg}",
            )
        ) from None
    except (RecursionError, ValueError) as err:  # a number too long, for instance
        raise InputError(
            Diagnostic(Location(name, first_line, 1), f"{what}: invalid JSON: {err}")
        ) from None


class _Twice(ValueError):
    """A key written twice in one JSON object."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are distinct: Python keeps the last of two, other readers (a Go
    one, OPA) may keep the first, so a document with a key written twice means two things."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Twice
    return out


def _written_twice(text: str) -> tuple[int, str]:
    """The offset and the key of the first key written twice in one object of ``text`` (a
    valid JSON document), read token by token."""
    stack: list[set[str] | None] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            keys = stack[-1] if stack else None
            if keys is not None and k < n and text[k] == ":":
                key = json.loads(text[i : j + 1])
                if key in keys:
                    return i, key
                keys.add(key)
            i = j + 1
            continue
        if c == "{":
            stack.append(set())
        elif c == "[":
            stack.append(None)
        elif c in "}]":
            stack.pop()
        i += 1
    return 0, ""


def read_json(path: Path, what: str, limit: int = MAX_JSON_BYTES) -> tuple[Any, str]:
    """The parsed document and its text."""
    text = decode(read_bytes(path, what, limit), str(path), what)
    return loads(text, str(path), what), text


def locate_key(text: str, name: str, path: tuple[Any, ...]) -> Location:
    """A best-effort location of the JSON value at ``path`` in ``text`` (as accord writes it,
    one key per line): the line of the last key of ``path`` found in order, else 1:1. A list
    index ``n`` followed by a key skips that key's first ``n`` occurrences."""
    offset, skip = 0, 0
    for step in path:
        if isinstance(step, int):
            skip = step
            continue
        needle = json.dumps(str(step)) + ":"
        found = text.find(needle, offset)
        while skip and found >= 0:
            found = text.find(needle, found + 1)
            skip -= 1
        skip = 0
        if found < 0:
            break
        offset = found
    if offset == 0:
        return Location(name, 1, 1)
    line, column = position(text, offset)
    return Location(name, line, column)


def deepest_bracket(text: str) -> tuple[int, int]:
    """The line and column where ``text`` first nests deepest in ``[`` and ``{``: where a
    document too deep to read is located (TOML, YAML or JSON flow collections)."""
    depth = deepest = at = 0
    for i, c in enumerate(text):
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, i
        elif c in "]}":
            depth -= 1
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
