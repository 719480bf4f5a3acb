"""Snowflake's stage checks written as data (:mod:`targets.checks`): who may still call a
salt function, read with ``SHOW GRANTS ON FUNCTION`` (columns ``privilege``, ``grantee_name``;
docs.snowflake.com/en/sql-reference/sql/show-grants). Every other Snowflake stage check is SQL.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets.checks import MetadataCheck, grant_gone
from accord.targets.sql import name_sql


def function_grants(executor: Any, check: MetadataCheck) -> list[tuple[str, str]]:
    """(privilege, grantee) of every grant on the function."""
    rows = executor.query(f"SHOW GRANTS ON FUNCTION {name_sql(check.table, SNOWFLAKE.name)}()")
    return [(str(r["privilege"]), str(r["grantee_name"])) for r in rows]


def run_checks(executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check; a kind Snowflake has no reader for fails the stage (a check
    that was not run never passes)."""
    out = []
    for check in checks:
        if check.kind != "no_grant":
            raise RuntimeError(f"Snowflake has no reader for a {check.kind!r} stage check")
        out.append([(grant_gone(check, function_grants(executor, check)),)])
    return out
