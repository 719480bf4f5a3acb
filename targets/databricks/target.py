"""Databricks Unity Catalog: SQL UDFs attached with SET ROW FILTER / SET MASK (``style:
table``), or through governed column tags and CREATE POLICY (``style: abac``, lowered in
``targets/abac.py``).

:class:`DatabricksMigrationSQL` spells what only a migration needs (``DROP ROW FILTER``,
``DROP MASK``, ``UNSET TAGS``, ``DROP POLICY``, governed tags from a live base) and the stage
checks' query on ``information_schema.routines``.
"""

from __future__ import annotations

from typing import Literal

from sqlglot import exp

from accord.compiler.core.platforms import DATABRICKS
from accord.compiler.model.salts import placeholder
from accord.compiler.model.schema import ColumnSpec, Dataset, PolicyModel
from accord.targets import abac, sql
from accord.targets.base import Target
from accord.targets.databricks.migration import DatabricksMigrationSQL
from accord.targets.migration import MigrationSQL
from accord.targets.objects import (
    AbacPolicy,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

ABAC_ROW_FILTER_NOTE = (
    "ABAC evaluates this function as the session user; who sees every row is named in the\n"
    "policy's EXCEPT, not here. The grants themselves live in the mapping table, so the lookup\n"
    "must still ask which of a value's granted groups the caller belongs to:\n"
    "is_account_group_member(g.group_name) inside the EXISTS, once per grant row of the value.\n"
    "The ABAC guidance advises against per-row membership checks in policy functions; this one\n"
    "is the price of keeping grants as data (one table generated from the YAML) instead of one\n"
    "policy per value, whose TO lists would soon pass the quota of 20 principals per policy."
)
ABAC_MASK_NOTE = (
    "Transforms the value only: who sees the clear value is named in the ABAC policy's EXCEPT\n"
    "(050_policies.sql), as the ABAC guidance asks."
)


class DatabricksTarget(Target):
    # Account groups (is_account_group_member, the member function of DATABRICKS' facts);
    # is_member() checks workspace-local groups (rule ACC102).
    facts = DATABRICKS

    def concat(self, left: exp.Expression, right: exp.Expression) -> exp.Expression:
        return exp.Anonymous(this="CONCAT", expressions=[left, right])

    # ---- style: abac ------------------------------------------------------------------------------

    def identity_in_body(self, model: PolicyModel) -> bool:
        return self.style(model) != "abac"

    def policy_note(self, model: PolicyModel, kind: Literal["row_filter", "mask"]) -> str:
        if self.style(model) != "abac":
            return ""
        return ABAC_ROW_FILTER_NOTE if kind == "row_filter" else ABAC_MASK_NOTE

    def row_policy_name(self, model: PolicyModel, dataset: str, ds: Dataset) -> str:
        # under ABAC the function no longer depends on unfiltered_for: one per dimension
        rf = ds.row_filter
        if self.style(model) == "abac" and rf is not None and rf.entitlement is not None:
            return self.qualified(model, f"{rf.entitlement}_row_filter")
        if self.style(model) == "abac" and rf is not None and rf.dimensions is not None:
            dims = "__".join(d.entitlement for d in rf.dimensions)
            return self.qualified(model, f"{dims}_row_filter")
        return super().row_policy_name(model, dataset, ds)

    def lower_tags(self, model: PolicyModel) -> list[Tag]:
        return abac.governed_tags(self, model) if self.style(model) == "abac" else []

    def lower_attachments(self, model: PolicyModel) -> list[CatalogObject]:
        out = super().lower_attachments(model)
        return out + abac.policies(self, model) if self.style(model) == "abac" else out

    def attach_row_filter(self, model: PolicyModel, dname: str, ds: Dataset) -> list[CatalogObject]:
        if self.style(model) == "abac":
            return list(abac.row_filter_tags(dname, ds))
        return super().attach_row_filter(model, dname, ds)

    def attach_mask(
        self, model: PolicyModel, dname: str, ds: Dataset, column: str, spec: ColumnSpec
    ) -> list[CatalogObject]:
        if self.style(model) == "abac":
            return [abac.mask_tag(self, dname, ds, column, spec)]
        return super().attach_mask(model, dname, ds, column, spec)

    # ---- rendering ------------------------------------------------------------------------------

    def expected_statements(self, obj: CatalogObject) -> int:
        if isinstance(obj, MappingTable):  # CREATE TABLE, then one MERGE (or DELETE)
            return 2
        if isinstance(obj, Tag):  # a governed tag: a comment only (an account-level object)
            return 0
        return 1

    def render_mapping_table(self, t: MappingTable) -> tuple[str, str]:
        name = self.q(t.name)
        key, pcol = self.q(t.key_column), self.q(t.principal_column)
        lines = [
            f"-- Grants of entitlement dimension {t.dimension!r}: one row per (value, group).",
            "-- One MERGE makes the table equal to the model: rows added and removed atomically.",
            "-- (A MERGE source alias may not carry a column list; the inline table names them.)",
        ]
        if t.expiry_column:
            lines.append(
                f"-- {t.expiry_column}: the last day a grant holds (NULL: standing); the filters "
                "admit a row\n-- only while current_date() is on or before it."
            )
            lines.append(self.mapping_table_ddl(t))
            lines.append(self._expiring_merge(t))
            return "010_mapping_tables.sql", "\n".join(lines)
        lines.append(self.mapping_table_ddl(t))
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

    def _expiring_merge(self, t: MappingTable) -> str:
        """The MERGE of a mapping table with an expiry column (sql-ref delta-merge-into: WHEN
        MATCHED [AND cond] THEN UPDATE SET; sql-ref functions/lteqgtsign: ``<=>``): a row whose (value, group) is
        kept but whose expiry changed is updated in the same statement. ``<=>`` is equality
        that holds between two NULLs (a standing grant stays standing)."""
        name = self.q(t.name)
        key, pcol = self.q(t.key_column), self.q(t.principal_column)
        assert t.expiry_column is not None
        until = self.q(t.expiry_column)
        if not t.rows:
            return f"DELETE FROM {name};"
        rows = ",\n    ".join(
            "(" + ", ".join(sql.render(v, self.platform) for v in row) + ")"
            for row in self.row_values(t)
        )
        return (
            f"MERGE INTO {name} AS t\n"
            f"USING (\n  SELECT * FROM VALUES\n    {rows}\n    AS v({key}, {pcol}, {until})\n) AS s\n"
            f"ON t.{key} = s.{key} AND t.{pcol} = s.{pcol}\n"
            f"WHEN MATCHED AND NOT (t.{until} <=> s.{until}) THEN UPDATE SET {until} = s.{until}\n"
            f"WHEN NOT MATCHED THEN INSERT ({key}, {pcol}, {until}) VALUES (s.{key}, s.{pcol}, s.{until})\n"
            "WHEN NOT MATCHED BY SOURCE THEN DELETE;"
        )

    def render_salt_function(self, f: SaltFunction) -> tuple[str, str]:
        text = (
            f"-- Salt of mask {f.mask!r}, from {sql.comment_text(f.salt_ref)}. Anyone with EXECUTE on this function\n"
            "-- can call it and read the salt: grant EXECUTE to the owner of the mask functions\n"
            "-- only. The placeholder below is filled with the secret only when accord applies the\n"
            "-- SQL (accord migrate apply); as written it is a syntax error, so the function can\n"
            "-- never be created with a known salt.\n"
            f"CREATE OR REPLACE FUNCTION {self.q(f.name)}()\n"
            "  RETURNS STRING\n"
            f"  RETURN {placeholder(f.salt_ref)};"
        )
        return "020_salt_functions.sql", text

    def _function(
        self, name: str, params: str, returns: str, comment: str, body: exp.Expression, note: str
    ) -> str:
        return (
            self.note_sql(note) + f"CREATE OR REPLACE FUNCTION {self.q(name)}({params})\n"
            f"  RETURNS {returns}\n"
            f"  COMMENT {self.lit(comment)}\n"
            f"  RETURN\n{self.body_sql(body)};"
        )

    def render_row_filter_policy(self, p: RowFilterPolicy) -> tuple[str, str]:
        text = self._function(
            p.name, self.params_sql(p.params), "BOOLEAN", p.comment, p.body, p.note
        )
        return "030_row_filters.sql", text

    def render_mask_policy(self, p: MaskPolicy) -> tuple[str, str]:
        text = self._function(
            p.name, self.params_sql(p.params), p.returns, p.comment, p.body, p.note
        )
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

    def render_tag(self, t: Tag) -> tuple[str, str]:
        values = ", ".join(self.lit(v) for v in t.allowed_values)
        # a governed tag is account-level. From Databricks Runtime 18.1, CREATE GOVERNED TAG
        # creates one, but it has no IF NOT EXISTS (ALREADY_EXISTS when present), so compiled
        # SQL names the statement for the account admin instead of failing a re-run
        create = f"CREATE GOVERNED TAG {self.q(t.name)} VALUES ({values});"
        return "045_tags.sql", (
            f"-- Governed tag {t.name!r}, allowed values {values}.\n"
            + self.note_sql(abac.TAG_NOTE)
            + f"-- Runtime 18.1+: {create}\n"
        ).rstrip()

    def render_tag_assignment(self, a: TagAssignment) -> tuple[str, str]:
        target = f"ALTER TABLE {self.q(a.table)}"
        if a.column is not None:
            target += f" ALTER COLUMN {self.q(a.column)}"
        return "045_tags.sql", f"{target} SET TAGS ({self.lit(a.tag)} = {self.lit(a.value)});"

    def render_abac_policy(self, p: AbacPolicy) -> tuple[str, str]:
        def principals(names: tuple[str, ...]) -> str:
            return ", ".join(
                sql.render(exp.to_identifier(n, quoted=True), self.platform) for n in names
            )

        # a metastore-level policy (Beta) read live: ``ON METASTORE`` names no metastore, "the
        # policy targets the metastore you are operating on" (data-governance/unity-catalog/
        # abac/metastore-policies); accord compiles none
        where = "" if p.securable_type == "METASTORE" else f" {self.q(p.securable)}"
        lines = [
            f"CREATE OR REPLACE POLICY {self.q(p.name)}",
            f"ON {p.securable_type}{where}",
            f"COMMENT {self.lit(p.comment)}",
            f"{p.kind} {self.q(p.function)}",
            f"TO {principals(p.to)}",
        ]
        if p.except_:
            lines.append(f"EXCEPT {principals(p.except_)}")
        lines.append("FOR TABLES")
        if p.when:
            lines.append(f"WHEN {p.when}")
        if p.match_columns:
            matches = ", ".join(f"{cond} AS {self.q(alias)}" for cond, alias in p.match_columns)
            lines.append(f"MATCH COLUMNS {matches}")
        if p.on_column is not None:
            lines.append(f"ON COLUMN {self.q(p.on_column)}")
        if p.using:
            lines.append("USING COLUMNS (" + ", ".join(self.q(u) for u in p.using) + ")")
        return "050_policies.sql", "\n".join(lines) + ";"

    def migrations(self, types: dict[str, str] | None = None, live: bool = False) -> MigrationSQL:
        return DatabricksMigrationSQL(self, types, live)
