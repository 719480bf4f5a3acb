"""The denial table (compiler/data/denial_codes.json, read by compiler/connect/denials.py): one
test per row, built from the error the real client raises (snowflake-connector-python's
ProgrammingError; the Databricks SDK's errors and a FAILED statement through the real
WorkspaceClient), classified both ways the table is read: what the deploying role needs, and
the codes the executor captures from that error found as a denial (``accord probe --live``)."""

from __future__ import annotations

import pytest
from databricks.sdk.errors import PermissionDenied
from snowflake.connector.errors import ProgrammingError

from accord.compiler.connect.denials import ROWS, classify, denial_table, find_denial
from accord.compiler.connect.executor import databricks_codes, failed_codes, snowflake_codes

SET_MASK = (
    "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN SUBJECT_ID SET MASKING POLICY "
    "GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK"
)
ADD_RAP = "ALTER TABLE DISCOVERY.ASSAYS.RESULTS ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.P ON (PROGRAMME_CODE)"


def sf(errno: int, sqlstate: str, msg: str) -> ProgrammingError:
    return ProgrammingError(msg=msg, errno=errno, sqlstate=sqlstate)


class FailedStatement:
    """The shape DatabricksExecutor hands the table for a FAILED statement (error_code, msg)."""

    def __init__(self, code: str | None, msg: str) -> None:
        self.error_code = code
        self.msg = msg

    def __str__(self) -> str:
        return self.msg

    def status(self) -> object:
        """The FAILED statement status this shape comes from."""
        error = type("ServiceError", (), {"error_code": self.error_code, "message": self.msg})
        return type("StatementStatus", (), {"state": "FAILED", "error": error})()


def captured(error: object) -> dict[str, object]:
    """The codes the executor captures from ``error`` (ExecutionError.codes)."""
    if isinstance(error, ProgrammingError):
        return snowflake_codes(error)
    if isinstance(error, FailedStatement):
        return failed_codes(error.status())[1]
    return databricks_codes(error)


CASES = [
    (
        "snowflake-apply-masking",
        "snowflake",
        sf(3001, "42501", "003001 (42501): SQL access control error:\nInsufficient privileges to operate on table 'RESULTS'"),
        SET_MASK,
        "APPLY MASKING POLICY on the account (or APPLY on GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK) and OWNERSHIP on DISCOVERY.ASSAYS.RESULTS",
    ),
    (
        "snowflake-apply-row-access",
        "snowflake",
        sf(3001, "42501", "003001 (42501): SQL access control error:\nInsufficient privileges to operate on table 'RESULTS'"),
        ADD_RAP,
        "APPLY ROW ACCESS POLICY on the account (or APPLY on GOVERNANCE.POLICIES.P) and OWNERSHIP on DISCOVERY.ASSAYS.RESULTS",
    ),
    (
        "snowflake-insufficient-privileges",
        "snowflake",
        sf(3001, "42501", "003001 (42501): SQL access control error:\nInsufficient privileges to operate on schema 'POLICIES'"),
        "CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.M AS (VAL VARCHAR) RETURNS VARCHAR -> VAL",
        "CREATE MASKING POLICY on the schema of GOVERNANCE.POLICIES.M",
    ),
    (
        "snowflake-not-authorized",
        "snowflake",
        sf(2003, "42S02", "002003 (42S02): SQL compilation error:\nObject 'GOVERNANCE.POLICIES.PROGRAMME_GRANTS' does not exist or not authorized."),
        "SELECT COUNT(*) FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS",
        "USAGE (or OWNERSHIP) and visibility on GOVERNANCE.POLICIES.PROGRAMME_GRANTS",
    ),
    (
        "databricks-sdk-permission-denied",
        "databricks",
        PermissionDenied("User does not have EXECUTE on Routine 'governance.policies.m'", error_code="PERMISSION_DENIED"),
        None,
        "the privilege the statement needs on governance.policies.m",
    ),
    (
        "databricks-permission-denied",
        "databricks",
        FailedStatement("PERMISSION_DENIED", "User does not have MANAGE on Table 'omics.variants.calls'"),
        "ALTER TABLE omics.variants.calls DROP ROW FILTER",
        "MANAGE (or ownership) on omics.variants.calls",
    ),
    (
        "databricks-insufficient-permissions",
        "databricks",
        FailedStatement("BAD_REQUEST", "[INSUFFICIENT_PERMISSIONS] Insufficient privileges: User does not have MANAGE on Table 'omics.variants.calls'."),
        "ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET MASK governance.policies.m",
        "MANAGE (or ownership) and EXECUTE on governance.policies.m on omics.variants.calls",
    ),
    (
        "databricks-sqlstate-42501",
        "databricks",
        FailedStatement("BAD_REQUEST", "User lacks privileges. SQLSTATE: 42501"),
        "CREATE OR REPLACE FUNCTION governance.policies.f(v STRING) RETURNS STRING RETURN v",
        "CREATE FUNCTION and USE SCHEMA on the schema of governance.policies.f",
    ),
]  # fmt: skip


