"""Incremental lint without validating the whole model: a cached verdict of the skeleton.

A one-entry edit that only adds, removes or retypes *plain* columns (a spec of nothing but
``type``, a name nothing else in the model mentions, not shared within a replica group: the
columns :func:`compiler.lint.incremental.deps.governance` leaves out) changes nothing validation reads but
those columns. So when a full validation succeeds, lint records (``lintvalid/`` entries, one
per project as :func:`compiler.lint.incremental.deps.index_key` names it):

* the *skeleton digest* (:func:`skeleton`): every section of the model but ``datasets`` with
  its written texts, the datasets' governance view with theirs, any other top-level key, the
  files' names in order;
* each dataset's entry digest;
* the suppressions (``ignore:``) of the validated model's masks, datasets, indexes and
  surfaces, which ACC002 and the suppressed findings read (they are part of the skeleton).

A later run whose skeleton digest is the recorded one checks only the plain columns of the
datasets whose entry changed (:func:`plain_columns_valid`), with the very checks validation
applies to such a column: its name (the schema's ``ColumnName``), its type text (``Text``), a
type of the dataset's platform (``is_type``), not of the other (``foreign_type``), with its
parameters in the platform's range (``type_limit``). What
the check cannot judge alone sends the run to full validation: a column spec of another shape,
a key or type that is not a plain string, two columns of the dataset whose names fold to one,
any text YAML wrote for the column. Only "valid" is cached: an invalid model always goes
through full validation, so its messages are today's.

Why a plain column is judged alone: validation reads a dataset's columns in the schema (each
name and spec on its own), in ``_resolve`` (the type on the dataset's platform, masks, names
that fold to one within the dataset, row filter columns, index and probe columns by name), and
in ``compiler.model.replicas`` (the source's *masked* columns, and the replica's columns and
``omits`` looked up by those names). A plain column has no mask or identifier, and its name is
written nowhere else in the model (row filters, indexes, probes, ``omits`` are outside
``columns``) and in no other dataset of its replica group, or the governance view would keep it:
no lookup by name can find it, so only the checks above read it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core import store
from accord.compiler.core.platforms import PLATFORMS
from accord.compiler.lint.incremental import deps
from accord.compiler.model.names import COLUMN_NAME, no_control
from accord.compiler.model.types import foreign_type, is_type, type_limit

#: the shape of a ``lintvalid/`` payload: entries of another shape are never read
FORMAT = "lintvalid-1"

#: the sections whose entries carry ``ignore:`` (compiler.lint.engine.suppression_for)
IGNORING = ("masks", "datasets", "indexes", "surfaces")


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "backslashreplace")).hexdigest()


def skeleton(
    data: Mapping[str, Any],
    texts: Mapping[Any, str],
    owners: Mapping[Any, str],
    names: list[str],
    inputs: Mapping[str, str],
) -> str:
    """The digest of everything validation reads but the plain columns. ``inputs``: the
    digests :func:`deps.input_digests` computed (each section with its written texts and
    owner, the governance view with every text of the datasets); sections it has none for are
    digested here the same way."""
    parts: list[Any] = [FORMAT, list(names), list(data)]
    missing = [s for s in deps.SECTIONS if s != "datasets" and s not in inputs]
    if missing or deps.GOVERNANCE not in inputs:
        written: dict[Any, list[tuple[Any, str]]] = {}
        for path, text in texts.items():
            if path:
                written.setdefault(path[0], []).append((path, text))
    for section in deps.SECTIONS:
        if section == "datasets":
            continue
        if section in inputs:
            parts.append((section, inputs[section]))
        else:
            own = (data.get(section), sorted(written.get(section, []), key=repr))
            parts.append((section, _digest((own, owners.get(section)))))
    if deps.GOVERNANCE in inputs:
        parts.append(("governance", inputs[deps.GOVERNANCE]))
    else:
        own = sorted(written.get("datasets", []), key=repr), owners.get("datasets")
        parts.append(("governance", _digest((deps.governance(data), own))))
    extra = [(k, data[k]) for k in data if k not in deps.SECTIONS]
    parts.append(("other", _digest((extra, sorted(texts.items(), key=repr)) if extra else ())))
    return _digest(parts)


def entries(data: Mapping[str, Any]) -> dict[str, str] | None:
    """Each dataset's entry digest (None when ``datasets`` is not a mapping by name)."""
    datasets = data.get("datasets")
    if type(datasets) is not dict or not all(type(k) is str for k in datasets):
        return None
    return {name: _digest(entry) for name, entry in datasets.items()}


