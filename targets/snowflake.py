"""Snowflake: row access policies, masking policies, IS_ROLE_IN_SESSION, ``||``.

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
from dataclasses import replace

from sqlglot import exp

from accord.compiler.model.salts import placeholder
from accord.compiler.model.schema import ColumnSpec, Dataset, PolicyModel
from accord.targets import sql
from accord.targets.base import Target
from accord.targets.identity import Definition, Placement
from accord.targets.migration import MigrationSQL, NoStatement, split_name
from accord.targets.objects import (
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


class SnowflakeMigrationSQL(MigrationSQL):
    """Snowflake's migration statements: ``SET BODY`` in place, ``FORCE`` and one-statement
    ``DROP``/``ADD`` swaps, ``ALTER TAG`` for tag-based masking."""

    @staticmethod
    def _kind(obj: CatalogObject) -> str:
        return "ROW ACCESS POLICY" if isinstance(obj, RowFilterPolicy) else "MASKING POLICY"

    def replace(self, obj: Definition, old: Definition) -> str | None:
        if isinstance(obj, MappingTable) and isinstance(old, MappingTable):
            return self.expiry_added(obj, old)
        if isinstance(obj, RowFilterPolicy | MaskPolicy):
            # the policy stays attached and protecting; the new body applies from the next query
            head = f"ALTER {self._kind(obj)} {self.q(obj.name)}"
            lines = [f"{head} SET BODY ->\n{self.target.body_sql(obj.body)};"]
            if obj.comment != getattr(old, "comment", None):
                lines.append(f"{head} SET COMMENT = {self.lit(obj.comment)};")
            return "\n".join(lines)
        if isinstance(obj, Tag):
            return self.alter_tag(obj, old)  # type: ignore[arg-type]
        return None

    def expiry_added(self, table: MappingTable, old: MappingTable) -> str | None:
        """A mapping table that gains its expiry column: the column is added (IF NOT EXISTS:
        a rollback leaves it in place, unread), and the rows replaced as compiled unless they
        are the old rows (the planner adds the column in the prepare stage, before any policy
        reads it, and replaces the rows later; sql-reference/sql/alter-table: ADD [ COLUMN ]
        [ IF NOT EXISTS ])."""
        if table.expiry_column is None or old.expiry_column == table.expiry_column:
            return None
        add = (
            f"ALTER TABLE {self.q(table.name)} ADD COLUMN IF NOT EXISTS "
            f"{self.q(table.expiry_column)} DATE;"
        )
        if table.rows == tuple((*r, None) for r in old.rows):
            return add  # the column alone (the planner replaces the rows in a later stage)
        rendered = self.target.render_object(table)
        assert rendered is not None
        return f"{add}\n{rendered[1].strip()}"

    def alter_tag(self, tag: Tag, old: Tag) -> str:
        name = self.q(tag.name)
        lines = []
        added = [v for v in tag.allowed_values if v not in old.allowed_values]
        removed = [v for v in old.allowed_values if v not in tag.allowed_values]
        if added:
            lines.append(f"ALTER TAG {name} ADD ALLOWED_VALUES {', '.join(map(self.lit, added))};")
        new = [p for p in tag.masking_policies if p not in old.masking_policies]
        if new:
            # FORCE replaces the tag's policy for the same data type in one statement
            policies = ", ".join(f"MASKING POLICY {self.q(p)}" for p in new)
            lines.append(f"ALTER TAG {name} SET {policies} FORCE;")
        forced = {self.types.get(p.upper()) for p in new}
        for p in sorted(set(old.masking_policies) - set(tag.masking_policies)):
            if self.types.get(p.upper()) not in forced:  # not already replaced by FORCE
                lines.append(f"ALTER TAG {name} UNSET MASKING POLICY {self.q(p)};")
        if removed:
            lines.append(
                f"ALTER TAG {name} DROP ALLOWED_VALUES {', '.join(map(self.lit, removed))};"
            )
        return "\n".join(lines)

    def undo_create(self, obj: Definition) -> tuple[Definition, str] | None:
        if isinstance(obj, Tag) and obj.masking_policies:
            # undoing a new tag: "a tag cannot be dropped while a masking policy is assigned
            # to it" (user-guide/tag-based-masking-policies): unset them, then drop the bare tag
            bare = replace(obj, masking_policies=())
            return bare, f"{self.alter_tag(bare, obj)}\n{self.drop(bare)}"
        return None

    def swap(self, obj: Placement, old: Placement) -> str | None:
        if isinstance(obj, RowFilterAttachment):
            assert isinstance(old, RowFilterAttachment)
            cols = ", ".join(self.q(c) for c in obj.columns)
            # one statement: the table is never without a row access policy
            return (
                f"ALTER TABLE {self.q(obj.table)} DROP ROW ACCESS POLICY {self.q(old.policy)},\n"
                f"  ADD ROW ACCESS POLICY {self.q(obj.policy)} ON ({cols});"
            )
        if isinstance(obj, MaskAttachment):
            # FORCE replaces the column's policy in one statement (never UNSET, then SET)
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                f"SET MASKING POLICY {self.q(obj.policy)} FORCE;"
            )
        return None

    def drop(self, obj: Definition) -> str:
        if isinstance(obj, MappingTable):
            return f"DROP TABLE {self.q(obj.name)};"
        if isinstance(obj, SaltFunction):
            return f"DROP FUNCTION {self.q(obj.name)}();"
        if isinstance(obj, Tag):
            return f"DROP TAG {self.q(obj.name)};"
        return f"DROP {self._kind(obj)} {self.q(obj.name)};"

    def detach(self, obj: Placement) -> str:
        if isinstance(obj, RowFilterAttachment):
            return f"ALTER TABLE {self.q(obj.table)} DROP ROW ACCESS POLICY {self.q(obj.policy)};"
        if isinstance(obj, MaskAttachment):
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                "UNSET MASKING POLICY;"
            )
        if isinstance(obj, TagAssignment):
            where = f"ALTER TABLE {self.q(obj.table)}"
            if obj.column:
                where += f" MODIFY COLUMN {self.q(obj.column)}"
            return f"{where} UNSET TAG {self.q(obj.tag)};"
        raise NoStatement(f"Snowflake has no ABAC policies (found {obj.name})")

    # ---- stage checks: GET_DDL and INFORMATION_SCHEMA.POLICY_REFERENCES -----------------------

    def policy_check(self, name: str, salts: list[str]) -> tuple[str, str]:
        ddl = f"GET_DDL('POLICY', {self.lit(name)})"
        if not salts:
            return f"{name} exists", f"SELECT {ddl} IS NOT NULL AS ok;"
        reads = " AND ".join(f"CONTAINS({ddl}, {self.lit(s.split('.')[-1])})" for s in salts)
        return f"{name} reads {', '.join(salts)}", f"SELECT {reads} AS ok;"

    def placement_check(self, table: str, column: str | None, policy: str | None) -> str | None:
        lit = self.lit
        catalog = split_name(table)[0]
        kind = "MASKING_POLICY" if column else "ROW_ACCESS_POLICY"
        conditions = [f"POLICY_KIND = {lit(kind)}"]
        if column:
            # POLICY_REFERENCES lists tag-based masks too, with TAG_NAME set: count only the
            # mask attached to the column itself (user-guide/tag-based-masking-policies)
            conditions += [f"REF_COLUMN_NAME = {lit(column)}", "TAG_NAME IS NULL"]
        if policy is not None:
            conditions.append(
                f"POLICY_DB || '.' || POLICY_SCHEMA || '.' || POLICY_NAME = {lit(policy)}"
            )
        return (
            f"SELECT COUNT(*) = {1 if policy is not None else 0} AS ok\n"
            f"FROM TABLE({self.q(catalog)}.INFORMATION_SCHEMA.POLICY_REFERENCES(\n"
            f"  REF_ENTITY_NAME => {lit(table)}, REF_ENTITY_DOMAIN => 'table'))\n"
            f"WHERE {' AND '.join(conditions)};"
        )

    def tag_check(self, obj: TagAssignment, now: TagAssignment | None) -> tuple[str, str] | None:
        """The tag-based masking policy is active on the column: ``POLICY_REFERENCES`` lists it
        with ``TAG_NAME`` set and ``POLICY_STATUS = 'ACTIVE'``
        (user-guide/tag-based-masking-policies)."""
        lit = self.lit
        catalog = split_name(obj.table)[0]
        column = obj.column or ""
        where = f"{obj.table}.{column}"
        tag = now or obj
        conditions = [
            "POLICY_KIND = 'MASKING_POLICY'",
            f"REF_COLUMN_NAME = {lit(column)}",
            f"TAG_DATABASE || '.' || TAG_SCHEMA || '.' || TAG_NAME = {lit(tag.tag)}",
        ]
        if now is not None:
            conditions.append("POLICY_STATUS = 'ACTIVE'")
        what = (
            f"the masking policy of tag {obj.tag} is active on {where}"
            if now
            else f"no masking policy of tag {obj.tag} on {where}"
        )
        return what, (
            f"SELECT COUNT(*) {'>= 1' if now else '= 0'} AS ok\n"
            f"FROM TABLE({self.q(catalog)}.INFORMATION_SCHEMA.POLICY_REFERENCES(\n"
            f"  REF_ENTITY_NAME => {lit(obj.table)}, REF_ENTITY_DOMAIN => 'table'))\n"
            f"WHERE {' AND '.join(conditions)};"
        )
