"""SQL read back into catalog objects (``targets/read.py``): what the compiler writes, scanned
and replayed, places exactly the objects it was rendered from, in every style; later
statements replace, drop and unset earlier ones as the platform does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accord.compiler.model.salts import materialize
from accord.compiler.sqlscan import scan
from accord.targets import abac_conditions, get_target, lower_all
from accord.targets.objects import (
    AbacPolicy,
    MaskAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)
from accord.targets.read import PLACEMENT_KINDS, Placements, fold
from tests.golden_cases import abac, reference, snowflake_tag

PROJECTS = {"table": reference, "abac": abac, "tag": snowflake_tag}


def _read(platform: str, files: dict[str, str]) -> Placements:
    placed = Placements(platform)
    for name in sorted(files):
        text = materialize(files[name], platform, lambda ref: "test-salt")
        result = scan(text, f"{platform}/{name}", platform)
        assert not result.errors, result.errors
        for stmt in result.statements:
            assert placed.read(stmt) == (stmt.kind in PLACEMENT_KINDS), stmt.text
    return placed


def _condition(text: str) -> str:
    return abac_conditions.parse(text).sql("databricks")


def _abac_as_read(p: AbacPolicy) -> AbacPolicy:
    """The policy as SQL says it: without the lowering's bookkeeping, conditions as printed."""
    return replace(
        p,
        match_columns=tuple((_condition(c), a) for c, a in p.match_columns),
        when=_condition(p.when) if p.when else None,
        mask=None,
        dimension=None,
        datasets=(),
    )


@pytest.mark.parametrize("style", sorted(PROJECTS))
@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_compiled_sql_reads_back_into_the_objects_it_was_rendered_from(
    style: str, platform: str
) -> None:
    catalog = lower_all(PROJECTS[style]())[platform]
    placed = _read(platform, get_target(platform).render(catalog))
    unassigned = {"dataset": ""}
    assert set(placed.row_filters.values()) == {
        replace(o, **unassigned) for o in catalog.of(RowFilterAttachment)
    }
    assert set(placed.masks.values()) == {
        replace(o, **unassigned) for o in catalog.of(MaskAttachment)
    }
    assert set(placed.assignments.values()) == {
        replace(o, **unassigned) for o in catalog.of(TagAssignment)
    }
    assert {(t.name, t.masking_policies) for t in placed.tag_policies.values()} == {
        (t.name, t.masking_policies) for t in catalog.of(Tag) if t.masking_policies
    }
    assert set(placed.abac.values()) == {_abac_as_read(p) for p in catalog.of(AbacPolicy)}
    # every place remembers the statement that put it there
    for key in placed.row_filters:
        assert placed.sources[("filter", key)].kind in ("add_row_access", "set_row_filter")
    for key in placed.abac:
        assert placed.sources[("abac", *key)].kind == "abac_policy"
    assert placed.row_filters or placed.abac
    assert placed.masks or placed.tag_policies or placed.abac
    if style == "abac" and platform == "databricks":
        assert placed.abac and placed.assignments
    if style == "tag" and platform == "snowflake":
        assert placed.tag_policies