def test_every_row_has_a_case() -> None:
    assert sorted(r.id for r in ROWS) == sorted(c[0] for c in CASES)


@pytest.mark.parametrize(
    ("row", "platform", "error", "sql", "needs"), CASES, ids=[c[0] for c in CASES]
)
def test_denial_row(row: str, platform: str, error: object, sql: str | None, needs: str) -> None:
    denial = classify(platform, error, sql)
    assert denial is not None and denial.row == row
    assert str(denial).startswith(f"denied: the deploying role needs {needs} (")
    found = find_denial(captured(error), (platform,))
    assert found is not None and found.code in denial_table()[platform].codes
    codes = next(r for r in ROWS if r.id == row).codes
    assert not codes or found.code in codes  # the SDK's class is a shape, not a code


@pytest.mark.parametrize(
    ("platform", "error"),
    [
        ("snowflake", sf(1003, "42000", "001003 (42000): SQL compilation error: syntax error")),
        ("snowflake", sf(3158, "0A000", "already has a row access policy")),
        ("databricks", FailedStatement("BAD_REQUEST", "[PARSE_SYNTAX_ERROR] Syntax error")),
    ],
)
def test_a_fault_is_not_a_denial(platform: str, error: object) -> None:
    assert classify(platform, error, "SELECT 1") is None
    assert find_denial(captured(error)) is None


def test_the_payload_codes_are_the_rows_codes() -> None:
    """The codes that in a payload mean the persona was denied are the rows' own: each,
    raised by the real client, is a denial for the executor, and each row's code is one."""
    table = denial_table()
    snowflake = table["snowflake"].codes
    pairs = {("3001", "42501"), ("2003", "42S02")}
    for errno, state in pairs:
        assert {errno, errno.zfill(6), state} <= snowflake
        assert (
            classify("snowflake", sf(int(errno), state, f"{errno} ({state}): denied")) is not None
        )
    assert snowflake == {c for e, s in pairs for c in (e, e.zfill(6), s)}
    databricks = table["databricks"].codes
    for code in sorted(databricks - {"42501"}):
        assert classify("databricks", FailedStatement(code, f"[{code}] no")) is not None
    assert classify("databricks", FailedStatement(None, "[X] no SQLSTATE: 42501")) is not None
    assert classify("databricks", PermissionDenied("403")) is not None
    assert databricks == {"INSUFFICIENT_PERMISSIONS", "PERMISSION_DENIED", "42501"}


def test_a_readers_denial_names_the_reading_role_and_the_grant_it_lacks() -> None:
    """A live read (introspect, drift, probe sample) is refused for the reading role, not the
    deploying one: the same denial row, said of the reader, with the privilege the
    platform's message names ("User does not have MANAGE on schema ..." from the Databricks
    SDK's PermissionDenied), or the one the read knows it needs (SELECT on a mapping table,
    where Snowflake's 002003 names none)."""
    dbx = classify(
        "databricks", PermissionDenied("User does not have MANAGE on schema omics.variants")
    )
    assert dbx is not None and str(dbx).startswith("denied: the deploying role needs")
    said = str(dbx.for_reader("accord-ci@example.com"))
    assert said.startswith(
        "denied: the reading role accord-ci@example.com needs MANAGE on schema omics.variants ("
    )
    snow = classify(
        "snowflake",
        sf(2003, "42S02", "Object 'GOVERNANCE.POLICIES.G' does not exist or not authorized."),
        "SELECT K, P FROM GOVERNANCE.POLICIES.G ORDER BY 1, 2",
    )
    assert snow is not None
    said = str(snow.for_reader("ACCORD_READER", "SELECT", "GOVERNANCE.POLICIES.G"))
    assert said.startswith(
        "denied: the reading role ACCORD_READER needs SELECT on GOVERNANCE.POLICIES.G ("
    )
    assert "deploying" not in said
