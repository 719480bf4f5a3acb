"""One ABAC evaluator: the planner's simulator and ``accord verify`` agree on which tables and
columns an ABAC policy governs, and both follow the platform's documented case rule.

Databricks documents governed tag keys and values as case-sensitive ("Department and
department are two distinct tags":
https://docs.databricks.com/gcp/en/sql/language-manual/sql-ref-syntax-ddl-create-governed-tag),
so ``has_tag_value('accord_mask', ...)`` does not match a column tagged ``Accord_Mask``, and
``has_tag_value('Accord_Mask', ...)`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from sqlglot import exp

from accord.compiler.plan.state import PlanError, State, condition_holds
from accord.compiler.sqlscan import scan
from accord.compiler.verify.bind import BindError
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.sources import load_sql
from accord.targets import abac_conditions, get_target
from accord.targets.objects import AbacPolicy, Catalog, TagAssignment
from tests.golden_cases import abac

TABLE = "omics.variants.calls"
DATASET = "variant_calls"

#: (what, tagged column, generated tag key, the value it carries)
PLACES = {
    "mask": ("subject_id", "accord_mask", "subject_pseudonym"),
    "row filter": ("programme_code", "accord_row_key", "programme"),
}

#: (case, how the tag key is written on the column, how it is written in the policy's
#: condition, whether the policy applies by the documented rule); None: as generated
CASES = [
    ("as generated", None, None, True),
    ("tag key mixed case", str.title, None, False),
    ("condition key mixed case", None, str.title, False),
    ("condition key upper case", None, str.upper, False),
    ("both mixed case, equal", str.title, str.title, True),
    ("both mixed case, differing", str.title, str.upper, False),
]

Spelling = Callable[[str], str] | None


def _edited(catalog: Catalog, what: str, tag_key: Spelling, cond_key: Spelling) -> Catalog:
    """``catalog`` with the tag key of the governed column, and the key the policies'
    conditions name, spelled in another case."""
    column, key, value = PLACES[what]
    objects = []
    for obj in catalog.objects:
        if (
            tag_key is not None
            and isinstance(obj, TagAssignment)
            and (obj.table, obj.column, obj.tag) == (TABLE, column, key)
        ):
            obj = replace(obj, tag=tag_key(key))
        elif cond_key is not None and isinstance(obj, AbacPolicy):
            old = f"has_tag_value('{key}', '{value}')"
            new = f"has_tag_value('{cond_key(key)}', '{value}')"
            obj = replace(
                obj,
                match_columns=tuple((c.replace(old, new), a) for c, a in obj.match_columns),
                when=obj.when.replace(old, new) if obj.when else obj.when,
            )
        objects.append(obj)
    return replace(catalog, objects=tuple(objects))


def _planner_applies(catalog: Catalog, what: str) -> bool:
    state = State.of(catalog, "databricks")
    column = PLACES[what][0]
    if what == "mask":
        return bool(state.masks_on(TABLE.upper(), column.upper()))
    return any(f.startswith("ABAC policy") for f in state.filters_on(TABLE.upper()))


def _verify_applies(catalog: Catalog, what: str) -> tuple[bool, int]:
    """Whether verify's part for the column (the rows) holds an ABAC policy, and how many
    mismatches verify reports on the dataset."""
    project = abac()
    catalogs = {
        "snowflake": get_target("snowflake").lower(project.model),
        "databricks": catalog,
    }
    files = {
        f"{platform}/{name}": text
        for platform, c in catalogs.items()
        for name, text in get_target(platform).render(c).items()
    }
    salts = TestSalts()
    verifier = Verifier(project, load_sql(files, salts, "test"), salts)
    report = verifier.run()
    row, columns = verifier.parts_of[DATASET]
    part = columns[PLACES[what][0]] if what == "mask" else row
    mismatches = sum(1 for m in report.mismatches if m.dataset == DATASET)
    return any(o.kind == "ABAC policy" for o in part.objects), mismatches


@pytest.mark.parametrize("what", sorted(PLACES))
@pytest.mark.parametrize(
    ("case", "tag_key", "cond_key", "applies"), CASES, ids=[c[0] for c in CASES]
)
def test_planner_and_verify_agree_on_tag_key_case(
    what: str, case: str, tag_key: Spelling, cond_key: Spelling, applies: bool
) -> None:
    base = get_target("databricks").lower(abac().model)
    catalog = _edited(base, what, tag_key, cond_key)
    assert catalog != base or (tag_key, cond_key) == (None, None)
    planner = _planner_applies(catalog, what)
    verified, mismatches = _verify_applies(catalog, what)
    assert planner == verified == applies
    # a policy that no longer applies leaves the dataset unprotected, which verify reports
    assert (mismatches == 0) == applies


def test_the_evaluator_compares_tag_keys_and_values_as_written() -> None:
    tags = {"PII": "Email"}
    for text, want in [
        ("has_tag('PII')", True),
        ("has_tag('pii')", False),
        ("has_tag_value('PII', 'Email')", True),
        ("has_tag_value('PII', 'email')", False),
        ("has_tag_value('pii', 'Email')", False),
        ("HAS_TAG('PII') AND NOT has_tag('other')", True),
        ("(has_tag('x') OR has_tag_value('PII', 'Email')) AND TRUE", True),
    ]:
        assert abac_conditions.holds(abac_conditions.parse(text), tags) is want, text
        assert condition_holds(text, tags) is want, text
    assert abac_conditions.holds(None, {}) is True


def test_both_callers_refuse_a_condition_outside_the_tag_functions() -> None:
    text = "has_tag('a') AND current_user() = 'x'"
    with pytest.raises(abac_conditions.ConditionError) as err:
        abac_conditions.holds(abac_conditions.parse(text), {"a": ""})
    assert err.value.node.sql("databricks") == "CURRENT_USER() = 'x'"
    with pytest.raises(PlanError, match="cannot evaluate ABAC condition"):
        condition_holds(text, {"a": ""})
    from accord.compiler.verify.parts import _tag_value

    stmt = scan("SELECT 1;", "f.sql", "databricks").statements[0]
    with pytest.raises(BindError, match=r"cannot evaluate the tag condition CURRENT_USER\(\)"):
        _tag_value(text, stmt, {"a": ""})


def test_coverage_folds_securable_names_as_the_caller_does() -> None:
    policy = AbacPolicy(
        "p",
        "SCHEMA",
        "Omics.Variants",
        "COLUMN MASK",
        "f",
        ("account users",),
        (),
        (),
        None,
        (),
        "",
    )
    assert abac_conditions.covers(policy, "OMICS.VARIANTS.CALLS")
    assert not abac_conditions.covers(policy, "OMICS.VARIANTSX.CALLS")
    assert abac_conditions.covers(policy, "omics.variants.calls", str.lower)
    table = replace(policy, securable_type="TABLE", securable="omics.variants.calls")
    assert abac_conditions.covers(table, "OMICS.VARIANTS.CALLS")
    assert not abac_conditions.covers(table, "OMICS.VARIANTS.CALLS2")
    assert isinstance(abac_conditions.parse("has_tag('a')"), exp.Anonymous)
