"""Platform facts the planner and its simulator encode (issue 10), each test naming the fact
and the documentation page it comes from. Every plan accord writes is replayed on the
simulator (compiler/plan/state.py), so these facts are checked by accord's own invariants."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from accord.compiler.plan.order import build_plan
from accord.compiler.plan.state import PlanError, State
from accord.compiler.plan.steps import statements_for
from accord.targets import lower_all
from accord.targets.objects import (
    AbacPolicy,
    MaskAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)
from tests.conftest import ROOT
from tests.estates import PLAN_BASE, edited
from tests.plan_helpers import (
    plan_between,
    position,
    project,
    statements,
)


def _abac(e: dict) -> None:
    e["platforms"]["databricks"]["style"] = "abac"


def _tag_style(e: dict) -> None:
    e["platforms"]["snowflake"]["style"] = "tag"


def _stages(plan, platform: str) -> list:  # type: ignore[no-untyped-def]
    return [s for s in plan.stages if s.platform == platform]


def _sql(stage) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.sql for s in stage.steps]


# --------------------------------------------------------------------------------------------
# item 1: governed-tag assignments are not in effect within the stage that makes them
# ("After assigning or modifying a tag, it can take a few minutes for the change to take
# effect": docs.databricks.com/aws/en/data-governance/unity-catalog/abac/requirements)


def test_table_to_abac_drops_table_level_protection_only_in_a_later_stage() -> None:
    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), _abac))
    stages = _stages(plan, "databricks")
    tagging = next(i for i, s in enumerate(stages) if any("SET TAGS" in q for q in _sql(s)))
    dropping = [
        i
        for i, s in enumerate(stages)
        if any("DROP ROW FILTER" in q or "DROP MASK" in q for q in _sql(s))
    ]
    assert dropping and all(i > tagging for i in dropping)
    assert stages[dropping[0]].kind == "handover"
    # the tags and the policies are made in the same stage, before anything is dropped
    assert any("CREATE OR REPLACE POLICY" in q for q in _sql(stages[tagging]))
    # the tagging stage checks every tag is in place before the handover stage may run
    checks = "\n".join(c.sql for c in stages[tagging].checks)
    for column in ("notes", "programme", "subject_id"):
        assert f'"column": "{column}", "function": null, "kind": "tag"' in checks
    assert checks.count('"kind": "tag"') == 3
    # and every ABAC policy is on its schema with its function (policies.list_policies)
    assert checks.count('"kind": "abac_policy"') == 3


def test_simulator_refuses_a_drop_in_the_stage_that_tags() -> None:
    """Tag, create the ABAC policy and drop the table-level mask in one stage: the simulator
    counts the new tag as not in effect yet, so the column is unprotected."""
    base = lower_all(project(edited(PLAN_BASE)))["databricks"]
    head = lower_all(project(edited(PLAN_BASE, _abac)))["databricks"]
    st = statements_for("databricks")
    state = State.of(base, "databricks")
    for obj in head.objects:
        if isinstance(obj, Tag | TagAssignment | AbacPolicy):
            state.attach(obj, None) if not isinstance(obj, Tag) else state.define(obj, None)
    mask = next(o for o in base.objects if isinstance(o, MaskAttachment))
    state.detach(mask)
    assert state.unprotected([], [(mask.table, mask.column)]) == [
        f"column {mask.table}.{mask.column} has no mask"
    ]
    state.settle()  # the next stage: the tag is in effect
    assert state.unprotected([], [(mask.table, mask.column)]) == []
    assert st.platform == "databricks"


# --------------------------------------------------------------------------------------------
# item 8: a table-level and an ABAC filter (mask) with different functions on one table:
# "Databricks blocks access and returns an error" (unity-catalog/abac/abac-vs-rls-cm)


def test_repository_migration_hands_each_schema_over_right_after_its_set() -> None:
    stage = (
        ROOT
        / "migrations/0001_subject-cutover-salts-filters-masks-tags-abac-style"
        / "04_databricks_apply.sql"
    ).read_text()
    statements = [line for line in stage.splitlines() if line and not line.startswith("--")]
    results = position(statements, "ALTER TABLE discovery_lake.assays.results SET ROW FILTER")
    drop_assays = position(
        statements, "DROP POLICY accord_programme_row_filter ON SCHEMA discovery_lake"
    )
    calls = position(statements, "ALTER TABLE omics.variants.calls SET ROW FILTER")
    drop_variants = position(statements, "DROP POLICY accord_programme_row_filter ON SCHEMA omics")
    assert results < drop_assays < calls < drop_variants


def test_simulator_counts_mixed_filters_as_an_outage() -> None:
    base = lower_all(project(edited(edited(PLAN_BASE), _abac)))["databricks"]
    state = State.of(base, "databricks")
    table = "cat.s.t"
    state.attach(RowFilterAttachment(table, "gov.pol.other_filter", ("programme",), "lake"), None)
    blocked = state.blocked([table.upper()], [])
    assert list(blocked) == ["CAT.S.T"] and "accord_programme_row_filter" in blocked["CAT.S.T"]
    # the same function through both mechanisms is not the documented outage
    same = State.of(base, "databricks")
    function = next(o for o in base.objects if isinstance(o, AbacPolicy) and o.kind == "ROW FILTER")
    same.attach(RowFilterAttachment(table, function.function, ("programme",), "lake"), None)
    assert same.blocked([table.upper()], []) == {}


def test_planner_refuses_an_outage_it_could_have_avoided() -> None:
    """Two schemas moved from ABAC to table level: setting both tables' filters before dropping
    either schema's policy keeps the first table refused while the second is set."""
    two = edited(edited(PLAN_BASE), _abac)
    two["datasets"]["lake2"] = edited(two["datasets"]["lake"], lambda d: d.update(table="cat.s2.t"))
    two["datasets"]["lake2"]["columns"]["subject_id"].pop("identifier")
    head = edited(two, lambda e: e["platforms"]["databricks"].update(style="table"))
    for name in ("lake", "lake2"):  # a different function from the ABAC one
        head["datasets"][name]["row_filter"]["unfiltered_for"] = ["steward"]
    plan = plan_between(two, head)  # accord's own order is accepted
    out = [q for s in _stages(plan, "databricks") for q in _sql(s)]
    assert (
        position(out, "cat.s.t SET ROW FILTER")
        < position(out, "ON SCHEMA cat.s;")
        < position(out, "cat.s2.t SET ROW FILTER")
    )
    # the same statements in the order of today's migrations/0001 are refused
    stage = next(s for s in _stages(plan, "databricks") if s.kind == "apply")
    sets = [s for s in stage.steps if s.op == "attach" and isinstance(s.obj, RowFilterAttachment)]
    rest = [s for s in stage.steps if s not in sets]
    bad = replace(stage, steps=tuple(sets + rest))
    from accord.compiler.plan.order import PlatformPlanner

    planner = PlatformPlanner(plan.diffs["databricks"], {}, None)
    state = State.of(plan.diffs["databricks"].base, "databricks")
    for prepared in _stages(plan, "databricks")[0].steps:
        prepared.run(state)
    state.settle()
    planner.prover.replay(stage.steps, stage.kind, state.copy())
    with pytest.raises(PlanError, match=r"every query stays refused on table CAT\.S\.T"):
        planner.prover.replay(bad.steps, bad.kind, state)


