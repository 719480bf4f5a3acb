"""The SQL a Databricks Python notebook passes to ``spark.sql(...)``, at its own positions.

Notebooks that set up row filters and masks often do it from Python cells:

    spark.sql(f\"\"\"
      CREATE OR REPLACE FUNCTION {catalog}.sec.ssn_mask(ssn STRING)
      RETURN CASE WHEN is_account_group_member('hr') THEN ssn ELSE '***' END
    \"\"\")

Each Python cell is parsed with :mod:`ast` (never by hand); every call ``<x>.sql(<string>)``
whose first argument is a string literal or an f-string yields its text, written into the
notebook's SQL view at the same line and column, so findings point into the ``.py`` file. An
f-string's ``{expression}`` becomes a name of the same length (``{catalog}`` reads
``_catalog_``), as a template's unresolved construct does. A literal whose text differs from its
value (backslash escapes) cannot keep its positions: it is reported (ACC001) when it holds a
policy statement, never skipped in silence; so is a cell that is not valid Python, calls
``.sql(`` and names a policy statement. A call whose argument is a variable (``spark.sql(q)``)
is not followed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

#: words that make an unreadable string worth reporting (a policy statement may be in it)
_POLICY = re.compile(r"\b(POLICY|MASK|ROW\s+FILTER|FUNCTION)\b", re.IGNORECASE)
_PREFIX = re.compile(r"^([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")


@dataclass(frozen=True)
class SqlString:
    """The SQL of one ``.sql(...)`` call: ``start``/``end`` offsets of its text in the file."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Unreadable:
    """A call (or a cell) whose SQL cannot be read at its positions."""

    offset: int
    reason: str


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(text: str, starts: list[int], lineno: int, col_bytes: int) -> int:
    """The character offset of ``ast``'s (1-based line, UTF-8 byte column)."""
    start = starts[lineno - 1]
    end = starts[lineno] if lineno < len(starts) else len(text)
    line = text[start:end]
    return start + len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))


def _placeholders(body: str) -> str | None:
    """An f-string's body with each ``{expression}`` replaced by a name of its length and
    ``{{``/``}}`` by a brace and a space; None when the braces do not balance."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if body.startswith("{{", i) or body.startswith("}}", i):
            out.append(ch + " ")
            i += 2
        elif ch == "{":
            depth, j = 1, i + 1
            while j < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[j], 0)
                j += 1
            if depth:
                return None
            inner = re.sub(r"\W", "_", body[i + 1 : j - 1])
            out.append("_" + inner + "_")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _string_sql(text: str, start: int, end: int) -> str | None:
    """The SQL of the string literal at ``text[start:end]``, of the same length as its body
    (the text between the quotes), or None when its value is not its text."""
    source = text[start:end]
    m = _PREFIX.match(source)
    if m is None or not source.endswith(m.group(2)):
        return None
    prefix, quote = m.group(1).lower(), m.group(2)
    body = source[len(m.group(0)) : len(source) - len(quote)]
    if "b" in prefix or ("\\" in body and "r" not in prefix):
        return None
    if "f" in prefix:
        return _placeholders(body)
    return body


def _cells(python: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each cell: the text between ``# COMMAND ----------`` lines."""
    bounds = [0]
    for m in re.finditer(r"^# COMMAND -{4,}[ \t]*$", python, re.MULTILINE):
        bounds += [m.start(), m.end()]
    bounds.append(len(python))
    return [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]


def sql_strings(python: str) -> tuple[list[SqlString], list[Unreadable]]:
    """Every ``.sql(...)`` string of the Python cells of ``python`` (the notebook with its
    ``# MAGIC`` lines blanked: same length, same lines), and what could not be read."""
    starts = _line_starts(python)
    found: list[SqlString] = []
    unreadable: list[Unreadable] = []
    for cell_start, cell_end in _cells(python):
        cell = python[cell_start:cell_end]
        if ".sql(" not in cell:
            continue
        # the cell alone, every other line blank: ast's line numbers are the file's
        view = re.sub(r"[^\n]", " ", python[:cell_start]) + cell
        try:
            tree = ast.parse(view)
        except SyntaxError as err:
            if _POLICY.search(cell):
                unreadable.append(
                    Unreadable(cell_start, f"this Python cell cannot be parsed ({err.msg})")
                )
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "sql"
                and node.args
            ):
                continue
            arg = node.args[0]
            if not isinstance(arg, ast.Constant | ast.JoinedStr) or (
                isinstance(arg, ast.Constant) and not isinstance(arg.value, str)
            ):
                continue  # a variable or an expression: nothing to read here
            assert arg.end_lineno is not None and arg.end_col_offset is not None
            a = _offset(python, starts, arg.lineno, arg.col_offset)
            b = _offset(python, starts, arg.end_lineno, arg.end_col_offset)
            sql = _string_sql(python, a, b)
            if sql is None:
                if _POLICY.search(python[a:b]):
                    unreadable.append(
                        Unreadable(
                            a,
                            "this .sql(...) string's value is not its text (backslash escapes "
                            "or unbalanced braces), so its statements cannot be located",
                        )
                    )
                continue
            body_start = a + len(_PREFIX.match(python[a:b]).group(0))  # type: ignore[union-attr]
            found.append(SqlString(body_start, body_start + len(sql), sql))
    return found, unreadable
