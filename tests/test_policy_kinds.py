"""Snowflake's projection, aggregation and join policies (issue 40, items 1-4 and 6): the model
validates them, compiles them to the forms Snowflake documents and to Terraform, reads its own
SQL back, plans their changes without an unprotected window, judges them by the order of
dispositions (ACC403, `accord diff`, probes) and verifies the compiled bodies on DuckDB.

Each case runs on a copy of the reference estate (policies/), whose trial_outcomes dataset
carries all three kinds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from accord.compiler.meaning import semantics
from accord.compiler.meaning.divergence import divergences
from accord.compiler.meaning.order import compare
from accord.compiler.model.validate import load_project
from accord.compiler.sqlscan import scan
from accord.compiler.verify.constraints import constraint_value
from accord.targets import lower_all
from accord.targets.identity import describe_object
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    JoinAttachment,
    JoinPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
)
from accord.targets.platform import platform
from accord.targets.read import Placements
from accord.targets.terraform.guard import unsafe_changes
from tests.cli import run_cli
from tests.conftest import ROOT

OUTCOMES = "trial_outcomes"


def estate(tmp_path: Path, *edits: tuple[str, str, str]) -> Path:
    """A copy of policies/ with each (file, old, new) edit made."""
    d = tmp_path / "policies"
    if not d.exists():
        shutil.copytree(ROOT / "policies", d)
    for file, old, new in edits:
        path = d / file
        text = path.read_text()
        assert old in text, old
        path.write_text(text.replace(old, new, 1))
    return d


AGG = "aggregation: {min_group_size: 10, unrestricted_for: [data_steward]}"
JOIN = "join: {allowed_join_keys: [PROGRAMME_CODE], unrestricted_for: [data_steward]}"
PROJ = "SUBJECT_ID: {type: VARCHAR, projection: {allowed_for: [clinical_unblinded]}}"


# --------------------------------------------------------------------------------------------
# the model


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (AGG, "aggregation: {min_group_size: 0}", "greater than or equal to 1"),
        (AGG, "aggregation: {min_group_size: 10, unrestricted_for: [nobody_here]}", "unknown principal 'nobody_here'"),
        (PROJ, "SUBJECT_ID: {type: VARCHAR, projection: {allowed_for: [clinical_unblinded], enforcement: hide}}", "'fail' or 'nullify'"),
        (JOIN, "join: {allowed_join_keys: [PROGRAMME_CODE, programme_code]}", "listed twice"),
    ],
)  # fmt: skip
def test_invalid_constraints_are_located_errors(
    tmp_path: Path, old: str, new: str, says: str
) -> None:
    d = estate(tmp_path, ("datasets.yaml", old, new))
    code, _, err = run_cli(["validate", str(d)])
    assert code == 2 and says in err, err
    assert "datasets.yaml:" in err and "Traceback" not in err


def test_constraints_exist_on_snowflake_only(tmp_path: Path) -> None:
    d = estate(
        tmp_path,
        (
            "datasets.yaml",
            "    table: omics.variants.calls\n",
            "    table: omics.variants.calls\n    aggregation: {min_group_size: 5}\n",
        ),
    )
    code, _, err = run_cli(["validate", str(d)])
    assert code == 2
    assert "aggregation policies exist on Snowflake only; variant_calls is on Databricks" in err


# --------------------------------------------------------------------------------------------
# compile, read back, Terraform


def test_each_kind_compiles_to_the_documented_form_and_reads_back() -> None:
    objects = lower_all(load_project(ROOT / "policies"))["snowflake"]
    target = platform("snowflake").target()
    kinds = {type(o): o for o in objects}
    for cls in (ProjectionPolicy, AggregationPolicy, JoinPolicy):
        assert cls in kinds, cls
    text = {cls: target.render_object(kinds[cls])[1] for cls in kinds}  # type: ignore[index]
    assert text[ProjectionPolicy].startswith(
        "CREATE OR REPLACE PROJECTION POLICY GOVERNANCE.POLICIES."
        "PROJECTION_ALLOWED_FOR_CLINICAL_UNBLINDED\n  AS () RETURNS PROJECTION_CONSTRAINT ->"
    )
    assert (
        "ELSE PROJECTION_CONSTRAINT(ALLOW => FALSE, ENFORCEMENT => 'FAIL')"
        in text[ProjectionPolicy]
    )
    assert "THEN NO_AGGREGATION_CONSTRAINT()" in text[AggregationPolicy]
    assert "AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 10)" in text[AggregationPolicy]
    assert "JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)" in text[JoinPolicy]
    assert text[JoinAttachment] == (
        "ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES SET JOIN POLICY "
        "GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD ALLOWED JOIN KEYS (PROGRAMME_CODE);"
    )
    # the body of a join policy holds no table or function of its own (create-join-policy)
    assert "GOVERNANCE." not in text[JoinPolicy].split("->", 1)[1]
    placed = Placements("snowflake")
    for cls in (ProjectionAttachment, AggregationAttachment, JoinAttachment):
        for stmt in scan(text[cls], "a.sql", "snowflake").statements:
            assert placed.read(stmt)
    assert {type(o) for o in placed.objects()} == {
        ProjectionAttachment,
        AggregationAttachment,
        JoinAttachment,
    }
    for cls in (ProjectionPolicy, AggregationPolicy, JoinPolicy):
        read = scan(text[cls], "p.sql", "snowflake")
        assert (
            read.errors == ()
            and read.statements[0].kind == cls.__name__.replace("Policy", "_policy").lower()
        )


def test_describe_names_each_kind() -> None:
    objects = lower_all(load_project(ROOT / "policies"))["snowflake"]
    said = {describe_object(o, "snowflake") for o in objects}
    assert "projection policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES.SUBJECT_ID" in said
    assert "aggregation policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES" in said
    assert "join policy GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD" in said


def test_terraform_executes_them_and_the_guard_refuses_a_replacement(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(["compile", str(ROOT / "policies"), "--out", str(out)])
    assert code == 0, err
    doc = json.loads((out / "terraform" / "main.tf.json").read_text())
    execute = doc["resource"]["snowflake_execute"]
    attach = execute["clinical__outcomes__trial_outcomes__aggregation_policy"]
    assert (
        attach["revert"] == "ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES UNSET AGGREGATION POLICY"
    )
    assert attach["depends_on"] == [
        "snowflake_execute.governance__policies__aggregation_min_10_except_data_steward"
    ]
    plan = {
        "resource_changes": [
            {
                "address": "snowflake_execute.x",
                "type": "snowflake_execute",
                "name": "x",
                "change": {
                    "actions": ["delete", "create"],
                    "before": {"execute": attach["execute"], "revert": attach["revert"]},
                    "after": {"execute": attach["execute"].replace("MIN_10", "MIN_5")},
                },
            }
        ]
    }
    refused = unsafe_changes(plan)
    assert len(refused) == 1 and "accord plan changes it in place" in refused[0]


# --------------------------------------------------------------------------------------------
# the order of dispositions, ACC403, probes


@pytest.mark.parametrize(
    ("a", "b", "aspect", "found"),
    [
        ("clear", "masked", "column", "looser"),
        ("masked", "hidden", "column", "looser"),
        ("hidden", "clear", "column", "tighter"),
        ("aggregated", "masked", "column", "incomparable"),
        ("aggregated", "clear", "rows", "tighter"),
        ("aggregated", "denied", "rows", "looser"),
        ("aggregated", "filtered", "rows", "incomparable"),
        ("filtered", "denied", "rows", "looser"),
        ("empty", "denied", "rows", "tighter"),
        ("ungoverned", "clear", "rows", "looser"),
    ],
)
def test_the_documented_order_of_dispositions(a: str, b: str, aspect: str, found: str) -> None:
    assert compare(a, b, aspect) == found  # type: ignore[arg-type]


def test_dispositions_of_each_persona() -> None:
    model = load_project(ROOT / "policies").model
    cro = semantics.dataset_view(model, "cro_collaborator", OUTCOMES, "warehouse_agent")
    assert cro.row_disposition == "aggregated" and cro.rows.aggregated == 10
    assert cro.column("SUBJECT_ID").disposition == "hidden"  # type: ignore[union-attr]
    steward = semantics.dataset_view(model, "data_steward", OUTCOMES, "warehouse_agent")
    assert steward.row_disposition == "clear"  # unrestricted: row by row
    assert steward.column("SUBJECT_ID").disposition == "hidden"  # type: ignore[union-attr]
    unblinded = semantics.dataset_view(
        model, "clinical_pharmacologist", OUTCOMES, "warehouse_agent"
    )
    # may select it, but only in aggregates
    assert unblinded.column("SUBJECT_ID").disposition == "aggregated"  # type: ignore[union-attr]


def test_the_lakehouse_copy_of_an_aggregation_only_table_is_acc403() -> None:
    model = load_project(ROOT / "examples" / "as-found").model
    found = [d for d in divergences(model) if d.facts == ("dataset", OUTCOMES)]
    rows = {d.persona for d in found if d.aspect == "rows"}
    assert rows == {"bench_chemist", "clinical_pharmacologist", "cro_collaborator"}
    assert all(d.loose.surface == "lakehouse_agent" for d in found)
    detail = next(d.detail for d in found if d.aspect == "rows")
    assert "only in aggregates over groups of at least 5 rows" in detail
    columns = [d for d in found if d.aspect == "column" and d.persona == "cro_collaborator"]
    assert "SUBJECT_ID is hidden on warehouse_agent" in columns[0].detail


def test_row_by_row_filtered_against_aggregated_is_incomparable_and_named(tmp_path: Path) -> None:
    """A replica filtered by programme, row by row, beside the original answered in
    aggregates of every programme: neither is tighter, and ACC403 names both."""
    d = estate(
        tmp_path,
        (
            "datasets.yaml",
            "  # Public reference annotations",
            "  trial_outcomes_lake:\n    platform: databricks\n"
            "    table: clinical_lake.outcomes.trial_outcomes\n    replica_of: trial_outcomes\n"
            "    row_filter: {entitlement: programme, column: programme_code}\n"
            "    columns:\n      subject_id: {type: STRING, mask: subject_pseudonym}\n\n"
            "  # Public reference annotations",
        ),
        (
            "surfaces.yaml",
            "reads: [variant_calls, assay_results_lake]",
            "reads: [variant_calls, assay_results_lake, trial_outcomes_lake]",
        ),
    )
    model = load_project(d).model
    found = [
        x
        for x in divergences(model, ["bench_chemist"])
        if x.facts == ("dataset", OUTCOMES) and x.aspect == "rows"
    ]
    assert len(found) == 1
    assert found[0].loose.surface == "lakehouse_agent"
    assert found[0].strict.surface == "warehouse_agent"
    assert "neither answers less than the other" in found[0].detail
    code, out, _ = run_cli(["lint", str(d), "--format", "json"])
    assert code == 1 and "ACC403" in {f["rule"] for f in json.loads(out)["findings"]}


PROBE = """\

  cro_reads_outcomes_only_in_aggregates:
    owner: clinical-data-office
    persona: cro_collaborator
    dataset: trial_outcomes
    expect:
      warehouse_agent: {rows}

  cro_cannot_select_outcome_subjects:
    owner: clinical-data-office
    persona: cro_collaborator
    dataset: trial_outcomes
    column: SUBJECT_ID
    expect:
      warehouse_agent: {column}