# --------------------------------------------------------------------------------------------
# item 9: no principal loses access it has before and after the plan


def test_identity_check_is_dropped_only_after_the_table_level_mask() -> None:
    """Table level to ABAC: the mask functions lose their `unmasked_for` check; while still
    attached table-level, the stewards would see masked values."""
    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), _abac))
    out = [q for s in _stages(plan, "databricks") for q in _sql(s)]
    assert position(out, "ALTER COLUMN notes DROP MASK") < position(
        out, "CREATE OR REPLACE FUNCTION gov.pol.notes_mask"
    )


def test_simulator_refuses_a_body_change_that_takes_access_away() -> None:
    base = lower_all(project(edited(PLAN_BASE)))["databricks"]
    head = lower_all(project(edited(edited(PLAN_BASE), _abac)))["databricks"]
    state = State.of(base, "databricks")
    col = ("CAT.S.T", "NOTES")
    assert state.exempt(*col) == frozenset({"stewards"})
    new_body = next(o for o in head.objects if getattr(o, "name", "") == "gov.pol.notes_mask")
    state.define(
        new_body, next(o for o in base.objects if getattr(o, "name", "") == "gov.pol.notes_mask")
    )
    assert state.exempt(*col) == frozenset()


def test_planner_orders_body_changes_around_attachment_moves() -> None:
    """A column moves from mask A (whose body stops naming the analyst) to mask B (whose body
    starts naming the analyst): B changes before the move, A after it."""
    base = edited(PLAN_BASE)
    base["masks"]["notes"]["unmasked_for"] = ["analyst"]
    base["masks"]["other"] = {"strategy": "nullify", "unmasked_for": []}
    head = edited(base, lambda e: None)
    head["masks"]["notes"]["unmasked_for"] = []
    head["masks"]["other"]["unmasked_for"] = ["analyst"]
    head["datasets"]["wh"]["columns"]["NOTES"]["mask"] = "other"
    base["datasets"]["wh"]["columns"]["EXTRA"] = {"type": "VARCHAR", "mask": "other"}
    head["datasets"]["wh"]["columns"]["EXTRA"] = {"type": "VARCHAR", "mask": "notes"}
    out = [q for s in _stages(plan_between(base, head), "snowflake") for q in _sql(s)]
    body_other = position(out, "ALTER MASKING POLICY GOV.POL.OTHER_MASK SET BODY")
    move = position(out, "MODIFY COLUMN NOTES SET MASKING POLICY GOV.POL.OTHER_MASK FORCE")
    body_notes = position(out, "ALTER MASKING POLICY GOV.POL.NOTES_MASK SET BODY")
    assert body_other < move < body_notes


# --------------------------------------------------------------------------------------------
# item 6: "A tag cannot be dropped while a masking policy is assigned to it"
# (docs.snowflake.com/en/user-guide/tag-based-masking-policies)


def test_tag_retirement_unsets_its_masking_policies_first() -> None:
    base = edited(edited(PLAN_BASE), _tag_style)
    plan = plan_between(base, edited(PLAN_BASE))
    retire = next(s for s in _stages(plan, "snowflake") if s.kind == "retire")
    out = _sql(retire)
    tag = "GOV.POL.ACCORD_MASK_NOTES"
    assert position(out, f"ALTER TAG {tag} UNSET MASKING POLICY GOV.POL.NOTES_MASK;") < position(
        out, f"DROP TAG {tag};"
    )
    # the rollback re-creates the tag and sets the policy back with FORCE
    assert any("SET MASKING POLICY GOV.POL.NOTES_MASK FORCE" in s.sql for s in retire.rollback)


def test_simulator_refuses_a_tag_drop_while_it_has_policies_or_columns() -> None:
    catalog = lower_all(project(edited(edited(PLAN_BASE), _tag_style)))["snowflake"]
    state = State.of(catalog, "snowflake")
    tag = next(o for o in catalog.objects if isinstance(o, Tag))
    problems = state.drop(tag)
    assert any("while it carries masking policies" in p for p in problems)
    assert any("(tagged)" in p for p in problems)
    assert statements_for("snowflake").drop_sql(tag) == f"DROP TAG {tag.name};"


# --------------------------------------------------------------------------------------------
# item 7 (Snowflake): POLICY_REFERENCES lists tag-based masks too, with TAG_NAME set
# (user-guide/tag-based-masking-policies): "mask removed" counts direct masks only, and a
# tagged column is checked to have its tag-based mask active


def test_snowflake_mask_checks_tell_direct_from_tag_based_masks() -> None:
    base = edited(edited(PLAN_BASE), _tag_style)
    plan = plan_between(edited(PLAN_BASE), base)
    stage = next(s for s in _stages(plan, "snowflake") if s.kind == "apply")
    by_comment = {c.comment: c.sql for c in stage.checks}
    removed = by_comment["mask of DB.S.T.NOTES is removed"]
    assert "TAG_NAME IS NULL" in removed and "COUNT(*) = 0" in removed
    active = by_comment[
        "the masking policy of tag GOV.POL.ACCORD_MASK_NOTES is active on DB.S.T.NOTES"
    ]
    assert "POLICY_STATUS = 'ACTIVE'" in active
    assert (
        "TAG_DATABASE || '.' || TAG_SCHEMA || '.' || TAG_NAME = 'GOV.POL.ACCORD_MASK_NOTES'"
        in active
    )


