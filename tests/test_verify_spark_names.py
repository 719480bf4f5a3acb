"""The Spark engine's pieces that need no Spark: the ``catalog.schema`` -> database rewrite
(it changes those names and nothing else), the context bindings, the harness's own ABAC
matcher, and ``--engine spark`` without the extra (exit 2, naming the install line)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from accord.compiler.model.validate import load_project
from accord.compiler.sqlscan import scan
from accord.compiler.verify.sources import render_sql
from accord.compiler.verify.spark import matcher
from accord.compiler.verify.spark.names import HARNESS, Names, databases
from accord.targets import abac_conditions
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import write_estate
from tests.spark_defects import ESTATE

NAMES = Names(
    databases([("governance", "policies"), ("gov", "pol"), ("cat", "s"), ("omics", "variants")])
)


def _statements(directory: str) -> list[tuple[str, str]]:
    """(path, statement text) of every Databricks statement compiled from ``directory``."""
    out = []
    for path, text in sorted(render_sql(load_project(directory)).items()):
        if path.startswith("databricks/"):
            out += [(path, s.text) for s in scan(text, path, "databricks").statements]
    return out


def _tokens_and_gaps(text: str) -> list[tuple[str, str, str]]:
    """(token type, token text, the source text before it: space and comments) per token."""
    out = []
    at = 0
    for t in Dialect.get_or_raise("databricks").tokenize(text):
        out.append((t.token_type.name, t.text, text[at : t.start]))
        at = t.end + 1
    return [*out, ("END", "", text[at:])]


def _collapsed(text: str) -> list[tuple[str, str, str]]:
    """What the tokens of the rewritten text must be: each mapped ``catalog . schema`` (not
    after a dot) one name, its database, with the space before it; everything else as is."""
    tokens = _tokens_and_gaps(text)
    out = []
    i = 0
    while i < len(tokens):
        kind, word, gap = tokens[i]
        if (
            i + 3 < len(tokens)
            and tokens[i + 1][0] == "DOT"
            and tokens[i + 3][0] == "DOT"
            and (i == 0 or tokens[i - 1][0] != "DOT")
            and (word.lower(), tokens[i + 2][1].lower()) in NAMES.mapping
        ):
            out.append(("VAR", NAMES.mapping[(word.lower(), tokens[i + 2][1].lower())], gap))
            i += 3
            continue
        out.append((kind, word, gap))
        i += 1
    return out


@pytest.mark.parametrize("estate", ["policies", "examples/as-found", "defects"])
def test_the_rewrite_changes_catalog_schema_and_nothing_else(estate: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    directory = str(ROOT / estate)
    if estate == "defects":
        directory = str(write_estate(tmp_path / "p", ESTATE))
    statements = _statements(directory)
    assert statements
    rewritten = 0
    for path, text in statements:
        new = NAMES.rewrite(text)
        # token for token and space for space the same, but each `catalog.schema` one name
        assert _tokens_and_gaps(new) == _collapsed(text), path
        rewritten += new != text
        # and Spark reads two-part names where Unity Catalog read three
        assert not any(f"{c}.{s}." in new.lower() for c, s in NAMES.mapping), (path, new)
    assert rewritten > 0


def test_the_rewritten_body_parses_to_the_original_with_names_mapped() -> None:
    for path, text in _statements(str(ROOT / "policies")):
        stmt = scan(text, path, "databricks").statements[0]
        if stmt.kind != "function" or stmt.body is None:
            continue
        again = scan(NAMES.rewrite(text), path, "databricks").statements[0]
        assert again.body is not None
        expected = stmt.body.sql("databricks")
        for (catalog, schema), db in NAMES.mapping.items():
            expected = expected.replace(f"{catalog}.{schema}.", f"{db}.")
        assert again.body.sql("databricks") == expected, path
        # the rewrite is undone by mapping each database back: the text is the original
        back = NAMES.rewrite(text)
        for (catalog, schema), db in NAMES.mapping.items():
            back = back.replace(f"{db}.", f"{catalog}.{schema}.")
        assert back == text


def test_comments_strings_columns_and_other_names_are_untouched() -> None:
    text = (
        "-- reads gov.pol.grants\n"
        "CREATE FUNCTION `gov`.pol.f(v STRING) RETURNS BOOLEAN RETURN\n"
        "  EXISTS (SELECT 1 FROM gov.pol.grants AS g WHERE g.code = v /* gov.pol.x */\n"
        "          AND g.note <> 'gov.pol.grants' AND other.pol.t.c = 1\n"
        "          AND gov.pol.grants.code = v AND x.gov.pol.y = 1)"
    )
    new = NAMES.rewrite(text)
    assert new == (
        "-- reads gov.pol.grants\n"
        "CREATE FUNCTION gov__pol.f(v STRING) RETURNS BOOLEAN RETURN\n"
        "  EXISTS (SELECT 1 FROM gov__pol.grants AS g WHERE g.code = v /* gov.pol.x */\n"
        "          AND g.note <> 'gov.pol.grants' AND other.pol.t.c = 1\n"
        "          AND gov__pol.grants.code = v AND x.gov.pol.y = 1)"
    )


def test_each_catalog_schema_is_one_database_never_the_harness_one() -> None:
    found = databases([("a__b", "c"), ("a", "b__c"), ("accord", "x"), ("A", "B")])
    assert found[("a__b", "c")] != found[("a", "b__c")]
    assert HARNESS not in found.values()
    assert len(set(found.values())) == len(found)
    # the same input, the same names
    assert found == databases([("A", "B"), ("accord", "x"), ("a", "b__c"), ("a__b", "c")])


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("current_user() = 'a'", "accord.accord_user() = 'a'"),
        ("SESSION_USER() = 'a'", "accord.accord_user() = 'a'"),
        ("g.until >= current_date()", "g.until >= accord.accord_today()"),
        ("g.until >= current_date", "g.until >= accord.accord_today()"),
        ("'current_user()' = x", "'current_user()' = x"),
        ("t.current_user = x", "t.current_user = x"),
    ],
)
def test_context_calls_are_bound_to_the_harness_stand_ins(text: str, bound: str) -> None:
    assert Names.bind_context(text) == bound


# ---- the harness's ABAC matcher ------------------------------------------------------------

TAGS = {"pii": "", "class": "restricted", "Team": "omics"}


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("has_tag('pii')", True),
        ("has_tag('PII')", False),  # tag keys compare exactly
        ("has_tag_value('class', 'restricted')", True),
        ("has_tag_value('class', 'Restricted')", False),
        ("has_tag_value('team', 'omics')", False),
        ("NOT has_tag('pii')", False),
        ("has_tag('x') OR has_tag_value('Team', 'omics')", True),
        ("has_tag('pii') AND (has_tag('x') OR NOT has_tag('y'))", True),
        ("(has_tag('pii') AND has_tag('x')) OR FALSE", False),
        ("TRUE", True),
    ],
)
def test_the_matcher_reads_tag_conditions(condition: str, holds: bool) -> None:
    assert matcher.holds(matcher.parse(condition), TAGS) is holds
    # it is not accord's evaluator, but reads the reference alike
    assert abac_conditions.holds(abac_conditions.parse(condition), TAGS) is holds


@pytest.mark.parametrize(
    "condition",
    ["current_user() = 'x'", "has_tag(k)", "has_tag('a', 'b')", "has_tag('a') AND", "1 = 1"],
)
def test_the_matcher_refuses_what_is_not_a_tag_condition(condition: str) -> None:
    with pytest.raises(matcher.MatchError):
        matcher.parse(condition)


def test_scope_principals_and_match_columns() -> None:
    assert matcher.covers("SCHEMA", "Cat.S", "cat.s.results")
    assert not matcher.covers("SCHEMA", "cat.s", "cat.sx.results")
    assert matcher.covers("CATALOG", "cat", "cat.s.results")
    assert matcher.covers("TABLE", "cat.s.results", "CAT.S.RESULTS")
    assert not matcher.covers("TABLE", "cat.s.results", "cat.s.results2")
    assert matcher.applies_to(("account users",), ("clinicians",), {"chemists"}, "u@x")
    assert not matcher.applies_to(("account users",), ("clinicians",), {"clinicians"}, "u@x")
    assert not matcher.applies_to(("chemists",), (), {"Chemists"}, "u@x")
    assert matcher.applies_to(("u@x",), (), set(), "u@x")
    columns = {"a": {"accord_mask": "m"}, "b": {}, "c": {"accord_mask": "m"}}
    assert matcher.match_columns((("has_tag_value('accord_mask', 'm')", "c"),), columns) == {
        "c": ["a", "c"]
    }
    assert matcher.match_columns((("has_tag('other')", "k"),), columns) is None


# ---- the command line ----------------------------------------------------------------------


def test_engine_spark_without_the_extra_exits_2_naming_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from accord.compiler.verify.spark import session

    monkeypatch.setattr(session, "available", lambda: False)
    code, out, err = run_cli(["verify", str(ROOT / "policies"), "--engine", "spark"])
    assert code == 2
    assert "pip install 'accord[spark]'" in err
    assert "Traceback" not in err
    assert out == ""


def test_an_unknown_engine_is_bad_usage() -> None:
    code, _, err = run_cli(["verify", str(ROOT / "policies"), "--engine", "sqlite"])
    assert code == 2
    assert "duckdb" in err and "spark" in err


def test_sqlglot_reads_the_rewritten_header_as_spark_does() -> None:
    # the rewritten names are plain two-part names for Spark's parser too
    tree = sqlglot.parse_one("SELECT gov__pol.f(x) FROM gov__pol.grants", read="spark")
    assert {t.db for t in tree.find_all(exp.Table)} == {"gov__pol"}


# ---- DuckDB's translation, where Spark showed it wrong ---------------------------------------


def _duck(body: str, platform: str = "databricks") -> object:
    """What DuckDB's engine answers for ``body`` (a function of ``val``) on 'Spark SQL'."""
    import duckdb

    from accord.compiler.verify.bind import Binder
    from accord.compiler.verify.sources import load_sql

    if platform == "databricks":
        text = f"CREATE FUNCTION gov.pol.f(val STRING) RETURNS STRING RETURN {body};"
    else:
        text = f"CREATE MASKING POLICY GOV.POL.F AS (val VARCHAR) RETURNS VARCHAR -> {body};"
    sql = load_sql({f"{platform}/f.sql": text}, lambda ref: "salt", "test").platforms[platform]
    routine = next(iter(sql.routines.values()))
    bound = Binder(sql, {}).call_sql(routine, [exp.Literal.string("Spark SQL")])
    return duckdb.connect().execute(f"SELECT {bound}").fetchone()[0]  # type: ignore[index]


