"""Binding policy bodies: parameters, subquery scoping, inlined functions, context functions."""

from __future__ import annotations

import pytest

from accord.compiler.sqlscan import scan
from accord.compiler.verify.bind import Binder, BindError, row_column
from accord.compiler.verify.sources import PlatformSQL, Routine

GRANTS = {
    "databricks:gov.pol.grants": {"code", "grp"},
    "snowflake:GOV.POL.GRANTS": {"code", "role"},
}


def routine(sql: str, dialect: str) -> tuple[Routine, PlatformSQL]:
    result = scan(sql, f"f.{dialect}.sql", dialect)
    assert result.errors == ()
    state = PlatformSQL(dialect)
    for stmt in result.statements:
        assert stmt.name is not None and stmt.body is not None
        state.routines[stmt.name.upper() if dialect == "snowflake" else stmt.name.lower()] = (
            Routine(stmt.name, stmt.params, stmt.body, stmt)
        )
    return list(state.routines.values())[-1], state


CASES = [
    (
        "unqualified parameter outside any subquery",
        "databricks",
        "CREATE FUNCTION gov.pol.f(v STRING) RETURN v = 'x'",
        "accord_t.\"COL\" = 'x'",
    ),
    (
        "the subquery alias's column is not the parameter",
        "databricks",
        "CREATE FUNCTION gov.pol.f(code STRING) RETURN EXISTS(SELECT 1 FROM gov.pol.grants AS g "
        "WHERE g.code = f.code AND is_account_group_member(g.grp))",
        'WHERE g.code = accord_t."COL" AND LIST_CONTAINS(accord_p.dbx_groups, g.grp)',
    ),
    (
        "an unqualified name inside the subquery is the table's column (inner scope wins)",
        "databricks",
        "CREATE FUNCTION gov.pol.f(code STRING) RETURN EXISTS(SELECT 1 FROM gov.pol.grants AS g "
        "WHERE g.code = code)",
        "WHERE g.code = code",
    ),
    (
        "the compiler's <dim>_value parameter inside the subquery",
        "snowflake",
        "CREATE ROW ACCESS POLICY GOV.POL.P AS (CODE_VALUE VARCHAR) RETURNS BOOLEAN -> "
        "EXISTS(SELECT 1 FROM GOV.POL.GRANTS AS g WHERE g.CODE = CODE_VALUE "
        "AND IS_ROLE_IN_SESSION(g.ROLE))",
        'WHERE g.CODE = accord_t."COL" AND LIST_CONTAINS(accord_p.sf_roles, g.ROLE)',
    ),
    (
        "CURRENT_ROLE() is the primary role only",
        "snowflake",
        "CREATE MASKING POLICY GOV.POL.M AS (VAL VARCHAR) RETURNS VARCHAR -> "
        "CASE WHEN CURRENT_ROLE() = 'R' THEN VAL ELSE '***' END",
        "CASE WHEN accord_p.sf_primary = 'R' THEN accord_t.\"COL\" ELSE '***' END",
    ),
    (
        "CURRENT_AVAILABLE_ROLES() as a JSON array string",
        "snowflake",
        "CREATE MASKING POLICY GOV.POL.M AS (VAL VARCHAR) RETURNS VARCHAR -> "
        "IFF(CONTAINS(CURRENT_AVAILABLE_ROLES(), 'R'), VAL, NULL)",
        "CONTAINS(accord_p.sf_available, 'R')",
    ),
    (
        "is_member() asks workspace-local groups; session_user() the persona's user",
        "databricks",
        "CREATE FUNCTION gov.pol.m(val STRING) RETURN CASE WHEN is_member('g') "
        "OR session_user() = 'u' THEN val END",
        "LIST_CONTAINS(accord_p.dbx_workspace_groups, 'g') OR accord_p.user_name = 'u'",
    ),
    (
        "a compiled salt function is inlined; sha2 is SHA-256 and concat propagates NULL",
        "databricks",
        "CREATE FUNCTION gov.pol.salt() RETURN 'pepper';\n"
        "CREATE FUNCTION gov.pol.m(val STRING) RETURN sha2(concat(val, gov.pol.salt()), 256)",
        "SHA256(accord_t.\"COL\" || 'pepper')",
    ),
]


@pytest.mark.parametrize(("case", "dialect", "sql", "expected"), CASES, ids=[c[0] for c in CASES])
def test_binding(case: str, dialect: str, sql: str, expected: str) -> None:
    found, state = routine(sql, dialect)
    bound = Binder(state, GRANTS).call_sql(found, [row_column("COL")])
    assert expected in bound, bound


def test_wrong_number_of_arguments_is_located() -> None:
    found, state = routine(
        "CREATE FUNCTION gov.pol.f(a STRING, b STRING) RETURN a = b", "databricks"
    )
    with pytest.raises(BindError) as err:
        Binder(state, GRANTS).call_sql(found, [row_column("COL")])
    assert str(err.value).startswith("f.databricks.sql:1:")
    assert "takes 2 argument(s)" in str(err.value)