def test_a_handover_says_what_it_hands_over() -> None:
    """A handover stage's "why" follows its steps: table-level policies handed to ABAC ones
    (the kind's text), columns retagged from one ABAC policy to another, or both."""
    from accord.compiler.plan.model import WHY, Stage, why
    from accord.compiler.plan.steps import Step
    from accord.targets.objects import RowFilterAttachment, TagAssignment

    detach = Step("detach", RowFilterAttachment("c.s.t", "p", ("k",), "t"), None, "", "")
    old = TagAssignment("c.s.t", "k", "accord_row_key", "schema_key", "t")
    retag = Step("attach", replace(old, value="t_key"), old, "", "")

    def stage(*steps: Step) -> Stage:
        return Stage("databricks", "handover", None, steps, ())

    assert why(stage(detach)) == WHY["handover"]
    retagging = why(stage(retag))
    assert retagging.startswith("retags columns to the values that only the ABAC policies")
    assert "table-level" not in retagging
    both = why(stage(detach, retag))
    assert both.startswith("removes the table-level filters and masks")
    assert "It also retags columns" in both and "governed tags and ABAC policies" in both
    assert why(replace(stage(retag), kind="apply")) == WHY["apply"]


def test_build_plan_is_deterministic_for_handover() -> None:
    base = lower_all(project(edited(PLAN_BASE)))
    head = lower_all(project(edited(edited(PLAN_BASE), _abac)))
    one = build_plan(base, head, {})
    two = build_plan(base, head, {})
    assert [[s.sql for s in st.steps] for st in one.stages] == [
        [s.sql for s in st.steps] for st in two.stages
    ]


# --------------------------------------------------------------------------------------------
# item 5: re-running compiled SQL. "using CREATE OR REPLACE ROW ACCESS POLICY is not supported
# if the policy is attached" (sql-reference/sql/alter-row-access-policy); CREATE OR ALTER
# {MASKING | ROW ACCESS} POLICY changes body and comment in place (create-masking-policy,
# create-row-access-policy). CREATE OR REPLACE FUNCTION without COPY GRANTS drops the
# function's grants; COPY GRANTS sits between the argument list and RETURNS
# (sql-reference/sql/create-function).


def test_snowflake_policies_are_created_or_altered_and_functions_keep_their_grants() -> None:
    from accord.compiler.sqlscan import scan
    from accord.targets.render import render_files

    estate = edited(PLAN_BASE)
    estate["masks"]["subject"]["salt"] = {"snowflake": "env:S1", "databricks": "env:S2"}
    files = render_files(project(estate), "snowflake")
    policies = (
        files["snowflake/030_row_access_policies.sql"] + files["snowflake/040_masking_policies.sql"]
    )
    kinds = [s.kind for s in scan(policies, "p.sql", "snowflake").statements]
    assert kinds and set(kinds) <= {"row_access_policy", "masking_policy"}
    assert "CREATE OR REPLACE" not in policies
    assert policies.count("CREATE OR ALTER ") == len(kinds)
    salts = files["snowflake/020_salt_functions.sql"]
    for statement in scan(salts, "s.sql", "snowflake").statements:
        assert statement.kind == "function"
    assert "SUBJECT_SALT()\n  COPY GRANTS\n  RETURNS VARCHAR" in salts


# --------------------------------------------------------------------------------------------
# item 4: role-name case. Snowflake stores an unquoted role name upper-case, and
# IS_ROLE_IN_SESSION('<literal>') needs "the same casing as how the role is stored"
# (docs.snowflake.com/en/sql-reference/functions/is_role_in_session).


def test_lower_case_snowflake_role_is_refused_with_its_location_and_the_fix() -> None:
    from accord.compiler.core.errors import InputError

    estate = edited(PLAN_BASE)
    estate["principals"]["steward"]["snowflake"] = "steward"
    with pytest.raises(InputError) as err:
        project(estate)
    text = str(err.value)
    assert "estate.yaml:" in text and "principals.steward.snowflake" in text
    assert "Write 'STEWARD'" in text


