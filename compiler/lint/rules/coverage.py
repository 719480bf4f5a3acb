"""ACC001: what accord could not read is a finding, never a silent pass."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sqlglot import exp

from accord.compiler.core.errors import Location
from accord.compiler.lint.checks import SqlContext, sql_rule
from accord.compiler.lint.finding import Finding, SqlHit

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from accord.compiler.sqlscan import ScanError, ScanResult, Statement

_FIX = {
    "statement": "correct the statement at this position; until then accord cannot check it",
    "tokenize": "close the quoted text; accord cannot read the statements after this point",
    "dialect": "name the file *.snowflake.sql or *.databricks.sql, or pass --dialect",
    "template": "correct the template syntax; accord cannot read the file until then",
    "python": "pass the statement as a plain or raw string literal (no backslash escapes), "
    "or a name assigned one at the top level of a cell, or move it to a %sql cell, so accord "
    "can check it",
}
#: words that make an unrecognised CREATE / ALTER statement a policy statement
_POLICY_WORDS = frozenset({"POLICY", "MASK", "FILTER", "FUNCTION"})


def _offsets(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    return starts[min(line, len(starts)) - 1] + column - 1


def _unresolved(result: ScanResult, start: int, end: int, at: int) -> str:
    """For a template: the construct accord could not resolve nearest the error at ``at``."""
    template = result.template
    if template is None:
        return ""
    inside = template.constructs_in(start, end)
    if not inside:
        return ""
    before = [c for c in inside if c.start <= at]
    construct = before[-1] if before else inside[0]
    starts = _offsets(template.variants[0]) if template.variants else [0]
    line = bisect.bisect_right(starts, construct.start)
    column = construct.start - starts[line - 1] + 1
    return (
        f" (this template statement holds {construct.described} at {line}:{column}, which "
        "accord cannot resolve and reads as a name)"
    )


def _error_finding(result: ScanResult, error: ScanError) -> Finding:
    why = error.message
    if error.kind == "statement":
        why = f"{why[:1].lower()}{why[1:]}"
    extra = ""
    if error.span is not None and result.template is not None and result.template.variants:
        starts = _offsets(result.template.variants[0])
        extra = _unresolved(result, *error.span, _offset(starts, error.line, error.column))
    message = {
        "statement": f"a policy statement could not be analysed: {why}{extra}",
        "tokenize": f"the rest of the file could not be analysed: {why}",
        "dialect": f"a policy statement could not be analysed: {why}",
        "template": f"no statement of this file could be analysed: {why}",
        "python": f"a policy statement could not be analysed: {why}",
    }[error.kind]
    return Finding(
        Location(error.file, error.line, error.column),
        "ACC001",
        "",
        message,
        _FIX[error.kind],
    )


def _policy_like(stmt: Statement) -> bool:
    words = stmt.text.upper().split()
    return bool(words) and words[0] in ("CREATE", "ALTER") and bool(_POLICY_WORDS & set(words))


def _unrecognised(result: ScanResult) -> Iterator[SqlHit]:
    """In a template, a CREATE / ALTER statement about a policy, mask, filter or function
    that accord did not recognise because a template expression stands where SQL syntax is
    expected (``CREATE {{ kind }} POLICY``)."""
    template = result.template
    if template is None or not template.variants:
        return
    starts = _offsets(template.variants[0])
    for stmt in result.statements:
        start = _offset(starts, stmt.line, stmt.column)
        if stmt.kind == "policy":  # a policy of a kind accord does not model: is its kind
            # (the words before POLICY) an expression standing for a keyword?
            header = re.search(r"\bPOLICY\b", stmt.text, re.IGNORECASE)
            inside = template.constructs_in(start, start + (header.start() if header else 0))
        elif stmt.kind != "other" or not _policy_like(stmt):
            continue
        else:
            inside = template.constructs_in(start, start + len(stmt.text))
        if not inside:
            continue
        construct = inside[0]
        line = bisect.bisect_right(starts, construct.start)
        column = construct.start - starts[line - 1] + 1
        finding = Finding(
            Location(stmt.file, line, column),
            "ACC001",
            "",
            f"a statement that looks like a policy statement could not be recognised: "
            f"{construct.described} stands where accord expects SQL syntax and cannot be "
            "resolved",
            "write the statement's keywords in the template (keep template expressions to "
            "names and literals), or move the choice into an {% if %} around whole statements",
        )
        yield SqlHit(finding, (stmt,))


#: calls that make a view decide access (as compiler.lint.bodies reads views)
_ACCESS_WORDS = frozenset(
    {"IS_MEMBER", "IS_ACCOUNT_GROUP_MEMBER", "IS_ROLE_IN_SESSION", "CURRENT_ROLE", "CURRENT_USER"}
)


def _unparsed_views(result: ScanResult) -> Iterator[SqlHit]:
    """A ``CREATE VIEW`` that decides access per caller and that sqlglot could not parse."""
    for stmt in result.statements:
        if stmt.kind != "other" or stmt.expression is not None:
            continue
        words = re.findall(r"[A-Za-z_]+", stmt.text.upper())
        if not words or words[0] != "CREATE" or "VIEW" not in words[:6]:
            continue
        if not _ACCESS_WORDS & set(words):
            continue
        finding = Finding(
            Location(stmt.file, stmt.line, stmt.column),
            "ACC001",
            "",
            "a view that decides access per caller (it checks roles, groups or the user) "
            "could not be analysed: accord cannot parse its query",
            "correct the view's SQL; until then its role checks and masks are not checked",
        )
        yield SqlHit(finding, (stmt,))


#: calls in ``{{ }}`` that give a value (a name, a literal), not SQL of their own
_VALUE_CALLS = frozenset({"var", "env_var", "ref", "source", "accord_salt", "adapter"})


def _macro_bodies(result: ScanResult) -> Iterator[SqlHit]:
    """In a template, a policy or function body holding ``{{ some_macro(...) }}`` where an
    expression stands: the SQL the macro renders (perhaps a hash or a role check) is not in
    the file, so the body cannot be checked."""
    template = result.template
    if template is None:
        return
    for stmt in result.statements:
        if stmt.body is None:
            continue
        for column in stmt.body.find_all(exp.Column):
            called = template.calls.get(column.name)
            if not called or called in _VALUE_CALLS:
                continue
            from accord.compiler.sqlscan import node_position  # noqa: PLC0415 - SQL files only: policy files need no scanner

            line, col = node_position(stmt, column)
            source = template.placeholders[column.name]
            finding = Finding(
                Location(stmt.file, line, col),
                "ACC001",
                stmt.name or "",
                f"a policy statement could not be analysed in full: its body calls the macro "
                f"`{source}`, whose SQL accord cannot resolve (what it renders, a hash or a "
                "role check, is not checked)",
                "write the expression in the policy body, or lint the macro's rendered SQL "
                "(dbt compile) as well",
            )
            yield SqlHit(finding, (stmt,))


@sql_rule("ACC001")
def unanalysed_policy(ctx: SqlContext) -> Iterator[SqlHit]:
    """A policy statement in a SQL file could not be analysed.

    ## What it does
    Reports every policy statement accord could not read: a policy of any kind (row access,
    masking, projection, aggregation, join, or a `CREATE ... POLICY` of a kind accord does not
    model that is written with a body), a filter or mask function, an ABAC policy, an
    attachment, or a view that decides access per caller (a Databricks dynamic view, a
    pipeline's live view, materialized view or streaming table, a Snowflake secure view) with a
    syntax error (at the line and column of the error), text after an unterminated quote, a
    function or an access-deciding view in a file whose dialect cannot be told (nothing in the
    file tells, or it calls functions only Snowflake has beside functions only Databricks has:
    the message says which), a Jinja template with a syntax error, a template
    statement whose keywords come from an expression accord cannot resolve (an expression
    standing for an object kind, `alter {{ materialization }} ...`, is read as each kind it
    can take: the string constants its `{% set %}` assigns, else a table and a view), or a policy
    body that calls a macro (`{{ mask_hash('val') }}`) whose SQL is not in the file, or, in a
    Databricks Python notebook, a `spark.sql(...)` string holding a policy statement whose value
    is not its text (backslash escapes) or a cell that is not valid Python. The rest of the
    batch is still linted, and the command exits 1, not 2, when these are the only
    problems (as ruff reports a syntax error as a diagnostic and goes on).

    ## Why is this bad?
    A governance linter that reports "no findings" for a file it could not read gives a
    false all-clear: the `CURRENT_ROLE()` or unsalted `SHA2` in the statement it skipped
    ships unchecked. accord never reports a file clean that it could not read.

    ## Example
    ```sql
    -- the body's CASE has no END: nothing in this policy can be checked
    CREATE MASKING POLICY gov.pol.email_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN CURRENT_ROLE() = 'SUPPORT' THEN val ELSE '***';
    ```

    ## How to fix
    Correct the statement at the position given (the message says what accord expected
    there). For a file of unknown dialect, name it `*.snowflake.sql` or `*.databricks.sql`
    or pass `--dialect`. In a template, keep template expressions to names and literals
    (`{{ target.schema }}`, `'{{ var("role") }}'`), not SQL keywords.
    """
    for result in ctx.results:
        for error in result.errors:
            if error.kind != "suppression":
                yield SqlHit(_error_finding(result, error), ())
        yield from _unrecognised(result)
        yield from _unparsed_views(result)
        yield from _macro_bodies(result)
