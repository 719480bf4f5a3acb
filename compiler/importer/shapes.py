"""The shapes of policy bodies the model expresses, recognised in a body read back.

* a row filter that looks a value up in a mapping table: ``EXISTS (SELECT 1 FROM <table> g
  WHERE g.<key> = <param> AND <member>(g.<principal>) [AND (g.<expiry> IS NULL OR
  CURRENT_DATE() <= g.<expiry>)])``, one such lookup per dimension (AND), each dimension or the
  whole filter perhaps ``OR <member>('<identity>')`` for who sees every row
  (:func:`filter_shape`);
* a mask: ``CASE WHEN <member>('<identity>') [OR ...] THEN <value> ELSE <masked> END`` or the
  masked expression alone, the masked expression a SHA-256 of the value (alone, or with a
  salt function's value), a string (redact), NULL (nullify) or stars but the last characters
  (partial) (:func:`mask_shape`).

``<member>`` is the platform's membership function (``IS_ROLE_IN_SESSION``,
``is_account_group_member``: :mod:`compiler.core.platforms`): ``CURRENT_ROLE()`` and
``is_member()`` checks are not entitlements the model can say, and stay what they are
(a hand-written predicate, or an unmanaged object), so lint reports them. What is recognised
here is only a candidate: what was read live must also lower back exactly
(:mod:`compiler.importer.exact`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from accord.compiler.core.platforms import facts
from accord.compiler.lint.trees import hash_calls

# --------------------------------------------------------------------------------------------
# membership checks


def member_literal(node: exp.Expression, platform: str) -> str | None:
    """``IS_ROLE_IN_SESSION('X')`` (``is_account_group_member('x')``) -> ``X``; else None."""
    node = _bare(node)
    if (
        isinstance(node, exp.Anonymous)
        and node.name.lower() == facts(platform).member_function.lower()
        and len(node.expressions) == 1
        and isinstance(node.expressions[0], exp.Literal)
        and node.expressions[0].is_string
    ):
        return str(node.expressions[0].this)
    return None


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _ors(node: exp.Expression) -> list[exp.Expression]:
    node = _bare(node)
    if isinstance(node, exp.Or):
        return _ors(node.this) + _ors(node.expression)
    return [node]


def _ands(node: exp.Expression) -> list[exp.Expression]:
    node = _bare(node)
    if isinstance(node, exp.And):
        return _ands(node.this) + _ands(node.expression)
    return [node]


def members(node: exp.Expression, platform: str) -> tuple[str, ...] | None:
    """The identities of a disjunction of membership checks, in order; None when it is any
    other expression."""
    found = [member_literal(n, platform) for n in _ors(node)]
    return tuple(f for f in found if f is not None) if all(found) else None


# --------------------------------------------------------------------------------------------
# row filters


@dataclass(frozen=True)
class Lookup:
    """One dimension's lookup in a mapping table."""

    #: the table as written (dotted, unquoted)
    table: str
    key_column: str
    principal_column: str
    expiry_column: str | None
    #: the policy parameter compared with the key column
    param: str
    #: identities this dimension admits every row for
    exempt: tuple[str, ...] = ()


@dataclass(frozen=True)
class FilterShape:
    lookups: tuple[Lookup, ...]
    #: identities the whole filter admits every row for
    exempt: tuple[str, ...] = ()


def _column(node: exp.Expression) -> tuple[str, str] | None:
    """(qualifier, name) of a column reference."""
    node = _bare(node)
    if isinstance(node, exp.Column) and not node.args.get("db"):
        return (node.table, node.name)
    return None


