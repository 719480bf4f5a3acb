"""Incremental lint (compiler/lint/incremental/deps.py): after an edit, ``accord lint`` re-runs only the
rules whose inputs changed and reuses the others' findings from the dependency index; what it
prints must be what a lint without the cache prints, byte for byte, in text and JSON.

The property test applies random edit sequences (add, remove, rename an entry, move one
between files, change a column, a mask, a salt, a surface's reads or identity, a probe's
expectation, persona or column, the case of a column's name, introduce a defect and fix it,
shift lines with a comment) to three estates (the ``examples/as-found`` model, which has
findings of most rules, split over more files; a small generated estate of
``bench/lint_bench.py``; and that estate with passing probes over two files), and after each
edit compares the cached run with ``--no-cache``.
``ACCORD_FUZZ=1`` runs 500 examples; the normal run a few, derandomized.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accord.compiler.lint.checks import REGISTRY
from accord.compiler.lint.engine import load_rules
from accord.compiler.lint.incremental import deps
from accord.compiler.meaning.probes import DISPOSITIONS, probe_init
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from lint_bench import estate as bench_estate

FUZZ = bool(os.environ.get("ACCORD_FUZZ"))
EXAMPLES = 500 if FUZZ else 10
#: the property tests' settings: EXAMPLES examples, drawn anew each run under ACCORD_FUZZ
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not FUZZ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

Files = dict[str, dict[str, Any]]


def _as_found() -> Files:
    """examples/as-found, its datasets split over two files (so entries can move)."""
    files: Files = {}
    for path in sorted((ROOT / "examples" / "as-found").glob("*.yaml")):
        files[path.name] = yaml.safe_load(path.read_text(encoding="utf-8"))
    datasets = files.pop("datasets.yaml")["datasets"]
    names = list(datasets)
    half = len(names) // 2
    files["datasets/a.yaml"] = {"datasets": {n: datasets[n] for n in names[:half]}}
    files["datasets/b.yaml"] = {"datasets": {n: datasets[n] for n in names[half:]}}
    return files


def _bench(defects: bool, per_file: int) -> Files:
    """A generated estate (bench/lint_bench.py) of 24 datasets, ``per_file`` per datasets
    file."""
    files = bench_estate(24, principals=6, programmes=4, defects=defects)
    datasets: dict[str, Any] = {}
    for name in [n for n in files if n.startswith("datasets/")]:
        datasets.update(files.pop(name)["datasets"])
    names = list(datasets)
    for i in range(0, len(names), per_file):
        files[f"datasets/part_{i // per_file}.yaml"] = {
            "datasets": {n: datasets[n] for n in names[i : i + per_file]}
        }
    return files


def _generated() -> Files:
    """A generated estate of 24 datasets, 6 per datasets file."""
    return _bench(defects=True, per_file=6)


def _probed() -> Files:
    """The generated estate with probes over two files, each written by ``accord probe init``
    (today's dispositions, so they pass): no column, a masked column, and a plain column (one
    no other entry names); and one surface left unanswered (an ACC404 finding that cites the
    plain column's name, and no file of the datasets)."""
    files = _generated()
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), files)
        model = load_project(tmp).model
    entries = {n: files[f]["datasets"][n] for f, n in _entries(files, "datasets")}
    alone = [
        n
        for n, ds in sorted(entries.items())
        if "replica_of" not in ds
        and not any(o.get("replica_of") == n for o in entries.values())
        and "expression" not in (ds.get("row_filter") or {})
    ]
    personas = sorted(model.personas)
    plain = next(c for c, spec in entries[alone[1]]["columns"].items() if list(spec) == ["type"])
    masked = next(
        c
        for c, spec in entries[alone[2]]["columns"].items()
        if spec.get("mask") and not spec.get("identifier")
    )
    asked = [
        ("probes/a.yaml", personas[0], alone[0], None),
        ("probes/a.yaml", personas[1], alone[1], plain),
        ("probes/b.yaml", personas[2], alone[2], masked),
    ]
    for path, persona, dataset, column in asked:
        doc = yaml.safe_load(probe_init(model, persona, dataset, column=column))
        files.setdefault(path, {"probes": {}})["probes"].update(doc["probes"])
    probe = files["probes/a.yaml"]["probes"][f"{personas[1]}_{alone[1]}"]
    assert probe["expect"], "the plain column's probe reaches a surface"
    del probe["expect"][sorted(probe["expect"])[0]]
    return files


def _write(root: Path, files: Files) -> None:
    for path in root.rglob("*.yaml"):
        if str(path.relative_to(root)) not in files:
            path.unlink()
    for name, doc in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = doc.pop("#text", None) if isinstance(doc, dict) else None
        body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        if text is not None:
            doc["#text"] = text
        new = (text or "") + body
        if not path.exists() or path.read_text(encoding="utf-8") != new:
            path.write_text(new, encoding="utf-8")


def _entries(files: Files, section: str) -> list[tuple[str, str]]:
    return [
        (f, name)
        for f, doc in sorted(files.items())
        if isinstance(doc.get(section), dict)
        for name in doc[section]
    ]


def _pick(items: list[Any], seed: int) -> Any:
    return items[seed % len(items)] if items else None


BASES = {"as-found": _as_found(), "generated": _generated(), "probed": _probed()}


def _dataset(files: Files, seed: int) -> tuple[str, str, dict[str, Any]] | None:
    found = _pick(_entries(files, "datasets"), seed)
    if found is None:
        return None
    f, name = found
    return f, name, files[f]["datasets"][name]


def _mappings(ds: dict[str, Any]) -> list[str]:
    """The columns of ``ds`` whose spec is a mapping (``plain_not_mapping`` writes others)."""
    return [c for c, spec in (ds.get("columns") or {}).items() if isinstance(spec, dict)]


def _text_type(ds: dict[str, Any]) -> str:
    return "VARCHAR" if ds.get("platform") == "snowflake" else "STRING"


