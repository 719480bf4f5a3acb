"""Verification queries: after a stage, the catalog shows what the stage should have made.

Every query returns a first column ``ok`` that must be true on every row it returns
(``accord migrate apply`` runs them after each stage and records the stage as failed
otherwise). Policy references (Snowflake ``INFORMATION_SCHEMA.POLICY_REFERENCES``) or
column-mask / row-filter metadata (Unity Catalog ``information_schema``) show the object in
place; mapping tables hold the planned number of grants; a canary identifier's salted digest
differs from its unsalted digest. The canary digest is returned as ``canary_digest`` too (apply
prints its first 16 hex digits), for comparison across platforms: within one cutover group the
platforms' digests must differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from accord.compiler.plan.state import State
from accord.compiler.plan.steps import Statements, Step
from accord.targets import sql
from accord.targets.checks import MetadataCheck
from accord.targets.identity import ConstraintAttachment, place_key, references
from accord.targets.kinds import kind
from accord.targets.objects import (
    AbacPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

#: the placements whose check is their policy's reference (``place``)
Attachment = RowFilterAttachment | MaskAttachment | ConstraintAttachment

#: the identifier whose digest shows a salt at work (never a real identifier)
CANARY = "accord-canary"


@dataclass(frozen=True)
class Check:
    comment: str
    sql: str


def checks_for(
    steps: list[Step],
    after: State,
    st: Statements,
    salts: list[SaltFunction],
    attached: list[MaskAttachment],
) -> list[Check]:
    """The checks of a stage made of ``steps``, given the catalog ``after`` it. For a cutover
    stage, ``salts`` and ``attached`` are the salt functions and mask attachments of the
    group's domain columns: their canary and their policy references are checked in any case."""
    found: dict[tuple[str, ...], Check] = {}
    for step in steps:
        check = kind(step.obj).check
        made = _CHECKS[check](step.obj, after, st) if check is not None else None
        if made is not None:
            found[made[0]] = made[1]
    for place in attached:
        found.setdefault(("place", *place_key(place)), _placement(place, place, st))
    for salt in salts:
        found.setdefault(("canary", salt.name), _canary(salt, st))
    return list(found.values())


# ---- one builder per stage check of the kinds table (targets/kinds.py: ``Kind.check``): the
# check's key in the stage (one check per key) and the check, or None when nothing is checked


def _rows_check(obj: MappingTable, after: State, st: Statements) -> Keyed | None:
    if obj.name.upper() not in after.defs:
        return None
    table = after.defs[obj.name.upper()]
    assert isinstance(table, MappingTable)
    return ("rows", obj.name), Check(
        f"{obj.name} holds the {len(table.rows)} grants of the model",
        f"SELECT COUNT(*) = {len(table.rows)} AS ok FROM {st.q(obj.name)};",
    )


def _canary_check(obj: SaltFunction, after: State, st: Statements) -> Keyed | None:
    if obj.name.upper() not in after.defs:
        return None
    return ("canary", obj.name), _canary(obj, st)


def _policy_check(obj: RowFilterPolicy | MaskPolicy, after: State, st: Statements) -> Keyed | None:
    if obj.name.upper() not in after.defs:
        return None
    current = after.defs[obj.name.upper()]
    read = sorted(
        d.name for r in references(current) if isinstance(d := after.defs.get(r), SaltFunction)
    )
    return ("policy", obj.name), _policy(current.name, read, st)


def _place_check(obj: Attachment, after: State, st: Statements) -> Keyed | None:
    key = place_key(obj)
    now = after.places.get(key)
    assert now is None or isinstance(now, type(obj))
    return ("place", *key), _placement(obj, now, st)


def _abac_check(obj: AbacPolicy, after: State, st: Statements) -> Keyed | None:
    now = after.places.get(place_key(obj))
    assert now is None or isinstance(now, AbacPolicy)
    return ("abac", *place_key(obj)), _abac(obj, now)


def _governed_tag_check(obj: Tag, after: State, st: Statements) -> Keyed | None:
    current = after.defs.get(obj.name.upper())
    if not st.sql.governed_tags or not isinstance(current, Tag):
        return None
    return ("governed_tag", obj.name), _governed_tag(current, st)


def _tag_check(obj: TagAssignment, after: State, st: Statements) -> Keyed | None:
    if not obj.column:
        return None
    now = after.places.get(place_key(obj))
    assert now is None or isinstance(now, TagAssignment)
    return ("tag", *place_key(obj)), _tag(obj, now, st)


