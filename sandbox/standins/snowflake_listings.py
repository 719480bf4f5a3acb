"""SHOW, DESCRIBE-adjacent listings, role grants and POLICY_REFERENCES on the Snowflake
stand-in: what a reading role may list (docs.snowflake.com/en/sql-reference/sql/show-masking-policies,
show-row-access-policies, show-user-functions, show-grants, show-tags, show-projection-policies,
show-aggregation-policies, show-join-policies; sql-reference/functions/policy_references), for
:class:`~accord.sandbox.standins.snowflake.SnowflakeEstate`, whose module holds the rest."""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from accord.sandbox.standins.engine import SqlError, Table, missing

CREATED = "2026-11-03 10:00:00.000 +0000"
POLICY_REFERENCE_COLUMNS = [
    "POLICY_DB",
    "POLICY_SCHEMA",
    "POLICY_NAME",
    "POLICY_KIND",
    "REF_DATABASE_NAME",
    "REF_SCHEMA_NAME",
    "REF_ENTITY_NAME",
    "REF_ENTITY_DOMAIN",
    "REF_COLUMN_NAME",
    "REF_ARG_COLUMN_NAMES",
    "TAG_DATABASE",
    "TAG_SCHEMA",
    "TAG_NAME",
    "POLICY_STATUS",
]


