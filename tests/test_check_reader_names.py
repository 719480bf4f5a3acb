"""``accord introspect --check-reader`` judges the role it reads as, and the GRANT it suggests
names that role as a statement accord sends would (issue 39, item 5).

Snowflake stores a double-quoted identifier as written and an unquoted one in upper case
(docs.snowflake.com/en/sql-reference/identifiers-syntax): a role created as
``"drift_reader"`` is ``drift_reader``, another role than ``DRIFT_READER``, and
``CURRENT_ROLE()`` answers ``drift_reader``. The check used to upper-case that answer (so it
reported what ``DRIFT_READER`` holds) and printed ``GRANT ... TO ROLE drift_reader``, which an
administrator pasting it runs for ``DRIFT_READER``. On Databricks a principal is quoted in
backticks, a backtick in its name doubled. Every suggested statement here is parsed back with
sqlglot and must name the principal exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from accord.compiler.model.validate import load_project
from accord.sandbox.standins.snowflake import SnowflakeEstate
from accord.targets import lower_all
from accord.targets.identity import ConstraintAttachment
from accord.targets.objects import MappingTable, MaskAttachment, RowFilterAttachment, TagAssignment
from tests.cli import run_cli
from tests.live_helpers import ROOT, SNOWFLAKE_GLOBALS, Platforms
from tests.test_databricks_truth import GOVERNED
from tests.test_databricks_truth import deploy as deploy_dbx
from tests.test_databricks_truth import least_privilege as least_privilege_dbx
from tests.test_snowflake_reader import deploy as deploy_sf

POLICIES = ROOT / "policies"


def granted(statement: str, dialect: str) -> tuple[str, str]:
    """(securable, principal) of a suggested ``GRANT``, read back with sqlglot."""
    tree = sqlglot.parse_one(statement, read=dialect)
    assert isinstance(tree, exp.Grant), statement
    (principal,) = tree.args["principals"]
    return tree.args["securable"].sql(dialect), principal.this.name


def suggested(coverage: dict[str, object], dialect: str) -> str:
    (unseen,) = [u for u in coverage["unseen"] if "GRANT " in u["why"]]  # type: ignore[attr-defined]
    return str(unseen["why"]).split(": ", 1)[1]


def reader_of_everything_but_the_mapping_table(sf: SnowflakeEstate, role: str) -> None:
    """``role`` (as SQL writes it) holds what a complete read needs (the README's reader
    grants, as tests/live_helpers.py gives them), but SELECT on the mapping table."""
    expected = lower_all(load_project(POLICIES))["snowflake"]
    for privilege in SNOWFLAKE_GLOBALS:
        sf.grant_to_role(role, privilege, "ACCOUNT")
    tables = {o.table for o in expected if isinstance(o, MaskAttachment | RowFilterAttachment)}
    tables |= {o.table for o in expected if isinstance(o, TagAssignment | ConstraintAttachment)}
    for table in sorted(tables):
        db, schema, _ = table.split(".")
        sf.grant_to_role(role, "USAGE", "DATABASE", db)
        sf.grant_to_role(role, "USAGE", "SCHEMA", f"{db}.{schema}")
        sf.grant_to_role(role, "SELECT", "TABLE", table)
    sf.grant_to_role(role, "USAGE", "DATABASE", "GOVERNANCE")
    sf.grant_to_role(role, "USAGE", "SCHEMA", "GOVERNANCE.POLICIES")


@pytest.mark.parametrize("role", ['"drift_reader"', '"drift""reader"'])
def test_snowflake_check_reader_judges_the_quoted_role_and_quotes_the_grant(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str
) -> None:
    sf = platforms.snowflake
    deploy_sf(POLICIES, tmp_path)
    stored = role[1:-1].replace('""', '"')
    (mapping,) = lower_all(load_project(POLICIES))["snowflake"].of(MappingTable)
    reader_of_everything_but_the_mapping_table(sf, role)
    # the upper-case role of the same letters holds everything: judging it is a clean bill
    reader_of_everything_but_the_mapping_table(sf, "DRIFT_READER")
    sf.grant_to_role("DRIFT_READER", "SELECT", "TABLE", mapping.name)
    monkeypatch.setenv("SNOWFLAKE_ROLE", role)
    code, out, err = run_cli(
        [
            "introspect",
            "--check-reader",
            "--platform",
            "snowflake",
            str(POLICIES),
            "--format",
            "json",
        ]
    )
    coverage = json.loads(out)["coverage"]
    assert code == 1 and coverage["reader"] == stored, out + err
    statement = suggested(coverage, "snowflake")
    assert statement == f"GRANT SELECT ON TABLE {mapping.name} TO ROLE {role}"
    assert granted(statement, "snowflake") == (mapping.name, stored)
    # the grant, run as the administrator would paste it, is the one the check asked for
    sf.grant_to_role(role, "SELECT", "TABLE", mapping.name)
    code, out, err = run_cli(
        ["introspect", "--check-reader", "--platform", "snowflake", str(POLICIES)]
    )
    assert code == 0, out + err
    assert f"snowflake: reading as {stored}" in out


def test_databricks_check_reader_quotes_a_principal_with_a_backtick(
    platforms: Platforms, tmp_path: Path
) -> None:
    dbx = platforms.databricks
    deploy_dbx(str(POLICIES), tmp_path / "m1")
    principal = "ci`reader@example.com"
    dbx.reader = principal
    dbx.admins = set()
    least_privilege_dbx(dbx, GOVERNED, who=principal)
    dbx.privileges.discard(("SCHEMA", "governance.policies", "SELECT", principal))
    (mapping,) = lower_all(load_project(POLICIES))["databricks"].of(MappingTable)
    code, out, err = run_cli(
        [
            "introspect",
            "--check-reader",
            "--platform",
            "databricks",
            str(POLICIES),
            "--format",
            "json",
        ]
    )
    coverage = json.loads(out)["coverage"]
    assert code == 1 and coverage["reader"] == principal, out + err
    statement = suggested(coverage, "databricks")
    assert statement == f"GRANT SELECT ON TABLE {mapping.name} TO `ci``reader@example.com`"
    assert granted(statement, "databricks") == (mapping.name, principal)
