"""Salt placeholders: compiled SQL names a salt's reference, never its value.

``compile`` writes ``{{ accord_salt('env:NAME') }}`` where the salt belongs. Only when SQL is
applied does :func:`materialize` replace each placeholder with the secret, read from the
environment or a file and escaped as a SQL string literal by sqlglot. Unfilled, the placeholder
is a syntax error on both platforms, so a salt function can never be created with a salt that
anyone could read in the repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from sqlglot import exp

PLACEHOLDER = re.compile(r"\{\{ accord_salt\('(?P<ref>(?:env|file):[^']+)'\) \}\}")


class SaltError(Exception):
    pass


def placeholder(ref: str) -> str:
    return "{{ accord_salt('" + ref + "') }}"


def references(text: str) -> list[str]:
    return sorted({m.group("ref") for m in PLACEHOLDER.finditer(text)})


def resolve(ref: str, base: Path | None = None) -> str:
    """Read a salt: ``env:NAME`` from the environment, ``file:PATH`` from a file."""
    kind, _, target = ref.partition(":")
    if kind == "env":
        value = os.environ.get(target)
        if value is None:
            raise SaltError(f"salt {ref}: environment variable {target} is not set")
    elif kind == "file":
        path = Path(target)
        if base is not None and not path.is_absolute():
            path = base / path
        try:
            value = path.read_text(encoding="utf-8").strip()
        except OSError as err:
            raise SaltError(f"salt {ref}: cannot read {path}: {err.strerror}") from None
    else:
        raise SaltError(f"salt reference {ref!r} is neither env: nor file:")
    if not value:
        raise SaltError(f"salt {ref} is empty")
    if "$$" in value:
        raise SaltError(f"salt {ref} contains '$$', which cannot appear in a function body")
    return value


def materialize(text: str, dialect: str, resolver: Callable[[str], str] = resolve) -> str:
    """Fill every salt placeholder of ``text`` with its secret, as an escaped SQL literal.
    The result is for execution only: never write it to a file."""

    def fill(match: re.Match[str]) -> str:
        return exp.Literal.string(resolver(match.group("ref"))).sql(dialect)

    return PLACEHOLDER.sub(fill, text)


class SaltBox:
    """Resolves salts for one run and remembers them, so that anything printed afterwards (a
    platform's error message quoting the failed statement) can be scrubbed of them."""

    def __init__(self, resolver: Callable[[str], str] = resolve) -> None:
        self._resolver = resolver
        self._values: set[str] = set()

    def __call__(self, ref: str) -> str:
        value = self._resolver(ref)
        self._values.add(value)
        return value

    def redact(self, text: str) -> str:
        for value in sorted(self._values, key=len, reverse=True):
            text = text.replace(value, "<salt>")
        return text
