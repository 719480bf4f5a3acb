"""Reading the SQL files lint is given: plain SQL, Snowflake scripts, Databricks notebook
source, and Jinja templates (dbt models and macros), each into one :class:`ScanResult`.

A template is read by :mod:`compiler.sqlscan.template` (imported only when a file holds template
syntax) into one or more SQL variants with the template's own offsets; each variant is
scanned and the statements and errors merged, so a finding points at the template file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from accord.compiler.core.errors import Diagnostic, InputError
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.lint.inputs.notebooks import PY_NOTEBOOK
from accord.compiler.sqlscan import ScanError, ScanResult, detect_dialect, scan


def read_text(path: str) -> tuple[str | None, Diagnostic | None]:
    """The file's text, or a located reason it cannot be read (a bounded read of a regular
    file: never a FIFO or a device; UTF-8)."""

    try:
        return decode(read_bytes(Path(path), "SQL file", MAX_FILE_BYTES, path), path, "file"), None
    except InputError as err:
        return None, err.diagnostics[0]


_CELL = re.compile(r"^# COMMAND -{4,}[ \t]*$")
_MAGIC = "# MAGIC"


def notebook_sql(
    text: str,
) -> tuple[str, list[tuple[int, bool]], list[ScanError], list[tuple[int, str]]]:
    """The ``%sql`` cells of a Python notebook as SQL of the same length, line for line and
    column for column: each ``# MAGIC `` prefix becomes spaces, every other line (Python,
    other magics, the ``%sql`` line itself) blanks; each ``# COMMAND`` line ends a
    statement. The strings Python cells pass to ``spark.sql(...)`` are SQL too, at their own
    positions (:mod:`compiler.lint.inputs.pycells`), each a statement of its own; what cannot be read
    there is returned as errors (ACC001), and the SQL resolved from the notebook's strings
    (a name, ``+``, ``.format``) as (offset of the first string it came from, SQL)."""
    out: list[str] = []
    python: list[str] = []
    breaks: list[tuple[int, bool]] = []
    offset = 0
    in_sql = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        magic = body.startswith(_MAGIC)
        python.append(" " * len(body) + ending if magic else line)
        if _CELL.match(body):
            in_sql = False
            breaks.append((offset, True))
            out.append(" " * len(body) + ending)
        elif magic and body[len(_MAGIC) :].strip().startswith("%sql"):
            in_sql = True
            out.append(" " * len(body) + ending)
        elif in_sql and magic:
            out.append(" " * len(_MAGIC) + body[len(_MAGIC) :] + ending)
        else:
            out.append(" " * len(body) + ending)
        offset += len(line)
    sql = "".join(out)
    view = "".join(python)
    from accord.compiler.lint.inputs.pycells import SQL_CALL, sql_strings  # noqa: PLC0415 - notebooks only

    if not SQL_CALL.search(view):
        return sql, breaks, [], []
    strings, resolved, unreadable = sql_strings(view)
    chars = list(sql)
    for s in strings:
        chars[s.start : s.end] = s.text
        breaks += [(s.start, True), (s.end, True)]
    errors = []
    for u in unreadable:
        line = text.count("\n", 0, u.offset) + 1
        column = u.offset - (text.rfind("\n", 0, u.offset) + 1) + 1
        errors.append(ScanError("", line, column, u.reason, "python", (u.offset, u.offset)))
    return "".join(chars), sorted(breaks), errors, [(r.start, r.text) for r in resolved]


def _scan_resolved(text: str, path: str, dialect: str, start: int, sql: str) -> ScanResult:
    """SQL resolved from a notebook's strings, scanned at ``start`` in the file: everything
    before it blank (newlines kept), so its first line and column are the file's."""
    prefix = "".join(ch if ch == "\n" else " " for ch in text[:start])
    return scan(prefix + sql, path, dialect, [(start, True)])


