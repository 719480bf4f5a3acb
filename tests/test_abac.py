"""Unity Catalog ABAC output (``platforms.databricks.style: abac``) and rule ACC504."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot import exp
from sqlglot.tokens import TokenType

from accord.compiler.lint.engine import lint_project
from accord.compiler.model.salts import materialize
from accord.compiler.model.validate import Project, load_project
from accord.targets.render import render_files
from tests.estates import databricks_estate, teams, write_estate
from tests.golden_cases import CASES, abac, render_case
from tests.sql_statements import Statement, function_body, parse_policy, split

#: identity checks that have no place in an ABAC mask function (TO / EXCEPT decide)
IDENTITY_FUNCTIONS = {"is_account_group_member", "is_member", "current_user", "session_user"}


def _databricks(project: Project) -> dict[str, list[Statement]]:
    files = render_files(project, "databricks")
    return {
        name.split("/", 1)[1]: split(text, "databricks")
        for name, text in files.items()
        if name.startswith("databricks/")
    }


def _tags(sql: dict[str, list[Statement]]) -> dict[tuple[str, str], tuple[str, str]]:
    """(table, column) -> (tag, value) from the ``ALTER TABLE ... ALTER COLUMN ... SET TAGS``
    statements."""
    out = {}
    for stmt in sql.get("045_tags.sql", []):
        words = [t.text.upper() for t in stmt.tokens]
        assert words[:2] == ["ALTER", "TABLE"]
        alter_column = words.index("ALTER", 1)
        assert words[alter_column + 1] == "COLUMN"
        assert words[alter_column + 3 : alter_column + 5] == ["SET", "TAGS"]
        table = "".join(t.text for t in stmt.tokens[2:alter_column])
        key, value = (t.text for t in stmt.tokens if t.token_type == TokenType.STRING)
        out[(table, stmt.tokens[alter_column + 2].text)] = (key, value)
    return out


def _matches(policy, table: str, tag: tuple[str, str]) -> bool:
    """Whether Unity Catalog would apply ``policy`` to a column of ``table`` tagged ``tag``."""
    in_scope = {
        "CATALOG": table.split(".")[0] == policy.securable,
        "SCHEMA": table.rsplit(".", 1)[0] == policy.securable,
        "TABLE": table == policy.securable,
    }[policy.securable_type]
    conditions = [
        (cond.name.lower(), [a.this for a in cond.expressions]) for cond, _ in policy.match
    ]
    assert all(name == "has_tag_value" for name, _ in conditions)
    return in_scope and any(args == list(tag) for _, args in conditions)


def assert_one_policy_per_column(project: Project) -> None:
    """Every tagged column is matched by exactly one policy of its kind, so no table gets two
    row filters or a column two masks for any user."""
    sql = _databricks(project)
    tags = _tags(sql)
    policies = [parse_policy(s) for s in sql["050_policies.sql"]]
    for (table, column), tag in tags.items():
        kind = "COLUMN MASK" if tag[0] == "accord_mask" else "ROW FILTER"
        matched = [p.name for p in policies if p.kind == kind and _matches(p, table, tag)]
        assert len(matched) == 1, f"{table}.{column} {tag}: {matched}"
    for dname, ds in project.model.datasets.items():
        if ds.platform != "databricks":
            continue
        row_filters = {
            (p.securable_type, p.securable, p.name)
            for p in policies
            for (table, _), tag in tags.items()
            if table == ds.table and p.kind == "ROW FILTER" and _matches(p, table, tag)
        }
        assert len(row_filters) == (1 if ds.row_filter else 0), (dname, row_filters)


# --------------------------------------------------------------------------------------------
# the reference estate under ABAC (golden case "abac")


def test_function_bodies_parse_back() -> None:
    sql = _databricks(abac())
    functions = sql["030_row_filters.sql"] + sql["040_masks.sql"]
    assert len(functions) == 3
    for stmt in functions:
        assert stmt.starts("CREATE", "OR", "REPLACE", "FUNCTION")
        function_body(stmt, "databricks")
    salted = materialize(
        render_files(abac(), "databricks")["databricks/020_salt_functions.sql"],
        "databricks",
        resolver=lambda ref: "it's a salt",
    )
    for stmt in split(salted, "databricks"):
        assert function_body(stmt, "databricks") == exp.Literal.string("it's a salt")


def test_mask_functions_only_transform_the_value() -> None:
    for stmt in _databricks(abac())["040_masks.sql"]:
        called = {f.name.lower() for f in function_body(stmt, "databricks").find_all(exp.Anonymous)}
        assert not called & IDENTITY_FUNCTIONS, stmt.text


def test_row_filter_looks_up_the_mapping_table_as_the_session_user() -> None:
    (stmt,) = _databricks(abac())["030_row_filters.sql"]
    body = function_body(stmt, "databricks")
    assert isinstance(body, exp.Exists)  # no OR for unfiltered_for: that is the EXCEPT
    (member,) = [f for f in body.find_all(exp.Anonymous) if f.name == "is_account_group_member"]
    assert member.expressions[0].sql() == "g.group_name"


def test_create_policy_statements_take_apart_as_documented() -> None:
    project = abac()
    model = project.model
    sql = _databricks(project)
    functions = {
        ".".join(t.text for t in s.tokens[4:9] if t.text != ".")
        for s in sql["030_row_filters.sql"] + sql["040_masks.sql"]
    }
    policies = [parse_policy(s) for s in sql["050_policies.sql"]]
    assert {(p.securable, p.name) for p in policies} == {
        ("discovery_lake.assays", "accord_programme_row_filter"),
        ("discovery_lake.assays", "accord_free_text_mask"),
        ("discovery_lake.assays", "accord_subject_pseudonym_mask"),
        ("omics.variants", "accord_programme_row_filter"),
        ("omics.variants", "accord_subject_pseudonym_mask"),
    }
    for p in policies:
        assert p.securable_type == "SCHEMA"
        assert p.to == ["account users"]
        assert p.function in functions
        ((cond, alias),) = p.match
        assert isinstance(cond, exp.Anonymous) and cond.name == "has_tag_value"
        key, value = (a.this for a in cond.expressions)
        if p.kind == "COLUMN MASK":
            mask = model.masks[value]
            assert key == "accord_mask"
            assert p.except_ == sorted(model.principals[x].databricks for x in mask.unmasked_for)
            assert p.on_column == alias and p.using == []
        else:
            assert (key, value) == ("accord_row_key", "programme")
            assert p.except_ == ["data-stewards"]
            assert p.on_column is None and p.using == [alias]


def test_every_tagged_column_is_matched_by_one_policy() -> None:
    assert_one_policy_per_column(abac())


def test_governed_tags_are_documented_as_account_level() -> None:
    text = render_files(abac(), "databricks")["databricks/045_tags.sql"]
    assert "account-level" in text and "do not inherit from the table" in text
    assert "databricks_tag_policy" in text


# --------------------------------------------------------------------------------------------
# estates of other shapes


def test_different_unfiltered_sets_in_one_schema_attach_on_table(tmp_path: Path) -> None:
    def ds(table: str, unfiltered: list[str]) -> dict:
        rf = {"entitlement": "programme", "column": "code", "unfiltered_for": unfiltered}
        return {"platform": "databricks", "table": table, "row_filter": rf}

    project = load_project(
        write_estate(
            tmp_path,
            databricks_estate(
                datasets={
                    "a": ds("cat.s.a", ["team_03"]),
                    "b": ds("cat.s.b", []),
                    "c": ds("cat.t.c", ["team_03"]),
                }
            ),
            name="policy.yaml",
        )
    )
    policies = [parse_policy(s) for s in _databricks(project)["050_policies.sql"]]
    assert sorted((p.securable_type, p.securable, p.except_) for p in policies) == [
        ("SCHEMA", "cat.t", ["team-03"]),
        ("TABLE", "cat.s.a", ["team-03"]),
        ("TABLE", "cat.s.b", []),
    ]
    assert_one_policy_per_column(project)


def test_a_mask_on_two_types_gets_one_policy_per_type(tmp_path: Path) -> None:
    columns = {
        "name": {"type": "STRING", "mask": "gone"},
        "age": {"type": "INT", "mask": "gone"},
    }
    project = load_project(
        write_estate(
            tmp_path,
            databricks_estate(
                masks={"gone": {"strategy": "nullify", "unmasked_for": ["team_01"]}},
                datasets={"p": {"platform": "databricks", "table": "cat.s.p", "columns": columns}},
            ),
            name="policy.yaml",
        )
    )
    sql = _databricks(project)
    assert set(_tags(sql).values()) == {("accord_mask", "gone"), ("accord_mask", "gone_int")}
    policies = {p.name: p for p in (parse_policy(s) for s in sql["050_policies.sql"])}
    assert set(policies) == {"accord_gone_mask", "accord_gone_mask_int"}
    assert policies["accord_gone_mask_int"].function == "gov.policies.gone_mask_int"
    assert_one_policy_per_column(project)


def test_a_hand_written_filter_matches_its_argument_columns(tmp_path: Path) -> None:
    rf = {
        "expression": {"databricks": "region = 'EU' AND site <> 'X'"},
        "arguments": {"region": "STRING", "site": "STRING"},
    }
    project = load_project(
        write_estate(
            tmp_path,
            databricks_estate(
                datasets={"v": {"platform": "databricks", "table": "cat.s.v", "row_filter": rf}}
            ),
            name="policy.yaml",
        )
    )
    sql = _databricks(project)
    assert _tags(sql) == {
        ("cat.s.v", "region"): ("accord_row_key", "v__region"),
        ("cat.s.v", "site"): ("accord_row_key", "v__site"),
    }
    (p,) = [parse_policy(s) for s in sql["050_policies.sql"]]
    assert (p.securable_type, p.securable, p.function) == (
        "TABLE",
        "cat.s.v",
        "gov.policies.v_row_filter",
    )
    assert [alias for _, alias in p.match] == p.using == ["a1", "a2"]


# --------------------------------------------------------------------------------------------
# ACC504 abac-quota


def _masked(n_clear: int, style: str = "abac") -> dict:
    return databricks_estate(
        style,
        principals=teams(max(n_clear, 3)),
        masks={
            "m": {
                "strategy": "redact",
                "unmasked_for": [f"team_{i:02d}" for i in range(1, n_clear + 1)],
            }
        },
        datasets={
            "d": {
                "platform": "databricks",
                "table": "cat.s.d",
                "columns": {"x": {"type": "STRING", "mask": "m"}},
            }
        },
    )


def _filtered(n_unfiltered: int) -> dict:
    rf = {
        "entitlement": "programme",
        "column": "code",
        "unfiltered_for": [f"team_{i:02d}" for i in range(1, n_unfiltered + 1)],
    }
    return databricks_estate(
        principals=teams(n_unfiltered),
        datasets={"d": {"platform": "databricks", "table": "cat.s.d", "row_filter": rf}},
    )


def _many_masks(n: int) -> dict:
    return databricks_estate(
        masks={f"m{i:02d}": {"strategy": "redact"} for i in range(n)},
        datasets={
            "d": {
                "platform": "databricks",
                "table": "cat.s.d",
                "columns": {f"c{i:02d}": {"type": "STRING", "mask": f"m{i:02d}"} for i in range(n)},
            }
        },
    )


def _wide_expression(n_args: int) -> dict:
    args = {f"c{i}": "STRING" for i in range(n_args)}
    rf = {"expression": {"databricks": " AND ".join(f"{a} = 'x'" for a in args)}, "arguments": args}
    return databricks_estate(
        datasets={"d": {"platform": "databricks", "table": "cat.s.d", "row_filter": rf}}
    )


ACC504_CASES = [
    # (case, estate, where the finding is: YAML path, or None when it must not fire)
    ("21 principals in unmasked_for", _masked(21), ("masks", "m", "unmasked_for")),
    ("20 principals in unmasked_for", _masked(20), None),
    ("21 in unmasked_for on table style", _masked(21, "table"), None),
    ("21 principals in unfiltered_for", _filtered(21), ("datasets", "d", "row_filter")),
    ("20 principals in unfiltered_for", _filtered(20), None),
    ("51 policies on one table", _many_masks(51), ("datasets", "d")),
    ("50 policies on one table", _many_masks(50), None),
    (
        "4 columns in a hand-written filter",
        _wide_expression(4),
        ("datasets", "d", "row_filter", "arguments"),
    ),
    ("3 columns in a hand-written filter", _wide_expression(3), None),
]


@pytest.mark.parametrize(
    ("case", "estate", "where"), ACC504_CASES, ids=[c[0] for c in ACC504_CASES]
)
def test_acc504(tmp_path: Path, case: str, estate: dict, where: tuple | None) -> None:
    project = load_project(write_estate(tmp_path, estate, name="policy.yaml"))
    found = [f for f in lint_project(project) if f.rule == "ACC504"]
    if where is None:
        assert found == [], case
        return
    assert [f.location for f in found] == [project.loc(*where)], case
    (finding,) = found
    assert finding.object == f"{where[0]}.{where[1]}"
    assert finding.severity == "error" and finding.name == "abac-quota"
    assert finding.fix


def test_acc504_can_be_suppressed_with_a_reason(tmp_path: Path) -> None:
    estate = _masked(21)
    estate["masks"]["m"]["ignore"] = {"ACC504": "policy split by hand; reviewed"}
    (finding,) = [
        f
        for f in lint_project(load_project(write_estate(tmp_path, estate, name="policy.yaml")))
        if f.rule == "ACC504"
    ]
    assert finding.suppressed


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_function_and_policy_body_parses_in_its_dialect(case: str) -> None:
    """Across every golden case: each CREATE FUNCTION (Databricks) and each Snowflake policy
    body parses with sqlglot; salt placeholders are filled first, as apply would."""
    bodies = 0
    for name, text in render_case(case).items():
        dialect = name.split("/", 1)[0]
        if not name.endswith(".sql"):
            continue
        for stmt in split(materialize(text, dialect, resolver=lambda ref: "salt"), dialect):
            words = [t.text.upper() for t in stmt.tokens[:6]]
            databricks_function = dialect == "databricks" and "FUNCTION" in words
            snowflake_policy = "POLICY" in words and ("ACCESS" in words or "MASKING" in words)
            if databricks_function or snowflake_policy:
                function_body(stmt, dialect)
                bodies += 1
    assert bodies >= 3  # a style case keeps one platform: at least a filter and two masks
