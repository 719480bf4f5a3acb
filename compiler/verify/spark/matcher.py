"""The Spark harness's own ABAC matcher: which policies apply to a table, a column and a user.

Spark has no ``CREATE POLICY``: the harness decides, from each policy as the compiled SQL
states it, what Unity Catalog would attach, and then lets Spark execute the policy's function.
It deliberately does not ask accord's ABAC evaluator (:mod:`targets.abac_conditions`), which
the DuckDB engine and the planner use: a defect there would otherwise be on both sides of the
comparison. What it implements, from the reference (sql-ref-syntax-ddl-create-policy,
unity-catalog/abac/policies):

* scope: ``ON CATALOG c`` covers the tables of ``c``, ``ON SCHEMA c.s`` those of ``c.s``,
  ``ON TABLE t`` the table ``t``; securable names are identifiers, compared without case;
* ``WHEN`` and ``MATCH COLUMNS`` conditions: ``has_tag('k')`` (the object carries the tag),
  ``has_tag_value('k', 'v')`` (it carries it with that value), ``AND``, ``OR``, ``NOT`` and
  parentheses, ``TRUE`` / ``FALSE``; tag keys and values compared exactly ("Tag keys and tag
  values [...] are case-sensitive"). Column tags are the column's own: they do not inherit from
  the table. A ``MATCH COLUMNS`` condition that no column satisfies means the policy does not
  apply to the table;
* ``TO`` / ``EXCEPT``: the policy applies to a user who is one of, or in a group of, the
  ``TO`` principals (``account users`` is every user) and none of the ``EXCEPT`` ones.

Conditions are read by a small recursive-descent parser over sqlglot's tokens, not by
sqlglot's parser or accord's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

ACCOUNT_USERS = "account users"


class MatchError(ValueError):
    """A condition the harness cannot read (anything but the tag functions and AND/OR/NOT)."""


@dataclass(frozen=True)
class _Tag:
    key: str
    value: str | None  # None: has_tag


# a condition: a _Tag, a bool, or ("not", c) / ("and", a, b) / ("or", a, b)
Condition = object


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[Token] = Dialect.get_or_raise("databricks").tokenize(text)
        self.i = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise MatchError(f"{self.text}: ends too early")
        self.i += 1
        return token

    def parse(self) -> Condition:
        out = self.disjunction()
        if self.peek() is not None:
            raise MatchError(f"{self.text}: unexpected {self.peek().text!r}")  # type: ignore[union-attr]
        return out

    def disjunction(self) -> Condition:
        left = self.conjunction()
        while (t := self.peek()) is not None and t.token_type == TokenType.OR:
            self.take()
            left = ("or", left, self.conjunction())
        return left

    def conjunction(self) -> Condition:
        left = self.negation()
        while (t := self.peek()) is not None and t.token_type == TokenType.AND:
            self.take()
            left = ("and", left, self.negation())
        return left

    def negation(self) -> Condition:
        t = self.peek()
        if t is not None and t.token_type == TokenType.NOT:
            self.take()
            return ("not", self.negation())
        return self.atom()

    def atom(self) -> Condition:
        t = self.take()
        if t.token_type == TokenType.L_PAREN:
            inner = self.disjunction()
            if self.take().token_type != TokenType.R_PAREN:
                raise MatchError(f"{self.text}: ')' expected")
            return inner
        if t.token_type in (TokenType.TRUE, TokenType.FALSE):
            return t.token_type == TokenType.TRUE
        name = t.text.lower()
        if name not in ("has_tag", "has_tag_value"):
            raise MatchError(f"{self.text}: {t.text} is not has_tag or has_tag_value")
        if self.take().token_type != TokenType.L_PAREN:
            raise MatchError(f"{self.text}: '(' expected after {t.text}")
        args = [self._string()]
        while (p := self.peek()) is not None and p.token_type == TokenType.COMMA:
            self.take()
            args.append(self._string())
        if self.take().token_type != TokenType.R_PAREN:
            raise MatchError(f"{self.text}: ')' expected")
        if name == "has_tag" and len(args) == 1:
            return _Tag(args[0], None)
        if name == "has_tag_value" and len(args) == 2:
            return _Tag(args[0], args[1])
        raise MatchError(f"{self.text}: {t.text} takes {1 if name == 'has_tag' else 2} strings")

    def _string(self) -> str:
        t = self.take()
        if t.token_type != TokenType.STRING:
            raise MatchError(f"{self.text}: a string literal expected, not {t.text!r}")
        return t.text


def parse(text: str) -> Condition:
    return _Parser(text).parse()


def holds(condition: Condition, tags: Mapping[str, str]) -> bool:
    """Whether ``condition`` holds for an object carrying ``tags`` ({key: value})."""
    if isinstance(condition, bool):
        return condition
    if isinstance(condition, _Tag):
        if condition.key not in tags:
            return False
        return condition.value is None or tags[condition.key] == condition.value
    op, *args = condition  # type: ignore[misc]
    if op == "not":
        return not holds(args[0], tags)
    if op == "and":
        return holds(args[0], tags) and holds(args[1], tags)
    return holds(args[0], tags) or holds(args[1], tags)


def _parts(name: str) -> list[str]:
    return [p.strip("`").lower() for p in name.split(".")]


def covers(securable_type: str, securable: str, table: str) -> bool:
    """Whether the policy's securable contains ``table`` (full names, any case)."""
    scope, target = _parts(securable), _parts(table)
    if securable_type.upper() == "TABLE":
        return scope == target
    return len(target) > len(scope) and target[: len(scope)] == scope


def applies_to(to: tuple[str, ...], except_: tuple[str, ...], groups: set[str], user: str) -> bool:
    """Whether a policy with ``to`` / ``except_`` applies to a user in ``groups``."""

    def named(principals: tuple[str, ...]) -> bool:
        return any(p.lower() == ACCOUNT_USERS or p in groups or p == user for p in principals)

    return named(to) and not named(except_)


def match_columns(
    conditions: tuple[tuple[str, str], ...], column_tags: Mapping[str, Mapping[str, str]]
) -> dict[str, list[str]] | None:
    """alias -> the columns (in table order) its condition matches; None when a condition
    matches no column (the policy does not apply to the table)."""
    out: dict[str, list[str]] = {}
    for text, alias in conditions:
        condition = parse(text)
        found = [c for c, tags in column_tags.items() if holds(condition, tags)]
        if not found:
            return None
        if alias:
            out[alias] = found
    return out