"""


@pytest.mark.parametrize(
    ("rows", "column", "code"),
    [("aggregated", "hidden", 0), ("clear", "hidden", 1), ("aggregated", "masked", 1)],
)
def test_probes_expect_hidden_and_aggregated(
    tmp_path: Path, rows: str, column: str, code: int
) -> None:
    d = estate(tmp_path)
    with (d / "probes.yaml").open("a") as f:
        f.write(PROBE.format(rows=rows, column=column))
    got, out, err = run_cli(["lint", str(d), "--format", "json"])
    assert got == code, out + err
    findings = [f for f in json.loads(out)["findings"] if f["rule"] == "ACC404"]
    assert bool(findings) == bool(code)


# --------------------------------------------------------------------------------------------
# accord diff


@pytest.mark.parametrize(
    ("old", "new", "kinds", "before", "after"),
    [
        (AGG, "aggregation: {min_group_size: 5, unrestricted_for: [data_steward]}", {"widening"}, "aggregated", "aggregated"),
        (AGG, "aggregation: {min_group_size: 20, unrestricted_for: [data_steward]}", {"narrowing"}, "aggregated", "aggregated"),
        ("    " + AGG + "\n", "", {"widening"}, "aggregated", "clear"),
        (PROJ, "SUBJECT_ID: {type: VARCHAR}", {"widening"}, "hidden", "aggregated"),
        (PROJ, "SUBJECT_ID: {type: VARCHAR, mask: subject_pseudonym, projection: {allowed_for: [cro_external]}}", {"widening"}, "hidden", "masked"),
    ],
)  # fmt: skip
def test_diff_ranks_changes_by_the_order_of_dispositions(
    tmp_path: Path, old: str, new: str, kinds: set[str], before: str, after: str
) -> None:
    base = estate(tmp_path / "b")
    head = estate(tmp_path / "h", ("datasets.yaml", old, new))
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "json"])
    assert code == 0, err
    mine = [
        c
        for c in json.loads(out)["changes"]
        if c["dataset"] == OUTCOMES
        and c.get("persona") == "cro_collaborator"
        and c.get("surface") == "warehouse_agent"
    ]
    assert {c["kind"] for c in mine} == kinds, mine
    assert any(c["before"].startswith(before) and c["after"].startswith(after) for c in mine)


def test_a_change_between_incomparable_answers_is_both(tmp_path: Path) -> None:
    """A masked column read row by row becoming a clear column read only in aggregates:
    neither is tighter (the order of dispositions), so the change is listed as a widening and
    as a narrowing."""
    exempt = "aggregation: {min_group_size: 10, unrestricted_for: [data_steward, cro_external]}"
    masked = "SUBJECT_ID: {type: VARCHAR, mask: subject_pseudonym}"
    base = estate(tmp_path / "b", ("datasets.yaml", AGG, exempt), ("datasets.yaml", PROJ, masked))
    head = estate(tmp_path / "h", ("datasets.yaml", PROJ, "SUBJECT_ID: {type: VARCHAR}"))
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "json"])
    assert code == 0, err
    column = [
        c
        for c in json.loads(out)["changes"]
        if c["dataset"] == OUTCOMES
        and c.get("persona") == "cro_collaborator"
        and c.get("surface") == "warehouse_agent"
        and c["column"] == "SUBJECT_ID"
    ]
    assert {c["kind"] for c in column} == {"widening", "narrowing"}
    assert all((c["before"], c["after"]) == ("masked", "aggregated") for c in column)


# --------------------------------------------------------------------------------------------
# accord verify: the compiled bodies executed on DuckDB


def test_constraint_functions_read_as_their_values() -> None:
    import sqlglot

    body = sqlglot.parse_one(
        "CASE WHEN IS_ROLE_IN_SESSION('A') THEN NO_AGGREGATION_CONSTRAINT() "
        "ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 7) END",
        read="snowflake",
    )
    assert constraint_value(body).sql("snowflake") == (
        "CASE WHEN IS_ROLE_IN_SESSION('A') THEN 0 ELSE 7 END"
    )
    proj = sqlglot.parse_one(
        "PROJECTION_CONSTRAINT(ALLOW => FALSE, ENFORCEMENT => 'NULLIFY')", read="snowflake"
    )
    assert (
        constraint_value(proj).sql("snowflake") == "CASE WHEN FALSE THEN 'ALLOW' ELSE 'NULLIFY' END"
    )


@pytest.mark.parametrize(
    ("file", "old", "new", "kind", "says"),
    [
        ("042_aggregation_policies.sql", "MIN_GROUP_SIZE => 10", "MIN_GROUP_SIZE => 3", "aggregation", "smaller than the model's minimum of 10"),
        ("042_aggregation_policies.sql", "ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 10)", "ELSE NO_AGGREGATION_CONSTRAINT()", "aggregation", "row by row"),
        ("041_projection_policies.sql", "ALLOW => FALSE, ENFORCEMENT => 'FAIL'", "ALLOW => TRUE", "projection", "can select trial_outcomes.SUBJECT_ID"),
        ("041_projection_policies.sql", "THEN PROJECTION_CONSTRAINT(ALLOW => TRUE)", "THEN PROJECTION_CONSTRAINT(ALLOW => FALSE)", "projection", "cannot select trial_outcomes.SUBJECT_ID"),
        ("050_attachments.sql", "ALLOWED JOIN KEYS (PROGRAMME_CODE)", "ALLOWED JOIN KEYS (PROGRAMME_CODE, SUBJECT_ID)", "join", "on a column the model's join policy does not allow"),
        ("043_join_policies.sql", "ELSE JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)", "ELSE JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)", "join", "without joining it"),
    ],
)  # fmt: skip
def test_verify_executes_each_kind_and_finds_an_edited_body(
    tmp_path: Path, file: str, old: str, new: str, kind: str, says: str
) -> None:
    out = tmp_path / "out"
    assert run_cli(["compile", str(ROOT / "policies"), "--out", str(out)])[0] == 0
    assert run_cli(["verify", str(ROOT / "policies"), "--compiled", str(out)])[0] == 0
    path = out / "snowflake" / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    code, report, err = run_cli(
        ["verify", str(ROOT / "policies"), "--compiled", str(out), "--format", "json"]
    )
    assert code == 1, err
    found = [m for m in json.loads(report)["mismatches"] if m["kind"] == kind]
    assert found and all(m["dataset"] == OUTCOMES for m in found)
    assert any(says in m["message"] for m in found), [m["message"] for m in found]


# --------------------------------------------------------------------------------------------
# accord plan: staged, no unprotected window, changed in place


def plan_text(tmp_path: Path, base: Path, head: Path) -> tuple[int, str]:
    out = tmp_path / "plans"
    code, stdout, err = run_cli(["plan", str(head), "--base", f"dir:{base}", "--out", str(out)])
    written = "\n".join(p.read_text() for p in sorted(out.rglob("*.sql"))) if out.exists() else ""
    return code, stdout + err + written


def test_a_new_minimum_swaps_the_aggregation_policy_in_one_statement(tmp_path: Path) -> None:
    base = estate(tmp_path / "b")
    head = estate(
        tmp_path / "h",
        (
            "datasets.yaml",
            AGG,
            "aggregation: {min_group_size: 20, unrestricted_for: [data_steward]}",
        ),
    )
    code, text = plan_text(tmp_path, base, head)
    assert code == 0, text
    create = text.index(
        "CREATE OR REPLACE AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_20"
    )
    swap = text.index(
        "SET AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_20_EXCEPT_DATA_STEWARD FORCE;"
    )
    drop = text.index(
        "DROP AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD;"
    )
    assert create < swap < drop  # created before it is attached, detached before it is dropped
    assert "UNSET AGGREGATION POLICY" not in text  # never a window without one


def test_a_body_change_is_made_in_place_never_by_replacing(tmp_path: Path) -> None:
    """Projection and join policies document CREATE [OR REPLACE], not OR ALTER: a body change
    of an attached one is ALTER ... SET BODY (alter-join-policy, alter-projection-policy)."""
    base = estate(tmp_path / "b")
    head = estate(
        tmp_path / "h",
        ("principals.yaml", "snowflake: DATA_STEWARD", "snowflake: DATA_STEWARDS"),
    )
    code, text = plan_text(tmp_path, base, head)
    assert code == 0, text
    assert (
        "ALTER JOIN POLICY GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD SET BODY ->"
        in text
    )
    assert (
        "ALTER AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD SET BODY ->"
        in text
    )
    assert "CREATE OR REPLACE JOIN POLICY" not in text


def test_removing_a_projection_policy_detaches_before_it_drops(tmp_path: Path) -> None:
    base = estate(tmp_path / "b")
    head = estate(tmp_path / "h", ("datasets.yaml", PROJ, "SUBJECT_ID: {type: VARCHAR}"))
    code, text = plan_text(tmp_path, base, head)
    assert code == 0, text
    unset = text.index("MODIFY COLUMN SUBJECT_ID UNSET PROJECTION POLICY;")
    drop = text.index(
        "DROP PROJECTION POLICY GOVERNANCE.POLICIES.PROJECTION_ALLOWED_FOR_CLINICAL_UNBLINDED;"
    )
    assert unset < drop


def test_the_simulator_refuses_an_attachment_before_its_policy() -> None:
    from accord.compiler.plan.state import State
    from accord.targets.objects import Catalog

    objects = lower_all(load_project(ROOT / "policies"))["snowflake"]
    attach = next(o for o in objects if isinstance(o, ProjectionAttachment))
    state = State.of(Catalog("snowflake", "GOVERNANCE.POLICIES", "column"), "snowflake")
    assert any("attached before it exists" in p for p in state.attach(attach, None))


def test_the_prover_refuses_a_window_without_the_aggregation_policy() -> None:
    """An aggregation (projection, join) policy held before and after a plan must be held at
    every statement: a detach is refused by the prover, a swap (SET ... FORCE) is not."""
    from accord.compiler.plan.prove import Prover
    from accord.compiler.plan.state import PlanError, State
    from accord.compiler.plan.steps import Statements

    catalog = lower_all(load_project(ROOT / "policies"))["snowflake"]
    st = Statements(platform("snowflake").target())
    before, after = State.of(catalog, "snowflake"), State.of(catalog, "snowflake")
    prover = Prover("snowflake", st, before, after, [])
    attached = next(o for o in catalog if isinstance(o, AggregationAttachment))
    with pytest.raises(PlanError, match="has no aggregation policy"):
        prover.check(st.detach(attached, "detach"), State.of(catalog, "snowflake"), "here")
    prover.check(st.attach(attached, attached, "swap"), State.of(catalog, "snowflake"), "here")


def test_an_identity_no_persona_holds_is_judged_and_the_cause_located(tmp_path: Path) -> None:
    """Exposure by identity (issue 38) for the new dispositions: exempting a role no persona
    holds from the aggregation and projection policies is a widening of that identity, blamed
    on the list that exempts it."""
    auditor = (
        "principals.yaml",
        "principals:\n",
        "principals:\n  auditor:\n    snowflake: AUDITOR\n\n",
    )
    base = estate(tmp_path / "b", auditor)
    head = estate(
        tmp_path / "h",
        auditor,
        ("datasets.yaml", "unrestricted_for: [data_steward]}\n    join", "unrestricted_for: [data_steward, auditor]}\n    join"),
        ("datasets.yaml", "allowed_for: [clinical_unblinded]", "allowed_for: [clinical_unblinded, auditor]"),
    )  # fmt: skip
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "json"])
    assert code == 0, err
    mine = [
        c
        for c in json.loads(out)["changes"]
        if c["identity"] == {"platform": "snowflake", "name": "AUDITOR"}
    ]
    found = {(c["column"], c["before"], c["after"], c["cause"]["object"]) for c in mine}
    assert found == {
        (None, "aggregated", "clear", "datasets.trial_outcomes.aggregation.unrestricted_for[1]"),
        (
            "SUBJECT_ID",
            "hidden",
            "clear",
            "datasets.trial_outcomes.columns.SUBJECT_ID.projection.allowed_for[1]",
        ),
    }
    assert all(c["kind"] == "widening" and c["personas"] == [] for c in mine)
