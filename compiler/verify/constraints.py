"""Snowflake's projection, aggregation and join policies, executed on DuckDB and compared with
the model (``accord verify``).

The compiled SQL is what is checked: each attached policy's body (read back from the SQL that
ships, perhaps edited by hand) is evaluated on DuckDB for every persona, with
``IS_ROLE_IN_SESSION`` bound to the persona's roles as for row access and masking policies
(:class:`compiler.verify.bind.Binder`), its constraint function read as the value it carries:
``PROJECTION_CONSTRAINT(ALLOW => b, ENFORCEMENT => e)`` -> ``'ALLOW'``, ``'FAIL'`` or
``'NULLIFY'``; ``AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => n)`` -> ``n`` and
``NO_AGGREGATION_CONSTRAINT()`` -> 0; ``JOIN_CONSTRAINT(JOIN_REQUIRED => b)`` -> ``b``
(sql-reference/sql/create-projection-policy, create-aggregation-policy, create-join-policy).

Then the queries a persona would run are executed on DuckDB over test rows, with what Snowflake
does under each answer, as documented:

* projection (user-guide/projection-policies): a column that may not be projected cannot be
  selected: the query fails (``ENFORCEMENT => 'FAIL'``, DuckDB's ``error()``) or reads NULL
  (``'NULLIFY'``);
* aggregation (user-guide/aggregation-policies): only aggregate queries answer, and a group of
  fewer rows than the minimum is not answered under its own key (the rows of such groups go to
  one remainder group, whose key is NULL); a query that does not aggregate is refused. Test
  rows hold one group of every size from 1 to one more than the larger of the model's and the
  compiled minimum, so a smaller compiled minimum shows as groups that come back;
* join (user-guide/join-policies): a query that does not join the table is refused, and so is
  a join on a column outside the attachment's ``ALLOWED JOIN KEYS``.

What comes back is compared with the model (:mod:`compiler.meaning.semantics`): a
projection-forbidden column that can be selected, groups smaller than the model's minimum that
are answered, a join on a column the model does not allow that is answered, or a persona the
model exempts that is refused, is a mismatch naming persona, dataset and column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from accord.compiler.core.platforms import facts
from accord.compiler.meaning import semantics
from accord.compiler.model.identities import identity_subject
from accord.compiler.verify.bind import PERSONA, Binder
from accord.compiler.verify.report import Mismatch, Report, SqlObject
from accord.compiler.verify.sources import PlatformSQL, Routine, fold

if TYPE_CHECKING:
    import duckdb

    from accord.compiler.model.schema import PolicyModel
    from accord.compiler.verify.data import GenTable


def _argument(call: exp.Anonymous, name: str) -> exp.Expression | None:
    for arg in call.expressions:
        if isinstance(arg, exp.Kwarg) and arg.this.name.upper() == name:
            return arg.expression
    return None


def constraint_value(body: exp.Expression) -> exp.Expression:
    """``body`` with each constraint function replaced by the value it carries (see the
    module's documentation), so that DuckDB can evaluate it."""

    def replace(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Anonymous):
            return node
        name = node.name.upper()
        if name == "PROJECTION_CONSTRAINT":
            allow = _argument(node, "ALLOW") or exp.false()
            enforcement = _argument(node, "ENFORCEMENT") or exp.Literal.string("FAIL")
            return exp.Case(
                ifs=[exp.If(this=allow.copy(), true=exp.Literal.string("ALLOW"))],
                default=enforcement.copy(),
            )
        if name == "AGGREGATION_CONSTRAINT":
            size = _argument(node, "MIN_GROUP_SIZE") or _argument(node, "MIN_ROW_COUNT")
            return (size or exp.Literal.number(1)).copy()
        if name == "NO_AGGREGATION_CONSTRAINT":
            return exp.Literal.number(0)
        if name == "JOIN_CONSTRAINT":
            return (_argument(node, "JOIN_REQUIRED") or exp.true()).copy()
        return node

    return body.copy().transform(replace)


class ConstraintCheck:
    """The projection, aggregation and join policies of one run's Snowflake datasets."""

    def __init__(
        self,
        model: PolicyModel,
        personas: list[str],
        con: duckdb.DuckDBPyConnection,
        binders: dict[str, Binder],
        sql_for: Any,
        tables: dict[str, GenTable],
        report: Report,
    ) -> None:
        self.model = model
        self.personas = personas
        self.con = con
        self.binders = binders
        self.sql_for = sql_for
        self.tables = tables
        self.report = report
        self._perspectives = {p: semantics.Perspective(model, p) for p in personas}
        #: what each query answered, by its inputs: the queries grow with the distinct answers
        #: of the policies, never with the personas (tests/test_verify_grouped.py)
        self._ran: dict[tuple[Any, ...], Any] = {}

    # ---- evaluating the compiled bodies -------------------------------------------------------

    def _answers(self, sql: PlatformSQL, policy: str) -> tuple[dict[str, Any], Routine | None]:
        """Persona -> what the compiled policy ``policy`` answers it (its constraint value);
        empty when the SQL does not define it."""
        routine = sql.routine(policy)
        if routine is None:
            return {}, None
        valued = Routine(routine.name, (), constraint_value(routine.body), routine.stmt)
        expr = self.binders[sql.platform].call_sql(valued, [])
        rows = self.con.execute(
            f"SELECT {PERSONA}.persona, ({expr}) FROM accord_personas AS {PERSONA}"
        ).fetchall()
        return {str(p): v for p, v in rows}, routine

    def _objects(self, routine: Routine | None, attached: Any, what: str) -> tuple[SqlObject, ...]:
        out = []
        if routine is not None:
            stmt = routine.stmt
            out.append(SqlObject(f"{what} policy", routine.name, stmt.file, stmt.line))
        if attached is not None:
            src = attached
            out.append(SqlObject(f"{what} attachment", f"{src.table}", None, None))
        return tuple(out)

    def _mine(self, persona: str, platform: str) -> frozenset[str]:
        return self._perspectives[persona].principals(platform)

    def _judged(self, persona: str, platform: str) -> bool:
        """Whether ``persona`` is judged on ``platform`` (an identity is its own platform's)."""
        own = identity_subject(persona)
        return own is None or own.platform == platform

    def _mismatch(
        self,
        kind: str,
        persona: str,
        dataset: str,
        column: str | None,
        expected: str,
        actual: str,
        rows: tuple[str, ...],
        objects: tuple[SqlObject, ...],
        message: str,
    ) -> None:
        platform = self.model.datasets[dataset].platform
        self.report.mismatches.append(
            Mismatch(
                kind, persona, dataset, platform, column, expected, actual, rows, objects, message
            )
        )

    # ---- the checks ---------------------------------------------------------------------------

    def run(self) -> None:
        for name in sorted(self.model.datasets):
            ds = self.model.datasets[name]
            if not facts(ds.platform).constraint_policies:
                continue
            sql = self.sql_for(ds.platform)
            placed = sql.placed.constraints
            table = fold(ds.table, ds.platform)
            for column in sorted(ds.columns):
                found = placed.get(("projection", table, fold(column, ds.platform)))
                if found is not None or ds.columns[column].projection is not None:
                    self._projection(name, column, sql, found)
            if ds.aggregation is not None or ("aggregation", table) in placed:
                self._aggregation(name, sql, placed.get(("aggregation", table)))
            if ds.join is not None or ("join", table) in placed:
                self._join(name, sql, placed.get(("join", table)))

    def _projection(self, dataset: str, column: str, sql: PlatformSQL, attached: Any) -> None:
        ds = self.model.datasets[dataset]
        rule = ds.columns[column].projection
        answers, routine = self._answers(sql, attached.policy) if attached else ({}, None)
        objects = self._objects(routine, attached, "projection")
        gen = self.tables[dataset]
        index = gen.column_index(column)
        values = [gen.value(r, column) for r in range(gen.length)] if index is not None else []
        for persona in self.personas:
            if not self._judged(persona, ds.platform):
                continue
            self.report.checks += 1
            hidden = rule is not None and self._mine(persona, ds.platform).isdisjoint(
                rule.allowed_for
            )
            outcome = str(answers.get(persona, "ALLOW")).upper()
            selected = self._select_projected(values, outcome)
            if hidden and selected is not None and any(v is not None for v in selected):
                shown = tuple(repr(v) for v in selected[:6])
                self._mismatch(
                    "projection", persona, dataset, column,
                    f"hidden: {column} cannot be selected "
                    f"({'the query fails' if rule and rule.enforcement == 'fail' else 'NULL'})",
                    "selected: the query returned its values", shown, objects,
                    f"{persona} can select {dataset}.{column}, which the model's projection "
                    f"policy lets only {', '.join(rule.allowed_for) if rule else 'anyone'} select",
                )  # fmt: skip
            elif not hidden and (selected is None or (values and all(v is None for v in selected))):
                self._mismatch(
                    "projection", persona, dataset, column,
                    "selected: the model lets it select the column",
                    "the query failed" if selected is None else "every value read as NULL",
                    (), objects,
                    f"{persona} cannot select {dataset}.{column}, which the model lets it select",
                )  # fmt: skip

    def _select_projected(self, values: list[Any], outcome: str) -> list[Any] | None:
        """``SELECT column`` over ``values`` on DuckDB under a projection outcome: the values,
        NULLs (NULLIFY), or None when the query fails (FAIL)."""
        key = ("projection", tuple(values), outcome)
        if key not in self._ran:
            self._ran[key] = self._run_projected(values, outcome)
        return self._ran[key]  # type: ignore[no-any-return]

    def _run_projected(self, values: list[Any], outcome: str) -> list[Any] | None:
        rows = [(v,) for v in values] or [(None,)]
        self.con.execute("CREATE OR REPLACE TEMP TABLE accord_projected (v VARCHAR)")
        self.con.executemany(
            "INSERT INTO accord_projected VALUES (?)",
            [(None if r[0] is None else str(r[0]),) for r in rows],
        )
        query = (
            "SELECT CASE ? WHEN 'ALLOW' THEN v WHEN 'NULLIFY' THEN NULL "
            "ELSE error('projection policy: the column may not be projected') END "
            "FROM accord_projected"
        )
        try:
            got = [r[0] for r in self.con.execute(query, [outcome]).fetchall()]
        except Exception:  # duckdb's error(): the query fails, as Snowflake's ENFORCEMENT FAIL
            return None
        return got if values else []

    def _aggregation(self, dataset: str, sql: PlatformSQL, attached: Any) -> None:
        ds = self.model.datasets[dataset]
        answers, routine = self._answers(sql, attached.policy) if attached else ({}, None)
        objects = self._objects(routine, attached, "aggregation")
        for persona in self.personas:
            if not self._judged(persona, ds.platform):
                continue
            self.report.checks += 1
            rows = self._perspectives[persona].rows(dataset)
            want = rows.aggregated  # 0: row by row
            got = int(answers.get(persona) or 0)
            largest = max(want, got) + 1
            answered = self._aggregate(got, largest)
            small = [f"a group of {n} rows" for key, n in answered if key is not None and n < want]
            if want and got == 0:
                self._mismatch(
                    "aggregation", persona, dataset, None,
                    f"aggregated: only groups of at least {want} rows",
                    "row by row: a query that does not aggregate answers", (), objects,
                    f"{persona} reads {dataset} row by row; the model answers it only aggregates "
                    f"over groups of at least {want} rows",
                )  # fmt: skip
            elif small:
                self._mismatch(
                    "aggregation", persona, dataset, None,
                    f"aggregated: only groups of at least {want} rows",
                    f"groups of at least {got} rows", tuple(small), objects,
                    f"{persona} is answered groups of {dataset} smaller than the model's minimum "
                    f"of {want} rows",
                )  # fmt: skip
            elif not want and got:
                self._mismatch(
                    "aggregation", persona, dataset, None,
                    "row by row: the model exempts it from the aggregation policy",
                    f"aggregated: only groups of at least {got} rows", (), objects,
                    f"{persona} is refused row-by-row reads of {dataset}, which the model allows",
                )  # fmt: skip

    def _aggregate(self, size: int, largest: int) -> list[tuple[Any, int]]:
        """An aggregate query on DuckDB over test rows holding one group of every size from 1
        to ``largest``, under a minimum group size ``size`` (0: none): (key, rows) of every
        group answered, the groups too small under one NULL key (the remainder group)."""
        key = ("aggregation", size, largest)
        if key not in self._ran:
            self._ran[key] = self._run_aggregate(size, largest)
        return self._ran[key]  # type: ignore[no-any-return]

    def _run_aggregate(self, size: int, largest: int) -> list[tuple[Any, int]]:
        self.con.execute(
            "CREATE OR REPLACE TEMP TABLE accord_grouped AS "
            "SELECT 'g' || n AS grp FROM range(1, ?) t(n), range(0, n) r(i)",
            [largest + 1],
        )
        return [
            (key, int(count))
            for key, count in self.con.execute(
                "SELECT CASE WHEN c >= ? THEN grp END AS grp, SUM(c) FROM "
                "(SELECT grp, COUNT(*) AS c FROM accord_grouped GROUP BY grp) GROUP BY 1 "
                "ORDER BY 2",
                [size],
            ).fetchall()
        ]

    def _join(self, dataset: str, sql: PlatformSQL, attached: Any) -> None:
        ds = self.model.datasets[dataset]
        rule = ds.join
        answers, routine = self._answers(sql, attached.policy) if attached else ({}, None)
        objects = self._objects(routine, attached, "join")
        allowed = {fold(k, ds.platform) for k in (attached.allowed_join_keys if attached else ())}
        model_keys = {fold(k, ds.platform) for k in (rule.allowed_join_keys if rule else ())}
        gen = self.tables[dataset]
        others = sorted(c.name for c in gen.columns if fold(c.name, ds.platform) not in model_keys)
        for persona in self.personas:
            if not self._judged(persona, ds.platform):
                continue
            self.report.checks += 1
            exempt = rule is None or not self._mine(persona, ds.platform).isdisjoint(
                rule.unrestricted_for
            )
            required = bool(answers.get(persona, False))
            unjoined = self._joined(required, allowed, None, ds.platform)
            if not exempt and unjoined:
                self._mismatch(
                    "join", persona, dataset, None,
                    "refused: the model requires a join", "answered without a join", (), objects,
                    f"{persona} reads {dataset} without joining it to another table",
                )  # fmt: skip
                continue
            if exempt and not unjoined:
                self._mismatch(
                    "join", persona, dataset, None,
                    "answered: the model exempts it from the join policy",
                    "refused without a join", (), objects,
                    f"{persona} is refused unjoined reads of {dataset}, which the model allows",
                )  # fmt: skip
                continue
            if exempt or not model_keys:
                continue
            loose = [c for c in others if self._joined(required, allowed, c, ds.platform)]
            if loose:
                self._mismatch(
                    "join", persona, dataset, None,
                    f"joins on {', '.join(sorted(rule.allowed_join_keys))} only"
                    if rule
                    else "joins refused",
                    "a join on another column answered", tuple(f"join on {c}" for c in loose),
                    objects,
                    f"{persona} joins {dataset} on a column the model's join policy does not allow",
                )  # fmt: skip

    def _joined(self, required: bool, allowed: set[str], on: str | None, platform: str) -> bool:
        """Whether a query joining the table on ``on`` (None: not joined at all) is answered
        under a join policy that ``required`` a join or not, with ``allowed`` join keys (empty:
        any): refused as Snowflake refuses it (user-guide/join-policies), the refusal raised on
        DuckDB as the platform raises it."""
        refused = required and (on is None or (allowed and fold(on, platform) not in allowed))
        key = ("join", bool(refused))
        if key not in self._ran:
            self._ran[key] = self._run_joined(bool(refused))
        return self._ran[key]  # type: ignore[no-any-return]

    def _run_joined(self, refused: bool) -> bool:
        query = "SELECT CASE WHEN ? THEN error('join policy: the query is refused') ELSE 1 END"
        try:
            self.con.execute(query, [refused]).fetchall()
        except Exception:  # duckdb's error(): refused, as Snowflake refuses it
            return False
        return True
