"""Style switches and ABAC changes on Databricks, with catalogs built by hand (the ABAC
lowering lives on another branch) and a Databricks target that renders tags and policies."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accord.compiler.plan.order import build_plan
from accord.compiler.plan.state import PlanError
from accord.targets import lower_all
from accord.targets.databricks.target import DatabricksTarget
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    MaskAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)
from tests.estates import PLAN_BASE, edited
from tests.plan_helpers import position, project


class AbacTarget(DatabricksTarget):
    """The Databricks target plus minimal renderers for tags and ABAC policies."""

    def render_tag(self, t: Tag) -> tuple[str, str]:
        return "060_tags.sql", f"-- governed tag {t.name} ({', '.join(t.allowed_values)})"

    def render_tag_assignment(self, a: TagAssignment) -> tuple[str, str]:
        where = f"ALTER TABLE {self.q(a.table)}"
        if a.column:
            where += f" ALTER COLUMN {self.q(a.column)}"
        return "070_tags.sql", f"{where} SET TAGS ({self.lit(a.tag)} = {self.lit(a.value)});"

    def render_abac_policy(self, p: AbacPolicy) -> tuple[str, str]:
        return "080_policies.sql", (
            f"CREATE OR REPLACE POLICY {self.q(p.name)} ON {p.securable_type} "
            f"{self.q(p.securable)} {p.kind} {self.q(p.function)} TO {', '.join(p.to)};"
        )


def table_style() -> Catalog:
    return lower_all(project(edited(PLAN_BASE)))["databricks"]


def abac_style(filter_function: str = "gov.pol.programme_row_filter") -> Catalog:
    """The same protection through governed tags and ABAC policies."""
    table = table_style()
    kept = tuple(
        o for o in table.objects if not isinstance(o, RowFilterAttachment | MaskAttachment)
    )
    tags = (
        Tag("accord_filter", ("programme",)),
        Tag("accord_mask", ("notes", "subject")),
        TagAssignment("cat.s.t", None, "accord_filter", "programme", "lake"),
        TagAssignment("cat.s.t", "subject_id", "accord_mask", "subject", "lake"),
        TagAssignment("cat.s.t", "notes", "accord_mask", "notes", "lake"),
    )
    policies = (
        AbacPolicy(
            name="programme_filter",
            securable_type="CATALOG",
            securable="cat",
            kind="ROW FILTER",
            function=filter_function,
            to=("account users",),
            except_=(),
            match_columns=(),
            on_column=None,
            using=("programme",),
            comment="",
            when="has_tag_value('accord_filter', 'programme')",
        ),
        *(
            AbacPolicy(
                name=f"{mask}_mask",
                securable_type="CATALOG",
                securable="cat",
                kind="COLUMN MASK",
                function=f"gov.pol.{mask}_mask",
                to=("account users",),
                except_=(),
                match_columns=((f"has_tag_value('accord_mask', '{mask}')", "m"),),
                on_column="m",
                using=(),
                comment="",
            )
            for mask in ("notes", "subject")
        ),
    )
    return replace(table, style="abac", objects=(*kept, *tags, *policies))


def plan(base: Catalog, head: Catalog):  # type: ignore[no-untyped-def]
    return build_plan(
        {"databricks": base},
        {"databricks": head},
        {("databricks", "CAT.S.T", "SUBJECT_ID"): "subject"},
        {"databricks": AbacTarget()},
    )


def sqls(p) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.sql for stage in p.stages for s in stage.steps]


def test_table_to_abac_protects_before_it_unprotects() -> None:
    p = plan(table_style(), abac_style())
    assert p.diffs["databricks"].style == ("table", "abac")
    out = sqls(p)
    drop_filter = position(out, "ALTER TABLE cat.s.t DROP ROW FILTER;")
    assert position(out, "SET TAGS ('accord_filter' = 'programme')") < drop_filter
    assert position(out, "CREATE OR REPLACE POLICY programme_filter") < drop_filter
    for column, mask in (("subject_id", "subject"), ("notes", "notes")):
        drop_mask = position(out, f"ALTER COLUMN {column} DROP MASK;")
        assert (
            position(out, f"ALTER COLUMN {column} SET TAGS ('accord_mask' = '{mask}')") < drop_mask
        )
        assert position(out, f"CREATE OR REPLACE POLICY {mask}_mask") < drop_mask
    # tags are defined before anything is tagged
    assert position(out, "-- governed tag accord_mask") < position(out, "SET TAGS")


def test_abac_to_table_protects_before_it_unprotects() -> None:
    p = plan(abac_style(), table_style())
    out = sqls(p)
    set_filter = position(out, "ALTER TABLE cat.s.t SET ROW FILTER gov.pol.programme_row_filter")
    assert set_filter < position(out, "ALTER TABLE cat.s.t UNSET TAGS ('accord_filter');")
    assert set_filter < position(out, "DROP POLICY programme_filter ON CATALOG cat;")
    assert position(out, "ALTER COLUMN subject_id SET MASK") < position(
        out, "ALTER COLUMN subject_id UNSET TAGS ('accord_mask');"
    )
    # governed tags are account-level: the plan says so instead of inventing a statement
    retire = [s for s in p.stages if s.kind == "retire"]
    assert retire and all(step.sql.startswith("-- governed tag") for step in retire[0].steps)


def test_abac_policy_changed_in_place() -> None:
    head = abac_style()
    objects = tuple(
        replace(o, except_=("stewards",))
        if isinstance(o, AbacPolicy) and o.name == "notes_mask"
        else o
        for o in head.objects
    )
    p = plan(abac_style(), replace(head, objects=objects))
    assert sqls(p) == [
        "CREATE OR REPLACE POLICY notes_mask ON CATALOG cat COLUMN MASK gov.pol.notes_mask "
        "TO account users;"
    ]


def test_two_abac_filters_for_one_user_is_refused() -> None:
    """Renaming an ABAC filter policy onto a new function: for a moment both would apply to
    every user (UC_ABAC_MULTIPLE_ROW_FILTERS) or, the other way round, none would."""
    base = abac_style()
    function = replace(
        next(o for o in base.objects if getattr(o, "name", "") == "gov.pol.programme_row_filter"),
        name="gov.pol.programme_filter_abac",
    )
    head = abac_style("gov.pol.programme_filter_abac")
    renamed = tuple(
        replace(o, name="programme_filter_2")
        if isinstance(o, AbacPolicy) and o.name == "programme_filter"
        else o
        for o in head.objects
    )
    head = replace(head, objects=(*renamed, function))
    with pytest.raises(PlanError, match=r"carries ABAC policies .* for the same users"):
        plan(base, head)
