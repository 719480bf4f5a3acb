"""The loader's fast path (``compiler.model.loader.parse_fast``: values without positions, positions
composed again only when a message needs them) answers exactly what the position-keeping
converter (``parse_document``) answers: the same values (types included), the same texts of
misread scalars, the same positions once asked for, and the same refusal, with the same
``file:line:column``, for everything the converter refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accord.compiler.core.errors import InputError
from accord.compiler.lint.engine import lint_project
from accord.compiler.model import loader
from accord.compiler.model.validate import validate_raw
from tests.conftest import ROOT
from tests.estates import MINIMAL
from tests.test_loader_errors import CASES

N = loader.MAX_NODES_PER_FILE
D = loader.MAX_DEPTH


def _nested(depth: int) -> str:
    """``a:`` holding lists nested so that the innermost scalar sits at ``depth``."""
    return "version: 1\na: " + "[" * (depth - 1) + "x" + "]" * (depth - 1) + "\n"


def _items(n: int) -> str:
    """A document of exactly ``n`` nodes as the converter counts them (values and keys)."""
    return "a:\n" + "- x\n" * (n - 3)


SNIPPETS: list[tuple[str, str]] = [
    ("plain", MINIMAL),
    ("empty", ""),
    ("comments-only", "# nothing\n"),
    ("scalars", "a: 1\nb: 1.50\nc: true\nd: null\ne: ~\nf: yes\ng: 010\nh: 0x1F\ni: 1:30\n"),
    ("floats", "a: [1e3, .5, -0.0, .inf, .nan, 16.10]\n"),
    ("keys-as-written", "010: a\n0x1F: b\nyes: c\n2024: d\n'2024': e\n~: f\n1.5: g\n"),
    ("quoted", "a: 'yes'\nb: \"010\"\nc: |\n  block\n  text\n"),
    ("nested", "a:\n  b:\n    - {c: 1, d: [x, y, {e: false}]}\n    - []\n    - {}\n"),
    ("aliases", "a: &x {k: [1, 2]}\nb: *x\nc: [*x, *x]\n"),
    ("merge-key", "base: &b {k: 1, j: 2}\nx:\n  <<: *b\n  k: 3\n"),
    ("merge-list", "p: &p {a: 1}\nq: &q {b: 2}\nx: {<<: [*p, *q], c: 3}\n"),
    ("merge-not-mapping", "x: {<<: [1]}\n"),
    ("duplicate-key", "a: 1\nb: 2\na: 3\n"),
    ("duplicate-nested", "a:\n  x: 1\n  x: 2\n"),
    ("duplicate-as-written", "a:\n  1: x\n  '1': y\n"),
    ("non-scalar-key", "? [a, b]\n: 1\n"),
    ("mapping-key", "? {a: 1}\n: 1\n"),
    ("tag-on-value", "a: !!binary aGVsbG8=\n"),
    ("tag-custom", "a: !thing x\n"),
    ("tag-on-key", "!!python/name:os.system x: 1\n"),
    ("tag-str-on-map", "a: !!str {b: 1}\n"),
    ("tag-map-on-key", "!!map a: 1\n"),
    ("timestamp", "a: 2024-01-01\n"),
    ("merge-as-value", "a: <<\n"),
    ("tag-int-unreadable", "a: !!int x\n"),
    ("tag-float-unreadable", "a: !!float x\n"),
    ("tag-bool-unreadable", "a: !!bool x\n"),
    ("tag-map-on-scalar", "a: !!map x\n"),
    ("tag-seq-on-scalar", "a: [!!seq x]\n"),
    ("top-level-list", "- a\n"),
    ("top-level-scalar", "just text\n"),
    ("invalid", "a: [\n"),
    ("tabs-in-value", "a: 'x\ty'\n"),
    ("tab-indent", "a:\n\tb: 1\n"),
    ("depth-at-bound", _nested(D)),
    ("depth-beyond", _nested(D + 1)),
    ("nodes-at-bound", _items(N)),
    ("nodes-beyond", _items(N + 1)),
]


def _typed(value: Any) -> Any:
    """The value with every type spelled out (1 == 1.0 == True in Python)."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    text = getattr(value, "text", None)
    return (type(value).__name__, repr(value), text)


def _outcome(parse: Any, raw: bytes, name: str) -> Any:
    try:
        value, source = parse(raw, name)
    except InputError as err:
        return ("refused", [str(d) for d in err.diagnostics])
    return ("read", _typed(value), dict(source.texts), dict(source.values), dict(source.keys))


def _check(raw: bytes, name: str) -> Any:
    fast = _outcome(loader.parse_fast, raw, name)
    assert fast == _outcome(loader.parse_document, raw, name)
    return fast