def lookup(node: exp.Expression, platform: str) -> Lookup | None:
    """The lookup of one EXISTS subquery over one table (see the module's docstring)."""
    node = _bare(node)
    if not isinstance(node, exp.Exists) or not isinstance(node.this, exp.Select):
        return None
    select = node.this
    source = select.args.get("from_") or select.args.get("from")
    if (
        source is None
        or not isinstance(source.this, exp.Table)
        or select.args.get("joins")
        or select.args.get("group")
        or select.args.get("having")
        or select.args.get("where") is None
    ):
        return None
    table = source.this
    names = {n.lower() for n in (table.alias_or_name, table.name) if n}
    qualified = ".".join(p.name for p in table.parts)
    key = principal = expiry = param = None
    for term in _ands(select.args["where"].this):
        if isinstance(term, exp.EQ):
            left, right = _column(term.this), _column(term.expression)
            if left and right and left[0].lower() in names and not right[0]:
                key, param = left[1], right[1]
            elif left and right and right[0].lower() in names and not left[0]:
                key, param = right[1], left[1]
            else:
                return None
            continue
        if (
            isinstance(term, exp.Anonymous)
            and term.name.lower() == facts(platform).member_function.lower()
            and len(term.expressions) == 1
        ):
            col = _column(term.expressions[0])
            if col is None or col[0].lower() not in names:
                return None
            principal = col[1]
            continue
        found = _expiry(term, names)
        if found is None:
            return None
        expiry = found
    if key is None or principal is None or param is None:
        return None
    return Lookup(qualified, key, principal, expiry, param)


def _expiry(term: exp.Expression, names: set[str]) -> str | None:
    """``(g.E IS NULL OR CURRENT_DATE() <= g.E)`` -> ``E``."""
    parts = _ors(term)
    if len(parts) != 2:
        return None
    first, second = parts
    if not isinstance(first, exp.Is) or not isinstance(first.expression, exp.Null):
        return None
    col = _column(first.this)
    if (
        col is None
        or col[0].lower() not in names
        or not isinstance(second, exp.LTE)
        or not isinstance(second.this, exp.CurrentDate)
    ):
        return None
    other = _column(second.expression)
    return col[1] if other is not None and other[1].lower() == col[1].lower() else None


def filter_shape(body: exp.Expression, platform: str) -> FilterShape | None:
    """The lookups of an entitlement row filter and who sees every row, or None."""
    terms = _ors(body)
    core = [t for t in terms if member_literal(t, platform) is None]
    if len(core) != 1:
        return None
    wide = tuple(m for t in terms if (m := member_literal(t, platform)) is not None)
    lookups = []
    for part in _ands(core[0]):
        pieces = _ors(part)
        found = [lookup(p, platform) for p in pieces]
        looked = [f for f in found if f is not None]
        if len(looked) != 1:
            return None
        rest = [p for p, f in zip(pieces, found, strict=True) if f is None]
        exempt = tuple(m for p in rest if (m := member_literal(p, platform)) is not None)
        if len(exempt) != len(rest):
            return None
        lookups.append(Lookup(**{**looked[0].__dict__, "exempt": exempt}))
    return FilterShape(tuple(lookups), wide)


def rename_columns(body: exp.Expression, names: dict[str, str]) -> exp.Expression:
    """``body`` with its unqualified column references renamed (a parameter -> the column it
    is attached on), case-insensitively; qualified references (a subquery's) are left."""

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table:
            new = names.get(node.name.lower())
            if new is not None:
                return exp.column(new)
        return node

    return body.copy().transform(swap)


# --------------------------------------------------------------------------------------------
# masks


@dataclass(frozen=True)
class MaskShape:
    strategy: str
    #: identities who see the clear value, in order
    clear: tuple[str, ...] = ()
    #: a hash's salt function (qualified, as written), or None for a hash without one
    salt_function: str | None = None
    replacement: str | None = None
    keep_last: int | None = None


def mask_shape(body: exp.Expression, value: str, platform: str) -> MaskShape | str:
    """What the mask of masked value ``value`` is, or why the model cannot say it."""
    body = _bare(body)
    clear: tuple[str, ...] = ()
    masked = body
    if isinstance(body, exp.Case):
        ifs = body.args.get("ifs") or []
        who = members(ifs[0].this, platform) if len(ifs) == 1 else None
        shown = _column(ifs[0].args["true"]) if len(ifs) == 1 else None
        default = body.args.get("default")
        if (
            who is None
            or default is None
            or shown is None
            or shown[0]
            or shown[1].lower() != value.lower()
        ):
            return (
                f"its CASE decides the clear value by more than {facts(platform).member_function} "
                "checks of literal identities"
            )
        clear, masked = who, _bare(default)
    strategy = _masked(masked, value, platform)
    if isinstance(strategy, str):
        return strategy
    return MaskShape(
        strategy.strategy, clear, strategy.salt_function, strategy.replacement, strategy.keep_last
    )


