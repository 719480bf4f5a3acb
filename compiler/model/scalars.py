"""YAML 1.1 reads some plain scalars as numbers or booleans that nobody meant: ``010`` is 8,
``0x1F`` is 31, ``1:30`` is 90 (base 60), ``1_000`` is 1000, and ``yes``/``on`` are true.
Keys are always read as written (``compiler.model.loader``); a value YAML resolved to a number or a
boolean is checked here against what was written, and refused with the fix when the two
differ (write the number plainly, or quote the text)."""

from __future__ import annotations

import re
from typing import Any

from accord.compiler.core.errors import Diagnostic, Location
from accord.compiler.model.loader import RawProject

_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$")
_BOOL = re.compile(r"^(true|false)$", re.IGNORECASE)
#: fields that hold whole numbers: a boolean or a fraction there is a mistake
INTEGER_FIELDS = frozenset({"version", "keep_last"})


def _value_at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def scalar_problems(raw: RawProject) -> list[Diagnostic]:
    """A diagnostic for every plain scalar whose value is not what its text says."""
    out = []
    for path, text in sorted(raw.source.texts.items(), key=lambda item: str(item[0])):
        try:
            value = _value_at(raw.data, path)
        except (KeyError, IndexError, TypeError):
            continue
        # located only when refused: positions are composed on demand (compiler.model.loader)
        dotted = ".".join(str(p) for p in path)
        field = path[-1] if path and isinstance(path[-1], str) else None
        if field in INTEGER_FIELDS and (type(value) is not int or not _INT.match(text)):
            out.append(
                Diagnostic(
                    _where(raw, path),
                    f"{dotted}: {text} is not a whole number written plainly (e.g. 1)",
                )
            )
        elif isinstance(value, bool):
            if not _BOOL.match(text):
                out.append(
                    _misread(
                        _where(raw, path),
                        dotted,
                        text,
                        f"the boolean {str(value).lower()}",
                        f"write {str(value).lower()} for a flag, or ",
                    )
                )
        elif isinstance(value, int):
            if not _INT.match(text):
                out.append(_misread(_where(raw, path), dotted, text, f"the number {value}"))
        elif isinstance(value, float) and not _FLOAT.match(text):
            out.append(_misread(_where(raw, path), dotted, text, f"the number {value!r}"))
    return out


def _where(raw: RawProject, path: tuple[Any, ...]) -> Location:
    return raw.source.value(path) or raw.origin


def _misread(where: Location, dotted: str, text: str, what: str, flag: str = "") -> Diagnostic:
    return Diagnostic(
        where,
        f'{dotted}: YAML 1.1 reads {text} as {what}, not as written: {flag}quote it ("{text}") '
        "where a name or code is meant",
    )


def quote_hint(raw: RawProject, path: tuple[Any, ...]) -> str:
    """For a type error at ``path``: what YAML made of the text there, and the fix."""
    text = raw.source.texts.get(tuple(path))
    if text is None:
        return ""
    try:
        value = _value_at(raw.data, path)
    except (KeyError, IndexError, TypeError):
        return ""
    kind = "a boolean" if isinstance(value, bool) else "null" if value is None else "a number"
    return f'; YAML read {text} as {kind}: quote it ("{text}")'
