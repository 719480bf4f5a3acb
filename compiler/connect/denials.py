"""The error shapes that mean "privilege denied", per platform.

A denial is not a fault: the statement is fine, the deploying role lacks a privilege. It is
reported as ``denied: the deploying role needs X on Y`` and never retried. Each row of the
tables below names the error shape (as the real client raises it), and what the role needs for
the statement that failed; the first matching row wins. Tests build each row's error with the
client's own exception classes (tests/test_live_denials.py).

Sources: Snowflake error 002003 / SQLSTATE 42S02 "does not exist or not authorized" (a missing
object and one the role may not see look alike), 003001 / 42501 "SQL access control error:
Insufficient privileges to operate on ..."; docs.snowflake.com/en/user-guide/security-column-ddm-use
and security-row-using (APPLY MASKING POLICY / APPLY ROW ACCESS POLICY on the account, or APPLY on
the policy, plus OWNERSHIP of the table). Databricks: ``[INSUFFICIENT_PERMISSIONS] ... SQLSTATE:
42501``, error code ``PERMISSION_DENIED`` (REST 403, ``databricks.sdk.errors.PermissionDenied``);
docs.databricks.com/.../filters-and-masks (a role needs MANAGE or ownership of the table and
EXECUTE on the function).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.sqlscan import Statement, scan

#: what the deploying role needs, per statement kind (sqlscan kinds): (privilege, on what)
_SNOWFLAKE_NEEDS: dict[str, tuple[str, str]] = {
    "set_masking_policy": (
        "APPLY MASKING POLICY on the account (or APPLY on {policy}) and OWNERSHIP",
        "{table}",
    ),
    "unset_masking_policy": ("APPLY MASKING POLICY on the account and OWNERSHIP", "{table}"),
    "add_row_access": (
        "APPLY ROW ACCESS POLICY on the account (or APPLY on {policy}) and OWNERSHIP",
        "{table}",
    ),
    "drop_row_access": ("APPLY ROW ACCESS POLICY on the account and OWNERSHIP", "{table}"),
    "row_access_policy": ("CREATE ROW ACCESS POLICY", "the schema of {name}"),
    "masking_policy": ("CREATE MASKING POLICY", "the schema of {name}"),
    "alter_policy_body": ("OWNERSHIP", "{name}"),
    "drop_row_access_policy": ("OWNERSHIP", "{name}"),
    "drop_masking_policy": ("OWNERSHIP", "{name}"),
    "function": ("CREATE FUNCTION", "the schema of {name}"),
    "snowflake_tag": ("CREATE TAG", "the schema of {name}"),
    "alter_tag_set_masking": ("APPLY MASKING POLICY on the account and OWNERSHIP", "{name}"),
    "alter_tag_unset_masking": ("APPLY MASKING POLICY on the account and OWNERSHIP", "{name}"),
    "set_column_tag": ("APPLY TAG on the account (or APPLY on the tag)", "{table}"),
    "set_table_tag": ("APPLY TAG on the account (or APPLY on the tag)", "{table}"),
}
_DATABRICKS_NEEDS: dict[str, tuple[str, str]] = {
    "set_row_filter": ("MANAGE (or ownership) and EXECUTE on {policy}", "{table}"),
    "drop_row_filter": ("MANAGE (or ownership)", "{table}"),
    "set_mask": ("MANAGE (or ownership) and EXECUTE on {policy}", "{table}"),
    "drop_mask": ("MANAGE (or ownership)", "{table}"),
    "function": ("CREATE FUNCTION and USE SCHEMA", "the schema of {name}"),
    "abac_policy": ("MANAGE", "the securable of policy {name}"),
    "drop_abac_policy": ("MANAGE", "the securable of policy {name}"),
    "set_tags": ("APPLY TAG (and ASSIGN on the governed tag)", "{table}"),
}
_NEEDS = {"snowflake": _SNOWFLAKE_NEEDS, "databricks": _DATABRICKS_NEEDS}

#: the object a platform message names: 'DB.SCH.OBJ' (Snowflake quotes it; messages, not SQL)
_NAMED = re.compile(r"'([^']+)'")


@dataclass(frozen=True)
class Denial:
    """A recognised denial: which row matched and what the role needs."""

    row: str
    privilege: str
    on: str
    said: str

    def __str__(self) -> str:
        return f"denied: the deploying role needs {self.privilege} on {self.on} ({self.said})"


@dataclass(frozen=True)
class Row:
    id: str
    platform: str
    #: the error shape, in words (docs/README)
    shape: str
    matches: Callable[[Any], bool]
    #: kinds of statement this row is specific to (empty: any)
    kinds: tuple[str, ...] = ()


def _attr(err: Any, name: str) -> Any:
    return getattr(err, name, None)


def _errno(err: Any) -> int | None:
    value = _attr(err, "errno")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _text(err: Any) -> str:
    return str(_attr(err, "msg") or err)


def _sf(code: int, state: str) -> Callable[[Any], bool]:
    return lambda err: (
        _errno(err) == code or (_attr(err, "sqlstate") == state and _errno(err) in (None, -1, code))
    )


def _dbx_code(*codes: str) -> Callable[[Any], bool]:
    def matches(err: Any) -> bool:
        code = _attr(err, "error_code")
        text = _text(err)
        return code in codes or any(f"[{c}]" in text for c in codes)

    return matches


def _dbx_sqlstate(err: Any) -> bool:
    return "SQLSTATE: 42501" in _text(err) or _attr(err, "sql_state") == "42501"


def _sdk_permission_denied(err: Any) -> bool:
    try:
        from databricks.sdk.errors import PermissionDenied
    except ImportError:  # pragma: no cover - the extra is installed wherever this runs
        return False
    return isinstance(err, PermissionDenied)


ROWS: tuple[Row, ...] = (
    Row(
        "snowflake-apply-masking",
        "snowflake",
        "003001 / 42501 on SET or UNSET MASKING POLICY (APPLY MASKING POLICY missing)",
        _sf(3001, "42501"),
        ("set_masking_policy", "unset_masking_policy", "alter_tag_set_masking"),
    ),
    Row(
        "snowflake-apply-row-access",
        "snowflake",
        "003001 / 42501 on ADD or DROP ROW ACCESS POLICY (APPLY ROW ACCESS POLICY missing)",
        _sf(3001, "42501"),
        ("add_row_access", "drop_row_access"),
    ),
    Row(
        "snowflake-insufficient-privileges",
        "snowflake",
        "003001 / 42501 'SQL access control error: Insufficient privileges to operate on ...'",
        _sf(3001, "42501"),
    ),
    Row(
        "snowflake-not-authorized",
        "snowflake",
        "002003 / 42S02 '... does not exist or not authorized' (a hidden object looks missing)",
        _sf(2003, "42S02"),
    ),
    Row(
        "databricks-sdk-permission-denied",
        "databricks",
        "HTTP 403: databricks.sdk.errors.PermissionDenied",
        _sdk_permission_denied,
    ),
    Row(
        "databricks-permission-denied",
        "databricks",
        "error_code PERMISSION_DENIED (a FAILED statement or a REST error)",
        _dbx_code("PERMISSION_DENIED"),
    ),
    Row(
        "databricks-insufficient-permissions",
        "databricks",
        "[INSUFFICIENT_PERMISSIONS] in a FAILED statement's message",
        _dbx_code("INSUFFICIENT_PERMISSIONS"),
    ),
    Row("databricks-sqlstate-42501", "databricks", "SQLSTATE: 42501", _dbx_sqlstate),
)


def _statement(platform: str, sql: str | None) -> Statement | None:
    if not sql:
        return None
    found = scan(sql, "<statement>", platform).statements
    return found[0] if found else None


def classify(platform: str, err: Any, sql: str | None = None) -> Denial | None:
    """The denial ``err`` is, for the statement ``sql``; None when it is a fault."""
    stmt = _statement(platform, sql)
    kind = stmt.kind if stmt is not None else ""
    for row in ROWS:
        if row.platform != platform or (row.kinds and kind not in row.kinds):
            continue
        if row.matches(err):
            return _denial(platform, row, err, stmt)
    return None


def _denial(platform: str, row: Row, err: Any, stmt: Statement | None) -> Denial:
    said = " ".join(_text(err).split())
    needs = _NEEDS[platform].get(stmt.kind) if stmt is not None else None
    if needs is not None and stmt is not None:
        fields = {"policy": stmt.policy, "table": stmt.table, "name": stmt.name}
        privilege, on = (part.format(**fields) for part in needs)
        return Denial(row.id, privilege, on, said)
    named = _NAMED.search(said)
    on = named.group(1) if named else "the object the statement names"
    if row.id == "snowflake-not-authorized":
        return Denial(row.id, "USAGE (or OWNERSHIP) and visibility", on, said)
    return Denial(row.id, "the privilege the statement needs", on, said)
