"""The cache of lint results, over :mod:`compiler.core.store`.

``lint/`` entries: one per linted project, keyed by the code fingerprint, the selected rules
and the name and content digest of each of its files in order (:func:`project_key`); and one
per batch of SQL files linted together, keyed by the code fingerprint, ``--dialect``, the
selected rules, every file's name and bytes, and what the SQL checks read of the policy models
linted beside them (:func:`sql_key`: the mapping tables, ``sql_reads`` of the rule table).
Each holds the findings and the number of files. ``lintgrants/`` entries: a project's mapping
tables, keyed by its files' content digests (:func:`grants_key`), so that a run whose SQL files
and model are unchanged keys its SQL result without loading the model.

**What a lint result is keyed by.** Project entries are keyed by each file's *content
digest* (``sem/``, :func:`compiler.model.parsecache.content_digest`), not by its bytes: an
edit that changes nothing accord reads (a comment line added, removed or changed; blank lines
at the end; CRLF for LF) reuses the findings without loading or linting anything but the
edited file. The digest covers everything ``lint`` reads of a file: the parsed document, every
node's position, the text of every non-string scalar, and the file's lines with only the lines
that hold nothing (blank, or a comment outside any scalar) blanked, so the line a finding
points into is compared too (ACC101 finds a column inside a scalar's line). Lines that look
like comments inside a block scalar are content, and the parsed document catches them. Any
other edit changes the digest: the project is validated afresh and only the rules whose inputs
changed are re-run, from the dependency index of :mod:`compiler.lint.incremental.deps` (the rules are
cross-file: ACC202, ACC403 compare entries of different files, so what a rule reads is
declared per rule, and a reused finding the engine cannot prove still true is never given).

Every key also hashes :data:`FORMAT`, the shape of an entry's payload: entries of an older
shape are never read.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from accord.compiler.core import store
from accord.compiler.core.today import today
from accord.compiler.lint.finding import Finding
from accord.compiler.model import parsecache

#: the shape of a ``lint/`` payload (2: the findings as their JSON records)
FORMAT = b"lint-2"


def file_digests(
    documents: list[tuple[bytes, str]], compute: Callable[[bytes, str], tuple[Any, Any]]
) -> dict[str, str] | None:
    """Each file's name and :func:`~compiler.model.parsecache.file_digest`, in order; None
    when a file does not parse (nothing is reused)."""
    out = {}
    for raw, name in documents:
        digest = parsecache.file_digest(raw, name, compute)
        if digest is None:
            return None
        out[name] = digest
    return out


def project_key(
    documents: list[tuple[bytes, str]],
    options: str,
    compute: Callable[[bytes, str], tuple[Any, Any]],
) -> str | None:
    """The key of a project's lint result: accord, the options, and each file's name and
    :func:`file_digest` in order. None when a file does not parse (nothing is reused)."""
    digests = file_digests(documents, compute)
    return None if digests is None else key_of(digests, options)


def key_of(digests: dict[str, str], options: str) -> str:
    """:func:`project_key` of the files' :func:`file_digests`."""
    h = hashlib.sha256(store.code_fingerprint().encode() + b"\0" + FORMAT)
    h.update(b"\0lint\0" + options.encode() + b"\0")
    # grants until a date are judged at today (ACC507, and what semantics gives the personas
    # in ACC403 / ACC404): a result is reused on the day it was computed for only
    h.update(b"today\0" + today().isoformat().encode() + b"\0")
    for name, digest in digests.items():
        h.update(os.fsencode(name) + b"\0" + digest.encode() + b"\0")
    return h.hexdigest()


def sql_key(blobs: list[tuple[str, bytes]], options: str, grants: Grants = ()) -> str:
    """The key of the lint result of SQL files linted together: accord, the options, each
    file's name and bytes in order, and the mapping tables handed to the SQL checks."""
    h = hashlib.sha256(store.code_fingerprint().encode() + b"\0" + FORMAT)
    h.update(b"\0sql\0" + options.encode() + b"\0")
    for name, raw in blobs:
        h.update(os.fsencode(name) + b"\0" + hashlib.sha256(raw).hexdigest().encode() + b"\0")
    h.update(b"grants\0" + grants_to_json(grants))
    return h.hexdigest()


#: a project's mapping tables as plain rows: the fields of
#: :class:`~compiler.model.grants.GrantsTable` in order (its module imports the model's schema,
#: which a run answered from the cache does not)
Grants = Sequence[Sequence[str | None]]


def grants_key(digests: dict[str, str]) -> str:
    """The key of a project's mapping tables: accord and each file's name and content digest
    in order (:func:`file_digests`)."""
    h = hashlib.sha256(store.code_fingerprint().encode() + b"\0" + FORMAT)
    h.update(b"\0grants\0")
    for name, digest in digests.items():
        h.update(os.fsencode(name) + b"\0" + digest.encode() + b"\0")
    return h.hexdigest()


def grants_to_json(grants: Grants) -> bytes:
    return json.dumps([list(row) for row in grants]).encode()


def grants_from_json(payload: bytes) -> list[tuple[str | None, ...]] | None:
    """The rows of a payload; None for one that does not decode."""
    try:
        rows = json.loads(payload)
        if not isinstance(rows, list):
            return None
        out = []
        for row in rows:
            if not isinstance(row, list) or not all(v is None or isinstance(v, str) for v in row):
                return None
            out.append(tuple(row))
        return out
    except store.UNREADABLE:
        return None


def findings_to_json(findings: Sequence[Finding], files: int) -> bytes:
    """An entry's payload: the number of files and each finding's record
    (:meth:`~compiler.lint.finding.Finding.to_record`, the shape ``--format json`` lists)."""
    return json.dumps(
        {"files": files, "findings": [f.to_record() for f in findings]}, sort_keys=True
    ).encode()


def findings_from_json(payload: bytes) -> tuple[list[Finding], int] | None:
    """The findings and number of files of a payload; None for one that does not decode."""
    try:
        doc = json.loads(payload)
        return [Finding.from_record(r) for r in doc["findings"]], int(doc["files"])
    except store.UNREADABLE:
        return None
