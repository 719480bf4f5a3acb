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
  policy never replaces another without ``FORCE`` (both statements fail there);
* no table or column carries a table-level filter or mask and an ABAC one with a different
  function for the same user for longer than the statements that hand it over: "Databricks
  blocks access and returns an error" (docs.databricks.com/.../abac/abac-vs-rls-cm,
  abac/policy-evaluation), an outage for everyone (see :meth:`State.blocked`);
* no principal that may see a table's rows or a column's clear values before and after the
  plan loses that access in between (:meth:`State.exempt`);
* on Snowflake, a tag is never dropped while it carries masking policies or a column carries
  it (docs.snowflake.com/en/user-guide/tag-based-masking-policies: ``ALTER TAG ... UNSET
  MASKING POLICY`` first).

On Databricks, a governed-tag assignment is not in effect within the stage that makes it:
"After assigning or modifying a tag, it can take a few minutes for the change to take effect"
(docs.databricks.com/aws/en/data-governance/unity-catalog/abac/requirements). Whether a new
``CREATE POLICY`` lags as well is UNCONFIRMED, so it is treated the same way. Until
:meth:`State.settle` (the end of a stage, after its checks), such a change counts for
*protection* only once it cannot be missing (a new tag or policy does not protect yet; a removed
one might already be gone), and for *outages* and *availability* as soon as it might be there.

*Definitions* are the named objects (mapping tables, salt functions, policies, tags);
*placements* are what binds them to data (attachments, tag assignments, ABAC policies).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from accord.compiler.core.memo import IdentityMemo
from accord.compiler.core.platforms import facts
from accord.compiler.plan.index import PlaceIndex, Places, index_of
from accord.targets import abac_conditions
from accord.targets.identity import (
    ConstraintAttachment,
    ConstraintPolicy,
    Definition,
    Placement,
    describe_object,
    fingerprint,
    is_definition,
    place_key,
    references,
)
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    Tag,
    TagAssignment,
)

Column = tuple[str, str]
#: placements that name the policy they apply (``policy``) beside row filters
Attached = MaskAttachment | ConstraintAttachment
#: everyone, in an ABAC policy's TO list
ALL_USERS = "account users"


class PlanError(Exception):
    """No ordering of the statements keeps the invariants: the plan is refused (exit 1)."""


# --------------------------------------------------------------------------------------------
# ABAC conditions: has_tag('k') / has_tag_value('k', 'v') with AND, OR, NOT
# (evaluated by targets.abac_conditions, which verify uses too)


