"""Ownership on the Snowflake stand-in (issue 41, item 1): every object has an owning role, and
OWNERSHIP moves with ``GRANT OWNERSHIP`` (docs.snowflake.com/en/sql-reference/sql/
grant-ownership: ``GRANT OWNERSHIP ON <object_type> <name> TO ROLE <role> [ { REVOKE | COPY }
CURRENT GRANTS ]``, run by the role that owns the object or one with MANAGE GRANTS). Policies and
functions keep theirs on :class:`~accord.sandbox.standins.engine.Policy`; tables here
(:attr:`OwnershipMixin.table_owners`, the creator's when not moved). ``SHOW TABLES IN { DATABASE
| SCHEMA } x`` lists the tables the reading role holds a privilege on (MANAGE GRANTS: every one),
with their ``owner`` (sql-reference/sql/show-tables). ``SHOW GRANTS ON FUNCTION`` names the
owner in its OWNERSHIP row (the stand-in's ``_show_grants``)."""

from __future__ import annotations

from typing import Any

from accord.sandbox.standins.engine import SqlError, missing

CREATED = "2026-11-03 10:00:00.000 +0000"

#: GRANT OWNERSHIP's object types the stand-in holds
_KINDS = {
    ("FUNCTION",): "FUNCTION",
    ("MASKING", "POLICY"): "MASKING_POLICY",
    ("ROW", "ACCESS", "POLICY"): "ROW_ACCESS_POLICY",
    ("TABLE",): "TABLE",
}


class OwnershipMixin:
    """Table owners, GRANT OWNERSHIP and SHOW TABLES, for :class:`SnowflakeEstate`."""

    #: UPPER table -> the role that owns it (the account's owner when not listed)
    table_owners: dict[str, str]

    def table_owner(self, name: str) -> str:
        return self.table_owners.get(self.key(name), self.owner)  # type: ignore[attr-defined]

    def table_names(self) -> list[str]:
        """Every table the account holds: the governed ones and those SQL created (the mapping
        tables), upper case."""
        names = {t.name for t in self.tables.values()}  # type: ignore[attr-defined]
        rows = self.db.execute(  # type: ignore[attr-defined]
            "SELECT table_catalog, table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND NOT table_name LIKE '__standin_%' "
            "AND table_catalog NOT IN ('memory', 'system', 'temp', '__snapshot')"
        ).fetchall()
        names |= {".".join(r).upper() for r in rows}
        return sorted(names)

    def set_owner(self, kind: str, name: str, role: str) -> None:
        """OWNERSHIP of ``name`` (``kind``: FUNCTION, MASKING_POLICY, ROW_ACCESS_POLICY,
        TABLE) moved to ``role``, as a console's GRANT OWNERSHIP would."""
        key = self.key(name)  # type: ignore[attr-defined]
        if kind == "TABLE":
            self.table_owners[key] = role.upper()
            return
        self.policies[key].owner = role.upper()  # type: ignore[attr-defined]

    def ownership_command(self, words: list[str], tokens: list[Any]) -> Any:
        """GRANT OWNERSHIP and SHOW TABLES IN ...; None for any other statement."""
        if words[:2] == ["GRANT", "OWNERSHIP"]:
            return self._grant_ownership(words, tokens)
        if words[:3] in (["SHOW", "TABLES", "IN"],) and len(words) > 4:
            scope = "".join(t.text for t in tokens[4:])
            return self._show_tables(words[3], scope)
        for kind in (["MASKING", "POLICY"], ["ROW", "ACCESS", "POLICY"]):
            if words[:3] == ["SHOW", "GRANTS", "ON"] and words[3 : 3 + len(kind)] == kind:
                name = "".join(t.text for t in tokens[3 + len(kind) :])
                return self._show_policy_grants("_".join(kind), name)
        return None

    def _show_policy_grants(self, kind: str, name: str) -> Any:
        """``SHOW GRANTS ON MASKING POLICY p`` / ``ROW ACCESS POLICY p``: its OWNERSHIP row and
        the APPLY grants on it, to a role that may see the policy (sql-reference/sql/
        show-grants)."""
        p = self.policies.get(self.key(name))  # type: ignore[attr-defined]
        if p is None or p.kind != kind or not self.sees_policy(p):  # type: ignore[attr-defined]
            raise missing("snowflake", "Policy", self.key(name))  # type: ignore[attr-defined]
        cols = ["created_on", "privilege", "granted_on", "name", "granted_to", "grantee_name"]
        on = kind.replace("_", " ")
        rows = [(CREATED, "OWNERSHIP", on, p.name, "ROLE", p.owner)]
        for role, held in sorted(self.role_grants.items()):  # type: ignore[attr-defined]
            if ("APPLY", kind, self.key(p.name)) in held:  # type: ignore[attr-defined]
                rows.append((CREATED, "APPLY", on, p.name, "ROLE", role))
        return cols, rows

    def _grant_ownership(self, words: list[str], tokens: list[Any]) -> Any:
        at = 3  # GRANT OWNERSHIP ON <kind> <name> TO ROLE <role> [COPY|REVOKE CURRENT GRANTS]
        kind = None
        for spelled, k in _KINDS.items():
            if tuple(words[at : at + len(spelled)]) == spelled:
                kind, at = k, at + len(spelled)
                break
        if kind is None or "TO" not in words[at:]:
            raise self._syntax(" ".join(words))  # type: ignore[attr-defined]
        to = words.index("TO", at)
        name = "".join(t.text for t in tokens[at:to]).split("(")[0]
        if words[to + 1 : to + 2] != ["ROLE"]:
            raise self._syntax(" ".join(words))  # type: ignore[attr-defined]
        role = tokens[to + 2].text.strip('"').upper()
        key = self.key(name)  # type: ignore[attr-defined]
        if kind == "TABLE":
            if key not in self.table_names():
                raise missing("snowflake", "Table", key)
            owner = self.table_owner(key)
        else:
            found = self.policies.get(key)  # type: ignore[attr-defined]
            if found is None or found.kind != kind.replace("_POLICY", "_POLICY"):
                raise missing("snowflake", "Object", key)
            owner = found.owner
        roles = self.closure()  # type: ignore[attr-defined]
        if owner.upper() not in roles and not self.holds("MANAGE GRANTS", "ACCOUNT"):  # type: ignore[attr-defined]
            raise SqlError(
                "003001",
                "42501",
                f"SQL access control error:\nInsufficient privileges to operate on '{key}'",
            )
        self.set_owner(kind, key, role)
        return self._ok("Statement executed successfully.")  # type: ignore[attr-defined]

    def _show_tables(self, scope_kind: str, scope: str) -> Any:
        """``SHOW TABLES IN DATABASE d`` / ``IN SCHEMA d.s``: the tables the reading role holds
        a privilege on (or owns), every one with MANAGE GRANTS."""
        scope = self.key(scope)  # type: ignore[attr-defined]
        every = self.holds("MANAGE GRANTS", "ACCOUNT")  # type: ignore[attr-defined]
        rows = []
        for name in self.table_names():
            db, sch, leaf = name.split(".")
            inside = db == scope if scope_kind == "DATABASE" else f"{db}.{sch}" == scope
            if not inside:
                continue
            if every or self.any_privilege("TABLE", name, self.table_owner(name)):  # type: ignore[attr-defined]
                rows.append((CREATED, leaf, db, sch, "TABLE", self.table_owner(name)))
        cols = ["created_on", "name", "database_name", "schema_name", "kind", "owner"]
        return cols, rows