def scan_sql(text: str, path: str, dialect: str | None = None) -> ScanResult:
    """Scan one SQL file, reading it as a Jinja template when it holds template syntax, and
    the ``%sql`` cells of a Databricks Python notebook as Databricks SQL."""
    from accord.compiler.sqlscan.template import has_template_syntax  # noqa: PLC0415 - jinja2: templates only

    if path.lower().endswith(".py") and text.lstrip("\ufeff").startswith(PY_NOTEBOOK):
        sql, breaks, errors, resolved = notebook_sql(text)
        result = scan(sql, path, dialect or "databricks", breaks)
        if not errors and not resolved:
            return result
        statements = list(result.statements)
        scan_errors = list(result.errors) + [dataclasses.replace(e, file=path) for e in errors]
        for start, resolved_sql in resolved:
            more = _scan_resolved(text, path, result.dialect or "databricks", start, resolved_sql)
            statements += more.statements
            scan_errors += more.errors
        statements.sort(key=lambda s: (s.line, s.column))
        scan_errors.sort(key=lambda e: (e.line, e.column, e.message))
        return dataclasses.replace(result, statements=tuple(statements), errors=tuple(scan_errors))
    if not has_template_syntax(text):
        return scan(text, path, dialect)
    from accord.compiler.sqlscan.template import read_template  # noqa: PLC0415 - jinja2: templates only

    template = read_template(text)
    if template.error is not None:
        offset, message = template.error
        line = text.count("\n", 0, offset) + 1
        error = ScanError(
            path,
            line,
            1,
            f"the Jinja template cannot be read: {message}",
            "template",
            (0, len(text)),
        )
        return ScanResult((), dialect, (error,), template)
    variants = template.variants
    # the first variant that tells the dialect decides it (the policy may be in any branch)
    told = (detect_dialect(v, path) for v in variants) if dialect is None else iter(())
    dialect = dialect or next((d for d in told if d is not None), None)
    first = scan(variants[0], path, dialect, template.breaks)
    results = [first]
    if first.dialect is not None:
        results += [scan(v, path, first.dialect, template.breaks) for v in variants[1:]]
    merged = _merge(results, template)
    if not template.unread:
        return merged
    # a branch past the most followed is never a silent pass: ACC001 where it begins
    unread = tuple(
        ScanError(
            path,
            text.count("\n", 0, offset) + 1,
            offset - (text.rfind("\n", 0, offset) + 1) + 1,
            f"it is in branch {number} of an {{% if %}} with {count} branches, and accord "
            f"reads at most {limit} branches of one {{% if %}} (split the chain, or move "
            "the statement into a macro of its own)",
            "statement",
            None,
        )
        for offset, number, count, limit in template.unread
    )
    errors = sorted({*merged.errors, *unread}, key=lambda e: (e.line, e.column, e.message))
    return dataclasses.replace(merged, errors=tuple(errors))


def _merge(results: Sequence[ScanResult], template: object) -> ScanResult:
    """One result from the scans of a template's variants: each statement and error once."""
    seen: set[tuple[object, ...]] = set()
    statements = []
    for result in results:
        for stmt in result.statements:
            key = (stmt.kind, stmt.line, stmt.column, stmt.text, stmt.column_name, stmt.policy)
            if key not in seen:
                seen.add(key)
                statements.append(stmt)
    errors = sorted(
        {e for r in results for e in r.errors}, key=lambda e: (e.line, e.column, e.message)
    )
    statements.sort(key=lambda s: (s.line, s.column))
    return ScanResult(tuple(statements), results[0].dialect, tuple(errors), template)


def read_sql_files(
    paths: Sequence[str], dialect: str | None
) -> tuple[list[ScanResult], list[Diagnostic]]:
    """Every readable file scanned, and the files that could not be read."""
    results: list[ScanResult] = []
    problems: list[Diagnostic] = []
    for path in paths:
        text, problem = read_text(path)
        if problem is not None:
            problems.append(problem)
        elif text is not None:
            results.append(scan_sql(text, path, dialect))
    return results, problems
