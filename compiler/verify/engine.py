"""Execute the compiled policies on embedded DuckDB and compare with the model: the run.

:class:`Verifier` creates the mapping tables the compiled SQL fills and the persona table on a
locked DuckDB connection, generates each dataset's rows (:mod:`compiler.verify.data`), builds
each dataset's row predicate and column values as *parts* (:mod:`compiler.verify.parts`),
groups equal parts across datasets and executes each group once
(:mod:`compiler.verify.execute`), and compares the answers (:mod:`compiler.verify.results`)
with the model (:mod:`compiler.verify.compare`). A part that cannot be executed is located by
executing its dataset's own query over its rows (:meth:`Verifier._execute_directly`). duckdb
is imported through :mod:`compiler.verify.execute` only: ``accord lint`` never loads this
module.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date
from typing import Any

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.platforms import DATABRICKS, SNOWFLAKE, facts
from accord.compiler.core.today import today
from accord.compiler.meaning import semantics
from accord.compiler.model.identities import identity_subject, subject, unheld
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.shadowing import Shadowed, TableColumns, shadowed_parameters, table_key
from accord.compiler.model.shadowing import fold as fold_name
from accord.compiler.model.validate import Project
from accord.compiler.sqlscan import Statement, node_position
from accord.compiler.verify.bind import Binder, BindError
from accord.compiler.verify.compare import Comparison
from accord.compiler.verify.constraints import ConstraintCheck
from accord.compiler.verify.data import GenTable, generate
from accord.compiler.verify.execute import (
    Group,
    Use,
    execute_directly,
    execute_group,
    locked_connection,
    run_table_statements,
)
from accord.compiler.verify.parts import Part, PartBuilder, objects_of
from accord.compiler.verify.report import Mismatch, Report, SqlObject
from accord.compiler.verify.results import NOBODY, Answers, Results
from accord.compiler.verify.sources import CompiledSQL, PlatformSQL, fold


class TestSalts:
    """One test salt per salt reference, never written. Derived from the reference's name
    (a public value, never the secret the reference names), so the same input gives the same
    report: a mismatch of a salted mask shows the same digests on every run."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        self._salts: dict[str, str] = {}

    def __call__(self, ref: str) -> str:
        if ref not in self._salts:
            seed = f"accord verify test salt\0{ref}".encode()
            self._salts[ref] = hashlib.sha256(seed).hexdigest()[:32]
        return self._salts[ref]

    def for_mask(self, model: PolicyModel, mask: str, platform: str) -> str | None:
        ref = (model.masks[mask].salt or {}).get(platform)  # type: ignore[call-overload]
        return self(ref) if ref else None


def user_name(persona: str) -> str:
    return f"{persona}@verify.accord.invalid"


