"""The shortcuts compile and plan take for speed answer exactly what the slow paths answer.

* ``targets.sql.prime_names`` decides the quoting of many names with one parse per batch: its
  answers are compared with the one-name-at-a-time question on every word sqlglot's
  tokenizers, parsers and expression classes know (``make test``; the fast tier, a fixed
  sample of them), in batches of several sizes and orders
  (with every question asked of the parser: ``targets/sqlwords.py``, which answers most
  words without it, is compared with the parser in ``tests/test_sqlwords.py``);
* the plan simulator's bulk questions (``State.exempt_all``, ``unprotected``, ``doubled``,
  ``blocked``) are compared with the per-entry questions, on estates with and without ABAC,
  and with Databricks tag changes pending;
* ``compiler.plan.diff`` compares body-less objects field by field: compared with the
  fingerprint comparison on every pair of objects of the reference estates' catalogs;
* ``compiler.core.memo.IdentityMemo`` never answers for another object;
* the planner's remembered answers (``Prover.answers``) plan exactly what asking
  afresh after every statement plans, on the reference roll-outs and on random estates.
"""

from __future__ import annotations

import functools
import random
from itertools import pairwise
from pathlib import Path

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from accord.compiler.core.memo import IdentityMemo
from accord.compiler.model.validate import Project, load_project
from accord.compiler.plan import diff as plan_diff
from accord.compiler.plan.order import PlatformPlanner
from accord.compiler.plan.prove import Prover
from accord.compiler.plan.source import plan_projects
from accord.compiler.plan.state import PlanError, State
from accord.targets import lower_all, sql, sqlwords
from accord.targets.identity import fingerprint, is_definition, place_key
from accord.targets.objects import AbacPolicy, TagAssignment
from accord.targets.reserved import RESERVED
from tests.conftest import ROOT
from tests.plan_helpers import project
from tests.test_plan_property import estates as random_estates

PLATFORMS = ["snowflake", "databricks"]
ESTATES = ["policies", "examples/as-found"]


def vocabulary() -> list[str]:
    """Every word sqlglot might treat specially, and names of the shapes estates use."""
    words: set[str] = set()
    for name in ("snowflake", "databricks", "spark", "bigquery", "postgres", "duckdb"):
        dialect = Dialect.get_or_raise(name)
        words |= {w for k in dialect.tokenizer_class.KEYWORDS for w in k.split()}
        parser = dialect.parser_class
        for table in (
            "FUNCTIONS",
            "FUNCTION_PARSERS",
            "NO_PAREN_FUNCTION_PARSERS",
            "PROPERTY_PARSERS",
            "CONSTRAINT_PARSERS",
            "QUERY_MODIFIER_PARSERS",
            "SET_PARSERS",
            "SHOW_PARSERS",
        ):
            words |= {k for k in getattr(parser, table, {}) if isinstance(k, str)}
    words |= {t.name for t in TokenType}
    words |= {c.__name__ for c in vars(exp).values() if isinstance(c, type)}
    words |= {w for r in RESERVED.values() for w in r}
    words |= {w.lower() for w in words} | {w.capitalize() for w in words}
    words |= {f"T_{i:05d}" for i in range(40)} | {"DB_0", "SCH_1", "notes_3", "x", "_a", "a1"}
    words |= {"a$b", "COL$1", "1abc", "a-b", "a b", "", "é", "naïve", "A.B"}
    return sorted(w for w in words if "." not in w)


def sample() -> list[str]:
    """The fast tier's words: a fixed draw of 200 from the vocabulary, with every word only the
    parser quotes (``targets/sqlwords.py``'s SPECIAL) and every name that is no plain ASCII
    identifier. ``make test`` asks every word (``every``, slow)."""
    every = vocabulary()
    special = {w for p in PLATFORMS for w in sqlwords.SPECIAL[p]}
    odd = {w for w in every if not (w.isascii() and w.isidentifier())}
    return sorted({*random.Random(0).sample(every, 200), *odd, *(special & set(every))})


#: which words a test asks about: the fast tier's sample, or every word (slow)
WORDS = pytest.mark.parametrize("words", ["sample", pytest.param("every", marks=pytest.mark.slow)])


