"""The policy SQL that ships, read back into per-platform state for execution.

Verification never re-derives policy logic from the YAML: it reads the SQL files that
``accord compile`` writes (rendered in memory, or a compiled directory as it is now, perhaps
edited by hand), scans them with :mod:`compiler.sqlscan` and replays the statements in file
order into a :class:`PlatformSQL`: which policies and functions exist, with their bodies (later
definitions replace earlier ones); what is attached to which table and column, which tags are
set and which ABAC policies exist, read into catalog objects by :mod:`targets.read` (the one
model the compiler lowers to); and which statements fill the mapping tables.

Salt placeholders are filled in memory with test salts generated for the run
(:func:`compiler.model.salts.materialize`); nothing here is ever written to a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlglot import exp

from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.core.platforms import PLATFORMS
from accord.compiler.model.salts import SaltError, materialize
from accord.compiler.sqlscan import Param, Statement, scan
from accord.targets.read import PLACEMENT_KINDS, Placements, fold
from accord.targets.render import render_files, selected_platforms

if TYPE_CHECKING:
    from accord.compiler.model.validate import Project

PLATFORM_DIRS = PLATFORMS

#: ``other`` statements that build or fill the mapping tables; everything else of kind
#: ``other`` (transactions, grants, USE ...) changes nothing verification can see.
TABLE_STATEMENTS = (exp.Create, exp.Insert, exp.Merge, exp.Delete, exp.Update, exp.TruncateTable)


@dataclass(frozen=True)
class Routine:
    """A masking policy, row access policy, projection, aggregation or join policy, or SQL
    function with a parsed body."""

    name: str
    params: tuple[Param, ...]
    body: exp.Expression
    stmt: Statement


@dataclass
class PlatformSQL:
    """One platform's compiled SQL, replayed: the routines with their bodies, the placements
    as catalog objects (:class:`targets.read.Placements`), and the statements that fill the
    mapping tables."""

    platform: str
    routines: dict[str, Routine] = field(default_factory=dict)
    placed: Placements = field(init=False)
    #: CREATE TABLE / INSERT / MERGE / DELETE ... in file order
    table_statements: list[Statement] = field(default_factory=list)
    #: the statements that create routines and fill tables, in file order (the Spark engine
    #: executes the Databricks ones as written)
    executed: list[Statement] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.placed = Placements(self.platform)

    def routine(self, name: str) -> Routine | None:
        return self.routines.get(fold(name, self.platform))

    def attached_columns(self, table: str) -> set[str]:
        """Every column of ``table`` that the SQL names (filters, masks, tags)."""
        key = fold(table, self.platform)
        placed = self.placed
        out: set[str] = set()
        if key in placed.row_filters:
            out.update(c for c in placed.row_filters[key].columns if not c.startswith("'"))
        for (t, col), att in placed.masks.items():
            if t == key:
                out.add(col)
                out.update(c for c in att.using if not c.startswith("'"))
        out.update(col for (t, col) in placed.tags if t == key and col)
        return out

    def attached_columns_by_table(self) -> dict[str, set[str]]:
        """:meth:`attached_columns` of every table at once, by folded table name: one pass
        over the SQL instead of one per table."""
        placed = self.placed
        out: dict[str, set[str]] = {}
        for key, att in placed.row_filters.items():
            out.setdefault(key, set()).update(c for c in att.columns if not c.startswith("'"))
        for (t, col), att in placed.masks.items():
            found = out.setdefault(t, set())
            found.add(col)
            found.update(c for c in att.using if not c.startswith("'"))
        for t, col in placed.tags:
            if col:
                out.setdefault(t, set()).add(col)
        return out


@dataclass(frozen=True)
class CompiledSQL:
    """Where the SQL came from, and each platform's state."""

    origin: str
    platforms: dict[str, PlatformSQL]


