"""Role hierarchies (`principals.NAME.inherits`): located validation (unknown principals,
cycles); a persona's effective principals per platform through the hierarchy; `accord verify`
executing the compiled policies with IS_ROLE_IN_SESSION seeing inherited roles and
is_account_group_member indirect membership, and failing a hand-edited policy that checks
CURRENT_ROLE() (the primary role's name only); `accord diff` on a new edge; and estates without
`inherits` dumping (and so fingerprinting) exactly as before. The live side (introspection of
the hierarchy, ACC708) is tests/test_live_hierarchy.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.compiler.core.outdir import write_tree
from accord.compiler.meaning import semantics
from accord.compiler.model.loader import load_documents
from accord.compiler.model.validate import Project, validate_raw
from accord.compiler.verify.run import verify
from accord.targets.render import render_files
from tests.cli import run_cli

ESTATE = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol, style: STYLE}
principals:
  analyst: {snowflake: ANALYST, databricks: analysts}
  eu_reader: {snowflake: EU_READER, databricks: eu-readers}
  us_reader: {snowflake: US_READER, databricks: us-readers}
  auditor: {snowflake: AUDITOR, databricks: auditors, inherits: [eu_reader]}
  lead: {snowflake: LEAD, databricks: leads, inherits: [auditor, us_reader]}
  sf_only: {snowflake: SF_ONLY, inherits: [us_reader]}
entitlements:
  region:
    EU: [eu_reader]
    US: [us_reader]
masks:
  email:
    strategy: redact
    unmasked_for: [auditor]
datasets:
  customers:
    platform: snowflake
    table: SALES.CRM.CUSTOMERS
    row_filter: {entitlement: region, column: REGION}
    columns:
      EMAIL: {type: VARCHAR, mask: email}
  customers_lake:
    platform: databricks
    table: sales.crm.customers
    replica_of: customers
    row_filter: {entitlement: region, column: region}
    columns:
      email: {type: STRING, mask: email}
personas:
  analyst: [analyst]
  auditor: [auditor]
  lead: [lead]
  contractor: [analyst, sf_only]
"""


def estate(style: str = "table") -> str:
    return ESTATE.replace("STYLE", style)


def project_of(text: str) -> Project:
    return validate_raw(load_documents([(text.encode(), "estate.yaml")], Path(".")))


def write(tmp_path: Path, text: str, name: str = "pol") -> Path:
    d = tmp_path / name
    d.mkdir()
    (d / "estate.yaml").write_text(text, encoding="utf-8")
    return d


def line_of(text: str, start: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith(start))


def test_effective_principals_follow_the_hierarchy_per_platform() -> None:
    model = project_of(estate()).model
    on = semantics.principals_on
    assert on(model, "lead", "snowflake") == ["lead", "auditor", "us_reader", "eu_reader"]
    assert on(model, "lead", "databricks") == ["lead", "auditor", "us_reader", "eu_reader"]
    # sf_only has no Databricks group: nothing is inherited through it there
    assert on(model, "contractor", "snowflake") == ["analyst", "sf_only", "us_reader"]
    assert on(model, "contractor", "databricks") == ["analyst"]
    # the primary role (CURRENT_ROLE) is the first listed, never an inherited one
    assert semantics.primary_principal(model, "lead") == "lead"

    def seen(persona: str, dataset: str) -> tuple[set[str], bool]:
        p = semantics.Perspective(model, persona)
        ds = model.datasets[dataset]
        return set(p.rows(dataset).values), p.unmasked("email", ds.platform)

    assert seen("lead", "customers") == ({"EU", "US"}, True)
    assert seen("auditor", "customers_lake") == ({"EU"}, True)
    assert seen("contractor", "customers") == ({"US"}, False)
    assert seen("contractor", "customers_lake") == (set(), False)