#: the snippets of MAX_NODES_PER_FILE nodes: seconds each to read (slow)
BIG = {"nodes-at-bound", "nodes-beyond"}


def snippet_cases(cases: list[tuple[str, Any]], slow: set[str] = BIG) -> list[Any]:
    """``(name, content)`` pairs as parametrize cases, named by ``name``, those in ``slow``
    marked slow."""
    return [pytest.param(*c, id=c[0], marks=[pytest.mark.slow] * (c[0] in slow)) for c in cases]


@pytest.mark.parametrize(("case", "text"), snippet_cases(SNIPPETS))
def test_fast_equals_full(case: str, text: str) -> None:
    _check(text.encode(), f"{case}.yaml")


@pytest.mark.parametrize(
    ("ok", "bad"),
    [
        ("depth-at-bound", "depth-beyond"),
        pytest.param("nodes-at-bound", "nodes-beyond", marks=pytest.mark.slow),
    ],
)
def test_bounds_are_exercised(ok: str, bad: str) -> None:
    """The edge snippets sit on both sides of each bound (so the comparison above means
    something): the bound itself is read, one more is refused."""
    texts = dict(SNIPPETS)
    assert _check(texts[ok].encode(), "x.yaml")[0] == "read"
    refused = _check(texts[bad].encode(), "x.yaml")
    assert refused[0] == "refused" and "beyond a sane size" in refused[1][0]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fast_equals_full_on_the_error_cases(case: Any) -> None:
    _, files, _, _ = case
    for name, content in files.items():
        raw = content if isinstance(content, bytes) else content.encode()
        _check(raw, name)


ESTATE_FILES = sorted(
    p for estate in ("policies", "examples") for p in (ROOT / estate).rglob("*.y*ml")
)


@pytest.mark.parametrize(
    "path", ESTATE_FILES, ids=[p.relative_to(ROOT).as_posix() for p in ESTATE_FILES]
)
def test_fast_equals_full_on_the_estates(path: Path) -> None:
    outcome = _check(path.read_bytes(), path.relative_to(ROOT).as_posix())
    assert outcome[0] == "read" and outcome[3]  # positions were compared


def _merged(monkeypatch: pytest.MonkeyPatch, directory: Path, parse: Any) -> loader.RawProject:
    monkeypatch.setattr(loader, "parse_fast", parse)
    return loader.load_directory(directory)


@pytest.mark.parametrize("estate", ["policies", "examples/as-found"])
def test_merged_positions_equal(monkeypatch: pytest.MonkeyPatch, estate: str) -> None:
    """The merged project reads each position through the file that contributed it: the
    same tables whether the files' positions were kept from the start or composed later."""
    lazy = loader.load_directory(ROOT / estate)
    assert isinstance(lazy.source, loader.MergedSource)
    eager = _merged(monkeypatch, ROOT / estate, loader.parse_document)
    assert lazy.data == eager.data
    for table in ("values", "keys"):
        got = dict(getattr(lazy.source, table))
        assert got and got == dict(getattr(eager.source, table))
    assert lazy.source.texts == eager.source.texts


def test_merged_positions_follow_the_contributing_file(write_tree) -> None:
    root = write_tree(
        {
            "a.yaml": "version: 1\nprincipals:\n  x: {snowflake: X}\n",
            "b.yaml": "# b\nversion: 1\nprincipals:\n\n  y: {snowflake: Y}\n",
        }
    )
    source = loader.load_directory(root).source

    def at(loc: Any) -> tuple[str, int, int]:
        return (Path(loc.file).name, loc.line, loc.column)

    assert at(source.key(("principals",))) == ("a.yaml", 2, 1)
    assert at(source.key(("principals", "y"))) == ("b.yaml", 5, 3)
    assert at(source.value(("principals", "y", "snowflake"))) == ("b.yaml", 5, 18)
    assert at(source.key(("version",))) == ("a.yaml", 1, 1)
    # no entry z: the nearest located ancestor is the section's value, in its first file
    assert at(source.value(("principals", "z", "snowflake"))) == ("a.yaml", 3, 3)
    assert source.value(("nowhere", "z")) is None
    assert ("principals", "x") in source.keys and ("nowhere",) not in source.values


def test_a_clean_lint_composes_no_file_for_positions() -> None:
    """Nothing to report, nothing to locate: no file is composed a second time."""
    raw = loader.load_directory(ROOT / "policies")
    project = validate_raw(raw)
    assert not [f for f in lint_project(project) if not f.suppressed]
    sources = raw.source.sources()  # type: ignore[attr-defined]
    assert sources and all(isinstance(s, loader.FileSource) for s in sources)
    assert not [s.name for s in sources if s.materialised]


