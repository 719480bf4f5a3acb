"""Names for Spark: each Unity Catalog ``catalog.schema`` is one Spark database.

Spark's session catalog takes two-part names (``database.name``): a three-part
``governance.policies.f`` is refused (``REQUIRES_SINGLE_PART_NAMESPACE``). So before a compiled
Databricks statement runs on Spark, every name whose first two parts are a ``catalog.schema``
the compiled SQL creates objects in is rewritten: those two parts (and the dot between them)
become the one Spark database mapped to them (:func:`databases`). The rewrite works on
sqlglot's Databricks tokens and replaces the source text of exactly those tokens: comments,
string literals, whitespace, every other identifier and every keyword stay byte for byte as
written (``tests/test_verify_spark_names.py`` proves it).

Spark has no per-session ``current_user()``, ``session_user()`` or ``current_date()`` that the
harness can set, and its built-ins cannot be replaced by a function of the same name: those
three calls are bound separately (:meth:`Names.bind_context`) to the harness's stand-ins in
its own database, as DuckDB's engine binds them to the persona table
(:mod:`compiler.verify.bind`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

#: the harness's own database: the membership stand-ins, the persona table, the rows
HARNESS = "accord"

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: context calls bound to the harness's stand-ins (``HARNESS.<name>()``)
CONTEXT = {
    "CURRENT_USER": "accord_user",
    "SESSION_USER": "accord_user",
    "CURRENT_DATE": "accord_today",
    "CURDATE": "accord_today",
}


def _tokens(text: str) -> list[Token]:
    return Dialect.get_or_raise("databricks").tokenize(text)


def _part(token: Token) -> str | None:
    """The identifier a token spells (folded: Unity Catalog names ignore case), or None."""
    if token.token_type == TokenType.IDENTIFIER:
        return token.text.lower()
    if token.token_type not in (TokenType.STRING, TokenType.NUMBER) and _PLAIN.match(token.text):
        return token.text.lower()
    return None


def quote(name: str) -> str:
    """A Spark identifier: as is when plain, else back-quoted."""
    return name if _PLAIN.match(name) else "`" + name.replace("`", "``") + "`"


def databases(schemas: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """One Spark database per ``(catalog, schema)`` (folded), ``catalog__schema``, made
    distinct with a number when two would collide; never the harness's own."""
    out: dict[tuple[str, str], str] = {}
    used = {HARNESS}
    for catalog, schema in sorted(set(schemas)):
        base = f"{catalog}__{schema}"
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}__{n}"
        used.add(name)
        out[(catalog, schema)] = name
    return out


@dataclass(frozen=True)
class Edit:
    """One replaced span of a statement's text: ``text[start:end]`` became ``new``."""

    start: int
    end: int
    old: str
    new: str


class Names:
    """Rewrites statements' names for Spark, with the map ``(catalog, schema) -> database``."""

    def __init__(self, mapping: dict[tuple[str, str], str]) -> None:
        self.mapping = mapping

    def edits(self, text: str) -> list[Edit]:
        """The spans :meth:`rewrite` replaces: every name ``c.s.x...`` (not itself after a
        dot) whose ``c.s`` is mapped."""
        tokens = _tokens(text)
        out = []
        i = 0
        while i + 4 < len(tokens):
            a, d1, b, d2, c = tokens[i : i + 5]
            after_dot = i > 0 and tokens[i - 1].token_type == TokenType.DOT
            key = (_part(a), _part(b))
            if (
                not after_dot
                and d1.token_type == TokenType.DOT
                and d2.token_type == TokenType.DOT
                and _part(c) is not None
                and key in self.mapping
            ):
                out.append(
                    Edit(a.start, d2.start, text[a.start : d2.start], quote(self.mapping[key]))  # type: ignore[index]
                )
                i += 4
                continue
            i += 1
        return out

    def rewrite(self, text: str) -> str:
        """``text`` with every mapped ``catalog.schema`` replaced by its Spark database."""
        return _apply(text, self.edits(text))

    @staticmethod
    def bind_context(text: str) -> str:
        """``text`` with ``current_user()``, ``session_user()`` and ``current_date()`` (with or
        without parentheses) calling the harness's stand-ins instead."""
        tokens = _tokens(text)
        edits = []
        for i, token in enumerate(tokens):
            name = token.text.upper()
            if name not in CONTEXT or (i > 0 and tokens[i - 1].token_type == TokenType.DOT):
                continue
            if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
                continue
            has_parens = (
                i + 2 < len(tokens)
                and tokens[i + 1].token_type == TokenType.L_PAREN
                and tokens[i + 2].token_type == TokenType.R_PAREN
            )
            end = tokens[i + 2].end + 1 if has_parens else token.end + 1
            new = f"{HARNESS}.{CONTEXT[name]}()"
            edits.append(Edit(token.start, end, text[token.start : end], new))
        return _apply(text, edits)


def _apply(text: str, edits: list[Edit]) -> str:
    out = []
    at = 0
    for e in edits:
        out.append(text[at : e.start])
        out.append(e.new)
        at = e.end
    out.append(text[at:])
    return "".join(out)


def schemas_of(names: Iterable[str]) -> set[tuple[str, str]]:
    """The ``(catalog, schema)`` of every three-part name in ``names`` (folded)."""
    out = set()
    for name in names:
        parts = [p.strip("`").lower() for p in name.split(".")]
        if len(parts) == 3:
            out.add((parts[0], parts[1]))
    return out