def test_verify_resolves_role_names_in_the_stored_case(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A compiled policy naming the role in lower case matches nobody on Snowflake: verify
    fails for the entitled persona."""
    from accord.compiler.core.outdir import write_tree
    from accord.compiler.model.validate import load_project
    from accord.compiler.verify.run import verify
    from accord.targets.render import render_files

    policies = ROOT / "policies"
    out = tmp_path / "out"
    write_tree(out, render_files(load_project(policies), "all"))
    masks = out / "snowflake/040_masking_policies.sql"
    text = masks.read_text()
    assert "IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED')" in text
    masks.write_text(text.replace("'CLINICAL_UNBLINDED'", "'clinical_unblinded'"))
    report = verify(load_project(policies), str(out))
    assert any(m.persona == "clinical_pharmacologist" for m in report.mismatches)


# --------------------------------------------------------------------------------------------
# item 7: every check accord writes runs against a stand-in answering in the documented shape


def _policy_references(check_sql: str, rows: list[dict]) -> bool:  # type: ignore[type-arg]
    """Run a Snowflake POLICY_REFERENCES check on DuckDB: the TABLE(...POLICY_REFERENCES(...))
    source is replaced by a table with the documented columns (POLICY_DB, POLICY_SCHEMA,
    POLICY_NAME, POLICY_KIND, REF_COLUMN_NAME, TAG_DATABASE, TAG_SCHEMA, TAG_NAME,
    POLICY_STATUS: sql-reference/functions/policy_references)."""
    import duckdb
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(check_sql, read="snowflake")
    source = tree.args["from_"].this
    source.replace(exp.to_table("policy_references"))
    con = duckdb.connect()
    columns = [
        "POLICY_DB", "POLICY_SCHEMA", "POLICY_NAME", "POLICY_KIND", "REF_COLUMN_NAME",
        "TAG_DATABASE", "TAG_SCHEMA", "TAG_NAME", "POLICY_STATUS",
    ]  # fmt: skip
    con.execute(f"CREATE TABLE policy_references ({', '.join(c + ' VARCHAR' for c in columns)})")
    for row in rows:
        con.execute(
            "INSERT INTO policy_references VALUES (" + ", ".join("?" for _ in columns) + ")",
            [row.get(c) for c in columns],
        )
    (ok,) = con.execute(tree.sql("duckdb")).fetchone()  # type: ignore[misc]
    return bool(ok)


def test_snowflake_checks_run_against_a_policy_references_double() -> None:
    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), _tag_style))
    stage = next(s for s in _stages(plan, "snowflake") if s.kind == "apply")
    by_comment = {c.comment: c.sql for c in stage.checks}
    removed = by_comment["mask of DB.S.T.NOTES is removed"]
    active = by_comment[
        "the masking policy of tag GOV.POL.ACCORD_MASK_NOTES is active on DB.S.T.NOTES"
    ]
    tag_based = {
        "POLICY_DB": "GOV", "POLICY_SCHEMA": "POL", "POLICY_NAME": "NOTES_MASK",
        "POLICY_KIND": "MASKING_POLICY", "REF_COLUMN_NAME": "NOTES", "TAG_DATABASE": "GOV",
        "TAG_SCHEMA": "POL", "TAG_NAME": "ACCORD_MASK_NOTES", "POLICY_STATUS": "ACTIVE",
    }  # fmt: skip
    direct = {**tag_based, "TAG_DATABASE": None, "TAG_SCHEMA": None, "TAG_NAME": None}
    # the deployment as planned: only the tag-based mask
    assert _policy_references(removed, [tag_based]) is True
    assert _policy_references(active, [tag_based]) is True
    # the direct mask is still there, or the tag-based one is not active
    assert _policy_references(removed, [tag_based, direct]) is False
    assert _policy_references(active, [direct]) is False
    assert (
        _policy_references(
            active,
            [{**tag_based, "POLICY_STATUS": "MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN"}],
        )
        is False
    )


def test_databricks_metadata_checks_read_the_documented_table_info() -> None:
    from databricks.sdk.service.catalog import TableInfo

    from accord.targets import checks as stage_checks
    from accord.targets.databricks import checks as metadata

    info = TableInfo.from_dict(
        {
            "full_name": "cat.s.t",
            "row_filter": {"function_name": "gov.pol.f", "input_column_names": ["programme"]},
            "columns": [
                {"name": "notes", "mask": {"function_name": "gov.pol.m", "using_column_names": []}},
                {"name": "programme"},
            ],
        }
    )
    check = stage_checks.MetadataCheck
    assert metadata.evaluate(check("row_filter", "cat.s.t", None, "gov.pol.f"), info)
    assert not metadata.evaluate(check("row_filter", "cat.s.t", None, "gov.pol.g"), info)
    assert not metadata.evaluate(check("row_filter", "cat.s.t", None, None), info)
    assert metadata.evaluate(check("mask", "cat.s.t", "notes", "gov.pol.m"), info)
    assert metadata.evaluate(check("mask", "cat.s.t", "programme", None), info)
    assert not metadata.evaluate(check("mask", "cat.s.t", "programme", "gov.pol.m"), info)
    assert not metadata.evaluate(check("mask", "cat.s.t", "missing", None), info)
    line = check("mask", "cat.s.t", "notes", "gov.pol.m").line()
    assert stage_checks.parse(f"-- x\n{line}\nSELECT 1;") == [
        check("mask", "cat.s.t", "notes", "gov.pol.m")
    ]


# --------------------------------------------------------------------------------------------
# items 10 and 12: comments that are true


def test_salt_function_headers_say_who_can_read_the_salt() -> None:
    """A secure function hides its body, "but any role with USAGE on it can call it"
    (sql-reference/sql/create-function, secure UDFs); on Databricks, EXECUTE."""
    from accord.targets.render import render_files

    estate = edited(PLAN_BASE)
    estate["masks"]["subject"]["salt"] = {"snowflake": "env:S1", "databricks": "env:S2"}
    files = render_files(project(estate), "all")
    sf = files["snowflake/020_salt_functions.sql"]
    assert "any role with USAGE on it can call it and read\n-- the salt" in sf
    dbx = files["databricks/020_salt_functions.sql"]
    assert "Anyone with EXECUTE on this function\n-- can call it and read the salt" in dbx


def test_governed_tags_name_create_governed_tag() -> None:
    """CREATE GOVERNED TAG exists from Runtime 18.1 (no IF NOT EXISTS: ALREADY_EXISTS)."""
    from accord.targets.render import render_files

    text = render_files(project(edited(edited(PLAN_BASE), _abac)), "databricks")[
        "databricks/045_tags.sql"
    ]
    assert "-- Runtime 18.1+: CREATE GOVERNED TAG accord_mask VALUES ('notes', 'subject');" in text
    assert "no SQL statement creates" not in text


def test_a_plan_from_a_model_base_names_create_governed_tag_and_checks_the_tag() -> None:
    """A model base says nothing about the account's governed tags (they are account-level,
    possibly another team's), so CREATE GOVERNED TAG, which fails with ALREADY_EXISTS
    (sql-ref-syntax-ddl-create-governed-tag), is named for the account admin, not run; the
    stage's check reads the tag with ``tag_policies.get_tag_policy`` and fails until it exists
    with the model's values (ABAC matches governed tags only: unity-catalog/abac). A plan from
    a live base runs the statement: tests/test_live_e2e.py."""
    from accord.targets.checks import parse

    plan = plan_between(edited(PLAN_BASE), edited(edited(PLAN_BASE), _abac))
    sqls = "\n".join(statements(plan, "databricks"))
    assert "-- Runtime 18.1+: CREATE GOVERNED TAG accord_mask VALUES ('notes', 'subject');" in sqls
    assert not any(line.startswith("CREATE GOVERNED TAG") for line in sqls.splitlines())
    checks = [
        c
        for stage in plan.stages
        if stage.platform == "databricks"
        for c in parse("\n".join(check.sql for check in stage.checks))
        if c.kind == "governed_tag"
    ]
    assert sorted((c.tag, c.values) for c in checks) == [
        ("accord_mask", ("notes", "subject")),
        ("accord_row_key", ("programme",)),
    ]


# --------------------------------------------------------------------------------------------
# item 3: what the documentation leaves open and would leak, warned about (ACC505, ACC506)


def _lake(style: str, identity: str = "service", salt: bool = True) -> dict:
    estate = edited(edited(PLAN_BASE), lambda e: e["platforms"]["databricks"].update(style=style))
    if salt:
        estate["masks"]["subject"]["salt"] = {"snowflake": "env:S1", "databricks": "env:S2"}
    estate["surfaces"] = {
        "export": {"platform": "databricks", "reads": ["lake"], "identity": identity}
    }
    return estate


@pytest.mark.parametrize(
    ("case", "estate", "rule", "where"),
    [
        (
            "service identity under abac",
            _lake("abac"),
            "ACC505",
            ("surfaces", "export", "identity"),
        ),
        ("caller identity under abac", _lake("abac", "caller"), "ACC505", None),
        ("service identity, table style", _lake("table"), "ACC505", None),
        ("salted mask under abac", _lake("abac"), "ACC506", ("masks", "subject", "salt")),
        ("unsalted mask under abac", _lake("abac", salt=False), "ACC506", None),
        ("salted mask, table style", _lake("table"), "ACC506", None),
    ],
)
def test_unconfirmed_abac_leaks_are_warned(
    tmp_path, case: str, estate: dict, rule: str, where
) -> None:  # type: ignore[no-untyped-def]
    from accord.compiler.lint.engine import lint_project
    from accord.compiler.model.validate import load_project
    from tests.estates import write_estate

    proj = load_project(write_estate(tmp_path, estate, name="policy.yaml"))
    found = [f for f in lint_project(proj) if f.rule == rule]
    if where is None:
        assert found == [], case
        return
    assert [f.location for f in found] == [proj.loc(*where)], case
    assert found[0].severity == "warning" and found[0].fix


# --------------------------------------------------------------------------------------------
# item 13: validation that catches what the platform would reject


def _policies_with(tmp_path, edit) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    from tests.cli import run_cli

    out = tmp_path / "policies"
    out.mkdir()
    for f in (ROOT / "policies").glob("*.yaml"):
        (out / f.name).write_text(edit(f.name, f.read_text()))
    code, _, err = run_cli(["validate", str(out)])
    return code, err


@pytest.mark.parametrize(
    ("case", "file", "old", "new", "message"),
    [
        (
            "runtime 16.10 unquoted",
            "surfaces.yaml",
            'runtime: "15.4"',
            "runtime: 16.10",
            'e.g. "16.10"',
        ),
        (
            "a type with a comma in a flow mapping",
            "datasets.yaml",
            "NOTES: {type: VARCHAR, mask: free_text}",
            "NOTES: {type: NUMBER(10,2)}",
            """quote it, {type: "NUMBER(10,2)"}""",
        ),
        (
            "Snowflake NUMBER on a Databricks dataset",
            "datasets.yaml",
            "gene_symbol: {type: STRING}",
            "gene_symbol: {type: NUMBER}",
            "is a Snowflake type, not a databricks one: write DECIMAL(p, s)",
        ),
        (
            "a Snowflake NUMBER of more than 38 digits",
            "datasets.yaml",
            "NOTES: {type: VARCHAR, mask: free_text}",
            'NOTES: {type: "NUMBER(50,2)", mask: free_text}',
            "'NUMBER(50,2)': the precision must be 1 to 38 on snowflake, not 50",
        ),
        (
            "a Snowflake VARCHAR longer than Snowflake stores",
            "datasets.yaml",
            "NOTES: {type: VARCHAR, mask: free_text}",
            "NOTES: {type: VARCHAR(99999999999), mask: free_text}",
            "the length must be at most 134,217,728 on snowflake, not 99999999999",
        ),
        (
            "a Databricks DECIMAL whose scale passes its precision",
            "datasets.yaml",
            "gene_symbol: {type: STRING}",
            'gene_symbol: {type: "DECIMAL(10,12)"}',
            "the scale must be 0 to 10 on databricks (precision 10), not 12",
        ),
        (
            "Databricks STRUCT on a Snowflake dataset",
            "datasets.yaml",
            "NOTES: {type: VARCHAR, mask: free_text}",
            "NOTES: {type: 'STRUCT<a: INT>'}",
            "is a Databricks type, not a snowflake one",
        ),
    ],
)
def test_validation_catches_what_the_platform_rejects(
    tmp_path, case: str, file: str, old: str, new: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    def edit(name: str, text: str) -> str:
        if name != file:
            return text
        assert old in text, case
        return text.replace(old, new, 1)

    code, err = _policies_with(tmp_path, edit)
    assert code == 2, case
    assert message in err, err
    assert f"{file}:" in err


def test_index_column_must_be_a_column_of_its_source(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from accord.compiler.core.errors import InputError

    estate = edited(PLAN_BASE)
    estate["indexes"] = {
        "search": {
            "platform": "snowflake",
            "kind": "cortex_search",
            "source": "wh",
            "columns": ["NOTEZ"],
        }
    }
    with pytest.raises(InputError) as err:
        project(estate)
    assert "estate.yaml:" in str(err.value)
    assert "NOTEZ is not a column of dataset wh (did you mean 'NOTES'?)" in str(err.value)
    estate["indexes"]["search"]["columns"] = ["NOTES"]
    project(estate)


# --------------------------------------------------------------------------------------------
# item 2: Terraform changes that swap protection in two steps are refused. `snowflake_tag`:
# "provider v2.11 unsets the removed policies and then sets the added ones, without FORCE"
# (snowflakedb/terraform-provider-snowflake pkg/resources/tag.go). Plan JSON in the format of
# `terraform show -json` (developer.hashicorp.com/terraform/internals/json-format).


def _rc(
    kind: str, actions: list[str], before: dict | None, after: dict | None, unknown=None
) -> dict:  # type: ignore[no-untyped-def]
    return {
        "address": f"{kind}.x",
        "type": kind,
        "change": {
            "actions": actions,
            "before": before,
            "after": after,
            "after_unknown": unknown or {},
        },
    }


def _rows(actions: list[str], revert: str) -> dict:  # type: ignore[type-arg]
    """A mapping table's rows resource (targets/snowflake/terraform.py names it ``<table>__rows``)."""
    change = _rc(
        "snowflake_execute",
        actions,
        {"execute": "INSERT OVERWRITE INTO t VALUES (1)", "revert": revert},
        {"execute": "INSERT OVERWRITE INTO t VALUES (2)", "revert": "SELECT 1"},
    )
    return {**change, "address": "snowflake_execute.GOV_POL_GRANTS__rows"}


RAP = {"execute": "ALTER TABLE DB.S.T ADD ROW ACCESS POLICY GOV.POL.P ON (C)", "revert": "x"}


@pytest.mark.parametrize(
    ("case", "change", "refused"),
    [
        (
            "tag policies changed",
            _rc(
                "snowflake_tag",
                ["update"],
                {"masking_policies": ["a"]},
                {"masking_policies": ["b"]},
            ),
            True,
        ),
        (
            "tag comment changed",
            _rc(
                "snowflake_tag",
                ["update"],
                {"masking_policies": ["a"], "comment": "x"},
                {"masking_policies": ["a"], "comment": "y"},
            ),
            False,
        ),
        ("tag created", _rc("snowflake_tag", ["create"], None, {"masking_policies": ["b"]}), False),
        (
            "tag policies unknown after",
            _rc(
                "snowflake_tag",
                ["update"],
                {"masking_policies": ["a"]},
                {},
                {"masking_policies": True},
            ),
            True,
        ),
        (
            "mask application replaced",
            _rc(
                "snowflake_table_column_masking_policy_application",
                ["delete", "create"],
                {"masking_policy": "a"},
                {"masking_policy": "b"},
            ),
            True,
        ),
        (
            "mask application created",
            _rc(
                "snowflake_table_column_masking_policy_application",
                ["create"],
                None,
                {"masking_policy": "b"},
            ),
            False,
        ),
        (
            "mask application deleted",
            _rc(
                "snowflake_table_column_masking_policy_application",
                ["delete"],
                {"masking_policy": "a"},
                None,
            ),
            False,
        ),
        (
            "row access attachment replaced",
            _rc(
                "snowflake_execute",
                ["delete", "create"],
                RAP,
                {**RAP, "execute": "ALTER TABLE DB.S.T ADD ROW ACCESS POLICY GOV.POL.Q ON (C)"},
            ),
            True,
        ),
        (
            "grants rows replaced, new rows first, revert a read (what accord writes)",
            _rows(["create", "delete"], "SELECT 1"),
            False,
        ),
        (
            "grants rows replaced, old rows destroyed first",
            _rows(["delete", "create"], "SELECT 1"),
            True,
        ),
        (
            "grants rows replaced, new first, but the old revert deletes the rows",
            _rows(["create", "delete"], "DELETE FROM GOV.POL.GRANTS"),
            True,
        ),
        (
            "grants rows created",
            _rc("snowflake_execute", ["create"], None, {"execute": "x"}),
            False,
        ),
        (
            "no-op",
            _rc(
                "snowflake_tag", ["no-op"], {"masking_policies": ["a"]}, {"masking_policies": ["a"]}
            ),
            False,
        ),
    ],
)
def test_terraform_plan_changes_that_unprotect_are_refused(
    case: str, change: dict, refused: bool
) -> None:
    from accord.targets.terraform.guard import unsafe_changes

    found = unsafe_changes({"format_version": "1.2", "resource_changes": [change]})
    assert bool(found) is refused, case
    if refused:
        assert found[0].startswith(change["address"] + ": ")


def test_accord_terraform_plan_refuses_and_saves_nothing(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from accord.compiler.commands import terraform as tf
    from tests.cli import run_cli

    work = tmp_path / "out" / "terraform"
    work.mkdir(parents=True)
    (work / "main.tf.json").write_text("{}")
    plan = {
        "resource_changes": [
            _rc(
                "snowflake_tag",
                ["update"],
                {"masking_policies": ["a"]},
                {"masking_policies": ["b"]},
            )
        ]
    }

    def fake_run(workdir, step, *args, switches=(), **options):  # type: ignore[no-untyped-def]
        if step == "plan":
            (workdir / tf.PLAN_FILE).write_bytes(b"plan")
            return tf.PLAN_CHANGES, "changes", ""
        if step == "show":
            assert args == (tf.PLAN_FILE,) and "json" in switches
            return 0, json.dumps(plan), ""
        return 0, "", ""

    monkeypatch.setattr(tf, "run", fake_run)
    code, _, err = run_cli(["terraform", "plan", str(tmp_path / "out")])
    assert code == 1
    assert "accord: refused: snowflake_tag.x: the tag's masking policies change" in err
    assert "accord plan" in err
    assert not (work / tf.PLAN_FILE).exists() and not (work / tf.DIGEST_FILE).exists()
    plan["resource_changes"] = []
    assert run_cli(["terraform", "plan", str(tmp_path / "out")])[0] == 0
    assert (work / tf.DIGEST_FILE).exists()


# --------------------------------------------------------------------------------------------
# item 11: accord_apply_as_sql names only files that are written; providers pinned


def test_terraform_alone_writes_the_sql_files_it_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from accord.compiler.model.validate import load_project
    from accord.targets.render import render_files

    for target in ("terraform", "all"):
        files = render_files(load_project(ROOT / "policies"), target)
        doc = json.loads(files["terraform/main.tf.json"])
        named = doc["output"]["accord_apply_as_sql"]["value"]["databricks"]
        assert named and all(f in files for f in named), target
    abac_files = render_files(project(edited(edited(PLAN_BASE), _abac)), "terraform")
    providers = json.loads(abac_files["terraform/main.tf.json"])["terraform"]["required_providers"]
    assert providers["databricks"] == {"source": "databricks/databricks", "version": "1.128.0"}


def test_abac_policy_checks_read_the_documented_policy_info() -> None:
    from databricks.sdk.service.catalog import PolicyInfo

    from accord.targets import checks as stage_checks
    from accord.targets.databricks import checks as metadata

    listed = [
        PolicyInfo.from_dict(
            {
                "name": "accord_notes_mask",
                "on_securable_type": "SCHEMA",
                "on_securable_fullname": "cat.s",
                "policy_type": "POLICY_TYPE_COLUMN_MASK",
                "to_principals": ["account users"],
                "for_securable_type": "TABLE",
                "column_mask": {"function_name": "gov.pol.notes_mask", "on_column": "c"},
            }
        )
    ]

    def check(function: str | None, name: str = "accord_notes_mask") -> stage_checks.MetadataCheck:
        return stage_checks.MetadataCheck("abac_policy", "cat.s", None, function, name, "SCHEMA")

    assert metadata.evaluate_policies(check("gov.pol.notes_mask"), listed)
    assert not metadata.evaluate_policies(check("gov.pol.other"), listed)
    assert not metadata.evaluate_policies(check(None), listed)
    assert metadata.evaluate_policies(check(None, "accord_gone"), listed)
    assert stage_checks.parse(check("gov.pol.notes_mask").line()) == [check("gov.pol.notes_mask")]


def test_a_window_the_plan_cannot_avoid_is_in_the_stage_header() -> None:
    """Table level to ABAC with different functions: once the tags take effect, the table
    carries both until the handover stage (abac/abac-vs-rls-cm: access is blocked)."""
    from accord.compiler.plan.write import render_plan

    base = edited(PLAN_BASE)
    base["datasets"]["lake"]["row_filter"]["unfiltered_for"] = ["steward"]
    plan = plan_between(base, edited(base, _abac))
    files = render_plan(plan, "0001_x")
    header = next(t for n, t in files.items() if n.endswith("databricks_apply.sql"))
    assert (
        "-- Before you run it: until the next stage of this platform has run, queries may be"
        in header
    )
    assert "programme_row_filter_except_steward" in header
    handover = next(t for n, t in files.items() if n.endswith("databricks_handover.sql"))
    assert "DROP ROW FILTER" in handover
    # its header says what it hands over: table-level policies, no retag
    said = " ".join(ln.removeprefix("-- ") for ln in handover.splitlines() if ln.startswith("--"))
    assert "Why this stage: it removes the table-level filters and masks" in said
    assert "retags" not in said


def test_an_unavoidable_loss_of_access_is_said_in_the_stage_header() -> None:
    """Two columns swap masks whose bodies change in opposite ways: every order of single
    statements leaves someone without access they have before and after, for a statement."""
    base = edited(PLAN_BASE)
    base["masks"] = {
        "h": {"strategy": "redact", "unmasked_for": ["analyst", "steward"]},
        "r": {"strategy": "redact", "unmasked_for": ["partner"]},
    }
    base["principals"]["partner"] = {"snowflake": "PARTNER", "databricks": "partners"}
    base["datasets"] = {
        "wh": {
            "platform": "snowflake",
            "table": "DB.S.A",
            "columns": {
                "C1": {"type": "VARCHAR", "mask": "r"},
                "C2": {"type": "VARCHAR", "mask": "h"},
            },
        }
    }
    base["platforms"].pop("databricks")
    head = edited(base, lambda e: None)
    head["masks"]["h"]["unmasked_for"] = ["analyst", "partner"]
    head["masks"]["r"]["unmasked_for"] = ["analyst", "steward"]
    head["datasets"]["wh"]["columns"] = {
        "C1": {"type": "VARCHAR", "mask": "h"},
        "C2": {"type": "VARCHAR", "mask": "r"},
    }
    plan = plan_between(base, head)
    (stage,) = plan.stages
    assert any("may not see the clear values of DB.S.A." in n for n in stage.notes), stage.notes


def test_tag_checks_read_the_documented_entity_tag_assignments() -> None:
    from databricks.sdk.service.catalog import EntityTagAssignment

    from accord.targets import checks as stage_checks
    from accord.targets.databricks import checks as metadata

    listed = [
        EntityTagAssignment.from_dict(
            {"entity_type": "columns", "entity_name": "cat.s.t.notes", "tag_key": "accord_mask",
             "tag_value": "notes"}
        )
    ]  # fmt: skip

    def check(value: str | None, tag: str = "accord_mask") -> stage_checks.MetadataCheck:
        return stage_checks.MetadataCheck("tag", "cat.s.t", "notes", None, tag=tag, value=value)

    assert metadata.evaluate_tags(check("notes"), listed)
    assert not metadata.evaluate_tags(check("subject"), listed)
    assert not metadata.evaluate_tags(check(None), listed)
    assert metadata.evaluate_tags(check(None, "accord_row_key"), listed)
    assert stage_checks.parse(check("notes").line()) == [check("notes")]


def _rows_resources(estate: dict) -> tuple[dict, str]:  # type: ignore[type-arg]
    """The Snowflake mapping table's DDL and its rows resource, as `accord compile` writes them."""
    from accord.targets.render import render_files
    from tests.plan_helpers import project

    doc = json.loads(render_files(project(estate), "terraform")["terraform/main.tf.json"])
    (rows,) = [
        body
        for name, body in doc["resource"]["snowflake_execute"].items()
        if name.endswith("__rows")
    ]
    return rows, "CREATE TABLE GOV.POL.PROGRAMME_GRANTS (PROGRAMME_CODE VARCHAR, ROLE_NAME VARCHAR)"


@pytest.mark.parametrize("after", ["one more grant", "no grants at all"])
def test_terraform_grants_change_never_empties_the_mapping_table(after: str) -> None:
    """Issue 10 item 12. The provider forces a new ``snowflake_execute`` when ``execute``
    changes and runs ``revert`` when one is destroyed (terraform-provider-snowflake
    pkg/resources/execute.go). accord writes the rows with ``create_before_destroy``: Terraform
    runs the new ``execute`` (one ``INSERT OVERWRITE``, which replaces the rows within one
    transaction: docs.snowflake.com/en/sql-reference/sql/insert), then the old ``revert``,
    which is a read. Replayed in that order on the Snowflake stand-in, the table never holds
    anything but the old rows or the new ones, and ends with the new ones."""
    from accord.sandbox.standins.snowflake import SnowflakeEstate

    def change(e: dict) -> None:  # type: ignore[type-arg]
        if after == "one more grant":
            e["entitlements"]["programme"]["P3"] = ["steward"]
        else:
            e["entitlements"]["programme"] = {"P1": [], "P2": []}

    old, ddl = _rows_resources(edited(PLAN_BASE))
    new, _ = _rows_resources(edited(edited(PLAN_BASE), change))
    assert old["lifecycle"] == {"create_before_destroy": True} == new["lifecycle"]
    assert old["execute"] != new["execute"]  # so the provider replaces the resource
    account = SnowflakeEstate()
    account.execute(ddl)
    read = "SELECT PROGRAMME_CODE, ROLE_NAME FROM GOV.POL.PROGRAMME_GRANTS ORDER BY 1, 2"
    account.execute(old["execute"])  # the first apply
    before = account.execute(read)[1]
    seen = []
    for statement in (new["execute"], old["revert"]):  # create_before_destroy's order
        account.execute(statement)
        seen.append(account.execute(read)[1])
    wanted = [("P1", "ANALYST"), ("P2", "ANALYST"), ("P2", "STEWARD"), ("P3", "STEWARD")]
    final = wanted if after == "one more grant" else []
    assert before and before != final
    assert seen == [final, final]


@pytest.mark.parametrize(
    ("account", "ok"),
    [
        (None, False),
        (("accord_mask", ("notes", "subject")), True),
        (("accord_mask", ("notes", "subject", "another_teams_value")), True),
        (("accord_mask", ("notes",)), False),
        (("ACCORD_MASK", ("notes", "subject")), False),
    ],
)
def test_the_governed_tag_check_reads_tag_policies(account: tuple | None, ok: bool) -> None:  # type: ignore[type-arg]
    """The check's passing and failing cases, on the SDK's ``TagPolicy`` shape
    (databricks-sdk service.tags: tag_key, values[Value(name)]). Keys and values are
    case-sensitive (admin/governed-tags/manage-governed-tags)."""
    from databricks.sdk.service.tags import TagPolicy, Value

    from accord.targets.checks import MetadataCheck
    from accord.targets.databricks.checks import evaluate_governed_tag

    check = MetadataCheck(
        "governed_tag", "", None, None, tag="accord_mask", values=("notes", "subject")
    )
    found = (
        None if account is None else TagPolicy(account[0], values=[Value(v) for v in account[1]])
    )
    assert evaluate_governed_tag(check, found) is ok


@pytest.mark.parametrize(
    ("kind", "applied_at", "now", "settle", "waits"),
    [
        ("handover", "2026-12-01T10:00:00+00:00", "2026-12-01T10:05:00+00:00", 15, True),
        ("handover", "2026-12-01T10:00:00+00:00", "2026-12-01T10:15:00+00:00", 15, False),
        ("handover", "2026-12-01T10:00:00+00:00", "2026-12-01T10:05:00+00:00", 0, False),
        ("handover", None, "2026-12-01T10:05:00+00:00", 15, False),
        ("retire", "2026-12-01T10:00:00+00:00", "2026-12-01T10:01:00+00:00", 15, False),
        ("apply", "2026-12-01T10:00:00+00:00", "2026-12-01T10:01:00+00:00", 15, False),
    ],
)
def test_a_handover_waits_for_governed_tags_to_take_effect(
    kind: str, applied_at: str | None, now: str, settle: float, waits: bool
) -> None:
    """ "After assigning or modifying a tag, it can take a few minutes for the change to take
    effect" (unity-catalog/abac/requirements). The handover stage drops the table-level
    protection the ABAC policies replace: ``migrate apply`` starts it only ``--abac-settle``
    minutes after the platform's previous stage was recorded applied."""
    from datetime import datetime
    from pathlib import Path

    from accord.compiler.history.ledger import Record, StageInfo
    from accord.compiler.plan.apply import settle_wait

    p = Path("x.sql")
    stage = StageInfo(
        "0001_x", f"03_databricks_{kind}", "databricks", None, p, "", p, "", p, "", kind
    )
    records = (
        [
            Record("0001_x", "02_databricks_apply", "databricks", "applied", applied_at, "", 1),
            Record("0001_x", "02_snowflake_apply", "snowflake", "applied", now, "", 2),
        ]
        if applied_at
        else []
    )
    why = settle_wait(stage, records, settle, datetime.fromisoformat(now))
    assert bool(why) is waits
    if waits:
        assert "waits until 2026-12-01T10:15:00+00:00" in why and "02_databricks_apply" in why


def test_the_reference_estate_moves_from_table_level_to_abac(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """policies/ (two lakehouse tables under schema-level ABAC policies) from table level to
    ABAC. Once the tagging stage's tags take effect, every table carries both mechanisms with
    different functions and Databricks refuses its queries (abac/abac-vs-rls-cm; said in that
    stage's header); the handover then removes the table-level side one table at a time. The
    simulator refused this plan while it counted the refusal the handover inherits as one the
    handover causes; it still refuses an outage a stage creates and leaves (item 8)."""
    import shutil

    from tests.cli import run_cli

    head = tmp_path / "abac"
    shutil.copytree(ROOT / "policies", head)
    p = head / "platforms.yaml"
    p.write_text(p.read_text().replace("style: table", "style: abac"))
    out = tmp_path / "m"
    code, _printed, err = run_cli(
        ["plan", str(head), "--base", f"dir:{ROOT / 'policies'}", "--out", str(out)]
    )
    assert code == 0, err
    (plan,) = out.glob("0001_*")
    stages = sorted(f.name for f in plan.glob("*.sql") if f.name.count(".") == 1)
    assert stages == [
        "01_databricks_prepare.sql",
        "02_databricks_apply.sql",
        "03_databricks_handover.sql",
        "04_databricks_retire.sql",
    ]
    apply_sql = (plan / "02_databricks_apply.sql").read_text()
    assert "queries may be refused" in apply_sql
    handover = (plan / "03_databricks_handover.sql").read_text()
    assert "ALTER TABLE discovery_lake.assays.results DROP ROW FILTER;" in handover
    assert "ALTER TABLE omics.variants.calls DROP ROW FILTER;" in handover