class Verifier:
    def __init__(
        self,
        project: Project,
        compiled: CompiledSQL,
        salts: TestSalts,
        as_of: date | None = None,
        subjects: list[str] | None = None,
        platforms: set[str] | None = None,
    ) -> None:
        """``subjects``: whom to evaluate beside the model's personas (identities held by no
        persona, :func:`compiler.model.identities.subject`); by default every identity a
        principal names that no persona holds. ``platforms``: the platforms whose SQL DuckDB
        executes (default: every one; ``accord verify --engine spark`` leaves Databricks to
        Spark)."""
        self.project = project
        self.model = project.model
        #: the day the policies' CURRENT_DATE() answers and the model's grants are judged at
        self.as_of = as_of or today()
        #: the platforms whose datasets this engine evaluates
        self.platforms = platforms
        self.compiled = compiled
        self.salts = salts
        self.con = locked_connection()
        if subjects is None:
            subjects = [
                subject(i)
                for p in sorted(self.model.declared_platforms())
                for i in unheld(self.model, p)
            ]
        #: the personas, then the identities evaluated as subjects of their own
        self.personas = sorted(self.model.personas) + [
            s for s in subjects if s not in self.model.personas
        ]
        self.report = Report(
            origin=compiled.origin,
            personas=len(self.personas),
            datasets=len(self.model.datasets),
            platforms=tuple(sorted({d.platform for d in self.model.datasets.values()})),
        )
        self.table_columns: dict[str, set[str]] = {}
        self.binders: dict[str, Binder] = {}
        self.tables: dict[str, GenTable] = {}
        #: builds the parts of each dataset (set up by :meth:`build`)
        self.builder: PartBuilder | None = None
        #: dataset -> (row part, column parts) as executed
        self.parts_of: dict[str, tuple[Part, dict[str, Part]]] = {}
        #: dataset -> where its row part and each column's part are evaluated
        self.uses: dict[str, tuple[Use, dict[str, Use]]] = {}
        #: what the evaluated parts answer
        self.answers = Answers(self.uses)
        #: dataset -> persona -> row -> (visible, {column: value}), built when asked for
        self.results = Results(self.uses, self.personas)
        #: (part SQL, conflict SQL, input types) -> its group
        self._groups: dict[tuple[str, str | None, tuple[str, ...]], Group] = {}
        #: datasets whose parts read a column the generated rows do not have
        self._unreadable: list[str] = []
        #: datasets whose generated rows are in a table of their own (to locate a failure)
        self._direct: set[str] = set()

    def sql_for(self, platform: str) -> PlatformSQL:
        return self.compiled.platforms.get(platform) or PlatformSQL(platform)

    # ---- setup ---------------------------------------------------------------------------------

    def build(self) -> None:
        for platform in sorted(self.compiled.platforms):
            if self.platforms is not None and platform not in self.platforms:
                continue
            run_table_statements(self.con, self.compiled.platforms[platform])
        for name, cols in self.con.execute(
            "SELECT table_name, list(lower(column_name)) FROM information_schema.columns "
            "GROUP BY table_name"
        ).fetchall():
            self.table_columns[name] = set(cols)
        for platform in self.report.platforms:
            self.binders[platform] = Binder(self.sql_for(platform), self.table_columns, self.as_of)
        extra: dict[str, set[str]] = {}
        attached = {p: self.sql_for(p).attached_columns_by_table() for p in self.report.platforms}
        for name, ds in self.model.datasets.items():
            named = attached[ds.platform].get(fold(ds.table, ds.platform), set())
            listed = {k.lower() for k in ds.columns}
            extra[name] = {c for c in named if c.lower() not in listed}
        self.tables = generate(self.model, extra)
        self.builder = PartBuilder(self.model, self.compiled, self.binders, self.tables)
        self._personas()

    def _personas(self) -> None:
        self.con.execute(
            "CREATE TABLE accord_personas (persona VARCHAR, user_name VARCHAR, "
            "sf_primary VARCHAR, sf_roles VARCHAR[], sf_available VARCHAR, "
            "sf_available_list VARCHAR[], dbx_groups VARCHAR[], dbx_workspace_groups VARCHAR[])"
        )
        self.con.executemany(
            "INSERT INTO accord_personas VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self.persona_rows()
        )

    def persona_rows(self) -> list[list[Any]]:
        """Per persona (and :data:`NOBODY`): its name, user name, Snowflake primary role,
        roles, available roles (as a JSON array string and as a list), Databricks account
        groups and workspace groups: what the platforms' context functions answer it (the
        columns of ``accord_personas``; the Spark engine binds the same memberships)."""
        rows = []
        for persona in [*self.personas, NOBODY]:
            if persona == NOBODY:
                roles: list[str] = []
                groups: list[str] = []
                primary = None
            else:
                roles = self._identities(persona, SNOWFLAKE.name)
                groups = self._identities(persona, DATABRICKS.name)
                first_name = semantics.primary_principal(self.model, persona)
                first = self.model.principals[first_name] if first_name else None
                primary = (
                    SNOWFLAKE.stored_identity(first.snowflake)
                    if first is not None and first.snowflake
                    else None
                )
            # every user holds the everyone identities (PUBLIC; account users, users); an
            # identity evaluated alone is one platform's, and nothing on the other
            own = identity_subject(persona)
            if own is None or own.platform == SNOWFLAKE.name:
                roles += [r for r in SNOWFLAKE.everyone if r not in roles]
            if own is None or own.platform == DATABRICKS.name:
                groups += [g for g in DATABRICKS.everyone if g not in groups]
            # CURRENT_AVAILABLE_ROLES(): the roles granted to the user, read as the ones the
            # persona lists (whether it also lists inherited roles is not documented: this is
            # the reading that can deny); IS_ROLE_IN_SESSION sees the whole hierarchy
            listed = self._listed(persona) if persona != NOBODY else set()
            granted = [r for r in roles if r in listed]
            available = "[" + ",".join(f'"{r}"' for r in granted) + "]"
            rows.append(
                [persona, user_name(persona), primary, roles, available, granted, groups, []]
            )
        return rows

    def _listed(self, persona: str) -> set[str]:
        """The Snowflake roles the persona lists itself (not inherited)."""
        return {
            SNOWFLAKE.stored_identity(self.model.principals[p].snowflake or "")
            for p in semantics.listed_on(self.model, persona, "snowflake")
        }

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
                out.append(facts(platform).stored_identity(identity))
        return out

    # ---- per dataset ---------------------------------------------------------------------------

    def parts(self, dataset: str, real: bool = False) -> tuple[Part, dict[str, Part]]:
        """The row predicate and every column's value of ``dataset``
        (:meth:`compiler.verify.parts.PartBuilder.parts`)."""
        assert self.builder is not None, "build() first"
        return self.builder.parts(dataset, real)

    def objects(self, dataset: str, column: str | None) -> tuple[SqlObject, ...]:
        """The SQL objects the row part (``column`` None) or a column's part comes from."""
        return objects_of(self.parts_of, dataset, column)

    # ---- evaluation ----------------------------------------------------------------------------

    def evaluate(self, datasets: Iterable[str]) -> None:
        """Bind every part of ``datasets`` and execute each distinct part once.

        A part (a dataset's row predicate or one column's value) is SQL over its inputs
        (:class:`_Slots`) and the persona. Parts with the same SQL and input types form a
        :class:`Group`: one table of the distinct input values its datasets' generated rows
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
        failed = [g for g in self._groups.values() if not execute_group(self.con, g)]
        if failed or self._unreadable:
            self._fail({d for g in failed for d in g.datasets} | set(self._unreadable), failed)

    def _use(self, table: GenTable, part: Part) -> Use | None:
        # once per part of every dataset (a dozen per dataset): plain loops, no generators
        index = table.column_index
        columns = table.columns
        types = []
        values = []
        for name in part.inputs:
            i = index(name)
            if i is None:
                return None
            col = columns[i]
            types.append(col.duck_type)
            values.append(col.values)
        key = (part.sql, part.conflict, tuple(types))
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = Group(len(self._groups), part, key[2])
        group.datasets.append(table.dataset)
        return Use(group, group.codes(tuple(values), table.length))

    def _fail(self, datasets: set[str], failed: list[Group]) -> None:
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
        """:func:`compiler.verify.execute.execute_directly` on ``dataset``'s parts over its own
        columns: the query a failure is located with."""
        parts = self.parts(dataset, real=True)
        return execute_directly(self.con, self.tables[dataset], parts, self._direct)

    # ---- comparisons ---------------------------------------------------------------------------

    def evaluated(self) -> list[str]:
        """The datasets this engine evaluates (of its :attr:`platforms`), sorted."""
        return sorted(
            name
            for name, ds in self.model.datasets.items()
            if self.platforms is None or ds.platform in self.platforms
        )

    def run(self) -> Report:
        datasets = self.evaluated()
        self.evaluate(datasets)
        comparison = Comparison(
            self.model,
            self.personas,
            self.tables,
            self.uses,
            self.parts_of,
            self.answers,
            lambda mask, platform: self.salts.for_mask(self.model, mask, platform),
            self.report,
            self.as_of,
        )
        for dataset in datasets:
            row, columns = self.parts_of[dataset]
            comparison.compare(dataset, row, columns)
        comparison.compare_replicas()
        comparison.compare_digests()
        ConstraintCheck(
            self.model,
            self.personas,
            self.con,
            self.binders,
            self.sql_for,
            self.tables,
            self.report,
        ).run()
        self.check_shadowing(datasets)
        return self.report

    def _known_columns(self, platform: str) -> dict[tuple[str, ...], TableColumns]:
        """The tables the compiled SQL of ``platform`` creates, with all their columns."""
        out = {}
        for name, cols in sorted(self.table_columns.items()):
            prefix, _, table = name.partition(":")
            if prefix == platform and table:
                origin = f"the compiled table {table}"
                known = frozenset(fold_name(c, platform) for c in cols)
                out[table_key(table.split("."), platform)] = TableColumns(known, True, origin)
        return out

    def check_shadowing(self, datasets: list[str]) -> None:
        """A policy parameter that a column shadows inside a subquery of the executed body
        (lint rule ACC104): executing it shows what the SQL does, and the model's own reading
        of a hand-written predicate is the same SQL, so nothing would differ. It is a
        mismatch: the body does not compare the argument the policy is attached with."""
        known = {p: self._known_columns(p) for p in self.report.platforms}
        # a routine's answer depends only on its body, its parameters and the platform's known
        # tables: asked once per routine, not once per dataset that uses it (thousands of
        # datasets share a dozen policies)
        answers: dict[int, list[Shadowed]] = {}
        for dataset in datasets:
            ds = self.model.datasets[dataset]
            row, columns = self.parts_of[dataset]
            for column, part in [(None, row), *sorted(columns.items())]:
                for stmt in part.statements:
                    routine = self.sql_for(ds.platform).routine(stmt.name or "")
                    if routine is None or not routine.params:
                        continue
                    hits = answers.get(id(routine))
                    if hits is None:
                        names = [p.name for p in routine.params]
                        hits = answers[id(routine)] = shadowed_parameters(
                            routine.body, names, ds.platform, known.get(ds.platform)
                        )
                    for hit in hits:
                        self.report.mismatches.append(
                            self._shadowed(dataset, column, part, routine.stmt, routine.name, hit)
                        )

    def _shadowed(
        self,
        dataset: str,
        column: str | None,
        part: Part,
        stmt: Statement,
        name: str,
        hit: Shadowed,
    ) -> Mismatch:
        ds = self.model.datasets[dataset]
        line, col = node_position(stmt, hit.column)
        where = f"{stmt.file}:{line}:{col}"
        rf = ds.row_filter
        if column is None and rf is not None and rf.expression and ds.platform in rf.expression:
            written = self.project.loc("datasets", dataset, "row_filter", "expression", ds.platform)
            where += f", written at {written}"
        return Mismatch(
            "shadowed",
            None,
            dataset,
            ds.platform,
            column,
            f"{hit.column.name} is the parameter {hit.parameter} of {name}",
            f"{hit.column.name} is the column of {hit.table}",
            (),
            tuple(part.objects),
            hit.message(f"{name} ({where})"),
        )
