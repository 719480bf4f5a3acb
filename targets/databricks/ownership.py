"""Who owns the tables drift judges the ownership of, on Databricks: the mapping tables and the
governed tables (issue 41, item 1), read only when the model names ``platforms.databricks.owner``.

One statement per catalog: ``<catalog>.information_schema.tables`` (columns ``table_catalog``,
``table_schema``, ``table_name``, ``table_owner``; docs.databricks.com sql/language-manual/
information-schema/tables), which lists the tables the reading principal may interact with (the
reader of docs/live.md holds MANAGE on their schemas). A table it does not list is unseen (its owner is
not judged, said), never taken for one the expected owner owns. The functions' owners come with
``functions.list`` (``FunctionInfo.owner``), which the reader reads anyway."""

from __future__ import annotations

from typing import Any

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.errors import one_line
from accord.targets import sql as tsql


def table_owners(reader: Any, live: Any, objects: list[Any]) -> None:
    """Record the owner of every mapping table the read found (``objects``) and every governed
    table (``reader.owned``). A table the view does not list is unseen, unless the reader was
    proven to see its schema whole: then it does not exist, and has no owner to judge."""
    wanted = reader.owned_tables(objects)
    if not wanted:
        return
    by_catalog: dict[str, set[str]] = {}
    for _, table in wanted:
        catalog, schema, _ = table.lower().split(".")
        by_catalog.setdefault(catalog, set()).add(schema)
    found: dict[str, str] = {}
    failed: dict[str, str] = {}
    for catalog, schemas in sorted(by_catalog.items()):
        reader.progress(f"databricks: table owners in {catalog}")
        platform = reader.platform
        listed = ", ".join(tsql.literal_sql(s, platform) for s in sorted(schemas))
        sql = (
            "SELECT table_catalog, table_schema, table_name, table_owner FROM "
            f"{tsql.name_sql(catalog, platform)}.information_schema.tables "
            f"WHERE table_schema IN ({listed})"
        )
        try:
            rows = reader.run.query(sql)
        except ExecutionError as err:
            failed[catalog] = one_line(err)[:300]
            continue
        for r in rows:
            name = ".".join(
                str(r.get(k) or "") for k in ("table_catalog", "table_schema", "table_name")
            )
            found[name.lower()] = str(r.get("table_owner") or "")
    for kind, table in wanted:
        owner = found.get(table.lower())
        catalog = table.split(".")[0].lower()
        if (
            owner is None
            and catalog not in failed
            and table.lower().rsplit(".", 1)[0] in reader.whole
        ):
            continue  # the reader sees the schema whole: not there, nothing owns it
        if owner is None:
            why = (
                f"{catalog}.information_schema.tables could not be read ({failed[catalog]})"
                if catalog in failed
                else f"{catalog}.information_schema.tables does not list it: it lists only the "
                "tables the reading principal may interact with"
            )
            reader.cannot_see(f"the owner of {kind} {table}", why, f"who owns {table}")
            continue
        reader.owned(live, kind, table, owner)
