"""The shortcuts taken for speed (bench/README.md) answer exactly what the slow paths answered.

* ``targets.sql.statement_count`` counts plain SQL text without the tokenizer: the count is
  compared with the tokenizer's on every object the reference estates render, and on texts
  built to sit at the edge of the shortcut (comments, strings, empty statements);
* the plan simulator's index of tags and ABAC policies (``compiler.plan.index``) is compared,
  after every kind of mutation, with a scan of the placements;
* ``accord analyze``'s persona matrix, built through one memoised perspective per persona, is
  compared with ``semantics.dataset_view`` called afresh for every cell.
"""

from __future__ import annotations

import pytest

from accord.compiler.meaning import divergence, semantics
from accord.compiler.meaning.analyze import governed_groups, persona_matrix
from accord.compiler.model.validate import load_project
from accord.compiler.plan.index import Places
from accord.compiler.plan.state import State
from accord.targets import get_target, lower_all, sql
from accord.targets.objects import AbacPolicy, TagAssignment
from tests.conftest import ROOT

ESTATES = ["policies", "examples/as-found"]


def tokenizer_count(text: str, platform: str) -> int:
    """The count through sqlglot's tokenizer (what every text took before the shortcut)."""
    return sql._tokenized_count(text, platform)


def rendered_texts() -> list[tuple[str, str]]:
    out = []
    for estate in ESTATES:
        project = load_project(ROOT / estate)
        for platform, catalog in lower_all(project).items():
            target = get_target(platform)
            for obj in catalog:
                rendered = target.render_object(obj)
                if rendered is not None:
                    out.append((platform, rendered[1]))
    return out


EDGE = [
    "ALTER TABLE A.B.C MODIFY COLUMN X SET MASKING POLICY G.P.M;",
    "ALTER TABLE a.b.c SET ROW FILTER g.p.f ON (x);\nALTER TABLE a.b.c ALTER COLUMN y DROP MASK;",
    "SELECT 1;;\n;SELECT 2",
    ";\n;\n",
    "SELECT 1 -- ; not a statement\n;",
    "SELECT ';' ; SELECT 2;",
    "SELECT 1 /* ; */ ;",
    'SELECT "a;b" FROM t;',
    "SELECT $$ ; $$;",
    "",
    "   \n",
]


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
@pytest.mark.parametrize("text", EDGE)
def test_statement_count_edges(platform: str, text: str) -> None:
    assert sql.statement_count(text, platform) == tokenizer_count(text, platform)


def test_statement_count_of_every_rendered_object() -> None:
    texts = rendered_texts()
    plain = [t for _, t in texts if sql._PLAIN_SQL.issuperset(t)]
    assert plain and len(plain) < len(texts)  # both paths are exercised
    for platform, text in texts:
        assert sql.statement_count(text, platform) == tokenizer_count(text, platform), text


# --------------------------------------------------------------------------------------------
# the plan simulator's index


def scanned_tags(state: State, table: str, column: str | None) -> dict[str, str]:
    col = (column or "").upper()
    return {
        p.tag: p.value  # type: ignore[union-attr]
        for k, p in state.places.items()
        if k[0] == "tag" and k[1] == table.upper() and k[2] == col
    }


def scanned_abac(state: State, kind: str) -> list[object]:
    return [p for k, p in state.places.items() if k[0] == "abac" and p.kind == kind]  # type: ignore[union-attr]


def assert_index_matches(state: State) -> None:
    tables = {k[1] for k in state.places if k[0] in ("tag", "filter", "mask")} | {"NONE.X.Y"}
    for t in tables:
        columns = {k[2] for k in state.places if k[0] == "tag" and k[1] == t} | {"", "NOPE"}
        for c in columns:
            assert state.tags_of(t, c or None) == scanned_tags(state, t, c or None)
        assert state.tagged_columns(t) == {
            k[2] for k in state.places if k[0] == "tag" and k[1] == t and k[2]
        }
    for kind in ("ROW FILTER", "COLUMN MASK"):
        assert state.abac_placed(kind) == scanned_abac(state, kind)


