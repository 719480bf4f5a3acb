"""The Terraform target (``terraform/main.tf.json``) and ``accord terraform plan|apply``."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from accord.compiler.commands import terraform as tf_command
from accord.compiler.core.outdir import write_tree
from accord.compiler.model.validate import Project
from accord.targets.render import render_files
from tests.cli import run_cli
from tests.golden_cases import CASES, abac, reference, render_case, snowflake_tag

#: Argument names each resource type may use, as documented for the pinned provider versions.
#: Sources: snowflakedb/terraform-provider-snowflake docs/resources/{table, execute,
#: function_sql, row_access_policy, masking_policy, table_column_masking_policy_application,
#: tag, tag_association}.md (v2.x), and databricks/terraform-provider-databricks
#: docs/resources/{tag_policy, entity_tag_assignment, policy_info}.md (v1.90.0; the
#: registry pages registry.terraform.io/providers/databricks/databricks/1.90.0/docs/...).
#: A nested dict lists the arguments of a nested block or object.
ARGUMENT = {"name": None, "type": None}
FUNCTION_ARGUMENT = {"alias": None, "constant": None}
ALLOWED: dict[str, dict[str, Any]] = {
    "snowflake_table": {
        "database": None,
        "schema": None,
        "name": None,
        "comment": None,
        "column": {"name": None, "type": None, "nullable": None, "comment": None},
    },
    "snowflake_execute": {"execute": None, "revert": None, "query": None},
    "snowflake_function_sql": {
        "database": None,
        "schema": None,
        "name": None,
        "arguments": {"arg_name": None, "arg_data_type": None},
        "return_type": None,
        "function_definition": None,
        "is_secure": None,
        "comment": None,
    },
    "snowflake_row_access_policy": {
        "database": None,
        "schema": None,
        "name": None,
        "argument": ARGUMENT,
        "body": None,
        "comment": None,
    },
    "snowflake_masking_policy": {
        "database": None,
        "schema": None,
        "name": None,
        "argument": ARGUMENT,
        "body": None,
        "return_data_type": None,
        "exempt_other_policies": None,
        "comment": None,
    },
    "snowflake_table_column_masking_policy_application": {
        "table": None,
        "column": None,
        "masking_policy": None,
    },
    "snowflake_tag": {
        "database": None,
        "schema": None,
        "name": None,
        "comment": None,
        "allowed_values": None,
        "masking_policies": None,
    },
    "snowflake_tag_association": {
        "object_identifiers": None,
        "object_type": None,
        "tag_id": None,
        "tag_value": None,
    },
    "databricks_tag_policy": {"tag_key": None, "description": None, "values": {"name": None}},
    "databricks_entity_tag_assignment": {
        "entity_type": None,
        "entity_name": None,
        "tag_key": None,
        "tag_value": None,
    },
    "databricks_policy_info": {
        "name": None,
        "on_securable_type": None,
        "on_securable_fullname": None,
        "for_securable_type": None,
        "policy_type": None,
        "to_principals": None,
        "except_principals": None,
        "comment": None,
        "when_condition": None,
        "match_columns": {"condition": None, "alias": None},
        "row_filter": {"function_name": None, "using": FUNCTION_ARGUMENT},
        "column_mask": {"function_name": None, "on_column": None, "using": FUNCTION_ARGUMENT},
    },
}
META_ARGUMENTS = {"depends_on", "lifecycle"}
#: what may follow "${" in an expression accord writes (everything else must be escaped)
EXPRESSION_STARTS = ("snowflake_", "databricks_", "var.", "length(var.", "replace(replace(var.")

SALT = "SALT-VALUE-7f3a"

# python-terraform 0.10.1 logs failures with the deprecated Logger.warn
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")


def _main_tf(project: Project) -> dict[str, Any]:
    return json.loads(render_files(project, "terraform")["terraform/main.tf.json"])


def _check_arguments(where: str, body: Any, allowed: dict[str, Any]) -> None:
    for item in body if isinstance(body, list) else [body]:
        for key, value in item.items():
            assert key in allowed, f"{where}: {key!r} is not a documented argument"
            if allowed[key] is not None:
                _check_arguments(f"{where}.{key}", value, allowed[key])


@pytest.mark.parametrize("case", sorted(CASES))
def test_uses_only_documented_arguments(case: str) -> None:
    doc = _main_tf(CASES[case][0]())
    assert set(doc) <= {"terraform", "provider", "resource", "variable", "output"}
    for rtype, resources in doc["resource"].items():
        assert rtype in ALLOWED, f"undocumented resource type {rtype}"
        for name, body in resources.items():
            assert re.fullmatch(r"[a-z_][a-z0-9_]*", name)
            meta = {k: body[k] for k in body if k in META_ARGUMENTS}
            rest = {k: v for k, v in body.items() if k not in META_ARGUMENTS}
            _check_arguments(f"{rtype}.{name}", rest, ALLOWED[rtype])
            for ref in meta.get("depends_on", []):
                rt, rn = ref.split(".")
                assert rn in doc["resource"][rt], f"{rtype}.{name} depends on missing {ref}"


def test_providers_are_pinned() -> None:
    doc = _main_tf(abac())
    providers = doc["terraform"]["required_providers"]
    assert providers == {
        "snowflake": {"source": "snowflakedb/snowflake", "version": "2.20.0"},
        "databricks": {"source": "databricks/databricks", "version": "1.128.0"},
    }
    assert doc["provider"]["snowflake"]["preview_features_enabled"] == [
        "snowflake_function_sql_resource",
        "snowflake_table_column_masking_policy_application_resource",
        "snowflake_table_resource",
    ]


def test_styles_choose_their_resources() -> None:
    column, tag, uc = _main_tf(reference()), _main_tf(snowflake_tag()), _main_tf(abac())
    assert "snowflake_table_column_masking_policy_application" in column["resource"]
    assert "snowflake_tag" not in column["resource"]
    assert {"snowflake_tag", "snowflake_tag_association"} <= set(tag["resource"])
    assert "snowflake_table_column_masking_policy_application" not in tag["resource"]
    assert not any(t.startswith("databricks_") for t in column["resource"])
    assert {"databricks_tag_policy", "databricks_entity_tag_assignment"} <= set(uc["resource"])
    # what the provider cannot express is named, not half done
    assert column["output"]["accord_apply_as_sql"]["value"]["databricks"] == [
        "databricks/010_mapping_tables.sql",
        "databricks/020_salt_functions.sql",
        "databricks/030_row_filters.sql",
        "databricks/040_masks.sql",
        "databricks/050_attachments.sql",
    ]
    assert uc["output"]["accord_apply_as_sql"]["value"]["databricks"][-1] == (
        "databricks/040_masks.sql"
    )


def test_abac_policies_follow_the_lowered_objects() -> None:
    policies = _main_tf(abac())["resource"]["databricks_policy_info"]
    mask = policies["discovery_lake__assays__accord_subject_pseudonym_mask"]
    assert mask["policy_type"] == "POLICY_TYPE_COLUMN_MASK"
    assert mask["to_principals"] == ["account users"]
    assert mask["except_principals"] == ["clinical-unblinded"]
    assert mask["match_columns"] == [
        {"alias": "c", "condition": "has_tag_value('accord_mask', 'subject_pseudonym')"}
    ]
    assert mask["column_mask"] == {
        "function_name": "governance.policies.subject_pseudonym_mask",
        "on_column": "c",
    }
    row = policies["omics__variants__accord_programme_row_filter"]
    assert row["row_filter"] == {
        "function_name": "governance.policies.programme_row_filter",
        "using": [{"alias": "k"}],
    }


def test_salts_are_sensitive_variables_and_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SUBJECT_SALT_SNOWFLAKE", "SUBJECT_SALT_DATABRICKS"):
        monkeypatch.setenv(name, SALT)
    write_tree(tmp_path / "out", render_files(abac(), "all"))
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert SALT not in path.read_text(encoding="utf-8"), path
    doc = json.loads((tmp_path / "out/terraform/main.tf.json").read_text(encoding="utf-8"))
    (var,) = doc["variable"].values()
    assert var["sensitive"] is True and "default" not in var
    assert "state holds it" in var["description"]


def test_literal_template_sequences_are_escaped() -> None:
    project = reference()
    model = project.model
    masks = dict(model.masks)
    masks["free_text"] = masks["free_text"].model_copy(update={"replacement": "${oops} %{x}"})
    project = Project(
        model=model.model_copy(update={"masks": masks}),
        source=project.source,
        files=project.files,
        origin=project.origin,
    )
    text = render_files(project, "terraform")["terraform/main.tf.json"]
    body = json.loads(text)["resource"]["snowflake_masking_policy"][
        "governance__policies__free_text_mask"
    ]["body"]
    assert "'$${oops} %%{x}'" in body

    def strings(node: Any) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [s for v in node.values() for s in strings(v)]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return []

    for s in strings(json.loads(text)):
        for m in re.finditer(r"(?<!\$)\$\{|(?<!%)%\{", s):
            assert s[m.end() :].startswith(EXPRESSION_STARTS), s


def test_compiling_twice_is_byte_identical(tmp_path: Path) -> None:
    for case in sorted(CASES):
        assert render_case(case) == render_case(case)
    for out in ("a", "b"):
        write_tree(tmp_path / out, render_files(abac(), "all"))
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    assert files_a == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    for rel in files_a:
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def test_recompiling_keeps_terraform_state(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, render_files(reference(), "all"))
    (out / "terraform/terraform.tfstate").write_text("{}", encoding="utf-8")
    (out / "terraform/.terraform/providers").mkdir(parents=True)
    (out / "terraform" / tf_command.PLAN_FILE).write_bytes(b"old plan")
    write_tree(out, render_files(reference(), "all"))
    assert (out / "terraform/terraform.tfstate").read_text(encoding="utf-8") == "{}"
    assert (out / "terraform/.terraform/providers").is_dir()
    assert not (out / "terraform" / tf_command.PLAN_FILE).exists()


# --------------------------------------------------------------------------------------------
# accord terraform plan|apply


def _offline_out(tmp_path: Path, config: dict[str, Any]) -> Path:
    """An OUT tree whose main.tf.json needs no provider: Terraform runs it offline."""
    (tmp_path / "terraform").mkdir(parents=True)
    (tmp_path / "terraform/main.tf.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def test_missing_terraform_binary_is_a_clear_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _offline_out(tmp_path, {"output": {"x": {"value": 1}}})
    monkeypatch.setattr(tf_command.shutil, "which", lambda name: None)
    code, _, err = run_cli(["terraform", "plan", str(out)])
    assert code == 2
    assert "terraform binary" in err


def test_missing_python_terraform_is_a_clear_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _offline_out(tmp_path, {"output": {"x": {"value": 1}}})
    monkeypatch.setitem(sys.modules, "python_terraform", None)
    code, _, err = run_cli(["terraform", "plan", str(out)])
    assert code == 2
    assert "accord[terraform]" in err


def test_no_configuration_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run_cli(["terraform", "plan", str(tmp_path)])
    assert code == 2
    assert "accord compile" in err


needs_terraform = pytest.mark.skipif(
    shutil.which("terraform") is None, reason="no terraform binary on PATH"
)


@needs_terraform
def test_plan_then_apply_exactly_the_reviewed_plan(tmp_path: Path) -> None:
    out = _offline_out(tmp_path, {"output": {"greeting": {"value": "hello"}}})
    workdir = out / "terraform"
    code, printed, _ = run_cli(["terraform", "plan", str(out)])
    assert code == 0
    assert "accord: changes" in printed
    digest = tf_command.sha256_of(workdir / tf_command.PLAN_FILE)
    assert f"sha256 {digest}" in printed
    # a reviewer's digest that differs is refused, and nothing is applied
    assert run_cli(["terraform", "apply", str(out), "--sha256", "0" * 64]).returncode == 1
    assert not (workdir / "terraform.tfstate").exists()
    code, printed, _ = run_cli(["terraform", "apply", str(out), "--sha256", digest])
    assert code == 0
    assert "greeting" in printed
    assert json.loads((workdir / "terraform.tfstate").read_text())["outputs"]["greeting"]
    # the plan is spent: a second apply has nothing reviewed to apply
    assert run_cli(["terraform", "apply", str(out)]).returncode == 2
    # planning again finds no changes
    code, printed, _ = run_cli(["terraform", "plan", str(out)])
    assert code == 0
    assert "accord: no changes" in printed


@needs_terraform
def test_a_plan_changed_after_review_is_refused(tmp_path: Path) -> None:
    out = _offline_out(tmp_path, {"output": {"n": {"value": 1}}})
    assert run_cli(["terraform", "plan", str(out)]).returncode == 0
    (out / "terraform" / tf_command.DIGEST_FILE).write_text("f" * 64 + "  accord.tfplan\n")
    assert run_cli(["terraform", "apply", str(out)]).returncode == 1


@needs_terraform
def test_salt_variable_gives_the_sql_literal_accord_would_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated variable block and salt expression, run offline through the runner."""
    doc = _main_tf(reference())
    definition = doc["resource"]["snowflake_function_sql"][
        "governance__policies__subject_pseudonym_salt"
    ]["function_definition"]
    config = {
        "variable": doc["variable"],
        "output": {"definition": {"value": definition, "sensitive": True}},
    }
    workdir = _offline_out(tmp_path, config) / "terraform"
    salt = "it's a \\ salt ${not} %{this}"
    monkeypatch.setenv("TF_VAR_snowflake_salt_subject_pseudonym", salt)
    changes, _, digest = tf_command.plan(workdir)
    assert changes
    assert tf_command.apply(workdir, digest)[0]
    code, printed, _ = tf_command.run(workdir, "output", "definition", switches=("json",))
    assert code == 0
    assert json.loads(printed) == exp.Literal.string(salt).sql("snowflake")
    monkeypatch.setenv("TF_VAR_snowflake_salt_subject_pseudonym", "a$$b")
    code, _, err = tf_command.run(workdir, "plan", input=False, switches=("no_color",))
    assert code != 0 and "must not contain $$" in err