class ListingMixin:
    """The listings and role grants of :class:`SnowflakeEstate` (see the module docstring)."""

    def _in_schema(self, name: str, schema: str) -> bool:
        return self.key(name).rsplit(".", 1)[0] == self.key(schema)

    def _show_policies(self, kind: str, schema: str | None) -> Any:
        """Only the policies on which the reading role holds a privilege, or all with the
        global APPLY privilege of the kind (fact 2)."""
        cols = ["created_on", "name", "database_name", "schema_name", "kind", "owner", "comment"]
        cols += ["options", "owner_role_type"]
        rows = []
        for p in sorted(self.policies.values(), key=lambda p: p.name):
            if p.kind != kind or not self.sees_policy(p):
                continue
            if schema is None or self._in_schema(p.name, schema):
                db, sch, leaf = p.name.split(".")
                # options: a JSON object, EXEMPT_OTHER_POLICIES a boolean (the Snowflake
                # Terraform provider reads it so: pkg/sdk MaskingPolicyOptions)
                options = '{"EXEMPT_OTHER_POLICIES":true}' if p.exempt else ""
                rows.append(
                    (CREATED, leaf, db, sch, kind, p.owner, p.comment or "", options, "ROLE")
                )
        return cols, rows

    def _show_functions(self, schema: str) -> Any:
        cols = ["created_on", "name", "schema_name", "is_builtin", "is_aggregate", "is_ansi"]
        cols += ["min_num_arguments", "max_num_arguments", "arguments", "description"]
        cols += ["catalog_name", "is_table_function", "valid_for_clustering", "is_secure"]
        cols += ["secrets", "external_access_integrations", "is_external_function", "language"]
        cols += ["is_memoizable", "is_data_metric"]
        rows = []
        for p in sorted(self.policies.values(), key=lambda p: p.name):
            if p.kind == "FUNCTION" and self._in_schema(p.name, schema) and self.sees_function(p):
                db, sch, leaf = p.name.split(".")
                args = f"{leaf}({', '.join(t for _, t in p.params)}) RETURN {p.returns}"
                rows.append(
                    (CREATED, leaf, sch, "N", "N", "N", len(p.params), len(p.params), args,
                     p.comment or "user-defined function", db, "N", "N",
                     "Y" if p.secure else "N", None, None, "N", "SQL", "N", "N")
                )  # fmt: skip
        return cols, rows

    def _show_grants(self, name: str) -> Any:
        fn = self.policies.get(self.key(name))
        if fn is None or fn.kind != "FUNCTION" or not self.sees_function(fn):
            raise missing("snowflake", "Function", self.key(name))
        rows = [(CREATED, "OWNERSHIP", "FUNCTION", fn.name, "ROLE", fn.owner, "true", fn.owner)]
        for priv, who in sorted(self.grants.get(self.key(name), ())):
            kind = self.grantee_kinds.get(who, "ROLE")
            rows.append((CREATED, priv, "FUNCTION", fn.name, kind, who, "false", fn.owner))
        return GRANT_COLUMNS, rows

    def _show_grants_to(self, kind: str, name: str) -> Any:
        """``SHOW GRANTS TO ROLE r`` / ``TO DATABASE ROLE d``: the privileges and roles granted
        to it (sql-reference/sql/show-grants). A role may list its own grants and those of the
        roles under it; the owner's are the global APPLY privileges, MANAGE GRANTS and the
        ownership of every database, schema and table (it created them). A role is named
        resolved (:meth:`role_key`)."""
        role = name if kind == "ROLE" else self.key(name)
        if not self.sees_role(role):
            raise missing("snowflake", "Role", role)
        granted = set(self.role_grants.get(role, ()))
        if role in self.all_seeing:
            for priv in (
                "APPLY MASKING POLICY",
                "APPLY ROW ACCESS POLICY",
                "APPLY PROJECTION POLICY",
                "APPLY AGGREGATION POLICY",
                "APPLY JOIN POLICY",
                "APPLY TAG",
            ):
                granted.add((priv, "ACCOUNT", ""))
            granted.add(("MANAGE GRANTS", "ACCOUNT", ""))
            granted |= self._owned()
        rows = [
            (CREATED, priv, on, obj or "STANDIN", kind, role, "false", self.owner)
            for priv, on, obj in sorted(granted)
        ]
        return GRANT_COLUMNS, rows

    def _show_like(self, kind: str, like: str, scope: str) -> Any:
        """``SHOW DATABASES | SCHEMAS | TABLES LIKE '<name>' [IN ...]``: the objects that exist
        and that the reading role holds a privilege on (MANAGE GRANTS: every object). A scope
        that does not resolve is 002003."""
        leaf = like.strip("'").upper()
        on = {"DATABASES": "DATABASE", "SCHEMAS": "SCHEMA", "TABLES": "TABLE"}[kind]
        every = self.holds("MANAGE GRANTS", "ACCOUNT")
        names = {n for _, o, n in self._owned() if o == on}
        if scope and not any(n.startswith(self.key(scope) + ".") for _, _, n in self._owned()):
            raise missing("snowflake", "Database" if on == "SCHEMA" else "Schema", self.key(scope))
        rows = [
            (CREATED, n.rsplit(".", 1)[-1], self.table_owner(n) if on == "TABLE" else self.owner)
            for n in sorted(names)
            if n.rsplit(".", 1)[-1] == leaf
            and (not scope or n.rsplit(".", 1)[0] == self.key(scope))
            and (every or self.any_privilege(on, n))
        ]
        return ["created_on", "name", "owner"], rows

    def _owned(self) -> set[tuple[str, str, str]]:
        """OWNERSHIP of every database, schema and table the account holds (the owner made
        them): the governed tables, the policies' schemas, and every table of the DuckDB
        catalogs (mapping tables)."""
        names = [t.name for t in self.tables.values()] + [p.name for p in self.policies.values()]
        names += [
            ".".join(r).upper()
            for r in self.db.execute(
                "SELECT table_catalog, table_schema, table_name FROM information_schema.tables "
                "WHERE NOT table_name LIKE '__standin_%'"
            ).fetchall()
        ]
        out = set()
        for n in names:
            db, sch, _ = self.key(n).split(".")
            out |= {("OWNERSHIP", "DATABASE", db), ("OWNERSHIP", "SCHEMA", f"{db}.{sch}")}
            out.add(("OWNERSHIP", "TABLE", self.key(n)))
        return out

    def sees_role(self, role: str) -> bool:
        """Whether the reading role may list what a role is granted and to whom: the role is
        in its own hierarchy (the reading role or a role under it), or the reading role owns
        it, or holds MANAGE GRANTS, which "implicitly allows its holder to see every object in
        the account" (sql-reference/sql/show-privileges, usage notes). The show-grants page
        does not list the privileges each variant needs; this is the model a limited reader is
        tested against: a role outside its hierarchy "does not exist or not authorized"
        (002003), as every object it may not see. ``role``: its resolved name."""
        if self.sees_all() or role in self.closure() or self.holds("MANAGE GRANTS", "ACCOUNT"):
            return True
        return self.owns_role(role)

    def create_role(self, role: str, owner: str | None = None) -> None:
        """``CREATE ROLE r``: a role that exists, granted to nothing yet, owned by its
        creator (sql-reference/sql/create-role)."""
        role = self.key(role)
        self.created_roles.add(role)
        self.role_owners.setdefault(role, (owner or self.reading_role()).upper())

    def owns_role(self, role: str) -> bool:
        owners = self.role_owners.get(role)
        return owners is not None and owners in self.closure()

    def _role_grant(self, words: list[str]) -> Any:
        """``GRANT ROLE a TO ROLE b`` / ``REVOKE ROLE a FROM ROLE b`` (and ``TO | FROM USER
        u``): b inherits every privilege granted to a, and a is under b in the role hierarchy
        (sql-reference/sql/grant-role, revoke-role; user-guide/security-access-control-overview,
        role hierarchy and privilege inheritance). Granting needs MANAGE GRANTS (or the
        owner's rights); a cycle is refused, as Snowflake refuses it."""
        verb, role = words[0], self.key(words[2])
        rest = words[3:]
        if len(rest) != 3 or rest[0] not in ("TO", "FROM") or rest[1] not in ("ROLE", "USER"):
            raise self._syntax(f"{' '.join(words)}")
        kind, grantee = rest[1], self.key(rest[2])
        if not self.holds("MANAGE GRANTS", "ACCOUNT") and not self.owns_role(role):
            raise SqlError(
                "003001",
                "42501",
                f"SQL access control error:\nInsufficient privileges to operate on role '{role}'",
            )
        if kind == "USER":
            roles = self.user_roles.setdefault(grantee, set())
            (roles.add if verb == "GRANT" else roles.discard)(role)
            return self._ok("Statement executed successfully.")
        if verb == "GRANT":
            if grantee in self.closure(role):
                raise SqlError(
                    "003013",
                    "42601",
                    f"SQL compilation error:\nGranting role '{role}' to role '{grantee}' "
                    "would create a cycle.",
                )
            self.grant_to_role(grantee, "USAGE", "ROLE", role)
        else:
            self.role_grants.get(grantee, set()).discard(("USAGE", "ROLE", role))
        return self._ok("Statement executed successfully.")

    def _show_grants_of(self, name: str) -> Any:
        """``SHOW GRANTS OF ROLE r``: the roles (and users) r is granted to, for a reading
        role that may see r (:meth:`sees_role`)."""
        role = self.key(name)
        if role not in self._roles() or not self.sees_role(role):
            raise missing("snowflake", "Role", role)
        role = self.grants_of_answered_as.get(role, role)
        rows = [
            (CREATED, role, "ROLE", holder, self.owner)
            for holder, held in sorted(self.role_grants.items())
            if ("USAGE", "ROLE", role) in held
        ]
        rows += [
            (CREATED, role, "USER", user, self.owner)
            for user, roles in sorted(self.user_roles.items())
            if role in roles
        ]
        return ["created_on", "role", "granted_to", "grantee_name", "granted_by"], rows

    def _function_grant(self, tokens: list[Any]) -> Any:
        """``GRANT | REVOKE <privilege> ON FUNCTION <name>(<types>) TO | FROM { ROLE |
        DATABASE ROLE | SHARE | APPLICATION ROLE } <grantee>`` (sqlglot reads only ROLE)."""
        words = [t.text.upper() for t in tokens]
        verb, privilege = words[0], words[1]
        at = words.index("FUNCTION") + 1
        name = []
        while at < len(tokens) and tokens[at].token_type != TokenType.L_PAREN:
            name.append(tokens[at].text)
            at += 1
        while at < len(tokens) and words[at] not in ("TO", "FROM"):
            at += 1
        rest = words[at + 1 :]
        kinds = {("DATABASE", "ROLE"): "DATABASE_ROLE", ("APPLICATION", "ROLE"): "APPLICATION_ROLE"}
        kind = kinds.get(tuple(rest[:2]))
        skip = 2 if kind else 1
        kind = kind or {"ROLE": "ROLE", "SHARE": "SHARE"}.get(rest[0] if rest else "")
        if kind is None:
            raise self._syntax(f"grantee kind {' '.join(rest[:2])}")
        who = self.key("".join(t.text for t in tokens[at + 1 + skip :]))
        fn = self.key("".join(name))
        if fn not in self.policies:
            raise missing("snowflake", "Function", fn)
        held = self.grants.setdefault(fn, set())
        if verb == "GRANT":
            held.add((privilege, who))
            self.grantee_kinds[who] = kind
        elif self.grantee_kinds.get(who, "ROLE") == kind:
            # a revoke names the grantee's kind: FROM ROLE does not revoke a database role's
            held.discard((privilege, who))
        else:
            raise missing("snowflake", kind.replace("_", " ").title(), who)
        return self._ok("Statement executed successfully.")

    def _show_tags(self, schema: str) -> Any:
        cols = ["created_on", "name", "database_name", "schema_name", "owner", "comment"]
        cols += ["allowed_values", "owner_role_type"]
        rows = []
        for t in sorted(self.tags.values(), key=lambda t: t.name):
            visible = self.holds("APPLY TAG", "ACCOUNT") or self.any_privilege("TAG", t.name)
            if self._in_schema(t.name, schema) and visible:
                db, sch, leaf = t.name.split(".")
                allowed = json.dumps(list(t.allowed_values)) if t.allowed_values else None
                rows.append((CREATED, leaf, db, sch, self.owner, t.comment or "", allowed, "ROLE"))
        return cols, rows

    # TABLE(db.INFORMATION_SCHEMA.POLICY_REFERENCES(...)) and TAG_REFERENCES_ALL_COLUMNS(...)
    # -> what this estate holds
    def rewrite_tables(self, tree: exp.Expression) -> exp.Expression:
        def replace(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.TableFromRows):
                return node
            call = node.this.expression if isinstance(node.this, exp.Dot) else node.this
            if not isinstance(call, exp.Anonymous):
                return node
            if call.name.upper() == "TAG_REFERENCES_ALL_COLUMNS":
                name, domain = (a.name for a in call.expressions[:2])
                if domain.lower() != "table":
                    raise SqlError("002140", "22023", "object_domain must be 'table'")
                table = self.materialize(TAG_REFERENCE_COLUMNS, self.tag_references(name))
                if node.args.get("alias") is not None:
                    table.set("alias", node.args["alias"])
                return table
            if call.name.upper() != "POLICY_REFERENCES":
                return node
            args = {
                kw.this.name.upper(): kw.expression.name
                for kw in call.expressions
                if isinstance(kw, exp.Kwarg)
            }
            table = self.materialize(POLICY_REFERENCE_COLUMNS, self.policy_references(args))
            alias = node.args.get("alias")
            if alias is not None:
                table.set("alias", alias)
            return table

        return tree.transform(replace)

    def tag_references(self, table_name: str) -> list[tuple[Any, ...]]:
        """Every tag on every column: its own (LEVEL COLUMN, APPLY_METHOD MANUAL, or PROPAGATED)
        and those it inherits from its table, schema or database (LEVEL TABLE, SCHEMA,
        DATABASE; APPLY_METHOD INHERITED), the nearest setting of each tag only (fact 3:
        sql-reference/functions/tag_references_all_columns, user-guide/object-tagging/
        inheritance; sandbox/standins/snowflake_tags.py). Only for a role with access to the
        table."""
        t = self.table(table_name)
        if not self.sees_table(t.name):
            raise missing("snowflake", "Table", t.name)
        rows = []
        for column, (name, _) in sorted(t.columns.items()):
            for tag, value, method, level in self.effective_tags(t, column):
                rows.append(_tag_ref_row(tag, value, t.name, name, method, level))
        return rows

    def _tag_policy(self, t: Table, column: str) -> tuple[str, str] | None:
        """(masking policy, tag) a tag gives ``column``: its own tags first, then the table's,
        schema's and database's."""
        col_type = t.columns[column][1]
        for tag, *_ in self.effective_tags(t, column):
            found = self._tag_mask(column, col_type, tag)
            if found:
                return found[column][0], tag
        return None

    def _policy_kind_visible(self, policy: str, kind: str) -> bool:
        """Fact 1: every association of a kind with its global APPLY privilege; with APPLY (or
        OWNERSHIP) on one policy, that policy's associations on objects the role owns (every
        table here is the owner's)."""
        if self._global(kind):
            return True
        p = self.policies.get(self.key(policy))
        return (
            p is not None
            and self.any_privilege(kind, p.name, p.owner)
            and self.owner.upper() in self.closure()
        )

    def policy_references(self, args: dict[str, str]) -> list[tuple[Any, ...]]:
        """POLICY_REFERENCES as the reading role may see it (fact 1), a column's direct mask
        and its tag's both listed with POLICY_STATUS MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_
        COLUMN (fact 4: user-guide/tag-based-masking-policies; the direct one is enforced)."""
        rows: list[tuple[Any, ...]] = []
        entity = args.get("REF_ENTITY_NAME")
        tables = list(self.tables.values())
        if entity is not None:
            if args.get("REF_ENTITY_DOMAIN", "").lower() != "table":
                raise SqlError("002140", "22023", "REF_ENTITY_DOMAIN must be 'table' here")
            t = self.table(entity)
            if not self.sees_table(t.name):
                raise missing("snowflake", "Table", t.name)
            on = [p for p, _ in ([t.row_filter] if t.row_filter else [])]
            on += [p for p, _ in t.masks.values()]
            on += [*t.projections.values(), *(a[0] for a in (t.aggregation, t.join) if a)]
            on += [f[0] for c in t.columns if (f := self._tag_policy(t, c))]
            kinds = ("MASKING_POLICY", "ROW_ACCESS_POLICY", *_CONSTRAINT_KINDS)
            if not any(self._global(k) for k in kinds) and not any(
                self._policy_kind_visible(p, self.policies[self.key(p)].kind) for p in on
            ):
                raise SqlError(
                    "003001",
                    "42501",
                    f"SQL access control error:\nInsufficient privileges to operate on table "
                    f"'{t.name}'",
                )
            tables = [t]
        only = self.key(args["POLICY_NAME"]) if "POLICY_NAME" in args else None
        if only is not None:
            p = self.policies.get(only)
            if p is None or not self.sees_policy(p):
                raise missing("snowflake", "Policy", only)

        def add(
            policy: str,
            kind: str,
            t: str,
            column: str | None,
            argcols: Any,
            tag: str | None,
            status: str = "ACTIVE",
        ) -> None:
            if only is not None and self.key(policy) != only:
                return
            if not self._policy_kind_visible(policy, kind):
                return
            pdb, psch, pname = self.key(policy).split(".")
            tdb, tsch, tname = t.split(".")
            tag_parts = tag.split(".") if tag else [None, None, None]
            rows.append(
                (pdb, psch, pname, kind, tdb, tsch, tname, "TABLE", column,
                 json.dumps(list(argcols)) if argcols else None, *tag_parts, status)
            )  # fmt: skip

        if only is not None and entity is None:
            for tag in sorted(self.tags.values(), key=lambda t: t.name):
                if only in tag.masking_policies and self._policy_kind_visible(
                    only, "MASKING_POLICY"
                ):
                    pdb, psch, pname = only.split(".")
                    tdb, tsch, tname = tag.name.split(".")
                    rows.append(
                        (pdb, psch, pname, "MASKING_POLICY", tdb, tsch, tname, "TAG", None,
                         None, None, None, None, "ACTIVE")
                    )  # fmt: skip
        both = "MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN"
        for t in sorted(tables, key=lambda t: t.name):
            if t.row_filter is not None:
                add(t.row_filter[0], "ROW_ACCESS_POLICY", t.name, None, t.row_filter[1], None)
            for column in sorted(t.columns):
                direct = t.masks.get(column)
                by_tag = self._tag_policy(t, column)
                status = both if direct and by_tag else "ACTIVE"
                if direct is not None:
                    add(direct[0], "MASKING_POLICY", t.name, column, direct[1], None, status)
                if by_tag is not None:
                    add(by_tag[0], "MASKING_POLICY", t.name, column, (), by_tag[1], status)
                if column in t.projections:
                    add(t.projections[column], "PROJECTION_POLICY", t.name, column, (), None)
            # the aggregation policy's entity key and the join policy's allowed join keys in
            # REF_ARG_COLUMN_NAMES (the provider reads the entity key there,
            # pkg/sdk/policy_references.go; the join keys by the same pattern)
            if t.aggregation is not None:
                add(t.aggregation[0], "AGGREGATION_POLICY", t.name, None, t.aggregation[1], None)
            if t.join is not None:
                add(t.join[0], "JOIN_POLICY", t.name, None, t.join[1], None)
        return rows


#: POLICY_KIND of projection, aggregation and join policies (account-usage/policy_references)
_CONSTRAINT_KINDS = ("PROJECTION_POLICY", "AGGREGATION_POLICY", "JOIN_POLICY")

GRANT_COLUMNS = ["created_on", "privilege", "granted_on", "name", "granted_to", "grantee_name"]
GRANT_COLUMNS += ["grant_option", "granted_by"]

TAG_REFERENCE_COLUMNS = [
    "TAG_DATABASE",
    "TAG_SCHEMA",
    "TAG_NAME",
    "TAG_VALUE",
    "APPLY_METHOD",
    "LEVEL",
    "OBJECT_DATABASE",
    "OBJECT_SCHEMA",
    "OBJECT_NAME",
    "DOMAIN",
    "COLUMN_NAME",
]


def _tag_ref_row(
    tag: str, value: str, table: str, column: str, method: str, level: str
) -> tuple[Any, ...]:
    tdb, tsch, tname = tag.split(".")
    odb, osch, oname = table.split(".")
    return (tdb, tsch, tname, value, method, level, odb, osch, oname, "COLUMN", column)
