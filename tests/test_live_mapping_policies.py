"""Policies on the mapping tables, and a masking policy that exempts itself from accord's
(issue 41, item 3), on the stand-ins with a least-privilege reader.

A row filter or row access policy on a mapping table hides grant rows from the reader, and from
the policies' subqueries that read the table as their owner: Snowflake lets a policy's body read
a mapping table "protected by a row access policy" (docs.snowflake.com/en/user-guide/
security-row-using), and a Databricks row filter applies "whenever rows are fetched from the
relation" (sql-ref-syntax-ddl-row-filter). ``EXEMPT_OTHER_POLICIES = TRUE`` lets a masking
policy sit on a column a row access policy reads (sql-reference/sql/create-masking-policy).
On main neither stand-in could attach a policy to a mapping table, the Snowflake stand-in
dropped EXEMPT_OTHER_POLICIES, and drift read no policy on a mapping table: a console policy
that hid an extra grant row from the reader drifted clean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import load_project
from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.snowflake import Session
from accord.targets import lower_all
from tests.cli import run_cli
from tests.live_helpers import (
    ROOT,
    SNOWFLAKE_READER,
    Platforms,
    databricks_reader,
    snowflake_reader,
)

POLICIES = ROOT / "policies"
GRANTS = "GOVERNANCE.POLICIES.PROGRAMME_GRANTS"
T = "DISCOVERY.ASSAYS.RESULTS"


def deploy(platform: str, tmp_path: Path) -> None:
    plans = tmp_path / f"m-{platform}"
    code, _, err = run_cli(
        ["plan", str(POLICIES), "--base", f"live:{platform}", "--out", str(plans)]
    )
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", platform, "--plans", str(plans), "--policies", str(POLICIES)]
    )  # fmt: skip
    assert code == 0, out + err


def drift(platform: str) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    code, out, err = run_cli(["drift", str(POLICIES), "--platform", platform, "--format", "json"])
    assert code in (0, 1), err
    data = json.loads(out)
    return code, data["findings"], data["coverage"][0]


def messages(findings: list[dict[str, Any]], rule: str) -> str:
    return "\n".join(f["message"] for f in findings if f["rule"] == rule)


@pytest.fixture
def snowflake(platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    deploy("snowflake", tmp_path)
    sf = platforms.snowflake
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})  # a console's own database
    snowflake_reader(sf, lower_all(load_project(POLICIES))["snowflake"])
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    assert drift("snowflake")[0] == 0
    return sf


def test_a_row_access_policy_that_hides_a_grant_row_from_the_reader_is_reported(
    snowflake: Any,
) -> None:
    """A console adds a grant row and a row access policy on the mapping table that hides it
    from the drift reader only: the reader's rows look like the model's. Drift reports the
    policy on the mapping table (ACC702, at its entitlement dimension) and that the rows are
    not proven (ACC707), never a clean verdict."""
    sf = snowflake
    sf.execute(
        f"INSERT INTO {GRANTS} (PROGRAMME_CODE, ROLE_NAME) VALUES ('ONC-101', 'CONSOLE_ROLE')"
    )
    sf.execute(
        "CREATE ROW ACCESS POLICY OPS.ADHOC.HIDE_FROM_READER AS (ROLE_NAME VARCHAR) RETURNS "
        f"BOOLEAN -> NOT IS_ROLE_IN_SESSION('{SNOWFLAKE_READER}') OR ROLE_NAME <> 'CONSOLE_ROLE'"
    )
    sf.execute(
        f"ALTER TABLE {GRANTS} ADD ROW ACCESS POLICY OPS.ADHOC.HIDE_FROM_READER ON (ROLE_NAME)"
    )
    reader = Session("accord_ci", login_role=SNOWFLAKE_READER)
    rows = sf.execute_as(reader, f"SELECT ROLE_NAME FROM {GRANTS}")[1]
    assert ("CONSOLE_ROLE",) not in rows  # hidden from the reader ...
    code, findings, coverage = drift("snowflake")
    assert code == 1 and coverage["complete"] is False
    said = messages(findings, "ACC702")
    assert "OPS.ADHOC.HIDE_FROM_READER is attached and the model did not put it there" in said
    assert f"{GRANTS} is a mapping table" in said
    assert next(f for f in findings if f["rule"] == "ACC702")["object"] == "entitlements.programme"
    assert f"every row of mapping table {GRANTS}" in messages(findings, "ACC707")


def test_a_row_access_policy_on_the_mapping_table_applies_inside_accord_s_policies(
    snowflake: Any,
) -> None:
    """The policies read the mapping table through its own row access policy: hiding the
    CNS-204 grants takes CNS-204's rows from the CRO, who is granted them."""
    sf = snowflake
    sf.seed_rows(T, [{"PROGRAMME_CODE": "CNS-204", "RESULT_VALUE": "1", "NOTES": "n"}])
    cro = Session("u", primary="CRO_EXTERNAL")
    query = f"SELECT PROGRAMME_CODE FROM {T}"
    assert sf.execute_as(cro, query)[1] == [("CNS-204",)]
    sf.execute(
        "CREATE ROW ACCESS POLICY OPS.ADHOC.NO_CNS AS (CODE VARCHAR) RETURNS BOOLEAN -> "
        "CODE <> 'CNS-204'"
    )
    sf.execute(f"ALTER TABLE {GRANTS} ADD ROW ACCESS POLICY OPS.ADHOC.NO_CNS ON (PROGRAMME_CODE)")
    assert sf.execute_as(cro, query)[1] == []
    code, findings, _ = drift("snowflake")
    assert code == 1 and "OPS.ADHOC.NO_CNS" in messages(findings, "ACC702")


