"""``targets/sqlwords.py``: sqlglot's keywords and its parser's answers to the quoting question,
computed once (``targets/sqlwords_build.py``), answer exactly what asking sqlglot answers.

* the file is what the installed sqlglot computes (fails when sqlglot's keywords, its parser's
  answers on the vocabulary or its version change: run ``make sqlwords``);
* with the table and without it (:func:`targets.sql.parser_only`: every question to sqlglot's
  tokenizer and parser, as before the table), ``_needs_quotes`` gives the same answer for
  every word of the vocabulary, the words of ``tests/test_render_perf.py`` and random words;
* another sqlglot version is never answered from the table;
* the compiled SQL of the reference estates is the same with and without the table.
"""

from __future__ import annotations

import os
import random
import string

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from accord.compiler.model.validate import load_project
from accord.targets import lower_all, sql, sqlwords, sqlwords_build
from accord.targets.render import render_files
from tests.conftest import ROOT
from tests.test_render_perf import vocabulary as render_vocabulary

PLATFORMS = ["snowflake", "databricks"]
FUZZ = bool(os.environ.get("ACCORD_FUZZ"))
EXAMPLES = 2000 if FUZZ else 200


def answers(names: list[str], platform: str, table: bool) -> dict[str, bool]:
    sql._QUOTED.clear()
    try:
        if table:
            return {n: sql._needs_quotes(n, platform) for n in names}
        with sql.parser_only():
            return {n: sql._needs_quotes(n, platform) for n in names}
    finally:
        sql._QUOTED.clear()


# slow: computes the table as `make sqlwords` does, asking the parser about every word
@pytest.mark.slow
def test_the_table_is_what_the_installed_sqlglot_answers() -> None:
    table = sqlwords_build.compute()
    assert table["version"] == sqlglot.__version__ == sqlwords.SQLGLOT_VERSION
    assert sqlwords_build.render(table) == sqlwords_build.OUT.read_text(encoding="utf-8")
    assert {p: frozenset(table["keywords"][p]) for p in PLATFORMS} == sqlwords.KEYWORDS
    for platform in PLATFORMS:
        assert sqlwords.KEYWORDS[platform] == sql._sqlglot_keywords(platform)
        assert sqlwords.SPECIAL[platform]  # the parser does decide some words


# slow: the parser asked about each of ~7,000 words; the fast tier keeps the random words below
@pytest.mark.slow
@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_table_answers_as_the_parser_on_every_word_sqlglot_spells(platform: str) -> None:
    words = sorted(set(sqlwords_build.vocabulary()) | set(render_vocabulary()))
    with_table = answers(words, platform, table=True)
    assert with_table == answers(words, platform, table=False)
    assert any(with_table.values()) and not all(with_table.values())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_table_answers_as_the_parser_on_random_words(platform: str) -> None:
    rng = random.Random(27)
    first = string.ascii_letters + "_"
    rest = first + string.digits
    words = {
        rng.choice(first) + "".join(rng.choices(rest, k=rng.randint(0, 14))) for _ in range(3000)
    }
    # spellings of the special words, in cases the build did not check, and with suffixes
    for w in sorted(sqlwords.SPECIAL[platform]):
        words |= {w.swapcase(), w[:-1] + w[-1].swapcase(), w + "_", w + "1", "_" + w}
    words = sorted(words)
    assert answers(words, platform, table=True) == answers(words, platform, table=False)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not FUZZ)
@given(
    st.sampled_from(PLATFORMS),
    st.one_of(
        st.text(alphabet=string.ascii_letters + string.digits + "_$", min_size=1, max_size=20),
        st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,15}\Z"),
        st.sampled_from(sorted(w for p in PLATFORMS for w in sqlwords.SPECIAL[p])).map(
            lambda w: "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(w))
        ),
    ),
)
def test_the_table_answers_as_the_parser(platform: str, name: str) -> None:
    assert answers([name], platform, table=True) == answers([name], platform, table=False)


def test_another_sqlglot_version_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlglot, "__version__", "0.0.0")
    sql._table.cache_clear()
    try:
        assert sql._words() is None
        assert sql._keywords("snowflake") == sql._sqlglot_keywords("snowflake")
        assert sql._settled("PROGRAMME_CODE", "snowflake") is None  # the parser decides
    finally:
        monkeypatch.undo()
        sql._table.cache_clear()
    assert sql._words() is sqlwords
    assert sql._settled("PROGRAMME_CODE", "snowflake") is False


@pytest.mark.parametrize("estate", ["policies", "examples/as-found"])
def test_compiled_sql_is_the_same_with_and_without_the_table(estate: str) -> None:
    def compiled(table: bool) -> dict[str, str]:
        sql._QUOTED.clear()
        sql.name_sql.cache_clear()
        sql._part_sql.cache_clear()
        project = load_project(ROOT / estate)
        if table:
            lower_all(project)
            return dict(render_files(project, "all"))
        with sql.parser_only():
            lower_all(project)
            return dict(render_files(project, "all"))

    try:
        assert compiled(True) == compiled(False)
    finally:
        sql._QUOTED.clear()
        sql.name_sql.cache_clear()
        sql._part_sql.cache_clear()
