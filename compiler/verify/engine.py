"""Execute the compiled policies on embedded DuckDB and compare with the model.

Each dataset's row predicate and each column's value is a *part*: DuckDB SQL over the
generated columns it reads (by position, :class:`_Slots`) and the persona table
(``accord_p``), whose columns answer the platform's context functions (see
:mod:`compiler.verify.bind`). Parts with the same SQL and input types, in however many
datasets, form one :class:`_Group`, executed in one query: the distinct input values of
every dataset's generated rows cross-joined with every persona. The answer for a row of a
dataset is the group's answer for that row's inputs (policy bodies are deterministic: only
``bind.SAFE_FUNCTIONS``), so the number of queries depends on the distinct policies, not on
the personas or the datasets that share them.

The answers are compared with :mod:`compiler.meaning.semantics` (the oracle: the persona's rows,
whether it sees a mask's clear value, ``apply_mask``) once per distinct (part, inputs,
value) cell, replicas are compared with each other, and identifier digests are compared
across platforms; a mismatch is reported per persona, dataset and column with every row it
concerns, exactly as when each dataset's rows were compared one by one. A part that cannot
be executed is located by executing its dataset's own query over its rows
(:meth:`Verifier._execute_directly`). duckdb is imported here only: ``accord lint`` never
loads this module.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import duckdb
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from compiler.core.errors import Diagnostic, InputError, Location
from compiler.meaning import semantics
from compiler.model.schema import PolicyModel
from compiler.model.validate import Project
from compiler.sqlscan import AbacPolicy, Statement
from compiler.verify.bind import (
    PERSONA,
    ROWS,
    Binder,
    BindError,
    duck_table,
    row_column,
    unknown_function,
)
from compiler.verify.data import GenTable, generate
from compiler.verify.report import Mismatch, Observation, Report, SqlObject
from compiler.verify.sources import (
    Attachment,
    CompiledSQL,
    PlatformSQL,
    Routine,
    fold,
)
from targets import abac_conditions

#: a persona with no principal at all: used to compare identifier digests across platforms
NOBODY = "accord:nobody"
ACCOUNT_USERS = "account users"


class TestSalts:
    """One random salt per salt reference, generated for this run and never written."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        self._salts: dict[str, str] = {}

    def __call__(self, ref: str) -> str:
        if ref not in self._salts:
            self._salts[ref] = secrets.token_hex(16)
        return self._salts[ref]

    def for_mask(self, model: PolicyModel, mask: str, platform: str) -> str | None:
        ref = (model.masks[mask].salt or {}).get(platform)  # type: ignore[call-overload]
        return self(ref) if ref else None


def user_name(persona: str) -> str:
    return f"{persona}@verify.accord.invalid"


# --------------------------------------------------------------------------------------------
# what is evaluated per dataset


@dataclass
class Part:
    """One evaluated output of a dataset's query: the row predicate or a column's value."""

    sql: str
    objects: list[SqlObject] = field(default_factory=list)
    #: SQL that is true when more than one ABAC policy applies (the platform refuses)
    conflict: str | None = None
    #: the statements whose bodies ``sql`` holds (to locate an execution failure)
    statements: list[Statement] = field(default_factory=list)
    #: the generated columns ``sql`` reads, by position (:class:`_Slots`)
    inputs: tuple[str, ...] = ()


def _routine_object(routine: Routine, platform: str, sql: PlatformSQL) -> list[SqlObject]:
    kinds = {
        "row_access_policy": "row access policy",
        "masking_policy": "masking policy",
        "function": "function",
        "alter_policy_body": "policy body",
    }
    out = [
        SqlObject(
            kinds.get(routine.stmt.kind, routine.stmt.kind),
            routine.name,
            routine.stmt.file,
            routine.stmt.line,
        )
    ]
    # the mapping tables it reads, located where the compiled SQL fills them
    read = {
        duck_table(platform, ".".join(p.name for p in t.parts))
        for t in routine.body.find_all(exp.Table)
    }
    for stmt in sql.table_statements:
        target = stmt.expression.find(exp.Table) if stmt.expression is not None else None
        if target is None or isinstance(stmt.expression, exp.Create):
            continue
        name = ".".join(p.name for p in target.parts)
        if duck_table(platform, name) in read:
            out.append(SqlObject("mapping rows of", name, stmt.file, stmt.line))
    return out


def _attachment_object(att: Attachment, what: str) -> SqlObject:
    return SqlObject(what, att.policy, att.stmt.file, att.stmt.line)


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


