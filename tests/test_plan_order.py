"""The planner's ordering invariants, one base/head pair per case, with assertions on the
statements and their order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accord.compiler.plan.apply import split_statements
from accord.compiler.plan.model import Plan
from accord.compiler.plan.order import build_plan
from accord.compiler.plan.source import domains_of, plan_projects
from accord.compiler.plan.state import PlanError
from accord.targets import lower_all
from accord.targets.objects import MaskPolicy, Param, RowFilterPolicy, SaltFunction
from tests.estates import PLAN_BASE, PLAN_SALTS, edited
from tests.plan_helpers import (
    plan_between,
    position,
    project,
    statements,
)


def assert_never_unset_then_set(plan: Plan) -> None:
    """No column that is masked in the head is ever unset: masks are replaced with FORCE."""
    for platform, diff in plan.diffs.items():
        head = diff.head.objects if diff.head else ()
        masked = {
            (a.table, a.column) for a in head if hasattr(a, "column") and hasattr(a, "policy")
        }
        for text in statements(plan, platform):
            for table, column in masked:
                assert not (
                    "UNSET MASKING POLICY" in text and f"{table} MODIFY COLUMN {column} " in text
                ), text
                assert not ("DROP MASK" in text and f"{table} ALTER COLUMN {column} " in text), text


def test_create_before_attach() -> None:
    def add_email(e: dict) -> None:
        e["masks"]["email"] = {"strategy": "partial", "keep_last": 4}
        e["datasets"]["wh"]["columns"]["EMAIL"] = {"type": "VARCHAR", "mask": "email"}

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), add_email))
    sf = statements(plan, "snowflake")
    create = position(sf, "CREATE OR ALTER MASKING POLICY GOV.POL.EMAIL_MASK")
    attach = position(sf, "MODIFY COLUMN EMAIL SET MASKING POLICY GOV.POL.EMAIL_MASK;")
    assert create < attach
    kinds = {s.kind for s in plan.stages if s.platform == "snowflake"}
    assert kinds == {"prepare", "apply"}
    assert "databricks" not in {s.platform for s in plan.stages}


def test_detach_before_drop_and_no_attached_policy_dropped() -> None:
    def drop_notes(e: dict) -> None:
        del e["masks"]["notes"]
        del e["datasets"]["wh"]["columns"]["NOTES"]
        del e["datasets"]["lake"]["columns"]["notes"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), drop_notes))
    sf = statements(plan, "snowflake")
    detach = position(sf, "ALTER TABLE DB.S.T MODIFY COLUMN NOTES UNSET MASKING POLICY;")
    drop = position(sf, "DROP MASKING POLICY GOV.POL.NOTES_MASK;")
    assert detach < drop
    dbx = statements(plan, "databricks")
    assert position(dbx, "ALTER TABLE cat.s.t ALTER COLUMN notes DROP MASK;") < position(
        dbx, "DROP FUNCTION gov.pol.notes_mask;"
    )
    retire = [s for s in plan.stages if s.kind == "retire"]
    assert {s.platform for s in retire} == {"snowflake", "databricks"}
    assert all(step.op == "drop" for s in retire for step in s.steps)


def test_body_change_in_place() -> None:
    def unmask_for_analysts(e: dict) -> None:
        e["masks"]["notes"]["unmasked_for"] = ["steward", "analyst"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), unmask_for_analysts))
    sf = statements(plan, "snowflake")
    assert sf[position(sf, "GOV.POL.NOTES_MASK")].startswith(
        "ALTER MASKING POLICY GOV.POL.NOTES_MASK SET BODY ->"
    )
    assert "SET COMMENT = 'accord: mask notes (redact); clear for analyst, steward'" in "".join(sf)
    assert not any(
        "CREATE OR ALTER MASKING POLICY" in s or "CREATE OR REPLACE MASKING POLICY" in s for s in sf
    )
    assert not any("SET MASKING POLICY" in s for s in sf)
    dbx = statements(plan, "databricks")
    assert dbx == [dbx[position(dbx, "CREATE OR REPLACE FUNCTION gov.pol.notes_mask(val STRING)")]]
    # rollback sets the old body back, in place as well
    rollback = next(s for s in plan.stages if s.platform == "snowflake").rollback
    assert rollback[0].sql.startswith("ALTER MASKING POLICY GOV.POL.NOTES_MASK SET BODY ->")
    assert "IS_ROLE_IN_SESSION('STEWARD')" in rollback[0].sql


def test_row_filter_signature_change_swaps_through_an_interim_policy() -> None:
    def numeric_programme(e: dict) -> None:
        e["datasets"]["wh"]["columns"]["PROGRAMME"]["type"] = "NUMBER(10,0)"
        e["datasets"]["lake"]["columns"]["programme"]["type"] = "INT"

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), numeric_programme))
    sf = statements(plan, "snowflake")
    expected = [
        "CREATE OR ALTER ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_V2\n"
        "  AS (PROGRAMME_VALUE DECIMAL(10, 0))",
        "ALTER TABLE DB.S.T DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER,\n"
        "  ADD ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_V2 ON (PROGRAMME);",
        "DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER;",
        "CREATE OR ALTER ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER\n"
        "  AS (PROGRAMME_VALUE DECIMAL(10, 0))",
        "ALTER TABLE DB.S.T DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_V2,\n"
        "  ADD ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER ON (PROGRAMME);",
        "DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_V2;",
    ]
    assert len(sf) == len(expected)
    for text, start in zip(sf, expected, strict=True):
        assert text.startswith(start), text
    dbx = statements(plan, "databricks")
    assert [d.splitlines()[0] for d in dbx] == [
        "CREATE OR REPLACE FUNCTION gov.pol.programme_row_filter_v2(programme_value INT)",
        "ALTER TABLE cat.s.t SET ROW FILTER gov.pol.programme_row_filter_v2 ON (programme);",
        "DROP FUNCTION gov.pol.programme_row_filter;",
        "CREATE OR REPLACE FUNCTION gov.pol.programme_row_filter(programme_value INT)",
        "ALTER TABLE cat.s.t SET ROW FILTER gov.pol.programme_row_filter ON (programme);",
        "DROP FUNCTION gov.pol.programme_row_filter_v2;",
    ]
    assert not any("UNSET" in s or "DROP ROW FILTER" in s for s in sf + dbx)


def test_mask_signature_change_swaps_with_force() -> None:
    base = lower_all(project(edited(PLAN_BASE)))
    head = dict(base)
    # a new signature under the same name (e.g. a widened parameter type)
    sf = base["snowflake"]
    objects = tuple(
        replace(o, params=(Param("VAL", "VARCHAR(200)"),))
        if isinstance(o, MaskPolicy) and o.name == "GOV.POL.NOTES_MASK"
        else o
        for o in sf.objects
    )
    head["snowflake"] = replace(sf, objects=objects)
    plan = build_plan(base, head, {})
    assert [s.sql.splitlines()[0] for s in plan.stages[0].steps] == [
        "CREATE OR ALTER MASKING POLICY GOV.POL.NOTES_MASK_V2",
        "ALTER TABLE DB.S.T MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.NOTES_MASK_V2 FORCE;",
        "DROP MASKING POLICY GOV.POL.NOTES_MASK;",
        "CREATE OR ALTER MASKING POLICY GOV.POL.NOTES_MASK",
        "ALTER TABLE DB.S.T MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.NOTES_MASK FORCE;",
        "DROP MASKING POLICY GOV.POL.NOTES_MASK_V2;",
    ]


def test_interim_name_skips_names_in_use() -> None:
    def numeric(e: dict) -> None:
        e["datasets"]["wh"]["columns"]["PROGRAMME"]["type"] = "NUMBER(10,0)"

    base = lower_all(project(edited(PLAN_BASE)))
    head = lower_all(project(edited(edited(PLAN_BASE), numeric)))
    taken = replace(base["snowflake"].get(RowFilterPolicy, "GOV.POL.PROGRAMME_ROW_FILTER"))
    taken = replace(taken, name="GOV.POL.PROGRAMME_ROW_FILTER_V2")
    for side in (base, head):
        side["snowflake"] = replace(side["snowflake"], objects=(*side["snowflake"].objects, taken))
    sf = statements(build_plan(base, head, {}), "snowflake")
    assert sf[0].startswith("CREATE OR ALTER ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_V3")


def test_moved_mask_is_replaced_with_force_never_unset_then_set() -> None:
    def notes_hashed(e: dict) -> None:
        e["datasets"]["wh"]["columns"]["NOTES"]["mask"] = "subject"

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), notes_hashed))
    sf = statements(plan, "snowflake")
    swap = position(
        sf, "ALTER TABLE DB.S.T MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.SUBJECT_MASK FORCE;"
    )
    assert swap < position(sf, "DROP MASKING POLICY GOV.POL.NOTES_MASK;")
    assert_never_unset_then_set(plan)


def test_moved_row_filter_is_one_drop_add_statement() -> None:
    def stewards_see_all(e: dict) -> None:
        e["datasets"]["wh"]["row_filter"]["unfiltered_for"] = ["steward"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), stewards_see_all))
    sf = statements(plan, "snowflake")
    new = "GOV.POL.PROGRAMME_ROW_FILTER_EXCEPT_STEWARD"
    create = position(sf, f"CREATE OR ALTER ROW ACCESS POLICY {new}")
    swap = position(
        sf,
        "ALTER TABLE DB.S.T DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER,\n"
        f"  ADD ROW ACCESS POLICY {new} ON (PROGRAMME);",
    )
    drop = position(sf, "DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER;")
    assert create < swap < drop
    assert len(split_statements(sf[swap], "snowflake")) == 1


def test_grant_changes_are_one_transaction_and_one_merge() -> None:
    def grant(e: dict) -> None:
        e["entitlements"]["programme"]["P3"] = ["steward"]
        e["entitlements"]["programme"]["P1"] = ["steward"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), grant))
    (sf,) = statements(plan, "snowflake")
    parts = split_statements(sf, "snowflake")
    begin = parts.index("BEGIN TRANSACTION")
    assert parts[begin + 1 :] == [
        "DELETE FROM GOV.POL.PROGRAMME_GRANTS",
        parts[begin + 2],
        "COMMIT",
    ]
    assert parts[begin + 2].startswith("INSERT INTO GOV.POL.PROGRAMME_GRANTS")
    (dbx,) = statements(plan, "databricks")
    merges = [p for p in split_statements(dbx, "databricks") if not p.startswith("CREATE")]
    assert len(merges) == 1 and merges[0].startswith("MERGE INTO gov.pol.programme_grants")
    assert "WHEN NOT MATCHED BY SOURCE THEN DELETE" in merges[0]
    assert [s.kind for s in plan.stages] == ["apply", "apply"]


def _cutover(plan: Plan) -> list:
    return [s for s in plan.stages if s.kind == "cutover"]


def test_salt_introduced_on_a_shared_domain_is_one_cutover_group() -> None:
    def salted(e: dict) -> None:
        e["masks"]["subject"]["salt"] = dict(PLAN_SALTS)

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), salted))
    (group,) = plan.groups
    assert group.id == "subject" and group.platforms == ("snowflake", "databricks")
    cutover = _cutover(plan)
    assert [s.id for s in cutover] == list(group.stages)
    # listed together: one right after the other
    ids = [s.id for s in plan.stages]
    assert ids.index(group.stages[1]) == ids.index(group.stages[0]) + 1
    sf, dbx = cutover
    assert sf.steps[0].sql.startswith("ALTER MASKING POLICY GOV.POL.SUBJECT_MASK SET BODY ->")
    assert "SHA2(VAL || GOV.POL.SUBJECT_MASK_SALT()" not in sf.steps[0].sql
    assert "SHA2(VAL || GOV.POL.SUBJECT_SALT(), 256)" in sf.steps[0].sql
    assert dbx.steps[0].sql.startswith("CREATE OR REPLACE FUNCTION gov.pol.subject_mask")
    # the salt functions are created first, in the prepare stages
    prepare = [s for s in plan.stages if s.kind == "prepare"]
    assert {s.platform for s in prepare} == {"snowflake", "databricks"}
    assert all("accord_salt('env:" in s.steps[0].sql for s in prepare)
    # each cutover stage is verified: policy references / column-mask metadata show the
    # policy on every column of the domain, and the canary's digest is salted
    sf_checks = "\n".join(c.sql for c in sf.checks)
    assert "DB.INFORMATION_SCHEMA.POLICY_REFERENCES" in sf_checks
    assert "REF_COLUMN_NAME = 'SUBJECT_ID'" in sf_checks
    assert (
        "SHA2('accord-canary' || GOV.POL.SUBJECT_SALT(), 256) <> SHA2('accord-canary', 256) AS ok"
        in sf_checks
    )
    dbx_checks = "\n".join(c.sql for c in dbx.checks)
    # read with tables.get, not information_schema (compiler/plan/metadata.py)
    assert (
        '"column": "subject_id", "function": "gov.pol.subject_mask", "kind": "mask"' in dbx_checks
    )
    assert "sha2(concat('accord-canary', gov.pol.subject_salt()), 256) <>" in dbx_checks


def test_salt_rotated_on_both_platforms_is_a_cutover_group() -> None:
    salted = edited(
        edited(PLAN_BASE), lambda e: e["masks"]["subject"].update(salt=dict(PLAN_SALTS))
    )
    rotated = edited(
        salted,
        lambda e: e["masks"]["subject"].update(
            salt={"snowflake": "env:SUBJECT_SALT_SF_2", "databricks": "env:SUBJECT_SALT_DBX_2"}
        ),
    )
    plan = plan_between(salted, rotated)
    assert [s.kind for s in plan.stages] == ["cutover", "cutover"]
    sf, dbx = plan.stages
    assert "accord_salt('env:SUBJECT_SALT_SF_2')" in sf.steps[0].sql
    assert "CREATE OR REPLACE SECURE FUNCTION GOV.POL.SUBJECT_SALT()" in sf.steps[0].sql
    assert "accord_salt('env:SUBJECT_SALT_DBX_2')" in dbx.steps[0].sql
    assert plan.diffs["snowflake"].changes[0].describe("snowflake") == (
        "salt function GOV.POL.SUBJECT_SALT: salt rotated "
        "(env:SUBJECT_SALT_SF -> env:SUBJECT_SALT_SF_2)"
    )


def test_salt_rotated_on_one_platform_is_no_group() -> None:
    salted = edited(
        edited(PLAN_BASE), lambda e: e["masks"]["subject"].update(salt=dict(PLAN_SALTS))
    )
    rotated = edited(
        salted, lambda e: e["masks"]["subject"]["salt"].update(snowflake="env:OTHER_SALT")
    )
    plan = plan_between(salted, rotated)
    assert not plan.groups
    assert [(s.platform, s.kind) for s in plan.stages] == [("snowflake", "apply")]


def test_strategy_change_on_a_shared_domain_is_a_cutover_group() -> None:
    def redacted(e: dict) -> None:
        e["masks"]["subject"] = {"strategy": "redact", "unmasked_for": ["steward"]}

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), redacted))
    (group,) = plan.groups
    assert any("strategy hash -> redact" in c for c in group.changes)
    assert {s.platform for s in _cutover(plan)} == {"snowflake", "databricks"}


def test_mask_on_an_unshared_domain_is_no_group() -> None:
    def salted_notes(e: dict) -> None:
        e["masks"]["notes"] = {"strategy": "hash", "salt": dict(PLAN_SALTS)}

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), salted_notes))
    assert not plan.groups and not _cutover(plan)


def test_no_difference_is_an_empty_plan() -> None:
    assert plan_between(edited(PLAN_BASE), edited(PLAN_BASE)).empty


def test_platform_removed_detaches_then_drops_everything() -> None:
    def no_lake(e: dict) -> None:
        del e["platforms"]["databricks"]
        del e["datasets"]["lake"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), no_lake))
    dbx = statements(plan, "databricks")
    assert position(dbx, "DROP ROW FILTER") < position(dbx, "DROP FUNCTION gov.pol.programme_row")
    assert position(dbx, "DROP FUNCTION gov.pol.programme_row") < position(
        dbx, "DROP TABLE gov.pol.programme_grants;"
    )


def test_stage_rollbacks_reverse_the_stage() -> None:
    def stewards_see_all(e: dict) -> None:
        e["datasets"]["wh"]["row_filter"]["unfiltered_for"] = ["steward"]

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), stewards_see_all))
    apply = next(s for s in plan.stages if s.kind == "apply")
    (undo,) = apply.rollback
    assert undo.sql == (
        "ALTER TABLE DB.S.T DROP ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER_EXCEPT_STEWARD,\n"
        "  ADD ROW ACCESS POLICY GOV.POL.PROGRAMME_ROW_FILTER ON (PROGRAMME);"
    )


@pytest.mark.parametrize("change", ["salt", "signature", "notes-removed"])
def test_plans_never_unset_a_kept_mask(change: str) -> None:
    def edit(e: dict) -> None:
        if change == "salt":
            e["masks"]["subject"]["salt"] = dict(PLAN_SALTS)
        elif change == "signature":
            e["datasets"]["wh"]["columns"]["PROGRAMME"]["type"] = "NUMBER"
        else:
            del e["datasets"]["wh"]["columns"]["NOTES"]

    assert_never_unset_then_set(plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), edit)))


def test_plan_projects_is_refused_with_an_explanation() -> None:
    """A change the simulator cannot order is a PlanError naming the broken invariant."""

    def drop_notes(e: dict) -> None:
        del e["datasets"]["wh"]["columns"]["NOTES"]

    base, head = project(edited(PLAN_BASE)), project(edited(PLAN_BASE, drop_notes))
    # the column must stay masked, though the head no longer masks it
    with pytest.raises(PlanError, match=r"column DB\.S\.T\.NOTES has no mask"):
        build_plan(
            lower_all(base),
            lower_all(head),
            {**domains_of(base), **domains_of(head)},
            protect=[("DB.S.T", "NOTES")],
        )
    plan_projects(base, head)  # without it, the same change is planned


# --------------------------------------------------------------------------------------------
# the plan is data: a change's reason, statements handed in, and no change once built


def _salted() -> tuple[dict, dict]:
    estate = edited(PLAN_BASE, lambda e: e["masks"]["subject"].update(salt=dict(PLAN_SALTS)))
    return lower_all(project(estate)), domains_of(project(estate))


def test_a_salt_recreated_for_a_reason_keeps_both_objects_as_they_are() -> None:
    """A salt function equal in base and head that must be re-created all the same (the live
    one does not return its salt) is a change carrying that reason: neither catalog's object
    is rewritten to make it differ, and without the reason there is nothing to do."""
    catalogs, domains = _salted()
    salt = catalogs["snowflake"].of(SaltFunction)[0]
    assert build_plan(catalogs, catalogs, domains).empty
    plan = build_plan(
        catalogs, catalogs, domains, recreate={"snowflake": {salt.name: "live salt differs"}}
    )
    (change,) = plan.diffs["snowflake"].changes
    assert (change.kind, change.detail, change.reason) == ("changed", "salt", "live salt differs")
    assert change.base is salt and change.head is salt
    assert change.describe("snowflake") == (
        f"salt function {salt.name}: salt rotated ({salt.salt_ref} -> {salt.salt_ref})"
    )
    defined = [s for st in plan.stages for s in st.steps if s.obj is salt]
    assert [s.op for s in defined] == ["define"] and f"Salt of mask {salt.mask!r}" in defined[0].sql
    undone = [s for st in plan.stages for s in st.rollback if s.obj is salt]
    assert undone and f"Salt of mask {salt.mask!r}," in undone[0].sql
    assert not plan.diffs["databricks"].changes


def test_appended_statements_end_the_apply_stage_and_are_not_undone() -> None:
    """Statements that change no catalog object (a revoke) are handed to the planner: they end
    the platform's apply stage, or make one, with their checks; no rollback undoes them; and
    the built plan cannot be changed afterwards."""
    import dataclasses

    from accord.compiler.plan.model import Appendix
    from accord.compiler.plan.steps import Step
    from accord.compiler.plan.verify import Check

    catalogs, domains = _salted()
    salt = catalogs["databricks"].of(SaltFunction)[0]
    revoke = Step("define", salt, salt, "REVOKE EXECUTE ON FUNCTION x FROM y", "revoke it")
    appendix = Appendix((revoke,), (Check("y no longer holds EXECUTE", "-- check"),), "revoked")
    alone = build_plan(catalogs, catalogs, domains, appendices={"databricks": appendix})
    (stage,) = alone.stages
    assert (stage.id, stage.steps, stage.changes, stage.rollback, stage.requires) == (
        "01_databricks_apply",
        (revoke,),
        ("revoked",),
        (),
        (),
    )
    assert stage.checks == appendix.checks
    with pytest.raises(dataclasses.FrozenInstanceError):
        alone.base_fingerprint = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        stage.steps = ()  # type: ignore[misc]

    def grant(e: dict) -> None:
        e["entitlements"]["programme"]["P3"] = ["steward"]

    base, head = project(edited(PLAN_BASE)), project(edited(PLAN_BASE, grant))
    base, head, domains = lower_all(base), lower_all(head), domains_of(head)
    plain = build_plan(base, head, domains)
    grown = build_plan(base, head, domains, appendices={"databricks": appendix})
    assert [s.id for s in plain.stages] == [s.id for s in grown.stages]
    assert any(s.platform == "databricks" and s.kind == "apply" for s in plain.stages)
    for before, after in zip(plain.stages, grown.stages, strict=True):
        if before.platform == "databricks" and before.kind == "apply":
            assert after.steps == (*before.steps, revoke)
            assert after.checks == (*before.checks, *appendix.checks)
            assert after.changes == (*before.changes, "revoked")
            assert after.rollback == before.rollback
        else:
            assert after == before
