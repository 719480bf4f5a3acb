"""The Spark harness: the compiled Databricks SQL executed per persona on Spark SQL.

Set up once per verify run (:meth:`SparkHarness.set_up`): one Spark database per
``catalog.schema`` (:mod:`compiler.verify.spark.names`) and the harness's own (``accord``);
the mapping tables created and filled by the compiled statements
(:mod:`compiler.verify.spark.tables`); every compiled SQL function created by its statement as
written, with salts filled as DuckDB's engine fills them (the run's test salts) and only its
names changed. Databricks' membership functions do not exist on Spark: the harness creates
``is_account_group_member(g)`` and ``is_member(g)`` as SQL functions over its table of each
persona's groups (``accord.members``), re-created for each persona with that persona's name
(unqualified calls in the compiled bodies resolve to them), and binds ``current_user()`` and
``current_date()`` to stand-ins of its own.

Evaluated per verify day (:meth:`SparkHarness.evaluate`), for every Databricks dataset:
Spark has no ``SET ROW FILTER``, ``SET MASK`` or ``CREATE POLICY``, so the harness applies
them. A row filter is a ``WHERE`` over its function; a mask is its function in the select
list; an ABAC policy applies where its scope, ``WHEN`` and ``MATCH COLUMNS`` say (the harness's
own matcher, :mod:`compiler.verify.spark.matcher`) and to the personas its ``TO`` / ``EXCEPT``
name. Calls of one function on arguments of the same types are evaluated together, over the
distinct argument values of every dataset's generated rows (the same rows DuckDB's engine
reads), in one query per persona; a row of a dataset answers what its values answered.
Several ABAC filters (or masks of one column) applying to one persona are a refusal, as
DuckDB's engine and Unity Catalog (``UC_ABAC_MULTIPLE_ROW_FILTERS`` / ``MULTIPLE_MASKS``) have
it. The answers come back in the shape the comparison with the model reads
(:mod:`compiler.verify.results`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.platforms import DATABRICKS
from accord.compiler.model.types import parse_type
from accord.compiler.sqlscan import Statement
from accord.compiler.verify.execute import Use
from accord.compiler.verify.parts import Part, _routine_object
from accord.compiler.verify.report import SqlObject
from accord.compiler.verify.sources import CompiledSQL, PlatformSQL, Routine, fold
from accord.compiler.verify.spark import matcher
from accord.compiler.verify.spark.names import HARNESS, Names, databases, quote
from accord.compiler.verify.spark.tables import TableRunner, cannot_execute, spark_error

if TYPE_CHECKING:
    from accord.compiler.verify.engine import Verifier
    from accord.compiler.verify.spark.session import LocalSpark

PLATFORM = DATABRICKS.name

#: the stand-ins re-created for each persona (when a compiled body calls them)
_STAND_INS = ("is_account_group_member", "is_member", "accord_user")


def _lit(value: str) -> str:
    return exp.Literal.string(value).sql("spark")


def _is_literal(item: str) -> bool:
    """An attachment's argument written as a constant (as DuckDB's engine reads it)."""
    return item[:1] in ("'", '"') or item[:1].isdigit() or item[:1] == "-"


@dataclass(frozen=True)
class Call:
    """One attached function: its name as attached, and its arguments: ``("col", column)``
    or ``("lit", constant as written)``."""

    kind: str  # "filter" | "mask"
    function: str
    args: tuple[tuple[str, str], ...]


class _Answered:
    """What one dataset's row predicate or column shows each persona, row by row (the shape
    of :class:`compiler.verify.execute.Group` that the comparison reads)."""

    def __init__(self, gid: int) -> None:
        self.id = gid
        self.answers: dict[str, list[Any]] = {}
        self.conflicts: dict[str, set[int]] = {}


@dataclass
class _CallGroup:
    """The calls of one function on arguments of the same types: the distinct argument
    values of every dataset that makes them, and what each persona gets for each."""

    number: int
    call: Call
    types: tuple[str, ...]
    inputs: list[tuple[Any, ...]] = field(default_factory=list)
    index: dict[tuple[Any, ...], int] = field(default_factory=dict)
    #: persona -> code -> answer (a filter: whether the row is kept)
    answers: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def view(self) -> str:
        return f"accord_in_{self.number}"

    def code(self, values: tuple[Any, ...]) -> int:
        typed = tuple((type(v), v) for v in values)
        found = self.index.get(typed)
        if found is None:
            found = self.index[typed] = len(self.inputs)
            self.inputs.append(values)
        return found


@dataclass
class _Applied:
    """A call as one dataset makes it: its group, the code of each generated row, who it
    applies to (None: everyone) and the objects and statements it comes from."""

    group: _CallGroup
    codes: tuple[int, ...]
    who: tuple[tuple[str, ...], tuple[str, ...]] | None
    objects: list[SqlObject]
    statements: list[Statement]


@dataclass
class SparkResult:
    """The Spark engine's answers for the Databricks datasets: where each row predicate and
    column is answered (the comparison's ``uses``) and the parts naming their SQL."""

    uses: dict[str, tuple[Use, dict[str, Use]]]
    parts_of: dict[str, tuple[Part, dict[str, Part]]]


class SparkHarness:
    """The compiled Databricks SQL of one verify run, on ``spark``."""

    def __init__(self, spark: LocalSpark, compiled: CompiledSQL) -> None:
        self.spark = spark
        self.sql = compiled.platforms.get(PLATFORM) or PlatformSQL(PLATFORM)
        self.names = Names(databases(self._schemas()))
        #: folded function name -> the statement that could not create it, and Spark's error
        self.failed: dict[str, tuple[Statement, BaseException]] = {}
        self._ids = 1 << 30  # above any DuckDB group id: both sit in one comparison

    def _schemas(self) -> set[tuple[str, str]]:
        out = set()
        for stmt in self.sql.executed:
            if stmt.kind == "function" and stmt.name:
                parts = [p.strip("`").lower() for p in stmt.name.split(".")]
                if len(parts) == 3:
                    out.add((parts[0], parts[1]))
            elif stmt.expression is not None:
                for t in stmt.expression.find_all(exp.Table):
                    if t.catalog and t.db:
                        out.add((t.catalog.lower(), t.db.lower()))
        return out

    # ---- set-up ---------------------------------------------------------------------------

    def set_up(self) -> None:
        run = self.spark.sql
        for db in [HARNESS, *self.names.mapping.values()]:
            run(f"DROP DATABASE IF EXISTS {quote(db)} CASCADE")
            run(f"CREATE DATABASE {quote(db)}")
        run(f"USE {HARNESS}")
        self._members([])
        self._as_persona("")
        self._today("1970-01-01")
        tables = TableRunner(self.spark, self.names)
        for stmt in self.sql.executed:
            if stmt.kind != "function":
                tables.run(stmt)
            elif stmt.body is not None and stmt.name:
                text = self.names.rewrite(Names.bind_context(stmt.text.rstrip().rstrip(";")))
                try:
                    run(text)
                    self.failed.pop(fold(stmt.name, PLATFORM), None)
                except Exception as err:  # Spark's refusal: kept until a call needs it
                    self.failed[fold(stmt.name, PLATFORM)] = (stmt, err)

    def close(self) -> None:
        for db in [*self.names.mapping.values(), HARNESS]:
            with contextlib.suppress(Exception):  # the session may be going away
                self.spark.sql(f"DROP DATABASE IF EXISTS {quote(db)} CASCADE")

    def _as_persona(self, persona: str, used: Iterable[str] = _STAND_INS) -> None:
        """Re-create the membership and user stand-ins for ``persona`` (those in ``used``)."""
        p = _lit(persona)
        for name, kind in (("is_account_group_member", "account"), ("is_member", "workspace")):
            if name not in used:
                continue
            self.spark.sql(
                f"CREATE OR REPLACE FUNCTION {HARNESS}.{name}(accord_group STRING) "
                f"RETURNS BOOLEAN RETURN EXISTS (SELECT 1 FROM {HARNESS}.members AS m "
                f"WHERE m.persona = {p} AND m.kind = '{kind}' AND m.group_name = accord_group)"
            )
        if "accord_user" not in used:
            return
        self.spark.sql(
            f"CREATE OR REPLACE FUNCTION {HARNESS}.accord_user() RETURNS STRING RETURN "
            f"(SELECT max(u.user_name) FROM {HARNESS}.users AS u WHERE u.persona = {p})"
        )

    def _today(self, day: str) -> None:
        self.spark.sql(
            f"CREATE OR REPLACE FUNCTION {HARNESS}.accord_today() RETURNS DATE "
            f"RETURN DATE {_lit(day)}"
        )

    def _members(self, rows: list[list[Any]]) -> None:
        """The persona-membership table (persona, ``account`` or ``workspace``, group) and the
        persona's user names, from ``rows`` (:meth:`Verifier.persona_rows`), as views over
        their values: a view is a catalog entry, where writing a table is a Spark job."""
        members = []
        users = []
        for persona, user, *_, groups, workspace in rows:
            users.append(f"({_lit(persona)}, {_lit(user)})")
            members += [f"({_lit(persona)}, 'account', {_lit(g)})" for g in groups]
            members += [f"({_lit(persona)}, 'workspace', {_lit(g)})" for g in workspace]
        for name, values, columns in (
            ("members", members, "persona, kind, group_name"),
            ("users", users, "persona, user_name"),
        ):
            body = (
                f"SELECT * FROM VALUES {', '.join(values)} AS v({columns})"
                if values
                else "SELECT "
                + ", ".join(f"CAST(NULL AS STRING) AS {c.strip()}" for c in columns.split(","))
                + " WHERE FALSE"
            )
            self.spark.sql(f"CREATE OR REPLACE VIEW {HARNESS}.{name} AS {body}")

    # ---- evaluation -----------------------------------------------------------------------

    def evaluate(self, verifier: Verifier) -> SparkResult:
        """Every Databricks dataset of ``verifier`` (its generated rows and personas, at its
        day), on Spark."""
        rows = verifier.persona_rows()
        self._members(rows)
        self._today(verifier.as_of.isoformat())
        groups: dict[tuple[Any, ...], _CallGroup] = {}
        plans = {}
        for name in sorted(verifier.model.datasets):
            if verifier.model.datasets[name].platform == PLATFORM:
                plans[name] = self._plan(verifier, name, groups)
        for group in groups.values():
            self._load(group)
        # one query per persona: every group's answers, a mask's in a column of its type
        batch = list(groups.values())
        texts = [self.names.rewrite(Names.bind_context(st.text)) for st in self.sql.executed]
        used = {name for text in texts for name in _STAND_INS if name in text}
        for persona, *_ in rows:
            self._as_persona(persona, used)
            if batch:
                self._execute(batch, persona)
        return self._assemble(verifier, plans, rows)

    def _returns(self, group: _CallGroup) -> str:
        """What a group's query returns: ``filter``, or the mask function's declared type."""
        if group.call.kind == "filter":
            return "filter"
        routine = self.sql.routine(group.call.function)
        return (routine.stmt.returns or "?").upper() if routine is not None else "?"

    def _plan(
        self, verifier: Verifier, dataset: str, groups: dict[tuple[Any, ...], _CallGroup]
    ) -> tuple[list[_Applied], dict[str, list[_Applied]]]:
        """The filters and each column's masks that apply to ``dataset``'s table."""
        ds = verifier.model.datasets[dataset]
        table = verifier.tables[dataset]
        key = fold(ds.table, PLATFORM)
        placed = self.sql.placed
        types = {c.name: _spark_type(ds, c.name) for c in table.columns}

        def applied(call: Call, who: Any, stmt: Statement, what: str) -> _Applied:
            routine = self._routine(call.function, stmt)
            arg_types = tuple(
                types[self._column(table, v, stmt)] if k == "col" else f"lit:{v}"
                for k, v in call.args
            )
            gkey = (call.kind, fold(call.function, PLATFORM), arg_types)
            group = groups.get(gkey)
            if group is None:
                group = groups[gkey] = _CallGroup(len(groups), call, arg_types)
            cols = [
                table.column_index(self._column(table, v, stmt)) for k, v in call.args if k == "col"
            ]
            codes = tuple(
                group.code(
                    tuple(table.columns[i].values[r % len(table.columns[i].values)] for i in cols)
                )  # type: ignore[index]
                for r in range(table.length)
            )
            objects = [*_routine_object(routine, PLATFORM, self.sql)]
            if what == "abac":
                objects.append(SqlObject("ABAC policy", stmt.name or "", stmt.file, stmt.line))
            else:
                objects.append(SqlObject("attached by", call.function, stmt.file, stmt.line))
            return _Applied(group, codes, who, objects, [routine.stmt, stmt])

        def argument(item: str) -> tuple[str, str]:
            return ("lit", item) if _is_literal(item) else ("col", item)

        filters: list[_Applied] = []
        att = placed.row_filters.get(key)
        if att is not None:
            call = Call("filter", att.policy, tuple(argument(c) for c in att.columns))
            filters.append(applied(call, None, placed.sources[("filter", key)], "table"))
        masks: dict[str, list[_Applied]] = {c.name: [] for c in table.columns}
        abac_masks: dict[str, list[_Applied]] = {c.name: [] for c in table.columns}
        table_tags = placed.tags.get((key, ""), {})
        col_tags = {
            c.name: placed.tags.get((key, fold(c.name, PLATFORM)), {}) for c in table.columns
        }
        for akey, a in placed.abac.items():
            stmt = placed.sources[("abac", *akey)]
            if not matcher.covers(a.securable_type, a.securable, ds.table):
                continue
            try:
                if a.when and not matcher.holds(matcher.parse(a.when), table_tags):
                    continue
                matched = matcher.match_columns(a.match_columns, col_tags)
            except matcher.MatchError as err:
                raise InputError(
                    Diagnostic(
                        Location(stmt.file, stmt.line, stmt.column),
                        f"the Spark harness cannot read the condition of {stmt.name}: {err}",
                    )
                ) from None
            if matched is None:
                continue
            who = (a.to, a.except_)

            def using(u: str, matched: dict[str, list[str]] = matched) -> tuple[str, str]:
                return ("col", matched[u][0]) if u in matched else argument(u)

            if a.kind == "ROW FILTER":
                call = Call("filter", a.function, tuple(using(u) for u in a.using))
                filters.append(applied(call, who, stmt, "abac"))
                continue
            for column in matched.get(a.on_column or "", []):
                args = (
                    ("col", column),
                    *(("col", column) if u == a.on_column else using(u) for u in a.using),
                )
                abac_masks[column].append(
                    applied(Call("mask", a.function, args), who, stmt, "abac")
                )
        for c in table.columns:
            m = placed.masks.get((key, fold(c.name, PLATFORM)))
            if m is not None:
                args = (("col", c.name), *(argument(u) for u in m.using))
                stmt = placed.sources[("mask", key, fold(c.name, PLATFORM))]
                masks[c.name].append(applied(Call("mask", m.policy, args), None, stmt, "table"))
            masks[c.name] = abac_masks[c.name] + masks[c.name]
        return filters, masks

    def _column(self, table: Any, name: str, stmt: Statement) -> str:
        i = table.column_index(name)
        if i is None:
            raise InputError(
                Diagnostic(
                    Location(stmt.file, stmt.line, stmt.column),
                    f"{stmt.name or 'this statement'} is given column {name}, which "
                    f"{table.dataset} does not have",
                )
            )
        return table.columns[i].name  # type: ignore[no-any-return]

    def _routine(self, name: str, site: Statement) -> Routine:
        routine = self.sql.routine(name)
        if routine is None:
            raise InputError(
                Diagnostic(
                    Location(site.file, site.line, site.column),
                    f"{name} is not created by the compiled databricks SQL (or has no SQL body "
                    "that verification can execute)",
                )
            )
        return routine

    def _load(self, group: _CallGroup) -> None:
        """The group's distinct argument values as a temporary view, each cast to the type of
        the column it comes from."""
        cols = [i for i, (k, _) in enumerate(group.call.args) if k == "col"]
        raw = []
        for n in range(len(cols)):
            values = [v[n] for v in group.inputs if v[n] is not None]
            raw.append(
                "BOOLEAN"
                if values and all(isinstance(v, bool) for v in values)
                else "BIGINT"
                if values and all(isinstance(v, int) for v in values)
                else "STRING"
            )
        schema = ", ".join(["accord_v INT", *(f"a{i} {t}" for i, t in zip(cols, raw, strict=True))])
        frame = self.spark.frame(
            [(code, *values) for code, values in enumerate(group.inputs)], schema
        )
        casts = ["accord_v"] + [f"CAST(a{i} AS {group.types[i]}) AS a{i}" for i in cols]
        frame.selectExpr(*casts).createOrReplaceTempView(group.view)

    def query(
        self, group: _CallGroup, number: int | None = None, types: list[str] | None = None
    ) -> str:
        """The query that evaluates ``group`` for the current persona: the codes a filter
        keeps, or each code with the mask's answer. Within a batch (``number`` and the value
        ``types`` of the batch), each row also carries the group's number and one column per
        type, the mask's answer in the column of its declared type."""
        call = group.call
        function = self.names.rewrite(call.function)
        args = ", ".join(f"a{i}" if k == "col" else v for i, (k, v) in enumerate(call.args))
        value = f"{function}({args})"
        outputs = ["accord_v"] if number is None else [f"{number} AS accord_g", "accord_v"]
        if types is None:
            outputs += [] if call.kind == "filter" else [f"{value} AS accord_value"]
        else:
            returns = self._returns(group)
            outputs += [
                f"{value} AS accord_{n}" if t == returns else f"CAST(NULL AS {t}) AS accord_{n}"
                for n, t in enumerate(types)
            ]
        where = f" WHERE {value}" if call.kind == "filter" else ""
        return f"SELECT {', '.join(outputs)} FROM {group.view}{where}"

    def _execute(self, batch: list[_CallGroup], persona: str) -> None:
        """Evaluate every group of ``batch`` for ``persona`` in one query (a mask's answer in
        the column of its declared type); when it fails, each group's own query finds the one
        that fails."""
        types = sorted({self._returns(g) for g in batch} - {"filter"})
        branches = [self.query(g, g.number, types) for g in batch]
        try:
            result = self.spark.sql(" UNION ALL ".join(branches))
        except Exception as err:
            for g in batch:
                try:
                    self.spark.sql(self.query(g))
                except Exception as own:
                    raise self._failure(g, own) from None
            raise self._failure(batch[0], err) from None
        by_number = {g.number: g for g in batch}
        column = {t: 2 + n for n, t in enumerate(types)}
        for g in batch:
            default = False if g.call.kind == "filter" else None
            g.answers[persona] = [default] * len(g.inputs)
        for row in result:
            g = by_number[row[0]]
            if g.call.kind == "filter":
                g.answers[persona][row[1]] = True
            else:
                g.answers[persona][row[1]] = row[column[self._returns(g)]]

    def _failure(self, group: _CallGroup, err: BaseException) -> InputError:
        """Spark could not evaluate ``group``: located at the statement that failed to create
        the function (or the first one it calls that failed), else at the function."""
        name = fold(group.call.function, PLATFORM)
        seen = set()
        while name in self.failed and name not in seen:
            seen.add(name)
            stmt, cause = self.failed[name]
            callee = next(
                (
                    f
                    for f in self.failed
                    if f != name and f.rsplit(".", 1)[-1] in (stmt.text or "").lower()
                ),
                None,
            )
            if callee is None:
                return cannot_execute(stmt, cause, body=False)
            name = callee
        routine = self.sql.routine(group.call.function)
        if routine is None:
            return InputError(
                Diagnostic(
                    Location("<spark>", 1, 1), f"cannot execute on Spark: {spark_error(err)}"
                )
            )
        return cannot_execute(routine.stmt, err, body=True)

    # ---- answers --------------------------------------------------------------------------

    def _assemble(
        self,
        verifier: Verifier,
        plans: dict[str, tuple[list[_Applied], dict[str, list[_Applied]]]],
        rows: list[list[Any]],
    ) -> SparkResult:
        uses: dict[str, tuple[Use, dict[str, Use]]] = {}
        parts_of: dict[str, tuple[Part, dict[str, Part]]] = {}
        personas = [r[0] for r in rows]
        groups_of = {r[0]: (set(r[6]), r[1]) for r in rows}
        for dataset, (filters, masks) in plans.items():
            table = verifier.tables[dataset]
            n = table.length
            codes = tuple(range(n))
            row = self._new()
            for persona in personas:
                groups, user = groups_of[persona]
                kept = [True] * n
                abac = 0
                for f in filters:
                    if f.who is not None:
                        if not matcher.applies_to(*f.who, groups, user):
                            continue
                        abac += 1
                    answers = f.group.answers[persona]
                    kept = [k and bool(answers[c]) for k, c in zip(kept, f.codes, strict=True)]
                row.answers[persona] = kept
                if abac > 1:
                    row.conflicts[persona] = set(codes)
            row_part = self._part(filters, "TRUE")
            column_uses = {}
            column_parts = {}
            for c in table.columns:
                answered = self._new()
                raw = c.values
                for persona in personas:
                    groups, user = groups_of[persona]
                    chosen = None
                    abac = 0
                    for m in masks[c.name]:
                        if m.who is not None:
                            if not matcher.applies_to(*m.who, groups, user):
                                continue
                            abac += 1
                        chosen = chosen or m
                    if chosen is None:
                        answered.answers[persona] = [raw[r % len(raw)] for r in range(n)]
                    else:
                        got = chosen.group.answers[persona]
                        answered.answers[persona] = [got[code] for code in chosen.codes]
                    if abac > 1:
                        answered.conflicts[persona] = set(codes)
                column_uses[c.name] = Use(answered, codes)  # type: ignore[arg-type]
                column_parts[c.name] = self._part(masks[c.name], _plain(c.name))
            uses[dataset] = (Use(row, codes), column_uses)  # type: ignore[arg-type]
            parts_of[dataset] = (row_part, column_parts)
        return SparkResult(uses, parts_of)

    def _new(self) -> _Answered:
        self._ids += 1
        return _Answered(self._ids)

    def _part(self, applied: list[_Applied], default: str) -> Part:
        part = Part("; ".join(self.query(a.group) for a in applied) or default)
        for a in applied:
            part.objects += a.objects
            part.statements += a.statements
        return part


def _plain(column: str) -> str:
    return f"the column {column} as stored (no mask applies)"


def _spark_type(ds: Any, column: str) -> str:
    """The column's type as the model declares it, written for Spark (STRING by default)."""
    spec = ds.columns.get(column)
    rf = ds.row_filter
    text = (spec.type if spec is not None else None) or (
        (rf.arguments or {}).get(column) if rf is not None else None
    )
    if not text:
        return "STRING"
    dtype = parse_type(text, PLATFORM)
    return "STRING" if dtype is None else dtype.sql("spark")
