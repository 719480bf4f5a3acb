"""Unity Catalog ABAC conditions and policy scope: the one evaluator.

An ABAC policy (``CREATE POLICY``) applies to the tables inside its securable (:func:`covers`)
whose tags satisfy its ``WHEN`` condition, and masks or reads the columns whose tags satisfy
its ``MATCH COLUMNS`` conditions. A condition is ``has_tag('k')`` and ``has_tag_value('k',
'v')`` combined with AND, OR, NOT (and TRUE / FALSE); :func:`holds` evaluates one on the tags
an object carries. The planner's simulator (:mod:`compiler.plan.state`) and ``accord verify``
(:mod:`compiler.verify.parts`) both ask this module, so they cannot reach opposite verdicts on
the same policy.

Tag keys and tag values are compared exactly as written. Databricks documents both as
case-sensitive: "Tag keys and tag values [...] Are case-sensitive. For example, Department and
department are two distinct tags", and of ``CREATE GOVERNED TAG``: "The tag key must be unique
within the account and is case sensitive"
(https://docs.databricks.com/gcp/en/sql/language-manual/sql-ref-syntax-ddl-create-governed-tag,
https://learn.microsoft.com/en-ie/Azure/databricks/admin/governed-tags/manage-governed-tags).
Nothing documents ``has_tag`` / ``has_tag_value`` as folding case, so ``has_tag('PII')`` does
not match a column tagged ``pii``.

Securable names, by contrast, are catalog identifiers, which the platform resolves without
regard to case: :func:`covers` compares them as the caller folds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Protocol

import sqlglot
from sqlglot import exp


class ConditionError(ValueError):
    """A condition that is not ``has_tag`` / ``has_tag_value`` with AND, OR, NOT: ``node``
    is the part that cannot be evaluated."""

    def __init__(self, node: exp.Expression) -> None:
        super().__init__(node.sql("databricks"))
        self.node = node


@lru_cache(maxsize=4096)
def parse(text: str) -> exp.Expression:
    """A condition as written in a policy (``targets.objects.AbacPolicy.when``,
    ``match_columns``), parsed in the Databricks dialect. Raises sqlglot's ``ParseError`` or
    ``TokenError`` when it cannot be read."""
    return sqlglot.parse_one(text, read="databricks")


def holds(condition: exp.Expression | None, tags: Mapping[str, str]) -> bool:
    """Whether ``condition`` holds for an object carrying ``tags`` ({key: value}, keys as
    written; a key without a value maps to ``""``). No condition always holds. Raises
    :class:`ConditionError` for anything but the tag functions and boolean operators."""
    if condition is None:
        return True
    return _holds(condition, tags)


def _holds(node: exp.Expression, tags: Mapping[str, str]) -> bool:
    if isinstance(node, exp.Paren):
        return _holds(node.this, tags)
    if isinstance(node, exp.And):
        return _holds(node.this, tags) and _holds(node.expression, tags)
    if isinstance(node, exp.Or):
        return _holds(node.this, tags) or _holds(node.expression, tags)
    if isinstance(node, exp.Not):
        return not _holds(node.this, tags)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Anonymous) and all(
        isinstance(a, exp.Literal) and a.is_string for a in node.expressions
    ):
        name, args = node.name.lower(), [a.this for a in node.expressions]
        if name == "has_tag" and len(args) == 1:
            return args[0] in tags
        if name == "has_tag_value" and len(args) == 2:
            return tags.get(args[0]) == args[1]
    raise ConditionError(node)


class Scoped(Protocol):
    """What :func:`covers` reads of a policy: ``targets.objects.AbacPolicy`` and the scanned
    ``compiler.sqlscan.AbacPolicy`` both have it."""

    @property
    def securable_type(self) -> str: ...

    @property
    def securable(self) -> str: ...


def covers(policy: Scoped, table: str, fold: Callable[[str], str] = str.upper) -> bool:
    """Whether ``table`` (a full name, already folded with ``fold``) is inside the policy's
    securable: the table itself for ``ON TABLE``, a table of the catalog or schema
    otherwise."""
    scope = fold(policy.securable)
    if policy.securable_type == "TABLE":
        return table == scope
    return table.startswith(scope + ".")
