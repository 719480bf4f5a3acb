"""Seeded defects (issue 42, item 4): every one is caught by ``accord verify --engine all``,
and the report of what each engine caught (alone, together, only by disagreeing) is the one
committed in ``tests/golden/spark_defects.md``.

Each defect is one edit of the Databricks SQL ``accord compile`` writes for
``tests.spark_defects.ESTATE`` (:data:`tests.spark_defects.DEFECTS`), checked with
``--compiled``. What counts as a catch, per engine: a mismatch the engine's answers show
(rows, columns, replicas, digests, refusals), or an engine error located in the statement the
defect edited (an error elsewhere is no catch). ``--engine all`` adds a disagreement between
the two engines, and the shadowed-parameter check that reads the SQL. A defect in a function
both engines stand in for (``is_member``, a group name's case) is listed as not independently
checked.

One Spark session serves the whole module. Set ``ACCORD_REGEN_SPARK_DEFECTS=1`` to rewrite the
report after an intended change. Every defect costs both engines a verify run, so by default
the suite runs a fixed sample (:data:`SAMPLE`: every fourth defect, and every defect the
report says one engine alone catches), each row compared with the report's; ``ACCORD_FUZZ=1``
(and a rewrite) runs all of them and compares the whole report.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from accord.compiler.core.errors import InputError
from accord.compiler.model.validate import load_project
from accord.compiler.sqlscan import scan
from accord.compiler.verify.engines import STATIC
from accord.compiler.verify.run import verify
from accord.compiler.verify.sources import render_sql
from tests.conftest import ROOT
from tests.estates import write_estate
from tests.spark_defects import DEFECTS, ESTATE, Defect, seeded

pytestmark = pytest.mark.slow

REPORT = ROOT / "tests" / "golden" / "spark_defects.md"
AS_OF = date(2026, 6, 1)
ENGINES = ("duckdb", "spark")
#: every defect, and the whole report compared (else :data:`SAMPLE`)
EVERY = bool(os.environ.get("ACCORD_FUZZ") or os.environ.get("ACCORD_REGEN_SPARK_DEFECTS"))


def _alone_in_report() -> set[str]:
    """The defects the committed report says one engine alone catches (its last column)."""
    out = set()
    for line in REPORT.read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[6] in ("DuckDB", "Spark"):
            out.add(cells[0].removesuffix(" (stand-in)"))
    return out


#: the defects run by default
SAMPLE = [d for i, d in enumerate(DEFECTS) if i % 4 == 0 or d.name in _alone_in_report()]


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    from accord.compiler.verify.spark import session

    started = session.start()
    yield started
    started.stop()


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("defects")
    write_estate(root / "policies", ESTATE)
    files = render_sql(load_project(str(root / "policies")))
    return root, files


def _write(directory: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _edited_statements(
    defect: Defect, base: dict[str, str], files: dict[str, str], out: Path
) -> list[tuple[str, int, int]]:
    """(file as verify names it, first line, line after) of every statement an edit touches."""
    spans = []
    for file, old, new in ((defect.file, defect.old, defect.new), *defect.also):
        before = base[file]
        at = before.index(old) if old else len(before) + len(new) - len(new.lstrip("\n"))
        text = files[file]
        line = text.count("\n", 0, at) + 1
        name = os.path.join(str(out), file)
        stmts = scan(text, name, "databricks").statements
        for i, stmt in enumerate(stmts):
            end = stmts[i + 1].line if i + 1 < len(stmts) else text.count("\n") + 2
            if stmt.line <= line < end:
                spans.append((name, stmt.line, end))
    return spans


def _names_statement(err: InputError, spans: list[tuple[str, int, int]]) -> bool:
    return any(
        d.location.file == name and first <= d.location.line < end
        for d in err.diagnostics
        for name, first, end in spans
    )


def _outcome(defect: Defect, estate: tuple[Path, dict[str, str]], spark) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """What caught ``defect``: per engine a short reason ("" when nothing did)."""
    root, base = estate
    out = root / defect.name
    files = seeded(base, defect)
    _write(out, files)
    spans = _edited_statements(defect, base, files, out)
    project = load_project(str(root / "policies"))
    found = {"duckdb": "", "spark": "", "disagreement": "", "static": ""}

    def kinds(report, engine: str) -> str:  # type: ignore[no-untyped-def]
        hits = sorted(
            {
                m.kind
                for m in report.mismatches
                if m.kind not in (*STATIC, "engines")
                and engine in (m.engine or "duckdb").split("+")
            }
        )
        return ", ".join(hits)

    def error(err: InputError) -> str:
        return "error in the defect's statement" if _names_statement(err, spans) else ""

    try:
        report = verify(project, str(out), AS_OF, engine="all", spark=spark)
    except InputError:
        report = None
    if report is not None:
        found["duckdb"] = kinds(report, "duckdb")
        found["spark"] = kinds(report, "spark")
        found["disagreement"] = (
            "engines" if any(m.kind == "engines" for m in report.mismatches) else ""
        )
        found["static"] = ", ".join(
            sorted({m.kind for m in report.mismatches if m.kind == "shadowed"})
        )
        return found
    # an engine could not execute the SQL: each engine alone
    for engine in ENGINES:
        try:
            alone = verify(project, str(out), AS_OF, engine=engine, spark=spark)
        except InputError as err:
            found[engine] = error(err)
        else:
            found[engine] = kinds(alone, engine)
            found["static"] = found["static"] or ", ".join(
                sorted({m.kind for m in alone.mismatches if m.kind == "shadowed"})
            )
    return found


def _report(rows: list[tuple[Defect, dict[str, str]]]) -> str:
    lines = [
        "# Seeded defects: what each engine catches",
        "",
        "Generated by `tests/test_verify_spark_defects.py` (`ACCORD_REGEN_SPARK_DEFECTS=1` "
        "rewrites it). Each defect is one edit of the Databricks SQL compiled from "
        "`tests/spark_defects.py`'s estate, verified with `accord verify --compiled DIR "
        "--engine all`. A column names what the engine's own answers showed (the mismatch "
        "kinds), or an error it raised in the edited statement; *disagreement*: the two "
        "engines answered differently; *static*: found by reading the SQL (ACC104).",
        "",
        "| defect | what | DuckDB | Spark | disagreement | static | caught alone by |",
        "|---|---|---|---|---|---|---|",
    ]
    alone = {"duckdb": [], "spark": []}  # type: ignore[var-annotated]
    stand_ins = []
    for defect, found in rows:
        only = ""
        if found["duckdb"] and not found["spark"]:
            only = "DuckDB"
            alone["duckdb"].append(defect.name)
        elif found["spark"] and not found["duckdb"]:
            only = "Spark"
            alone["spark"].append(defect.name)
        if defect.stand_in:
            stand_ins.append(defect.name)
        cells = [found[k] or "-" for k in ("duckdb", "spark", "disagreement", "static")]
        name = defect.name + (" (stand-in)" if defect.stand_in else "")
        lines.append(f"| {name} | {defect.what} | {' | '.join(cells)} | {only or '-'} |")
    lines += [
        "",
        f"{len(rows)} defects; caught by `--engine all`: "
        f"{sum(1 for _, f in rows if any(f.values()))}.",
        f"Caught by DuckDB alone: {', '.join(alone['duckdb']) or 'none'}.",
        f"Caught by Spark alone: {', '.join(alone['spark']) or 'none'}.",
        "Not independently checked (both engines answer them from the same stand-in: the "
        f"membership table and its exact group names): {', '.join(stand_ins) or 'none'}.",
        "",
    ]
    return "\n".join(lines)


def test_every_seeded_defect_is_caught_by_engine_all(estate, spark) -> None:  # type: ignore[no-untyped-def]
    assert len(DEFECTS) >= 30
    assert len({d.name for d in DEFECTS}) == len(DEFECTS)
    root, base = estate
    # the estate as compiled is clean on both engines: every finding below is the defect's
    _write(root / "clean", base)
    clean = verify(load_project(str(root / "policies")), str(root / "clean"), AS_OF, "all", spark)
    assert clean.mismatches == []
    rows = [(d, _outcome(d, estate, spark)) for d in (DEFECTS if EVERY else SAMPLE)]
    missed = [d.name for d, found in rows if not any(found.values())]
    assert missed == []
    text = _report(rows)
    if os.environ.get("ACCORD_REGEN_SPARK_DEFECTS"):
        REPORT.write_text(text)
    if EVERY:
        assert REPORT.read_text() == text
    else:  # each sampled defect's row is the report's
        committed = set(REPORT.read_text().splitlines())
        lines = text.splitlines()
        start = lines.index("|---|---|---|---|---|---|---|") + 1
        table = [line for line in lines[start:] if line.startswith("| ")]
        assert len(table) == len(SAMPLE) >= 10
        assert [line for line in table if line not in committed] == []
