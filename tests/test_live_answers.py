"""Live answers about objects that were not asked about are ignored, never planned against
(issue 22: a SHOW answer naming another schema's policy would be retired as unmanaged; a
tables.get answer about another table would be taken for the asked one, reported protected).

The readers are driven with answers a hostile or confused platform could give, through small
fakes of the clients' answer shapes (a list of rows per statement; the SDK's dataclasses)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from accord.compiler.live.drift import unmanaged
from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.inspect import introspect
from accord.targets.objects import MaskAttachment, RowFilterAttachment, RowFilterPolicy
from tests.conftest import ROOT

BODY = "EXISTS (SELECT 1 FROM PROD.CRITICAL.GRANTS g WHERE IS_ROLE_IN_SESSION(g.ROLE_NAME))"


class SnowflakeAnswers:
    """Answers every statement with no rows, but SHOW ROW ACCESS POLICIES (a policy of another
    schema, whether asked for the governance schema or the account) and POLICY_REFERENCES of a
    policy (a row naming another policy)."""

    def __init__(self, gov: str) -> None:
        self.gov = gov

    def query(self, sql: str) -> list[dict[str, Any]]:
        if sql.startswith("SHOW ROW ACCESS POLICIES"):
            return [{"name": "KEEP_ME", "database_name": "PROD", "schema_name": "CRITICAL"}]
        if sql.startswith("DESCRIBE ROW ACCESS POLICY"):
            return [{"body": BODY, "signature": "(V VARCHAR)", "return_type": "BOOLEAN"}]
        if "POLICY_REFERENCES(POLICY_NAME" in sql:
            return [
                {
                    "policy_db": "PROD",
                    "policy_schema": "CRITICAL",
                    "policy_name": "OTHER_POLICY",
                    "policy_kind": "ROW_ACCESS_POLICY",
                    "ref_database_name": "PROD",
                    "ref_schema_name": "CRITICAL",
                    "ref_entity_name": "OTHER_TABLE",
                    "ref_arg_column_names": '["V"]',
                }
            ]
        return []


def test_a_show_answer_about_another_schema_is_ignored_and_not_retired() -> None:
    expected = lower_all(load_project(ROOT / "policies"))["snowflake"]
    live = introspect("snowflake", SnowflakeAnswers(expected.governance_schema), expected, print)
    names = {getattr(o, "name", "") for o in live.catalog}
    assert "PROD.CRITICAL.KEEP_ME" not in names
    assert not live.catalog.of(RowFilterAttachment)
    assert any("PROD.CRITICAL" in w and "ignored" in w for w in live.ignored)
    assert any("OTHER_POLICY" in w for w in live.ignored)
    # nothing for plan --base live to retire: the foreign policy was never taken for ours
    assert not [o for o in unmanaged(expected, live) if isinstance(o, RowFilterPolicy)]
    assert "ignored" in live.to_json()


class DatabricksAnswers:
    """information_schema answers rows about one other table whatever catalog is asked (the
    documented columns), the reader is a metastore admin, the rest is empty."""

    def __init__(self) -> None:
        empty = SimpleNamespace(list=lambda *a, **k: [])
        me = SimpleNamespace(user_name="admin@example.com")
        self.client = SimpleNamespace(
            current_user=SimpleNamespace(me=lambda: me),
            metastores=SimpleNamespace(
                summary=lambda: SimpleNamespace(owner="admin@example.com", name="m")
            ),
            functions=empty,
            policies=SimpleNamespace(list_policies=lambda *a, **k: []),
            grants=SimpleNamespace(get_effective=lambda *a, **k: None),
            tag_policies=SimpleNamespace(get_tag_policy=lambda *a, **k: None),
            entity_tag_assignments=empty,
        )

    def query(self, sql: str) -> list[dict[str, Any]]:
        where = {"catalog_name": "other_catalog", "schema_name": "other_schema"}
        where["table_name"] = "protected_table"
        if "information_schema.row_filters" in sql:
            return [{**where, "filter_catalog": "gov", "filter_schema": "pol",
                     "filter_name": "filter", "filter_col_usage": "programme"}]  # fmt: skip
        if "information_schema.column_masks" in sql:
            return [{**where, "column_name": "subject_id", "mask_catalog": "gov",
                     "mask_schema": "pol", "mask_name": "mask", "mask_col_usage": None}]  # fmt: skip
        return []


def test_an_information_schema_row_about_another_table_is_not_taken_for_the_asked_one() -> None:
    """Filters and masks are read per catalog (information_schema.row_filters/column_masks):
    a row about a table accord does not govern is never taken for a governed one, whose
    protection is then missing (ACC701), never reported clean."""
    expected = lower_all(load_project(ROOT / "policies"))["databricks"]
    live = introspect("databricks", DatabricksAnswers(), expected, lambda _: None)
    assert not live.catalog.of(RowFilterAttachment) and not live.catalog.of(MaskAttachment)
    assert live.coverage is not None and live.coverage.reader == "admin@example.com"