def edit(files: Files, kind: str, seed: int) -> None:
    """Apply one edit of ``kind`` to ``files``, choosing what it touches by ``seed``."""
    found = _dataset(files, seed)
    masks = _entries(files, "masks")
    if kind == "add_column" and found:
        _, _, ds = found
        cols = ds.setdefault("columns", {})
        ds["columns"] = {f"added_{seed % 97}": {"type": _text_type(ds)}, **cols}
    elif kind == "retype_column" and found:
        _, _, ds = found
        col = _pick(_mappings(ds), seed // 7)
        if col is not None:
            ds["columns"][col]["type"] = _pick(["DATE", "NUMBER", "INT", _text_type(ds)], seed)
    elif kind == "rename_column" and found:
        _, _, ds = found
        cols = list((ds.get("columns") or {}).items())
        if cols:
            i = seed // 7 % len(cols)
            cols[i] = (cols[i][0] + "_renamed", cols[i][1])
            ds["columns"] = dict(cols)
    elif kind == "mask_column" and found and masks:
        _, _, ds = found
        col = _pick(_mappings(ds), seed // 7)
        if col is not None:
            spec = ds["columns"][col]
            if spec.get("mask") and seed % 2:
                del spec["mask"]
            else:
                spec["mask"] = _pick(masks, seed // 3)[1]
    elif kind == "identifier" and found:
        _, _, ds = found
        col = _pick(_mappings(ds), seed // 7)
        if col is not None:
            spec = ds["columns"][col]
            if spec.get("identifier"):
                del spec["identifier"]
            else:
                spec["identifier"] = _pick(["subject", "site", "other"], seed)
    elif kind == "salt" and masks:
        f, name = _pick(masks, seed)
        mask = files[f]["masks"][name]
        other_f, other = _pick(masks, seed // 5)
        theirs = files[other_f]["masks"][other].get("salt")
        if theirs is not None and seed % 3:
            mask["salt"] = copy.deepcopy(theirs)
        elif mask.get("strategy") == "hash":
            mask["salt"] = {"snowflake": f"env:S{seed % 13}", "databricks": f"env:D{seed % 11}"}
    elif kind == "surface_reads":
        surfaces = _entries(files, "surfaces")
        if surfaces and found:
            f, name = _pick(surfaces, seed)
            reads = files[f]["surfaces"][name].setdefault("reads", [])
            if found[1] in reads:
                reads.remove(found[1])
            else:
                reads.append(found[1])
    elif kind == "identity":
        surfaces = _entries(files, "surfaces")
        if surfaces:
            f, name = _pick(surfaces, seed)
            s = files[f]["surfaces"][name]
            s["identity"] = "service" if s.get("identity") == "caller" else "caller"
    elif kind == "defect" and masks:
        f, name = _pick(masks, seed)
        listed = files[f]["masks"][name].setdefault("unmasked_for", [])
        # an unknown principal (an input error), or an ungoverned pipeline reading a dataset
        if "nobody" in listed:
            listed.remove("nobody")
        elif seed % 2:
            listed.append("nobody")
        elif found:
            doc = files.setdefault("surfaces.yaml", {})
            doc.setdefault("surfaces", {})[f"pipe_{seed % 5}"] = {
                "platform": "none",
                "reads": [found[1]],
                "identity": "service",
            }
    elif kind == "add_entry" and found:
        f, name, ds = found
        new = copy.deepcopy(ds)
        new.pop("replica_of", None)
        new["table"] = ds["table"] + f"_copy{seed % 7}"
        target = _pick(sorted(n for n in files if files[n].get("datasets")), seed // 3)
        files[target]["datasets"][f"{name}_copy{seed % 7}"] = new
    elif kind == "remove_entry":
        section = _pick(["datasets", "masks", "surfaces", "indexes"], seed)
        where = _pick(_entries(files, section), seed // 4)
        if where is not None:
            del files[where[0]][section][where[1]]
    elif kind == "rename_entry":
        section = _pick(["datasets", "masks", "surfaces"], seed)
        where = _pick(_entries(files, section), seed // 4)
        if where is not None:
            f, name = where
            entries = files[f][section]
            files[f][section] = {(f"{k}_r" if k == name else k): v for k, v in entries.items()}
    elif kind == "move_entry" and found:
        f, name, ds = found
        targets = sorted(n for n in files if n != f and n.startswith("datasets/"))
        target = _pick([*targets, "datasets/moved.yaml"], seed // 3)
        del files[f]["datasets"][name]
        files.setdefault(target, {}).setdefault("datasets", {})[name] = ds
    elif kind == "comment":
        name = _pick(sorted(files), seed)
        doc = files[name]
        doc["#text"] = doc.get("#text", "") + f"# note {seed % 10}\n\n"
    elif kind == "reorder" and found:
        f, name, ds = found
        entries = files[f]["datasets"]
        entries[name] = entries.pop(name)
    elif kind.startswith("probe_") or kind == "case_column":
        probe_edit(files, kind, seed)
    elif kind in PLAIN and found:
        _plain_column(files, kind, seed, found[2])


def _find_dataset(files: Files, name: str) -> dict[str, Any] | None:
    return next(
        (files[f]["datasets"][n] for f, n in _entries(files, "datasets") if n == name), None
    )


def _flip_case(ds: dict[str, Any], column: str) -> None:
    """Rename ``column`` of ``ds`` to the other case (``NOTES`` -> ``notes``), in place."""
    cols = ds.get("columns")
    if isinstance(cols, dict) and column in cols:
        ds["columns"] = {(c.swapcase() if c == column else c): v for c, v in cols.items()}


def probe_edit(files: Files, kind: str, seed: int) -> None:
    """The edits of probes: change what one expects of a surface (or answer a surface it does
    not name), leave a surface unanswered, change its persona or column, add (a copy) or
    remove one; and change the case of a column's name (the probe's own, or any)."""
    probes = _entries(files, "probes")
    if not probes:
        if kind == "case_column" and (found := _dataset(files, seed)):
            col = _pick(list(found[2].get("columns") or {}), seed // 7)
            if col is not None:
                _flip_case(found[2], col)
        return
    f, name = _pick(probes, seed)
    p = files[f]["probes"][name]
    expect = p.setdefault("expect", {})
    if kind == "probe_expect":
        reading = sorted(
            s
            for sf, s in _entries(files, "surfaces")
            if p["dataset"] in (files[sf]["surfaces"][s].get("reads") or [])
        )
        missing = [s for s in reading if s not in expect]
        surface = _pick(missing, seed // 3) if missing and seed % 4 == 0 else None
        surface = surface or _pick(sorted(expect), seed // 3)
        if surface is not None:
            expect[surface] = _pick(list(DISPOSITIONS), seed // 5)
    elif kind == "probe_unanswer" and expect:
        del expect[_pick(sorted(expect), seed // 3)]
    elif kind == "probe_persona":
        personas = sorted(n for _, n in _entries(files, "personas"))
        if personas:
            p["persona"] = _pick(personas, seed // 3)
    elif kind == "probe_column":
        ds = _find_dataset(files, p["dataset"])
        columns = list((ds or {}).get("columns") or {})
        column = _pick([None, *columns], seed // 3)
        if column is None:
            p.pop("column", None)
        else:
            p["column"] = column
    elif kind == "probe_add_remove":
        if seed % 2:
            del files[f]["probes"][name]
        else:
            target = _pick(sorted(n for n, _ in probes), seed // 7)
            files[target]["probes"][f"{name}_copy{seed % 5}"] = copy.deepcopy(p)
    elif kind == "case_column":
        ds = _find_dataset(files, p["dataset"]) if seed % 2 and p.get("column") else None
        if ds is not None:
            wanted = str(p["column"]).lower()
            col = next((c for c in ds.get("columns") or {} if c.lower() == wanted), None)
        else:
            found = _dataset(files, seed)
            ds = found[2] if found else None
            col = _pick(list((ds or {}).get("columns") or {}), seed // 7)
        if ds is not None and col is not None:
            _flip_case(ds, col)


def _plain_column(files: Files, kind: str, seed: int, ds: dict[str, Any]) -> None:
    """Add (or, when there, remove) a column whose spec is only a type, valid or not: the
    columns an incremental run checks without validating the whole model."""
    every = {n: d for doc in files.values() for n, d in (doc.get("datasets") or {}).items()}
    sources = {d.get("replica_of") for d in every.values()}
    if kind == "plain_replica":  # a dataset of a replica group: a replica or a source
        group = [d for n, d in every.items() if d.get("replica_of") or n in sources]
        ds = _pick(group, seed) or ds
    elif kind == "plain_case_twin":  # alone: a twin of a column of its group is governance
        alone = [d for n, d in every.items() if not d.get("replica_of") and n not in sources]
        ds = _pick(alone, seed) or ds
    cols = ds.get("columns")
    if not isinstance(cols, dict):
        return
    existing = [c for c in cols if isinstance(c, str)]
    if kind == "plain_bad_type":
        wrong = "NUMBER(10,2)" if ds.get("platform") == "databricks" else "STRUCT<a: INT>"
        name, spec = "plain_typed", {"type": _pick([wrong, "NOT_A_TYPE", "VARCHAR(", "DATE"], seed)}
    elif kind == "plain_out_of_range":  # parameters the platform refuses, and its limits
        snowflake = ds.get("platform") == "snowflake"
        refused = ["NUMBER(50,2)", "NUMBER(10,12)", "VARCHAR(134217729)", "TIMESTAMP_NTZ(10)"]
        limits = ["NUMBER(38,37)", "VARCHAR(134217728)", "TIME(9)"]  # the limits themselves
        if not snowflake:
            refused, limits = ["DECIMAL(50,2)", "DECIMAL(10,12)", "DECIMAL(0)"], ["DECIMAL(38,38)"]
        types = [*refused, *limits]
        name, spec = "plain_ranged", {"type": _pick(types, seed)}
    elif kind == "plain_bad_name":
        name, spec = _pick(["two words", "bad-name", "1st", "naïve", "ok_name"], seed), None
        spec = {"type": _text_type(ds)}
    elif kind == "plain_case_twin":
        twin = _pick(existing, seed // 3)
        if twin is None:
            return
        name, spec = twin.swapcase(), {"type": _text_type(ds)}
    elif kind == "plain_mentioned":
        # a word written elsewhere in the model: a mask's, a persona's or a dataset's name
        words = [n for _, n in _entries(files, "masks")] + ["steward", "group_code", "NOTES"]
        name, spec = _pick(words, seed), {"type": _text_type(ds)}
    elif kind == "plain_not_mapping":
        name, spec = "plain_shape", _pick([_text_type(ds), [_text_type(ds)], None, 3], seed)
    elif kind == "plain_yaml_scalar":
        name, spec = "plain_scalar", {"type": _pick([True, 1.5, 7], seed)}
    else:  # plain_replica, plain_valid
        name, spec = f"plain_{seed % 5}", {"type": _pick(["DATE", _text_type(ds)], seed)}
    if name in cols and cols[name] == spec:
        del cols[name]
    else:
        ds["columns"] = {**cols, name: spec} if seed % 2 else {name: spec, **cols}


KINDS = [
    "add_column",
    "retype_column",
    "rename_column",
    "mask_column",
    "identifier",
    "salt",
    "surface_reads",
    "identity",
    "defect",
    "add_entry",
    "remove_entry",
    "rename_entry",
    "move_entry",
    "comment",
    "reorder",
    "probe_expect",
    "probe_unanswer",
    "probe_persona",
    "probe_column",
    "probe_add_remove",
    "case_column",
]

#: edits of columns whose spec is only a type (compiler/lint/incremental/verdict.py), valid and not
PLAIN = [
    "plain_valid",
    "plain_bad_type",
    "plain_out_of_range",
    "plain_bad_name",
    "plain_case_twin",
    "plain_mentioned",
    "plain_not_mapping",
    "plain_yaml_scalar",
    "plain_replica",
]
KINDS += PLAIN


def _lint(root: Path, cache: Path, fmt: str, cached: bool) -> tuple[int, str, str]:
    argv = ["lint", "--format", fmt, str(root), *([] if cached else ["--no-cache"])]
    code, out, err = run_cli(argv, cwd=root.parent, env={"ACCORD_CACHE_DIR": str(cache)})
    assert "internal error" not in err and "Traceback" not in err, err
    return code, out, err


def check_sequence(base: Files, edits: list[tuple[str, int]]) -> None:
    """The property: after each edit, the cached (incremental) lint prints what a lint
    without the cache prints, in JSON and in text."""
    check_edits(
        base, [(lambda f, k=kind, n=seed: edit(f, k, n), (kind, seed)) for kind, seed in edits]
    )


def check_edits(base: Files, edits: list[tuple[Callable[[Files], None], Any]]) -> None:
    """:func:`check_sequence` with each edit a function of the files (and what to call it)."""
    files = copy.deepcopy(base)
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp) / "policies", Path(tmp) / "cache"
        _write(root, files)
        assert _lint(root, cache, "json", True) == _lint(root, cache, "json", False)
        for change, what in edits:
            change(files)
            _write(root, files)
            # JSON first: the incremental run; then text, which reads the result it stored
            for fmt in ("json", "text"):
                incremental = _lint(root, cache, fmt, True)
                full = _lint(root, cache, fmt, False)
                assert incremental == full, (what, fmt)


# slow: sequences of up to four edits, each linted four times; the fast tier keeps every kind of
# edit on every estate once (test_each_kind_of_edit)
@pytest.mark.slow
@PROPERTY
@given(
    st.sampled_from(sorted(BASES)),
    st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 2**16)), min_size=1, max_size=4),
)
def test_incremental_lint_equals_a_full_lint(base: str, edits: list[tuple[str, int]]) -> None:
    check_sequence(BASES[base], edits)


#: (kind of edit, index of the estate in BASES): every kind on every estate; the fast tier keeps
#: each kind on one estate, the estates in turn (the others are slow)
EACH_KIND = [
    pytest.param(
        kind, i, id=f"{kind}-{base}", marks=[] if i == k % len(BASES) else [pytest.mark.slow]
    )
    for k, kind in enumerate(KINDS)
    for i, base in enumerate(BASES)
]


@pytest.mark.parametrize(("kind", "base"), EACH_KIND)
def test_each_kind_of_edit(kind: str, base: int) -> None:
    """Every kind of edit at least once on each estate, whatever hypothesis draws."""
    check_sequence(list(BASES.values())[base], [(kind, 3 + 7 * base)])


# slow: twelve edits on two estates per kind (on every estate under ACCORD_FUZZ);
# test_each_kind_of_edit runs each kind once
@pytest.mark.slow
@pytest.mark.parametrize("kind", PLAIN)
def test_plain_column_edits_without_validation(kind: str) -> None:
    """A column whose spec is only a type, added and edited several ways (valid, a type of
    the other platform or none, parameters out of the platform's range, a name that is no
    identifier, a case twin, a word written elsewhere, a spec that is no mapping, a YAML
    scalar, in a replica group) and then removed, on a run where every rule is reused: the
    output and exit code of ``--no-cache``. Each kind on the clean estate and on one of the
    others, in turn (every kind on every estate under ``ACCORD_FUZZ``)."""
    every = list(BASES.values())
    turn = every if FUZZ else [every[PLAIN.index(kind) % len(every)]]
    for base in [*turn, CLEAN]:
        # each edit and its undoing: an invalid model writes no index, so a defect left in
        # place would make every later edit a change of the skeleton
        check_sequence(base, [(kind, s) for s in (0, 1, 2, 3, 4, 5) for _ in (0, 1)])


def _clean() -> Files:
    """The generated estate without its defects: no finding names a datasets file, so an
    edit of one reuses every rule (4 datasets per file)."""
    return _bench(defects=False, per_file=4)


CLEAN = _clean()


def _validations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls of validate_raw (the whole model validated)."""
    from accord.compiler.model import validate

    calls: list[int] = []
    real = validate.validate_raw

    def spy(raw: Any) -> Any:
        calls.append(1)
        return real(raw)

    monkeypatch.setattr(validate, "validate_raw", spy)
    return calls


def test_the_bench_edit_skips_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bench's edit (a dataset gains a column nothing refers to), every rule reused:
    neither validation nor any check but the suppressions runs, and the output is a full
    lint's; twice in a row (the verdict follows the edits)."""
    root, cache = tmp_path / "policies", tmp_path / "cache"
    files = copy.deepcopy(CLEAN)
    files["masks.yaml"]["masks"]["birth_date"]["ignore"] = {"ACC201": "reviewed"}
    _write(root, files)
    _lint(root, cache, "json", True)
    calls = _validations(monkeypatch)
    ran: list[str] = []
    load_rules()
    for rule_id, checks in list(REGISTRY.items()):
        spied = [
            dataclasses.replace(
                c, check=lambda ctx, real=c.check, r=rule_id: ran.append(r) or real(ctx)
            )
            if c.source == "policy" and not c.post
            else c
            for c in checks
        ]
        monkeypatch.setitem(REGISTRY, rule_id, spied)
    for i in (1, 2):
        _column_edit(root, i)
        incremental = _lint(root, cache, "json", True)
        assert not calls and not ran, (calls, ran)
        assert incremental == _lint(root, cache, "json", False)
        assert "ACC002" in incremental[1]  # the unused ignore: is reported
        calls.clear()
        ran.clear()


@pytest.mark.parametrize(
    "change",
    ["mask", "identifier", "bad_type", "case_twin", "new_mask"],
)
def test_a_skeleton_change_validates_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """An edit the verdict cannot judge alone (a column gains a mask or an identifier, a
    plain column with no type of its platform or named like another column of its dataset,
    a new mask) validates the whole model, with a full lint's output."""
    root, cache = tmp_path / "policies", tmp_path / "cache"
    files = copy.deepcopy(CLEAN)
    _write(root, files)
    _lint(root, cache, "json", True)
    calls = _validations(monkeypatch)
    f = sorted(n for n in files if n.startswith("datasets/"))[-1]
    ds = next(iter(files[f]["datasets"].values()))
    col = next(c for c, spec in ds["columns"].items() if set(spec) == {"type"})
    if change == "mask":
        ds["columns"][col]["mask"] = "birth_date"
    elif change == "identifier":
        ds["columns"][col]["identifier"] = "subject"
    elif change == "bad_type":
        ds["columns"]["extra"] = {"type": "NOT_A_TYPE"}
    elif change == "case_twin":
        ds["columns"][col.swapcase()] = {"type": ds["columns"][col]["type"]}
    else:
        files["masks.yaml"]["masks"]["spare"] = {"strategy": "nullify"}
    _write(root, files)
    incremental = _lint(root, cache, "json", True)
    assert calls, "the whole model is validated"
    assert incremental == _lint(root, cache, "json", False)


def test_every_policy_rule_is_classified() -> None:
    """Every policy check's row of the rule table (compiler/model/rules.py) declares what it
    reads (a rule that declares nothing is re-run on every edit, never skipped: see
    test_an_undeclared_rule_is_re_run); the inputs are sections or views of the model."""
    load_rules()
    policy = {r for r, checks in REGISTRY.items() for c in checks if c.source == "policy"}
    post = {r for r, checks in REGISTRY.items() for c in checks if c.post}
    assert policy - post <= set(deps.RULE_INPUTS), sorted(policy - post - set(deps.RULE_INPUTS))
    known = {*deps.SECTIONS, *deps.VIEWS, *deps.EVERYTHING}
    for rule_id, inputs in deps.RULE_INPUTS.items():
        assert inputs.scope in ("entry", "cross"), rule_id
        assert set(inputs.reads) <= known, rule_id
    # a row that declares inputs has a policy check to declare them for
    assert set(deps.RULE_INPUTS) <= policy - post, sorted(set(deps.RULE_INPUTS) - policy)


class _Membership:
    """A source map's table whose ``in`` tests are recorded as reads of the section of the
    path asked about (``has_key``: whether a key is written is what the section says); its
    lookups of positions are not (a finding's place is judged by the files it names)."""

    def __init__(self, table: Any, reads: set[str]) -> None:
        self._table, self._reads = table, reads

    def __contains__(self, path: Any) -> bool:
        if isinstance(path, tuple) and path and isinstance(path[0], str):
            self._reads.add(path[0])
        return path in self._table

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def __getitem__(self, path: Any) -> Any:
        return self._table[path]


def _reads_of(rule_id: str, project: Any) -> set[str]:
    """What the policy checks of ``rule_id`` read of ``project``, run once on a fresh context:
    every section of the model accessed (``PolicyModel``'s attributes, through any helper),
    the lowered catalogs (which read :data:`LOWERED`), and the keys tested for presence in
    the source map."""
    from accord.compiler.lint.checks import Context
    from accord.compiler.model.rules import LOWERED
    from accord.compiler.model.schema import PolicyModel
    from accord.targets import lower_all

    reads: set[str] = set()
    positions = copy.copy(project.source)
    positions.values = _Membership(project.source.values, reads)
    positions.keys = _Membership(project.source.keys, reads)
    watched = dataclasses.replace(project, source=positions)
    catalogs = lower_all(watched)  # before recording: what lowering reads is LOWERED

    class Watched(Context):
        @property
        def catalogs(self) -> Any:  # type: ignore[override]
            reads.update(LOWERED)
            return catalogs

    real = PolicyModel.__getattribute__

    def get(model: Any, name: str) -> Any:
        if name in deps.SECTIONS:
            reads.add(name)
        return real(model, name)

    PolicyModel.__getattribute__ = get  # type: ignore[method-assign]
    try:
        for check in REGISTRY[rule_id]:
            if check.source == "policy" and not check.post:
                list(check.check(Watched(watched)))
    finally:
        PolicyModel.__getattribute__ = real  # type: ignore[method-assign]
    return reads


def _missing(declared: tuple[str, ...], reads: set[str]) -> set[str]:
    """The sections read that ``declared`` does not cover: ``datasets`` is covered by itself or
    by the governance view (which keeps every column a rule can tell from another)."""
    from accord.compiler.model.rules import GOVERNANCE

    if "*" in declared:
        return set()
    covered = set(declared) | ({"datasets"} if GOVERNANCE in declared else set())
    return reads - covered


@pytest.mark.parametrize("estate", ["as-found", "probed", "policies"])
def test_every_rule_declares_what_it_reads(estate: str, tmp_path: Path) -> None:
    """Each policy rule run on an estate with its model's accessor instrumented: every section
    it reads is in its row's ``reads`` (compiler/model/rules.py), else an edit of that section
    reuses a stale verdict. The estates have findings of most rules (as-found), passing and
    failing probes (probed) and the reference estate (policies)."""
    load_rules()
    if estate == "policies":
        project = load_project(ROOT / "policies")
    else:
        _write(tmp_path, copy.deepcopy(BASES[estate]))
        project = load_project(tmp_path)
    missed = {}
    for rule_id, inputs in sorted(deps.RULE_INPUTS.items()):
        missing = _missing(inputs.reads, _reads_of(rule_id, project))
        if missing:
            missed[rule_id] = sorted(missing)
    assert missed == {}, f"rules that read sections their row does not declare: {missed}"


def test_the_reads_are_recorded() -> None:
    """The recording itself: a check that reads a section through a helper, the catalogs, or
    a key's presence is seen reading it (else the test above could pass by seeing nothing)."""
    from accord.compiler.lint.checks import RegisteredRule
    from accord.compiler.lint.usage import has_key
    from accord.compiler.model.rules import LOWERED

    project = load_project(ROOT / "policies")

    def check(ctx: Any) -> list[Any]:
        sorted(ctx.model.surfaces)
        ctx.model.platform_config("snowflake")  # reads platforms in the model's own method
        has_key(ctx, "indexes", "x")
        ctx.catalogs  # noqa: B018 - the access is the point
        return []

    saved = REGISTRY.get("ACC401")
    REGISTRY["ACC401"] = [RegisteredRule("ACC401", check, "", "policy")]
    try:
        reads = _reads_of("ACC401", project)
    finally:
        if saved is not None:
            REGISTRY["ACC401"] = saved
    assert reads == {"surfaces", "platforms", "indexes", *LOWERED}


def test_acc401_follows_a_dataset_that_becomes_governed() -> None:
    """A Databricks surface on a runtime too old for filters reads a dataset with no policy
    (no finding); the dataset then gains a row filter in its own file: ACC401 must now fire,
    although neither the surfaces nor the platforms changed (a stale verdict until its row
    declared the governance it reads)."""
    files: Files = {
        "platforms.yaml": {
            "version": 1,
            "platforms": {"databricks": {"governance_schema": "governance.policies"}},
            "principals": {"analyst": {"databricks": "analysts"}},
            "personas": {"analyst": ["analyst"]},
            "entitlements": {"region": {"EU": ["analyst"]}},
        },
        "datasets.yaml": {
            "datasets": {
                "orders": {
                    "platform": "databricks",
                    "table": "sales.crm.orders",
                    "columns": {"region": {"type": "STRING"}},
                }
            }
        },
        "surfaces.yaml": {
            "surfaces": {
                "old_notebook": {
                    "platform": "databricks",
                    "reads": ["orders"],
                    "identity": "caller",
                    "runtime": "11.3",
                    "access_mode": "standard",
                }
            }
        },
    }

    def governed(f: Files) -> None:
        f["datasets.yaml"]["datasets"]["orders"]["row_filter"] = {
            "entitlement": "region",
            "column": "region",
        }

    check_edits(files, [(governed, "the dataset gains a row filter")])


def _column_edit(root: Path, i: int) -> None:
    """bench/run.py's ``1 entry changed`` edit: one dataset gains an ungoverned column."""
    path = sorted((root / "datasets").rglob("*.yaml"))[-1]
    text = path.read_text(encoding="utf-8")
    kind = "VARCHAR" if "platform: snowflake" in text else "STRING"
    added = f"    columns:\n      edit_{i}:\n        type: {kind}\n"
    path.write_text(text.replace("    columns:\n", added, 1), encoding="utf-8")


def _spy_reusable(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The rules :func:`deps.reusable` answers, one set per call, as lint runs."""
    reused: list[set[str]] = []
    real = deps.reusable

    def spy(*args: Any) -> dict[str, Any]:
        out = real(*args)
        reused.append(set(out))
        return out

    monkeypatch.setattr(deps, "reusable", spy)
    return reused


def _after_the_bench_edit(
    files: Files, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, list[set[str]]]:
    """``files`` linted, then the bench's edit (a dataset gains a column nothing names) linted
    incrementally: that run's JSON output, checked equal to a full lint's, and the rules each
    incremental run reused."""
    root, cache = tmp_path / "policies", tmp_path / "cache"
    _write(root, files)
    _lint(root, cache, "json", True)
    reused = _spy_reusable(monkeypatch)
    _column_edit(root, 1)
    incremental = _lint(root, cache, "json", True)
    assert incremental == _lint(root, cache, "json", False)
    return incremental, reused


def test_an_ungoverned_column_reuses_the_cross_entry_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's edit (a dataset gains a column nothing refers to) reuses the rules that
    read the governance (ACC101, ACC201-ACC203, ACC403, ACC404, ACC503), with the same output
    as a full lint."""
    incremental, reused = _after_the_bench_edit(_generated(), tmp_path, monkeypatch)
    assert json.loads(incremental[1])["findings"], "the estate has findings to keep"
    assert {"ACC101", "ACC201", "ACC202", "ACC203", "ACC403", "ACC503"} <= reused[-1]
    assert "ACC404" in reused[-1]  # probes read the governance, not the plain columns


def _probe(files: Files, persona_index: int) -> dict[str, Any]:
    """The probed estate's probe first written for ``persona_0N`` (see :func:`_probed`)."""
    return next(
        files[f]["probes"][n]
        for f, n in _entries(files, "probes")
        if n.startswith(f"persona_0{persona_index}_")
    )


def test_the_bench_edit_reuses_the_probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With probes (one of them naming a plain column), a dataset gaining a column nothing
    names reuses ACC404; a probe then naming it re-runs it. The output is a full lint's."""
    incremental, reused = _after_the_bench_edit(_probed(), tmp_path, monkeypatch)
    assert any(f["rule"] == "ACC404" for f in json.loads(incremental[1])["findings"])
    assert "ACC404" in reused[-1]


def _set(files: Files, persona: int, key: str, value: Any) -> None:
    _probe(files, persona)[key] = value


def test_probe_edits_relint_the_probes() -> None:
    """Editing a passing probe (its file had no finding) re-runs ACC404: a different
    expectation, persona or column, a plain column added and then named, a copy, a removal.
    Fails when ``probes`` is dropped from ACC404's declaration."""

    def expect(files: Files) -> None:
        _probe(files, 2)["expect"]["lakehouse_agent_0000"] = "clear"

    def add_and_name(files: Files) -> None:
        ds = _find_dataset(files, _probe(files, 2)["dataset"])
        assert ds is not None
        ds["columns"]["named_later"] = {"type": "STRING"}

    check_edits(
        _probed(),
        [
            (expect, "expect"),
            (lambda f: _set(f, 2, "persona", "persona_04"), "persona"),
            (add_and_name, "plain column"),
            (lambda f: _set(f, 2, "column", "named_later"), "probe names it"),
            (lambda f: f["probes/b.yaml"]["probes"].clear(), "removed"),
        ],
    )


def test_a_persona_or_surface_edit_relints_the_probes() -> None:
    """A probe's persona holds other principals, or a surface it reaches answers otherwise
    (its identity): ACC404 re-runs although its findings name neither file. Fails when
    ``personas`` or ``surfaces`` is dropped from ACC404's declaration."""

    def principals(files: Files) -> None:
        files["principals.yaml"]["personas"]["persona_01"] = ["team_005"]

    def service(files: Files) -> None:
        files["surfaces/agents.yaml"]["surfaces"]["lakehouse_agent_0000"]["identity"] = "service"

    check_edits(_probed(), [(principals, "persona"), (service, "identity")])


def test_the_case_of_a_plain_column_a_probe_names() -> None:
    """A plain column a probe names (and nothing else does) is kept by the governance view:
    the case of its name is in ACC404's message. Fails when :func:`deps.governance` does not
    read the words of the probes."""

    def upper(files: Files) -> None:
        probe = _probe(files, 1)
        ds = _find_dataset(files, probe["dataset"])
        assert ds is not None and probe["column"] in ds["columns"]
        _flip_case(ds, probe["column"])

    check_edits(_probed(), [(upper, "case")])


def test_mask_and_identity_edits_relint_acc206_acc508_acc509() -> None:
    """A partial mask against a column's declared length (ACC206), an identity every user
    holds given something (ACC508), two principals on one identity (ACC509). Each edit
    changes one section, and the finding appears, changes or goes in a file the edit left
    alone (or where the rule had none), so the rule is re-run only if it declares the
    section. Fails when ``masks`` or the governance is dropped from ACC206's declaration, or
    ``principals``, ``entitlements`` or ``masks`` from ACC508's or ACC509's."""
    programme = ("entitlements.yaml", "entitlements", "programme")
    Edit = Callable[[Files], None]

    def column(typ: str) -> Edit:
        def change(files: Files) -> None:
            ds = _find_dataset(files, "assay_results")
            assert ds is not None
            ds["columns"]["ACCOUNT"] = {"type": typ, "mask": "tail"}

        return change

    def mask(keep: int) -> Edit:
        def change(files: Files) -> None:
            files["masks.yaml"]["masks"]["tail"] = {"strategy": "partial", "keep_last": keep}

        return change

    def principal(name: str, snowflake: str, databricks: str, *inherits: str) -> Edit:
        def change(files: Files) -> None:
            entry: dict[str, Any] = {"snowflake": snowflake, "databricks": databricks}
            if inherits:
                entry["inherits"] = list(inherits)
            files["principals.yaml"]["principals"][name] = entry
            files["principals.yaml"]["personas"][name] = [name]

        return change

    def grant(value: str, name: str, add: bool = True) -> Edit:
        def change(files: Files) -> None:
            grants = files[programme[0]][programme[1]][programme[2]][value]
            grants.append(name) if add else grants.remove(name)

        return change

    def unmasked(name: str) -> Edit:
        def change(files: Files) -> None:
            files["masks.yaml"]["masks"]["free_text"]["unmasked_for"].append(name)

        return change

    check_edits(
        _as_found(),
        [
            # ACC206
            (lambda f: (mask(40)(f), column("VARCHAR(100)")(f)), "a partial mask, no ACC206"),
            (column("VARCHAR(60)"), "retyped: an ACC206 warning"),
            (column("VARCHAR(34)"), "retyped: an ACC206 error"),
            (mask(10), "keeps less: no ACC206"),
            # ACC508
            # ACC508, at the inherits entry of an everyone identity (in principals.yaml)
            (
                lambda f: (
                    principal("helper", "HELPER", "helpers")(f),
                    principal("everyone", "EVERYONE", "staff", "helper")(f),
                ),
                "inherits a principal given nothing",
            ),
            (grant("IMM-310", "helper"), "granted, not to everyone: no ACC508"),
            (principal("everyone", "EVERYONE", "account users", "helper"), "principals: ACC508"),
            (unmasked("helper"), "masks: ACC508 says more"),
            (grant("CNS-204", "helper"), "entitlements: ACC508 says more"),
            # ACC509
            (principal("cro_audit", "CRO_AUDIT", "cro-audit"), "its own identity"),
            (grant("IMM-310", "cro_audit"), "granted: no ACC509"),
            (principal("cro_audit", "CRO_EXTERNAL", "CRO-External"), "principals: ACC509"),
            (
                lambda f: (
                    grant("IMM-310", "cro_audit", False)(f),
                    grant("CNS-204", "cro_audit")(f),
                ),
                "entitlements: the same grants, no ACC509",
            ),
            (unmasked("cro_audit"), "masks: ACC509"),
        ],
    )


def test_an_undeclared_rule_is_re_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule with no declaration is never reused, even when nothing it could read changed."""
    files = _as_found()
    root, cache = tmp_path / "policies", tmp_path / "cache"
    _write(root, files)
    _lint(root, cache, "json", True)
    monkeypatch.delitem(deps.RULE_INPUTS, "ACC403")
    reused: list[set[str]] = []
    real = deps.reusable
    monkeypatch.setattr(deps, "reusable", lambda *a: reused.append(set(real(*a))) or real(*a))
    files["masks.yaml"]["#text"] = "# a comment, and a new mask\n"
    files["masks.yaml"]["masks"]["spare"] = {"strategy": "nullify"}
    _write(root, files)
    assert _lint(root, cache, "json", True) == _lint(root, cache, "json", False)
    assert reused and "ACC403" not in reused[-1]
    assert "ACC402" in reused[-1]  # reads surfaces and the datasets' governance only


def test_the_plain_column_checks_are_the_schemas() -> None:
    """What compiler/lint/incremental/verdict.py checks of a plain column is what the schema checks: a
    column spec has only ``type`` (a ``Text``) besides ``mask``, ``identifier`` and
    ``projection`` (any of them keeps the column in the governance view), and the
    name and text checks it calls are the schema's own validators, so a name or type it
    accepts the schema accepts, and one it refuses the schema refuses."""
    from pydantic import TypeAdapter, ValidationError

    from accord.compiler.lint.incremental import verdict
    from accord.compiler.model.schema import ColumnName, ColumnSpec

    assert set(ColumnSpec.model_fields) == {"type", "mask", "identifier", "projection"}
    for field in ("mask", "identifier", "projection"):
        assert ColumnSpec.model_fields[field].default is None
    columns = TypeAdapter(dict[ColumnName, ColumnSpec])
    data: dict[str, Any] = {"datasets": {"d": {"platform": "snowflake", "columns": {}}}}
    for name in ["ok", "OK_2", "a$b", "two words", "bad-name", "1st", "naïve", " x", "x" * 300]:
        for text in ["VARCHAR", "VAR\x00CHAR", "VARCHAR\t", "NUMBER(10,\n2)"]:
            try:
                columns.validate_python({name: {"type": text}})
                schema_ok = True
            except ValidationError:
                schema_ok = False
            data["datasets"]["d"]["columns"] = {name: {"type": text}}
            assert verdict.plain_columns_valid(data, {}, ["d"]) == schema_ok, (name, text)


def test_an_unused_ignore_is_judged_with_its_rule_loaded(tmp_path: Path) -> None:
    """In a fresh process an incremental run loads only the rule modules it re-runs; ACC002
    says whether the rule of an unused ``ignore:`` is a policy rule from the checks
    registered, so that rule's module is loaded too: the message is a full lint's."""
    from tests.cli import run_process

    files = copy.deepcopy(CLEAN)
    files["masks.yaml"]["masks"]["notes_0"]["ignore"] = {"ACC201": "reviewed"}
    root, cache = tmp_path / "policies", tmp_path / "cache"
    _write(root, files)
    env = {"ACCORD_CACHE_DIR": str(cache)}
    run_process(["lint", str(root)], cwd=tmp_path, env=env)
    _column_edit(root, 1)
    incremental = run_process(["lint", str(root)], cwd=tmp_path, env=env)
    full = run_process(["lint", "--no-cache", str(root)], cwd=tmp_path, env=env)
    assert "no finding of it is raised on this entry" in full.stdout
    assert incremental == full


# --------------------------------------------------------------------------------------------
# SQL checks that read the model linted beside the SQL files (``sql_reads``)

#: a model with one dimension (governance.policies.region_grants on Databricks) and a SQL file
#: whose lookup in that table shadows its parameter: ACC104 knows it from the model only
SQL_MODEL: dict[str, Any] = {
    "version": 1,
    "platforms": {"databricks": {"governance_schema": "governance.policies"}},
    "principals": {"analyst": {"databricks": "analysts"}},
    "entitlements": {"region": {"EU": ["analyst"]}},
    "datasets": {
        "orders": {
            "platform": "databricks",
            "table": "sales.crm.orders",
            "columns": {"region": {"type": "STRING"}},
            "row_filter": {"entitlement": "region", "column": "region"},
        }
    },
    "personas": {"analyst": ["analyst"]},
}
SQL_FILTER = """\
CREATE OR REPLACE FUNCTION governance.policies.region_filter(region_code STRING)
RETURN EXISTS (SELECT 1 FROM governance.policies.region_grants
               WHERE region_code = region_code AND is_account_group_member(group_name));
"""


def _repository(root: Path, model: dict[str, Any]) -> None:
    (root / "policies").mkdir(parents=True, exist_ok=True)
    (root / "sql").mkdir(exist_ok=True)
    (root / "policies" / "estate.yaml").write_text(yaml.safe_dump(model), encoding="utf-8")
    (root / "sql" / "filters.sql").write_text(SQL_FILTER, encoding="utf-8")


def _acc104(root: Path, cache: Path, cached: bool = True) -> list[tuple[str, int, int]]:
    argv = ["lint", ".", "--format", "json", *([] if cached else ["--no-cache"])]
    code, out, err = run_cli(argv, cwd=root, env={"ACCORD_CACHE_DIR": str(cache)})
    assert code in (0, 1), out + err
    found = json.loads(out)["findings"]
    return [(f["file"], f["line"], f["column"]) for f in found if f["rule"] == "ACC104"]


def test_every_sql_read_is_declared() -> None:
    """A rule that declares what its SQL check reads of the model has a SQL check, and reads
    only what lint knows how to hand over and key the cache by (the mapping tables)."""
    from accord.compiler.model.rules import MAPPING_TABLES, RULE_TABLE

    load_rules()
    sql = {r for r, checks in REGISTRY.items() for c in checks if c.source == "sql"}
    declared = {r.id for r in RULE_TABLE if r.sql_reads}
    assert declared <= sql, sorted(declared - sql)
    assert all(set(r.sql_reads) <= {MAPPING_TABLES} for r in RULE_TABLE)
    assert "ACC104" in declared


def test_the_sql_checks_see_only_what_they_declare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mapping tables reach the SQL checks because ACC104's row declares them: without
    the declaration, the SQL file is linted as if alone."""
    from accord.compiler.lint import run

    _repository(tmp_path, SQL_MODEL)
    assert len(_acc104(tmp_path, tmp_path / "cache", cached=False)) == 2
    rows = tuple(
        dataclasses.replace(r, sql_reads=()) if r.id == "ACC104" else r for r in run.RULE_TABLE
    )
    monkeypatch.setattr(run, "RULE_TABLE", rows)
    assert _acc104(tmp_path, tmp_path / "cache", cached=False) == []


def test_a_cached_sql_result_follows_the_models_mapping_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SQL files' cached result is keyed by the mapping tables handed to the checks: an
    edit of the model that moves the table relints the SQL (as a run without the cache
    does); one that leaves the tables alone reuses it; an edit of the SQL alone reads the
    tables from the cache, without loading the model."""
    from accord.compiler.lint import run
    from accord.compiler.model import loader

    cache = tmp_path / "cache"
    _repository(tmp_path, SQL_MODEL)
    shadowed = _acc104(tmp_path, cache)
    assert len(shadowed) == 2 and _acc104(tmp_path, cache) == shadowed

    moved = copy.deepcopy(SQL_MODEL)
    moved["platforms"]["databricks"]["governance_schema"] = "gov2.policies"
    _repository(tmp_path, moved)
    assert _acc104(tmp_path, cache) == _acc104(tmp_path, cache, cached=False) == []

    _repository(tmp_path, SQL_MODEL)
    assert _acc104(tmp_path, cache) == shadowed
    batches: list[int] = []
    real_batch = run.lint_sql_batch
    monkeypatch.setattr(
        run, "lint_sql_batch", lambda *a, **k: batches.append(1) or real_batch(*a, **k)
    )
    other = copy.deepcopy(SQL_MODEL)
    other["personas"]["auditor"] = ["analyst"]  # the mapping tables are unchanged
    _repository(tmp_path, other)
    assert _acc104(tmp_path, cache) == shadowed and batches == []

    def no_load(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(loader, "load_documents", no_load)
    (tmp_path / "sql" / "filters.sql").write_text("\n" + SQL_FILTER, encoding="utf-8")
    assert _acc104(tmp_path, cache) == [(f, line + 1, c) for f, line, c in shadowed]
    assert batches == [1]