def test_a_finding_composes_only_its_file(write_tree) -> None:
    files = {"a.yaml": MINIMAL, "b.yaml": "masks:\n  other: {strategy: redact}\n"}
    raw = loader.load_directory(write_tree(files))
    project = validate_raw(raw)
    located = [f.location.file for f in lint_project(project)]
    by_name = {s.name: s for s in raw.source.sources()}  # type: ignore[attr-defined]
    assert located and set(located) <= {n for n, s in by_name.items() if s.materialised}
    assert not by_name[next(n for n in by_name if n not in located)].materialised


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("masks", "Bad-Name"),
        ("masks", "x" * 256),
        ("masks", "trailing\n"),
        ("type", "VARCHAR\x07"),
        ("type", "VAR\x7fCHAR"),
    ],
)
def test_memoised_checks_still_refuse(write_tree, field: str, bad: str) -> None:
    """The identifier and text checks remember what they accepted (compiler.model.schema): a value
    is refused with the same message however many good ones were accepted before it."""
    good = MINIMAL.replace("EMAIL: {type: VARCHAR, mask: email}", "EMAIL: {type: VARCHAR}")
    validate_raw(loader.load_directory(write_tree({"a.yaml": good})))
    if field == "masks":
        text = good.replace("  email:\n    strategy", f"  {bad!r}:\n    strategy".replace("'", '"'))
    else:
        text = good.replace("{type: VARCHAR}", "{type: " + repr(bad).replace("'", '"') + "}")
    messages = []
    for _ in range(2):
        with pytest.raises(InputError) as err:
            validate_raw(loader.load_directory(write_tree({"a.yaml": text})))
        messages.append([str(d) for d in err.value.diagnostics])
    assert messages[0] == messages[1] and messages[0]


# --------------------------------------------------------------------------------------------
# generated documents: block and flow style, every kind of scalar YAML 1.1 misreads, repeated
# keys, merge keys, anchors and aliases, tags


_SCALARS = [
    "x", "team_001", "P-000", "VARCHAR", "1", "010", "0x1F", "1:30", "1_000", "1.5", "16.10",
    ".inf", "-.nan", "1e3", "yes", "No", "on", "off", "true", "~", "null", "''", '"010"',
    "'yes'", "2024-01-01", "<<", "=", "!!str 1", "!!int 2", "!!float 3", "!!bool yes",
    "!!null ~", "!thing x", "!!binary aGk=", "|\n    a\n    b", "'a: b'", '"tab\\tinside"',
]  # fmt: skip
_KEYS = ["a", "b", "a", "010", "yes", "1", "~", "<<", "'1'", "!!str k", "!!int 7", "[x]", "{k: v}"]


def _flow(draw: Any, depth: int, anchors: list[str]) -> str:
    from hypothesis import strategies as st

    kind = draw(
        st.sampled_from(["scalar", "scalar", "list", "map", "alias"] if depth < 4 else ["scalar"])
    )
    if kind == "alias" and anchors:
        return "*" + draw(st.sampled_from(anchors))
    if kind in ("scalar", "alias"):
        return draw(st.sampled_from([s for s in _SCALARS if "\n" not in s]))
    anchor = ""
    if draw(st.booleans()) and len(anchors) < 3:
        anchor = f"&n{len(anchors)} "
    n = draw(st.integers(0, 3))
    if kind == "list":
        body = "[" + ", ".join(_flow(draw, depth + 1, anchors) for _ in range(n)) + "]"
    else:
        pairs = [
            f"{draw(st.sampled_from(_KEYS))}: {_flow(draw, depth + 1, anchors)}" for _ in range(n)
        ]
        body = "{" + ", ".join(pairs) + "}"
    if anchor:
        anchors.append(anchor[1:-1])
    return anchor + body


def _document(draw: Any) -> str:
    from hypothesis import strategies as st

    anchors: list[str] = []
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        key = draw(st.sampled_from(_KEYS[:8]))
        if draw(st.booleans()):
            lines.append(f"{key}: {_flow(draw, 1, anchors)}")
        else:
            lines.append(f"{key}:")
            items = draw(st.booleans())  # a block list, or a block mapping (never both)
            for _ in range(draw(st.integers(1, 3))):
                if items:
                    lines.append(f"  - {draw(st.sampled_from(_SCALARS))}")
                else:
                    lines.append(f"  {draw(st.sampled_from(_KEYS[:8]))}: {_flow(draw, 2, anchors)}")
    return "\n".join(lines) + "\n"


def test_fast_equals_full_on_generated_documents() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(
        max_examples=400,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.composite(lambda draw: _document(draw))())
    def check(text: str) -> None:
        _check(text.encode(), "gen.yaml")

    check()
