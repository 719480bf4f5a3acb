"""The SQL of the model's ``unmanaged`` entries, linted like any hand-written SQL file.

An unmanaged entry keeps an object verbatim (``sql``), in its platform's dialect. Every entry
is scanned (:mod:`compiler.sqlscan`) as if it were a file written where its ``sql`` is in the
YAML, so each finding of the SQL checks (ACC001, ACC101, ACC102, ACC201, ACC204, ACC205, ...)
carries the ``file:line:column`` of the YAML: a block scalar (``sql: |``) is placed line for
line at its indentation, any other scalar at its node. All entries are linted together, as
SQL files are (a finding across platforms, ACC203, may name two entries), beside the mapping
tables the model compiles (ACC104): :func:`compiler.lint.engine.lint_project` runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.compiler.core.errors import Location
from accord.compiler.lint.sources import source_line

if TYPE_CHECKING:
    from accord.compiler.model.validate import Project
    from accord.compiler.sqlscan import ScanResult


def placed(sql: str, where: Location) -> str:
    """``sql`` as a file in which it stands where the YAML holds it: after ``line - 1`` empty
    lines; a block scalar's lines (the node's line ends in ``|`` or ``>``: its text starts on
    the next line) each indented as the first line of the block is, any other scalar's text
    from the node's column (after its opening quote)."""
    line = source_line(where.file, where.line) or ""
    rest = line[where.column - 1 :].strip()
    block = rest[:1] in ("|", ">")
    if not block:
        quoted = rest[:1] in ("'", '"')  # the text starts after the opening quote
        return "\n" * (where.line - 1) + " " * (where.column - 1 + quoted) + sql
    following = source_line(where.file, where.line + 1) or ""
    indent = len(following) - len(following.lstrip(" "))
    lines = sql.split("\n")
    return "\n" * where.line + "\n".join(" " * indent + text if text else "" for text in lines)


def scanned(project: Project) -> list[ScanResult]:
    """Every entry's SQL scanned in its platform's dialect, placed where the YAML holds it (a
    dbt macro's as the template it is, as lint reads a template file)."""
    from accord.compiler.lint.inputs.sqlfiles import scan_sql  # noqa: PLC0415 - the scanner: a model with unmanaged SQL only

    out = []
    for name, entry in sorted(project.model.unmanaged.items()):
        where = project.loc("unmanaged", name, "sql")
        out.append(scan_sql(placed(entry.sql, where), where.file, entry.platform))
    return out
