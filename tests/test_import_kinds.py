"""``accord import`` from SQL of every policy kind issue 40 added: Snowflake's projection,
aggregation and join policies and their attachments (``ALTER TABLE ... SET PROJECTION |
AGGREGATION | JOIN POLICY``), read through lint's readers and raised into the model's
``projection`` (with ``enforcement``), ``aggregation`` and ``join`` fields; a body of another
shape than accord compiles (the ``CURRENT_ROLE()`` checks of Snowflake's own examples), a
policy that restricts nobody and an aggregation policy set with an ENTITY KEY kept unmanaged
with why, their SQL linted; a Databricks metastore-level policy kept with why. The live side
is tests/test_import_kinds_live.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.importer.constraints import ConstraintShape, constraint_shape
from accord.targets.identity import parse_body
from accord.targets.objects import AggregationPolicy, JoinPolicy, ProjectionPolicy
from tests.cli import run_cli
from tests.conftest import ROOT

KINDS_FIXTURES = ROOT / "tests" / "fixtures" / "kinds"

# every setting of the three fields: an enforcement, no exempt principal, several, join keys
ESTATE = """\
version: 1
platforms:
  snowflake: {governance_schema: GOVERNANCE.POLICIES}
principals:
  auditor: {snowflake: AUDITOR}
  data_steward: {snowflake: DATA_STEWARD}
datasets:
  visits:
    platform: snowflake
    table: CLINIC.CORE.VISITS
    aggregation: {min_group_size: 3}
    join: {unrestricted_for: [auditor, data_steward]}
    columns:
      PATIENT_ID: {type: VARCHAR, projection: {allowed_for: [], enforcement: nullify}}
      NOTES: {type: VARCHAR, projection: {allowed_for: [auditor, data_steward]}}
  claims:
    platform: snowflake
    table: CLINIC.CORE.CLAIMS
    aggregation: {min_group_size: 10, unrestricted_for: [data_steward]}
    join: {allowed_join_keys: [PATIENT_ID, VISIT_ID]}
