"""The state of one platform's catalog as far as accord manages it, and a simulator over it.

The planner proves its own plans: every statement of a plan carries its effect (define, drop,
attach, detach an object) and :class:`State` replays those effects one statement at a time,
checking after each that

* nothing is attached to a policy that does not exist (create before attach);
* nothing attached, and nothing another object still reads, is dropped (detach before drop);
* every table that is filtered in both the base and the head model has a filter, and every
  column masked in both has a mask, at every moment (no unprotected window);
* no table or column carries two ABAC filters or masks for the same user (Unity Catalog
  refuses the query: ``UC_ABAC_MULTIPLE_ROW_FILTERS``, ``MULTIPLE_MASKS``);
* on Snowflake, a second row access policy is never added beside the first and a masking
  policy never replaces another without ``FORCE`` (both statements fail there).

*Definitions* are the named objects (mapping tables, salt functions, policies, tags);
*placements* are what binds them to data (attachments, tag assignments, ABAC policies).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from compiler.plan.index import PlaceIndex, Places, index_of
from targets.objects import (
    AbacPolicy,
    Catalog,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

Definition = MappingTable | SaltFunction | RowFilterPolicy | MaskPolicy | Tag
Placement = RowFilterAttachment | MaskAttachment | TagAssignment | AbacPolicy
Column = tuple[str, str]
#: everyone, in an ABAC policy's TO list
ALL_USERS = "account users"


class PlanError(Exception):
    """No ordering of the statements keeps the invariants: the plan is refused (exit 1)."""


def is_definition(obj: CatalogObject) -> bool:
    return isinstance(obj, MappingTable | SaltFunction | RowFilterPolicy | MaskPolicy | Tag)


def place_key(obj: Placement) -> tuple[str, ...]:
    """What a placement occupies: a table's filter, a column's mask, a tag on a table or
    column, or a named ABAC policy on a securable."""
    if isinstance(obj, RowFilterAttachment):
        return ("filter", obj.table.upper())
    if isinstance(obj, MaskAttachment):
        return ("mask", obj.table.upper(), obj.column.upper())
    if isinstance(obj, TagAssignment):
        return ("tag", obj.table.upper(), (obj.column or "").upper(), obj.tag.upper())
    return ("abac", obj.securable_type, obj.securable.upper(), obj.name.upper())


def fingerprint(obj: CatalogObject) -> str:
    """What an object is, apart from its name: equal fingerprints, equal behaviour."""
    parts = []
    for f in dataclasses.fields(obj):
        if f.name == "name":
            continue
        value = getattr(obj, f.name)
        if isinstance(value, exp.Expression):
            value = value.sql()
        parts.append((f.name, value))
    return hashlib.sha256(repr((type(obj).__name__, parts)).encode()).hexdigest()[:16]


def body_references(body: exp.Expression) -> set[str]:
    """Qualified names a policy body reads: tables (mapping tables) and called functions (salt
    functions), upper-cased."""
    found = {".".join(p.name for p in t.parts).upper() for t in body.find_all(exp.Table) if t.db}
    for dot in body.find_all(exp.Dot):
        if isinstance(dot.expression, exp.Anonymous):
            found.add(".".join(_dotted(dot)).upper())
    return found


def _dotted(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Dot):
        return _dotted(node.this) + _dotted(node.expression)
    if isinstance(node, exp.Column):
        return [p.name for p in node.parts]
    return [node.name]


def references(obj: Definition) -> set[str]:
    """Names (upper-cased) of the definitions ``obj`` needs to exist."""
    if isinstance(obj, RowFilterPolicy | MaskPolicy):
        return body_references(obj.body)
    if isinstance(obj, Tag):
        return {p.upper() for p in obj.masking_policies}
    return set()


# --------------------------------------------------------------------------------------------
# ABAC conditions: has_tag('k') / has_tag_value('k', 'v') with AND, OR, NOT


@lru_cache(maxsize=256)
def _condition(text: str) -> exp.Expression:
    try:
        return sqlglot.parse_one(text, read="databricks")
    except (ParseError, TokenError) as err:
        raise PlanError(f"cannot read ABAC condition {text!r}: {err}") from None


def condition_holds(text: str | None, tags: dict[str, str]) -> bool:
    """Whether an ABAC condition holds for an object carrying ``tags`` (lower-cased keys)."""
    if text is None:
        return True
    return _holds(_condition(text), tags, text)


def _holds(node: exp.Expression, tags: dict[str, str], text: str) -> bool:
    if isinstance(node, exp.Paren):
        return _holds(node.this, tags, text)
    if isinstance(node, exp.And):
        return _holds(node.this, tags, text) and _holds(node.expression, tags, text)
    if isinstance(node, exp.Or):
        return _holds(node.this, tags, text) or _holds(node.expression, tags, text)
    if isinstance(node, exp.Not):
        return not _holds(node.this, tags, text)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Anonymous) and all(
        isinstance(a, exp.Literal) and a.is_string for a in node.expressions
    ):
        name, args = node.name.lower(), [a.this for a in node.expressions]
        if name == "has_tag" and len(args) == 1:
            return args[0].lower() in tags
        if name == "has_tag_value" and len(args) == 2:
            return tags.get(args[0].lower()) == args[1]
    raise PlanError(
        f"cannot evaluate ABAC condition {text!r}: only has_tag, has_tag_value, AND, OR, NOT"
    )


@dataclass(frozen=True)
class Audience:
    """Who an ABAC policy applies to: TO minus EXCEPT."""

    everyone: bool
    members: frozenset[str]
    excluded: frozenset[str]

    @classmethod
    def of(cls, policy: AbacPolicy) -> Audience:
        to = {p.lower() for p in policy.to}
        return cls(
            ALL_USERS in to,
            frozenset(to - {ALL_USERS}),
            frozenset(p.lower() for p in policy.except_),
        )

    def overlaps(self, other: Audience) -> bool:
        if self.everyone and other.everyone:
            return True
        if self.everyone:
            return bool(other.members - self.excluded)
        if other.everyone:
            return bool(self.members - other.excluded)
        return bool((self.members & other.members) - self.excluded - other.excluded)


# --------------------------------------------------------------------------------------------
# the state


@dataclass
class State:
    platform: str
    defs: dict[str, Definition] = field(default_factory=dict)
    places: dict[tuple[str, ...], Placement] = field(default_factory=Places)
    #: names (upper-cased) of definitions accord manages: a body reference to one of them must
    #: resolve; other references (hand-written SQL reading other tables) are not checked
    managed: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        # tags and ABAC policies by table, rebuilt when the placements change (bench/README.md)
        if not isinstance(self.places, Places):
            self.places = Places(self.places)
        self._index: PlaceIndex | None = None

    def _indexed(self) -> PlaceIndex:
        self._index = index_of(self.places, self._index)  # type: ignore[arg-type]
        return self._index

    @classmethod
    def of(cls, catalog: Catalog | None, platform: str, managed: Iterable[str] = ()) -> State:
        state = cls(platform, managed=frozenset(n.upper() for n in managed))
        for obj in catalog.objects if catalog is not None else ():
            if is_definition(obj):
                state.defs[obj.name.upper()] = obj  # type: ignore[union-attr]
            else:
                state.places[place_key(obj)] = obj  # type: ignore[arg-type]
        return state

    def copy(self) -> State:
        return State(self.platform, dict(self.defs), Places(self.places), self.managed)

    def same_as(self, other: State) -> bool:
        return {n: (type(o), fingerprint(o)) for n, o in self.defs.items()} == {
            n: (type(o), fingerprint(o)) for n, o in other.defs.items()
        } and self.places == other.places

    # ---- what protects a table or a column ----------------------------------------------------

    def _tags(self, table: str, column: str | None) -> dict[str, str]:
        return dict(self._indexed().tags.get((table.upper(), (column or "").upper()), {}))

    def _tagged_columns(self, table: str) -> set[str]:
        return set(self._indexed().tagged.get(table.upper(), ()))

    def _abac_on(self, table: str, kind: str) -> Iterable[tuple[AbacPolicy, set[str]]]:
        """ABAC policies of ``kind`` that apply to ``table``, each with the columns it masks."""
        t = table.upper()
        for p in self._indexed().abac.get(kind, ()):
            assert isinstance(p, AbacPolicy)
            scope = p.securable.upper()
            if not (t == scope if p.securable_type == "TABLE" else t.startswith(scope + ".")):
                continue
            if not condition_holds(p.when, self._tags(table, None)):
                continue
            matched: dict[str, set[str]] = {
                alias: {
                    c
                    for c in self._tagged_columns(table)
                    if condition_holds(cond, self._tags(table, c))
                }
                for cond, alias in p.match_columns
            }
            if all(matched.values()):
                yield p, matched.get(p.on_column or "", set())

    def filters_on(self, table: str) -> list[str]:
        """Descriptions of every row filter on ``table``."""
        found = []
        if (a := self.places.get(("filter", table.upper()))) is not None:
            found.append(f"row filter {a.policy}")  # type: ignore[union-attr]
        found += [f"ABAC policy {p.name}" for p, _ in self._abac_on(table, "ROW FILTER")]
        return found

    def masks_on(self, table: str, column: str) -> list[str]:
        """Names of the policies or functions that mask ``table.column``."""
        found = []
        if (a := self.places.get(("mask", table.upper(), column.upper()))) is not None:
            found.append(a.policy)  # type: ignore[union-attr]
        for tag_on in (column, None):
            for name in self._tags(table, tag_on):
                tag = next(
                    (
                        d
                        for d in self.defs.values()
                        if isinstance(d, Tag) and d.name.lower() == name
                    ),
                    None,
                )
                if tag is not None:
                    found += tag.masking_policies
        found += [
            p.function for p, cols in self._abac_on(table, "COLUMN MASK") if column.upper() in cols
        ]
        return found

    # ---- invariants ---------------------------------------------------------------------------

    def unprotected(self, tables: Iterable[str], columns: Iterable[Column]) -> list[str]:
        """The protected tables and columns that have lost their filter or mask."""
        gaps = [f"table {t} has no row filter" for t in tables if not self.filters_on(t)]
        gaps += [f"column {t}.{c} has no mask" for t, c in columns if not self.masks_on(t, c)]
        return gaps

    def doubled(self, tables: Iterable[str], columns: Iterable[Column]) -> list[str]:
        """Tables or columns on which two ABAC policies apply to the same user."""
        out = []
        for t in tables:
            out += _overlapping([p for p, _ in self._abac_on(t, "ROW FILTER")], f"table {t}")
        for t, c in columns:
            hits = [p for p, cols in self._abac_on(t, "COLUMN MASK") if c.upper() in cols]
            out += _overlapping(hits, f"column {t}.{c}")
        return out

    def users_of(self, name: str) -> list[str]:
        """What still needs definition ``name``: placements naming it, bodies reading it."""
        n = name.upper()
        users = []
        for p in self.places.values():
            if isinstance(p, RowFilterAttachment | MaskAttachment) and p.policy.upper() == n:
                users.append(
                    f"{p.table}" + (f".{p.column}" if isinstance(p, MaskAttachment) else "")
                )
            elif isinstance(p, AbacPolicy) and p.function.upper() == n:
                users.append(f"ABAC policy {p.name}")
        for d in self.defs.values():
            if d.name.upper() != n and n in references(d):
                users.append(d.name)
        return users

    # ---- effects ------------------------------------------------------------------------------

    def define(self, obj: Definition, replaces: Definition | None) -> list[str]:
        name = obj.name.upper()
        problems = []
        current = self.defs.get(name)
        if (
            replaces is None
            and current is not None
            and self.platform == "snowflake"
            and isinstance(obj, RowFilterPolicy | MaskPolicy)
            and self.users_of(name)
        ):
            problems.append(
                f"CREATE OR REPLACE of {obj.name}, which is attached (Snowflake refuses)"
            )
        if replaces is not None and current is None:
            problems.append(f"{obj.name} is changed in place but does not exist")
        missing = sorted(r for r in references(obj) if r in self.managed and r not in self.defs)
        problems += [f"{obj.name} reads {m}, which does not exist" for m in missing]
        self.defs[name] = obj
        return problems

    def drop(self, obj: Definition) -> list[str]:
        name = obj.name.upper()
        problems = []
        if name not in self.defs:
            problems.append(f"DROP of {obj.name}, which does not exist")
        users = self.users_of(name)
        if users:
            problems.append(f"DROP of {obj.name} while used by {', '.join(sorted(users))}")
        self.defs.pop(name, None)
        return problems

    def attach(self, obj: Placement, replaces: Placement | None) -> list[str]:
        key = place_key(obj)
        problems = []
        current = self.places.get(key)
        if replaces is None and current is not None:
            if isinstance(obj, RowFilterAttachment):
                problems.append(f"a second row filter added to {obj.table}")
            elif isinstance(obj, MaskAttachment):
                problems.append(f"mask set on {obj.table}.{obj.column} without FORCE")
        needed = (
            obj.policy
            if isinstance(obj, RowFilterAttachment | MaskAttachment)
            else obj.function
            if isinstance(obj, AbacPolicy)
            else None
        )
        if needed is not None and needed.upper() not in self.defs:
            problems.append(f"{needed} is attached before it exists")
        self.places[key] = obj
        return problems

    def detach(self, obj: Placement) -> list[str]:
        key = place_key(obj)
        if self.places.pop(key, None) is None:
            return [f"{' '.join(key)} is removed but is not there"]
        return []


def _overlapping(policies: list[AbacPolicy], where: str) -> list[str]:
    out = []
    for i, a in enumerate(policies):
        for b in policies[i + 1 :]:
            if a.function != b.function and Audience.of(a).overlaps(Audience.of(b)):
                out.append(
                    f"{where} carries ABAC policies {a.name} and {b.name} for the same users"
                )
    return out