@pytest.mark.parametrize(
    ("edit", "start", "message"),
    [
        (
            ("  eu_reader: {snowflake: EU_READER, databricks: eu-readers}",
             "  eu_reader: {snowflake: EU_READER, databricks: eu-readers, inherits: [lead]}"),
            "  auditor:",
            "inherits forms a cycle (eu_reader -> lead -> auditor -> eu_reader)",
        ),
        (
            ("  analyst: {snowflake: ANALYST, databricks: analysts}",
             "  analyst: {snowflake: ANALYST, databricks: analysts, inherits: [analyst]}"),
            "  analyst:",
            "inherits forms a cycle (analyst -> analyst)",
        ),
        (
            ("inherits: [eu_reader]", "inherits: [eu_raeder]"),
            "  auditor:",
            "unknown principal 'eu_raeder' (did you mean 'eu_reader'?)",
        ),
        (
            ("inherits: [eu_reader]", "inherits: eu_reader"),
            "  auditor:",
            "list",
        ),
    ],
)  # fmt: skip
def test_bad_hierarchies_are_located_errors(
    tmp_path: Path, edit: tuple[str, str], start: str, message: str
) -> None:
    text = estate().replace(*edit)
    assert text != estate()
    d = write(tmp_path, text)
    code, out, err = run_cli(["validate", str(d)])
    assert code == 2, (out, err)
    assert f"{d / 'estate.yaml'}:{line_of(text, start)}:" in err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("style", ["table", "abac"])
def test_compiled_policies_verify_through_the_hierarchy(style: str) -> None:
    report = verify(project_of(estate(style)))
    # the only difference is the one the model states: the contractor inherits US_READER
    # through SF_ONLY, which is no Databricks group, so the replicas show it different rows
    found = {(m.kind, m.persona, m.dataset) for m in report.mismatches}
    assert found == {("replica-rows", "contractor", "customers / customers_lake")}
    assert report.checks > 0
    flat = estate(style).replace("  sf_only: {snowflake: SF_ONLY, inherits: [us_reader]}\n", "")
    flat = flat.replace("  contractor: [analyst, sf_only]\n", "")
    assert verify(project_of(flat)).mismatches == []


# (id, file, old, new, persona that must be named, dataset)
BROKEN = [
    (
        "snowflake-mask-checks-the-primary-role",
        "snowflake/040_masking_policies.sql",
        "IS_ROLE_IN_SESSION('AUDITOR')",
        "CURRENT_ROLE() = 'AUDITOR'",
        "lead",
        "customers",
    ),
    (
        "databricks-mask-checks-the-workspace-group",
        "databricks/040_masks.sql",
        "is_account_group_member('auditors')",
        "is_member('auditors')",
        "lead",
        "customers_lake",
    ),
]


@pytest.mark.parametrize(
    ("file", "old", "new", "persona", "dataset"),
    [b[1:] for b in BROKEN],
    ids=[b[0] for b in BROKEN],
)
def test_verify_fails_a_check_that_misses_inherited_roles(
    tmp_path: Path, file: str, old: str, new: str, persona: str, dataset: str
) -> None:
    project = project_of(estate())
    out = tmp_path / "out"
    write_tree(out, render_files(project, "all"))
    path = out / file
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    report = verify(project, str(out))
    hits = {(m.kind, m.persona, m.dataset) for m in report.mismatches}
    assert ("column", persona, dataset) in hits, hits


def test_diff_locates_a_new_edge(tmp_path: Path) -> None:
    base = write(tmp_path, estate(), "base")
    text = estate().replace(
        "  analyst: {snowflake: ANALYST, databricks: analysts}",
        "  analyst: {snowflake: ANALYST, databricks: analysts, inherits: [us_reader]}",
    )
    head = write(tmp_path, text, "head")
    code, out, err = run_cli(
        ["diff", str(head), "--base", f"dir:{base}", "--format", "json", "--fail-on", "widening"]
    )
    assert code == 1, err
    changes = json.loads(out)["changes"]
    rows = [c for c in changes if c["column"] is None and c["persona"] == "analyst"]
    assert rows and all(c["kind"] == "widening" and c["values"] == ["US"] for c in rows)
    assert {c["cause"]["object"] for c in rows} == {"principals.analyst.inherits[0]"}
    assert {c["cause"]["line"] for c in rows} == {line_of(text, "  analyst:")}


def test_without_inherits_the_model_dumps_as_before() -> None:
    flat = project_of(estate().replace(", inherits: [eu_reader]", "")).model
    dumped = flat.model_dump(mode="json")["principals"]["auditor"]
    assert dumped == {"snowflake": "AUDITOR", "databricks": "auditors"}
    with_edges = project_of(estate()).model.model_dump(mode="json")["principals"]["auditor"]
    assert with_edges["inherits"] == ["eu_reader"]