def read_compiled_dir(out: str) -> dict[str, str]:
    """``OUT/<platform>/**/*.sql`` as {path as given: text}."""
    root = Path(out)
    if not root.is_dir():
        raise UsageError(f"--compiled {out}: no such directory (write one with `accord compile`)")
    files: dict[str, str] = {}
    for platform in PLATFORM_DIRS:
        for path in sorted((root / platform).rglob("*.sql")):
            rel = path.relative_to(root).as_posix()

            name = os.path.join(out, rel)
            files[name] = decode(read_bytes(path, "SQL file", MAX_FILE_BYTES, name), name, "file")
    if not files:
        raise UsageError(
            f"--compiled {out}: no snowflake/*.sql or databricks/*.sql files (was it written by "
            "`accord compile`?)"
        )
    return files


def render_sql(project: Project) -> dict[str, str]:
    """The SQL files ``accord compile --target all`` writes (``snowflake/``, ``databricks/``),
    rendered in memory. Not the Terraform files, which verification does not read (at a
    few thousand datasets rendering them took longer than every SQL file together)."""

    files: dict[str, str] = {}
    for platform in selected_platforms(project, "all"):
        files.update(render_files(project, platform))
    return files


def platform_of(path: str) -> str | None:
    parts = Path(path).parts
    return next((p for p in reversed(parts[:-1]) if p in PLATFORM_DIRS), None)


def load_sql(files: Mapping[str, str], salt: Callable[[str], str], origin: str) -> CompiledSQL:
    """Scan ``files`` ({path: text}, each under a ``snowflake/`` or ``databricks/`` folder)
    and replay them per platform. ``salt`` gives the run's test salt of a salt reference.
    Scan errors are raised together as located :class:`InputError`."""
    platforms: dict[str, PlatformSQL] = {}
    problems: list[Diagnostic] = []
    for path in sorted(files):
        platform = platform_of(path)
        if platform is None:
            continue
        state = platforms.setdefault(platform, PlatformSQL(platform))
        try:
            text = materialize(files[path], platform, salt)
        except SaltError as err:
            line, _, message = str(err).partition(": ")
            where = int(line.split()[-1]) if line.startswith("line ") else 1
            problems.append(Diagnostic(Location(path, where, 1), message or str(err)))
            continue
        result = scan(text, path, platform)
        problems.extend(
            Diagnostic(Location(e.file, e.line, e.column), e.message) for e in result.errors
        )
        for stmt in result.statements:
            _replay(state, stmt)
    if problems:
        raise InputError(problems)
    return CompiledSQL(origin, platforms)


#: statements that define a routine: policies of every kind accord compiles, functions
_ROUTINES = (
    "row_access_policy",
    "masking_policy",
    "projection_policy",
    "aggregation_policy",
    "join_policy",
    "function",
)
_DROPS = tuple(f"drop_{k}" for k in _ROUTINES if k != "function")


def _replay(state: PlatformSQL, stmt: Statement) -> None:
    p = state.platform
    kind = stmt.kind
    if kind in _ROUTINES and stmt.name:
        state.executed.append(stmt)
        if stmt.body is not None:
            state.routines[fold(stmt.name, p)] = Routine(stmt.name, stmt.params, stmt.body, stmt)
        else:  # a non-SQL function: it exists, but verification cannot execute it
            state.routines.pop(fold(stmt.name, p), None)
    elif kind == "alter_policy_body" and stmt.name and stmt.body is not None:
        old = state.routine(stmt.name)
        if old is not None:
            state.routines[fold(stmt.name, p)] = Routine(old.name, old.params, stmt.body, stmt)
    elif kind in _DROPS and stmt.name:
        state.routines.pop(fold(stmt.name, p), None)
    elif kind in PLACEMENT_KINDS:
        state.placed.read(stmt)
    elif kind == "other" and isinstance(stmt.expression, TABLE_STATEMENTS):
        e = stmt.expression
        if not isinstance(e, exp.Create) or str(e.args.get("kind", "")).upper() == "TABLE":
            state.table_statements.append(stmt)
            state.executed.append(stmt)
