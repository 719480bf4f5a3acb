"""Snowflake: row access policies, masking policies, IS_ROLE_IN_SESSION, ``||``."""

from __future__ import annotations

from sqlglot import exp

from targets import sql
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


class SnowflakeTarget(Target):
    platform = "snowflake"
    principal_column = "role_name"
    # IS_ROLE_IN_SESSION sees the primary role, every active secondary role, and the roles they
    # inherit; CURRENT_ROLE() sees the primary role only (rule ACC101).
    member_function = "IS_ROLE_IN_SESSION"
    string_type = "VARCHAR"

    def case(self, name: str) -> str:
        return name.upper()

    def concat(self, left: exp.Expression, right: exp.Expression) -> exp.Expression:
        return exp.DPipe(this=left, expression=right)

    # ---- rendering ------------------------------------------------------------------------------

    def render_mapping_table(self, t: MappingTable) -> tuple[str, str]:
        name = self.q(t.name)
        key, pcol = self.q(t.key_column), self.q(t.principal_column)
        lines = [
            f"-- Grants of entitlement dimension {t.dimension!r}: one row per (value, role).",
            "-- Replaced as a whole inside one transaction, so a policy never reads half a table.",
            f"CREATE TABLE IF NOT EXISTS {name} (\n  {key} VARCHAR NOT NULL,\n"
            f"  {pcol} VARCHAR NOT NULL\n);",
            "BEGIN TRANSACTION;",
            f"DELETE FROM {name};",
        ]
        if t.rows:
            values = exp.values([tuple(r) for r in t.rows])
            insert = exp.insert(
                values,
                sql.table(t.name, self.platform),
                columns=[
                    sql.ident(t.key_column, self.platform),
                    sql.ident(t.principal_column, self.platform),
                ],
            )
            lines.append(sql.render(insert, self.platform, pretty=True) + ";")
        lines.append("COMMIT;")
        return "010_mapping_tables.sql", "\n".join(lines)

    def render_salt_function(self, f: SaltFunction) -> tuple[str, str]:
        text = (
            f"-- Salt of mask {f.mask!r}, from {f.salt_ref}. A secure function hides its body\n"
            "-- from every role but its owner. The placeholder below is filled with the secret\n"
            "-- only when the SQL is applied (accord apply); applied as written it is a syntax\n"
            "-- error, so the function can never be created with a known salt.\n"
            f"CREATE OR REPLACE SECURE FUNCTION {self.q(f.name)}()\n"
            "  RETURNS VARCHAR\n"
            f"  AS $$ {placeholder(f.salt_ref)} $$;"
        )
        return "020_salt_functions.sql", text

    def render_row_filter_policy(self, p: RowFilterPolicy) -> tuple[str, str]:
        text = (
            f"CREATE OR REPLACE ROW ACCESS POLICY {self.q(p.name)}\n"
            f"  AS ({self.params_sql(p.params)}) RETURNS BOOLEAN ->\n"
            f"{self.body_sql(p.body)}\n"
            f"  COMMENT = {self.lit(p.comment)};"
        )
        return "030_row_access_policies.sql", text

    def render_mask_policy(self, p: MaskPolicy) -> tuple[str, str]:
        text = (
            f"CREATE OR REPLACE MASKING POLICY {self.q(p.name)}\n"
            f"  AS ({self.params_sql(p.params)}) RETURNS {p.returns} ->\n"
            f"{self.body_sql(p.body)}\n"
            f"  COMMENT = {self.lit(p.comment)};"
        )
        return "040_masking_policies.sql", text

    def render_row_filter_attachment(self, a: RowFilterAttachment) -> tuple[str, str]:
        cols = ", ".join(self.q(c) for c in a.columns)
        text = (
            f"ALTER TABLE {self.q(a.table)} ADD ROW ACCESS POLICY {self.q(a.policy)} ON ({cols});"
        )
        return "050_attachments.sql", text

    def render_mask_attachment(self, a: MaskAttachment) -> tuple[str, str]:
        text = (
            f"ALTER TABLE {self.q(a.table)} MODIFY COLUMN {self.q(a.column)} "
            f"SET MASKING POLICY {self.q(a.policy)};"
        )
        return "050_attachments.sql", text
