"""Incremental lint: what each policy rule reads, and the dependency index kept in the cache.

After an edit, ``accord lint`` relints only what the edit can affect. Every policy check's row
of the rule table (:mod:`compiler.model.rules`, read here as :data:`RULE_INPUTS`) says whether
it is ``entry`` (its findings are per entry of a section) or ``cross`` (it compares entries),
and the *inputs* it reads: sections of the merged policy model (``masks``, ``principals``...)
or narrower views of one (:data:`VIEWS`). A rule with no declaration reads everything
(:data:`EVERYTHING`), so a new rule is re-run on every edit until its row declares what it
reads; ``post`` checks (ACC002, over the other checks' findings) and the suppressions are
always recomputed.

The dependency index (``lintdeps/`` entries, :func:`index_key`) holds, for one project (its
files' names in order, the selected rules, accord's code, today): each file's content digest,
and for each rule the digest of every input it read and its raw findings (before suppression
and selection). A later run reuses a rule's findings only when

* the rule is declared, and the index has its findings from the same files (by name);
* the digest of every input it declares is unchanged: what the rule reads is the same, so its
  findings are the same but for their positions;
* none of those findings names a file whose content changed (its location, message or fix):
  a finding in an unchanged file points where it pointed, a finding in an edited one may have
  moved, so the rule is re-run.

Otherwise the rule is re-run on the validated project, with every other rule's findings
reused. Validation runs on the whole model (references between entries are checked there),
so an edit that makes the model invalid is reported exactly as without the cache; only when
every rule is reused and the edit changed nothing but plain columns that check alone is it
skipped (:mod:`compiler.lint.incremental.verdict`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from accord.compiler.core import store
from accord.compiler.core.today import today
from accord.compiler.lint.finding import Finding
from accord.compiler.model.rules import GOVERNANCE, RULE_TABLE, RULES_BY_ID

#: the shape of a ``lintdeps/`` payload: entries of another shape are never read
FORMAT = b"lintdeps-1"

#: the sections of the policy format a rule may read (every top-level key of the model)
SECTIONS = (
    "version",
    "platforms",
    "principals",
    "personas",
    "entitlements",
    "masks",
    "datasets",
    "indexes",
    "surfaces",
    "mesh",
    "probes",
)


@dataclass(frozen=True)
class Inputs:
    """What a rule reads: ``entry`` (findings per entry of a section) or ``cross`` (it
    compares entries), and the inputs (sections or :data:`VIEWS`) it depends on."""

    scope: str
    reads: tuple[str, ...]


#: every input: a rule that declares it may read anything of the model
EVERYTHING = ("*",)

VIEWS = (GOVERNANCE,)

#: what every declared rule reads, from its row of the rule table (compiler/model/rules.py;
#: tests/test_lint_incremental.py fails for a policy check whose row declares nothing)
RULE_INPUTS: dict[str, Inputs] = {
    r.id: Inputs(r.scope, r.reads)
    for r in RULE_TABLE
    if r.scope is not None and r.reads is not None
}


def declared(rule_id: str) -> Inputs | None:
    return RULE_INPUTS.get(rule_id)


def families(index: Index | None, reuse: Mapping[str, Any]) -> set[str] | None:
    """The rule modules an incremental run needs: those of the rules the index knows that are
    not reused (their rows' ``family``), and ``suppressions``; None (every module) without an
    index, or when a rule to run is not in the rule table."""
    if index is None:
        return None
    needed = {"suppressions"}
    for rule_id in index.rules:
        if rule_id not in reuse:
            if rule_id not in RULES_BY_ID:
                return None
            needed.add(RULES_BY_ID[rule_id].family)
    return needed


# --------------------------------------------------------------------------------------------
# input digests


#: a name :func:`governance` can look up among the words of the model's text
_WORD = re.compile(r"\w+")
#: an escape of ``repr`` (a character that is not printable, a quote, a backslash)
_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")


def _words(value: Any) -> set[str]:
    """Every word (a run of ``\\w`` characters) of every string, key and number of
    ``value``, case-folded. Read off ``repr(value)`` with its escapes blanked: an escaped
    character is never a word character, so ``'A = 1\\nAND b'`` gives ``a``, ``1``, ``and``,
    ``b`` as the string itself does (plus the words of the repr's own syntax, ``True``,
    ``None``: more words only keep more columns)."""
    text = _ESCAPE.sub(" ", repr(value))
    return set(_WORD.findall(text.casefold()))


def _roots(datasets: Mapping[Any, Any]) -> dict[Any, Any]:
    """Each dataset's replica root (its ``replica_of`` chain followed; a cycle, which
    validation refuses, is its own group)."""
    out = {}
    for name in datasets:
        seen = [name]
        here = name
        while True:
            parent = datasets[here].get("replica_of")
            if not isinstance(parent, str) or parent not in datasets or parent in seen:
                break
            seen.append(parent)
            here = parent
        out[name] = here
    return out


def governance(data: Mapping[str, Any]) -> Any:
    """The datasets as :data:`GOVERNANCE` sees them: a column whose spec names nothing but
    its ``type`` is left out, unless its name (case-folded) is written anywhere in the model
    outside the datasets' ``columns`` (a row filter's column, arguments or expression, an
    index's columns, a probe), or is the name of a column of another dataset of its replica
    group (replicas inherit masks by column name, and show every column their group governs),
    or is not a single word. Anything that is not a mapping of mappings is kept whole."""
    datasets = data.get("datasets")
    if not isinstance(datasets, dict) or not all(type(d) is dict for d in datasets.values()):
        return datasets
    mentioned = _words([v for k, v in data.items() if k != "datasets"])
    mentioned |= _words([[v for k, v in e.items() if k != "columns"] for e in datasets.values()])
    roots = _roots(datasets)
    size: dict[Any, int] = {}
    for root in roots.values():
        size[root] = size.get(root, 0) + 1
    # replica group of two datasets or more -> how many of them have a column of each name
    names: dict[Any, dict[str, int]] = {}
    for name, entry in datasets.items():
        columns = entry.get("columns")
        if size[roots[name]] > 1 and type(columns) is dict:
            count = names.setdefault(roots[name], {})
            for col in {c.casefold() for c in columns if type(c) is str}:
                count[col] = count.get(col, 0) + 1
    out: dict[Any, Any] = {}
    for name, entry in datasets.items():
        columns = entry.get("columns")
        if type(columns) is not dict:
            out[name] = entry
            continue
        group = names.get(roots[name], {})
        drop = set()
        for col, spec in columns.items():
            if type(spec) is dict and len(spec) == 1 and "type" in spec and type(col) is str:
                folded = col.casefold()
                if (
                    folded not in mentioned
                    and group.get(folded, 0) < 2
                    and _WORD.fullmatch(folded) is not None
                ):
                    drop.add(col)
        if drop:
            entry = {**entry, "columns": {c: v for c, v in columns.items() if c not in drop}}
        out[name] = entry
    return out


def input_digests(
    data: Mapping[str, Any],
    texts: Mapping[Any, str],
    owners: Mapping[Any, str],
    files: Mapping[str, str],
) -> dict[str, str]:
    """The digest of every input a declared rule reads (:data:`SECTIONS`, :data:`VIEWS`) of
    the merged model ``data`` with the written texts of its non-string scalars ``texts``
    (``1.0`` and ``1.00`` are one value, two texts) and the file that gives each section its
    place ``owners`` (where a finding about a section, or an entry it lacks, points); and of
    :data:`EVERYTHING`: the files' content digests ``files``, so a rule that reads everything
    is re-run on every edit lint reads."""
    needed = {i for inputs in RULE_INPUTS.values() for i in inputs.reads}
    by_section: dict[Any, list[tuple[Any, str]]] = {}
    for path, text in texts.items():
        if path:
            by_section.setdefault(path[0], []).append((path, text))

    def digest(value: Any) -> str:
        blob = repr(value).encode("utf-8", "backslashreplace")
        return hashlib.sha256(blob).hexdigest()

    def written(section: str) -> tuple[Any, ...]:
        return sorted(by_section.get(section, []), key=repr), owners.get(section)

    out = {"*": digest(sorted(files.items()))}
    for section in SECTIONS:
        if section in needed:
            out[section] = digest((data.get(section), written(section)))
    if GOVERNANCE in needed:
        out[GOVERNANCE] = digest((governance(data), written("datasets")))
    return out


def _inputs_of(inputs: Inputs) -> tuple[str, ...]:
    return ("*",) if "*" in inputs.reads else inputs.reads


# --------------------------------------------------------------------------------------------
# the index


def index_key(names: Iterable[str], options: str) -> str:
    """The key of a project's dependency index: accord, the options, today (grants until a
    date are judged at today) and the names of its files in order."""
    h = hashlib.sha256(store.code_fingerprint().encode() + b"\0" + FORMAT)
    h.update(b"\0" + options.encode() + b"\0today\0" + today().isoformat().encode() + b"\0")
    for name in names:
        h.update(os.fsencode(name) + b"\0")
    return h.hexdigest()


@dataclass
class Index:
    #: file name -> content digest
    files: dict[str, str]
    #: rule id -> (input -> digest, raw findings)
    rules: dict[str, tuple[dict[str, str], list[Finding]]]


def read_index(key: str) -> Index | None:
    payload = store.read("lintdeps", key)
    if payload is None:
        return None
    try:
        doc = json.loads(payload)
        files = {str(k): str(v) for k, v in doc["files"].items()}
        rules = {
            str(r): (
                {str(k): str(v) for k, v in entry["inputs"].items()},
                [Finding.from_record(f) for f in entry["findings"]],
            )
            for r, entry in doc["rules"].items()
        }
    except store.UNREADABLE:
        return None
    return Index(files, rules)


def write_index(
    key: str,
    files: Mapping[str, str],
    digests: Mapping[str, str],
    found: Mapping[str, list[Finding]],
) -> None:
    """Store the index of this run: every rule's findings with the digests of its inputs
    (undeclared rules are stored with none: they are never reused)."""
    rules = {}
    for rule_id, findings in sorted(found.items()):
        inputs = declared(rule_id)
        reads = _inputs_of(inputs) if inputs is not None else ()
        rules[rule_id] = {
            "inputs": {name: digests[name] for name in reads},
            "findings": [f.to_record() for f in findings],
        }
    payload = {"files": dict(files), "rules": rules}
    store.later("lintdeps", key, json.dumps(payload, sort_keys=True).encode())


def reusable(
    index: Index | None, files: Mapping[str, str], digests: Mapping[str, str]
) -> dict[str, list[Finding]]:
    """The rules whose findings of ``index`` still hold (see the module docstring), with them."""
    if index is None or set(index.files) != set(files):
        return {}
    changed = [name for name, digest in files.items() if index.files.get(name) != digest]
    out = {}
    for rule_id, (inputs, findings) in index.rules.items():
        spec = declared(rule_id)
        if spec is None:
            continue
        reads = _inputs_of(spec)
        if set(inputs) != set(reads) or any(digests.get(i) != inputs[i] for i in reads):
            continue
        if changed and any(_names(f, changed) for f in findings):
            continue
        out[rule_id] = findings
    return out


def _names(finding: Finding, files: list[str]) -> bool:
    """Whether ``finding`` names one of ``files``: its location, a related place, or a
    mention in its text (a message may cite another entry's position)."""
    places = {finding.location.file, *(r.file for r in finding.related)}
    texts = (finding.object, finding.message, finding.fix, finding.reason)
    return any(name in places or any(name in t for t in texts) for name in files)
