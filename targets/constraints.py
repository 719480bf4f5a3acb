"""The lowering of Snowflake's projection, aggregation and join policies (the platforms whose
facts list them: :attr:`compiler.core.platforms.PlatformFacts.constraint_policies`).

Each policy is a body of context functions with no signature (``AS () RETURNS
PROJECTION_CONSTRAINT``, ``AGGREGATION_CONSTRAINT``, ``JOIN_CONSTRAINT``): who is exempt is
checked with the platform's membership function on literal identities, never with a mapping
table, because "the body of a policy cannot reference user-defined functions, tables, or views"
(sql-reference/sql/create-join-policy; the projection and aggregation references say nothing
either way, and the same body shape is used for all three). Policies are shared by every column
or table with the same settings, and named by them (``PROJECTION_ALLOWED_FOR_CLINICAL_UNBLINDED``,
``AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD``, ``JOIN_REQUIRED_EXCEPT_DATA_STEWARD``), as row
filters and masks are.

The constraint functions, as documented: ``PROJECTION_CONSTRAINT(ALLOW => <boolean>,
ENFORCEMENT => 'FAIL' | 'NULLIFY')`` (create-projection-policy), ``AGGREGATION_CONSTRAINT
(MIN_GROUP_SIZE => <integer>)`` and ``NO_AGGREGATION_CONSTRAINT()`` (create-aggregation-policy),
``JOIN_CONSTRAINT(JOIN_REQUIRED => <boolean>)`` (create-join-policy).
"""

from __future__ import annotations

from typing import Protocol

from sqlglot import exp

from accord.compiler.core.platforms import PlatformFacts
from accord.compiler.model.schema import Dataset, PolicyModel
from accord.targets import sql
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
)


class Target(Protocol):
    """What lowering the constraint policies asks of a target (:class:`targets.base.Target`
    has it; a protocol, so this module, which the target calls, imports nothing of it)."""

    facts: PlatformFacts

    def member(self, principal: exp.Expression) -> exp.Expression: ...

    def identities(self, model: PolicyModel, principals: list[str]) -> tuple[str, ...]: ...

    def qualified(self, model: PolicyModel, name: str) -> str: ...

    def datasets(self, model: PolicyModel) -> list[tuple[str, Dataset]]: ...


def call(function: str, **arguments: exp.Expression) -> exp.Expression:
    """``FUNCTION(NAME => value, ...)``: a constraint function with named arguments."""
    return exp.Anonymous(
        this=function,
        expressions=[
            exp.Kwarg(this=exp.Var(this=name), expression=value)
            for name, value in arguments.items()
        ],
    )


def _exempt(
    target: Target,
    model: PolicyModel,
    principals: list[str],
    then: exp.Expression,
    other: exp.Expression,
) -> exp.Expression:
    """``CASE WHEN <the caller holds one of principals> THEN then ELSE other END``, or
    ``other`` when no principal has an identity on the platform."""
    checks = [target.member(sql.literal(i)) for i in target.identities(model, principals)]
    if not checks:
        return other
    cond = checks[0] if len(checks) == 1 else exp.or_(*checks)
    return exp.Case(ifs=[exp.If(this=cond, true=then)], default=other)


def _suffix(principals: list[str]) -> str:
    return "_".join(sorted(principals))


def lower_constraints(target: Target, model: PolicyModel) -> list[CatalogObject]:
    """The projection, aggregation and join policies of the platform's datasets (each once),
    then their attachments, dataset by dataset."""
    has = target.facts.constraint_policies
    if not has:
        return []
    policies: dict[str, CatalogObject] = {}
    attachments: list[CatalogObject] = []
    for dname, ds in target.datasets(model):
        for column, spec in ds.columns.items():
            rule = spec.projection
            if rule is None or "projection" not in has:
                continue
            allowed = sorted(rule.allowed_for)
            name = "projection_allowed_for_" + (_suffix(allowed) or "none")
            if rule.enforcement != "fail":
                name += f"_{rule.enforcement}"
            qualified = target.qualified(model, name)
            if qualified not in policies:
                denied = call(
                    "PROJECTION_CONSTRAINT",
                    ALLOW=exp.false(),
                    ENFORCEMENT=sql.literal(rule.enforcement.upper()),
                )
                body = _exempt(
                    target, model, allowed, call("PROJECTION_CONSTRAINT", ALLOW=exp.true()), denied
                )
                who = ", ".join(allowed) or "no principal"
                then = "the query fails" if rule.enforcement == "fail" else "it reads as NULL"
                policies[qualified] = ProjectionPolicy(
                    name=qualified,
                    body=body,
                    comment=f"accord: the column is selected by {who} only; for others {then}",
                    allowed_for=tuple(allowed),
                    enforcement=rule.enforcement,
                )
            attachments.append(ProjectionAttachment(ds.table, column, qualified, dname))
        if ds.aggregation is not None and "aggregation" in has:
            agg = ds.aggregation
            exempt = sorted(agg.unrestricted_for)
            name = f"aggregation_min_{agg.min_group_size}"
            if exempt:
                name += "_except_" + _suffix(exempt)
            qualified = target.qualified(model, name)
            if qualified not in policies:
                size = exp.Literal.number(agg.min_group_size)
                body = _exempt(
                    target,
                    model,
                    exempt,
                    exp.Anonymous(this="NO_AGGREGATION_CONSTRAINT", expressions=[]),
                    call("AGGREGATION_CONSTRAINT", MIN_GROUP_SIZE=size),
                )
                comment = f"accord: aggregates over groups of at least {agg.min_group_size} rows"
                if exempt:
                    comment += "; every row for " + ", ".join(exempt)
                policies[qualified] = AggregationPolicy(
                    name=qualified,
                    body=body,
                    comment=comment,
                    min_group_size=agg.min_group_size,
                    unrestricted_for=tuple(exempt),
                )
            attachments.append(AggregationAttachment(ds.table, qualified, dname))
        if ds.join is not None and "join" in has:
            rule_join = ds.join
            exempt = sorted(rule_join.unrestricted_for)
            name = "join_required" + ("_except_" + _suffix(exempt) if exempt else "")
            qualified = target.qualified(model, name)
            if qualified not in policies:
                body = _exempt(
                    target,
                    model,
                    exempt,
                    call("JOIN_CONSTRAINT", JOIN_REQUIRED=exp.false()),
                    call("JOIN_CONSTRAINT", JOIN_REQUIRED=exp.true()),
                )
                comment = "accord: read only joined to another table"
                if exempt:
                    comment += "; unjoined for " + ", ".join(exempt)
                policies[qualified] = JoinPolicy(
                    name=qualified, body=body, comment=comment, unrestricted_for=tuple(exempt)
                )
            keys = tuple(rule_join.allowed_join_keys)
            attachments.append(JoinAttachment(ds.table, qualified, dname, keys))
    ordered = sorted(policies.values(), key=lambda o: (_ORDER[type(o)], o.name))  # type: ignore[union-attr]
    return [*ordered, *attachments]


_ORDER = {ProjectionPolicy: 0, AggregationPolicy: 1, JoinPolicy: 2}
