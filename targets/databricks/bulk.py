"""The Databricks reads that would otherwise cost a round trip per schema, asked once per
catalog (issue 41, item 6): the reader check's owners and privileges, and which securables
carry an ABAC policy.

* ``<catalog>.information_schema.schemata`` (``schema_name``, ``schema_owner``) and
  ``<catalog>.information_schema.schema_privileges`` (``grantee``, ``schema_name``,
  ``privilege_type``, ``inherited_from``; docs.databricks.com sql/language-manual/
  information-schema/schemata, schema_privileges) answer, for every schema of the catalog at
  once, who owns it and what the reading principal holds on it, inherited grants included (the
  views show a caller its own grants: "INFORMATION_SCHEMA only shows their own grants"). A
  catalog whose views cannot be read is checked schema by schema through the REST API, as
  before (``schemas.get``, ``grants.get_effective``).
* ``information_schema.abac_policy_definitions`` names the securables a policy is attached to
  (catalog, schema, table): ``policies.list_policies`` is asked only for those, where the view
  stands for the securable (the reader may describe its policies).
"""

from __future__ import annotations

from typing import Any

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.errors import one_line
from accord.targets import sql as tsql


def schema_facts(reader: Any, me: str) -> None:
    """Fill ``reader.schema_owners`` (schema -> owner) and ``reader.schema_grants`` (schema ->
    [(principal, privilege, where)], the reader's own) for the schemas the reader checks, one
    pair of statements per catalog (``--jobs`` at a time). A catalog whose views fail is left
    out (noted): its schemas are checked one by one."""
    by_catalog: dict[str, set[str]] = {}
    for schema in reader.schemas():
        catalog, name = schema.split(".")
        by_catalog.setdefault(catalog, set()).add(name)
    platform = reader.platform
    me_sql = tsql.literal_sql(me, platform)

    def read(catalog: str) -> tuple[list[Any], list[Any]] | str:
        listed = ", ".join(tsql.literal_sql(n, platform) for n in sorted(by_catalog[catalog]))
        view = f"{tsql.name_sql(catalog, platform)}.information_schema"
        try:
            owners = reader.run.query(
                f"SELECT schema_name, schema_owner FROM {view}.schemata "
                f"WHERE schema_name IN ({listed})"
            )
            grants = reader.run.query(
                "SELECT grantee, schema_name, privilege_type, inherited_from FROM "
                f"{view}.schema_privileges WHERE grantee = {me_sql} AND schema_name IN ({listed})"
            )
        except ExecutionError as err:
            return one_line(err)[:300]
        return owners, grants

    catalogs = sorted(by_catalog)
    reader.progress("databricks: the schemas' owners and the reader's grants")
    for catalog, answer in zip(catalogs, reader.each(read, catalogs), strict=True):
        if isinstance(answer, str):
            reader.coverage.note(
                f"{catalog}.information_schema.schemata / schema_privileges could not be read "
                f"({answer}): its schemas were checked one by one"
            )
            continue
        owners, grants = answer
        for name in by_catalog[catalog]:
            reader.schema_grants[f"{catalog}.{name}"] = []
        for r in owners:
            schema = f"{catalog}.{str(r.get('schema_name') or '').lower()}"
            reader.schema_owners[schema] = str(r.get("schema_owner") or "")
        for r in grants:
            schema = f"{catalog}.{str(r.get('schema_name') or '').lower()}"
            if schema not in reader.schema_grants:
                continue
            privilege = str(r.get("privilege_type") or "").upper().replace(" ", "_")
            source = str(r.get("inherited_from") or "")
            where = "" if not source else ("catalog" if "." not in source else "schema")
            where = f"{where} {source}".strip() if source else ""
            reader.schema_grants[schema].append((str(r.get("grantee") or ""), privilege, where))


