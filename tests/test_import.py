"""``accord import`` from SQL (issue 43): the compiled reference estate comes back with the same
exposure, SQL in public shapes is recognised or kept unmanaged as it should be, salts never
reach a file, and the output is a normal policy directory written once, the same for the same
input. The live round trips are in tests/test_import_live.py."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.test_several_dimensions import bank

PUBLIC = ROOT / "tests" / "fixtures" / "import" / "public"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference estate compiled (accord compile policies --out X)."""
    out = tmp_path_factory.mktemp("compiled") / "out"
    code, _, err = run_cli(["compile", str(ROOT / "policies"), "--out", str(out)])
    assert code == 0, err
    return out


def imported(paths: list[Path], out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["import", *map(str, paths), "--out", str(out), *extra])


def tree(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def data(directory: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in sorted(directory.glob("*.yaml")):
        out.update(yaml.safe_load(p.read_text()))
    return out


def catalog_only(source: Path, out: Path) -> Path:
    """``source`` as SQL can say it: what no catalog holds (surfaces, indexes, personas,
    probes, identifier domains, replicas) taken out."""
    shutil.copytree(source, out)
    for name in ("surfaces.yaml", "probes.yaml"):
        (out / name).unlink()
    principals = yaml.safe_load((out / "principals.yaml").read_text())
    principals.pop("personas")
    (out / "principals.yaml").write_text(yaml.safe_dump(principals))
    datasets = yaml.safe_load((out / "datasets.yaml").read_text())
    for ds in datasets["datasets"].values():
        ds.pop("replica_of", None)
        for spec in ds.get("columns", {}).values():
            spec.pop("identifier", None)
    (out / "datasets.yaml").write_text(yaml.safe_dump(datasets))
    return out


def with_surfaces(imported_dir: Path, reference: Path, out: Path) -> Path:
    """The imported model, with what only people know (the reference's surfaces, indexes,
    personas, probes, identifier domains and replicas, and its ungoverned dataset) added, each
    dataset of the reference named by the imported dataset of its table."""
    shutil.copytree(imported_dir, out)
    ref = load_project(reference).model
    mine = load_project(imported_dir).model
    by_table = {(d.platform, d.table.upper()): n for n, d in mine.datasets.items()}
    rename = {
        n: by_table[(d.platform, d.table.upper())]
        for n, d in ref.datasets.items()
        if (d.platform, d.table.upper()) in by_table
    }
    rest: dict[str, Any] = {}
    for p in sorted(reference.glob("*.yaml")):
        doc = yaml.safe_load(p.read_text())
        for key in ("surfaces", "indexes", "personas", "probes"):
            if key in doc:
                rest[key] = doc[key]
    for s in rest["surfaces"].values():
        s["reads"] = [rename.get(r, r) for r in s["reads"]]
    for s in rest["indexes"].values():
        s["source"] = rename.get(s["source"], s["source"])
    for s in rest["probes"].values():
        s["dataset"] = rename.get(s["dataset"], s["dataset"])
    datasets = yaml.safe_load((out / "datasets.yaml").read_text())
    for name, ds in ref.datasets.items():
        if name not in rename:  # ungoverned: no SQL says anything of it
            datasets["datasets"][name] = ds.model_dump(exclude_defaults=True, exclude_none=True)
            continue
        target = datasets["datasets"][rename[name]]
        if ds.replica_of:
            target["replica_of"] = rename[ds.replica_of]
        for column, spec in ds.columns.items():
            if spec.identifier:
                target["columns"][column]["identifier"] = spec.identifier
    (out / "datasets.yaml").write_text(yaml.safe_dump(datasets, sort_keys=False))
    (out / "people.yaml").write_text(yaml.safe_dump(rest, sort_keys=False))
    return out


# --------------------------------------------------------------------------------------------
# the round trip from SQL (the done-when)


def test_the_compiled_reference_estate_imports_whole_with_no_change_in_exposure(
    compiled: Path, tmp_path: Path
) -> None:
    """Import the compiled output of the reference estate: everything is expressed (exit 0, no
    unmanaged entry), the salts are references to fill, and ``accord diff`` of the imported
    model against the reference shows no change in exposure: alone against what SQL can say
    of the reference, and with what only people know (surfaces, personas...) added, against
    the reference itself."""
    out = tmp_path / "imported"
    code, stdout, err = imported([compiled / "snowflake", compiled / "databricks"], out)
    assert code == 0, stdout + err
    model = data(out)
    assert "unmanaged" not in model and not (out / "unmanaged.yaml").exists()
    assert model["masks"]["subject_pseudonym"]["salt"] == {
        "snowflake": "env:SUBJECT_PSEUDONYM_SALT_SNOWFLAKE",
        "databricks": "env:SUBJECT_PSEUDONYM_SALT_DATABRICKS",
    }
    assert "salt to fill: masks.subject_pseudonym.salt.snowflake" in stdout
    # the aggregation, join and projection policies of the outcomes table (issue 40)
    assert model["datasets"]["trial_outcomes"] == {
        "platform": "snowflake",
        "table": "CLINICAL.OUTCOMES.TRIAL_OUTCOMES",
        "aggregation": {"min_group_size": 10, "unrestricted_for": ["data_steward"]},
        "join": {"allowed_join_keys": ["PROGRAMME_CODE"], "unrestricted_for": ["data_steward"]},
        "columns": {
            "SUBJECT_ID": {"type": "VARCHAR", "projection": {"allowed_for": ["clinical_unblinded"]}}
        },
    }
    # the principals of accord's own comments and grants: the reference's, paired alike
    assert model["principals"] == load_project(ROOT / "policies").model.model_dump()["principals"]
    code, stdout, err = run_cli(["lint", str(out)])
    assert code == 0, stdout + err
    bare = catalog_only(ROOT / "policies", tmp_path / "bare")
    code, stdout, err = run_cli(["diff", str(out), "--base", f"dir:{bare}", "--format", "json"])
    assert code == 0, err
    assert json.loads(stdout)["changes"] == []
    whole = with_surfaces(out, ROOT / "policies", tmp_path / "whole")
    for base, head in ((ROOT / "policies", whole), (whole, ROOT / "policies")):
        code, stdout, err = run_cli(
            ["diff", str(head), "--base", f"dir:{base}", "--format", "json"]
        )
        assert code == 0, err
        assert json.loads(stdout)["changes"] == [], stdout


def test_an_import_changed_by_one_grant_is_a_change_in_exposure(
    compiled: Path, tmp_path: Path
) -> None:
    """The near miss: the compiled SQL with one mapping row taken out imports to a model whose
    diff against the reference names the lost grant (so the round trip above is no vacuous
    pass)."""
    sql = tmp_path / "sql"
    shutil.copytree(compiled, sql)
    rows = sql / "snowflake" / "010_mapping_tables.sql"
    rows.write_text(rows.read_text().replace("  ('CNS-204', 'CRO_EXTERNAL'),\n", ""))
    out = tmp_path / "imported"
    code, _, err = imported([sql / "snowflake"], out)
    assert code == 0, err
    bare = catalog_only(ROOT / "policies", tmp_path / "bare")
    for name in ("entitlements.yaml", "principals.yaml", "masks.yaml", "datasets.yaml"):
        doc = yaml.safe_load((bare / name).read_text())
        (bare / name).write_text(yaml.safe_dump(doc))
    platforms = yaml.safe_load((bare / "platforms.yaml").read_text())
    platforms["platforms"].pop("databricks")
    (bare / "platforms.yaml").write_text(yaml.safe_dump(platforms))
    datasets = yaml.safe_load((bare / "datasets.yaml").read_text())
    datasets["datasets"] = {
        n: d for n, d in datasets["datasets"].items() if d["platform"] == "snowflake"
    }
    (bare / "datasets.yaml").write_text(yaml.safe_dump(datasets))
    masks = yaml.safe_load((bare / "masks.yaml").read_text())
    masks["masks"]["subject_pseudonym"]["salt"].pop("databricks")
    (bare / "masks.yaml").write_text(yaml.safe_dump(masks))
    code, stdout, err = run_cli(["diff", str(out), "--base", f"dir:{bare}", "--format", "json"])
    assert code == 0, err
    changes = json.loads(stdout)["changes"]
    assert changes and all(c["kind"] == "narrowing" for c in changes)
    assert {v for c in changes for v in c["values"]} == {"CNS-204"}


def test_the_same_sql_imports_to_the_same_bytes(compiled: Path, tmp_path: Path) -> None:
    paths = [compiled / "snowflake", compiled / "databricks", PUBLIC]
    first, second = tmp_path / "a", tmp_path / "b"
    imported(paths, first)
    imported(paths, second)
    assert tree(first) == tree(second)
    assert (first / "IMPORT.md").read_text() == (second / "IMPORT.md").read_text()


# --------------------------------------------------------------------------------------------
# SQL in public shapes


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    out = tmp_path_factory.mktemp("public") / "imported"
    code, stdout, err = imported([PUBLIC], out)
    assert code in (0, 1), err
    return code, stdout, out


def test_public_shapes_are_recognised_where_the_model_says_them(
    public: tuple[int, str, Path],
) -> None:
    """What the model expresses in the public shapes (tests/fixtures/import/public/README.md):
    the IS_ROLE_IN_SESSION redaction of the reference page, the dbt macro's partial mask (its
    templated schema settled by the attachment that names it), the notebook's mapping-table
    filter (its table's INSERT the grants, its group column the principals) and partial mask,
    and the ROW FILTER clause's predicate kept as the hand-written predicate it is."""
    _, _, out = public
    model = data(out)
    assert model["masks"] == {
        "notes": {"strategy": "redact", "unmasked_for": ["analyst"], "replacement": "*********"},
        "contact_phone": {"strategy": "partial", "unmasked_for": ["support_lead"], "keep_last": 4},
        "phone": {"strategy": "partial", "unmasked_for": ["hr_admins"], "keep_last": 4},
    }
    assert model["entitlements"] == {
        "site": {"LON": ["hr_london"], "NYC": ["hr_admins", "hr_new_york"]}
    }
    assert model["principals"]["hr_new_york"] == {"databricks": "hr-new-york"}
    datasets = model["datasets"]
    assert datasets["visits"]["row_filter"] == {"entitlement": "site", "column": "site"}
    assert datasets["employees"]["row_filter"] == {
        "expression": {"databricks": "is_account_group_member(dept)"},
        "arguments": {"dept": "STRING"},
    }
    assert datasets["customers"]["columns"] == {
        "NOTES": {"type": "VARCHAR", "mask": "notes"},
        "PHONE": {"type": "VARCHAR", "mask": "contact_phone"},
    }
    assert model["platforms"] == {
        "snowflake": {"governance_schema": "CRM.GOVERNANCE"},
        "databricks": {"governance_schema": "hr.governance"},
    }


def test_public_shapes_the_model_cannot_say_are_kept_with_why_and_lint_reads_them(
    public: tuple[int, str, Path],
) -> None:
    """What the model cannot express is kept verbatim, with why, listed on stdout and in
    IMPORT.md, and the import exits 1; lint reads the kept SQL and reports the estate's
    defects where they sit: CURRENT_ROLE() (ACC101, in the vendor mask, the dbt-snow-mask
    macro and the mapping-table policy), is_member() (ACC102), a hash of the value alone
    (ACC201) and a literal salt (ACC205)."""
    code, stdout, out = public
    assert code == 1
    kept = data(out)["unmanaged"]
    by_name = {e["name"]: e for e in kept.values()}
    assert set(by_name) == {
        "CRM.GOVERNANCE.EMAIL_MASK",
        "CRM.SALES.CUSTOMERS.EMAIL",
        "CRM.GOVERNANCE.CUSTOMER_ID_MASK",
        "CRM.SALES.CUSTOMERS.CUSTOMER_ID",
        "CRM.GOVERNANCE.SALES_POLICY",
        "CRM.SALES.ORDERS",
        "{{node_database}}.{{node_schema}}.mp_contact_email",
        "{{node_database}}.{{node_schema}}.mp_conditional_contacts",
        "hr.governance.mask_ssn",
        "hr.people.persons.ssn",
    }
    assert "CURRENT_ROLE" in by_name["CRM.GOVERNANCE.EMAIL_MASK"]["sql"].upper()
    assert "more than IS_ROLE_IN_SESSION" in by_name["CRM.GOVERNANCE.EMAIL_MASK"]["why"]
    assert (
        "conditional masking"
        in by_name["{{node_database}}.{{node_schema}}.mp_conditional_contacts"]["why"]
    )
    assert "would read that column instead" in by_name["CRM.GOVERNANCE.SALES_POLICY"]["why"]
    assert "applies CRM.GOVERNANCE.EMAIL_MASK" in by_name["CRM.SALES.CUSTOMERS.EMAIL"]["why"]
    for entry in kept.values():
        assert entry["name"] in stdout and entry["why"] in (out / "IMPORT.md").read_text()
    code, stdout, err = run_cli(["lint", str(out), "--format", "json"])
    assert code == 1, err
    found = {(f["rule"], f["object"]) for f in json.loads(stdout)["findings"]}
    assert found == {
        ("ACC101", "CRM.GOVERNANCE.EMAIL_MASK"),
        ("ACC101", "CRM.GOVERNANCE.SALES_POLICY"),
        ("ACC101", "{{node_database}}.{{node_schema}}.mp_contact_email"),
        ("ACC201", "{{node_database}}.{{node_schema}}.mp_contact_email"),
        ("ACC102", "hr.governance.mask_ssn"),
        ("ACC205", "CRM.GOVERNANCE.CUSTOMER_ID_MASK"),
    }
    # every finding is located in the file and line of the SQL it is about
    unmanaged = (out / "unmanaged.yaml").read_text().split("\n")
    for f in json.loads(stdout)["findings"]:
        assert f["file"].endswith("unmanaged.yaml")
        line = unmanaged[f["line"] - 1]
        assert line[f["column"] - 1 :].upper().startswith(("CURRENT_ROLE", "SHA2", "IS_MEMBER"))


def test_a_literal_salt_never_reaches_a_file(public: tuple[int, str, Path]) -> None:
    """The public SQL salts one hash with a literal: it is withheld from everything written
    (the finding stays: ACC205 above), and IMPORT.md says so; a salt function's body (a
    literal) is never written either."""
    _, stdout, out = public
    assert "crm-pepper-9f2" in (PUBLIC / "vendor.snowflake.sql").read_text()
    for p in out.rglob("*"):
        assert "crm-pepper-9f2" not in p.read_text()
    assert "crm-pepper-9f2" not in stdout
    assert "<salt withheld by accord import>" in (out / "unmanaged.yaml").read_text()
    assert "## Withheld" in (out / "IMPORT.md").read_text()


def test_a_salt_function_is_a_reference_to_fill(tmp_path: Path) -> None:
    """A function of no parameters that a mask's hash calls is a salt function: its body is
    never read, the mask's salt is an ``env:`` reference the import names; one nothing calls
    is kept, its body left out."""
    sql = tmp_path / "gov.databricks.sql"
    sql.write_text(
        "CREATE FUNCTION gov.p.email_salt() RETURNS STRING RETURN 'very-secret-7';\n"
        "CREATE FUNCTION gov.p.spare_salt() RETURNS STRING RETURN 'other-secret-8';\n"
        "CREATE FUNCTION gov.p.email_mask(val STRING) RETURNS STRING RETURN "
        "sha2(concat(val, gov.p.email_salt()), 256);\n"
        "ALTER TABLE crm.sales.contacts ALTER COLUMN email SET MASK gov.p.email_mask;\n"
    )
    out = tmp_path / "out"
    code, stdout, err = imported([sql], out)
    assert code == 1, err  # the spare salt is kept
    model = data(out)
    assert model["masks"]["email"] == {
        "strategy": "hash",
        "salt": {"databricks": "env:EMAIL_SALT_DATABRICKS"},
    }
    assert "salt to fill: masks.email.salt.databricks = env:EMAIL_SALT_DATABRICKS" in stdout
    (spare,) = model["unmanaged"].values()
    assert spare["kind"] == "salt_function" and spare["name"] == "gov.p.spare_salt"
    for p in out.rglob("*"):
        assert "secret-7" not in p.read_text() and "secret-8" not in p.read_text()


# --------------------------------------------------------------------------------------------
# the command


def test_a_directory_that_is_not_empty_is_never_written_into(
    compiled: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.yaml").write_text("version: 1\n")
    code, _, err = imported([compiled / "snowflake"], out)
    assert code == 2 and "not empty" in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["mine.yaml"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]
    file = tmp_path / "file"
    file.write_text("x")
    code, _, err = imported([compiled / "snowflake"], file)
    assert code == 2 and "not a directory" in err and file.read_text() == "x"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = imported([compiled / "snowflake"], empty)
    assert code == 0, err
    assert (empty / "IMPORT.md").exists()


def test_nothing_to_read_and_a_missing_path_exit_2(tmp_path: Path) -> None:
    code, _, err = run_cli(["import", "--out", str(tmp_path / "a")])
    assert code == 2 and "--platform" in err
    code, _, err = imported([tmp_path / "nope.sql"], tmp_path / "b")
    assert code == 2 and "nope.sql:1:1: no such file or directory" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_result_is_a_normal_policy_directory(public: tuple[int, str, Path]) -> None:
    """It validates, lints (above), analyzes (what the unmanaged objects reach: unknown) and
    the section layout is accord's."""
    _, _, out = public
    assert sorted(p.name for p in out.iterdir()) == [
        "IMPORT.md",
        "datasets.yaml",
        "entitlements.yaml",
        "masks.yaml",
        "platforms.yaml",
        "principals.yaml",
        "unmanaged.yaml",
    ]
    code, stdout, err = run_cli(["validate", str(out)])
    assert code == 0, err
    code, stdout, err = run_cli(["analyze", str(out), "--format", "json"])
    assert code in (0, 1), err
    reached = json.loads(stdout)["unmanaged"]
    email = next(r for r in reached if r["name"] == "CRM.SALES.CUSTOMERS.EMAIL")
    assert (email["dataset"], email["column"], email["disposition"]) == (
        "customers",
        "EMAIL",
        "unknown",
    )


@pytest.mark.parametrize("style", ["table", "abac"])
def test_several_dimensions_and_grants_until_a_date_come_back(style: str, tmp_path: Path) -> None:
    """The bank estate (tests/test_several_dimensions.py: a filter over two dimensions, a grant
    until a date, both Databricks styles) compiled and imported: no change in exposure against
    what SQL can say of it (no surfaces, personas, role hierarchy or replicas)."""
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "bank.yaml").write_text(bank(style))
    out = tmp_path / "out"
    code, _, err = run_cli(["compile", str(tmp_path / "pol"), "--out", str(out)])
    assert code == 0, err
    code, stdout, err = imported([out / "snowflake", out / "databricks"], tmp_path / "imp")
    assert code == 0, stdout + err
    grants = data(tmp_path / "imp")["entitlements"]["region"]
    assert grants["US"] == ["analyst", {"principal": "auditor", "until": "2027-03-31"}]
    doc = yaml.safe_load(bank(style))
    for key in ("surfaces", "personas", "probes"):
        doc.pop(key, None)
    for principal in doc["principals"].values():
        principal.pop("inherits", None)
    for ds in doc["datasets"].values():
        ds.pop("replica_of", None)
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "bank.yaml").write_text(yaml.safe_dump(doc))
    code, stdout, err = run_cli(
        ["diff", str(tmp_path / "imp"), "--base", f"dir:{tmp_path / 'bare'}", "--format", "json"]
    )
    assert code == 0, err
    assert json.loads(stdout)["changes"] == []


def test_what_the_model_cannot_name_is_kept_with_why(tmp_path: Path) -> None:
    """A role named in another case than Snowflake stores it (the policy denies everyone
    granted it: the model refuses such a principal) and a quoted table name: kept, with the
    model's own reason, never a model that does not validate."""
    sql = tmp_path / "odd.snowflake.sql"
    sql.write_text(
        "CREATE MASKING POLICY GOV.P.EMAIL_MASK AS (val VARCHAR) RETURNS VARCHAR ->\n"
        "  CASE WHEN IS_ROLE_IN_SESSION('analyst') THEN val ELSE '***' END;\n"
        "CREATE MASKING POLICY GOV.P.NOTES_MASK AS (val VARCHAR) RETURNS VARCHAR -> '***';\n"
        "ALTER TABLE CRM.S.CUSTOMERS MODIFY COLUMN EMAIL SET MASKING POLICY GOV.P.EMAIL_MASK;\n"
        'ALTER TABLE CRM.S."Odd Table" MODIFY COLUMN NOTES SET MASKING POLICY GOV.P.NOTES_MASK;\n'
    )
    out = tmp_path / "out"
    code, _, err = imported([sql], out)
    assert code == 1, err
    why = {e["name"]: e["why"] for e in data(out)["unmanaged"].values()}
    assert "Snowflake role 'analyst' is not upper case" in why["GOV.P.EMAIL_MASK"]
    assert "is not a valid table name" in why["CRM.S.Odd Table.NOTES"]
    assert run_cli(["validate", str(out)])[0] == 0