Keyed = tuple[tuple[str, ...], Check]
_CHECKS: dict[str, Callable[[Any, State, Statements], Keyed | None]] = {
    "rows": _rows_check,
    "canary": _canary_check,
    "policy": _policy_check,
    "place": _place_check,
    "abac": _abac_check,
    "governed_tag": _governed_tag_check,
    "tag": _tag_check,
}


def _canary(salt: SaltFunction, st: Statements) -> Check:
    p = st.platform

    def digest(value: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="SHA2", expressions=[value, exp.Literal.number(256)])

    salted = digest(st.target.concat(sql.literal(CANARY), sql.call(salt.name, p)))
    query = exp.select(
        exp.NEQ(this=salted, expression=digest(sql.literal(CANARY))).as_("ok"),
        salted.copy().as_("canary_digest"),
    )
    return Check(
        f"salt {salt.salt_ref} is in effect: the canary's salted digest differs from its "
        "unsalted digest (compare canary_digest with the other platforms': it must differ)",
        sql.render(query, p) + ";",
    )


def _policy(name: str, salts: list[str], st: Statements) -> Check:
    what, query = st.sql.policy_check(name, salts)
    return Check(what, query)


def _abac(obj: AbacPolicy, now: AbacPolicy | None) -> Check:
    """An ABAC policy in place with its function (or removed), read with the SDK's
    ``policies.list_policies``: ABAC policies are in no information_schema view."""
    where = f"{obj.securable_type.lower()} {obj.securable}"
    what = (
        f"ABAC policy {obj.name} on {where} applies {now.function} (read with "
        "policies.list_policies; it matches columns once their tags are in effect)"
        if now
        else f"ABAC policy {obj.name} is no longer on {where}"
    )
    check = MetadataCheck(
        "abac_policy",
        obj.securable,
        None,
        now.function if now else None,
        policy=obj.name,
        securable_type=obj.securable_type,
    )
    return Check(what, check.line())


def _governed_tag(tag: Tag, st: Statements) -> Check:
    """The account-level governed tag exists with the model's allowed values, read with the
    SDK's ``tag_policies.get_tag_policy``. ABAC conditions (``has_tag_value``) match governed
    tags only (unity-catalog/abac): a tag assigned without its governed tag matches no policy,
    so a stage whose tags are not governed must not pass."""
    values = ", ".join(tag.allowed_values) or "none"
    check = MetadataCheck("governed_tag", "", None, None, tag=tag.name, values=tag.allowed_values)
    what = f"governed tag {tag.name} exists and allows {values} (read with tag_policies)"
    return Check(what, check.line())


def _tag(obj: TagAssignment, now: TagAssignment | None, st: Statements) -> Check:
    """A column tag in place (or removed). Snowflake: the tag-based masking policy is active
    on the column (``targets/snowflake.py``). Databricks: the SDK's ``entity_tag_assignments``
    (targets/checks.py; ``information_schema.column_tags`` would do as well, but one
    typed reader for every Databricks check keeps them alike)."""
    column = obj.column or ""
    spelled = st.sql.tag_check(obj, now)
    if spelled is not None:
        return Check(*spelled)
    where = f"{obj.table}.{column}"
    what = (
        f"{where} is tagged {obj.tag} = {now.value!r} (read with entity_tag_assignments; the "
        "documentation says a tag can take a few minutes more to take effect: wait before the "
        "next stage)"
        if now
        else f"{where} no longer carries tag {obj.tag}"
    )
    check = MetadataCheck(
        "tag", obj.table, column, None, tag=obj.tag, value=now.value if now else None
    )
    return Check(what, check.line())


def _placement(obj: Attachment, now: Attachment | None, st: Statements) -> Check:
    column = getattr(obj, "column", None)
    where = f"{obj.table}.{column}" if column else obj.table
    occupies = place_key(obj)[0]
    if isinstance(obj, RowFilterAttachment | MaskAttachment):
        what = f"{'mask' if column else 'row filter'} of {where}"
        query = st.sql.placement_check(obj.table, column, now.policy if now else None)
    else:  # a projection, aggregation or join policy
        what = f"{occupies} policy of {where}"
        query = st.sql.placement_check(obj.table, column, now.policy if now else None, occupies)
    expected = f"{what} is {now.policy}" if now else f"{what} is removed"
    if query is not None:
        return Check(expected, query)
    # Databricks: table metadata through the SDK (tables.get), not information_schema, whose
    # column names differ between the reference page and live workspaces (targets/databricks/checks.py)
    check = MetadataCheck(
        "mask" if column else "row_filter", obj.table, column, now.policy if now else None
    )
    return Check(f"{expected} (read with tables.get)", check.line())