@functools.cache
def parser_answers(words: str, platform: str) -> dict[str, bool]:
    """:func:`one_by_one` on ``words`` (``sample`` or ``every``), asked once per run: call it
    under the ``parser_only`` fixture."""
    assert not sql._TABLE[0], "asked of the parser only"
    return one_by_one(sample() if words == "sample" else vocabulary(), platform)


@pytest.fixture
def parser_only():
    """Every quoting question asked of sqlglot's parser, as without ``targets/sqlwords.py``
    (which answers most words without it: ``tests/test_sqlwords.py``)."""
    sql._QUOTED.clear()
    with sql.parser_only():
        yield
    sql._QUOTED.clear()


def one_by_one(names: list[str], platform: str) -> dict[str, bool]:
    sql._QUOTED.clear()
    out = {n: sql._needs_quotes(n, platform) for n in names}
    sql._QUOTED.clear()
    return out


@WORDS
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("batch", [1, 7, 256])
def test_prime_names_answers_as_one_name_at_a_time(
    platform: str, batch: int, words: str, monkeypatch: pytest.MonkeyPatch, parser_only: None
) -> None:
    expected = parser_answers(words, platform)
    names = list(expected)
    assert any(expected.values()) and not all(expected.values())  # both answers occur
    assert any(  # the parser, not the keyword list, decides some of them
        quoted and sql._settled(n, platform) is None for n, quoted in expected.items()
    )
    monkeypatch.setattr(sql, "_BATCH", batch)
    for seed in range(2):
        order = list(names)
        random.Random(seed).shuffle(order)
        sql._QUOTED.clear()
        sql.prime_names(order, platform)
        assert {n for n in names if (n, platform) not in sql._QUOTED} <= {""}
        got = {n: sql._needs_quotes(n, platform) for n in names}
        assert got == expected
    sql._QUOTED.clear()


@WORDS
@pytest.mark.parametrize("platform", PLATFORMS)
def test_one_special_word_sends_its_batch_to_the_slow_path(
    platform: str, words: str, parser_only: None
) -> None:
    """A batch holding one word the parser reads as something else (a function without
    parentheses) must not vouch for that word."""
    plain = [f"T_{i:05d}" for i in range(20)]
    special = [
        n
        for n, quoted in parser_answers(words, platform).items()
        if quoted and sql._settled(n, platform) is None and "$" not in n
    ]
    assert special
    for word in special[:20]:
        sql._QUOTED.clear()
        sql.prime_names([*plain[:10], word, *plain[10:]], platform)
        assert sql._needs_quotes(word, platform) is True
        assert not any(sql._needs_quotes(n, platform) for n in plain)
    sql._QUOTED.clear()


def clear_name_caches() -> None:
    sql._QUOTED.clear()
    sql.name_sql.cache_clear()
    sql._part_sql.cache_clear()


