"""Incremental lint's input digests from per-file pieces kept in the cache.

:func:`compiler.lint.incremental.deps.input_digests` digests every section of the merged model and the
datasets' governance view (:func:`compiler.lint.incremental.deps.governance`) from scratch: its cost grows
with the estate even when one file changed. This module computes **the same digests, byte for
byte**, from what each file contributes (``lintpieces/`` entries, one per file, keyed by
accord's code, the file's display name and its content digest,
:func:`compiler.model.parsecache.content_digest`): an unchanged file's piece is read from the
cache, an edited file's is computed from its parsed document.

A digest is the SHA-256 of the ``repr`` of a value built from the merged model, and the repr of
a merged mapping is its files' reprs joined: the loader merges a mapping section by taking each
file's entries in file order (an entry defined twice is an error, and nothing is digested), so
``repr(merged)`` is ``"{" + ", ".join(non-empty inner reprs of each file's section) + "}"``.
A section that is not a mapping (``version``) is the first file's value; the written texts of a
section (its non-string scalars) are the merged ones sorted by their repr; the owner of a
section is the first file that declares it. So a piece holds, per section of the file, the repr
of its value, the reprs of its written texts, and the words :func:`compiler.lint.incremental.deps._words`
reads off it; and per dataset what the governance view decides by: its replica link, its plain
columns (the only ones the view may leave out, decided by the words of the whole model and the
columns of its replica group), its entry digest (:func:`compiler.lint.incremental.verdict.entries`), and
the file's governance repr for the decisions of the run that stored it (recomputed from the
model when a decision changed: a word moved between files, a replica group changed).

Anything else (a file whose ``datasets`` is not a mapping of mappings by string names; no
datasets at all) is digested from scratch, as before. ``tests/test_lint_pieces.py`` checks the
result equals :func:`compiler.lint.incremental.deps.input_digests` over random edit sequences.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
from collections.abc import Callable, Mapping
from typing import Any

from accord.compiler.core import store
from accord.compiler.lint.incremental import deps, verdict

#: the shape of a ``lintpieces/`` payload: entries of another shape are never read
FORMAT = b"lintpieces-2"

_NONE: frozenset[str] = frozenset()

_NEEDED = frozenset(i for inputs in deps.RULE_INPUTS.values() for i in inputs.reads)


def key_of(name: str, digest: str) -> str:
    h = hashlib.sha256(store.code_fingerprint().encode() + b"\0" + FORMAT + b"\0")
    h.update(os.fsencode(name) + b"\0" + digest.encode())
    return h.hexdigest()


#: the fields of a piece, in the order of its payload
_FIELDS = (
    "sections",
    "texts",
    "words",
    "whole_words",
    "regular",
    "names",
    "links",
    "plain",
    "every_plain",
    "entries",
    "columns",
    "keys",
    "decided",
    "governance",
)


class Piece:
    """What one file contributes to the input digests (see the module docstring)."""

    __slots__ = _FIELDS

    def __init__(self, fields: tuple[Any, ...]) -> None:
        (
            #: (section, is a mapping, repr of its value: inner for a mapping) in file order
            self.sections,
            #: section -> the reprs of (path, text) of the file's written texts under it
            self.texts,
            #: the words of the file's mapping sections (datasets: their entries but columns)
            self.words,
            #: section -> the words of a section that is not a mapping
            self.whole_words,
            #: whether ``datasets`` (if any) is a mapping of mappings by string names
            self.regular,
            #: the datasets' names, in file order
            self.names,
            #: dataset -> the dataset it is a replica of (a string ``replica_of``)
            self.links,
            #: per dataset, the case-folded names of its plain single-word columns
            self.plain,
            #: every name of ``plain``
            self.every_plain,
            #: per dataset, its entry digest (:func:`compiler.lint.incremental.verdict.entries`)
            self.entries,
            #: per dataset, the case-folded names of its columns (None: not a mapping)
            self.columns,
            #: mapping section -> the names of the file's entries
            self.keys,
            #: the decisions ``governance`` was computed for (see :func:`_decisions`)
            self.decided,
            #: the inner repr of the file's datasets as the governance view sees them
            self.governance,
        ) = fields

    def fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, s) for s in _FIELDS)


def _plain(entry: dict[Any, Any]) -> frozenset[str]:
    """The case-folded names of the columns :func:`deps.governance` may leave out of
    ``entry``: a spec of only ``type``, a string name that is one word."""
    columns = entry.get("columns")
    if type(columns) is not dict:
        return frozenset()
    out = set()
    for col, spec in columns.items():
        if type(spec) is dict and len(spec) == 1 and "type" in spec and type(col) is str:
            folded = col.casefold()
            if deps._WORD.fullmatch(folded) is not None:
                out.add(folded)
    return frozenset(out)


def compute(doc: dict[Any, Any], texts: Mapping[Any, str]) -> Piece | None:
    """The piece of a parsed file (None for a document the loader refuses: a section name
    that is not a string)."""
    sections = []
    keys: dict[str, tuple[Any, ...]] = {}
    words: set[str] = set()
    whole_words: dict[str, frozenset[str]] = {}
    for section, value in doc.items():
        if type(section) is not str:
            return None
        mapping = section != "version" and isinstance(value, dict)
        shown = ""
        if section in _NEEDED:
            shown = repr(value)[1:-1] if mapping else repr(value)
        sections.append((section, mapping, shown))
        if mapping:
            keys[section] = tuple(value)
        if section == "datasets":
            continue
        if mapping:
            words |= deps._words([value])
        else:
            whole_words[section] = frozenset(deps._words([value]))
    by_section: dict[str, list[str]] = {}
    for path, text in texts.items():
        if path:
            by_section.setdefault(path[0], []).append(repr((path, text)))
    datasets = doc.get("datasets")
    regular = "datasets" not in doc or (
        type(datasets) is dict
        and all(type(n) is str and type(e) is dict for n, e in datasets.items())
    )
    names, plain, entries, folded = [], [], [], []
    links = {}
    every_plain: set[str] = set()
    if regular and type(datasets) is dict:
        words |= deps._words(
            [[v for k, v in e.items() if k != "columns"] for e in datasets.values()]
        )
        for name, entry in datasets.items():
            names.append(name)
            parent = entry.get("replica_of")
            if isinstance(parent, str):
                links[name] = parent
            found = _plain(entry)
            plain.append(found)
            every_plain |= found
            entries.append(verdict._digest(entry))
            columns = entry.get("columns")
            if type(columns) is dict:
                folded.append(tuple(sorted({c.casefold() for c in columns if type(c) is str})))
            else:
                folded.append(None)
    return Piece(
        (
            sections,
            by_section,
            frozenset(words),
            whole_words,
            regular,
            names,
            links,
            plain,
            frozenset(every_plain),
            entries,
            folded,
            keys,
            None,
            "",
        )
    )


def _read(key: str) -> Piece | None:
    payload = store.read("lintpieces", key)
    if payload is None:
        return None
    try:
        fields = store.loads(payload)
        if type(fields) is not tuple or len(fields) != len(_FIELDS):
            return None
        return Piece(fields)
    except store.UNREADABLE:
        return None


def _write(key: str, piece: Piece) -> None:
    with contextlib.suppress(ValueError):  # a value marshal cannot hold: not cached
        store.later("lintpieces", key, marshal.dumps(piece.fields()))


def pieces_of(
    files: list[str],
    digests: Mapping[str, str],
    part: Callable[[str], tuple[Any, Any]],
    fresh: set[str],
    cached: bool = True,
) -> list[tuple[str, Piece]] | None:
    """Each file's (key, piece): from the cache (unless not ``cached``), or computed from its
    parsed document and source (``part``: display name -> (document, source)), its key added
    to ``fresh``. None when one cannot be had."""
    out = []
    for name in files:
        key = key_of(name, digests[name])
        piece = _read(key) if cached else None
        if piece is None:
            doc, source = part(name)
            piece = compute(doc, source.texts)
            if piece is None:
                return None
            fresh.add(key)
        out.append((key, piece))
    return out


def _sha(parts: list[str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "backslashreplace"))
    return h.hexdigest()


class Digests:
    """What the pieces say of a project, without loading it: the input digests
    (:func:`compiler.lint.incremental.deps.input_digests`), each dataset's entry digest
    (:func:`compiler.lint.incremental.verdict.entries`), the owner of each section and the merged model's
    sections in order (as the loader would make them), the file of each dataset."""

    def __init__(
        self,
        inputs: dict[str, str],
        entries: dict[str, str],
        owners: dict[str, str],
        sections: list[str],
        holders: dict[str, str],
        part: Callable[[str], tuple[Any, Any]],
    ) -> None:
        self.inputs, self.entries, self.owners = inputs, entries, owners
        self.sections, self.holders, self.part = sections, holders, part


def digests(files: Mapping[str, str], part: Callable[[str], tuple[Any, Any]]) -> Digests | None:
    """The :class:`Digests` of the project of ``files`` (each file's name and content digest,
    in order; every file parsed) from the files' pieces; ``part(name)`` parses a file (its
    document and source), asked only for files whose piece is not in the cache or whose
    governance must be recomputed. None when the pieces cannot say: a file the loader would
    refuse to merge (an entry defined in two files, a section that is a mapping in one file
    and not in another, a section that is not a mapping in two files: the loader compares
    them), a ``datasets`` that is not a mapping of mappings by string names, or none."""
    fresh: set[str] = set()
    found = pieces_of(list(files), files, part, fresh)
    try:
        try:
            return _told(found, files, part, fresh)
        except store.UNREADABLE:
            if found is None or all(key in fresh for key, _ in found):
                raise  # pieces this run computed: a fault of accord's, never hidden
        # a piece from the cache that is not one accord wrote (an entry made with this
        # machine's key): a miss, and every piece is computed again
        found = pieces_of(list(files), files, part, fresh, cached=False)
        return _told(found, files, part, fresh)
    finally:
        for key, piece in found or ():
            if key in fresh:
                _write(key, piece)


def _told(
    found: list[tuple[str, Piece]] | None,
    files: Mapping[str, str],
    part: Callable[[str], tuple[Any, Any]],
    fresh: set[str],
) -> Digests | None:
    if found is None or not _merges(found):
        return None
    return _digests(found, files, part, fresh)


def _merges(found: list[tuple[str, Piece]]) -> bool:
    """Whether the loader merges the files of these pieces without a complaint (see
    :func:`digests`), and they describe a ``datasets`` section."""
    kinds: dict[str, bool] = {}
    entries: dict[str, set[Any]] = {}
    for _, piece in found:
        if not piece.regular:
            return False
        for section, mapping, _ in piece.sections:
            if kinds.setdefault(section, mapping) != mapping:
                return False
            if not mapping:
                if section in entries:
                    return False  # a second value: the loader compares them
                entries[section] = set()
                continue
            names = entries.setdefault(section, set())
            size = len(names)
            keys = piece.keys[section]
            names.update(keys)
            if len(names) != size + len(keys):
                return False  # an entry defined twice (or twice in a file: never parsed)
    return kinds.get("datasets") is True


def _digests(
    found: list[tuple[str, Piece]],
    files: Mapping[str, str],
    part: Callable[[str], tuple[Any, Any]],
    fresh: set[str],
) -> Digests:
    names = list(files)
    out = {"*": deps.input_digests({}, {}, {}, files)["*"]}
    # the first file of each section (its owner, and the value of a section not a mapping)
    first: dict[str, Piece] = {}
    owners: dict[str, str] = {}
    for name, (_, piece) in zip(names, found, strict=True):
        for section, _mapping, _shown in piece.sections:
            if section not in first:
                first[section] = piece
                owners[section] = name
    holders: dict[str, str] = {}
    for name, (_, piece) in zip(names, found, strict=True):
        holders.update(dict.fromkeys(piece.names, name))
    for section in (*deps.SECTIONS, deps.GOVERNANCE):
        if section not in _NEEDED:
            continue
        name = "datasets" if section == deps.GOVERNANCE else section
        if section == deps.GOVERNANCE:
            value = _governance(found, names, holders, part, fresh)
        elif name not in first:
            value = ["None"]
        else:
            value = _value(found, first, name)
        written = []
        for _, piece in found:
            if name in piece.texts and (_is_mapping(first, name) or first.get(name) is piece):
                written += piece.texts[name]
        written.sort()
        owner = repr(owners.get(name))
        out[section] = _sha(["(", *value, ", ([", ", ".join(written), "], ", owner, "))"])
    entries: dict[str, str] = {}
    for _, piece in found:
        entries.update(zip(piece.names, piece.entries, strict=True))
    return Digests(out, entries, owners, list(first), holders, part)


def _is_mapping(first: Mapping[str, Piece], section: str) -> bool:
    piece = first.get(section)
    return piece is not None and any(s == section and m for s, m, _ in piece.sections)


def _value(found: list[tuple[str, Piece]], first: Mapping[str, Piece], section: str) -> list[str]:
    """The repr of the merged section, as pieces to join."""
    if not _is_mapping(first, section):
        return [next(shown for s, _, shown in first[section].sections if s == section)]
    inner = [
        shown
        for _, piece in found
        for s, mapping, shown in piece.sections
        if s == section and mapping and shown
    ]
    return ["{", ", ".join(inner), "}"]


def _governance(
    found: list[tuple[str, Piece]],
    files: list[str],
    holders: Mapping[str, str],
    part: Callable[[str], tuple[Any, Any]],
    fresh: set[str],
) -> list[str]:
    """The repr of :func:`deps.governance` of the merged model, as pieces to join."""
    mentioned: set[str] = set()
    seen: set[str] = set()
    links: dict[str, str] = {}
    for _, piece in found:
        mentioned |= piece.words
        for section, words in piece.whole_words.items():
            if section not in seen:
                seen.add(section)
                mentioned |= words
        links.update(piece.links)
    # replica groups (deps._roots, followed from the datasets that have a link only: every
    # other dataset is its own root)
    roots: dict[str, str] = {}
    for name in links:
        chain = [name]
        here = name
        while True:
            parent = links.get(here)
            if parent is None or parent not in holders or parent in chain:
                break
            chain.append(parent)
            here = parent
        roots[name] = here
    size: dict[str, int] = {}
    for root in roots.values():
        size[root] = size.get(root, 0) + 1
    for root in list(size):
        if root not in roots:
            size[root] += 1  # the root itself, which has no link
    grouped = {n: r for n, r in roots.items() if size[r] > 1}
    grouped.update({r: r for r in size if r not in roots and size[r] > 1})
    by_piece = {name: piece for name, (_, piece) in zip(files, found, strict=True)}
    at: dict[str, dict[str, int]] = {}
    names: dict[str, dict[str, int]] = {}
    for name, root in grouped.items():
        file = holders[name]
        piece = by_piece[file]
        if file not in at:
            at[file] = {n: i for i, n in enumerate(piece.names)}
        columns = piece.columns[at[file][name]]
        if columns is not None:
            count = names.setdefault(root, {})
            for col in columns:
                count[col] = count.get(col, 0) + 1
    shared = {
        root: frozenset(c for c, n in count.items() if n > 1) for root, count in names.items()
    }
    inner = []
    for file, (key, piece) in zip(files, found, strict=True):
        if not piece.names:
            continue
        decided = _decisions(piece, mentioned, grouped, shared)
        if decided != piece.decided:
            datasets = part(file)[0]["datasets"]
            piece.governance = _file_governance(piece, datasets, mentioned, grouped, shared)
            piece.decided = decided
            fresh.add(key)  # stored again with this run's decisions
        inner.append(piece.governance)
    return ["{", ", ".join(inner), "}"]


def _dropped(
    plain: frozenset[str],
    name: str,
    mentioned: set[str],
    grouped: Mapping[str, str],
    shared: Mapping[str, frozenset[str]],
) -> frozenset[str]:
    """The folded names of the plain columns the governance view leaves out of ``name``: not
    mentioned, nor a column of two datasets or more of its replica group (``shared``)."""
    left = plain - mentioned
    if name in grouped:
        left -= shared.get(grouped[name], _NONE)
    return left


def _decisions(
    piece: Piece,
    mentioned: set[str],
    grouped: Mapping[str, str],
    shared: Mapping[str, frozenset[str]],
) -> tuple[Any, ...]:
    """What the governance view of the file's datasets depends on beyond the file: which of
    its plain columns' names the model mentions, and what is left out of each of its datasets
    in a replica group (a dataset in none leaves out its plain columns not mentioned)."""
    hit = piece.every_plain & mentioned
    in_groups = tuple(
        (name, _dropped(plain, name, mentioned, grouped, shared))
        for name, plain in zip(piece.names, piece.plain, strict=True)
        if name in grouped
    )
    return (hit, in_groups)


def _file_governance(
    piece: Piece,
    datasets: Mapping[str, Any],
    mentioned: set[str],
    grouped: Mapping[str, str],
    shared: Mapping[str, frozenset[str]],
) -> str:
    out = {}
    for name, plain in zip(piece.names, piece.plain, strict=True):
        entry = datasets[name]
        drop = _dropped(plain, name, mentioned, grouped, shared)
        if drop:
            columns = entry["columns"]
            kept = {
                c: v
                for c, v in columns.items()
                if not (
                    type(c) is str
                    and c.casefold() in drop
                    and type(v) is dict
                    and len(v) == 1
                    and "type" in v
                )
            }
            entry = {**entry, "columns": kept}
        out[name] = entry
    return repr(out)[1:-1]
