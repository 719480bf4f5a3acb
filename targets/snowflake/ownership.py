"""Who owns the tables drift judges the ownership of, on Snowflake: the mapping tables and the
governed tables (issue 41, item 1), read only when the model names ``platforms.snowflake.owner``.

``SHOW TABLES IN DATABASE <db>`` once per database (columns ``name``, ``database_name``,
``schema_name``, ``owner``; docs.snowflake.com/en/sql-reference/sql/show-tables) lists the tables
the reading role holds a privilege on, or every table with MANAGE GRANTS ("implicitly allows its
holder to see every object in the account", sql-reference/sql/show-privileges). A SHOW answer is
a page of at most 10,000 rows (``LIMIT <rows> [FROM '<name>']``, show-tables): a database's
answer that long is read again schema by schema (``SHOW TABLES IN SCHEMA``), so a capped answer
is never taken for the whole. A table no answer lists is unseen (its owner is not judged, said),
never taken for one the expected owner owns. The salt functions' and the policies' owners come
with what the reader reads of them anyway (``SHOW GRANTS ON FUNCTION``'s OWNERSHIP row, the
``owner`` column of ``SHOW ... POLICIES``)."""

from __future__ import annotations

from typing import Any

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets import sql as tsql

#: the most rows one SHOW answer holds (a longer listing is cut at it)
SHOW_PAGE = 10_000


def _q(name: str) -> str:
    return tsql.name_sql(name, SNOWFLAKE.name)


def table_owners(reader: Any, live: Any, objects: list[Any]) -> None:
    """Record the owner of every mapping table the read found (``objects``) and every governed
    table (``reader.owned``). A table no answer lists is unseen, unless the reader holds MANAGE
    GRANTS: SHOW then lists every table, so one it does not list does not exist (its policies
    are reported missing, ACC701), and has no owner to judge."""
    wanted = reader.owned_tables(objects)
    if not wanted:
        return
    reader.progress("snowflake: table owners")
    found: dict[str, str] = {}
    by_db: dict[str, set[str]] = {}
    for _, table in wanted:
        db, schema, _ = table.upper().split(".")
        by_db.setdefault(db, set()).add(f"{db}.{schema}")
    databases = sorted(by_db)
    answers = reader.each(lambda db: _show(reader, f"DATABASE {_q(db)}"), databases)
    for db, rows in zip(databases, answers, strict=True):
        if isinstance(rows, list) and len(rows) < SHOW_PAGE:
            _keep(rows, found)
            continue
        # refused, or a full page: schema by schema (each answer its own page)
        schemas = sorted(by_db[db])
        for schema, more in zip(
            schemas, reader.each(lambda s: _show(reader, f"SCHEMA {_q(s)}"), schemas), strict=True
        ):
            if isinstance(more, list) and len(more) < SHOW_PAGE:
                _keep(more, found)
            elif isinstance(more, list):
                reader.coverage.note(
                    f"SHOW TABLES IN SCHEMA {schema} answered {len(more):,} rows, a full page: "
                    "tables past it are unseen"
                )
                _keep(more, found)
    every = "MANAGE GRANTS on ACCOUNT" in reader.coverage.privileges
    for kind, table in wanted:
        owner = found.get(table.upper())
        if owner is None and every:
            continue  # not there: nothing owns it
        if owner is None:
            reader.cannot_see(
                f"the owner of {kind} {table}",
                "SHOW TABLES does not list it: it lists only the tables the reading role holds "
                "a privilege on (MANAGE GRANTS lets it see every one)",
                f"who owns {table}",
            )
            continue
        reader.owned(live, kind, table, owner)


def _show(reader: Any, where: str) -> list[dict[str, Any]] | str:
    try:
        return reader.run.query(f"SHOW TABLES IN {where}")  # type: ignore[no-any-return]
    except ExecutionError as err:
        return str(err)


def _keep(rows: list[dict[str, Any]], found: dict[str, str]) -> None:
    for r in rows:
        name = ".".join(str(r.get(k) or "") for k in ("database_name", "schema_name", "name"))
        found[name.upper()] = str(r.get("owner") or "")