def condition_holds(text: str | None, tags: dict[str, str]) -> bool:
    """Whether an ABAC condition holds for an object carrying ``tags`` (keys as written: tag
    keys are case-sensitive, see :mod:`targets.abac_conditions`)."""
    if text is None:
        return True
    try:
        node = abac_conditions.parse(text)
    except (ParseError, TokenError) as err:
        raise PlanError(f"cannot read ABAC condition {text!r}: {err}") from None
    try:
        return abac_conditions.holds(node, tags)
    except abac_conditions.ConditionError:
        raise PlanError(
            f"cannot evaluate ABAC condition {text!r}: only has_tag, has_tag_value, AND, OR, NOT"
        ) from None


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
    #: Databricks governed-tag assignments and ABAC policies changed in the current stage, with
    #: what was there before (None: nothing); not settled until :meth:`settle`
    prior: dict[tuple[str, ...], Placement | None] = field(default_factory=dict)

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
        return State(
            self.platform, dict(self.defs), Places(self.places), self.managed, dict(self.prior)
        )

    def settle(self) -> None:
        """The stage is over and its checks passed: every tag and policy change is in effect."""
        self.prior.clear()

    def _lags(self, key: tuple[str, ...]) -> bool:
        return facts(self.platform).tags_take_effect_later and key[0] in ("tag", "abac")

    def _view(self, possible: bool) -> list[Placement]:
        """The placements in effect. ``possible=False``: those certainly in effect (what
        protects); ``possible=True``: those that may be in effect (what may block a query or
        take access away)."""
        out = []
        for key, place in self.places.items():
            if key not in self.prior:
                out.append(place)
            elif possible or self.prior[key] is not None:
                # new: may be in effect; replaced in place: the old or the new one is
                out.append(place)
        if possible:
            out += [p for k, p in self.prior.items() if p is not None and k not in self.places]
        return out

    def _index_of_view(self, possible: bool) -> PlaceIndex:
        """The tag and ABAC index of the placements in effect (see :meth:`_view`): the
        cached index of every placement while nothing is pending."""
        if not self.prior:
            return self._indexed()
        return index_of(Places({place_key(p): p for p in self._view(possible)}), None)

    def plain(self) -> bool:
        """Whether no tag and no ABAC policy is placed, and no change of one is pending: each
        table's and column's protection is then its own attachment's alone."""
        index = self._indexed()
        return not self.prior and not index.tags and not index.abac

    def same_as(self, other: State) -> bool:
        return {n: (type(o), fingerprint(o)) for n, o in self.defs.items()} == {
            n: (type(o), fingerprint(o)) for n, o in other.defs.items()
        } and self.places == other.places

    # ---- what protects a table or a column ----------------------------------------------------

    def tags_of(self, table: str, column: str | None, possible: bool = False) -> dict[str, str]:
        """The tags (lower-cased keys) on ``table`` or ``table.column``, as the index has them."""
        return dict(_tags_in(self._index_of_view(possible), table, column))

    def tagged_columns(self, table: str, possible: bool = False) -> set[str]:
        """The columns (upper-cased) of ``table`` that carry a tag, as the index has them."""
        return set(self._index_of_view(possible).tagged.get(table.upper(), ()))

    def abac_placed(self, kind: str) -> list[Placement]:
        """The ABAC policies of ``kind`` placed, as the index has them."""
        return list(self._indexed().abac.get(kind, []))

    # The questions below are asked for every protected table and column after every simulated
    # statement: each looks the index of the placements in effect up once per call (not once
    # per table and tag), and those asked of many tables at once answer at once when no ABAC
    # policy is placed at all (bench/README.md).

    def filters_on(self, table: str, possible: bool = False) -> list[str]:
        """Descriptions of every row filter on ``table``."""
        return self._filters_in(self._index_of_view(possible), table)

    def _filters_in(self, index: PlaceIndex, table: str) -> list[str]:
        found = []
        if (a := self.places.get(("filter", table.upper()))) is not None:
            found.append(f"row filter {a.policy}")  # type: ignore[union-attr]
        found += [f"ABAC policy {p.name}" for p, _ in _abac_in(index, table, "ROW FILTER")]
        return found

    def masks_on(self, table: str, column: str, possible: bool = False) -> list[str]:
        """Names of the policies or functions that mask ``table.column``."""
        return self._masks_in(self._index_of_view(possible), table, column)

    def _masks_in(self, index: PlaceIndex, table: str, column: str) -> list[str]:
        found = []
        if (a := self.places.get(("mask", table.upper(), column.upper()))) is not None:
            found.append(a.policy)  # type: ignore[union-attr]
        for tag_on in (column, None) if index.tags else ():
            for name in _tags_in(index, table, tag_on):
                tag = next(
                    (
                        d
                        for d in self.defs.values()
                        if isinstance(d, Tag) and d.name.lower() == name.lower()
                    ),
                    None,
                )
                if tag is not None:
                    found += tag.masking_policies
        found += [
            p.function
            for p, cols in _abac_in(index, table, "COLUMN MASK")
            if column.upper() in cols
        ]
        return found

    # ---- outages and availability ---------------------------------------------------------------

    def blocked(
        self, tables: Iterable[str], columns: Iterable[Column], possible: bool = False
    ) -> dict[str, str]:
        """Tables on which every query of the users an ABAC policy applies to is refused: a
        table-level row filter (column mask) and an ABAC row filter (column mask) with a
        different function. "If they apply different functions, Databricks blocks access and
        returns an error" (docs.databricks.com/.../unity-catalog/abac/abac-vs-rls-cm). Returns
        table -> why."""
        out: dict[str, str] = {}
        index = self._index_of_view(possible)
        if not index.abac:  # no ABAC policy: nothing can conflict
            return out
        for t in tables:
            a = self.places.get(("filter", t.upper()))
            if isinstance(a, RowFilterAttachment):
                for p, _ in _abac_in(index, t, "ROW FILTER"):
                    if p.function.upper() != a.policy.upper():
                        out.setdefault(
                            t.upper(),
                            f"table {t} has row filter {a.policy} and ABAC policy {p.name} "
                            f"({p.function})",
                        )
        for t, c in columns:
            m = self.places.get(("mask", t.upper(), c.upper()))
            if isinstance(m, MaskAttachment):
                for p, cols in _abac_in(index, t, "COLUMN MASK"):
                    if c.upper() in cols and p.function.upper() != m.policy.upper():
                        out.setdefault(
                            t.upper(),
                            f"column {t}.{c} has mask {m.policy} and ABAC policy {p.name} "
                            f"({p.function})",
                        )
        return out

    def exempt(self, table: str, column: str | None) -> frozenset[str] | None:
        """The principals who may see every row of ``table`` (``column`` None) or the clear
        values of ``table.column``, whatever may be in effect: the principals every applying
        filter or mask exempts (``EXCEPT`` of an ABAC policy, or an identity check on a literal
        in the function body). None: nothing applies, so everyone."""
        return self._exempt_in(self._index_of_view(True), table, column)

    def exempt_all(
        self, keys: Iterable[tuple[str, str | None]]
    ) -> dict[tuple[str, str | None], frozenset[str] | None]:
        """:meth:`exempt` of every (table, column or None) of ``keys``."""
        index = self._index_of_view(True)
        return {(t, c): self._exempt_in(index, t, c) for t, c in keys}

    def _exempt_in(
        self, index: PlaceIndex, table: str, column: str | None
    ) -> frozenset[str] | None:
        found: frozenset[str] | None = None
        for names in self._exemptions(index, table, column):
            found = names if found is None else found & names
        return found

    def _exemptions(
        self, index: PlaceIndex, table: str, column: str | None
    ) -> list[frozenset[str]]:
        t = table.upper()
        out = []
        if column is None:
            a = self.places.get(("filter", t))
            if isinstance(a, RowFilterAttachment):
                out.append(self._body_exempt(a.policy))
            kind = "ROW FILTER"
        else:
            m = self.places.get(("mask", t, column.upper()))
            if isinstance(m, MaskAttachment):
                out.append(self._body_exempt(m.policy))
            if index.tags:  # no tag placed anywhere: no tag-based mask either
                for tag_on in (column, None):
                    for name in _tags_in(index, table, tag_on):
                        for d in self.defs.values():
                            if isinstance(d, Tag) and d.name.lower() == name.lower():
                                out += [self._body_exempt(p) for p in d.masking_policies]
            kind = "COLUMN MASK"
        if index.abac:
            for p, cols in _abac_in(index, table, kind):
                if column is None or column.upper() in cols:
                    out.append(self._body_exempt(p.function) | {e.lower() for e in p.except_})
        return out

    def _body_exempt(self, name: str) -> frozenset[str]:
        d = self.defs.get(name.upper())
        if not isinstance(d, RowFilterPolicy | MaskPolicy):
            return frozenset()
        return identity_literals(d.body)

    # ---- invariants ---------------------------------------------------------------------------

    def unconstrained(self, keys: Iterable[tuple[str, ...]]) -> list[str]:
        """Of the places of projection, aggregation and join policies ``keys`` (place keys),
        those left without one."""
        return [f"{' '.join(k[1:])} has no {k[0]} policy" for k in keys if k not in self.places]

    def unprotected(self, tables: Iterable[str], columns: Iterable[Column]) -> list[str]:
        """The protected tables and columns that have lost their filter or mask."""
        index = self._index_of_view(False)
        gaps = [f"table {t} has no row filter" for t in tables if not self._filters_in(index, t)]
        gaps += [
            f"column {t}.{c} has no mask" for t, c in columns if not self._masks_in(index, t, c)
        ]
        return gaps

    def doubled(self, tables: Iterable[str], columns: Iterable[Column]) -> list[str]:
        """Tables or columns on which two ABAC policies apply to the same user."""
        out: list[str] = []
        index = self._index_of_view(True)
        if not index.abac:  # no ABAC policy: none can apply twice
            return out
        for t in tables:
            hits = [p for p, _ in _abac_in(index, t, "ROW FILTER")]
            out += _overlapping(hits, f"table {t}")
        for t, c in columns:
            hits = [p for p, cols in _abac_in(index, t, "COLUMN MASK") if c.upper() in cols]
            out += _overlapping(hits, f"column {t}.{c}")
        return out

    def users_of(self, name: str) -> list[str]:
        """What still needs definition ``name``: placements naming it, bodies reading it."""
        n = name.upper()
        users = []
        for p in self.places.values():
            if isinstance(p, RowFilterAttachment | Attached) and p.policy.upper() == n:
                column = getattr(p, "column", None)
                users.append(f"{p.table}" + (f".{column}" if column else ""))
            elif isinstance(p, AbacPolicy) and p.function.upper() == n:
                users.append(f"ABAC policy {p.name}")
            elif isinstance(p, TagAssignment) and p.tag.upper() == n:
                users.append(f"{p.table}" + (f".{p.column}" if p.column else "") + " (tagged)")
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
            and facts(self.platform).replace_refused_while_attached
            and isinstance(obj, RowFilterPolicy | MaskPolicy | ConstraintPolicy)
            and self.users_of(name)
        ):
            problems.append(
                f"{obj.name} created again while attached (Snowflake refuses CREATE OR REPLACE; change it in place)"
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
        if facts(self.platform).tag_masking and isinstance(obj, Tag) and obj.masking_policies:
            # docs.snowflake.com/en/user-guide/tag-based-masking-policies: a tag cannot be
            # dropped while a masking policy is assigned to it
            problems.append(
                f"DROP TAG of {obj.name} while it carries masking policies "
                f"{', '.join(obj.masking_policies)} (Snowflake refuses: ALTER TAG ... UNSET "
                "MASKING POLICY first)"
            )
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
            elif isinstance(obj, ConstraintAttachment):
                problems.append(f"{describe_object(obj, self.platform)} set without FORCE")
        needed = (
            obj.policy
            if isinstance(obj, RowFilterAttachment | Attached)
            else obj.function
            if isinstance(obj, AbacPolicy)
            else None
        )
        if needed is not None and needed.upper() not in self.defs:
            problems.append(f"{needed} is attached before it exists")
        if self._lags(key):
            self.prior.setdefault(key, current)
        self.places[key] = obj
        return problems

    def detach(self, obj: Placement) -> list[str]:
        key = place_key(obj)
        if self._lags(key) and key in self.places:
            self.prior.setdefault(key, self.places[key])
        if self.places.pop(key, None) is None:
            return [f"{' '.join(key)} is removed but is not there"]
        return []


#: what a table or column carries when it carries no tag (read only)
_NO_TAGS: dict[str, str] = {}


def _tags_in(index: PlaceIndex, table: str, column: str | None) -> dict[str, str]:
    """The tags (keys as written) on ``table`` or ``table.column`` in ``index``: the index's own
    dict, which callers only read."""
    return index.tags.get((table.upper(), (column or "").upper()), _NO_TAGS)


def _abac_in(index: PlaceIndex, table: str, kind: str) -> list[tuple[AbacPolicy, set[str]]]:
    """ABAC policies of ``kind`` in ``index`` that apply to ``table``, each with the columns it
    masks."""
    policies = index.abac.get(kind)
    if not policies:
        return []
    t = table.upper()
    out = []
    for p in policies:
        assert isinstance(p, AbacPolicy)
        if not covers(p, t):
            continue
        if not condition_holds(p.when, _tags_in(index, t, None)):
            continue
        tagged = index.tagged.get(t, ())
        matched: dict[str, set[str]] = {
            alias: {c for c in tagged if condition_holds(cond, _tags_in(index, t, c))}
            for cond, alias in p.match_columns
        }
        if all(matched.values()):
            out.append((p, matched.get(p.on_column or "", set())))
    return out


def covers(policy: AbacPolicy, table: str) -> bool:
    """Whether ``table`` (upper-cased) is inside the policy's securable."""
    return abac_conditions.covers(policy, table)


#: the context functions that ask whether the caller holds a principal
IDENTITY_FUNCTIONS = frozenset({"is_role_in_session", "is_account_group_member"})


def identity_literals(body: exp.Expression) -> frozenset[str]:
    """Principals (lower-cased) a body names in an identity check on a literal: who it lets
    through whatever the row or value (``unfiltered_for`` / ``unmasked_for``). Walked once per
    body: the simulator asks it of every protected column after every statement."""
    return _identity_literals(body)


def _identity_literals_of(body: exp.Expression) -> frozenset[str]:
    out = set()
    for call in body.find_all(exp.Anonymous):
        if str(call.this).lower() in IDENTITY_FUNCTIONS:
            for a in call.expressions:
                if isinstance(a, exp.Literal) and a.is_string:
                    out.add(a.this.lower())
    return frozenset(out)


_identity_literals: IdentityMemo[exp.Expression, frozenset[str]] = IdentityMemo(
    _identity_literals_of
)


def _overlapping(policies: list[AbacPolicy], where: str) -> list[str]:
    out = []
    for i, a in enumerate(policies):
        for b in policies[i + 1 :]:
            if a.function != b.function and Audience.of(a).overlaps(Audience.of(b)):
                out.append(
                    f"{where} carries ABAC policies {a.name} and {b.name} for the same users"
                )
    return out
