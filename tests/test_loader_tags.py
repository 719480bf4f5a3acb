"""The loader remembers the tag each scalar resolves to (``compiler.model.loader._Loader``): every
node it composes must be the node PyYAML's own safe loader composes, tag, value and position,
whatever order the scalars come in (a plain ``1`` and a quoted ``"1"`` share a value, not a tag).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from accord.compiler.model import loader
from tests.conftest import ROOT
from tests.test_lint_incremental import PROPERTY, bench_estate

BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _tree(node: yaml.Node) -> object:
    where = (node.start_mark.line, node.start_mark.column, node.end_mark.line)
    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, node.style, where)
    if isinstance(node, yaml.SequenceNode):
        return ("seq", node.tag, where, [_tree(n) for n in node.value])
    return ("map", node.tag, where, [(_tree(k), _tree(v)) for k, v in node.value])


def _same(text: str) -> None:
    ours, theirs = yaml.compose(text, Loader=loader._Loader), yaml.compose(text, Loader=BASE)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert _tree(ours) == _tree(theirs)


def _repository_yaml() -> list[Path]:
    skip = {".venv", ".git", "build"}
    return sorted(
        path
        for pattern in ("*.yaml", "*.yml")
        for path in ROOT.rglob(pattern)
        if not skip.intersection(path.relative_to(ROOT).parts)
    )


def test_the_remembered_tags_are_the_resolvers_on_the_repositorys_yaml() -> None:
    paths = _repository_yaml()
    assert len(paths) > 10  # the policy projects, examples, fixtures, hook files
    for path in paths:
        _same(path.read_text(encoding="utf-8"))


def test_the_remembered_tags_are_the_resolvers_on_a_generated_estate() -> None:
    for document in bench_estate(200).values():
        _same(yaml.safe_dump(document, sort_keys=False))


#: values a resolver reads as something other than a string, plain; each also comes quoted
TRICKY = [
    "1", "1.0", "010", "0x1F", "0o17", "1:30", "1_000", "-1", "+1", ".5", ".inf", "-.Inf",
    ".nan", "true", "True", "TRUE", "false", "yes", "no", "on", "off", "y", "n", "~", "null",
    "Null", "NULL", "2026-12-01", "2026-12-01T10:00:00Z", "2026-12-01 10:00:00", "=", "<<",
    "1e3", "1.0e+3", "0b101", "+.inf", "0", "-0", "abc", "VARCHAR(10)", "",
]  # fmt: skip


@pytest.mark.parametrize("quoted_first", [False, True])
def test_a_value_keeps_its_tag_for_each_style(quoted_first: bool) -> None:
    """The same text plain and quoted, in both orders: the remembered tag of the one is never
    the other's (with the value alone as the key, a quoted ``"1"`` after a plain ``1`` would
    come back an int)."""
    loader._tag.cache_clear()
    lines = []
    for i, value in enumerate(TRICKY):
        plain, quoted = (f"  - {value}" if value else "  - ''"), f"  - '{value}'"
        lines += [quoted, plain] if quoted_first else [plain, quoted]
        lines.append(f"  - {{k{i}: {value or 'x'}, '{value}': \"{value}\"}}")
    _same("values:\n" + "\n".join(lines) + "\n")
    values = yaml.load("- 1\n- '1'\n- true\n- 'true'\n", Loader=loader._Loader)
    assert values == [1, "1", True, "true"]


def test_tags_and_anchors_the_document_spells() -> None:
    """Explicit and non-specific tags, anchors and aliases, flow and block collections."""
    _same(
        "a: !!str 1\nb: ! 1\nc: !!int '7'\nd: !!float 1\ne: &x [1, '1', {k: v}]\n"
        "f: *x\ng: !!map {1: 2}\nh: !!seq [true]\ni: ! [x]\n? [complex]\n: key\n"
        "k: |\n  1\nl: >-\n  true\n"
    )


def test_the_memory_is_bounded() -> None:
    assert loader._tag.cache_info().maxsize == loader.MAX_REMEMBERED_TAGS


SCALARS = st.one_of(
    st.sampled_from([v for v in TRICKY if v]),
    st.text(alphabet="0123456789.:-+_eExXoObB~tTrRuUfFaAlLsSnN ", min_size=1, max_size=8),
)


@PROPERTY
@given(st.lists(st.tuples(SCALARS, st.sampled_from(["plain", "single", "double"])), max_size=40))
def test_the_remembered_tags_are_the_resolvers_in_any_order(
    items: list[tuple[str, str]],
) -> None:
    lines = []
    for value, style in items:
        text = value.strip()
        if not text:
            continue
        if style == "single":
            text = "'" + text.replace("'", "''") + "'"
        elif style == "double":
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"- {text}")
    text = "\n".join(lines) + "\n"
    try:
        yaml.compose(text, Loader=BASE)
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            yaml.compose(text, Loader=loader._Loader)
        return
    _same(text)