SQL = {
    "snowflake": (
        "ALTER TABLE db.s.t ADD ROW ACCESS POLICY gov.p.rf ON (region);\n"
        "ALTER TABLE DB.S.T DROP ROW ACCESS POLICY gov.p.rf;\n"
        "ALTER TABLE db.s.t ADD ROW ACCESS POLICY gov.p.rf2 ON (region, kind);\n"
        "ALTER TABLE db.s.t MODIFY COLUMN email SET MASKING POLICY gov.p.m USING (email, kind);\n"
        "ALTER TABLE db.s.t MODIFY COLUMN name SET MASKING POLICY gov.p.m;\n"
        "ALTER TABLE db.s.t MODIFY COLUMN NAME UNSET MASKING POLICY;\n"
        "ALTER TABLE db.s.t MODIFY COLUMN email SET TAG gov.p.pii = 'email';\n"
        "ALTER TAG gov.p.pii SET MASKING POLICY gov.p.m1, MASKING POLICY gov.p.m2;\n"
        "ALTER TAG GOV.P.PII UNSET MASKING POLICY gov.p.M1;\n"
    ),
    "databricks": (
        "ALTER TABLE c.s.t SET ROW FILTER gov.p.rf ON (region);\n"
        "ALTER TABLE c.s.t ALTER COLUMN email SET MASK gov.p.m USING COLUMNS (kind, 'x');\n"
        "ALTER TABLE c.s.t ALTER COLUMN Email SET TAGS ('PII' = 'email', 'pii' = 'other');\n"
        "ALTER TABLE c.s.t SET TAGS ('governed');\n"
        "CREATE OR REPLACE POLICY p ON SCHEMA c.s COLUMN MASK gov.p.m TO `account users`\n"
        "  EXCEPT `stewards` FOR TABLES WHEN has_tag('governed')\n"
        "  MATCH COLUMNS has_tag_value('PII', 'email') AS e ON COLUMN e;\n"
        "CREATE POLICY q ON SCHEMA c.s ROW FILTER gov.p.rf TO `account users` FOR TABLES\n"
        "  MATCH COLUMNS has_tag('region') AS r USING COLUMNS (r);\n"
        "DROP POLICY Q ON SCHEMA C.S;\n"
        "ALTER TABLE c.s.t DROP ROW FILTER;\n"
    ),
}


def test_later_statements_replace_drop_and_unset_earlier_ones() -> None:
    sf = _read("snowflake", {"a.sql": SQL["snowflake"]})
    assert sf.row_filters == {
        "DB.S.T": RowFilterAttachment("db.s.t", "gov.p.rf2", ("region", "kind"), "")
    }
    assert sf.masks == {
        ("DB.S.T", "EMAIL"): MaskAttachment("db.s.t", "email", "gov.p.m", "", ("email", "kind"))
    }
    assert sf.tags == {("DB.S.T", "EMAIL"): {"gov.p.pii": "email"}}
    assert sf.tag_policies == {"GOV.P.PII": Tag("gov.p.pii", masking_policies=("gov.p.m2",))}
    assert sf.sources[("filter", "DB.S.T")].line == 3

    dbx = _read("databricks", {"a.sql": SQL["databricks"]})
    assert dbx.row_filters == {}
    assert dbx.masks == {
        ("c.s.t", "email"): MaskAttachment("c.s.t", "email", "gov.p.m", "", ("kind", "'x'"))
    }
    # tag keys as written: two distinct tags (targets/abac_conditions.py)
    assert dbx.tags == {
        ("c.s.t", "email"): {"PII": "email", "pii": "other"},
        ("c.s.t", ""): {"governed": ""},
    }
    assert set(dbx.assignments) == {
        ("c.s.t", "email", "PII"),
        ("c.s.t", "email", "pii"),
        ("c.s.t", "", "governed"),
    }
    assert list(dbx.abac) == [("p", "c.s")]
    p = dbx.abac[("p", "c.s")]
    assert (p.kind, p.function, p.to, p.except_, p.on_column) == (
        "COLUMN MASK",
        "gov.p.m",
        ("account users",),
        ("stewards",),
        "e",
    )
    assert p.when is not None and abac_conditions.holds(
        abac_conditions.parse(p.when), {"governed": ""}
    )
    ((cond, alias),) = p.match_columns
    assert alias == "e"
    assert abac_conditions.holds(abac_conditions.parse(cond), {"PII": "email"})
    assert not abac_conditions.holds(abac_conditions.parse(cond), {"pii": "email"})
    assert dbx.sources[("abac", "p", "c.s")].line == 5
    assert fold("Ab.C", "snowflake") == "AB.C" and fold("Ab.C", "databricks") == "ab.c"
