"""The Snowflake reads that would otherwise cost a round trip per policy or per table, asked in
few statements (issue 41, item 6): round trips grow with databases and batches, not with the
policies and governed tables.

* **Definitions**: ``GET_DDL('POLICY', '<name>')`` of many policies in one ``SELECT``
  (docs.snowflake.com/en/sql-reference/functions/get_ddl: "Returns a DDL statement that can be
  used to recreate the specified object"; for a policy, the role needs what DESCRIBE needs),
  each answer read back by accord's own SQL scanner (the reader of hand-written policy SQL);
  where a batch is refused or an answer does not read, that policy is DESCRIBEd as before.
* **References**: ``POLICY_REFERENCES(POLICY_NAME => ...)`` of many policies joined with ``UNION
  ALL`` in one statement, keeping only the rows the read uses: the direct associations, the
  tag associations (``REF_ENTITY_DOMAIN`` TAG), and the tag-based ones of a column another mask
  overrides (``POLICY_STATUS`` not ACTIVE). A refused batch is asked policy by policy.
* **Tags**: ``TAG_REFERENCES_ALL_COLUMNS`` of many tables of one database joined the same way,
  the governance schema's tags only. A refused batch is asked table by table, so a table the
  reader may not see is said on its own (never hides the others).

Each statement is one request; its rows may still come in several result chunks (the service
sends long results so), which are round trips too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.platforms import SNOWFLAKE
from accord.compiler.sqlscan.scanner import scan
from accord.targets import sql as tsql

#: policies per GET_DDL or POLICY_REFERENCES statement, tables per TAG_REFERENCES statement
POLICIES_PER_STATEMENT = 100
TABLES_PER_STATEMENT = 500

#: the kinds whose GET_DDL answer accord's scanner reads (SHOW's kind -> the scanner's)
_KINDS = {"ROW ACCESS": "row_access_policy", "MASKING": "masking_policy"}


def _q(name: str) -> str:
    return tsql.name_sql(name, SNOWFLAKE.name)


def _lit(value: str) -> str:
    return tsql.literal_sql(value, SNOWFLAKE.name)


def _batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def definitions(
    reader: Any, defined: list[tuple[str, str, dict[str, Any]]]
) -> list[list[dict[str, Any]] | None]:
    """DESCRIBE-shaped answers (``signature``, ``return_type``, ``body``) for each of
    ``defined`` ((kind, name, SHOW row)), in order: GET_DDL in batches; DESCRIBE for what a
    batch did not answer. None where neither answered (recorded by ``reader.query``)."""
    out: list[list[dict[str, Any]] | None] = [None] * len(defined)
    # the kinds accord's scanner reads back from their DDL; the others (projection,
    # aggregation, join policies) are DESCRIBEd one by one
    index = [i for i, (kind, _, _) in enumerate(defined) if kind in _KINDS]
    missing = [i for i, (kind, _, _) in enumerate(defined) if kind not in _KINDS]
    for batch in _batches(index, POLICIES_PER_STATEMENT) if len(index) > 1 else [index]:
        if len(batch) < 2:
            missing += batch
            continue
        cells = ", ".join(
            f"GET_DDL('POLICY', {_lit(defined[i][1])}) AS {_q(f'D{n}')}"
            for n, i in enumerate(batch)
        )
        try:
            rows = reader.run.query(f"SELECT {cells}")
        except ExecutionError:
            missing += batch
            continue
        values = list(rows[0].values()) if rows else []
        for n, i in enumerate(batch):
            kind = defined[i][0]
            read = _from_ddl(str(values[n]) if n < len(values) and values[n] else "", kind)
            if read is None:
                missing.append(i)
            else:
                out[i] = [read]
    described = reader.each(
        lambda i: reader.query(
            f"DESCRIBE {defined[i][0]} POLICY {_q(defined[i][1])}",
            f"DESCRIBE {defined[i][0]} POLICY {defined[i][1]}",
        ),
        sorted(missing),
    )
    for i, desc in zip(sorted(missing), described, strict=True):
        out[i] = desc
    return out


def _from_ddl(ddl: str, kind: str) -> dict[str, Any] | None:
    """A GET_DDL answer as DESCRIBE's columns, or None when it does not read as one policy of
    ``kind``."""
    if not ddl:
        return None
    found = scan(ddl, "GET_DDL", dialect=SNOWFLAKE.name)
    statements = [s for s in found.statements if s.kind == _KINDS[kind]]
    if found.errors or len(statements) != 1 or not statements[0].body_text:
        return None
    s = statements[0]

    def typ(t: str) -> str:  # NUMBER(38, 0) as DESCRIBE writes it: NUMBER(38,0)
        return re.sub(r"\s*,\s*", ",", t)

    signature = "(" + ", ".join(f"{p.name} {typ(p.type)}" for p in s.params) + ")"
    return {"signature": signature, "return_type": typ(s.returns or ""), "body": s.body_text}


#: the columns of POLICY_REFERENCES the read uses
_REFERENCE_COLUMNS = (
    "POLICY_DB, POLICY_SCHEMA, POLICY_NAME, POLICY_KIND, REF_DATABASE_NAME, REF_SCHEMA_NAME, "
    "REF_ENTITY_NAME, REF_ENTITY_DOMAIN, REF_COLUMN_NAME, REF_ARG_COLUMN_NAMES, TAG_DATABASE, "
    "TAG_SCHEMA, TAG_NAME, POLICY_STATUS"
)


def references(
    reader: Any, policies: list[str], one: Callable[[str], Any]
) -> list[list[dict[str, Any]] | None]:
    """POLICY_REFERENCES rows of each of ``policies``, in order: a batch of them in one
    ``UNION ALL`` statement, each row kept with the policy its names say (``one(policy)``
    asks a single policy: a refused batch is asked so, policy by policy)."""
    out: list[list[dict[str, Any]] | None] = [None] * len(policies)
    for batch in _batches(list(range(len(policies))), POLICIES_PER_STATEMENT):
        if len(batch) < 2:
            for i in batch:
                out[i] = one(policies[i])
            continue
        parts = [
            f"SELECT {_REFERENCE_COLUMNS} FROM TABLE({_q(policies[i].split('.')[0])}."
            f"INFORMATION_SCHEMA.POLICY_REFERENCES(POLICY_NAME => {_lit(policies[i])})) "
            "WHERE TAG_NAME IS NULL OR POLICY_STATUS <> 'ACTIVE'"
            for i in batch
        ]
        try:
            rows = reader.run.query(" UNION ALL ".join(parts))
        except ExecutionError:
            answers = reader.each(lambda i: one(policies[i]), batch)
            for i, rows_i in zip(batch, answers, strict=True):
                out[i] = rows_i
            continue
        by_policy: dict[str, list[dict[str, Any]]] = {policies[i].upper(): [] for i in batch}
        for r in rows:
            named = ".".join(
                str(r.get(k) or "") for k in ("policy_db", "policy_schema", "policy_name")
            ).upper()
            # a row of a policy not asked about goes to the first asked: ``about`` says so
            by_policy.get(named, by_policy[policies[batch[0]].upper()]).append(r)
        for i in batch:
            out[i] = by_policy[policies[i].upper()]
    return out


def tag_references(
    reader: Any, tables: list[str], gov: str, one: Callable[[str], Any]
) -> list[list[dict[str, Any]] | None]:
    """TAG_REFERENCES_ALL_COLUMNS rows of each of ``tables`` for the governance schema's tags,
    in order: the tables of one database in batches of ``UNION ALL`` (``one(table)`` asks a
    single table: a refused batch is asked so, table by table)."""
    out: list[list[dict[str, Any]] | None] = [None] * len(tables)
    by_db: dict[str, list[int]] = {}
    for i, t in enumerate(tables):
        by_db.setdefault(t.split(".")[0].upper(), []).append(i)
    db, schema = gov.upper().split(".")
    for database, indexes in sorted(by_db.items()):
        for batch in _batches(indexes, TABLES_PER_STATEMENT):
            if len(batch) < 2:
                for i in batch:
                    out[i] = one(tables[i])
                continue
            parts = [
                f"SELECT * FROM TABLE({_q(database)}.INFORMATION_SCHEMA."
                f"TAG_REFERENCES_ALL_COLUMNS({_lit(tables[i])}, 'table'))"
                for i in batch
            ]
            sql = (
                "SELECT * FROM (" + " UNION ALL ".join(parts) + ") WHERE "
                f"TAG_DATABASE = {_lit(db)} AND TAG_SCHEMA = {_lit(schema)}"
            )
            try:
                rows = reader.run.query(sql)
            except ExecutionError:
                answers = reader.each(lambda i: one(tables[i]), batch)
                for i, rows_i in zip(batch, answers, strict=True):
                    out[i] = rows_i
                continue
            by_table: dict[str, list[dict[str, Any]]] = {tables[i].upper(): [] for i in batch}
            for r in rows:
                entity = ".".join(
                    str(r.get(k) or "") for k in ("object_database", "object_schema", "object_name")
                ).upper()
                by_table.get(entity, by_table[tables[batch[0]].upper()]).append(r)
            for i in batch:
                out[i] = by_table[tables[i].upper()]
    return out