def test_a_mask_that_exempts_itself_from_accord_s_row_access_policy_is_named(
    snowflake: Any,
) -> None:
    """A masking policy on the column accord's row access policy reads is refused unless it
    is EXEMPT_OTHER_POLICIES = TRUE; the exempt one is read as such (SHOW MASKING POLICIES'
    options) and drift says it exempts itself from accord's."""
    sf = snowflake
    sf.execute("CREATE MASKING POLICY OPS.ADHOC.PLAIN AS (V VARCHAR) RETURNS VARCHAR -> V")
    with pytest.raises(SqlError, match="EXEMPT_OTHER_POLICIES"):
        sf.execute(
            f"ALTER TABLE {T} MODIFY COLUMN PROGRAMME_CODE SET MASKING POLICY OPS.ADHOC.PLAIN"
        )
    sf.execute(
        "CREATE MASKING POLICY OPS.ADHOC.PEEK AS (V VARCHAR) RETURNS VARCHAR -> V "
        "EXEMPT_OTHER_POLICIES = TRUE"
    )
    sf.execute(f"ALTER TABLE {T} MODIFY COLUMN PROGRAMME_CODE SET MASKING POLICY OPS.ADHOC.PEEK")
    options = {r[1]: r[7] for r in sf.execute("SHOW MASKING POLICIES IN ACCOUNT")[1]}
    assert json.loads(options["PEEK"]) == {"EXEMPT_OTHER_POLICIES": True}
    code, findings, _ = drift("snowflake")
    said = messages(findings, "ACC702")
    assert code == 1 and "OPS.ADHOC.PEEK" in said
    assert "EXEMPT_OTHER_POLICIES = TRUE, on a column accord's policies read" in said


