"""``accord verify --engine spark|all`` on a local Spark (issue 42): the reference estate
passes on both engines, the as-found estate's Databricks defects are found by both, the
harness applies MERGE / DELETE / UPDATE as DuckDB's engine does, ABAC policies and expiring
grants are evaluated, a disagreement names each engine's answer and SQL, and Spark's refusal is
located. One Spark session serves the module (slow tier)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.core.errors import InputError
from accord.compiler.model.validate import load_project
from accord.compiler.verify.run import verify
from accord.compiler.verify.sources import load_sql, render_sql
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import databricks_estate, edited, write_estate
from tests.spark_defects import ESTATE, MASKS, PHONE
from tests.test_progress import Recorder, terminal  # noqa: F401 - terminal: a fixture

pytestmark = pytest.mark.slow

AS_OF = date(2026, 6, 1)


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    from accord.compiler.verify.spark import session

    started = session.start()
    yield started
    started.stop()


def _compiled(directory: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(directory)


def test_the_reference_estate_passes_on_both_engines(spark) -> None:  # type: ignore[no-untyped-def]
    report = verify(load_project(str(ROOT / "policies")), None, AS_OF, "all", spark)
    assert report.mismatches == []
    assert report.engines == {"databricks": ["duckdb", "spark"], "snowflake": ["duckdb"]}
    assert "executed databricks on duckdb and spark; snowflake on duckdb" in report.summary()
    doc = json.loads(report.to_json())
    assert doc["summary"]["engines"]["databricks"] == ["duckdb", "spark"]
    # every Databricks dataset was compared engine against engine: more checks than DuckDB's
    alone = verify(load_project(str(ROOT / "policies")), None, AS_OF)
    assert report.checks > alone.checks


@pytest.mark.parametrize("engine", ["spark", "all"])
def test_both_engines_find_the_as_found_databricks_defects(spark, engine: str) -> None:  # type: ignore[no-untyped-def]
    report = verify(load_project(str(ROOT / "examples" / "as-found")), None, AS_OF, engine, spark)
    digests = [m for m in report.mismatches if m.kind == "digest"]
    # the unsalted sha2 of the lakehouse masks gives Snowflake's digests
    assert {m.dataset for m in digests} == {
        "assay_results / assay_results_lake",
        "assay_results / variant_calls",
    }
    expected = "duckdb+spark" if engine == "all" else "spark"
    assert {m.engine for m in digests} == {expected}
    assert not [m for m in report.mismatches if m.kind == "engines"]


def test_the_harness_fills_mapping_tables_as_duckdb_does(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from accord.compiler.verify.execute import locked_connection, run_table_statements
    from accord.compiler.verify.spark.harness import SparkHarness

    text = """
CREATE TABLE IF NOT EXISTS gov.pol.grants (code STRING NOT NULL, grp STRING NOT NULL, until DATE);
INSERT INTO gov.pol.grants VALUES ('A', 'x', NULL), ('B', 'y', DATE'2026-01-01'), ('C', 'z', NULL);
MERGE INTO gov.pol.grants AS t
USING (SELECT * FROM VALUES ('A', 'x', DATE'2027-01-01'), ('B', 'y', DATE'2026-01-01'),
       ('D', 'w', NULL) AS v(code, grp, until)) AS s
