"""A template cannot hide a policy statement from lint (issue 22 item 4).

The shapes are dbt-snow-mask's masking macros (entechlog/dbt-snow-mask,
``macros/snow-mask/create-policy/*.sql``: one ``CREATE MASKING POLICY`` per macro, no ``;``)
with what an attacker adds: an expression on the line before the statement, the role check
written as a string literal in an expression, and the statement in the ninth (or the
thirty-third) branch of an ``{% if %}`` chain. Each statement is analysed (ACC101 on its
``CURRENT_ROLE()``) or reported (ACC001), never skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sql_lint import lint_sql_files

_POLICY = (
    "CREATE MASKING POLICY IF NOT EXISTS {{ database }}.{{ schema }}.mask_email "
    "AS (val string) RETURNS string ->\n"
    "  CASE WHEN {role} IN ('ANALYST') THEN val ELSE '**********' END\n"
)


def _policy(role: str = "CURRENT_ROLE()") -> str:
    return _POLICY.replace("{role}", role)


def _chain(branches: int, policy_in: int) -> str:
    """An ``{% if %}`` chain of ``branches`` branches, the policy in branch ``policy_in``."""
    out = ["{% macro create_masking_policy_mask_email(database, schema) %}"]
    for i in range(1, branches + 1):
        out.append(("{% if" if i == 1 else "{% elif") + f" target.name == 'env{i}' %}}")
        out.append(_policy() if i == policy_in else f"select {i}\n")
    out += ["{% endif %}", "{% endmacro %}"]
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    #: the one rule expected: ACC101 at the role check, or ACC001 where the statement begins
    expected: str


CASES = [
    Case(
        "expression-on-the-line-before",
        "{% macro create_masking_policy_mask_email(database, schema) %}\n"
        "{{ log('creating mask_email', info=True) }}\n"
        "{{ policy_header }}\n" + _policy() + "{% endmacro %}\n",
        "ACC101",
    ),
    Case(
        "expression-before-on-the-same-line",
        "{{ header }} " + _policy(),
        "ACC101",
    ),
    Case(
        "role-check-as-a-string-literal",
        _policy('{{ "CURRENT_ROLE()" }}'),
        "ACC101",
    ),
    Case(
        "role-check-as-a-single-quoted-literal-in-a-condition",
        _policy("{{ 'CURRENT_ROLE()' if strict else 'IS_ROLE_IN_SESSION(''X'')' }}"),
        "ACC101",
    ),
    Case("ninth-branch", _chain(9, 9), "ACC101"),
    Case("tenth-branch-of-twelve", _chain(12, 10), "ACC101"),
    Case("thirty-second-branch", _chain(32, 32), "ACC101"),
    Case("thirty-third-branch-is-reported", _chain(40, 33), "ACC001"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_template_cannot_hide_a_policy_statement(tmp_path: Path, case: Case) -> None:
    (tmp_path / "mask_email.sql").write_text(case.text)
    findings = lint_sql_files(tmp_path, ["mask_email.sql"])
    at = case.text.index("CASE WHEN" if case.expected == "ACC101" else "CREATE MASKING")
    line = case.text.count("\n", 0, at) + 1
    got = [(f.rule, f.location.line) for f in findings]
    assert got == [(case.expected, line)], [str(f.message) for f in findings]


def test_a_literal_that_is_not_a_role_check_is_clean(tmp_path: Path) -> None:
    (tmp_path / "mask_email.sql").write_text(_policy("{{ \"IS_ROLE_IN_SESSION('ANALYST')\" }}"))
    assert lint_sql_files(tmp_path, ["mask_email.sql"]) == []