@pytest.mark.parametrize("estate", ESTATES)
def test_primed_rendering_is_unprimed_rendering(
    estate: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled tree is the same with the names primed and decided one at a time."""
    from accord.targets.render import render_files

    clear_name_caches()
    primed = render_files(load_project(ROOT / estate), "all")
    assert sql._QUOTED
    clear_name_caches()
    monkeypatch.setattr(sql, "prime_names", lambda names, platform: None)
    assert render_files(load_project(ROOT / estate), "all") == primed
    clear_name_caches()


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("value", ["plain", "it's", "back\\slash", "ünï", "a\nb", "$${x}", ""])
def test_literal_sql_is_sqlglots_literal(platform: str, value: str) -> None:
    assert sql.literal_sql(value, platform) == sql.render(exp.Literal.string(value), platform)
    parsed = sqlglot.parse_one(sql.literal_sql(value, platform), read=platform)
    assert isinstance(parsed, exp.Literal) and parsed.this == value


# --------------------------------------------------------------------------------------------
# the plan simulator's bulk questions


def states() -> list[tuple[str, State]]:
    out = []
    for estate in ESTATES:
        for platform, catalog in lower_all(load_project(ROOT / estate)).items():
            out.append((f"{estate}/{platform}", State.of(catalog, platform)))
    return out


def keys_of(state: State) -> tuple[list[str], list[tuple[str, str]]]:
    tables = sorted({k[1] for k in state.places if k[0] in ("filter", "mask", "tag")})
    tables += sorted(
        {p.securable.upper() for p in state.places.values() if isinstance(p, AbacPolicy)}
    )
    columns = sorted(
        {(k[1], k[2]) for k in state.places if k[0] == "mask" or (k[0] == "tag" and k[2])}
    )
    return [*tables, "NONE.X.Y"], [*columns, ("NONE.X.Y", "Z")]


def per_entry(state: State, tables: list[str], columns: list[tuple[str, str]]) -> dict:
    """The answers asked one entry at a time (the bulk questions' definition)."""
    gaps = [f"table {t} has no row filter" for t in tables if not state.filters_on(t)]
    gaps += [f"column {t}.{c} has no mask" for t, c in columns if not state.masks_on(t, c)]
    return {
        "exempt": {(t, c): state.exempt(t, c) for t, c in [(t, None) for t in tables] + columns},
        "unprotected": gaps,
        "blocked": {
            p: {k: v for t in tables for k, v in state.blocked([t], [], p).items()}
            | {k: v for col in columns for k, v in state.blocked([], [col], p).items()}
            for p in (False, True)
        },
    }


def bulk(state: State, tables: list[str], columns: list[tuple[str, str]]) -> dict:
    keys = [(t, None) for t in tables] + columns
    return {
        "exempt": state.exempt_all(keys),
        "unprotected": state.unprotected(tables, columns),
        "blocked": {p: state.blocked(tables, columns, p) for p in (False, True)},
    }


@pytest.mark.parametrize(("label", "state"), states(), ids=[label for label, _ in states()])
def test_bulk_questions_answer_as_per_entry(label: str, state: State) -> None:
    tables, columns = keys_of(state)
    assert bulk(state, tables, columns) == per_entry(state, tables, columns)
    has_abac = any(isinstance(p, AbacPolicy) for p in state.places.values())
    if not has_abac:
        assert state.doubled(tables, columns) == []
        assert state.blocked(tables, columns, True) == {}
    # with Databricks tag changes pending (not settled): the "possible" views differ
    tags = [p for p in state.places.values() if isinstance(p, TagAssignment)]
    if tags and state.platform == "databricks":
        pending = state.copy()
        pending.detach(tags[0])
        pending.attach(TagAssignment(tags[1].table, tags[1].column, tags[1].tag, "x", ""), None)
        assert pending.prior
        assert bulk(pending, tables, columns) == per_entry(pending, tables, columns)


# --------------------------------------------------------------------------------------------
# catalog diff and memo


@pytest.mark.parametrize("platform", PLATFORMS)
def test_diff_field_comparison_agrees_with_fingerprints(platform: str) -> None:
    catalogs = [lower_all(load_project(ROOT / e)).get(platform) for e in ESTATES]
    objects = [o for c in catalogs if c is not None for o in c]
    by_identity: dict[tuple[str, ...], list[object]] = {}
    for o in objects:
        key = ("def", o.name.upper()) if is_definition(o) else place_key(o)  # type: ignore[union-attr, arg-type]
        by_identity.setdefault(key, []).append(o)
    pairs = [
        (a, b) for group in by_identity.values() for a, b in pairwise(group) if type(a) is type(b)
    ]
    pairs += [(o, o) for o in objects]
    assert any(a is not b for a, b in pairs)
    for a, b in pairs:
        slow = fingerprint(a) != fingerprint(b) or a != b  # type: ignore[arg-type]
        assert plan_diff._differs(a, b) == slow, (a, b)  # type: ignore[arg-type]


def test_identity_memo_never_answers_for_another_object() -> None:
    calls: list[object] = []

    def fn(o: object) -> int:
        calls.append(o)
        return len(calls)

    memo: IdentityMemo[object, int] = IdentityMemo(fn, limit=3)
    a, b = exp.column("a"), exp.column("a")  # equal by sqlglot, distinct objects
    assert memo(a) == 1 and memo(a) == 1 and memo(b) == 2
    # an entry whose id another object now has is not that object's answer
    c = exp.column("c")
    memo._seen[id(c)] = (a, 99)
    assert memo(c) == 3
    memo(exp.column("d"))  # past the limit: forgotten, recomputed
    assert len(memo._seen) <= 3
    assert memo(a) == 5


# --------------------------------------------------------------------------------------------
# the planner's remembered answers


def plan_summary(base: Project, head: Project) -> object:
    """Everything a plan says (or the refusal), to compare two ways of planning it."""
    try:
        plan = plan_projects(base, head)
    except PlanError as err:
        return ("refused", str(err))
    return [
        (
            s.id,
            [x.sql for x in s.steps],
            [x.sql for x in s.rollback],
            s.notes,
            [(c.comment, c.sql) for c in s.checks],
        )
        for s in plan.stages
    ]


def planned_both_ways(base: Project, head: Project, monkeypatch: pytest.MonkeyPatch) -> int:
    """Plan with every remembered or derived answer checked against the answer asked afresh;
    the plan is the one planned asking afresh every time. Returns how many answers were not
    asked afresh."""
    original = Prover.answers
    reused = [0]
    with monkeypatch.context() as m:

        def afresh(
            self: Prover, state: State, step: object = None, previous: object = None
        ) -> object:
            self.remembered.clear()
            return original(self, state)

        m.setattr(Prover, "answers", afresh)
        fresh_plan = plan_summary(base, head)

    def checked(self: Prover, state: State, step: object = None, previous: object = None) -> object:
        before = len(self.remembered)
        answers = original(self, state, step, previous)  # type: ignore[arg-type]
        reused[0] += (len(self.remembered) == before and before > 0) or previous is not None
        assert answers == (
            state.unprotected(self.protected_tables, self.protected_columns),
            state.doubled(self.protected_tables, self.protected_columns),
            state.blocked(self.protected_tables, self.protected_columns),
            self.losses(state.exempt_all(self.watched)),
        )
        return answers

    with monkeypatch.context() as m:
        m.setattr(Prover, "answers", checked)
        assert plan_summary(base, head) == fresh_plan
    return reused[0]


def moved_everywhere(estate: dict[str, object]) -> dict[str, object]:
    """``estate`` with every entitlement row filter's ``unfiltered_for`` dropped, or set where
    there was none: every filtered table moves to another policy."""
    import copy

    head = copy.deepcopy(estate)
    someone = sorted(head["principals"])[0]  # type: ignore[call-overload]
    for ds in head.get("datasets", {}).values():  # type: ignore[union-attr]
        rf = ds.get("row_filter") or {}
        if "unfiltered_for" in rf:
            rf.pop("unfiltered_for")
        elif rf.get("entitlement"):
            rf["unfiltered_for"] = [someone]
    return head


@pytest.mark.parametrize(
    ("base", "head"),
    [("examples/as-found", "policies"), ("policies", "examples/as-found")],
)
def test_remembered_answers_plan_as_asking_afresh(
    base: str, head: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert planned_both_ways(load_project(ROOT / base), load_project(ROOT / head), monkeypatch)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(base=random_estates(), head=random_estates())
def test_remembered_answers_on_random_plans(
    base: dict[str, object], head: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    planned_both_ways(project(base), project(head), monkeypatch)


@pytest.mark.parametrize("base", ["policies", "examples/as-found"], ids=["policies", "as-found"])
def test_plans_moving_every_table_answer_as_asking_afresh(
    base: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Many placement steps in a row (the path where answers are derived step by step)."""
    import yaml

    from accord.compiler.model.loader import directory_files

    files, _ = directory_files(ROOT / base)
    estate: dict[str, object] = {}
    for path, _name in files:
        doc = yaml.safe_load(path.read_text()) or {}
        for section, value in doc.items():
            if isinstance(value, dict):
                estate.setdefault(section, {}).update(value)  # type: ignore[union-attr]
            else:
                estate[section] = value
    head = moved_everywhere(estate)
    assert head != estate
    planned_both_ways(project(estate), project(head), monkeypatch)


@pytest.mark.parametrize("estate", ESTATES)
def test_stepped_answers_are_fresh_answers(estate: str) -> None:
    """Random table-level attaches (to other policies) and detaches on a planner's state: the
    answers derived from the previous ones equal those asked afresh, gaps and losses of
    access included."""
    from dataclasses import replace

    from accord.compiler.plan.diff import diff_catalogs
    from accord.compiler.plan.source import domains_of
    from accord.compiler.plan.steps import Step
    from accord.targets.objects import (
        MaskAttachment,
        MaskPolicy,
        RowFilterAttachment,
        RowFilterPolicy,
    )

    project = load_project(ROOT / estate)
    seen = {"derived": 0, "gaps": 0, "losses gained": 0, "losses gone": 0}
    for platform, catalog in lower_all(project).items():
        planner = PlatformPlanner(
            diff_catalogs(platform, catalog, catalog), domains_of(project), None
        )
        prover = planner.prover
        state = planner.before.copy()
        placed = [
            p for p in state.places.values() if isinstance(p, RowFilterAttachment | MaskAttachment)
        ]
        names: dict[type, list[str]] = {RowFilterAttachment: [], MaskAttachment: []}
        for d in catalog:
            if isinstance(d, RowFilterPolicy | MaskPolicy):
                kind = RowFilterAttachment if isinstance(d, RowFilterPolicy) else MaskAttachment
                # and a copy that exempts nobody: moving onto it takes access away
                bare = replace(d, name=f"{d.name}_bare", body=exp.false())
                state.define(bare, None)
                names[kind] += [d.name, bare.name]
        # a few entries, moved many times: losses appear and go again
        placed = [p for p in placed if names[type(p)]][:6]
        if not placed:  # ABAC only: nothing attached table by table
            continue
        rng = random.Random(estate + platform)
        previous = prover.answers(state)
        for _ in range(200):
            obj = rng.choice(placed)
            current = state.places.get(place_key(obj))
            if current is not None and rng.random() < 0.3:
                step = Step("detach", current, None, "", "")
            else:
                moved = replace(obj, policy=rng.choice(names[type(obj)]))
                step = Step("attach", moved, current, "", "")
            step.run(state)
            fresh = (
                state.unprotected(prover.protected_tables, prover.protected_columns),
                state.doubled(prover.protected_tables, prover.protected_columns),
                state.blocked(prover.protected_tables, prover.protected_columns),
                prover.losses(state.exempt_all(prover.watched)),
            )
            derived = prover.stepped(state, step, previous)
            if derived is not None:
                assert derived == fresh
                seen["derived"] += 1
                seen["gaps"] += bool(fresh[0])
                seen["losses gained"] += bool(fresh[3].keys() - previous[3].keys())
                seen["losses gone"] += bool(previous[3].keys() - fresh[3].keys())
            previous = fresh
    if estate == "policies":  # table-level styles on both platforms: the derived path runs
        assert all(seen.values()), seen


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_name_part_is_written_as_render_writes_it(platform: str) -> None:
    """``targets.sql._part_sql`` writes a lone identifier with one reused generator per thread
    and platform: the same text as :func:`targets.sql.render` (a fresh generator, a copied
    tree) for every word sqlglot knows and names that must be quoted, in two threads at once."""
    import threading

    names = [
        *sorted(vocabulary())[:400],
        "customer_id",
        "Customer Id",
        'we"ird',
        "naïve",
        "$dollar",
        "_x1",
        "1st",
        "select",
        "ORDER",
    ]

    def written() -> list[str]:
        sql._part_sql.cache_clear()
        return [sql._part_sql(n, platform) for n in names]

    expected = [sql.render(sql.ident(n, platform), platform) for n in names]
    answers: list[list[str]] = []
    threads = [threading.Thread(target=lambda: answers.append(written())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert written() == expected
    assert answers == [expected, expected]
    assert any(text[:1] in {'"', "`"} for text in expected)  # quoting was exercised
    clear_name_caches()