def test_a_row_filter_on_the_databricks_mapping_table_is_reported(
    platforms: Platforms, tmp_path: Path
) -> None:
    """A console row filter on the Databricks mapping table (information_schema.row_filters of
    the governance catalog) hides the extra grant row from the reader: ACC702 and ACC707."""
    deploy("databricks", tmp_path)
    dbx = platforms.databricks
    dbx.execute(
        "INSERT INTO governance.policies.programme_grants VALUES ('ONC-101', 'console-group')"
    )
    dbx.seed_table("ops.adhoc.unused", {"x": "STRING"})
    dbx.execute(
        "CREATE FUNCTION ops.adhoc.hide(g STRING) RETURNS BOOLEAN RETURN g <> 'console-group'"
    )
    dbx.execute(
        "ALTER TABLE governance.policies.programme_grants SET ROW FILTER ops.adhoc.hide ON (group_name)"
    )
    databricks_reader(dbx, {"omics.variants", "discovery_lake.assays"})
    code, findings, coverage = drift("databricks")
    assert code == 1 and coverage["complete"] is False
    said = messages(findings, "ACC702")
    assert "ops.adhoc.hide is attached and the model did not put it there" in said
    assert "governance.policies.programme_grants is a mapping table" in said
    assert "extra" not in messages(findings, "ACC704")  # the hidden row is not seen ...
    assert "every row of mapping table governance.policies.programme_grants" in messages(
        findings, "ACC707"
    )  # ... and that is said


# ------------------------------------------------------------------ item 4: policies elsewhere


def no_salt(tmp_path: Path) -> Path:
    """policies/ without a salted mask (the subject pseudonym redacted instead): no salt
    function, so nothing asks the reader for MANAGE GRANTS on their account."""
    import shutil

    d = tmp_path / "nosalt"
    shutil.copytree(POLICIES, d)
    masks = d / "masks.yaml"
    text = masks.read_text()
    start = text.index("  subject_pseudonym:")
    end = text.index("  # Free-text notes")
    masks.write_text(
        text[:start]
        + '  subject_pseudonym:\n    strategy: redact\n    replacement: "[id]"\n'
        + "    unmasked_for: [clinical_unblinded]\n\n"
        + text[end:]
    )
    return d


def test_a_policy_in_a_database_the_reader_cannot_resolve_is_unseen_even_without_salts(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SHOW ... POLICIES IN ACCOUNT lists a policy only to a role that can resolve its database
    and schema, whatever global APPLY privilege it holds (sql-reference/sql/desc-masking-policy:
    USAGE on the parent database and schema). A console mask in OPS.ADHOC on a governed
    column is invisible to a reader with the global APPLY privileges but no MANAGE GRANTS: the
    reader check demands MANAGE GRANTS though the model has no salt, and drift says what it
    could not see (ACC707), never a clean verdict."""
    d = no_salt(tmp_path)
    plans = tmp_path / "m"
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    sf = platforms.snowflake
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})
    sf.execute("CREATE MASKING POLICY OPS.ADHOC.CLEAR AS (V VARCHAR) RETURNS VARCHAR -> V")
    sf.execute(f"ALTER TABLE {T} MODIFY COLUMN RESULT_VALUE SET MASKING POLICY OPS.ADHOC.CLEAR")
    snowflake_reader(sf, lower_all(load_project(d))["snowflake"], without=("MANAGE GRANTS",))
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    reader = Session("accord_ci", login_role=SNOWFLAKE_READER)
    listed = [r[1] for r in sf.execute_as(reader, "SHOW MASKING POLICIES IN ACCOUNT")[1]]
    assert "CLEAR" not in listed and "FREE_TEXT_MASK" in listed  # the documented rule
    code, out, _ = run_cli(["introspect", "--check-reader", "--platform", "snowflake", str(d)])
    assert code == 1 and "policies in databases and schemas it holds no privilege on" in out
    code, findings, coverage = drift_of(d)
    assert code == 1 and coverage["complete"] is False
    assert "OPS.ADHOC.CLEAR" not in messages(findings, "ACC702")  # unseen ...
    assert "policies in databases and schemas it holds no privilege on" in messages(
        findings, "ACC707"
    )  # ... and said
    sf.grant_to_role("GOVERNANCE_READ", "MANAGE GRANTS", "ACCOUNT")  # the README's reader
    code, findings, coverage = drift_of(d)
    assert code == 1 and coverage["complete"] is True
    assert "OPS.ADHOC.CLEAR is attached and the model did not put it there" in messages(
        findings, "ACC702"
    )


def drift_of(d: Path) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    code, out, err = run_cli(["drift", str(d), "--platform", "snowflake", "--format", "json"])
    assert code in (0, 1), err
    data = json.loads(out)
    return code, data["findings"], data["coverage"][0]