"""


def imported(paths: list[Path], out: Path) -> tuple[int, str, str]:
    return run_cli(["import", *map(str, paths), "--out", str(out)])


def data(directory: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in sorted(directory.glob("*.yaml")):
        out.update(yaml.safe_load(p.read_text()))
    return out


def lint(directory: Path) -> set[tuple[str, str]]:
    code, out, err = run_cli(["lint", str(directory), "--format", "json"])
    assert code in (0, 1), err
    return {(f["rule"], f["object"]) for f in json.loads(out)["findings"]}


# --------------------------------------------------------------------------------------------
# the body shapes


def _projection(body: str) -> ProjectionPolicy:
    return ProjectionPolicy("G.P.X", parse_body(body, "snowflake"), "")  # type: ignore[arg-type]


def _aggregation(body: str) -> AggregationPolicy:
    return AggregationPolicy("G.P.X", parse_body(body, "snowflake"), "")  # type: ignore[arg-type]


def _join(body: str) -> JoinPolicy:
    return JoinPolicy("G.P.X", parse_body(body, "snowflake"), "")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("policy", "shape"),
    [
        pytest.param(
            _projection(
                "CASE WHEN IS_ROLE_IN_SESSION('A') OR IS_ROLE_IN_SESSION('B') THEN "
                "PROJECTION_CONSTRAINT(ALLOW => TRUE) ELSE "
                "PROJECTION_CONSTRAINT(ALLOW => FALSE, ENFORCEMENT => 'NULLIFY') END"
            ),
            ConstraintShape(("A", "B"), "nullify"),
            id="projection-exempt-nullify",
        ),
        pytest.param(
            # ENFORCEMENT is optional, "Default: FAIL" (sql-reference/sql/create-projection-policy)
            _projection("projection_constraint(allow => false)"),
            ConstraintShape((), "fail"),
            id="projection-default-enforcement",
        ),
        pytest.param(
            _aggregation(
                "CASE WHEN IS_ROLE_IN_SESSION('S') THEN NO_AGGREGATION_CONSTRAINT() "
                "ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 10) END"
            ),
            ConstraintShape(("S",), min_group_size=10),
            id="aggregation-exempt",
        ),
        pytest.param(
            _aggregation("AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 1)"),
            ConstraintShape(min_group_size=1),
            id="aggregation-alone",
        ),
        pytest.param(
            _join(
                "CASE WHEN IS_ROLE_IN_SESSION('S') THEN JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE) "
                "ELSE JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE) END"
            ),
            ConstraintShape(("S",)),
            id="join-exempt",
        ),
    ],
)
def test_the_shapes_accord_compiles_are_recognised(
    policy: ProjectionPolicy | AggregationPolicy | JoinPolicy, shape: ConstraintShape
) -> None:
    assert constraint_shape(policy, "snowflake") == shape


@pytest.mark.parametrize(
    ("policy", "why"),
    [
        pytest.param(
            _projection(
                "CASE WHEN CURRENT_ROLE() IN ('ANALYST') THEN PROJECTION_CONSTRAINT(ALLOW => TRUE) "
                "ELSE PROJECTION_CONSTRAINT(ALLOW => FALSE) END"
            ),
            "by more than IS_ROLE_IN_SESSION checks of literal identities",
            id="projection-current-role",
        ),
        pytest.param(
            _projection("PROJECTION_CONSTRAINT(ALLOW => TRUE)"),
            "it restricts nobody",
            id="projection-allows-everyone",
        ),
        pytest.param(
            _projection("PROJECTION_CONSTRAINT(ALLOW => FALSE, ENFORCEMENT => 'HIDE')"),
            "none of the shapes `projection` compiles to",
            id="projection-unknown-enforcement",
        ),
        pytest.param(
            _aggregation("AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 0)"),
            "none of the shapes `aggregation` compiles to",
            id="aggregation-group-of-none",
        ),
        pytest.param(
            _aggregation("NO_AGGREGATION_CONSTRAINT()"),
            "it restricts nobody",
            id="aggregation-restricts-nobody",
        ),
        pytest.param(
            _join("JOIN_CONSTRAINT(JOIN_REQUIRED => NOT IS_ROLE_IN_SESSION('S'))"),
            "none of the shapes `join` compiles to",
            id="join-computed",
        ),
        pytest.param(
            _join(
                "CASE WHEN IS_ROLE_IN_SESSION('S') THEN JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE) "
                "ELSE JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE) END"
            ),
            "none of the shapes `join` compiles to",
            id="join-inverted",
        ),
    ],
)
def test_other_shapes_are_said_why(
    policy: ProjectionPolicy | AggregationPolicy | JoinPolicy, why: str
) -> None:
    found = constraint_shape(policy, "snowflake")
    assert isinstance(found, str) and why in found


# --------------------------------------------------------------------------------------------
# from SQL


def test_every_kind_compiled_by_accord_comes_back_with_no_change_in_exposure(
    tmp_path: Path,
) -> None:
    """The estate above compiled and imported: the same fields, the principals named from
    accord's comments, exit 0; ``accord diff`` against the estate shows no change in exposure."""
    estate = tmp_path / "estate"
    estate.mkdir()
    (estate / "kinds.yaml").write_text(ESTATE)
    compiled = tmp_path / "compiled"
    code, _, err = run_cli(["compile", str(estate), "--out", str(compiled)])
    assert code == 0, err
    out = tmp_path / "imported"
    code, stdout, err = imported([compiled / "snowflake"], out)
    assert code == 0, stdout + err
    model = data(out)
    assert "unmanaged" not in model
    want = yaml.safe_load(ESTATE)
    assert model["principals"] == want["principals"]
    for name, ds in want["datasets"].items():
        got = model["datasets"][name]
        assert {k: v for k, v in got.items() if k != "columns"} == {
            k: v for k, v in ds.items() if k != "columns"
        }
        for column, spec in ds.get("columns", {}).items():
            projection = dict(spec["projection"])
            assert got["columns"][column]["projection"] == projection
    code, stdout, err = run_cli(["diff", str(out), "--base", f"dir:{estate}", "--format", "json"])
    assert code == 0, err
    assert json.loads(stdout)["changes"] == []
    assert lint(out) == set()


