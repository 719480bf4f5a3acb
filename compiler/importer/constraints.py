"""Snowflake's projection, aggregation and join policies, raised into the model's fields.

A policy of one of these kinds has no signature (``AS ()``) and a body that returns a
constraint; the model's fields (``columns.C.projection``, ``aggregation``, ``join``) compile to
one body shape each (:mod:`targets.constraints`), which is what is recognised here:

* the constraint alone: ``PROJECTION_CONSTRAINT(ALLOW => FALSE[, ENFORCEMENT => 'FAIL' |
  'NULLIFY'])`` (no principal may select the column), ``AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE
  => n)``, ``JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)``;
* ``CASE WHEN <member>('<identity>') [OR ...] THEN <unrestricted> ELSE <the constraint> END``,
  the unrestricted result being ``PROJECTION_CONSTRAINT(ALLOW => TRUE)``,
  ``NO_AGGREGATION_CONSTRAINT()`` or ``JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)``: the
  identities it names are ``allowed_for`` / ``unrestricted_for``.

Sources (docs.snowflake.com/en/sql-reference/sql/): create-projection-policy (``ALLOW``,
``ENFORCEMENT`` optional, "Default: FAIL"), create-aggregation-policy (``MIN_GROUP_SIZE``,
``NO_AGGREGATION_CONSTRAINT()``), create-join-policy (``JOIN_REQUIRED``). Named arguments are
matched case-insensitively, as Snowflake resolves unquoted names.

Anything else (a ``CURRENT_ROLE()`` check, a body that restricts nobody, an aggregation
attachment with an ``ENTITY KEY``) is not what the model says, and is kept unmanaged with why,
its SQL linted (ACC101 for ``CURRENT_ROLE()``). The placements become the dataset's fields;
a column that only a projection policy governs has no type the policy says (a projection
policy has no signature): it is written as the platform's string type, and said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from accord.compiler.core.platforms import facts
from accord.compiler.importer.found import Item, ItemKey
from accord.compiler.importer.places import not_a_place
from accord.compiler.importer.principals import not_an_identity
from accord.compiler.importer.shapes import members
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    JoinAttachment,
    JoinPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
)

#: a projection, aggregation or join policy
ConstraintPolicy = ProjectionPolicy | AggregationPolicy | JoinPolicy
#: its attachment
ConstraintAttachment = ProjectionAttachment | AggregationAttachment | JoinAttachment

#: policy class -> (the model's field, the constraint function, its unrestricted result)
_WHAT: dict[type, tuple[str, str, str]] = {
    ProjectionPolicy: ("projection", "PROJECTION_CONSTRAINT(ALLOW => FALSE)",
                       "PROJECTION_CONSTRAINT(ALLOW => TRUE)"),
    AggregationPolicy: ("aggregation", "AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => n)",
                        "NO_AGGREGATION_CONSTRAINT()"),
    JoinPolicy: ("join", "JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)",
                 "JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)"),
}  # fmt: skip


class Raise(Protocol):
    """What this module uses of the raise (:class:`compiler.importer.lift._Lift`), and of one
    platform's read there (``p``: its ``found``, ``constraints`` and ``constraint_places``)."""

    datasets: dict[str, dict[str, Any]]
    claims: Any
    notes: list[str]
    kept_keys: set[ItemKey]

    def usable(self, item: Item) -> bool: ...

    def keep(self, item: Item, why: str) -> None: ...

    def outside(self, p: Any, item: Item) -> bool: ...

    def hint(
        self, platform: str, identities: tuple[str, ...], names: list[str], ordered: bool = True
    ) -> None: ...

    def dataset_name(self, p: Any, table: str, said: str | None) -> str: ...


@dataclass(frozen=True)
class ConstraintShape:
    """What a projection, aggregation or join policy's body says."""

    #: identities the CASE exempts (who may select the column; who reads rows unaggregated or
    #: the table unjoined), in the body's order
    exempt: tuple[str, ...] = ()
    #: a projection policy's ``fail`` | ``nullify``
    enforcement: str = "fail"
    #: an aggregation policy's smallest group
    min_group_size: int = 0


