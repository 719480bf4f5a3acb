"""``json.dumps(obj, indent=n, sort_keys=...)``, byte for byte, at close to the C encoder's speed.

CPython's C encoder (``_json.make_encoder``) does not indent: ``json.dumps`` with ``indent``
falls back to the pure-Python encoder, which yields one small string per key, value and
separator. ``accord analyze --format json`` writes every persona's view of every governed
cell (about 100 MB at 4,000 datasets), where that encoder was 40% of the command.

What this module uses instead: a container whose values are all scalars (or empty
containers) is *flat*, and the C encoder writes it exactly as the indenting encoder would if
its item separator is ``",\\n"`` plus the indentation of the items: only the opening and
closing brackets need their newline and indentation added. Containers that hold non-empty
containers are walked here, in Python, once per container (never once per value). The C
encoder is built once per nesting level.

Options are those of ``json.dumps``'s defaults apart from ``indent`` and ``sort_keys``:
``ensure_ascii=True``, ``separators=(",", ": ")``, ``allow_nan=True``, no ``default``
(anything not JSON is a ``TypeError``, as there). Circular references are not detected (a
recursion error instead of ``ValueError``): accord's documents are trees.
``tests/test_jsonindent.py`` compares the two on random nested documents (hypothesis).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

try:
    from _json import make_encoder as _c_make_encoder
except ImportError:  # pragma: no cover - CPython always has _json
    _c_make_encoder = None

#: exact types written by the C encoder as the indenting encoder writes them
_SCALAR = frozenset({str, int, float, bool, type(None)})
_EMPTY = frozenset({list, tuple, dict})
_INF = float("inf")


class Raw(str):
    """JSON text already written for the level it is placed at, written as it is (a caller
    that assembles a large document from parts puts them in a document this way)."""

    __slots__ = ()


def _no_default(o: object) -> object:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _float(o: float) -> str:
    # json.encoder's floatstr with allow_nan=True
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def scalar(o: Any) -> str | None:
    """The JSON text of a scalar, or None if ``o`` is not one (as ``json.dumps`` writes it)."""
    if isinstance(o, str):
        return encode_basestring_ascii(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    return None


def _key(k: Any) -> str:
    # json.encoder's key conversion (skipkeys=False): str as it is; float, bool, None and
    # int as their JSON text
    if isinstance(k, str):
        return k
    text = scalar(k)
    if text is None:
        raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")
    return text


class Encoder:
    """An indenting encoder: ``Encoder(2, sort_keys=True).encode(doc)`` is
    ``json.dumps(doc, indent=2, sort_keys=True)``. :meth:`chunks` writes a value at a
    nesting level, for callers that assemble a large document from parts."""

    def __init__(self, indent: int = 2, *, sort_keys: bool = False) -> None:
        self.unit = " " * indent
        self.sort_keys = sort_keys
        self._flat: dict[int, Any] = {}

    def _c(self, level: int) -> Any:
        """The C encoder of a flat container at ``level`` (items at ``level + 1``)."""
        found = self._flat.get(level)
        if found is None:
            found = self._flat[level] = _c_make_encoder(
                None,
                _no_default,
                encode_basestring_ascii,
                None,
                ": ",
                ",\n" + self.unit * (level + 1),
                self.sort_keys,
                False,
                True,
            )
        return found

    def encode(self, o: Any) -> str:
        return "".join(self.chunks(o, 0))

    def chunks(self, o: Any, level: int) -> list[str]:
        out: list[str] = []
        self._write(o, level, out)
        return out

    def flat(self, o: Any, level: int) -> str:
        """A flat container (every value a scalar or an empty container) at ``level``."""
        text: str = "".join(self._c(level)(o, 0))
        if len(text) == 2:  # empty
            return text
        return (
            text[0]
            + "\n"
            + self.unit * (level + 1)
            + text[1:-1]
            + "\n"
            + self.unit * level
            + text[-1]
        )

    def _write(self, o: Any, level: int, out: list[str]) -> None:
        t = type(o)
        if t in _SCALAR:
            out.append(scalar(o))  # type: ignore[arg-type]
            return
        if t is Raw:
            out.append(o)
            return
        if t is dict or t is list or t is tuple:
            values = o.values() if t is dict else o
            if _c_make_encoder is not None and all(
                type(v) in _SCALAR or (type(v) in _EMPTY and not v) for v in values
            ):
                out.append(self.flat(o, level))
                return
        text = scalar(o)
        if text is not None:  # a subclass of str, int or float
            out.append(text)
        elif isinstance(o, dict):
            self._dict(o, level, out)
        elif isinstance(o, (list, tuple)):
            self._list(o, level, out)
        else:
            raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")

    def _list(self, o: list[Any] | tuple[Any, ...], level: int, out: list[str]) -> None:
        if not o:
            out.append("[]")
            return
        inner = "\n" + self.unit * (level + 1)
        sep = "[" + inner
        for v in o:
            out.append(sep)
            self._write(v, level + 1, out)
            sep = "," + inner
        out.append("\n" + self.unit * level + "]")

    def _dict(self, o: dict[Any, Any], level: int, out: list[str]) -> None:
        if not o:
            out.append("{}")
            return
        inner = "\n" + self.unit * (level + 1)
        sep = "{" + inner
        items = sorted(o.items()) if self.sort_keys else o.items()
        for k, v in items:
            out.append(sep + encode_basestring_ascii(_key(k)) + ": ")
            self._write(v, level + 1, out)
            sep = "," + inner
        out.append("\n" + self.unit * level + "}")


def dumps(o: Any, *, indent: int = 2, sort_keys: bool = False) -> str:
    """``json.dumps(o, indent=indent, sort_keys=sort_keys)``, faster."""
    if _c_make_encoder is None:  # pragma: no cover
        return json.dumps(o, indent=indent, sort_keys=sort_keys)
    return Encoder(indent, sort_keys=sort_keys).encode(o)