def test_a_narrower_import_is_a_change_in_exposure(tmp_path: Path) -> None:
    """The near miss: the compiled SQL with the aggregation policy's group size changed imports
    to a model whose diff against the estate is not empty (the round trip above is no vacuous
    pass)."""
    estate = tmp_path / "estate"
    estate.mkdir()
    (estate / "kinds.yaml").write_text(ESTATE)
    compiled = tmp_path / "compiled"
    run_cli(["compile", str(estate), "--out", str(compiled)])
    sql = compiled / "snowflake" / "042_aggregation_policies.sql"
    sql.write_text(sql.read_text().replace("MIN_GROUP_SIZE => 3", "MIN_GROUP_SIZE => 30"))
    out = tmp_path / "imported"
    code, stdout, err = imported([compiled / "snowflake"], out)
    assert code == 0, stdout + err
    assert data(out)["datasets"]["visits"]["aggregation"] == {"min_group_size": 30}


def test_the_vendor_shapes_of_the_kinds_are_kept_with_why_and_linted(tmp_path: Path) -> None:
    """The fixtures of tests/fixtures/kinds (the shapes of Snowflake's create-projection-policy,
    create-aggregation-policy, create-join-policy pages and guides, cited there): every policy
    deciding on CURRENT_ROLE() (or INVOKER_ROLE()) is kept with why, its attachment with it, and
    lint reports ACC101 on each where it is kept; the policies written with IS_ROLE_IN_SESSION
    in accord's shapes are recognised (the aggregation policy set with FORCE), one whose
    attachment was unset later is kept as one nothing carries."""
    paths = [
        KINDS_FIXTURES / "projection_current_role.sql",
        KINDS_FIXTURES / "aggregation_join_current_role.sql",
        KINDS_FIXTURES / "kinds_sound.snowflake.sql",
    ]
    out = tmp_path / "imported"
    code, stdout, err = imported(paths, out)
    assert code == 1, stdout + err
    model = data(out)
    assert model["datasets"] == {
        "results": {
            "platform": "snowflake",
            "table": "discovery.assays.results",
            "aggregation": {"min_group_size": 10, "unrestricted_for": ["data_steward"]},
        }
    }
    kept = {e["name"]: e for e in model["unmanaged"].values()}
    assert {name: e["kind"] for name, e in kept.items()} == {
        "governance.policies.proj_cpf": "projection_policy",
        "hr.core.funcionarios.cpf": "projection_attachment",
        "governance.policies.hide_fraud": "projection_policy",
        "my_agg_policy": "aggregation_policy",
        "t1": "aggregation_attachment",
        "jp1": "join_policy",
        "join_table_2": "join_attachment",
        "gov.pol.subject_projection": "projection_policy",
    }
    for name in ("governance.policies.proj_cpf", "my_agg_policy", "jp1"):
        assert "by more than IS_ROLE_IN_SESSION checks" in kept[name]["why"], name
    assert "applies governance.policies.proj_cpf" in kept["hr.core.funcionarios.cpf"]["why"]
    assert kept["gov.pol.subject_projection"]["why"] == (
        "a policy no table or column the model governs carries"
    )
    # the body as it was last set (ALTER ... SET BODY), kept verbatim
    assert "INVOKER_ROLE()" in kept["my_agg_policy"]["sql"]
    findings = lint(out)
    assert {
        ("ACC101", "governance.policies.proj_cpf"),
        ("ACC101", "governance.policies.hide_fraud"),
        ("ACC101", "my_agg_policy"),
        ("ACC101", "jp1"),
    } <= findings
    assert not [f for f in findings if f[0] == "ACC001"]