def policy_securables(reader: Any, catalog_name: str, gov: str) -> list[tuple[str, str]]:
    """The securables whose policies ``policies.list_policies`` is asked for: of the
    governance schema and its catalog (a GRANT policy there may give EXECUTE on the salts), and
    of the governed tables, their schemas and catalogs, those that carry a policy.

    Which carry one is read per catalog from ``information_schema.abac_policy_definitions``
    (one statement; Public Preview, docs.databricks.com sql/language-manual/information-schema/
    abac_policy_definitions), whose columns say where a policy is attached (``CATALOG_NAME``,
    ``SCHEMA_NAME``, ``SECURABLE_NAME``, ``ON_SECURABLE_TYPE``: CATALOG, SCHEMA or TABLE) but
    not its function, ``USING`` columns or comment, which ``list_policies`` answers. The view
    shows only the policies the caller may describe ("This matches the access pattern of
    DESCRIBE POLICY": MANAGE, READ METADATA or ownership where it is attached), so it stands for
    a table or schema only in a schema the reader was proven to see whole, and for a catalog
    only where the reader holds READ METADATA, MANAGE or ownership on it; every other securable,
    and every one of a catalog whose view could not be read, is listed itself (said in the
    coverage notes). Round trips grow with the securables that carry a policy."""
    containers = {("CATALOG", catalog_name.lower()), ("SCHEMA", gov.lower())}
    tables = [t.lower() for t in reader.governed_tables()]
    for table in tables:
        cat, sch, _ = table.split(".")
        containers |= {("CATALOG", cat), ("SCHEMA", f"{cat}.{sch}")}
    wanted = sorted(containers | {("TABLE", t) for t in tables})
    named, read = _attached(reader, sorted({name.split(".")[0] for _, name in wanted}))
    sees = {"READ_METADATA", "MANAGE", "ALL_PRIVILEGES", "OWNERSHIP"}

    def stands(kind: str, name: str) -> bool:
        catalog = name.split(".")[0]
        if catalog not in read:
            return False
        if kind == "CATALOG":
            return bool(reader.catalog_privileges.get(catalog, set()) & sees) or catalog in {
                s.split(".")[0] for s in reader.whole if reader.enumerates
            }
        schema = name if kind == "SCHEMA" else name.rsplit(".", 1)[0]
        return schema in reader.whole

    return [(k, n) for k, n in wanted if (k, n) in named or not stands(k, n)]


def tables_with_policies(reader: Any, tables: list[str]) -> set[str]:
    """Lower-case names of the tables whose policies must be listed one by one (``accord
    import``'s survey asks this of the tables it found): every table the catalogs' of
    ``tables`` ``abac_policy_definitions`` names, and those of ``tables`` it cannot stand for (a
    schema the reader was not proven to see whole, a catalog whose view could not be read)."""
    names = sorted({t.lower() for t in tables})
    named, read = _attached(reader, sorted({t.split(".")[0] for t in names}))
    blind = {
        t for t in names if t.split(".")[0] not in read or t.rsplit(".", 1)[0] not in reader.whole
    }
    return blind | {name for kind, name in named if kind == "TABLE"}


def _attached(reader: Any, catalogs: list[str]) -> tuple[set[tuple[str, str]], set[str]]:
    """(securable type, lower-case name) of every policy attachment the catalogs' views name,
    and the catalogs whose view was read (``--jobs`` at a time)."""

    def read(catalog: str) -> list[Any] | str:
        view = (
            f"{tsql.name_sql(catalog, reader.platform)}.information_schema.abac_policy_definitions"
        )
        try:
            return reader.run.query(  # type: ignore[no-any-return]
                f"SELECT catalog_name, schema_name, securable_name, on_securable_type FROM {view}"
            )
        except ExecutionError as err:
            return one_line(err)[:300]

    named: set[tuple[str, str]] = set()
    read_ok: set[str] = set()
    reader.progress("databricks: ABAC policy definitions")
    for catalog, rows in zip(catalogs, reader.each(read, catalogs), strict=True):
        if isinstance(rows, str):
            reader.coverage.note(
                f"{catalog}.information_schema.abac_policy_definitions could not be read "
                f"({rows}): the ABAC policies of its securables were listed one by one"
            )
            continue
        read_ok.add(catalog)
        for r in rows:
            kind = str(r.get("on_securable_type") or "").upper()
            cat = str(r.get("catalog_name") or "").lower()
            schema = str(r.get("schema_name") or "").lower()
            name = str(r.get("securable_name") or "").lower()
            if kind == "CATALOG":
                named.add((kind, cat))
            elif kind == "SCHEMA":
                named.add((kind, f"{cat}.{schema}"))
            elif kind == "TABLE":
                named.add((kind, name if name.count(".") == 2 else f"{cat}.{schema}.{name}"))
    return named, read_ok
