"""Compiled output: parses back, deterministic, atomic, and never holds a salt."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.core.errors import UsageError
from accord.compiler.core.outdir import write_tree
from accord.compiler.model.salts import SaltError, materialize, references
from accord.compiler.model.validate import load_project
from accord.targets import get_target, lower_all
from accord.targets.objects import MaskPolicy, RowFilterPolicy
from accord.targets.render import render_files
from tests.cli import run_cli, run_process
from tests.conftest import ROOT
from tests.estates import MINIMAL

REFERENCE = ROOT / "policies"


def test_every_body_parses_back_in_its_dialect() -> None:
    project = load_project(REFERENCE)
    checked = 0
    for platform, catalog in lower_all(project).items():
        target = get_target(platform)
        for obj in catalog.of(RowFilterPolicy) + catalog.of(MaskPolicy):
            text = target.body_sql(obj.body, indent="")
            again = sqlglot.parse_one(text, read=platform)
            assert again == sqlglot.parse_one(obj.body.sql(platform), read=platform)
            checked += 1
    assert checked >= 6


def test_functions_parse_back_as_databricks_create_function() -> None:
    files = render_files(load_project(REFERENCE), "databricks")
    statements = [
        s
        for name in ("databricks/030_row_filters.sql", "databricks/040_masks.sql")
        for s in sqlglot.parse(files[name], read="databricks")
        if s is not None
    ]
    assert statements and all(isinstance(s, exp.Create) for s in statements)
    assert all(s.kind == "FUNCTION" for s in statements)


def test_snowflake_policies_use_role_hierarchy_checks_only() -> None:
    files = render_files(load_project(REFERENCE), "snowflake")
    text = "\n".join(files.values())
    assert "IS_ROLE_IN_SESSION" in text
    assert "CURRENT_ROLE" not in text and "CURRENT_AVAILABLE_ROLES" not in text


def test_file_order_and_manifest(tmp_path: Path) -> None:
    files = render_files(load_project(REFERENCE), "all")
    assert list(files) == sorted(files)
    assert [f for f in files if f.startswith("snowflake/")] == [
        "snowflake/010_mapping_tables.sql",
        "snowflake/020_salt_functions.sql",
        "snowflake/030_row_access_policies.sql",
        "snowflake/040_masking_policies.sql",
        "snowflake/041_projection_policies.sql",
        "snowflake/042_aggregation_policies.sql",
        "snowflake/043_join_policies.sql",
        "snowflake/050_attachments.sql",
    ]
    out = tmp_path / "out"
    write_tree(out, files)
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"]:
        data = (out / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    assert {e["path"] for e in manifest["files"]} == set(files)


def test_same_input_byte_identical_output_regardless_of_file_split(write_tree, tmp_path) -> None:
    one = write_tree({"all.yaml": MINIMAL})
    split_root = tmp_path / "split"
    (split_root).mkdir()
    head, _, rest = MINIMAL.partition("masks:")
    (split_root / "z.yaml").write_text(head)
    (split_root / "a.yaml").write_text("masks:" + rest)
    first = render_files(load_project(one))
    assert first == render_files(load_project(one))
    assert first == render_files(load_project(split_root))


def test_compile_is_byte_identical_across_processes(tmp_path: Path) -> None:
    outs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        proc = run_process(
            ["compile", str(REFERENCE), "--out", str(out)],
            env={"PYTHONHASHSEED": str(n), "PATH": "/usr/bin:/bin"},
            inherit_env=False,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(
            {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        )
    assert outs[0] == outs[1]


def test_no_salt_value_reaches_any_output(tmp_path: Path) -> None:
    secret_sf, secret_db = "sf-SECRET-7f3a9", "db-SECRET-c41e2"
    out = tmp_path / "out"
    proc = run_cli(
        ["compile", str(REFERENCE), "--out", str(out)],
        env={"SUBJECT_SALT_SNOWFLAKE": secret_sf, "SUBJECT_SALT_DATABRICKS": secret_db},
    )
    assert proc.returncode == 0, proc.stderr
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written
    for path in written:
        data = path.read_text()
        assert secret_sf not in data and secret_db not in data, path
    assert secret_sf not in proc.stdout + proc.stderr
    salts = (out / "snowflake" / "020_salt_functions.sql").read_text()
    assert references(salts) == ["env:SUBJECT_SALT_SNOWFLAKE"]


def test_salt_placeholder_is_filled_only_in_memory_and_escaped() -> None:
    files = render_files(load_project(REFERENCE), "all")
    for platform in ("snowflake", "databricks"):
        text = files[f"{platform}/020_salt_functions.sql"]
        filled = materialize(text, platform, lambda ref: "it's $ecret")
        assert "accord_salt" not in filled
        assert "'it\\'s $ecret'" in filled or "'it''s $ecret'" in filled
        # the placeholder as written is not valid SQL: applying it unfilled fails
        with pytest.raises(sqlglot.errors.ParseError):
            sqlglot.parse_one(
                "SELECT " + text.split("RETURN ")[-1].rstrip(";\n"), read="databricks"
            )


def test_missing_salt_env_is_a_clear_error(monkeypatch) -> None:
    from accord.compiler.model.salts import resolve

    monkeypatch.delenv("NO_SUCH_SALT", raising=False)
    with pytest.raises(SaltError, match="NO_SUCH_SALT is not set"):
        resolve("env:NO_SUCH_SALT")


def test_write_tree_refuses_foreign_directory(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(UsageError, match="was not written by accord"):
        write_tree(foreign, {"snowflake/x.sql": "SELECT 1;\n"})
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_write_tree_replaces_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"snowflake/old.sql": "SELECT 1;\n"})
    write_tree(out, {"snowflake/new.sql": "SELECT 2;\n"})
    assert sorted(p.name for p in out.rglob("*.sql")) == ["new.sql"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_keyword_identifiers_are_quoted(write_tree) -> None:
    text = MINIMAL.replace(
        "EMAIL: {type: VARCHAR, mask: email}", "ORDER: {type: VARCHAR, mask: email}"
    )
    text = text.replace("platform: snowflake", "platform: databricks").replace(
        "SALES.CRM.CUSTOMERS", "sales.crm.customers"
    )
    files = render_files(load_project(write_tree({"a.yaml": text})), "databricks")
    assert "ALTER COLUMN `ORDER` SET MASK" in files["databricks/050_attachments.sql"]


def test_hand_written_expression_is_rendered_inside_a_policy(write_tree) -> None:
    text = MINIMAL.replace(
        "row_filter: {entitlement: region, column: REGION}",
        "row_filter: {expression: {snowflake: \"REGION = 'EU' OR IS_ROLE_IN_SESSION('GLOBAL')\"}, "
        "arguments: {REGION: VARCHAR}}",
    )
    files = render_files(load_project(write_tree({"a.yaml": text})), "snowflake")
    policy = files["snowflake/030_row_access_policies.sql"]
    assert "ROW ACCESS POLICY GOV.POL.CUSTOMERS_ROW_FILTER" in policy
    assert "AS (REGION VARCHAR) RETURNS BOOLEAN" in policy
    assert "REGION = 'EU' OR IS_ROLE_IN_SESSION('GLOBAL')" in policy
    attach = files["snowflake/050_attachments.sql"]
    assert "ADD ROW ACCESS POLICY GOV.POL.CUSTOMERS_ROW_FILTER ON (REGION)" in attach


def test_every_compiled_statement_scans_without_error() -> None:
    from accord.compiler.sqlscan import scan

    files = render_files(load_project(REFERENCE), "all")
    kinds: set[str] = set()
    for rel, text in files.items():
        if not rel.endswith(".sql") or "salt" in rel:
            continue
        result = scan(text, rel, rel.split("/")[0])
        assert not result.errors, result.errors
        kinds |= {s.kind for s in result.statements}
    assert {
        "row_access_policy",
        "masking_policy",
        "function",
        "set_row_filter",
        "set_mask",
        "add_row_access",
        "set_masking_policy",
    } <= kinds
