"""Ownership on the Databricks stand-in (issue 41, item 1): every securable has an owner, the
holder of every privilege on it (docs.databricks.com data-governance/unity-catalog/manage-
privileges/ownership), moved with ``ALTER FUNCTION f [SET] OWNER TO principal`` and ``ALTER
TABLE t [SET] OWNER TO principal`` (sql-ref-syntax-ddl-alter-function, -alter-table; run by the
owner, a metastore admin, or a principal holding MANAGE on it). A table's owner can drop its row
filter and masks ("you must be the table owner or have the MANAGE privilege on the table",
sql-ref-syntax-ddl-row-filter, required privileges). ``<catalog>.information_schema.tables``
answers ``table_owner`` for the tables the caller may interact with
(sql/language-manual/information-schema/tables)."""

from __future__ import annotations

from typing import Any

from accord.sandbox.standins.engine import SqlError


class OwnershipMixin:
    """ALTER ... OWNER TO and information_schema.tables, for :class:`DatabricksEstate`."""

    def set_owner(self, kind: str, name: str, principal: str) -> None:
        """``kind`` (FUNCTION, TABLE) ``name`` now owned by ``principal``, as a console's
        ALTER ... OWNER TO leaves it."""
        if kind.upper() == "FUNCTION":
            self._policy(name, "Routine").owner = principal  # type: ignore[attr-defined]
            return
        self.owners[("TABLE", name.lower())] = principal  # type: ignore[attr-defined]

    def ownership_command(self, tokens: list[str]) -> Any:
        """``ALTER { FUNCTION | TABLE } x [SET] OWNER TO principal``; None for anything else."""
        upper = [t.upper() for t in tokens]
        if (
            upper[:1] != ["ALTER"]
            or "OWNER" not in upper
            or upper[1:2]
            not in (
                ["FUNCTION"],
                ["TABLE"],
            )
        ):
            return None
        at = upper.index("OWNER")
        if upper[at + 1 : at + 2] != ["TO"] or len(tokens) != at + 3:
            raise self._syntax(" ".join(tokens))  # type: ignore[attr-defined]
        end = at - 1 if upper[at - 1] == "SET" else at
        name = "".join(tokens[2:end]).replace("`", "")
        principal = tokens[at + 2].strip("`")
        kind = upper[1]
        if kind == "TABLE" and not self._known_table(name):
            raise SqlError("TABLE_OR_VIEW_NOT_FOUND", "42P01", f"[TABLE_OR_VIEW_NOT_FOUND] {name}")
        who = self.caller  # type: ignore[attr-defined]
        # a metastore admin, the owner (of it or a container), or MANAGE on it
        if not self.holds(who, kind, name, "MANAGE"):  # type: ignore[attr-defined]
            raise self.refuse(f"ownership or MANAGE on {kind.lower()} {name}")  # type: ignore[attr-defined]
        self.set_owner(kind, name, principal)
        return self._ok("OK")  # type: ignore[attr-defined]

    def _known_table(self, name: str) -> bool:
        return self.key(name) in self.tables or self._exists(name)  # type: ignore[attr-defined]

    def tables_rows(self, catalog: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``<catalog>.information_schema.tables``: the tables of the catalog the caller may
        see, with their owner."""
        names = {t.name.lower() for t in self.tables.values()}  # type: ignore[attr-defined]
        rows = self.db.execute(  # type: ignore[attr-defined]
            "SELECT table_catalog, table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND NOT table_name LIKE '__standin_%'"
        ).fetchall()
        names |= {".".join(r).lower() for r in rows}
        cols = ["table_catalog", "table_schema", "table_name", "table_type", "table_owner"]
        out = [
            (*n.split("."), "MANAGED", self.owner_of("TABLE", n))  # type: ignore[attr-defined]
            for n in sorted(names)
            if n.count(".") == 2 and n.split(".")[0] == catalog and self.may_see_table(n)  # type: ignore[attr-defined]
        ]
        return cols, out

    def schema_names(self, catalog: str) -> list[str]:
        """Every schema of ``catalog`` the metastore holds (lower-case ``catalog.schema``)."""
        names = {".".join(t.name.lower().split(".")[:2]) for t in self.tables.values()}  # type: ignore[attr-defined]
        names |= {".".join(p.name.lower().split(".")[:2]) for p in self.policies.values()}  # type: ignore[attr-defined]
        rows = self.db.execute(  # type: ignore[attr-defined]
            "SELECT DISTINCT table_catalog, table_schema FROM information_schema.tables"
        ).fetchall()
        names |= {".".join(r).lower() for r in rows}
        return sorted(n for n in names if n.split(".")[0] == catalog)

    def schemata_rows(self, catalog: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``<catalog>.information_schema.schemata``: the schemas the caller may interact
        with, with their owner (sql/language-manual/information-schema/schemata)."""
        who = self.caller  # type: ignore[attr-defined]
        rows = [
            (catalog, n.split(".")[1], self.owner_of("SCHEMA", n))  # type: ignore[attr-defined]
            for n in self.schema_names(catalog)
            if self.holds(who, "SCHEMA", n)  # type: ignore[attr-defined]
        ]
        return ["catalog_name", "schema_name", "schema_owner"], rows

    def schema_privileges_rows(self, catalog: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``<catalog>.information_schema.schema_privileges``: the grants on the schemas the
        caller may interact with, inherited ones with ``inherited_from`` (the catalog); a caller
        that neither owns a schema nor is an admin sees its own grants only (the page's note:
        "INFORMATION_SCHEMA only shows their own grants")."""
        who = self.caller  # type: ignore[attr-defined]
        cols = ["grantor", "grantee", "catalog_name", "schema_name", "privilege_type"]
        cols += ["is_grantable", "inherited_from"]
        rows = []
        for n in self.schema_names(catalog):
            if not self.holds(who, "SCHEMA", n):  # type: ignore[attr-defined]
                continue
            sees_all = who in self.admins or self.owner_of("SCHEMA", n) == who  # type: ignore[attr-defined]
            for principal, priv, from_type, from_name in self.effective("SCHEMA", n):  # type: ignore[attr-defined]
                if principal != who and not sees_all:
                    continue
                rows.append(
                    (self.owner, principal, catalog, n.split(".")[1], priv.replace("_", " "),  # type: ignore[attr-defined]
                     "NO", from_name if from_type else None)
                )  # fmt: skip
        return cols, rows