ON t.code = s.code AND t.grp = s.grp
WHEN MATCHED AND NOT (t.until <=> s.until) THEN UPDATE SET until = s.until
WHEN NOT MATCHED THEN INSERT (code, grp, until) VALUES (s.code, s.grp, s.until)
WHEN NOT MATCHED BY SOURCE THEN DELETE;
INSERT INTO gov.pol.grants VALUES ('E', 'v', NULL), ('F', 'u', NULL);
DELETE FROM gov.pol.grants WHERE code = 'E';
UPDATE gov.pol.grants SET grp = 'changed' WHERE code = 'F';
MERGE INTO gov.pol.grants AS t USING gov.pol.grants AS s ON t.code = s.code AND s.code = 'D'
WHEN MATCHED THEN DELETE;
"""
    sql = load_sql({"databricks/010.sql": text}, lambda ref: "salt", "test")
    con = locked_connection()
    run_table_statements(con, sql.platforms["databricks"])
    duck = sorted(con.execute('SELECT * FROM "databricks:gov.pol.grants"').fetchall())
    harness = SparkHarness(spark, sql)
    harness.set_up()
    try:
        got = sorted(tuple(r) for r in spark.sql("SELECT * FROM gov__pol.grants"))
    finally:
        harness.close()
    assert got == duck
    assert [r[0] for r in got] == ["A", "B", "F"]
    assert got[0][2] == date(2027, 1, 1)
    assert got[2][1] == "changed"


def test_abac_policies_are_matched_by_the_harness(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = databricks_estate(
        "abac",
        datasets={
            "results": {
                "platform": "databricks",
                "table": "cat.s.results",
                "row_filter": {"entitlement": "programme", "column": "programme"},
                "columns": {"notes": {"type": "STRING", "mask": "redacted"}},
            },
            "other": {
                "platform": "databricks",
                "table": "cat.t.other",
                "columns": {"notes": {"type": "STRING"}},
            },
        },
        personas={"one": ["team_01"], "three": ["team_03"]},
        entitlements={"programme": {"P1": ["team_01", "team_03"], "P2": ["team_02"]}},
    )
    project = load_project(str(write_estate(tmp_path / "p", estate)))
    assert verify(project, None, AS_OF, "all", spark).mismatches == []
    # the mask's EXCEPT dropped: team_03 no longer sees the notes in the clear, on both engines
    files = render_sql(project)
    policies = next(k for k in files if k.endswith("050_policies.sql"))
    assert "EXCEPT `team-03`" in files[policies]
    files[policies] = files[policies].replace("EXCEPT `team-03`\n", "", 1)
    report = verify(project, _compiled(tmp_path / "out", files), AS_OF, "all", spark)
    found = {(m.kind, m.persona, m.column, m.engine) for m in report.mismatches}
    assert ("column", "three", "notes", "duckdb+spark") in found


def test_expiring_grants_are_judged_on_every_day_by_both_engines(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = edited(
        ESTATE,
        {
            "entitlements": {
                "programme": {
                    "P1": ["chemist", {"principal": "clinician", "until": "2026-07-01"}],
                    "P2": ["clinician"],
                }
            }
        },
    )
    project = load_project(str(write_estate(tmp_path / "p", estate)))
    report = verify(project, None, AS_OF, "all", spark)
    assert report.dates == ("2026-06-01", "2026-07-01", "2026-07-02")
    assert report.mismatches == []
    # a grant that ends a day early (< for <=): both engines see the clinician lose P1 on its
    # last day
    files = render_sql(project)
    filters = "databricks/030_row_filters.sql"
    early = files[filters].replace("CURRENT_DATE <= g.valid_until", "CURRENT_DATE < g.valid_until")
    assert early != files[filters]
    files[filters] = early
    report = verify(project, _compiled(tmp_path / "out", files), AS_OF, "all", spark)
    days = {(m.as_of, m.persona, m.engine) for m in report.mismatches if m.kind == "rows"}
    assert ("2026-07-01", "clinician", "duckdb+spark") in days
    assert not any(m.as_of == "2026-06-01" for m in report.mismatches)


def test_a_disagreement_names_each_engines_answer_and_sql(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from accord.compiler.verify.spark import harness

    project = load_project(str(write_estate(tmp_path / "p", ESTATE)))
    files = render_sql(project)
    # a mask Spark answers as written; DuckDB reads the same SQL through sqlglot. Pretend the
    # translation is wrong by answering one mask function differently on Spark only
    files[MASKS] = files[MASKS].replace(PHONE, "concat('x', right(val, 4))")
    out = _compiled(tmp_path / "out", files)
    original = harness.SparkHarness.query

    def skewed(self, group, number=None, types=None):  # type: ignore[no-untyped-def]
        text = original(self, group, number, types)
        return text.replace("gov__pol.phone_mask(a0)", "concat('y', right(a0, 4))")

    harness.SparkHarness.query = skewed  # type: ignore[method-assign]
    try:
        report = verify(project, out, AS_OF, "all", spark)
    finally:
        harness.SparkHarness.query = original  # type: ignore[method-assign]
    engines = [m for m in report.mismatches if m.kind == "engines"]
    assert engines
    m = next(m for m in engines if m.column == "phone" and m.persona == "chemist")
    assert m.expected.startswith("duckdb: 'xne-1' for row ")
    assert "phone='phone-1'" in m.expected and "programme=" in m.expected
    assert m.actual == "spark: 'yne-1'"
    (duck, duck_answer, duck_sql), (sp, sp_answer, sp_sql) = m.answers
    assert (duck, sp) == ("duckdb", "spark")
    assert (duck_answer, sp_answer) == ("'xne-1'", "'yne-1'")
    assert "right(" in duck_sql.lower() and "accord_in_" in sp_sql
    record = m.record()
    assert record["answers"][1] == {"engine": "spark", "answer": "'yne-1'", "sql": sp_sql}
    assert "spark SQL: " in report.to_text()


def test_a_statement_spark_refuses_is_located(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project = load_project(str(write_estate(tmp_path / "p", ESTATE)))
    files = render_sql(project)
    files[MASKS] = files[MASKS].replace(PHONE, "no_such_function(val)")
    out = _compiled(tmp_path / "out", files)
    with pytest.raises(InputError) as caught:
        verify(project, out, AS_OF, "spark", spark)
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.location.file == str(Path(out) / MASKS)
    line = files[MASKS][: files[MASKS].index("FUNCTION gov.pol.phone_mask")].count("\n") + 1
    assert diagnostic.location.line == line
    assert "cannot execute this statement on Spark" in diagnostic.message
    assert "no_such_function" in diagnostic.message.lower()


def test_verify_on_two_engines_shows_its_stages(
    spark,  # type: ignore[no-untyped-def]
    terminal: Callable[[], list[Recorder]],  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a terminal, ``verify --engine all`` says each stage, starting Spark first (tests/
    test_progress.py holds the other commands' progress); the command is handed this file's
    Spark, which it stops as it would its own (here: left running)."""
    from accord.compiler.verify.spark import session

    class Shared:
        def __init__(self, started: Any) -> None:
            self.started = started

        def __getattr__(self, name: str) -> Any:
            return getattr(self.started, name)

        def stop(self) -> None:
            pass

    monkeypatch.setattr(session, "start", lambda: Shared(spark))
    made = terminal()
    run = run_cli(["verify", str(ROOT / "policies"), "--engine", "all"])
    assert run.returncode == 0, run.stdout + run.stderr
    (recorder,) = made
    assert recorder.stages[:2] == ["verify: starting a local Spark", "verify: compiling"]
    assert any(s.startswith("verify: every persona's answers on Spark") for s in recorder.stages)
    assert not recorder.drawn  # cleared before the report