@dataclass
class Verdict:
    skeleton: str
    entries: dict[str, str]
    #: section -> entry -> rule -> reason (entries that ignore nothing left out)
    ignores: dict[str, dict[str, dict[str, str]]]
    files: int


def read(key: str) -> Verdict | None:
    payload = store.read("lintvalid", key)
    if payload is None:
        return None
    try:
        doc = json.loads(payload)
        if doc["format"] != FORMAT:
            return None
        return Verdict(
            str(doc["skeleton"]),
            {str(k): str(v) for k, v in doc["entries"].items()},
            {
                str(s): {
                    str(n): {str(r): str(why) for r, why in rules.items()}
                    for n, rules in by_name.items()
                }
                for s, by_name in doc["ignores"].items()
            },
            int(doc["files"]),
        )
    except store.UNREADABLE:
        return None


def write(key: str, verdict: Verdict) -> None:
    payload = {
        "format": FORMAT,
        "skeleton": verdict.skeleton,
        "entries": verdict.entries,
        "ignores": verdict.ignores,
        "files": verdict.files,
    }
    store.later("lintvalid", key, json.dumps(payload, sort_keys=True).encode())


def ignores_of(model: Any) -> dict[str, dict[str, dict[str, str]]]:
    """The suppressions of a validated model, as :class:`Verdict` keeps them."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for section in IGNORING:
        for name, entry in getattr(model, section).items():
            if entry.ignore:
                out.setdefault(section, {})[name] = dict(entry.ignore)
    return out


def plain_columns_valid(data: Mapping[str, Any], texts: Iterable[Any], changed: list[str]) -> bool:
    """Whether every column of the datasets ``changed`` whose spec is only a type (those the
    governance view leaves out among them) passes validation's checks of a column, judged
    alone (see the module docstring); False whenever the column or its dataset is one this
    cannot judge alone. Columns with more than a type are in the skeleton."""

    datasets = data["datasets"]
    column_texts = {path[:4] for path in texts if len(path) >= 4 and path[0] == "datasets"}
    for name in changed:
        entry = datasets.get(name)
        if type(entry) is not dict:
            return False
        platform = entry.get("platform")
        columns = entry.get("columns", {})
        if platform not in PLATFORMS or type(columns) is not dict:
            return False
        if not all(type(c) is str for c in columns):
            return False
        if len({c.casefold() for c in columns}) != len(columns):
            return False  # names that fold to one: validation says which
        for col, spec in columns.items():
            if type(spec) is not dict:
                return False
            if set(spec) != {"type"}:
                continue  # more than a type: the governance view keeps it (the skeleton)
            # a type-only column, plain or kept by the governance view: checked alone
            # either way (a kept one is in the skeleton, so valid, and passes)
            if type(spec["type"]) is not str or ("datasets", name, "columns", col) in column_texts:
                return False
            try:
                COLUMN_NAME(col)
                no_control(spec["type"])
            except ValueError:
                return False
            text = spec["type"]
            if (
                not is_type(text, platform)
                or foreign_type(text, platform)
                or type_limit(text, platform)
            ):
                return False
    return True


# --------------------------------------------------------------------------------------------
# the project the post checks read, without the schema


@dataclass
class _Entry:
    ignore: dict[str, str]


@dataclass
class _Model:
    masks: dict[str, _Entry] = field(default_factory=dict)
    datasets: dict[str, _Entry] = field(default_factory=dict)
    indexes: dict[str, _Entry] = field(default_factory=dict)
    surfaces: dict[str, _Entry] = field(default_factory=dict)


@dataclass
class Skeleton:
    """What :func:`compiler.lint.engine.lint_project` reads of a project when every rule's
    findings are reused: the entries' suppressions (``finalize``, ACC002) and where each is
    written (``loc``)."""

    model: _Model
    source: Any
    files: list[str]
    origin: Any

    def loc(self, *path: Any) -> Any:
        return self.source.at(path, self.origin)


def project_of(raw: Any, verdict: Verdict) -> Skeleton:
    model = _Model()
    for section, by_name in verdict.ignores.items():
        getattr(model, section).update(
            {name: _Entry(rules) for name, rules in sorted(by_name.items())}
        )
    return Skeleton(model, raw.source, raw.files, raw.origin)