def _call(node: exp.Expression, function: str) -> dict[str, exp.Expression] | None:
    """The named arguments of a call of ``function`` (upper-cased names), or None when
    ``node`` is another expression or passes an argument unnamed."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.Anonymous) or node.name.upper() != function:
        return None
    out: dict[str, exp.Expression] = {}
    for arg in node.expressions:
        if not isinstance(arg, exp.Kwarg) or arg.this.name.upper() in out:
            return None
        out[arg.this.name.upper()] = arg.expression
    return out


def _boolean(node: exp.Expression | None) -> bool | None:
    return node.this if isinstance(node, exp.Boolean) else None


def _restricted(obj: ConstraintPolicy, node: exp.Expression) -> ConstraintShape | None:
    """The constraint the model writes for who is not exempt, or None."""
    if isinstance(obj, ProjectionPolicy):
        args = _call(node, "PROJECTION_CONSTRAINT")
        if args is None or set(args) - {"ALLOW", "ENFORCEMENT"}:
            return None
        if _boolean(args.get("ALLOW")) is not False:
            return None
        how = args.get("ENFORCEMENT")
        if how is None:
            return ConstraintShape(enforcement="fail")  # "Default: FAIL"
        if not (isinstance(how, exp.Literal) and how.is_string):
            return None
        enforcement = str(how.this).lower()
        return (
            ConstraintShape(enforcement=enforcement) if enforcement in ("fail", "nullify") else None
        )
    if isinstance(obj, AggregationPolicy):
        args = _call(node, "AGGREGATION_CONSTRAINT")
        size = (args or {}).get("MIN_GROUP_SIZE")
        if args is None or set(args) != {"MIN_GROUP_SIZE"} or not isinstance(size, exp.Literal):
            return None
        text = str(size.this)
        if size.is_string or not text.isdigit() or int(text) < 1:
            return None
        return ConstraintShape(min_group_size=int(text))
    args = _call(node, "JOIN_CONSTRAINT")
    if (
        args is None
        or set(args) != {"JOIN_REQUIRED"}
        or _boolean(args["JOIN_REQUIRED"]) is not True
    ):
        return None
    return ConstraintShape()


def _unrestricted(obj: ConstraintPolicy, node: exp.Expression) -> bool:
    if isinstance(obj, ProjectionPolicy):
        args = _call(node, "PROJECTION_CONSTRAINT")
        return args is not None and set(args) == {"ALLOW"} and _boolean(args["ALLOW"]) is True
    if isinstance(obj, AggregationPolicy):
        return _call(node, "NO_AGGREGATION_CONSTRAINT") == {}
    args = _call(node, "JOIN_CONSTRAINT")
    return (
        args is not None
        and set(args) == {"JOIN_REQUIRED"}
        and _boolean(args["JOIN_REQUIRED"]) is False
    )


def constraint_shape(obj: ConstraintPolicy, platform: str) -> ConstraintShape | str:
    """What a projection, aggregation or join policy's body says, or why the model cannot
    say it."""
    field, constraint, free = _WHAT[type(obj)]
    member = facts(platform).member_function
    body = obj.body
    while isinstance(body, exp.Paren):
        body = body.this
    found = _restricted(obj, body)
    if found is not None:
        return found
    if _unrestricted(obj, body):
        return (
            f"it returns {free} for every caller: it restricts nobody, which `{field}` cannot say"
        )
    if isinstance(body, exp.Case):
        ifs = body.args.get("ifs") or []
        default = body.args.get("default")
        if len(ifs) == 1 and default is not None:
            who = members(ifs[0].this, platform)
            found = _restricted(obj, default)
            if who and found is not None and _unrestricted(obj, ifs[0].args["true"]):
                return ConstraintShape(who, found.enforcement, found.min_group_size)
            if who is None:
                return (
                    f"its CASE decides who is exempt by more than {member} checks of literal "
                    "identities"
                )
    return (
        f"its body is none of the shapes `{field}` compiles to ({constraint}, or CASE WHEN "
        f"{member}('<identity>') [OR ...] THEN {free} ELSE that constraint END)"
    )


def _named(obj: ConstraintPolicy) -> list[str]:
    """The principals accord's comment names for the exempt identities (sorted names)."""
    text = obj.comment or ""
    if isinstance(obj, ProjectionPolicy):
        m = re.match(r"accord: the column is selected by (.+) only; ", text)
        names = m.group(1) if m and m.group(1) != "no principal" else ""
    elif isinstance(obj, AggregationPolicy):
        m = re.match(
            r"accord: aggregates over groups of at least \d+ rows; every row for (.+)$", text
        )
        names = m.group(1) if m else ""
    else:
        m = re.match(r"accord: read only joined to another table; unjoined for (.+)$", text)
        names = m.group(1) if m else ""
    return [n.strip() for n in names.split(",")] if names else []