@pytest.mark.parametrize(
    ("body", "answer"),
    [
        # Databricks' own examples (sql-ref functions/substr), and what Spark answers at 0
        ("substr(val, 5)", "k SQL"),
        ("substr(val, -3)", "SQL"),
        ("substr(val, 5, 1)", "k"),
        ("substr(val, -10, 5)", "Spar"),
        ("substr(val, 0, 4)", "Spar"),
        ("substr(val, length(val) - 9, 4)", "Spar"),
        ("substr(val, 2, -1)", ""),
        ("substr(val, 2, length(val) - 20)", ""),
    ],
)
def test_duckdb_answers_substr_as_databricks_does(body: str, answer: str) -> None:
    assert _duck(body) == answer


def test_duckdb_keeps_snowflake_position_zero_and_empties_a_negative_length() -> None:
    # Snowflake: "If the length is a negative number, the function returns an empty string"
    assert _duck("SUBSTR(val, 2, -1)", "snowflake") == ""
    assert _duck("SUBSTR(val, 1, 4)", "snowflake") == "Spar"


def test_duckdb_refuses_a_hash_that_is_not_the_platforms() -> None:
    from accord.compiler.verify.bind import BindError

    with pytest.raises(BindError, match=r"hash\(\) is the platform's own hash"):
        _duck("cast(hash(val) AS STRING)")
