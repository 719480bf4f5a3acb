"""Databricks Unity Catalog: SQL UDFs attached with SET ROW FILTER / SET MASK."""

from __future__ import annotations

from sqlglot import exp

from targets.base import Target
from targets.objects import (
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
)
from targets.salts import placeholder


class DatabricksTarget(Target):
    platform = "databricks"
    principal_column = "group_name"
    # Account groups; is_member() checks workspace-local groups (rule ACC102).
    member_function = "is_account_group_member"
    string_type = "STRING"

    def case(self, name: str) -> str:
        return name.lower()

    def concat(self, left: exp.Expression, right: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="CONCAT", expressions=[left, right])

    # ---- rendering ------------------------------------------------------------------------------

    def render_mapping_table(self, t: MappingTable) -> tuple[str, str]:
        name = self.q(t.name)
        key, pcol = self.q(t.key_column), self.q(t.principal_column)
        lines = [
            f"-- Grants of entitlement dimension {t.dimension!r}: one row per (value, group).",
            "-- One MERGE makes the table equal to the model: rows added and removed atomically.",
            "-- (A MERGE source alias may not carry a column list; the inline table names them.)",
            f"CREATE TABLE IF NOT EXISTS {name} (\n  {key} STRING NOT NULL,\n"
            f"  {pcol} STRING NOT NULL\n);",
        ]
        if t.rows:
            rows = ",\n    ".join("(" + ", ".join(self.lit(v) for v in row) + ")" for row in t.rows)
            lines.append(
                f"MERGE INTO {name} AS t\n"
                f"USING (\n  SELECT * FROM VALUES\n    {rows}\n    AS v({key}, {pcol})\n) AS s\n"
                f"ON t.{key} = s.{key} AND t.{pcol} = s.{pcol}\n"
                f"WHEN NOT MATCHED THEN INSERT ({key}, {pcol}) VALUES (s.{key}, s.{pcol})\n"
                "WHEN NOT MATCHED BY SOURCE THEN DELETE;"
            )
        else:
            lines.append(f"DELETE FROM {name};")
        return "010_mapping_tables.sql", "\n".join(lines)

    def render_salt_function(self, f: SaltFunction) -> tuple[str, str]:
        text = (
            f"-- Salt of mask {f.mask!r}, from {f.salt_ref}. Grant EXECUTE on this function to\n"
            "-- the owner of the mask functions only. The placeholder below is filled with the\n"
            "-- secret only when the SQL is applied (accord apply); applied as written it is a\n"
            "-- syntax error, so the function can never be created with a known salt.\n"
            f"CREATE OR REPLACE FUNCTION {self.q(f.name)}()\n"
            "  RETURNS STRING\n"
            f"  RETURN {placeholder(f.salt_ref)};"
        )
        return "020_salt_functions.sql", text

    def _function(
        self, name: str, params: str, returns: str, comment: str, body: exp.Expression
    ) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {self.q(name)}({params})\n"
            f"  RETURNS {returns}\n"
            f"  COMMENT {self.lit(comment)}\n"
            f"  RETURN\n{self.body_sql(body)};"
        )

    def render_row_filter_policy(self, p: RowFilterPolicy) -> tuple[str, str]:
        text = self._function(p.name, self.params_sql(p.params), "BOOLEAN", p.comment, p.body)
        return "030_row_filters.sql", text

    def render_mask_policy(self, p: MaskPolicy) -> tuple[str, str]:
        text = self._function(p.name, self.params_sql(p.params), p.returns, p.comment, p.body)
        return "040_masks.sql", text

    def render_row_filter_attachment(self, a: RowFilterAttachment) -> tuple[str, str]:
        cols = ", ".join(self.q(c) for c in a.columns)
        return "050_attachments.sql", (
            f"ALTER TABLE {self.q(a.table)} SET ROW FILTER {self.q(a.policy)} ON ({cols});"
        )

    def render_mask_attachment(self, a: MaskAttachment) -> tuple[str, str]:
        using = ""
        if a.using:
            using = " USING COLUMNS (" + ", ".join(self.q(c) for c in a.using) + ")"
        return "050_attachments.sql", (
            f"ALTER TABLE {self.q(a.table)} ALTER COLUMN {self.q(a.column)} "
            f"SET MASK {self.q(a.policy)}{using};"
        )