@dataclass
class _Read:
    item: Item
    shape: ConstraintShape


def read_constraints(lift: Raise, p: Any) -> dict[str, _Read]:
    """Each usable projection, aggregation and join policy of ``p`` whose body the model
    says, by folded name; the others kept, with why."""
    platform = p.found.platform
    out: dict[str, _Read] = {}
    for folded, item in sorted(p.constraints.items()):
        if not lift.usable(item) or lift.outside(p, item):
            continue
        obj = item.obj
        assert isinstance(obj, ProjectionPolicy | AggregationPolicy | JoinPolicy)
        shape = constraint_shape(obj, platform)
        if isinstance(shape, str):
            lift.keep(item, f"the model cannot express this {_WHAT[type(obj)][0]} policy: {shape}")
            continue
        bad = not_an_identity(platform, shape.exempt)
        if bad:
            lift.keep(item, f"the model cannot express this {_WHAT[type(obj)][0]} policy: {bad}")
            continue
        lift.hint(platform, shape.exempt, _named(obj), ordered=False)
        out[folded] = _Read(item, shape)
    return out


def place_constraints(lift: Raise, p: Any, read: dict[str, _Read]) -> None:
    """The attachments of ``p``'s projection, aggregation and join policies, as the fields of
    the datasets of their tables (named as the other placements name them)."""
    platform = p.found.platform
    f = facts(platform)
    for item in sorted(p.constraint_places, key=lambda i: i.key):
        if not lift.usable(item):
            continue
        obj = item.obj
        assert isinstance(obj, ProjectionAttachment | AggregationAttachment | JoinAttachment)
        found = read.get(f.fold(obj.policy))
        if found is None or found.item.key in lift.kept_keys:
            lift.keep(item, f"it applies {obj.policy}, which the model does not express")
            continue
        column = obj.column if isinstance(obj, ProjectionAttachment) else None
        keys = obj.allowed_join_keys if isinstance(obj, JoinAttachment) else ()
        bad = not_a_place(obj.table, column) or next(
            (why for k in keys if (why := not_a_place(obj.table, k))), ""
        )
        if bad:
            lift.keep(item, bad)
            continue
        name = lift.dataset_name(p, obj.table, None)
        ds = lift.datasets.setdefault(
            name, {"platform": platform, "table": obj.table, "columns": {}}
        )
        exempt = [(platform, i) for i in found.shape.exempt]
        if isinstance(obj, ProjectionAttachment):
            spec = ds["columns"].setdefault(obj.column, {})
            if "type" not in spec:
                spec["type"] = f.string_type
                lift.notes.append(
                    f"datasets.{name}.columns.{obj.column}: a projection policy has no signature, "
                    f"so the column's type was not read: written as {f.string_type}; check it"
                )
            spec["projection"] = {"allowed_for": exempt, "enforcement": found.shape.enforcement}
            part: tuple[str, ...] = ("projection", name, obj.column)
        elif isinstance(obj, AggregationAttachment):
            ds["aggregation"] = {
                "min_group_size": found.shape.min_group_size,
                "unrestricted_for": exempt,
            }
            part = ("aggregation", name)
        else:
            ds["join"] = {"allowed_join_keys": list(keys), "unrestricted_for": exempt}
            part = ("join", name)
        lift.claims[part] += [found.item, item]


def written(spec: dict[str, Any], names: Any) -> dict[str, Any]:
    """A dataset's (or a column's) constraint fields as the model writes them: principals by
    name, defaults left out."""
    out: dict[str, Any] = {}
    for key in ("aggregation", "join", "projection"):
        rule = spec.get(key)
        if rule is None:
            continue
        if key == "aggregation":
            entry: dict[str, Any] = {"min_group_size": rule["min_group_size"]}
        elif key == "join":
            entry = (
                {"allowed_join_keys": rule["allowed_join_keys"]}
                if rule["allowed_join_keys"]
                else {}
            )
        else:
            entry = {"allowed_for": names(rule["allowed_for"])}
            if rule["enforcement"] != "fail":
                entry["enforcement"] = rule["enforcement"]
        who = "allowed_for" if key == "projection" else "unrestricted_for"
        if key != "projection" and rule[who]:
            entry[who] = names(rule[who])
        out[key] = entry
    return out
