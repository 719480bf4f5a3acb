"""Property: for random pairs of small estates, replaying the plan stage by stage on a small
catalog simulator (which policy is attached to which table or column) never leaves a governed
table without its filter or a governed column without its mask, never drops an attached
policy, and ends in exactly the head catalog; every stage's rollback restores the catalog as
it was before the stage.

The simulator here is deliberately separate from the planner's own (compiler/plan/state.py):
it reads the steps' effects, not the planner's bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accord.compiler.plan.model import Plan, Stage
from accord.compiler.plan.source import plan_projects
from accord.compiler.plan.steps import Step
from accord.targets import lower_all
from accord.targets.objects import Catalog, MaskAttachment, RowFilterAttachment
from tests.plan_helpers import project

PRINCIPALS = ["analyst", "steward", "partner"]
IDENTITY = {
    "snowflake": {"analyst": "ANALYST", "steward": "STEWARD", "partner": "PARTNER"},
    "databricks": {"analyst": "analysts", "steward": "stewards", "partner": "partners"},
}
TABLES = {
    "snowflake": {"sf_a": "DB.S.A", "sf_b": "DB.S.B"},
    "databricks": {"dx_a": "cat.s.a", "dx_b": "cat.s.b"},
}
STRING = {"snowflake": "VARCHAR", "databricks": "STRING"}
NUMBER = {"snowflake": "NUMBER(10,0)", "databricks": "INT"}
SALTS = [None, ("env:SF_SALT_1", "env:DBX_SALT_1"), ("env:SF_SALT_2", "env:DBX_SALT_2")]


def principals(least: int = 0) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(PRINCIPALS), unique=True, min_size=least, max_size=2).map(
        sorted
    )


@st.composite
def masks(draw: st.DrawFn) -> dict[str, Any]:
    salt = draw(st.sampled_from(SALTS))
    hashed: dict[str, Any] = {"strategy": "hash", "unmasked_for": draw(principals())}
    if salt:
        hashed["salt"] = {"snowflake": salt[0], "databricks": salt[1]}
    return {
        "hashed": hashed,
        "redacted": {
            "strategy": "redact",
            "replacement": draw(st.sampled_from(["***", "[x]"])),
            "unmasked_for": draw(principals()),
        },
        "emptied": {"strategy": "nullify", "unmasked_for": draw(principals())},
        "partly": {"strategy": "partial", "keep_last": draw(st.sampled_from([2, 4]))},
    }


@st.composite
def dataset(draw: st.DrawFn, platform: str, table: str) -> dict[str, Any]:
    ds: dict[str, Any] = {"platform": platform, "table": table, "columns": {}}
    key = "PROG" if platform == "snowflake" else "prog"
    region = "REGION" if platform == "snowflake" else "region"
    form = draw(st.sampled_from(["none", "entitlement", "entitlement", "expression"]))
    if form == "entitlement":
        ds["row_filter"] = {
            "entitlement": "programme",
            "column": key,
            "unfiltered_for": draw(principals()),
        }
        ds["columns"][key] = {"type": draw(st.sampled_from([STRING[platform], NUMBER[platform]]))}
    elif form == "expression":
        ds["row_filter"] = {
            "expression": {platform: f"{region} = 'EU'"},
            "arguments": {region: STRING[platform]},
        }
    for n in range(1, 4):
        column = f"C{n}" if platform == "snowflake" else f"c{n}"
        mask = draw(st.sampled_from([None, "hashed", "redacted", "emptied", "partly"]))
        typed = NUMBER[platform] if mask == "emptied" and draw(st.booleans()) else STRING[platform]
        spec: dict[str, Any] = {"type": typed}
        if mask:
            spec["mask"] = mask
        if n == 1 and typed == STRING[platform] and draw(st.booleans()):
            spec["identifier"] = "subject"
        ds["columns"][column] = spec
    return ds


@st.composite
def estates(draw: st.DrawFn) -> dict[str, Any]:
    values = draw(
        st.lists(st.sampled_from(["P1", "P2", "P3"]), unique=True, min_size=1, max_size=3)
    )
    datasets = {}
    for platform, tables in TABLES.items():
        for name, table in tables.items():
            if draw(st.booleans()):
                datasets[name] = draw(dataset(platform, table))
    return {
        "version": 1,
        "platforms": {
            "snowflake": {"governance_schema": "GOV.POL"},
            "databricks": {"governance_schema": "gov.pol"},
        },
        "principals": {
            p: {"snowflake": IDENTITY["snowflake"][p], "databricks": IDENTITY["databricks"][p]}
            for p in PRINCIPALS
        },
        "entitlements": {"programme": {v: draw(principals(1)) for v in sorted(values)}},
        "masks": draw(masks()),
        "datasets": datasets,
    }


# --------------------------------------------------------------------------------------------
# an independent simulator: definitions by name, attachments by table / column


@dataclass
class Catalogue:
    defs: dict[str, object] = field(default_factory=dict)
    filters: dict[str, str] = field(default_factory=dict)
    masks: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def of(cls, catalog: Catalog | None) -> Catalogue:
        c = cls()
        for o in catalog.objects if catalog else ():
            if isinstance(o, RowFilterAttachment):
                c.filters[o.table] = o.policy
            elif isinstance(o, MaskAttachment):
                c.masks[(o.table, o.column)] = o.policy
            else:
                c.defs[o.name] = o  # type: ignore[union-attr]
        return c

    def copy(self) -> Catalogue:
        return Catalogue(dict(self.defs), dict(self.filters), dict(self.masks))

    def snapshot(self) -> tuple[object, ...]:
        return (sorted(self.defs), sorted(self.filters.items()), sorted(self.masks.items()))

    def attached(self) -> set[str]:
        return set(self.filters.values()) | set(self.masks.values())

    def run(self, step: Step, platform: str) -> None:
        obj = step.obj
        if step.op == "define":
            name = obj.name  # type: ignore[union-attr]
            if platform == "snowflake" and step.replaces is None:
                assert name not in self.attached(), f"CREATE OR REPLACE of attached {name}"
            self.defs[name] = obj
        elif step.op == "drop":
            name = obj.name  # type: ignore[union-attr]
            assert name in self.defs, f"drop of missing {name}"
            assert name not in self.attached(), f"drop of attached {name}"
            del self.defs[name]
        elif isinstance(obj, RowFilterAttachment):
            if step.op == "attach":
                assert obj.policy in self.defs, f"attach of missing {obj.policy}"
                assert (obj.table in self.filters) == (step.replaces is not None)
                self.filters[obj.table] = obj.policy
            else:
                del self.filters[obj.table]
        elif isinstance(obj, MaskAttachment):
            key = (obj.table, obj.column)
            if step.op == "attach":
                assert obj.policy in self.defs, f"attach of missing {obj.policy}"
                assert (key in self.masks) == (step.replaces is not None)
                self.masks[key] = obj.policy
            else:
                del self.masks[key]


def replay(plan: Plan, base: dict[str, Catalog], head: dict[str, Catalog]) -> None:
    for platform in sorted(base.keys() | head.keys()):
        now, goal = Catalogue.of(base.get(platform)), Catalogue.of(head.get(platform))
        tables = now.filters.keys() & goal.filters.keys()
        columns = now.masks.keys() & goal.masks.keys()
        stages: list[Stage] = [s for s in plan.stages if s.platform == platform]
        for stage in stages:
            before = now.copy()
            for step in stage.steps:
                now.run(step, platform)
                assert tables <= now.filters.keys(), f"{stage.id}: unfiltered table"
                assert columns <= now.masks.keys(), f"{stage.id}: unmasked column"
            undone = now.copy()
            for step in stage.rollback:
                undone.run(step, platform)
                assert tables <= undone.filters.keys() and columns <= undone.masks.keys()
            assert undone.snapshot() == before.snapshot(), f"rollback of {stage.id}"
        assert now.snapshot() == goal.snapshot()
        assert {n: type(o) for n, o in now.defs.items()} == {
            n: type(o) for n, o in goal.defs.items()
        }


# slow: 80 random roll-outs planned and simulated
@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(estates(), estates())
def test_random_plans_keep_everything_protected(base: dict[str, Any], head: dict[str, Any]) -> None:
    before, after = project(base), project(head)
    plan = plan_projects(before, after)
    replay(plan, lower_all(before), lower_all(after))
    for stage in plan.stages:
        if stage.group is not None:
            assert stage.kind == "cutover"
            assert len({s.platform for s in plan.stages if s.group == stage.group}) > 1
