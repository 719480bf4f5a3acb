"""Snowflake tag-based masking (``platforms.snowflake.style: tag``)."""

from __future__ import annotations

from pathlib import Path

from sqlglot import exp
from sqlglot.tokens import TokenType

from accord.compiler.model.validate import Project, load_project
from accord.targets import lower_all
from accord.targets.objects import MaskAttachment, MaskPolicy, Tag, TagAssignment
from accord.targets.render import render_files
from tests.estates import teams, write_estate
from tests.golden_cases import reference, snowflake_tag
from tests.sql_statements import Statement, function_body, split


def _snowflake(project: Project) -> dict[str, list[Statement]]:
    return {
        name.split("/", 1)[1]: split(text, "snowflake")
        for name, text in render_files(project, "snowflake").items()
    }


def _names(stmt: Statement, start: int) -> str:
    """The dotted name that starts at token ``start``."""
    parts, i = [], start
    while True:
        parts.append(stmt.tokens[i].text)
        if i + 1 < len(stmt.tokens) and stmt.tokens[i + 1].token_type == TokenType.DOT:
            i += 2
            continue
        return ".".join(parts)


def _tag_statements(sql: dict[str, list[Statement]]) -> tuple[dict, dict]:
    """tag -> allowed values (CREATE TAG), tag -> masking policies (ALTER TAG ... FORCE)."""
    allowed, policies = {}, {}
    for stmt in sql["045_tags.sql"]:
        words = [t.text.upper() for t in stmt.tokens]
        if stmt.starts("CREATE", "TAG", "IF", "NOT", "EXISTS"):
            name = _names(stmt, 5)
            at = words.index("ALLOWED_VALUES")
            values = []
            for tok in stmt.tokens[at + 1 :]:
                if tok.token_type == TokenType.STRING:
                    values.append(tok.text)
                elif tok.token_type != TokenType.COMMA:
                    break
            allowed[name] = values
        else:
            assert stmt.starts("ALTER", "TAG") and words[-1] == "FORCE", stmt.text
            name = _names(stmt, 2)
            policies[name] = [
                _names(stmt, i + 2)
                for i, w in enumerate(words)
                if w == "MASKING" and words[i + 1] == "POLICY"
            ]
    return allowed, policies


def _column_tags(sql: dict[str, list[Statement]]) -> dict[tuple[str, str], tuple[str, str]]:
    out = {}
    for stmt in sql["050_attachments.sql"]:
        words = [t.text.upper() for t in stmt.tokens]
        if "SET" in words and words[words.index("SET") + 1] == "TAG":
            assert "MASKING" not in words  # masks arrive through the tag only
            modify = words.index("MODIFY")
            table = _names(stmt, 2)
            column = stmt.tokens[modify + 2].text
            tag = _names(stmt, words.index("TAG") + 1)
            value = stmt.tokens[-1]
            assert value.token_type == TokenType.STRING
            out[(table, column)] = (tag, value.text)
    return out


def test_each_masked_column_is_tagged_with_its_masks_tag() -> None:
    project = snowflake_tag()
    sql = _snowflake(project)
    allowed, policies = _tag_statements(sql)
    expected = {
        (ds.table, col): (f"GOVERNANCE.POLICIES.ACCORD_MASK_{spec.mask.upper()}", spec.mask)
        for ds in project.model.datasets.values()
        if ds.platform == "snowflake"
        for col, spec in ds.columns.items()
        if spec.mask
    }
    assert _column_tags(sql) == expected
    for tag, value in expected.values():
        assert allowed[tag] == [value]
    created = {_names(s, 5) for s in sql["040_masking_policies.sql"]}
    assert policies == {
        "GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT": ["GOVERNANCE.POLICIES.FREE_TEXT_MASK"],
        "GOVERNANCE.POLICIES.ACCORD_MASK_SUBJECT_PSEUDONYM": [
            "GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK"
        ],
    }
    assert {p for ps in policies.values() for p in ps} <= created


def test_policy_bodies_parse_back() -> None:
    sql = _snowflake(snowflake_tag())
    statements = sql["030_row_access_policies.sql"] + sql["040_masking_policies.sql"]
    assert len(statements) == 3
    for stmt in statements:
        assert isinstance(function_body(stmt, "snowflake"), exp.Expression)


def test_row_access_policies_are_attached_as_in_column_style() -> None:
    tagged = [s.text for s in _snowflake(snowflake_tag())["050_attachments.sql"]]
    column = [s.text for s in _snowflake(reference())["050_attachments.sql"]]
    assert [t for t in tagged if "ROW ACCESS POLICY" in t] == [
        c for c in column if "ROW ACCESS POLICY" in c
    ]


def test_one_tag_per_mask_holds_one_policy_per_data_type(tmp_path: Path) -> None:
    project = load_project(
        write_estate(
            tmp_path,
            {
                "version": 1,
                "platforms": {"snowflake": {"governance_schema": "GOV.POL", "style": "tag"}},
                "principals": teams(1),
                "masks": {"gone": {"strategy": "nullify", "unmasked_for": ["team_01"]}},
                "datasets": {
                    "p": {
                        "platform": "snowflake",
                        "table": "DB.S.P",
                        "columns": {
                            "NAME": {"type": "VARCHAR(20)", "mask": "gone"},
                            "AGE": {"type": "NUMBER(3,0)", "mask": "gone"},
                        },
                    }
                },
            },
            name="policy.yaml",
        )
    )
    catalog = lower_all(project)["snowflake"]
    (tag,) = catalog.of(Tag)
    assert tag.name == "GOV.POL.ACCORD_MASK_GONE"
    assert tag.masking_policies == ("GOV.POL.GONE_MASK_DECIMAL_3_0", "GOV.POL.GONE_MASK")
    types = sorted(p.returns for p in catalog.of(MaskPolicy) if p.name in tag.masking_policies)
    assert types == ["DECIMAL(3, 0)", "VARCHAR"]  # distinct: one policy per data type
    assert {(a.column, a.value) for a in catalog.of(TagAssignment)} == {
        ("NAME", "gone"),
        ("AGE", "gone"),
    }
    (_, policies) = _tag_statements(_snowflake(project))
    assert policies == {"GOV.POL.ACCORD_MASK_GONE": list(tag.masking_policies)}


def test_default_style_stays_column() -> None:
    catalog = lower_all(reference())["snowflake"]
    assert catalog.style == "column"
    assert catalog.of(Tag) == [] and catalog.of(TagAssignment) == []
    assert len(catalog.of(MaskAttachment)) == 2
    assert "snowflake/045_tags.sql" not in render_files(reference(), "snowflake")
