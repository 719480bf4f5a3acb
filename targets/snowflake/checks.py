"""Snowflake's stage checks written as data (:mod:`targets.checks`): who may still call a
salt function, read with ``SHOW GRANTS ON FUNCTION`` (columns ``privilege``, ``grantee_name``;
docs.snowflake.com/en/sql-reference/sql/show-grants), and who owns an object: the OWNERSHIP row
of ``SHOW GRANTS ON <type> <name>`` (a table: ``SHOW TABLES LIKE`` in its schema, column
``owner``; sql-reference/sql/show-tables). Every other Snowflake stage check is SQL.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets.checks import MetadataCheck, grant_gone, owned_by
from accord.targets.sql import literal_sql, name_sql


def function_grants(executor: Any, check: MetadataCheck) -> list[tuple[str, str]]:
    """(privilege, grantee) of every grant on the function."""
    rows = executor.query(f"SHOW GRANTS ON FUNCTION {name_sql(check.table, SNOWFLAKE.name)}()")
    return [(str(r["privilege"]), str(r["grantee_name"])) for r in rows]


def owner(executor: Any, check: MetadataCheck) -> str:
    """Who owns the object of an "owner" check ("" when no answer names one)."""
    kind = check.securable_type or ""
    platform = SNOWFLAKE.name
    if kind in ("mapping table", "governed table"):
        db, schema, leaf = check.table.split(".")
        rows = executor.query(
            f"SHOW TABLES LIKE {literal_sql(leaf, platform)} IN SCHEMA "
            f"{name_sql(f'{db}.{schema}', platform)}"
        )
        found = [r for r in rows if str(r.get("name") or "").upper() == leaf.upper()]
        return str(found[0].get("owner") or "") if found else ""
    on = {"salt function": "FUNCTION", "row access policy": "ROW ACCESS POLICY"}.get(
        kind, "MASKING POLICY"
    )
    name = name_sql(check.table, platform) + ("()" if on == "FUNCTION" else "")
    rows = executor.query(f"SHOW GRANTS ON {on} {name}")
    return next((str(r["grantee_name"]) for r in rows if r["privilege"] == "OWNERSHIP"), "")


def run_checks(executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check; a kind Snowflake has no reader for fails the stage (a check
    that was not run never passes)."""
    out = []
    for check in checks:
        if check.kind == "owner":
            out.append([(owned_by(check, owner(executor, check)),)])
            continue
        if check.kind != "no_grant":
            raise RuntimeError(f"Snowflake has no reader for a {check.kind!r} stage check")
        out.append([(grant_gone(check, function_grants(executor, check)),)])
    return out