def abac_state() -> State:
    project = load_project(ROOT / "examples" / "as-found")  # Databricks style abac
    catalog = lower_all(project)["databricks"]
    assert any(isinstance(o, AbacPolicy) for o in catalog)
    return State.of(catalog, "databricks")


def test_plan_index_follows_every_mutation() -> None:
    state = abac_state()
    assert isinstance(state.places, Places)
    assert_index_matches(state)
    tags = [(k, p) for k, p in state.places.items() if isinstance(p, TagAssignment)]
    assert tags
    key, tag = tags[0]
    # detach, re-attach with another value, copy, and plain dict operations
    assert state.detach(tag) == []
    assert_index_matches(state)
    state.attach(TagAssignment(tag.table, tag.column, tag.tag, "other", tag.dataset), None)
    assert_index_matches(state)
    copy = state.copy()
    copy.places.pop(key)
    assert_index_matches(copy)
    assert_index_matches(state)  # the copy's change is not the original's
    abac = [k for k in state.places if k[0] == "abac"]
    del state.places[abac[0]]
    assert_index_matches(state)
    state.places.update({abac[0]: copy.places[abac[0]]})
    assert_index_matches(state)
    state.places.clear()
    assert_index_matches(state)
    plain = State("databricks", places={key: tag})  # a plain dict is wrapped
    assert isinstance(plain.places, Places)
    assert_index_matches(plain)


# --------------------------------------------------------------------------------------------
# analyze


@pytest.mark.parametrize("estate", ESTATES)
def test_persona_matrix_equals_fresh_views(estate: str) -> None:
    model = load_project(ROOT / estate).model
    by_dataset = divergence.reaches(model)
    for persona in sorted(model.personas):
        expected = []
        for dataset in governed_groups(model):
            for surface, _ in by_dataset[dataset]:
                view = semantics.dataset_view(model, persona, dataset, surface)
                values = (
                    tuple(sorted(view.rows.values)) if view.row_disposition == "filtered" else ()
                )
                expected.append((dataset, None, surface, view.row_disposition, values))
                expected += [(dataset, c.column, surface, c.disposition, ()) for c in view.columns]
        got = [
            (c.dataset, c.column, c.surface, c.disposition, c.values)
            for c in persona_matrix(model, persona)
        ]
        assert got == expected


# --------------------------------------------------------------------------------------------
# verify: the number of DuckDB statements does not grow with the number of personas


class _Counting:
    def __init__(self, con: object) -> None:
        self._con = con
        self.calls = 0

    def execute(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        return self._con.execute(*args, **kwargs)  # type: ignore[attr-defined]

    def executemany(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        return self._con.executemany(*args, **kwargs)  # type: ignore[attr-defined]


def _statements(project: object, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    from accord.compiler.verify import engine
    from accord.compiler.verify.run import verify

    made: list[_Counting] = []
    real = engine.locked_connection

    def counting() -> _Counting:
        made.append(_Counting(real()))
        return made[-1]

    monkeypatch.setattr(engine, "locked_connection", counting)
    report = verify(project)  # type: ignore[arg-type]
    assert not report.mismatches
    return made[0].calls, report.checks


def test_verify_queries_do_not_grow_with_personas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twice the personas (each persona again under another name, holding the same principals:
    every identity stays held, so the subjects added are personas only): more checks, the same
    statements."""
    import dataclasses

    project = load_project(ROOT / "policies")
    model = project.model
    more = dataclasses.replace(
        project,
        model=model.model_copy(
            update={
                "personas": {
                    **model.personas,
                    **{f"{p}_again": v for p, v in model.personas.items()},
                }
            }
        ),
    )
    calls_one, checks_one = _statements(project, monkeypatch)
    calls_all, checks_all = _statements(more, monkeypatch)
    assert checks_all > checks_one  # more personas were checked
    assert calls_all == calls_one