def _masked(node: exp.Expression, value: str, platform: str) -> MaskShape | str:
    if isinstance(node, exp.Null):
        return MaskShape("nullify")
    if isinstance(node, exp.Literal) and node.is_string:
        return MaskShape("redact", replacement=str(node.this))
    keep = _partial(node, value)
    if keep is not None:
        return MaskShape("partial", keep_last=keep)
    calls = hash_calls(node, value, facts(platform).dialect)
    if calls:
        call = calls[0]
        if len(calls) != 1 or call.node is not node:
            return "it hashes more than the masked value's digest (a hash inside an expression)"
        if call.weak:
            return f"it hashes with {call.function}, a weak hash the model has no strategy for"
        if call.literal_salt:
            return "it salts its hash with a literal written in the body"
        if call.algorithm != ("SHA2", "256"):
            return f"it hashes with {'-'.join(call.algorithm)}; the model's hash is SHA-256"
        kinds = [kind for kind, _ in call.parts]
        if kinds == ["value"]:
            return MaskShape("hash")
        if kinds == ["value", "call"] and not _called_with_arguments(node):
            return MaskShape("hash", salt_function=call.parts[1][1])
        return "its hash input is more than the masked value and one salt function"
    return "its expression is none of the model's masks (hash, redact, nullify, partial)"


def _called_with_arguments(node: exp.Expression) -> bool:
    return any(isinstance(n, exp.Anonymous) and n.expressions for n in node.find_all(exp.Anonymous))


def _partial(node: exp.Expression, value: str) -> int | None:
    """``CONCAT(REPEAT('*', GREATEST(LENGTH(v) - k, 0)), RIGHT(v, k))`` -> ``k``."""

    def is_value(n: exp.Expression | None) -> bool:
        col = _column(n) if n is not None else None
        return col is not None and not col[0] and col[1].lower() == value.lower()

    def number(n: exp.Expression | None) -> int | None:
        if isinstance(n, exp.Literal) and not n.is_string and str(n.this).isdigit():
            return int(n.this)
        return None

    if not isinstance(node, exp.Concat) or len(node.expressions) != 2:
        return None
    stars, tail = node.expressions
    if not (isinstance(stars, exp.Repeat) and isinstance(tail, exp.Right)):
        return None
    if not (isinstance(stars.this, exp.Literal) and stars.this.this == "*"):
        return None
    times = stars.args.get("times")
    if not isinstance(times, exp.Greatest) or [number(e) for e in times.expressions] != [0]:
        return None
    sub = times.this
    if not isinstance(sub, exp.Sub) or not isinstance(sub.this, exp.Length):
        return None
    keep = number(sub.expression)
    if keep is None or not is_value(sub.this.this) or not is_value(tail.this):
        return None
    return keep if number(tail.expression) == keep else None


#: what stands in a kept SQL text for a salt written as a literal
WITHHELD = "<salt withheld by accord import>"


def withhold(body: exp.Expression, value: str, platform: str) -> tuple[exp.Expression, bool]:
    """``body`` with every literal mixed into a hash of ``value`` as its only salt replaced by
    :data:`WITHHELD` (lint still reads a literal salt: ACC205), and whether one was."""
    out = body.copy()
    found = False
    for call in hash_calls(out, value, facts(platform).dialect):
        if not call.literal_salt:
            continue
        for node in list(call.node.find_all(exp.Literal)):
            if str(node.this) in call.literal_salt:
                node.replace(exp.Literal.string(WITHHELD))
                found = True
    return out, found
