"""Snowflake's migration statements: ``SET BODY`` in place, ``FORCE`` and one-statement
``DROP``/``ADD`` swaps, ``ALTER TAG`` for tag-based masking, ``REVOKE`` of a grant on a salt
function, and the stage checks' queries (``GET_DDL``, ``POLICY_REFERENCES``).
"""

from __future__ import annotations

from dataclasses import replace

from accord.targets import sql
from accord.targets.identity import ConstraintPolicy, Definition, Placement
from accord.targets.migration import MigrationSQL, NoStatement, split_name
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

#: a grantee kind of SHOW GRANTS (``granted_to``) -> how GRANT and REVOKE spell it
#: (sql-reference/sql/revoke-privilege, revoke-database-role, revoke-privilege-share)
GRANTEE_KINDS = {
    "ROLE": "ROLE",
    "DATABASE_ROLE": "DATABASE ROLE",
    "SHARE": "SHARE",
    "APPLICATION_ROLE": "APPLICATION ROLE",
}


#: the statement word of each kind of Snowflake policy
_POLICY_KINDS: dict[type, str] = {
    RowFilterPolicy: "ROW ACCESS POLICY",
    MaskPolicy: "MASKING POLICY",
    ProjectionPolicy: "PROJECTION POLICY",
    AggregationPolicy: "AGGREGATION POLICY",
    JoinPolicy: "JOIN POLICY",
}
#: POLICY_REFERENCES' POLICY_KIND of what each kind of placement occupies (its place key's first
#: word, targets/kinds.py) (account-usage/policy_references; AGGREGATION_POLICY and
#: PROJECTION_POLICY as the provider reads them, pkg/sdk/policy_references.go; JOIN_POLICY by the
#: same pattern, UNCONFIRMED)
REFERENCE_KINDS: dict[str, str] = {
    "filter": "ROW_ACCESS_POLICY",
    "mask": "MASKING_POLICY",
    "projection": "PROJECTION_POLICY",
    "aggregation": "AGGREGATION_POLICY",
    "join": "JOIN_POLICY",
}


class SnowflakeMigrationSQL(MigrationSQL):
    """Snowflake's migration statements: ``SET BODY`` in place, ``FORCE`` and one-statement
    ``DROP``/``ADD`` swaps, ``ALTER TAG`` for tag-based masking."""

    grants_read_with = "SHOW GRANTS ON FUNCTION"

    @staticmethod
    def _kind(obj: CatalogObject) -> str:
        return _POLICY_KINDS.get(type(obj), "MASKING POLICY")

    def replace(self, obj: Definition, old: Definition) -> str | None:
        if isinstance(obj, MappingTable) and isinstance(old, MappingTable):
            return self.expiry_added(obj, old)
        if isinstance(obj, RowFilterPolicy | MaskPolicy | ConstraintPolicy):
            # projection, aggregation and join policies too: ALTER <kind> POLICY ... SET BODY
            # (alter-projection-policy, alter-aggregation-policy, alter-join-policy); they
            # document no CREATE OR ALTER, and no CREATE OR REPLACE while attached is tried
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
        # projection, aggregation and join policies: SET ... FORCE replaces the one in place
        # in one statement (alter-table: [ FORCE ]), never UNSET, then SET
        if isinstance(obj, ProjectionAttachment):
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                f"SET PROJECTION POLICY {self.q(obj.policy)} FORCE;"
            )
        if isinstance(obj, AggregationAttachment):
            return self.target.aggregation_attachment_sql(obj, force=True) + ";"  # type: ignore[attr-defined]
        if isinstance(obj, JoinAttachment):
            # the order of ALLOWED JOIN KEYS and FORCE is not documented together (UNCONFIRMED:
            # alter-table shows SET JOIN POLICY p [FORCE], user-guide/join-policies the keys)
            return self.target.join_attachment_sql(obj, force=True) + ";"  # type: ignore[attr-defined]
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
        if isinstance(obj, ProjectionAttachment):
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                "UNSET PROJECTION POLICY;"
            )
        if isinstance(obj, AggregationAttachment):
            return f"ALTER TABLE {self.q(obj.table)} UNSET AGGREGATION POLICY;"
        if isinstance(obj, JoinAttachment):
            return f"ALTER TABLE {self.q(obj.table)} UNSET JOIN POLICY;"
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

    def placement_check(
        self, table: str, column: str | None, policy: str | None, kind: str | None = None
    ) -> str | None:
        lit = self.lit
        catalog = split_name(table)[0]
        kind = REFERENCE_KINDS[kind or ("mask" if column else "filter")]
        conditions = [f"POLICY_KIND = {lit(kind)}"]
        if column and kind == "MASKING_POLICY":
            # POLICY_REFERENCES lists tag-based masks too, with TAG_NAME set: count only the
            # mask attached to the column itself (user-guide/tag-based-masking-policies)
            conditions += [f"REF_COLUMN_NAME = {lit(column)}", "TAG_NAME IS NULL"]
        elif column:
            conditions.append(f"REF_COLUMN_NAME = {lit(column)}")
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

    # ---- grants on salt functions ---------------------------------------------------------------

    def revoke(
        self, function: str, privilege: str, grantee: str, via: str = "", kind: str = "ROLE"
    ) -> str:
        """REVOKE of a grant on a Snowflake salt function, the grantee spelled for its kind
        (``FROM ROLE r``, ``FROM DATABASE ROLE db.r``, ``FROM SHARE s``, ``FROM APPLICATION ROLE
        app.r``: a role's revoke does not reach a database role's grant), names through
        sqlglot. Snowflake grants on a function are made on the function (``via`` is unused)."""
        platform = self.target.platform
        spelled = GRANTEE_KINDS.get(kind.upper(), "ROLE")
        if spelled in ("DATABASE ROLE", "APPLICATION ROLE") and "." in grantee:
            who = sql.name_sql(grantee, platform)
        else:
            who = sql.render(sql.ident(grantee, platform), platform)
        return f"REVOKE {privilege} ON FUNCTION {self.q(function)}() FROM {spelled} {who}"

    def grantee(self, name: str, kind: str = "ROLE") -> str:
        return f"{kind.replace('_', ' ').lower()} {name}"

    def transfer(self, kind: str, name: str, owner: str) -> str:
        """``GRANT OWNERSHIP ON <type> <name> TO ROLE <owner> COPY CURRENT GRANTS``
        (docs.snowflake.com/en/sql-reference/sql/grant-ownership: the grants on the object are
        kept, so a reader's SELECT or APPLY survives the transfer; a grant that exposes a salt
        is revoked by its own statement). A salt function is named with its (empty) argument
        list; names through sqlglot."""
        platform = self.target.platform
        on = {
            "salt function": "FUNCTION",
            "row access policy": "ROW ACCESS POLICY",
            "masking policy": "MASKING POLICY",
        }.get(kind, "TABLE")
        target = f"{self.q(name)}()" if on == "FUNCTION" else self.q(name)
        role = sql.render(sql.ident(owner, platform), platform)
        return f"GRANT OWNERSHIP ON {on} {target} TO ROLE {role} COPY CURRENT GRANTS"