class Verifier:
    def __init__(self, project: Project, compiled: CompiledSQL, salts: TestSalts) -> None:
        self.project = project
        self.model = project.model
        self.compiled = compiled
        self.salts = salts
        self.con = locked_connection()
        self.personas = sorted(self.model.personas)
        self.report = Report(
            origin=compiled.origin,
            personas=len(self.personas),
            datasets=len(self.model.datasets),
            platforms=tuple(sorted({d.platform for d in self.model.datasets.values()})),
        )
        self.table_columns: dict[str, set[str]] = {}
        self.binders: dict[str, Binder] = {}
        self.tables: dict[str, GenTable] = {}
        #: dataset -> persona -> row -> (visible, {column: value}), built when asked for
        self.results = _Results(self)
        #: dataset -> (row part, column parts) as executed
        self.parts_of: dict[str, tuple[Part, dict[str, Part]]] = {}
        #: dataset -> where its row part and each column's part are evaluated
        self.uses: dict[str, tuple[_Use, dict[str, _Use]]] = {}
        #: (part SQL, conflict SQL, input types) -> its group
        self._groups: dict[tuple[str, str | None, tuple[str, ...]], _Group] = {}
        #: datasets whose parts read a column the generated rows do not have
        self._unreadable: list[str] = []
        self._bound: dict[tuple[Any, ...], str] = {}
        self._arguments: dict[tuple[str, str], exp.Expression] = {}
        self._objects_of: dict[tuple[str, str], list[SqlObject]] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._masked: dict[tuple[str, str | None, str | None], str | None] = {}
        shared: dict[tuple[str, ...], object] = {}
        self._perspectives = {
            p: semantics.Perspective(self.model, p, shared) for p in self.personas
        }
        self._direct: set[str] = set()

    def sql_for(self, platform: str) -> PlatformSQL:
        return self.compiled.platforms.get(platform) or PlatformSQL(platform)

    # ---- setup ---------------------------------------------------------------------------------

    def build(self) -> None:
        for platform in sorted(self.compiled.platforms):
            self._run_table_statements(self.compiled.platforms[platform])
        for name, cols in self.con.execute(
            "SELECT table_name, list(lower(column_name)) FROM information_schema.columns "
            "GROUP BY table_name"
        ).fetchall():
            self.table_columns[name] = set(cols)
        for platform in self.report.platforms:
            self.binders[platform] = Binder(self.sql_for(platform), self.table_columns)
        extra: dict[str, set[str]] = {}
        attached = {p: self.sql_for(p).attached_columns_by_table() for p in self.report.platforms}
        for name, ds in self.model.datasets.items():
            named = attached[ds.platform].get(fold(ds.table, ds.platform), set())
            listed = {k.lower() for k in ds.columns}
            extra[name] = {c for c in named if c.lower() not in listed}
        self.tables = generate(self.model, extra)
        self._personas()

    def _run_table_statements(self, sql: PlatformSQL) -> None:
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
                    table.set(
                        "this", exp.to_identifier(duck_table(sql.platform, name), quoted=True)
                    )
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
                self.con.execute(text)
            except (SqlglotError, duckdb.Error) as err:
                raise _cannot_execute(stmt, err) from None

    def _personas(self) -> None:
        self.con.execute(
            "CREATE TABLE accord_personas (persona VARCHAR, user_name VARCHAR, "
            "sf_primary VARCHAR, sf_roles VARCHAR[], sf_available VARCHAR, "
            "sf_available_list VARCHAR[], dbx_groups VARCHAR[], dbx_workspace_groups VARCHAR[])"
        )
        rows = []
        for persona in [*self.personas, NOBODY]:
            if persona == NOBODY:
                roles: list[str] = []
                groups: list[str] = []
                primary = None
            else:
                roles = self._identities(persona, "snowflake")
                groups = self._identities(persona, "databricks")
                first = self.model.principals[semantics.primary_principal(self.model, persona)]
                primary = stored_role(first.snowflake) if first.snowflake else None
            available = "[" + ",".join(f'"{r}"' for r in roles) + "]"
            rows.append([persona, user_name(persona), primary, roles, available, roles, groups, []])
        self.con.executemany("INSERT INTO accord_personas VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _identities(self, persona: str, platform: str) -> list[str]:
        """The persona's roles (groups) as the platform stores them: a Snowflake role created
        unquoted is stored in upper case and IS_ROLE_IN_SESSION / CURRENT_ROLE compare in the
        stored case (docs.snowflake.com/en/sql-reference/functions/is_role_in_session), so a
        policy naming a role in another case matches nobody here either. Databricks group
        names are compared exactly as written (whether is_account_group_member ignores case
        is not documented: the case-sensitive reading is the one that can deny)."""
        out = []
        for p in semantics.principals_on(self.model, persona, platform):
            identity = self.model.principals[p].identity(platform)
            if identity is not None:
                out.append(stored_role(identity) if platform == "snowflake" else identity)
        return out

    # ---- per dataset ---------------------------------------------------------------------------

    def parts(self, dataset: str, real: bool = False) -> tuple[Part, dict[str, Part]]:
        """The row predicate and every column's value of ``dataset``, as DuckDB SQL over the
        part's inputs (see :class:`_Slots`; ``real``: over the dataset's own columns)."""
        ds = self.model.datasets[dataset]
        platform = ds.platform
        sql = self.sql_for(platform)
        binder = self.binders[platform]
        table = self.tables[dataset]
        key = fold(ds.table, platform)
        abac = [
            s for s in sql.abac.values() if s.abac is not None and _covers(s.abac, key, platform)
        ]
        # the tags ABAC policies match (none to read when no ABAC policy covers the table)
        col_tags = (
            {c.name: sql.tags.get((key, fold(c.name, platform)), {}) for c in table.columns}
            if abac
            else {}
        )
        table_tags = sql.tags.get((key, ""), {})

        # rows
        row = Part("TRUE")
        slots = _Slots(real)
        terms = []
        att = sql.row_filters.get(key)
        if att is not None:
            routine = self._routine(sql, att.policy, att.stmt)
            args = [self._argument(binder, c, routine, slots) for c in att.columns]
            terms.append(f"COALESCE(({self._call(binder, routine, args)}), FALSE)")
            row.objects += self._routine_object(routine, platform, sql)
            row.objects.append(_attachment_object(att, "attached by"))
            row.statements += [routine.stmt, att.stmt]
        applies_rf = []
        for stmt in abac:
            a = stmt.abac
            assert a is not None
            if a.kind != "ROW FILTER" or not _tags_match(stmt, a.when, table_tags):
                continue
            matched = _match_aliases(stmt, a, col_tags)
            if matched is None:
                continue
            routine = self._routine(sql, a.function or "", stmt)
            args = [
                slots.column(matched[u][0])
                if u in matched
                else self._argument(binder, u, routine, slots)
                for u in a.using
            ]
            applies = _applies(a)
            applies_rf.append(applies)
            terms.append(
                f"(NOT ({applies}) OR COALESCE(({self._call(binder, routine, args)}), FALSE))"
            )
            row.objects += self._routine_object(routine, platform, sql)
            row.objects.append(SqlObject("ABAC policy", stmt.name or "", stmt.file, stmt.line))
            row.statements += [routine.stmt, stmt]
        if terms:
            row.sql = " AND ".join(terms)
        row.inputs = tuple(slots.names)
        if len(applies_rf) > 1:
            row.conflict = _more_than_one(applies_rf)

        # columns
        columns: dict[str, Part] = {}
        for col in table.columns:
            ckey = fold(col.name, platform)
            slots = _Slots(real)
            part = Part(slots.sql(col.name))
            mask = sql.masks.get((key, ckey))
            if mask is None and platform == "snowflake":
                mask = _tag_mask(sql, key, ckey, col.duck_type)
            if mask is not None:
                routine = self._routine(sql, mask.policy, mask.stmt)
                args = [slots.column(col.name)] + [
                    self._argument(binder, c, routine, slots) for c in mask.columns
                ]
                part.sql = self._call(binder, routine, args)
                part.objects += self._routine_object(routine, platform, sql)
                part.objects.append(_attachment_object(mask, "attached by"))
                part.statements += [routine.stmt, mask.stmt]
            cases = []
            for stmt in abac:
                a = stmt.abac
                assert a is not None
                if a.kind != "COLUMN MASK" or not _tags_match(stmt, a.when, table_tags):
                    continue
                matched = _match_aliases(stmt, a, col_tags)
                if matched is None or a.on_column not in matched:
                    continue
                if col.name not in matched[a.on_column]:
                    continue
                routine = self._routine(sql, a.function or "", stmt)
                args = [slots.column(col.name)]
                for u in a.using:
                    if u == a.on_column:
                        args.append(slots.column(col.name))
                    elif u in matched:
                        args.append(slots.column(matched[u][0]))
                    else:
                        args.append(self._argument(binder, u, routine, slots))
                cases.append((_applies(a), self._call(binder, routine, args)))
                part.objects += self._routine_object(routine, platform, sql)
                part.objects.append(SqlObject("ABAC policy", stmt.name or "", stmt.file, stmt.line))
                part.statements += [routine.stmt, stmt]
            if cases:
                whens = " ".join(f"WHEN {a} THEN ({m})" for a, m in cases)
                part.sql = f"CASE {whens} ELSE ({part.sql}) END"
                if len(cases) > 1:
                    part.conflict = _more_than_one([a for a, _ in cases])
            part.inputs = tuple(slots.names)
            columns[col.name] = part
        return row, columns

    def _routine(self, sql: PlatformSQL, name: str, site: Statement) -> Routine:
        routine = sql.routine(name)
        if routine is None:
            raise InputError(
                Diagnostic(
                    Location(site.file, site.line, site.column),
                    f"{name} is not created by the compiled {sql.platform} SQL (or has no SQL "
                    "body that verification can execute)",
                )
            )
        return routine

    def _argument(
        self, binder: Binder, item: str, routine: Routine, slots: _Slots
    ) -> exp.Expression:
        key = (binder.platform, item)
        found = self._arguments.get(key)
        if found is None:
            # a literal (shared: binding copies it) or a column of the table
            found = self._arguments[key] = binder.argument(item, routine)
        if isinstance(found, exp.Column) and found.table == ROWS:
            return slots.column(item)
        return found

    def _call(self, binder: Binder, routine: Routine, args: list[exp.Expression]) -> str:
        """``binder.call_sql``, once per routine and arguments: the same policy bound to the
        same inputs is the same SQL in every dataset that attaches it."""
        key = (binder.platform, id(routine), *map(_arg_key, args))
        found = self._bound.get(key)
        if found is None:
            found = self._bound[key] = binder.call_sql(routine, args)
        return found

    def _routine_object(self, routine: Routine, platform: str, sql: PlatformSQL) -> list[SqlObject]:
        key = (platform, routine.name)
        found = self._objects_of.get(key)
        if found is None:
            found = self._objects_of[key] = _routine_object(routine, platform, sql)
        return found

    # ---- evaluation ----------------------------------------------------------------------------

    def evaluate(self, datasets: Iterable[str]) -> None:
        """Bind every part of ``datasets`` and execute each distinct part once.

        A part (a dataset's row predicate or one column's value) is SQL over its inputs
        (:class:`_Slots`) and the persona. Parts with the same SQL and input types form a
        :class:`_Group`: one table of the distinct input values its datasets' generated rows
        hold, cross-joined with every persona in one query. The answer of row ``r`` of a
        dataset is the group's answer for that row's inputs: policy bodies are
        deterministic (only the functions of ``bind.SAFE_FUNCTIONS``), so equal inputs give
        equal answers. The number of queries is the number of distinct parts: independent
        of the number of personas (and of datasets that share policies)."""
        self.build()
        for dataset in datasets:
            try:
                row, columns = self.parts(dataset)
            except BindError as err:
                raise InputError(
                    Diagnostic(Location(err.file, err.line, err.column), err.message)
                ) from None
            self.parts_of[dataset] = (row, columns)
            table = self.tables[dataset]
            row_use = self._use(table, row)
            column_uses = {name: self._use(table, part) for name, part in columns.items()}
            if row_use is None or None in column_uses.values():
                self._unreadable.append(dataset)
                continue
            self.uses[dataset] = (row_use, column_uses)  # type: ignore[assignment]
        failed = [g for g in self._groups.values() if not self._execute_group(g)]
        if failed or self._unreadable:
            self._fail({d for g in failed for d in g.datasets} | set(self._unreadable), failed)

    def _use(self, table: GenTable, part: Part) -> _Use | None:
        cols = []
        for name in part.inputs:
            i = table.column_index(name)
            if i is None:
                return None
            cols.append(table.columns[i])
        key = (part.sql, part.conflict, tuple(c.duck_type for c in cols))
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = _Group(len(self._groups), part, key[2])
        group.datasets.append(table.dataset)
        return _Use(group, group.codes(tuple(c.values for c in cols), table.length))

    def _execute_group(self, group: _Group) -> bool:
        ident = exp.to_identifier(f"accord_in:{group.id}", quoted=True).sql("duckdb")
        cols = "".join(f', "accord_in_{i}" {duck_type}' for i, duck_type in enumerate(group.types))
        self.con.execute(f"CREATE TABLE {ident} (accord_v INTEGER{cols})")
        # one statement per group, each input a list parameter unnested in parallel
        unnest = ", ".join("UNNEST(?)" for _ in range(len(group.types) + 1))
        self.con.execute(
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
            result = self.con.execute(query).fetchall()
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

    def _fail(self, datasets: set[str], failed: list[_Group]) -> None:
        """A part that could not be executed: the first dataset (in order) whose query fails
        when executed as a whole on its own generated rows is located at the statement that
        fails; never a partial report."""
        for dataset in sorted(datasets):
            self._execute_directly(dataset)
        first = sorted(datasets)[0]
        row, columns = self.parts_of[first]
        part = (
            failed[0].part
            if failed
            else next((p for p in [row, *columns.values()] if p.statements), row)
        )
        stmt = part.statements[0] if part.statements else None
        where = (
            Location(
                stmt.file,
                stmt.body_line or stmt.line,
                stmt.body_column if stmt.body_line else stmt.column,
            )
            if stmt is not None
            else Location(self.compiled.origin, 1, 1)
        )
        raise InputError(
            Diagnostic(where, f"accord verify could not execute the SQL of {first} on DuckDB")
        )

    def _execute_directly(self, dataset: str) -> list[tuple[Any, ...]]:
        """Execute ``dataset``'s parts over its generated rows, named as in the dataset, every
        persona at once: the query a failure is located with (and the tests' reference for
        the grouped evaluation). One record per persona and row, in that order: persona, row,
        visible, each column's value, then the conflict flags."""
        row, columns = self.parts(dataset, real=True)
        table = self.tables[dataset]
        source = exp.to_identifier(f"accord_data:{dataset}", quoted=True).sql("duckdb")
        if dataset not in self._direct:
            self._direct.add(dataset)
            cols = ", ".join(
                f"{exp.to_identifier(c.name, quoted=True).sql('duckdb')} {c.duck_type}"
                for c in table.columns
            )
            self.con.execute(f"CREATE TABLE {source} (accord_row INTEGER, {cols})")
            unnest = ", ".join("UNNEST(?)" for _ in range(len(table.columns) + 1))
            self.con.execute(
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
            return self.con.execute(query).fetchall()
        except duckdb.Error:
            self._locate_failure(source, [row, *columns.values()])
            raise

    def _locate_failure(self, source: str, parts: Iterable[Part]) -> None:
        for part in parts:
            try:
                self.con.execute(
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

    # ---- answers, per dataset and persona --------------------------------------------------------

    def shown(self, dataset: str, persona: str) -> tuple[int, ...]:
        """The rows of ``dataset`` the compiled SQL shows ``persona``."""
        use = self.uses[dataset][0]
        key = ("shown", use.group.id, id(use.codes), persona)
        found = self._memo.get(key)
        if found is None:
            answers = use.group.answers[persona]
            found = self._memo[key] = tuple(
                r for r, code in enumerate(use.codes) if bool(answers[code])
            )
        return found  # type: ignore[no-any-return]

    def value(self, dataset: str, persona: str, row: int, column: str) -> Any:
        """What ``column`` of generated row ``row`` shows ``persona``."""
        use = self.uses[dataset][1][column]
        return use.group.answers[persona][use.codes[row]]

    def _conflicts(self, dataset: str, persona: str) -> list[str]:
        row_use, column_uses = self.uses[dataset]
        out = []
        for what, use in [("rows", row_use), *column_uses.items()]:
            flagged = use.group.conflicts.get(persona)
            if flagged and not flagged.isdisjoint(use.codes):
                out.append(what)
        return sorted(out)

    def _masked_value(self, mask: str, value: Any, salt: str | None) -> str | None:
        key = (mask, None if value is None else str(value), salt)
        if key not in self._masked:
            self._masked[key] = semantics.apply_mask(self.model.masks[mask], key[1], salt)
        return self._masked[key]

    def _want(self, mask: str | None, salt: str | None, original: Any) -> Any:
        return original if mask is None else self._masked_value(mask, original, salt)

    def _differing(
        self, dataset: str, column: str, mask: str | None, salt: str | None
    ) -> _Differing:
        """persona -> the generated rows (visible or not) where ``column`` shows the persona
        something other than the model's value: the clear value (``mask`` None), or
        ``mask`` applied with ``salt``. Computed once per distinct (part, inputs, values)."""
        use = self.uses[dataset][1][column]
        table = self.tables[dataset]
        index = table.column_index(column)
        assert index is not None
        values = table.columns[index].values
        key = ("differ", use.group.id, id(use.codes), id(values), mask, salt)
        found = self._memo.get(key)
        if found is None:
            found = _Differing()
            n = len(values)
            cells = sorted({(code, r % n) for r, code in enumerate(use.codes)})
            for persona, answers in use.group.answers.items():
                wrong = {
                    cell
                    for cell in cells
                    if not _same(self._want(mask, salt, values[cell[1]]), answers[cell[0]])
                }
                found[persona] = (
                    tuple(r for r, code in enumerate(use.codes) if (code, r % n) in wrong)
                    if wrong
                    else ()
                )
                found.any = found.any or bool(wrong)
            self._memo[key] = found
        return found  # type: ignore[no-any-return]

    def _column_modes(
        self, dataset: str, column: str
    ) -> tuple[str | None, str | None, _Differing, _Differing]:
        """The column's mask and test salt, and the rows that differ from the masked and from
        the clear value, per persona (which one applies: :meth:`_expect_masked`)."""
        ds = self.model.datasets[dataset]
        spec = ds.columns.get(column)
        mask = spec.mask if spec is not None else None
        salt = self.salts.for_mask(self.model, mask, ds.platform) if mask else None
        clear = self._differing(dataset, column, None, None)
        masked = self._differing(dataset, column, mask, salt) if mask else clear
        return mask, salt, masked, clear

    def _expect_masked(self, persona: str, mask: str | None, platform: str) -> bool:
        return mask is not None and not self._perspectives[persona].unmasked(mask, platform)

    def _expected_rows(self, dataset: str, persona: str) -> list[int]:
        ds = self.model.datasets[dataset]
        table = self.tables[dataset]
        rf = ds.row_filter
        rowset = self._perspectives[persona].rows(dataset)
        key = rf.column if rf is not None else None
        index = table.column_index(key) if key else None
        values = table.columns[index].values if index is not None else None
        memo = ("expected", id(values), table.length, rowset)
        found = self._memo.get(memo)
        if found is None:
            if values is None:
                found = [r for r in range(table.length) if rowset.sees(None)]
            else:
                n = len(values)
                found = [r for r in range(table.length) if rowset.sees(values[r % n])]
            self._memo[memo] = found
        return list(found)  # type: ignore[call-overload]

    def _clean(self, dataset: str, modes: dict[str, Any]) -> bool:
        """Whether every persona sees exactly what the model says of ``dataset``: no ABAC
        conflict, the entitled rows (unless a hand-written predicate decides), and in every
        checked column the model's value in every row (visible or not)."""
        ds = self.model.datasets[dataset]
        row_use, column_uses = self.uses[dataset]
        if row_use.group.conflicts or any(u.group.conflicts for u in column_uses.values()):
            return False
        if not self._rows_as_entitled(dataset):
            return False
        for mask, _, if_masked, if_clear in modes.values():
            if not if_masked.any and not if_clear.any:
                continue
            key = ("clean", id(if_masked), id(if_clear), mask, ds.platform)
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = not any(
                    (if_masked if self._expect_masked(p, mask, ds.platform) else if_clear)[p]
                    for p in self.personas
                )
            if not found:
                return False
        return True

    def _rows_as_entitled(self, dataset: str) -> bool:
        """Whether the compiled SQL shows every persona the rows the model entitles it to
        (True when a hand-written predicate decides: nothing to compare). The answer depends
        on the row part, its inputs and the entitlement filter only: computed once for
        every dataset of that shape."""
        ds = self.model.datasets[dataset]
        rf = ds.row_filter
        if rf is not None and rf.expression is not None:
            return True
        table = self.tables[dataset]
        use = self.uses[dataset][0]
        index = table.column_index(rf.column) if rf is not None and rf.column else None
        values = table.columns[index].values if index is not None else None
        # the entitlement filter as semantics.Perspective.rows keys it
        grants = (ds.platform, rf.entitlement, tuple(rf.unfiltered_for)) if rf else None
        key = ("entitled", use.group.id, id(use.codes), id(values), table.length, grants)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = all(
                self._expected_rows(dataset, p) == list(self.shown(dataset, p))
                for p in self.personas
            )
        return found  # type: ignore[no-any-return]

    # ---- comparisons ---------------------------------------------------------------------------

    def run(self) -> Report:
        datasets = sorted(self.model.datasets)
        self.evaluate(datasets)
        for dataset in datasets:
            row, columns = self.parts_of[dataset]
            self._compare(dataset, row, columns)
        self._compare_replicas()
        self._compare_digests()
        return self.report

    def _compare(self, dataset: str, row: Part, columns: dict[str, Part]) -> None:
        ds = self.model.datasets[dataset]
        platform = ds.platform
        table = self.tables[dataset]
        rf = ds.row_filter
        modes = {
            col: self._column_modes(dataset, col)
            for col, part in columns.items()
            if ds.columns.get(col) is not None or part.objects
        }
        if self._clean(dataset, modes):
            # the common case, decided without building anything per persona and row
            self.report.checks += len(self.personas) * (1 + len(modes))
            if rf is not None and rf.expression is not None:
                for persona in self.personas:
                    shown = self.shown(dataset, persona)
                    self.report.observations.append(
                        Observation(
                            persona, dataset, platform, tuple(table.describe(r) for r in shown)
                        )
                    )
            return
        for persona in self.personas:
            shown = list(self.shown(dataset, persona))
            for what in self._conflicts(dataset, persona):
                self.report.mismatches.append(
                    Mismatch(
                        "refused",
                        persona,
                        dataset,
                        platform,
                        None if what == "rows" else what,
                        "at most one ABAC " + ("row filter" if what == "rows" else "column mask"),
                        "several apply: the platform refuses the read",
                        (),
                        tuple((row if what == "rows" else columns[what]).objects),
                        "more than one ABAC policy applies to this persona "
                        "(UC_ABAC_MULTIPLE_ROW_FILTERS / MULTIPLE_MASKS)",
                    )
                )
            self.report.checks += 1
            if rf is not None and rf.expression is not None:
                self.report.observations.append(
                    Observation(persona, dataset, platform, tuple(table.describe(r) for r in shown))
                )
            else:
                key = rf.column if rf is not None else None
                expected = self._expected_rows(dataset, persona)
                if expected != shown:
                    hidden = [r for r in expected if r not in shown]
                    extra = [r for r in shown if r not in expected]
                    parts = []
                    if hidden:
                        parts.append(f"{len(hidden)} entitled row(s) hidden")
                    if extra:
                        parts.append(f"{len(extra)} row(s) shown that the model withholds")
                    self.report.mismatches.append(
                        Mismatch(
                            "rows",
                            persona,
                            dataset,
                            platform,
                            key,
                            _rows_text(table, expected, key),
                            _rows_text(table, shown, key),
                            tuple(
                                [table.describe(r, key) + " hidden" for r in hidden]
                                + [table.describe(r, key) + " shown" for r in extra]
                            ),
                            tuple(row.objects) or _nothing("row filter", ds.table),
                            "; ".join(parts),
                        )
                    )
            perspective = self._perspectives[persona]
            for col, part in columns.items():
                spec = ds.columns.get(col)
                if spec is None and not part.objects:
                    continue  # a column no one governs: nothing to check
                self.report.checks += 1
                mask, salt, if_masked, if_clear = modes[col]
                if not self._expect_masked(persona, mask, platform):
                    mask, salt = None, None
                differing = (if_masked if mask else if_clear)[persona]
                if not differing:
                    continue
                wrong = set(differing)
                bad = [r for r in shown if r in wrong]
                if bad:
                    cv = perspective.column(dataset, col)
                    r0 = bad[0]
                    want0 = self._want(mask, salt, table.value(r0, col))
                    actual0 = self.value(dataset, persona, r0, col)
                    what = (
                        f"{cv.strategy} mask {cv.mask}" if cv.disposition == "masked" else "clear"
                    )
                    self.report.mismatches.append(
                        Mismatch(
                            "column",
                            persona,
                            dataset,
                            platform,
                            col,
                            f"{what}: {_show(want0)} for {table.describe(r0, col)}",
                            f"{_show(actual0)}",
                            tuple(table.describe(r, col) for r in bad),
                            tuple(part.objects) or _nothing("mask", f"{ds.table}.{col}"),
                            f"{col} should be {cv.disposition} for {persona}; "
                            f"{len(bad)} visible row(s) differ",
                        )
                    )

    def _compare_replicas(self) -> None:
        groups: dict[str, list[str]] = {}
        for name in sorted(self.model.datasets):
            groups.setdefault(self.model.replica_root(name), []).append(name)
        for members in groups.values():
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    self._compare_pair(a, b)

    def _replica_diffs(self, a: str, ca: str, b: str, cb: str, hashed: bool) -> _Differing:
        """persona -> rows (visible or not) where replicas ``a.ca`` and ``b.cb`` differ, as
        ``(row, value on a, value on b, state on a, state on b)``: one shows the value clear
        and the other masked, or both mask it differently (a salted hash differs per
        platform by design). Computed once per distinct pair of parts and inputs."""
        ua, ub = self.uses[a][1][ca], self.uses[b][1][cb]
        ta = self.tables[a]
        index = ta.column_index(ca)
        assert index is not None
        values = ta.columns[index].values
        key = ("replica", ua.group.id, id(ua.codes), ub.group.id, id(ub.codes), id(values))
        key += (hashed,)
        found = self._memo.get(key)
        if found is None:
            found = _Differing()
            n = len(values)
            rows = list(enumerate(zip(ua.codes, ub.codes, strict=True)))
            for persona, got_a in ua.group.answers.items():
                got_b = ub.group.answers[persona]
                cells: dict[tuple[int, int, int], tuple[Any, Any, str, str] | None] = {}
                out = []
                for r, (code_a, code_b) in rows:
                    cell = (code_a, code_b, r % n)
                    if cell not in cells:
                        original = values[r % n]
                        va, vb = got_a[code_a], got_b[code_b]
                        state_a = "clear" if _same(va, original) else "masked"
                        state_b = "clear" if _same(vb, original) else "masked"
                        differ = state_a != state_b or (
                            state_a == "masked" and not hashed and not _same(va, vb)
                        )
                        cells[cell] = (va, vb, state_a, state_b) if differ else None
                    found_cell = cells[cell]
                    if found_cell is not None:
                        out.append((r, *found_cell))
                found[persona] = tuple(out)  # type: ignore[assignment]
                found.any = found.any or bool(out)
            self._memo[key] = found
        return found

    def _compare_pair(self, a: str, b: str) -> None:
        ta, tb = self.tables[a], self.tables[b]
        da, db = self.model.datasets[a], self.model.datasets[b]
        common = [
            (ca.name, cb.name)
            for ca in ta.columns
            for cb in tb.columns
            if ca.name.lower() == cb.name.lower()
            and (ca.name in da.columns or cb.name in db.columns)
        ]
        hashed = {
            (ca, cb): _strategy(self.model, da, ca) == "hash"
            or (_strategy(self.model, db, cb) == "hash")
            for ca, cb in common
        }
        diffs_of = {
            (ca, cb): self._replica_diffs(a, ca, b, cb, hashed[(ca, cb)]) for ca, cb in common
        }
        for persona in self.personas:
            sa = list(self.shown(a, persona))
            sb = list(self.shown(b, persona))
            self.report.checks += 1
            key = da.row_filter.column if da.row_filter and da.row_filter.column else None
            if sa != sb:
                only_a = [r for r in sa if r not in sb]
                only_b = [r for r in sb if r not in sa]
                self.report.mismatches.append(
                    Mismatch(
                        "replica-rows",
                        persona,
                        f"{a} / {b}",
                        f"{da.platform} / {db.platform}",
                        None,
                        f"the rows {a} shows on {da.platform}: {_rows_text(ta, sa, key)}",
                        _rows_text(tb, sb, key),
                        tuple(
                            [f"{ta.describe(r)} only on {a}" for r in only_a]
                            + [f"{tb.describe(r)} only on {b}" for r in only_b]
                        ),
                        self._objects(a, None) + self._objects(b, None),
                        f"replicas {a} ({da.platform}) and {b} ({db.platform}) show "
                        f"{persona} different rows of the same facts",
                    )
                )
            both: set[int] | None = None
            for ca, cb in common:
                self.report.checks += 1
                found = diffs_of[(ca, cb)][persona]
                if not found:
                    continue
                if both is None:
                    both = set(sa) & set(sb)
                diffs = [d for d in found if d[0] in both]
                if diffs:
                    _, va0, vb0, s_a, s_b = diffs[0]
                    self.report.mismatches.append(
                        Mismatch(
                            "replica-column",
                            persona,
                            f"{a} / {b}",
                            f"{da.platform} / {db.platform}",
                            ca if ca == cb else f"{ca} / {cb}",
                            f"as {a}.{ca} on {da.platform}: {s_a} {_show(va0)}",
                            f"{s_b} {_show(vb0)}",
                            tuple(ta.describe(r, ca) for r, *_ in diffs),
                            self._objects(a, ca) + self._objects(b, cb),
                            f"replicas {a}.{ca} and {b}.{cb} show {persona} the same column "
                            "differently",
                        )
                    )

    def _compare_digests(self) -> None:
        """An identifier hashed on two platforms must give different digests."""
        by_domain: dict[str, list[tuple[str, str]]] = {}
        for name in sorted(self.model.datasets):
            ds = self.model.datasets[name]
            for col, spec in ds.columns.items():
                if spec.identifier and spec.mask and self.model.masks[spec.mask].strategy == "hash":
                    by_domain.setdefault(spec.identifier, []).append((name, col))
        for domain, cols in sorted(by_domain.items()):
            # every pair of columns on two platforms is one check; only pairs that share an
            # (identifier, digest) can differ, found through an index instead of comparing
            # every pair (which made verify quadratic in the number of datasets)
            platform_of = [self.model.datasets[a].platform for a, _ in cols]
            digests = [self._digests(a, ca) for a, ca in cols]
            # (identifier, digest) -> platform -> the columns giving it: a column looks only
            # at the other platforms' (the same platform shares its salt by design)
            sharing: dict[tuple[Any, Any], dict[str, list[int]]] = {}
            for j, found in enumerate(digests):
                for v, d in found.items():
                    if d is not None and d != v:
                        sharing.setdefault((v, d), {}).setdefault(platform_of[j], []).append(j)
            later = dict.fromkeys(platform_of, 0)
            for i in range(len(cols) - 1, -1, -1):
                self.report.checks += sum(n for p, n in later.items() if p != platform_of[i])
                later[platform_of[i]] += 1
            for i, (a, ca) in enumerate(cols):
                candidates = sorted(
                    {
                        j
                        for v, d in digests[i].items()
                        if d is not None and d != v
                        for p, js in sharing[(v, d)].items()
                        if p != platform_of[i]
                        for j in js
                        if j > i
                    }
                )
                for j in candidates:
                    b, cb = cols[j]
                    pa, pb = platform_of[i], platform_of[j]
                    digests_a = digests[i]
                    digests_b = digests[j]
                    same = sorted(
                        v
                        for v, d in digests_a.items()
                        if d is not None and d != v and digests_b.get(v) == d
                    )
                    if same:
                        self.report.mismatches.append(
                            Mismatch(
                                "digest",
                                None,
                                f"{a} / {b}",
                                f"{pa} / {pb}",
                                ca if ca == cb else f"{ca} / {cb}",
                                f"different digests of the same {domain} on {pa} and {pb}",
                                f"{a}.{ca} on {pa} and {b}.{cb} on {pb} give the same digest "
                                f"for {', '.join(repr(v) for v in same)}",
                                tuple(same),
                                self._objects(a, ca) + self._objects(b, cb),
                                f"masked {domain} identifiers join across platforms: the salt "
                                "functions must differ per platform",
                            )
                        )

    def _objects(self, dataset: str, column: str | None) -> tuple[SqlObject, ...]:
        row, columns = self.parts_of[dataset]
        part = row if column is None else columns.get(column)
        return tuple(part.objects) if part is not None else ()

    def _digests(self, dataset: str, column: str) -> dict[str, Any]:
        """identifier -> what the column's mask shows a persona with no principal."""
        use = self.uses[dataset][1][column]
        table = self.tables[dataset]
        index = table.column_index(column)
        assert index is not None
        values = table.columns[index].values
        key = ("digests", use.group.id, id(use.codes), id(values))
        found = self._memo.get(key)
        if found is None:
            nobody = use.group.answers[NOBODY]
            n = len(values)
            found = self._memo[key] = {
                value: nobody[code]
                for r, code in enumerate(use.codes)
                if isinstance(value := values[r % n], str)
            }
        return found  # type: ignore[no-any-return]


_TABLE_PARTS = ("catalog", "db", "this")


def _cannot_execute(stmt: Statement, err: Exception) -> InputError:
    message = str(err).strip().splitlines()[0]
    return InputError(
        Diagnostic(
            Location(stmt.file, stmt.line, stmt.column),
            f"cannot execute this statement on DuckDB: {message}",
        )
    )


def _arg_key(arg: exp.Expression) -> Any:
    slot = arg.meta.get("accord_slot")
    return ("slot", slot) if slot is not None else arg.sql("duckdb")


class _Slots:
    """The generated columns one part reads, in order of first use. The part's SQL names them
    by position (``accord_t."accord_in_0"``, ...), not by name, so that one policy attached
    to columns of different names in many datasets is one SQL text, executed once
    (``real``: by name, as the dataset's own rows are read when locating a failure)."""

    __slots__ = ("names", "real")

    def __init__(self, real: bool = False) -> None:
        self.names: list[str] = []
        self.real = real

    def column(self, name: str) -> exp.Column:
        if self.real:
            return row_column(name)
        return _slot_column(self._slot(name))

    def sql(self, name: str) -> str:
        if self.real:
            return row_column(name).sql("duckdb")
        return f'{ROWS}."accord_in_{self._slot(name)}"'

    def _slot(self, name: str) -> int:
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)


@lru_cache(maxsize=256)
def _slot_column(i: int) -> exp.Column:
    # shared: binding copies an argument before placing it (``Binder._substitute``)
    column = row_column(f"accord_in_{i}")
    column.meta["accord_slot"] = i
    return column


class _Group:
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


class _Differing(dict[str, tuple[int, ...]]):
    """persona -> rows that differ from the model; ``any``: whether some persona has one."""

    any = False


@dataclass(frozen=True)
class _Use:
    """Where one part of one dataset is evaluated: its group, and per generated row the
    index of the row's inputs in the group."""

    group: _Group
    codes: tuple[int, ...]


class _Values:
    """One result row's column values, looked up by column name."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[self._index[name]]


class _Results(Mapping[str, Mapping[str, dict[int, tuple[bool, _Values]]]]):
    """dataset -> persona -> row -> (visible, values by column), for the datasets evaluated,
    assembled from the groups' answers when asked for (probes, ``accord diff``)."""

    def __init__(self, verifier: Verifier) -> None:
        self._verifier = verifier

    def __getitem__(self, dataset: str) -> Mapping[str, dict[int, tuple[bool, _Values]]]:
        if dataset not in self._verifier.uses:
            raise KeyError(dataset)
        return _DatasetResults(self._verifier, dataset)

    def __iter__(self) -> Iterator[str]:
        return iter(self._verifier.uses)

    def __len__(self) -> int:
        return len(self._verifier.uses)


class _DatasetResults(Mapping[str, dict[int, tuple[bool, _Values]]]):
    def __init__(self, verifier: Verifier, dataset: str) -> None:
        self._verifier = verifier
        self._dataset = dataset
        self._personas = sorted([*verifier.personas, NOBODY])

    def __getitem__(self, persona: str) -> dict[int, tuple[bool, _Values]]:
        if persona not in self._personas:
            raise KeyError(persona)
        row_use, column_uses = self._verifier.uses[self._dataset]
        visible = row_use.group.answers[persona]
        names = list(column_uses)
        index = {name: i for i, name in enumerate(names)}
        answers = [(u.codes, u.group.answers[persona]) for u in column_uses.values()]
        return {
            r: (
                bool(visible[code]),
                _Values(index, tuple(got[codes[r]] for codes, got in answers)),
            )
            for r, code in enumerate(row_use.codes)
        }

    def __iter__(self) -> Iterator[str]:
        return iter(self._personas)

    def __len__(self) -> int:
        return len(self._personas)


def _covers(a: AbacPolicy, table: str, platform: str) -> bool:
    return abac_conditions.covers(a, table, lambda name: fold(name, platform))


def _tag_value(node: exp.Expression, stmt: Statement, tags: dict[str, str]) -> bool:
    """Evaluate an ABAC tag condition (has_tag, has_tag_value, AND, OR, NOT) on ``tags``
    (:func:`targets.abac_conditions.holds`: tag keys and values as written)."""
    try:
        return abac_conditions.holds(node, tags)
    except abac_conditions.ConditionError as err:
        raise BindError(
            stmt,
            f"cannot evaluate the tag condition {err.node.sql('databricks')} (has_tag, "
            "has_tag_value, AND, OR, NOT only)",
        ) from None


def _tags_match(stmt: Statement, cond: exp.Expression | None, tags: dict[str, str]) -> bool:
    return cond is None or _tag_value(cond, stmt, tags)


def _match_aliases(
    stmt: Statement, a: AbacPolicy, col_tags: dict[str, dict[str, str]]
) -> dict[str, list[str]] | None:
    """alias -> matching columns, or None when some condition matches no column (the policy
    does not apply to the table)."""
    out: dict[str, list[str]] = {}
    for cond, alias in a.match_columns:
        cols = [c for c, tags in col_tags.items() if _tag_value(cond, stmt, tags)]
        if not cols:
            return None
        if alias:
            out[alias] = cols
    return out


def _principal_list(names: Iterable[str]) -> str:
    return "[" + ", ".join(exp.Literal.string(n).sql("duckdb") for n in names) + "]::VARCHAR[]"


def _who(principals: tuple[str, ...]) -> str:
    if any(p.lower() == ACCOUNT_USERS for p in principals):
        return "TRUE"
    names = _principal_list(principals)
    return (
        f"(list_has_any({PERSONA}.dbx_groups, {names}) "
        f"OR list_contains({names}, {PERSONA}.user_name))"
    )


def _applies(a: AbacPolicy) -> str:
    """SQL: the ABAC policy applies to the persona of the row (TO, and not EXCEPT)."""
    text = _who(a.to)
    if a.except_:
        text = f"{text} AND NOT {_who(a.except_)}"
    return f"({text})"


def _more_than_one(conditions: list[str]) -> str:
    return "(" + " + ".join(f"CASE WHEN {c} THEN 1 ELSE 0 END" for c in conditions) + ") > 1"


def _tag_mask(sql: PlatformSQL, table: str, column: str, duck_type: str) -> Attachment | None:
    """Snowflake tag-based masking: a policy attached to a tag the column (or its table)
    carries, of the column's type family."""
    is_string = duck_type == "VARCHAR"
    for key in ((table, column), (table, "")):
        for tag in sorted(sql.tags.get(key, {})):
            for policy in sql.tag_policies.get(fold(tag, sql.platform), ()):
                routine = sql.routine(policy)
                if routine is None or not routine.params:
                    continue
                ptype = routine.params[0].type
                if (
                    ptype in ("VARCHAR", "STRING", "TEXT") or ptype.startswith("VARCHAR")
                ) == is_string:
                    return Attachment(policy, (), routine.stmt)
    return None


def _strategy(model: PolicyModel, ds: Any, column: str) -> str | None:
    spec = ds.columns.get(column)
    return model.masks[spec.mask].strategy if spec and spec.mask else None


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or str(a) == str(b)


def _show(value: Any) -> str:
    return "NULL" if value is None else repr(value)


def _rows_text(table: GenTable, rows: list[int], key: str | None) -> str:
    if not rows:
        return "no rows"
    if len(rows) == table.length:
        return f"every row ({len(rows)})"
    if key is None:
        return ", ".join(f"row {r}" for r in rows)
    return "rows with " + key + " in (" + ", ".join(_show(table.value(r, key)) for r in rows) + ")"


def _nothing(what: str, where: str) -> tuple[SqlObject, ...]:
    return (SqlObject(f"no {what} attached to", where),)


def stored_role(name: str) -> str:
    """A Snowflake role name as Snowflake stores it when created unquoted: upper case."""
    return name.upper()