def test_an_aggregation_policy_with_an_entity_key_is_kept(tmp_path: Path) -> None:
    """``SET AGGREGATION POLICY p ENTITY KEY (c)`` (sql-reference/sql/alter-table): the model's
    aggregation has no entity key, so the attachment is kept with why, and the policy with it;
    set again without one later, it is the model's."""
    policy = (
        "CREATE AGGREGATION POLICY gov.pol.aggregation_min_5 AS () RETURNS "
        "AGGREGATION_CONSTRAINT -> AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5);\n"
    )
    keyed = "ALTER TABLE crm.sales.orders SET AGGREGATION POLICY gov.pol.aggregation_min_5"
    sql = tmp_path / "keyed.snowflake.sql"
    sql.write_text(policy + keyed + " ENTITY KEY (customer_id);\n")
    out = tmp_path / "keyed"
    code, stdout, err = imported([sql], out)
    assert code == 1, stdout + err
    kept = {e["name"]: e for e in data(out)["unmanaged"].values()}
    assert set(kept) == {"crm.sales.orders", "gov.pol.aggregation_min_5"}
    assert kept["crm.sales.orders"]["why"] == (
        "an aggregation policy set with ENTITY KEY (customer_id): the model's `aggregation` has "
        "no entity key"
    )
    assert "ENTITY KEY (customer_id)" in kept["crm.sales.orders"]["sql"]
    sql.write_text(policy + keyed + " ENTITY KEY (customer_id);\n" + keyed + " FORCE;\n")
    again = tmp_path / "again"
    code, stdout, err = imported([sql], again)
    assert code == 0, stdout + err
    assert data(again)["datasets"]["orders"]["aggregation"] == {"min_group_size": 5}


def test_a_metastore_level_policy_is_kept_and_read_by_lint(tmp_path: Path) -> None:
    """``CREATE POLICY ... ON METASTORE`` (Beta, Runtime 19; data-governance/unity-catalog/abac/
    metastore-policies: no metastore name): the model's ABAC policies are set on a schema or a
    table, so it is kept with why; lint reads it (no ACC001)."""
    sql = tmp_path / "org.databricks.sql"
    sql.write_text(
        "CREATE FUNCTION gov.pol.ssn_mask(val STRING) RETURNS STRING RETURN '***';\n"
        "CREATE POLICY org_ssn ON METASTORE COLUMN MASK gov.pol.ssn_mask TO `account users` "
        "FOR TABLES MATCH COLUMNS has_tag_value('pii', 'ssn') AS ssn ON COLUMN ssn;\n"
    )
    out = tmp_path / "out"
    code, stdout, err = imported([sql], out)
    assert code == 1, stdout + err
    kept = {e["name"]: e for e in data(out)["unmanaged"].values()}
    metastore = kept["org_ssn ON METASTORE"]
    assert metastore["kind"] == "abac_policy" and "at metastore scope" in metastore["why"]
    assert not [f for f in lint(out) if f[0] == "ACC001"]


def test_sql_that_names_no_governance_schema_still_imports_and_keeps_it(tmp_path: Path) -> None:
    """A Databricks ``CREATE POLICY`` with a GRANT body (whose grammar accord could not confirm:
    lint reads it as ACC001) and nothing else: no governance schema is read, yet the statement
    is kept with lint's reason, and the platform is declared with a schema IMPORT.md asks to
    set (before, the import refused its own model: platform not declared)."""
    sql = tmp_path / "grants.databricks.sql"
    sql.write_text("CREATE POLICY g ON CATALOG omics GRANT SELECT TO contractors FOR TABLES;\n")
    out = tmp_path / "out"
    code, stdout, err = imported([sql], out)
    assert code == 1, stdout + err
    model = data(out)
    assert model["platforms"] == {"databricks": {"governance_schema": "governance.policies"}}
    (entry,) = model["unmanaged"].values()
    assert entry["kind"] == "statement" and entry["why"].startswith("accord could not read it")
    assert "platforms.databricks.governance_schema: no policy" in (out / "IMPORT.md").read_text()
    assert ("ACC001", "") in lint(out)
