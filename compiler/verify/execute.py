"""Executing parts on embedded DuckDB, and locating a part that cannot be executed.

Parts with the same SQL and input types, in however many datasets, form one :class:`Group`,
executed in one query (:func:`execute_group`): the distinct input values of every dataset's
generated rows cross-joined with every persona. The answer for a row of a dataset is the
group's answer for that row's inputs (policy bodies are deterministic: only
``bind.SAFE_FUNCTIONS``), so the number of queries depends on the distinct policies, not on the
personas or the datasets that share them. A part that cannot be executed is located by
executing its dataset's own query over its rows (:func:`execute_directly`).

Reviewed or hand-edited SQL is untrusted input: every connection is a
:func:`locked_connection`. duckdb is imported by this module, which only
:mod:`compiler.verify.engine` imports: ``accord lint`` never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import duckdb
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.sqlscan import Statement
from accord.compiler.verify.bind import PERSONA, ROWS, duck_table, unknown_function
from accord.compiler.verify.data import GenTable
from accord.compiler.verify.parts import Part
from accord.compiler.verify.sources import PlatformSQL

#: Reviewed or hand-edited SQL is untrusted input: DuckDB runs it with no file, network or
#: extension access and with its configuration locked, so that nothing it computes can come
#: from outside the generated test data.
LOCKED = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


def locked_connection() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(":memory:", config=dict(LOCKED))


# --------------------------------------------------------------------------------------------
# the mapping tables


_TABLE_PARTS = ("catalog", "db", "this")


def run_table_statements(con: duckdb.DuckDBPyConnection, sql: PlatformSQL) -> None:
    """Create and fill the mapping tables as the compiled SQL does, each under its DuckDB
    name (:func:`compiler.verify.bind.duck_table`)."""
    for stmt in sql.table_statements:
        assert stmt.expression is not None
        tree = stmt.expression
        # the tables renamed in place for generating, then restored (the scanned
        # statements name the mapping tables in reports): a copy of every INSERT's
        # VALUES cost more than generating it
        renamed = []
        for table in list(tree.find_all(exp.Table)):
            if table.name:
                name = ".".join(p.name for p in table.parts)
                renamed.append((table, {k: table.args.get(k) for k in _TABLE_PARTS}))
                table.set("catalog", None)
                table.set("db", None)
                table.set("this", exp.to_identifier(duck_table(sql.platform, name), quoted=True))
        try:
            problem = unknown_function(tree)
            if problem:
                raise InputError(
                    Diagnostic(
                        Location(stmt.file, stmt.line, stmt.column),
                        f"accord verify will not execute this statement: it {problem}",
                    )
                )
            text = tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE)
        except SqlglotError as err:
            raise _cannot_execute(stmt, err) from None
        finally:
            for table, parts in renamed:
                for k, v in parts.items():
                    table.set(k, v)
        try:
            con.execute(text)
        except (SqlglotError, duckdb.Error) as err:
            raise _cannot_execute(stmt, err) from None


def _cannot_execute(stmt: Statement, err: Exception) -> InputError:
    message = str(err).strip().splitlines()[0]
    return InputError(
        Diagnostic(
            Location(stmt.file, stmt.line, stmt.column),
            f"cannot execute this statement on DuckDB: {message}",
        )
    )


# --------------------------------------------------------------------------------------------
# grouped execution


class Group:
    """One distinct part (SQL, conflict SQL, input types), the distinct input values of every
    dataset that evaluates it, and what it answers each persona for each of them."""

    def __init__(self, gid: int, part: Part, types: tuple[str, ...]) -> None:
        self.id = gid
        #: the first part of this SQL (its statements locate an execution failure)
        self.part = part
        self.types = types
        self.datasets: list[str] = []
        #: distinct input tuples, in order of first use; ``_index`` finds one by value
        self.inputs: list[tuple[Any, ...]] = []
        self._index: dict[tuple[Any, ...], int] = {}
        self._codes: dict[tuple[int, ...], tuple[int, ...]] = {}
        #: persona -> the answer for each input tuple
        self.answers: dict[str, list[Any]] = {}
        #: persona -> input tuples for which more than one ABAC policy applies
        self.conflicts: dict[str, set[int]] = {}

    def codes(self, columns: tuple[tuple[Any, ...], ...], length: int) -> tuple[int, ...]:
        """Per generated row, the index of its inputs: the row ``r`` of a column holds
        ``values[r % len(values)]`` (:func:`compiler.verify.data.generate`)."""
        # by identity: equal value lists are one object (data.generate), and the lists
        # live as long as the run's tables
        key = (*map(id, columns), length)
        found = self._codes.get(key)
        if found is None:
            out = []
            for r in range(length):
                values = tuple(v[r % len(v)] for v in columns)
                # by type and value: True and 1 are equal dict keys, not equal inputs
                typed = tuple((type(v), v) for v in values)
                code = self._index.get(typed)
                if code is None:
                    code = self._index[typed] = len(self.inputs)
                    self.inputs.append(values)
                out.append(code)
            found = self._codes[key] = tuple(out)
        return found


@dataclass(frozen=True)
class Use:
    """Where one part of one dataset is evaluated: its group, and per generated row the
    index of the row's inputs in the group."""

    group: Group
    codes: tuple[int, ...]


