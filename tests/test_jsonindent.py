"""``compiler.core.jsonindent`` writes what ``json.dumps(indent=..., sort_keys=...)`` writes, byte for
byte: on random nested documents (hypothesis), on edge values written out, and on the
reference estates' ``accord analyze`` documents (see also tests/test_analyze_output.py)."""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accord.compiler.core.jsonindent import Encoder, Raw, dumps, scalar

KEYS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["a", "b", "values", "column", ""]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # any code point: ensure_ascii escapes
    st.sampled_from(["", "\n", '"', "\\", "\u2028", "\U0001f600", "\x00", "é"]),
)


def documents() -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(KEYS, inner, max_size=5),
        ),
        max_leaves=40,
    )


@settings(max_examples=400, deadline=None)
@given(documents(), st.sampled_from([0, 1, 2, 4]), st.booleans())
def test_random_documents_match_json_dumps(doc: Any, indent: int, sort_keys: bool) -> None:
    assert dumps(doc, indent=indent, sort_keys=sort_keys) == json.dumps(
        doc, indent=indent, sort_keys=sort_keys
    )


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.one_of(st.integers(), st.booleans(), st.none()), SCALARS, max_size=4))
def test_non_string_keys_match_json_dumps(doc: dict[Any, Any]) -> None:
    # sort_keys with mixed key types raises in both; without sorting both convert the keys
    assert dumps(doc) == json.dumps(doc, indent=2)


class Level(IntEnum):
    LOW = 1


class Name(str):
    pass


EDGE: list[Any] = [
    {},
    [],
    (),
    {"a": {}},
    {"a": []},
    [[], {}, [[]]],
    {"values": [], "column": None},
    {"values": ["EU", "LATAM"], "column": None, "dataset": "d"},
    [{"a": 1}, {"b": [1, 2]}, {"c": {"d": {}}}],
    {"x": math.nan, "y": math.inf, "z": -math.inf, "w": -0.0, "v": 1e300},
    {"t": True, "f": False, "n": None, "i": 2**80},
    {1.5: "float key", 2: "int key", "s": "str key"},
    {"sub": Name("a str subclass"), "enum": Level.LOW, Name("k"): [Level.LOW]},
    OrderedDict([("b", 1), ("a", [OrderedDict([("z", 1)])])]),
    "top-level string",
    12,
    None,
]


@pytest.mark.parametrize("doc", EDGE, ids=[repr(d)[:30] for d in EDGE])
@pytest.mark.parametrize("sort_keys", [False, True])
def test_edge_values_match_json_dumps(doc: Any, sort_keys: bool) -> None:
    try:
        expected = json.dumps(doc, indent=2, sort_keys=sort_keys)
    except TypeError:
        with pytest.raises(TypeError):
            dumps(doc, indent=2, sort_keys=sort_keys)
        return
    assert dumps(doc, indent=2, sort_keys=sort_keys) == expected


@pytest.mark.parametrize("bad", [{"a": object()}, [1, {2, 3}], {(1, 2): "tuple key"}])
def test_not_json_is_a_type_error(bad: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(bad, indent=2)
    with pytest.raises(TypeError):
        dumps(bad, indent=2)


def test_chunks_at_a_level_nest_inside_a_document() -> None:
    """A value written at level n is what json.dumps writes for it n levels deep."""
    value = {"b": [1, {"c": ["x"]}], "a": []}
    whole = json.dumps({"k": {"j": value}}, indent=2, sort_keys=True)
    part = "".join(Encoder(2, sort_keys=True).chunks(value, 2))
    assert part in whole
    assert whole == '{\n  "k": {\n    "j": ' + part + "\n  }\n}"


@pytest.mark.parametrize("value", [None, True, False, 0, -3, 1.25, math.nan, "a\nb", "é"])
def test_scalar_is_json_dumps(value: Any) -> None:
    assert scalar(value) == json.dumps(value)
    assert scalar([value]) is None


def test_raw_text_is_written_as_it_is() -> None:
    inner = json.dumps([1, {"a": None}], indent=2)
    # pre-written at level 1 (one level in): its lines indented as json.dumps would
    at_level_1 = inner.replace("\n", "\n  ")
    got = dumps({"k": Raw(at_level_1), "j": 2}, indent=2, sort_keys=True)
    assert got == json.dumps({"k": [1, {"a": None}], "j": 2}, indent=2, sort_keys=True)
