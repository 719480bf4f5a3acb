"""Databricks' migration statements: ``DROP ROW FILTER``, ``DROP MASK``, ``UNSET TAGS``,
``DROP POLICY``, governed tags from a live base, and the stage checks' query on
``information_schema.routines``.
"""

from __future__ import annotations

from sqlglot import exp

from accord.targets import sql
from accord.targets.identity import Definition, Placement
from accord.targets.migration import MigrationSQL, split_name
from accord.targets.objects import (
    AbacPolicy,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)


class DatabricksMigrationSQL(MigrationSQL):
    """Unity Catalog's migration statements: ``DROP ROW FILTER`` / ``DROP MASK``, ``UNSET
    TAGS``, ``DROP POLICY``; functions change by ``CREATE OR REPLACE``.

    Governed tags (docs.databricks.com/aws/en/sql/language-manual/sql-ref-syntax-ddl-create-
    governed-tag, -alter-governed-tag, -drop-governed-tag; Runtime 18.1+): CREATE fails with
    ALREADY_EXISTS when the key exists, ALTER ... SET VALUES replaces the allowed values
    (declarative), DROP leaves the assignments in place, ungoverned. A plan from a live base
    read the account's governed tags (targets/databricks/inspect.py), so a tag absent from that
    base is absent from the account and CREATE is right; from a model base the account may
    hold the tag already (other teams' estates), so the statement is named for the account
    admin, and the stage's check (``governed_tag``) fails until the tag exists."""

    def create(self, obj: CatalogObject) -> str | None:
        if isinstance(obj, Tag) and self.live:
            return self._governed_tag("CREATE", obj)
        return None

    def replace(self, obj: Definition, old: Definition) -> str | None:
        if isinstance(obj, Tag) and self.live:
            return self._governed_tag("ALTER", obj)
        if (
            isinstance(obj, MappingTable)
            and isinstance(old, MappingTable)
            and obj.expiry_column is not None
            and old.expiry_column != obj.expiry_column
        ):
            # the table gains its expiry column (sql-ref-syntax-ddl-alter-table-manage-column:
            # ADD COLUMNS; existing rows read NULL, a standing grant), then the MERGE sets it
            add = f"ALTER TABLE {self.q(obj.name)} ADD COLUMNS ({self.q(obj.expiry_column)} DATE);"
            if obj.rows == tuple((*r, None) for r in old.rows):
                return add  # the column alone (the planner replaces the rows in a later stage)
            rendered = self.target.render_object(obj)
            assert rendered is not None
            return f"{add}\n{rendered[1].strip()}"
        return None

    def _governed_tag(self, verb: str, tag: Tag) -> str:
        values = ", ".join(self.lit(v) for v in tag.allowed_values)
        name = self.q(tag.name)
        if verb == "ALTER":
            return f"ALTER GOVERNED TAG {name} SET VALUES ({values});"
        described = f" DESCRIPTION {self.lit(tag.comment)}" if tag.comment else ""
        return f"CREATE GOVERNED TAG {name}{described} VALUES ({values});"

    def undo_create(self, obj: Definition) -> tuple[Definition, str] | None:
        if self.live and isinstance(obj, Tag):
            # this plan created the governed tag (the live base had none): undo drops it
            return obj, f"DROP GOVERNED TAG {self.q(obj.name)};"
        return None

    def drop(self, obj: Definition) -> str:
        if isinstance(obj, MappingTable):
            return f"DROP TABLE {self.q(obj.name)};"
        if isinstance(obj, Tag):
            # governed tags are account-level tag policies, possibly used by other teams'
            # tables: accord does not remove one itself
            return (
                f"-- governed tag {obj.name} is no longer used by this model. It is an "
                "account-level tag\n-- policy: remove it in the account console or with "
                "Terraform once nothing else uses it."
            )
        return f"DROP FUNCTION {self.q(obj.name)};"

    def detach(self, obj: Placement) -> str:
        if isinstance(obj, RowFilterAttachment):
            return f"ALTER TABLE {self.q(obj.table)} DROP ROW FILTER;"
        if isinstance(obj, MaskAttachment):
            return f"ALTER TABLE {self.q(obj.table)} ALTER COLUMN {self.q(obj.column)} DROP MASK;"
        if isinstance(obj, TagAssignment):
            where = f"ALTER TABLE {self.q(obj.table)}"
            if obj.column:
                where += f" ALTER COLUMN {self.q(obj.column)}"
            return f"{where} UNSET TAGS ({self.lit(obj.tag)});"
        assert isinstance(obj, AbacPolicy)
        return f"DROP POLICY {self.q(obj.name)} ON {obj.securable_type} {self.q(obj.securable)};"

    # ---- stage checks: information_schema.routines; the rest is read with the SDK -------------

    governed_tags = True
    data_checks_note = (
        "Lines starting `-- accord-check:` are checks written as data: `accord migrate "
        "apply` reads each table's row filter and column masks with the SDK's "
        "tables.get (information_schema column names differ between the reference "
        "pages and live workspaces)."
    )
    grants_read_with = "grants.get_effective"

    def policy_check(self, name: str, salts: list[str]) -> tuple[str, str]:
        lit = self.lit
        catalog, schema, leaf = split_name(name)
        where = f"routine_schema = {lit(schema)} AND routine_name = {lit(leaf)}"
        what = f"{name} exists"
        for s in salts:
            where += f" AND instr(routine_definition, {lit(s.split('.')[-1].lower())}) > 0"
            what = f"{name} reads {', '.join(salts)}"
        return what, (
            f"SELECT COUNT(*) = 1 AS ok FROM {self.q(catalog)}.information_schema.routines "
            f"WHERE {where};"
        )

    # ---- grants on salt functions ---------------------------------------------------------------

    def revoke(
        self, function: str, privilege: str, grantee: str, via: str = "", kind: str = "ROLE"
    ) -> str:
        """On Databricks the privilege is spelled as SQL spells it (``ALL PRIVILEGES``, two
        words: ``ALL_PRIVILEGES`` is the REST enum), a grant inherited from the schema or
        catalog is revoked there (``via``: ``schema c.s`` / ``catalog c``), and an ABAC GRANT
        policy that gives it (``via``: ``policy P on schema c.s``) is dropped. Every name is
        spelled through sqlglot (principals quoted)."""
        platform = self.target.platform
        who = sql.principal_sql(grantee, platform)
        spelled = privilege.replace("_", " ")
        if via.startswith("policy "):
            policy, _, on = via.removeprefix("policy ").partition(" on ")
            on_kind, _, securable = on.partition(" ")
            target = sql.render(exp.Identifier(this=policy, quoted=True), platform)
            return f"DROP POLICY {target} ON {on_kind.upper()} {self.q(securable)}"
        if via:
            on_kind, _, securable = via.partition(" ")
            return f"REVOKE {spelled} ON {on_kind.upper()} {self.q(securable)} FROM {who}"
        return f"REVOKE {spelled} ON FUNCTION {self.q(function)} FROM {who}"

    def transfer(self, kind: str, name: str, owner: str) -> str:
        """``ALTER FUNCTION f OWNER TO `p``` / ``ALTER TABLE t OWNER TO `p``` (docs.databricks.com
        sql-ref-syntax-ddl-alter-function, sql-ref-syntax-ddl-alter-table: ``[ SET ] OWNER TO
        principal``); the principal quoted, names through sqlglot."""
        platform = self.target.platform
        on = "FUNCTION" if kind in ("salt function", "policy function") else "TABLE"
        who = sql.render(exp.Identifier(this=owner, quoted=True), platform)
        return f"ALTER {on} {self.q(name)} OWNER TO {who}"

    def revoke_hint(
        self, function: str, privilege: str, grantee: str, via: str = "", kind: str = "ROLE"
    ) -> str:
        """In words a person runs: Databricks SQL spells ``ALL PRIVILEGES`` in two words,
        revokes an inherited grant where it is made, and drops an ABAC GRANT policy (``accord
        plan --base live:`` writes the same, quoted)."""
        spelled = privilege.replace("_", " ")
        if via.startswith("policy "):
            policy, _, on = via.removeprefix("policy ").partition(" on ")
            on_kind, _, securable = on.partition(" ")
            return f"DROP POLICY {policy} ON {on_kind.upper()} {securable}, or narrow it"
        if via:
            on_kind, _, securable = via.partition(" ")
            return f"REVOKE {spelled} ON {on_kind.upper()} {securable} FROM {grantee}"
        return f"REVOKE {spelled} ON FUNCTION {function} FROM {grantee}"