def execute_group(con: duckdb.DuckDBPyConnection, group: Group) -> bool:
    """Execute ``group`` for every persona and fill its answers; False when DuckDB cannot
    execute it (:func:`execute_directly` then locates the failure)."""
    ident = exp.to_identifier(f"accord_in:{group.id}", quoted=True).sql("duckdb")
    cols = "".join(f', "accord_in_{i}" {duck_type}' for i, duck_type in enumerate(group.types))
    con.execute(f"CREATE TABLE {ident} (accord_v INTEGER{cols})")
    # one statement per group, each input a list parameter unnested in parallel
    unnest = ", ".join("UNNEST(?)" for _ in range(len(group.types) + 1))
    con.execute(
        f"INSERT INTO {ident} SELECT {unnest}",
        [list(range(len(group.inputs))), *(list(c) for c in zip(*group.inputs, strict=True))]
        if group.types
        else [list(range(len(group.inputs)))],
    )
    query = (
        f"SELECT {PERSONA}.persona, {ROWS}.accord_v, ({group.part.sql}), "
        f"({group.part.conflict or 'FALSE'}) "
        f"FROM {ident} AS {ROWS} CROSS JOIN accord_personas AS {PERSONA}"
    )
    try:
        result = con.execute(query).fetchall()
    except duckdb.Error:
        return False
    n = len(group.inputs)
    for persona, v, value, conflict in result:
        answers = group.answers.get(persona)
        if answers is None:
            answers = group.answers[persona] = [None] * n
        answers[v] = value
        if conflict:
            group.conflicts.setdefault(persona, set()).add(v)
    return True


# --------------------------------------------------------------------------------------------
# one dataset's own query, and locating a failure


def execute_directly(
    con: duckdb.DuckDBPyConnection,
    table: GenTable,
    parts: tuple[Part, dict[str, Part]],
    created: set[str],
) -> list[tuple[Any, ...]]:
    """Execute a dataset's ``parts`` (built over its own columns) over its generated rows
    ``table``, named as in the dataset, every persona at once: the query a failure is located
    with (and the tests' reference for the grouped evaluation). ``created``: the datasets
    whose rows are already in a table. One record per persona and row, in that order:
    persona, row, visible, each column's value, then the conflict flags."""
    row, columns = parts
    dataset = table.dataset
    source = exp.to_identifier(f"accord_data:{dataset}", quoted=True).sql("duckdb")
    if dataset not in created:
        created.add(dataset)
        cols = ", ".join(
            f"{exp.to_identifier(c.name, quoted=True).sql('duckdb')} {c.duck_type}"
            for c in table.columns
        )
        con.execute(f"CREATE TABLE {source} (accord_row INTEGER, {cols})")
        unnest = ", ".join("UNNEST(?)" for _ in range(len(table.columns) + 1))
        con.execute(
            f"INSERT INTO {source} SELECT {unnest}",
            [list(range(table.length)), *(list(c) for c in zip(*table.rows, strict=True))]
            if table.columns
            else [list(range(table.length))],
        )
    outputs = [f"({row.sql}) AS accord_visible"]
    outputs += [f"({p.sql})" for p in columns.values()]
    outputs.append(f"({row.conflict or 'FALSE'})")
    outputs += [f"({p.conflict or 'FALSE'})" for p in columns.values()]
    query = (
        f"SELECT {PERSONA}.persona, {ROWS}.accord_row, {', '.join(outputs)} "
        f"FROM {source} AS {ROWS} CROSS JOIN accord_personas AS {PERSONA} "
        "ORDER BY 1, 2"
    )
    try:
        return con.execute(query).fetchall()
    except duckdb.Error:
        _locate_failure(con, source, [row, *columns.values()])
        raise


def _locate_failure(con: duckdb.DuckDBPyConnection, source: str, parts: Iterable[Part]) -> None:
    for part in parts:
        try:
            con.execute(
                f"SELECT ({part.sql}) FROM {source} AS {ROWS} "
                f"CROSS JOIN accord_personas AS {PERSONA}"
            ).fetchall()
        except duckdb.Error as err:
            stmt = part.statements[0] if part.statements else None
            message = str(err).strip().splitlines()[0]
            if stmt is None:
                break
            line = stmt.body_line or stmt.line
            col = stmt.body_column if stmt.body_line else stmt.column
            raise InputError(
                Diagnostic(
                    Location(stmt.file, line, col),
                    f"{stmt.name or 'this statement'}: cannot execute on DuckDB: {message}",
                )
            ) from None
