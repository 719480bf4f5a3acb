"""What a catalog object is, apart from where it came from: identity, fingerprint, references.

Facts about :mod:`targets.objects`, shared by everything that compares two catalogs: the
planner (``compiler/plan/diff.py``, its simulator ``compiler/plan/state.py``), drift and
introspection (``compiler/live/``). Objects are matched by identity: definitions by name,
placements by what they occupy (a table's filter, a column's mask, a tag on a column, an ABAC
policy on a securable).

*Definitions* are the named objects (mapping tables, salt functions, policies, tags);
*placements* are what binds them to data (attachments, tag assignments, ABAC policies).

The questions that depend on an object's kind are answered by the kinds table
(:mod:`targets.kinds`), one row per kind of catalog object. Whether two bodies or conditions are the same is answered
here too (:func:`same_body`, :func:`same_condition`): equality is a fact about objects, read
by drift and by the live readers alike.
"""

from __future__ import annotations

import dataclasses
import hashlib

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from accord.compiler.core.memo import IdentityMemo
from accord.compiler.core.platforms import facts
from accord.targets.kinds import DEFINITIONS, KINDS
from accord.targets.objects import (
    AbacPolicy,
    AggregationAttachment,
    AggregationPolicy,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

#: Snowflake's projection, aggregation and join policies: bodies of context functions, no
#: signature
ConstraintPolicy = ProjectionPolicy | AggregationPolicy | JoinPolicy
#: their attachments
ConstraintAttachment = ProjectionAttachment | AggregationAttachment | JoinAttachment
Definition = MappingTable | SaltFunction | RowFilterPolicy | MaskPolicy | ConstraintPolicy | Tag
Placement = RowFilterAttachment | MaskAttachment | ConstraintAttachment | TagAssignment | AbacPolicy


def is_definition(obj: CatalogObject) -> bool:
    return isinstance(obj, DEFINITIONS)


def place_key(obj: Placement) -> tuple[str, ...]:
    """What a placement occupies: a table's filter, a column's mask, a tag on a table or
    column, or a named ABAC policy on a securable."""
    return KINDS[type(obj)].place(obj)  # type: ignore[misc]


def identity(obj: CatalogObject) -> tuple[str, ...]:
    """Definitions by name, placements by what they occupy: the key two catalogs are matched
    by."""
    if is_definition(obj):
        return ("def", obj.name.upper())  # type: ignore[union-attr]
    return place_key(obj)  # type: ignore[arg-type]


def fingerprint(obj: CatalogObject) -> str:
    """What an object is, apart from its name: equal fingerprints, equal behaviour (computed
    once per object: catalog objects are frozen)."""
    return _fingerprint(obj)


def _fingerprint_of(obj: CatalogObject) -> str:
    parts = []
    for f in dataclasses.fields(obj):
        if f.name == "name" or not f.compare:  # the name is its identity; provenance is none
            continue
        value = getattr(obj, f.name)
        if isinstance(value, exp.Expression):
            value = value.sql()
        parts.append((f.name, value))
    return hashlib.sha256(repr((type(obj).__name__, parts)).encode()).hexdigest()[:16]


_fingerprint: IdentityMemo[CatalogObject, str] = IdentityMemo(_fingerprint_of)


def references(obj: Definition) -> frozenset[str]:
    """Names (upper-cased) of the definitions ``obj`` needs to exist."""
    return KINDS[type(obj)].references(obj)  # type: ignore[misc]


def describe_object(obj: CatalogObject, platform: str) -> str:
    """The object in words, as plan headers, plan.json and command output name it."""
    return KINDS[type(obj)].describe(obj, platform)  # type: ignore[misc]


def parse_body(text: str, platform: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(text, read=facts(platform).dialect)
    except (ParseError, TokenError, RecursionError):  # sqlglot recurses once per level
        return None


def unparsed(text: str) -> str:
    """Why a live body :func:`parse_body` could not read is not read: too deep, or not SQL."""
    depth = deepest = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    if deepest > _DEEP_BODY:
        return (
            f"its body nests {deepest} parentheses deep, deeper than accord's SQL parser "
            "follows; it is not compared"
        )
    return "its body does not parse"


#: parentheses deeper than this make a body that does not parse one too deep to parse
_DEEP_BODY = 200


def same_body(a: exp.Expression, b: exp.Expression, platform: str) -> bool:
    """Equal as trees: both rendered and parsed back in the platform's dialect."""

    def norm(e: exp.Expression) -> str:
        again = parse_body(e.sql(dialect=platform), platform)
        return (again or e).sql(dialect=platform, normalize=True)

    return norm(a) == norm(b)


def same_condition(a: str, b: str, platform: str) -> bool:
    left, right = parse_body(a, platform), parse_body(b, platform)
    if left is None or right is None:
        return a == b
    return same_body(left, right, platform)
