"""Snowflake: row access, masking, projection, aggregation and join policies,
IS_ROLE_IN_SESSION, ``||``.

``style: column`` attaches each masking policy column by column. ``style: tag`` attaches masks
through tags (tag-based masking): a tag holds at most one masking policy per data type, so each
mask gets its own tag, ``<governance schema>.ACCORD_MASK_<MASK>``, carrying the mask's policy for
every data type it is used with, and each masked column is tagged with it (value: the mask's
name). Row access policies are attached to tables the same way in both styles.

:class:`SnowflakeMigrationSQL` spells what only a migration needs (``SET BODY``, ``FORCE``
swaps, ``DROP``, ``UNSET``, ``ALTER TAG``) and the stage checks' queries (``GET_DDL``,
``POLICY_REFERENCES``).
"""

from __future__ import annotations

from collections import defaultdict

from sqlglot import exp

from accord.compiler.core.platforms import SNOWFLAKE
from accord.compiler.model.salts import placeholder
from accord.compiler.model.schema import ColumnSpec, Dataset, PolicyModel
from accord.targets import sql
from accord.targets.base import Target
from accord.targets.migration import MigrationSQL
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.snowflake.migration import SnowflakeMigrationSQL


class SnowflakeTarget(Target):
    # IS_ROLE_IN_SESSION (the member function of SNOWFLAKE's facts) sees the primary role,
    # every active secondary role, and the roles they inherit; CURRENT_ROLE() sees the primary
    # role only (rule ACC101).
    facts = SNOWFLAKE

    def concat(self, left: exp.Expression, right: exp.Expression) -> exp.Expression:
        return exp.DPipe(this=left, expression=right)

    # ---- style: tag -------------------------------------------------------------------------------

    def mask_tag_name(self, model: PolicyModel, mask: str) -> str:
        return self.qualified(model, f"accord_mask_{mask}")

    def lower_tags(self, model: PolicyModel) -> list[Tag]:
        if self.style(model) != "tag":
            return []
        policies: dict[str, list[str]] = defaultdict(list)
        for mask, ptype in self.mask_types(model):
            policies[mask].append(self.mask_policy_name(model, mask, ptype))
        return [
            Tag(
                name=self.mask_tag_name(model, mask),
                allowed_values=(mask,),
                masking_policies=tuple(names),
                comment=f"accord: columns tagged with it are masked by mask {mask}",
            )
            for mask, names in sorted(policies.items())
        ]

    def attach_mask(
        self, model: PolicyModel, dname: str, ds: Dataset, column: str, spec: ColumnSpec
    ) -> list[CatalogObject]:
        if self.style(model) != "tag":
            return super().attach_mask(model, dname, ds, column, spec)
        assert spec.mask is not None
        return [
            TagAssignment(ds.table, column, self.mask_tag_name(model, spec.mask), spec.mask, dname)
        ]

    # ---- rendering ------------------------------------------------------------------------------

    def expected_statements(self, obj: CatalogObject) -> int:
        if isinstance(obj, MappingTable):  # CREATE, BEGIN, DELETE, [INSERT,] COMMIT
            return 5 if obj.rows else 4
        if isinstance(obj, Tag):  # CREATE TAG[, ALTER TAG ... SET MASKING POLICY]
            return 2 if obj.masking_policies else 1
        return 1

    def render_mapping_table(self, t: MappingTable) -> tuple[str, str]:
        name = self.q(t.name)
        lines = [
            f"-- Grants of entitlement dimension {t.dimension!r}: one row per (value, role).",
            "-- Replaced as a whole inside one transaction, so a policy never reads half a table.",
        ]
        if t.expiry_column:
            lines.append(
                f"-- {t.expiry_column}: the last day a grant holds (NULL: standing); the policies "
                "admit a row\n-- only while CURRENT_DATE() (the session's time zone) is on or before it."
            )
        lines += [self.mapping_table_ddl(t), "BEGIN TRANSACTION;", f"DELETE FROM {name};"]
        if t.rows:
            columns = [
                sql.ident(t.key_column, self.platform),
                sql.ident(t.principal_column, self.platform),
            ]
            if t.expiry_column:
                values = exp.values(self.row_values(t))
                columns.append(sql.ident(t.expiry_column, self.platform))
            else:
                values = exp.values([tuple(r) for r in t.rows])
            insert = exp.insert(values, sql.table(t.name, self.platform), columns=columns)
            lines.append(sql.render(insert, self.platform, pretty=True) + ";")
        lines.append("COMMIT;")
        return "010_mapping_tables.sql", "\n".join(lines)

    def render_salt_function(self, f: SaltFunction) -> tuple[str, str]:
        text = (
            f"-- Salt of mask {f.mask!r}, from {sql.comment_text(f.salt_ref)}. A secure function hides its body\n"
            "-- from every role but its owner, but any role with USAGE on it can call it and read\n"
            "-- the salt: grant USAGE to the owner of the masking policies only (the querying\n"
            "-- roles need none). The placeholder below is filled with the secret\n"
            "-- only when accord applies the SQL (accord migrate apply); as written it is a syntax\n"
            "-- error, so the function can never be created with a known salt.\n"
            f"CREATE OR REPLACE SECURE FUNCTION {self.q(f.name)}()\n"
            # without COPY GRANTS a replacement drops the function's grants, among them the
            # USAGE the policy owner needs (sql-reference/sql/create-function: [ COPY GRANTS ]
            # between the argument list and RETURNS)
            "  COPY GRANTS\n"
            "  RETURNS VARCHAR\n"
            f"  AS $$ {placeholder(f.salt_ref)} $$;"
        )
        return "020_salt_functions.sql", text

    # Policies are written CREATE OR ALTER (sql-reference/sql/create-masking-policy,
    # create-row-access-policy): it changes body and comment in place, where CREATE OR REPLACE
    # is refused while the policy is attached (sql-reference/sql/alter-row-access-policy).
    # Compiled SQL is still a first deployment: ADD ROW ACCESS POLICY and SET MASKING POLICY
    # fail where one is already attached; an existing estate changes through `accord plan`.

    def render_row_filter_policy(self, p: RowFilterPolicy) -> tuple[str, str]:
        text = self.note_sql(p.note) + (
            f"CREATE OR ALTER ROW ACCESS POLICY {self.q(p.name)}\n"
            f"  AS ({self.params_sql(p.params)}) RETURNS BOOLEAN ->\n"
            f"{self.body_sql(p.body)}\n"
            f"  COMMENT = {self.lit(p.comment)};"
        )
        return "030_row_access_policies.sql", text

    def render_mask_policy(self, p: MaskPolicy) -> tuple[str, str]:
        text = self.note_sql(p.note) + (
            f"CREATE OR ALTER MASKING POLICY {self.q(p.name)}\n"
            f"  AS ({self.params_sql(p.params)}) RETURNS {p.returns} ->\n"
            f"{self.body_sql(p.body)}\n"
            f"  COMMENT = {self.lit(p.comment)};"
        )
        return "040_masking_policies.sql", text

    # Projection, aggregation and join policies document CREATE [OR REPLACE] only, not OR ALTER
    # (sql-reference/sql/create-projection-policy, create-aggregation-policy, create-join-policy):
    # compiled SQL is a first deployment, and a plan changes an existing one in place with
    # ALTER <kind> POLICY ... SET BODY (alter-projection-policy, alter-aggregation-policy,
    # alter-join-policy), never by replacing it while it is attached.

    def _constraint_sql(
        self, kind: str, returns: str, p: ProjectionPolicy | AggregationPolicy | JoinPolicy
    ) -> str:
        return (
            f"CREATE OR REPLACE {kind} POLICY {self.q(p.name)}\n"
            f"  AS () RETURNS {returns} ->\n"
            f"{self.body_sql(p.body)}\n"
            f"  COMMENT = {self.lit(p.comment)};"
        )

    def render_projection_policy(self, p: ProjectionPolicy) -> tuple[str, str]:
        text = self._constraint_sql("PROJECTION", "PROJECTION_CONSTRAINT", p)
        return "041_projection_policies.sql", text

    def render_aggregation_policy(self, p: AggregationPolicy) -> tuple[str, str]:
        text = self._constraint_sql("AGGREGATION", "AGGREGATION_CONSTRAINT", p)
        return "042_aggregation_policies.sql", text

    def render_join_policy(self, p: JoinPolicy) -> tuple[str, str]:
        return "043_join_policies.sql", self._constraint_sql("JOIN", "JOIN_CONSTRAINT", p)

    # attachments (sql-reference/sql/alter-table: ``{ALTER | MODIFY} [COLUMN] c SET PROJECTION
    # POLICY p [FORCE]``, ``SET AGGREGATION POLICY p [ENTITY KEY (...)] [FORCE]``, ``SET JOIN
    # POLICY p [FORCE]``; the allowed join keys as user-guide/join-policies writes them:
    # ``SET JOIN POLICY p ALLOWED JOIN KEYS (c, ...)``)

    def render_projection_attachment(self, a: ProjectionAttachment) -> tuple[str, str]:
        text = (
            f"ALTER TABLE {self.q(a.table)} MODIFY COLUMN {self.q(a.column)} "
            f"SET PROJECTION POLICY {self.q(a.policy)};"
        )
        return "050_attachments.sql", text

    def render_aggregation_attachment(self, a: AggregationAttachment) -> tuple[str, str]:
        return "050_attachments.sql", self.aggregation_attachment_sql(a) + ";"

    def aggregation_attachment_sql(self, a: AggregationAttachment, force: bool = False) -> str:
        text = f"ALTER TABLE {self.q(a.table)} SET AGGREGATION POLICY {self.q(a.policy)}"
        if a.entity_key:
            text += f" ENTITY KEY ({', '.join(self.q(c) for c in a.entity_key)})"
        return text + (" FORCE" if force else "")

    def render_join_attachment(self, a: JoinAttachment) -> tuple[str, str]:
        return "050_attachments.sql", self.join_attachment_sql(a) + ";"

    def join_attachment_sql(self, a: JoinAttachment, force: bool = False) -> str:
        keys = ", ".join(self.q(c) for c in a.allowed_join_keys)
        text = f"ALTER TABLE {self.q(a.table)} SET JOIN POLICY {self.q(a.policy)}"
        if keys:
            text += f" ALLOWED JOIN KEYS ({keys})"
        return text + (" FORCE" if force else "")

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

    def render_tag(self, t: Tag) -> tuple[str, str]:
        values = ", ".join(self.lit(v) for v in t.allowed_values)
        policies = ", ".join(f"MASKING POLICY {self.q(p)}" for p in t.masking_policies)
        text = (
            f"-- A column tagged {t.name.rsplit('.', 1)[-1]} is masked by the policy below for\n"
            "-- its data type (a tag holds one masking policy per data type; a column of a type\n"
            "-- with no policy here would stay in the clear, so accord sets one for every type\n"
            "-- the mask is used with). FORCE replaces a policy already set for that type in\n"
            "-- the same statement, never leaving a gap.\n"
            f"CREATE TAG IF NOT EXISTS {self.q(t.name)}\n"
            f"  ALLOWED_VALUES {values}\n"
            f"  COMMENT = {self.lit(t.comment)};"
        )
        if t.masking_policies:
            text += f"\nALTER TAG {self.q(t.name)} SET {policies} FORCE;"
        return "045_tags.sql", text

    def render_tag_assignment(self, a: TagAssignment) -> tuple[str, str]:
        target = f"ALTER TABLE {self.q(a.table)}"
        if a.column is not None:
            target += f" MODIFY COLUMN {self.q(a.column)}"
        return "050_attachments.sql", f"{target} SET TAG {self.q(a.tag)} = {self.lit(a.value)};"

    def migrations(self, types: dict[str, str] | None = None, live: bool = False) -> MigrationSQL:
        return SnowflakeMigrationSQL(self, types, live)
