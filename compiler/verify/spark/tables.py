"""The mapping tables on Spark: created and filled by the compiled statements.

``CREATE TABLE``, ``INSERT`` and ``TRUNCATE TABLE`` run on Spark as written, their names
rewritten (:mod:`compiler.verify.spark.names`). Spark's session catalog holds file tables,
which take no row-level changes ("MERGE INTO TABLE is not supported temporarily", and
``DELETE``/``UPDATE`` "only supported with v2 tables"), so ``MERGE``, ``DELETE`` and
``UPDATE`` are applied by the harness: Spark executes one ``SELECT`` that computes the table's
new rows from the statement's own parts (its target and source, its ``ON`` and clause
conditions, its ``SET`` and ``VALUES`` expressions, each as written), and the table is
overwritten with them. The clauses keep Delta's order: the first ``WHEN`` whose condition
holds decides a row (sql-ref-syntax-dml-merge-into: "If there are multiple WHEN MATCHED
clauses, then they are evaluated in the order they are specified"); a target row no clause
decides is kept; a ``DELETE`` removes the rows its ``WHERE`` is true for.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.sqlscan import Statement
from accord.compiler.verify.spark.names import Names, quote

#: the generated column that marks a source row in a MERGE's join
MATCHED = "accord_matched"
ACTION = "accord_action"


def spark_error(err: BaseException) -> str:
    """The first line of a Spark error (its class and message, without the JVM stack)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def cannot_execute(stmt: Statement, err: BaseException, body: bool = False) -> InputError:
    line = stmt.body_line if body and stmt.body_line else stmt.line
    column = stmt.body_column if body and stmt.body_line else stmt.column
    name = f"{stmt.name}: " if stmt.name else ""
    return InputError(
        Diagnostic(
            Location(stmt.file, line, column),
            f"{name}cannot execute this statement on Spark: {spark_error(err)}",
        )
    )


def renamed(tree: exp.Expression, names: Names) -> exp.Expression:
    """A copy of ``tree`` with every mapped ``catalog.schema.table`` named ``database.table``."""
    tree = tree.copy()
    for table in tree.find_all(exp.Table):
        catalog, db = table.catalog.lower(), table.db.lower()
        if catalog and db and (catalog, db) in names.mapping:
            table.set("catalog", None)
            table.set("db", exp.to_identifier(names.mapping[(catalog, db)]))
    return tree


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark")


def _target(tree: exp.Expression) -> tuple[str, str]:
    """The target table's Spark name and the alias its conditions use."""
    table = tree.this
    assert isinstance(table, exp.Table)
    alias = table.alias or table.name
    bare = table.copy()
    bare.set("alias", None)
    return _sql(bare), alias


