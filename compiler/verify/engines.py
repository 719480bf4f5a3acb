"""``accord verify --engine duckdb|spark|all``: three comparisons and one report.

DuckDB's engine (:mod:`compiler.verify.engine`) executes both platforms' SQL, translated by
sqlglot, with accord's stand-ins for the platforms' functions. The Spark engine
(:mod:`compiler.verify.spark.harness`) executes the Databricks SQL as compiled, on an engine
accord did not write. Three comparisons follow:

* the model with DuckDB: what ``accord verify`` has always reported;
* the model with Spark (:func:`model_with_spark`): the same comparison
  (:class:`compiler.verify.compare.Comparison`), the Databricks datasets answered by Spark and
  the Snowflake ones by DuckDB (no local engine runs Snowflake SQL), so replicas and digests
  across the two platforms are compared too; only what involves a Databricks dataset is kept
  (the rest is DuckDB's already);
* DuckDB with Spark (:func:`engines_disagree`): every persona, generated row and column of
  every Databricks dataset, whether each engine shows the row and what it shows in each
  column. A disagreement names the persona, the row with its values, the column, each
  engine's answer and the SQL that produced it.

:func:`combine` makes one report of them: a mismatch both engines show once, naming both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from accord.compiler.verify.compare import Comparison, _same, _show
from accord.compiler.verify.data import GenTable
from accord.compiler.verify.engine import Verifier
from accord.compiler.verify.parts import Part
from accord.compiler.verify.report import Mismatch, Report, SqlObject
from accord.compiler.verify.results import NOBODY, Answers
from accord.compiler.verify.spark.harness import PLATFORM, SparkResult

ENGINES = ("duckdb", "spark", "all")

#: mismatches found by reading the SQL, not by executing it: the same whichever engine runs
STATIC = ("shadowed", "probe")


def _involves_spark(m: Mismatch) -> bool:
    return PLATFORM in m.platform.split(" / ")


def model_with_spark(verifier: Verifier, result: SparkResult) -> tuple[list[Mismatch], int]:
    """The model compared with Spark's answers (DuckDB's for the Snowflake datasets): the
    mismatches that involve a Databricks dataset, and the number of checks made."""
    uses = {**verifier.uses, **result.uses}
    parts_of = {**verifier.parts_of, **result.parts_of}
    report = Report(verifier.report.origin, 0, 0, ())
    comparison = Comparison(
        verifier.model,
        verifier.personas,
        verifier.tables,
        uses,  # type: ignore[arg-type]
        parts_of,
        Answers(uses),  # type: ignore[arg-type]
        lambda mask, platform: verifier.salts.for_mask(verifier.model, mask, platform),
        report,
        verifier.as_of,
    )
    for dataset in sorted(result.uses):
        row, columns = parts_of[dataset]
        comparison.compare(dataset, row, columns)
    comparison.compare_replicas()
    comparison.compare_digests()
    return [m for m in report.mismatches if _involves_spark(m)], report.checks


def _objects(*parts: Part) -> tuple[SqlObject, ...]:
    out: list[SqlObject] = []
    for part in parts:
        out += [o for o in part.objects if o not in out]
    return tuple(out)


def engines_disagree(verifier: Verifier, result: SparkResult) -> tuple[list[Mismatch], int]:
    """Every place where DuckDB and Spark answer a persona differently, and the number of
    places compared."""
    out: list[Mismatch] = []
    checks = 0
    for dataset in sorted(result.uses):
        table = verifier.tables[dataset]
        n = table.length
        d_row, d_cols = verifier.uses[dataset]
        s_row, s_cols = result.uses[dataset]
        d_parts, s_parts = verifier.parts_of[dataset], result.parts_of[dataset]

        def row_text(r: int, table: GenTable = table) -> str:
            values = ", ".join(f"{c.name}={_show(table.value(r, c.name))}" for c in table.columns)
            return f"row {r} ({values})"

        for persona in [*verifier.personas, NOBODY]:
            d_seen = d_row.group.answers[persona]
            s_seen = s_row.group.answers[persona]
            d_vis = [bool(d_seen[c]) for c in d_row.codes]
            s_vis = [bool(s_seen[c]) for c in s_row.codes]
            checks += 1
            places: list[tuple[str | None, list[int], list[Any], list[Any], Part, Part]] = []
            shown = [r for r in range(n) if d_vis[r] != s_vis[r]]
            if shown:
                places.append(
                    (
                        None,
                        shown,
                        ["shown" if v else "hidden" for v in d_vis],
                        ["shown" if v else "hidden" for v in s_vis],
                        d_parts[0],
                        s_parts[0],
                    )
                )
            for column, d_use in d_cols.items():
                s_use = s_cols[column]
                checks += 1
                d_values = [d_use.group.answers[persona][c] for c in d_use.codes]
                s_values = [s_use.group.answers[persona][c] for c in s_use.codes]
                differ = [r for r in range(n) if not _same(d_values[r], s_values[r])]
                if differ:
                    places.append(
                        (
                            column,
                            differ,
                            [_show(v) for v in d_values],
                            [_show(v) for v in s_values],
                            d_parts[1][column],
                            s_parts[1][column],
                        )
                    )
            for column, rows, d_answer, s_answer, d_part, s_part in places:
                r0 = rows[0]
                seen = "shown" if d_vis[r0] and s_vis[r0] else "hidden on an engine"
                what = "the rows shown" if column is None else f"column {column}"
                who = "a user in no group" if persona == NOBODY else persona
                out.append(
                    Mismatch(
                        "engines",
                        persona,
                        dataset,
                        PLATFORM,
                        column,
                        f"duckdb: {d_answer[r0]} for {row_text(r0)}",
                        f"spark: {s_answer[r0]}",
                        tuple(
                            f"{row_text(r)}: duckdb {d_answer[r]}, spark {s_answer[r]}"
                            for r in rows
                        ),
                        _objects(d_part, s_part),
                        f"DuckDB (the SQL translated by sqlglot) and Spark (the SQL as "
                        f"compiled) disagree on {what} for {who} in {len(rows)} row(s) "
                        f"(first: {seen})",
                        engine="duckdb+spark",
                        answers=(
                            ("duckdb", d_answer[r0], d_part.sql),
                            ("spark", s_answer[r0], s_part.sql),
                        ),
                    )
                )
            for what, d_use, s_use in [
                ("rows", d_row, s_row),
                *((c, d_cols[c], s_cols[c]) for c in d_cols),
            ]:
                d_refused = bool(set(d_use.codes) & d_use.group.conflicts.get(persona, set()))
                s_refused = bool(set(s_use.codes) & s_use.group.conflicts.get(persona, set()))
                if d_refused != s_refused:
                    column = None if what == "rows" else what
                    part_d = d_parts[0] if column is None else d_parts[1][column]
                    part_s = s_parts[0] if column is None else s_parts[1][column]
                    out.append(
                        Mismatch(
                            "engines",
                            persona,
                            dataset,
                            PLATFORM,
                            column,
                            f"duckdb: {'refused' if d_refused else 'answered'}",
                            f"spark: {'refused' if s_refused else 'answered'}",
                            (),
                            _objects(part_d, part_s),
                            "DuckDB and Spark disagree on whether more than one ABAC policy "
                            "applies",
                            engine="duckdb+spark",
                            answers=(
                                ("duckdb", "refused" if d_refused else "answered", part_d.sql),
                                ("spark", "refused" if s_refused else "answered", part_s.sql),
                            ),
                        )
                    )
    return out, checks


def _key(m: Mismatch) -> tuple[Any, ...]:
    return (m.kind, m.persona, m.dataset, m.platform, m.column, m.expected, m.actual, m.rows)


def combine(
    engine: str,
    duck: Report,
    spark: Iterable[Mismatch],
    spark_checks: int,
    disagreements: Iterable[Mismatch] = (),
    disagreement_checks: int = 0,
) -> Report:
    """One report of the engines' findings (``engine``: ``spark`` or ``all``). With ``spark``,
    DuckDB's findings on the Databricks datasets are left to Spark; with ``all`` both are
    kept, once when they are the same."""
    kept: list[Mismatch] = []
    for m in duck.mismatches:
        if m.kind in STATIC:
            kept.append(m)  # read from the SQL, or from whichever engine answered
        elif engine == "all" or not _involves_spark(m):
            kept.append(replace(m, engine="duckdb"))
    index = {_key(m): i for i, m in enumerate(kept) if m.engine == "duckdb"}
    for m in spark:
        i = index.get(_key(m))
        if i is not None:
            kept[i] = replace(kept[i], engine="duckdb+spark")
        else:
            kept.append(replace(m, engine="spark"))
    kept += list(disagreements)
    engines = {p: ["duckdb"] for p in duck.platforms}
    if PLATFORM in engines:
        engines[PLATFORM] = ["duckdb", "spark"] if engine == "all" else ["spark"]
    return replace(
        duck,
        mismatches=kept,
        checks=duck.checks + spark_checks + disagreement_checks,
        engines=engines,
    )