class TableRunner:
    """Runs the table statements of the compiled Databricks SQL on ``spark``
    (:class:`compiler.verify.spark.session.LocalSpark`)."""

    def __init__(self, spark: Any, names: Names) -> None:
        self.spark = spark
        self.names = names

    def run(self, stmt: Statement) -> None:
        tree = stmt.expression
        try:
            if isinstance(tree, exp.Merge | exp.Delete | exp.Update):
                self._rewrite_rows(renamed(tree, self.names))
            else:
                self.spark.sql(self.names.rewrite(stmt.text.rstrip().rstrip(";")))
        except InputError:
            raise
        except Exception as err:  # pyspark's errors and py4j's: located, never a traceback
            raise cannot_execute(stmt, err) from None

    # ---- rows computed by a SELECT, then written over the table -----------------------------

    def _columns(self, table: str) -> list[tuple[str, str]]:
        schema = self.spark.session.table(table).schema
        return [(f.name, f.dataType.simpleString()) for f in schema.fields]

    def _overwrite(self, table: str, query: str) -> None:
        frame = self.spark.session.sql(query)
        rows = frame.collect()
        self.spark.session.createDataFrame(rows, frame.schema).write.insertInto(
            table, overwrite=True
        )

    def _rewrite_rows(self, tree: exp.Expression) -> None:
        table, alias = _target(tree)
        columns = self._columns(table)
        if isinstance(tree, exp.Merge):
            query = self._merge(tree, table, alias, columns)
        elif isinstance(tree, exp.Delete):
            where = tree.args.get("where")
            keep = f"NOT COALESCE(({_sql(where.this)}), FALSE)" if where is not None else "FALSE"
            query = f"SELECT * FROM {table} AS {quote(alias)} WHERE {keep}"
        else:
            where = tree.args.get("where")
            hit = f"COALESCE(({_sql(where.this)}), FALSE)" if where is not None else "TRUE"
            sets = _assignments(tree.expressions)
            values = [
                f"CAST(CASE WHEN {hit} THEN ({sets[c.lower()]}) ELSE {quote(alias)}.{quote(c)} "
                f"END AS {t}) AS {quote(c)}"
                if c.lower() in sets
                else f"{quote(alias)}.{quote(c)}"
                for c, t in columns
            ]
            query = f"SELECT {', '.join(values)} FROM {table} AS {quote(alias)}"
        self._overwrite(table, query)

    def _merge(
        self, tree: exp.Merge, table: str, alias: str, columns: list[tuple[str, str]]
    ) -> str:
        using = tree.args["using"]
        source_alias = using.alias or (using.name if isinstance(using, exp.Table) else "")
        bare = using.copy()
        bare.set("alias", None)
        source = _sql(bare)
        if isinstance(using, exp.Table):
            source = f"(SELECT * FROM {source})"
        on = _sql(tree.args["on"])
        a, s = quote(alias), quote(source_alias)
        whens = tree.args["whens"].expressions if tree.args.get("whens") else []
        matched = [w for w in whens if w.args.get("matched")]
        by_source = [w for w in whens if not w.args.get("matched") and w.args.get("source")]
        inserts = [w for w in whens if not w.args.get("matched") and not w.args.get("source")]

        # target rows: matched (a source row joins) or not matched by source, first clause wins
        cases = []
        deleted = []
        updates: dict[int, dict[str, str]] = {}
        for number, w in enumerate(matched + by_source, 1):
            side = f"{s}.{MATCHED} IS NOT NULL" if w in matched else f"{s}.{MATCHED} IS NULL"
            cond = w.args.get("condition")
            test = f"{side} AND COALESCE(({_sql(cond)}), FALSE)" if cond is not None else side
            cases.append(f"WHEN {test} THEN {number}")
            then = w.args.get("then")
            if isinstance(then, exp.Update):
                updates[number] = (
                    {c.lower(): f"{s}.{quote(c)}" for c, _ in columns}
                    if not then.expressions
                    else _assignments(then.expressions)
                )
            else:
                deleted.append(number)
        action = f"CASE {' '.join(cases)} ELSE 0 END" if cases else "0"
        kept_values = []
        for c, t in columns:
            branches = [
                f"WHEN {ACTION} = {n} THEN ({sets[c.lower()]})"
                for n, sets in updates.items()
                if c.lower() in sets
            ]
            kept_values.append(
                f"CAST(CASE {' '.join(branches)} ELSE {a}.{quote(c)} END AS {t}) AS {quote(c)}"
                if branches
                else f"{a}.{quote(c)}"
            )
        # the action first, then the values that read it (a lateral column alias)
        kept = (
            f"SELECT {', '.join(quote(c) for c, _ in columns)} FROM ("
            f"SELECT {action} AS {ACTION}, {', '.join(kept_values)} "
            f"FROM {table} AS {a} LEFT JOIN "
            f"(SELECT *, TRUE AS {MATCHED} FROM {source} AS {s}) AS {s} ON {on}"
            f") WHERE {ACTION} NOT IN ({', '.join(map(str, deleted)) or '-1'})"
        )
        if not inserts:
            return kept
        # source rows no target row matches: the first NOT MATCHED clause whose condition holds
        cases = []
        inserted: dict[int, dict[str, str]] = {}
        for number, w in enumerate(inserts, 1):
            cond = w.args.get("condition")
            cases.append(
                f"WHEN COALESCE(({_sql(cond)}), FALSE) THEN {number}"
                if cond is not None
                else f"WHEN TRUE THEN {number}"
            )
            then = w.args["then"]
            names = then.this.expressions if isinstance(then.this, exp.Tuple) else []
            values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
            if not names:  # INSERT *: every column from the source's column of that name
                inserted[number] = {c.lower(): f"{s}.{quote(c)}" for c, _ in columns}
            else:
                inserted[number] = {
                    n.name.lower(): _sql(v) for n, v in zip(names, values, strict=True)
                }
        new_values = []
        for c, t in columns:
            branches = [
                f"WHEN {ACTION} = {n} THEN ({sets[c.lower()]})"
                for n, sets in inserted.items()
                if c.lower() in sets
            ]
            body = f"CASE {' '.join(branches)} END" if branches else "NULL"
            new_values.append(f"CAST({body} AS {t}) AS {quote(c)}")
        added = (
            f"SELECT {', '.join(quote(c) for c, _ in columns)} FROM ("
            f"SELECT CASE {' '.join(cases)} ELSE 0 END AS {ACTION}, {', '.join(new_values)} "
            f"FROM {source} AS {s} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS {a} WHERE {on})"
            f") WHERE {ACTION} <> 0"
        )
        return f"{kept} UNION ALL {added}"


def _assignments(items: list[exp.Expression]) -> dict[str, str]:
    """``SET c = expr, ...`` as {folded column: expr SQL}."""
    out = {}
    for item in items:
        if isinstance(item, exp.EQ):
            out[item.this.name.lower()] = _sql(item.expression)
    return out
