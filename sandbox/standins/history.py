"""Access history for the platform stand-ins: every query they answer is recorded, and the
history views are answered in their documented column shapes, so a test can run traffic
through surfaces and sample it with ``accord probe sample``.

The stand-ins call in here with a few hook lines (sandbox/standins/snowflake.py,
sandbox/standins/databricks.py): a login, each answered statement, and a statement that reads
a history view (answered here, on the estate's DuckDB, and never recorded itself). SQL is
read with sqlglot directly, never with accord's own code.

**Snowflake** (docs.snowflake.com/en/sql-reference/account-usage/access_history,
query_history, sessions): ``SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY`` (``QUERY_ID``,
``QUERY_START_TIME``, ``USER_NAME``, ``DIRECT_OBJECTS_ACCESSED`` / ``BASE_OBJECTS_ACCESSED``:
JSON arrays of ``{objectDomain, objectId, objectName, columns: [{columnId, columnName}]}``,
``POLICIES_REFERENCED``, ...), ``QUERY_HISTORY`` (``QUERY_ID``, ``QUERY_TEXT``, ``SESSION_ID``,
``USER_NAME``, ``ROLE_NAME``, ``QUERY_TAG``, ``SECONDARY_ROLE_STATS`` — ``ALL`` after ``USE
SECONDARY ROLES ALL`` —, ...), ``SESSIONS`` (``SESSION_ID``, ``USER_NAME``,
``CLIENT_APPLICATION_ID``, ``CLIENT_ENVIRONMENT``, ...) and ``GRANTS_TO_USERS`` (``ROLE``,
``GRANTEE_NAME``, ``DELETED_ON``, from the roles granted to each user). The
client and query tag are what the connector sends at login: ``CLIENT_APP_ID`` /
``CLIENT_APP_VERSION``, ``CLIENT_ENVIRONMENT.APPLICATION`` (the connection's
``application``) and ``SESSION_PARAMETERS.QUERY_TAG``.

**Databricks** (docs.databricks.com/aws/en/admin/system-tables/query-history, lineage):
``system.query.history`` (``statement_id``, ``executed_by``, ``execution_status``,
``client_application`` — derived from the client's User-Agent product, as the platform
derives it —, ``query_tags``, ``statement_text``, ``start_time``, ...),
``system.access.table_lineage`` and ``system.access.column_lineage``
(``source_table_full_name``, ``source_column_name``, ``source_type``, ``created_by``,
``event_time``, ``statement_id``, ...), and the workspace's SCIM ``Users`` and
``ServicePrincipals`` with their ``groups``.
"""

from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlglot
from sqlglot import exp

from accord.sandbox.standins.engine import SqlError

#: the views' columns; Snowflake's ARRAY and OBJECT columns (the objects accessed, the
#: policies referenced) and Databricks' ``query_tags`` map are DuckDB JSON, so that TO_JSON
#: gives their JSON text as the platforms' do (not the JSON of a string)
ACCESS_HISTORY = [
    ("QUERY_ID", "VARCHAR"),
    ("QUERY_START_TIME", "TIMESTAMPTZ"),
    ("USER_NAME", "VARCHAR"),
    ("DIRECT_OBJECTS_ACCESSED", "JSON"),
    ("BASE_OBJECTS_ACCESSED", "JSON"),
    ("OBJECTS_MODIFIED", "JSON"),
    ("OBJECT_MODIFIED_BY_DDL", "JSON"),
    ("POLICIES_REFERENCED", "JSON"),
    ("PARENT_QUERY_ID", "VARCHAR"),
    ("ROOT_QUERY_ID", "VARCHAR"),
]
QUERY_HISTORY = [
    ("QUERY_ID", "VARCHAR"),
    ("QUERY_TEXT", "VARCHAR"),
    ("DATABASE_NAME", "VARCHAR"),
    ("SCHEMA_NAME", "VARCHAR"),
    ("QUERY_TYPE", "VARCHAR"),
    ("SESSION_ID", "BIGINT"),
    ("USER_NAME", "VARCHAR"),
    ("ROLE_NAME", "VARCHAR"),
    ("SECONDARY_ROLE_STATS", "VARCHAR"),
    ("WAREHOUSE_NAME", "VARCHAR"),
    ("QUERY_TAG", "VARCHAR"),
    ("EXECUTION_STATUS", "VARCHAR"),
    ("START_TIME", "TIMESTAMPTZ"),
    ("END_TIME", "TIMESTAMPTZ"),
]
GRANTS_TO_USERS = [
    ("CREATED_ON", "TIMESTAMPTZ"),
    ("DELETED_ON", "TIMESTAMPTZ"),
    ("ROLE", "VARCHAR"),
    ("GRANTED_TO", "VARCHAR"),
    ("GRANTEE_NAME", "VARCHAR"),
    ("GRANTED_BY", "VARCHAR"),
]
SESSIONS = [
    ("SESSION_ID", "BIGINT"),
    ("CREATED_ON", "TIMESTAMPTZ"),
    ("USER_NAME", "VARCHAR"),
    ("AUTHENTICATION_METHOD", "VARCHAR"),
    ("LOGIN_EVENT_ID", "BIGINT"),
    ("CLIENT_APPLICATION_VERSION", "VARCHAR"),
    ("CLIENT_APPLICATION_ID", "VARCHAR"),
    ("CLIENT_ENVIRONMENT", "VARCHAR"),
    ("CLIENT_BUILD_ID", "VARCHAR"),
    ("CLIENT_VERSION", "VARCHAR"),
    ("CLOSED_REASON", "VARCHAR"),
]
QUERY_HISTORY_DBX = [
    ("account_id", "VARCHAR"),
    ("workspace_id", "VARCHAR"),
    ("statement_id", "VARCHAR"),
    ("session_id", "VARCHAR"),
    ("execution_status", "VARCHAR"),
    ("executed_by_user_id", "VARCHAR"),
    ("executed_by", "VARCHAR"),
    ("statement_text", "VARCHAR"),
    ("statement_type", "VARCHAR"),
    ("error_message", "VARCHAR"),
    ("client_application", "VARCHAR"),
    ("client_driver", "VARCHAR"),
    ("query_tags", "JSON"),
    ("start_time", "TIMESTAMPTZ"),
    ("end_time", "TIMESTAMPTZ"),
]
LINEAGE = [
    ("account_id", "VARCHAR"),
    ("metastore_id", "VARCHAR"),
    ("workspace_id", "VARCHAR"),
    ("entity_type", "VARCHAR"),
    ("entity_id", "VARCHAR"),
    ("entity_run_id", "VARCHAR"),
    ("source_table_full_name", "VARCHAR"),
    ("source_table_catalog", "VARCHAR"),
    ("source_table_schema", "VARCHAR"),
    ("source_table_name", "VARCHAR"),
    ("source_path", "VARCHAR"),
    ("source_type", "VARCHAR"),
    ("source_column_name", "VARCHAR"),
    ("target_table_full_name", "VARCHAR"),
    ("target_column_name", "VARCHAR"),
    ("created_by", "VARCHAR"),
    ("event_time", "TIMESTAMPTZ"),
    ("statement_id", "VARCHAR"),
]

Clock = Callable[[], datetime]


def history_of(estate: Any) -> SnowflakeHistory | DatabricksHistory:
    """The estate's history, made on first use (the stand-ins' own classes are untouched)."""
    found = estate.__dict__.get("history")
    if found is None:
        kind = SnowflakeHistory if estate.platform == "snowflake" else DatabricksHistory
        found = estate.__dict__["history"] = kind(estate)
    return found


class _Clock:
    """A fixed start, one second per query: the same traffic gives the same history."""

    def __init__(self) -> None:
        self.start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
        self.ticks = itertools.count()

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=next(self.ticks))


def _stamp(t: datetime) -> str:
    return t.isoformat(sep=" ", timespec="milliseconds")


def generate(
    estate: Any,
    table: str,
    columns: list[tuple[str, str]],
    shapes: list[dict[str, Any]],
    rows: int,
    vary: dict[str, str],
) -> None:
    """A persistent table ``table`` of ``rows`` history rows made in DuckDB from ``shapes``
    (row ``i`` is shape ``i % len(shapes)``), for a history too long to hold as Python rows
    (the probe-sample benchmark's million): ``vary`` maps a column to a DuckDB expression of
    ``i`` (the row number) and ``s`` (the shape's columns), such as a unique query id or a time
    one second earlier per row; every other column is the shape's own."""
    db = estate.db
    names = [c for c, _ in columns]
    cells = [[None if sh.get(c) is None else str(sh.get(c)) for c in names] for sh in shapes]
    with estate.lock:
        db.execute("SET enable_progress_bar = false")  # a benchmark's output, not DuckDB's
        picks = ", ".join(f'r[{j + 2}] AS "{c}"' for j, c in enumerate(names))
        db.execute(
            f"CREATE TEMP TABLE __shapes AS SELECT CAST(r[1] AS BIGINT) AS k, {picks} FROM "
            "(SELECT UNNEST(?::VARCHAR[][]) AS r)",
            [[[str(i), *row] for i, row in enumerate(cells)]],
        )
        typed = {c: t for c, t in columns}
        select = ", ".join(
            f'CAST({vary[c]} AS {typed[c]}) AS "{c}"'
            if c in vary
            else f'CAST(s."{c}" AS {typed[c]}) AS "{c}"'
            for c in names
        )
        db.execute(f'DROP TABLE IF EXISTS "{table}"')
        db.execute(
            f'CREATE TABLE "{table}" AS SELECT {select} FROM range({int(rows)}) AS t(i) '
            f"JOIN __shapes AS s ON s.k = t.i % {len(shapes)}"
        )
        db.execute("DROP TABLE __shapes")


class _Views:
    """Temporary DuckDB tables holding the views, and a query rewritten onto them."""

    def __init__(self, estate: Any) -> None:
        self.estate = estate
        self.names = itertools.count(1)
        #: the rows of each answer given, in order (what a reader was sent)
        self.answered: list[int] = []

    def table(
        self, columns: list[tuple[str, str]], rows: list[dict[str, Any]], bulk: str = ""
    ) -> str:
        """A table of the view's ``columns`` holding ``rows`` and, when a bulk history was
        generated (``bulk``: its table, :func:`generate`), its rows too."""
        name = f"__history_{next(self.names)}"
        cols = ", ".join(f'"{c}" {t}' for c, t in columns)
        db = self.estate.db
        db.execute(f'CREATE TEMP TABLE "{name}" ({cols})')
        marks = "(" + ", ".join("?" for _ in columns) + ")"
        for start in range(0, len(rows), 200):  # a VALUES list at a time: executemany is slow
            batch = rows[start : start + 200]
            db.execute(
                f'INSERT INTO "{name}" VALUES ' + ", ".join(marks for _ in batch),
                [r.get(c) for r in batch for c, _ in columns],
            )
        if not bulk:
            return name
        names = ", ".join(f'"{c}"' for c, _ in columns)
        both = f"{name}_all"
        db.execute(
            f'CREATE TEMP VIEW "{both}" AS SELECT {names} FROM "{bulk}" '
            f'UNION ALL SELECT {names} FROM "{name}"'
        )
        return both

    def run(
        self, tree: exp.Expression, tables: dict[str, str]
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        def replace(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table):
                key = ".".join(p for p in (node.catalog, node.db, node.name) if p).upper()
                if key in tables:
                    out = exp.to_table(f'"{tables[key]}"', dialect="duckdb")
                    if node.alias:
                        out.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias)))
                    return out
            return node

        text = tree.transform(replace).sql(dialect="duckdb")
        with self.estate.lock:
            try:
                cursor = self.estate.db.execute(text)
                names = [d[0] for d in cursor.description]
                rows = [tuple(r) for r in cursor.fetchall()]
            finally:  # the answer's temporary tables (and views over them) go with it
                for made in tables.values():
                    if made.endswith("_all"):
                        self.estate.db.execute(f'DROP VIEW IF EXISTS "{made}"')
                        made = made.removesuffix("_all")
                    self.estate.db.execute(f'DROP TABLE IF EXISTS "{made}"')
        self.answered.append(len(rows))
        return names, rows


def _tables_read(tree: exp.Expression, estate: Any) -> list[tuple[Any, list[str]]]:
    """(estate table, columns read) for every table of the estate ``tree`` reads."""
    ctes = {c.alias_or_name.upper() for c in tree.find_all(exp.CTE)}
    found: dict[str, tuple[Any, set[str], set[str]]] = {}
    for node in tree.find_all(exp.Table):
        if not node.name or node.name.upper() in ctes:
            continue
        name = ".".join(p for p in (node.catalog, node.db, node.name) if p)
        t = estate.tables.get(estate.key(name))
        if t is None:
            continue
        entry = found.setdefault(t.name, (t, set(), set()))
        entry[2].update({node.alias_or_name.upper(), node.name.upper()})
    out = []
    star = any(isinstance(s, exp.Star) for s in tree.find_all(exp.Star))
    for _, (t, cols, aliases) in sorted(found.items()):
        for column in tree.find_all(exp.Column):
            key = column.name.upper()
            if key not in t.columns:
                continue
            if column.table and column.table.upper() not in aliases:
                continue
            cols.add(t.columns[key][0])
        if star:
            cols.update(c for c, _ in t.columns.values())
        out.append((t, sorted(cols)))
    return out


# --------------------------------------------------------------------------------------------
# Snowflake


class SnowflakeHistory:
    def __init__(self, estate: Any) -> None:
        self.estate = estate
        self.clock: Clock = _Clock()
        self.access: list[dict[str, Any]] = []
        self.queries: list[dict[str, Any]] = []
        self.sessions: list[dict[str, Any]] = []
        #: login token -> (session id, login data)
        self.logins: dict[str, tuple[int, dict[str, Any]]] = {}
        self.views = _Views(estate)
        #: login tokens whose session ran USE SECONDARY ROLES ALL
        self.all_secondary: set[str] = set()
        #: whether a bulk history was generated (:meth:`generate`)
        self.bulk = False

    def generate(self, shapes: list[dict[str, Any]], rows: int, distinct: bool = False) -> None:
        """``rows`` queries of the past 30 days made from ``shapes`` (each a dict of the views'
        columns: USER_NAME, ROLE_NAME, SECONDARY_ROLE_STATS, QUERY_TAG, QUERY_TEXT,
        BASE_OBJECTS_ACCESSED, DIRECT_OBJECTS_ACCESSED, POLICIES_REFERENCED,
        CLIENT_APPLICATION_ID, CLIENT_ENVIRONMENT), one query a shape in turn, one second
        apart, each with its own QUERY_ID and session (one session a shape); ``distinct``:
        each query's text its own (a comment with its number), as ad-hoc queries' are."""
        start = _stamp(self.clock.start)
        when = f"TIMESTAMPTZ '{start}' - INTERVAL (i) SECOND"
        sessions = [{**sh, "SESSION_ID": 10_000_000 + n} for n, sh in enumerate(shapes)]
        generate(self.estate, "__bulk_access", ACCESS_HISTORY, sessions, rows, {
            "QUERY_ID": "'bulk-' || i", "QUERY_START_TIME": when,
        })  # fmt: skip
        text = {"QUERY_TEXT": "s.\"QUERY_TEXT\" || ' /* ' || i || ' */'"} if distinct else {}
        generate(self.estate, "__bulk_queries", QUERY_HISTORY, sessions, rows, {
            "QUERY_ID": "'bulk-' || i", "START_TIME": when, "END_TIME": when,
            "SESSION_ID": f"10000000 + i % {len(shapes)}", **text,
        })  # fmt: skip
        generate(self.estate, "__bulk_sessions", SESSIONS, sessions, len(shapes), {
            "SESSION_ID": "10000000 + i", "CREATED_ON": when,
        })  # fmt: skip
        self.bulk = True

    def login(self, token: str, data: dict[str, Any]) -> None:
        sid = len(self.logins) + 1
        env = data.get("CLIENT_ENVIRONMENT") or {}
        self.logins[token] = (sid, data)
        app, version = data.get("CLIENT_APP_ID") or "", data.get("CLIENT_APP_VERSION") or ""
        self.sessions.append(
            {
                "SESSION_ID": sid,
                "CREATED_ON": self.clock(),
                "USER_NAME": str(data.get("LOGIN_NAME") or "").upper(),
                "AUTHENTICATION_METHOD": "Password",
                "LOGIN_EVENT_ID": sid,
                "CLIENT_APPLICATION_VERSION": version,
                "CLIENT_APPLICATION_ID": f"{app} {version}".strip(),
                "CLIENT_ENVIRONMENT": json.dumps(
                    {k: env[k] for k in ("APPLICATION", "OS", "OS_VERSION") if k in env}
                ),
            }
        )

    def answered(self, token: str, session: Any, sql: str, query_id: str) -> None:
        """Record a statement the account answered, when it read tables."""
        try:
            tree = sqlglot.parse_one(sql, read="snowflake")
        except sqlglot.errors.SqlglotError:
            return
        if isinstance(tree, exp.Use) and (tree.text("kind") or "").upper() == "SECONDARY ROLES":
            every = isinstance(tree.this, exp.Var) and tree.this.name.upper() == "ALL"
            (self.all_secondary.add if every else self.all_secondary.discard)(token)
        if not isinstance(tree, exp.Query):
            return
        read = _tables_read(tree, self.estate)
        if not read:
            return
        sid, data = self.logins.get(token, (0, {}))
        user = str(data.get("LOGIN_NAME") or getattr(session, "user", "")).upper()
        when = self.clock()
        objects, policies = [], []
        for t, cols in read:
            oid = zlib.crc32(t.name.encode()) % 100000
            col_ids = {c: i for i, c in enumerate(sorted(t.columns))}
            objects.append(
                {
                    "columns": [
                        {"columnId": oid * 100 + col_ids.get(c.upper(), 0), "columnName": c}
                        for c in cols
                    ],
                    "objectDomain": "Table",
                    "objectId": oid,
                    "objectName": t.name,
                }
            )
            masks = self.estate._masks_of(t)
            entry: dict[str, Any] = {"objectDomain": "Table", "objectName": t.name, "columns": []}
            if t.row_filter is not None:
                entry["policies"] = [
                    {"policyName": t.row_filter[0], "policyKind": "ROW_ACCESS_POLICY"}
                ]
            for c in cols:
                if c.upper() in masks:
                    entry["columns"].append(
                        {
                            "columnName": c,
                            "policies": [
                                {"policyName": masks[c.upper()][0], "policyKind": "MASKING_POLICY"}
                            ],
                        }
                    )
            if entry.get("policies") or entry["columns"]:
                policies.append(entry)
        secondary = list(getattr(session, "secondary", []) or [])
        self.access.append(
            {
                "QUERY_ID": query_id,
                "QUERY_START_TIME": when,
                "USER_NAME": user,
                "DIRECT_OBJECTS_ACCESSED": json.dumps(objects),
                "BASE_OBJECTS_ACCESSED": json.dumps(objects),
                "OBJECTS_MODIFIED": "[]",
                "POLICIES_REFERENCED": json.dumps(policies),
            }
        )
        self.queries.append(
            {
                "QUERY_ID": query_id,
                "QUERY_TEXT": sql,
                "QUERY_TYPE": "SELECT",
                "SESSION_ID": sid,
                "USER_NAME": user,
                "ROLE_NAME": getattr(session, "primary", None) or self.estate.owner,
                "SECONDARY_ROLE_STATS": json.dumps(
                    {
                        "roles": "ALL" if token in self.all_secondary else ",".join(secondary),
                        "count": len(secondary),
                    }
                )
                if secondary
                else None,
                "QUERY_TAG": (data.get("SESSION_PARAMETERS") or {}).get("QUERY_TAG") or "",
                "EXECUTION_STATUS": "SUCCESS",
                "START_TIME": when,
                "END_TIME": when,
            }
        )

    def may_read(self, session: Any) -> bool:
        """Whether the session's role may read the ACCOUNT_USAGE views: IMPORTED PRIVILEGES
        on the SNOWFLAKE database ("To grant access to the ACCOUNT_USAGE schema to roles
        other than ACCOUNTADMIN, grant IMPORTED PRIVILEGES on the SNOWFLAKE database":
        docs.snowflake.com/en/sql-reference/account-usage, enabling other roles), held
        directly or through a role granted to it; ACCOUNTADMIN and the owner see them."""
        estate = self.estate
        with estate.lock:
            before, estate.current = estate.current, session
            try:
                return bool(estate.holds("IMPORTED PRIVILEGES", "DATABASE", "SNOWFLAKE"))
            finally:
                estate.current = before

    def view(self, sql: str, session: Any = None) -> tuple[list[str], list[tuple[Any, ...]]] | None:
        """The answer to a statement reading SNOWFLAKE.ACCOUNT_USAGE views, else None; a
        ``session`` whose role may not read them is refused as Snowflake refuses a database
        the role holds nothing on."""
        if "ACCOUNT_USAGE" not in sql.upper():
            return None
        if session is not None and not self.may_read(session):
            raise SqlError(
                "002003", "02000",
                "SQL compilation error:\nDatabase 'SNOWFLAKE' does not exist or not authorized.",
            )  # fmt: skip
        tree = sqlglot.parse_one(sql, read="snowflake")
        bulk = self.bulk
        tables = {
            "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY": self.views.table(
                ACCESS_HISTORY, self.access, "__bulk_access" if bulk else ""
            ),
            "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY": self.views.table(
                QUERY_HISTORY, self.queries, "__bulk_queries" if bulk else ""
            ),
            "SNOWFLAKE.ACCOUNT_USAGE.SESSIONS": self.views.table(
                SESSIONS, self.sessions, "__bulk_sessions" if bulk else ""
            ),
            "SNOWFLAKE.ACCOUNT_USAGE.GRANTS_TO_USERS": self.views.table(
                GRANTS_TO_USERS,
                [
                    {
                        "ROLE": role,
                        "GRANTED_TO": "USER",
                        "GRANTEE_NAME": user,
                        "GRANTED_BY": self.estate.owner,
                    }
                    for user, roles in sorted(self.estate.user_roles.items())
                    for role in sorted(roles)
                ],
            ),
        }
        return self.views.run(tree, tables)


# --------------------------------------------------------------------------------------------
# Databricks


class DatabricksHistory:
    def __init__(self, estate: Any) -> None:
        self.estate = estate
        self.clock: Clock = _Clock()
        self.statements: list[dict[str, Any]] = []
        self.table_lineage: list[dict[str, Any]] = []
        self.column_lineage: list[dict[str, Any]] = []
        #: bearer token -> the user (or service principal application id) it authenticates
        self.users_of_tokens: dict[str, str] = {}
        #: SCIM: user name -> account groups; service principal application id -> groups
        self.users: dict[str, list[str]] = {}
        self.service_principals: dict[str, list[str]] = {}
        self.views = _Views(estate)
        #: whether a bulk history was generated (:meth:`generate`)
        self.bulk = False

    def generate(self, shapes: list[dict[str, Any]], rows: int, distinct: bool = False) -> None:
        """``rows`` statements of the past 30 days made from ``shapes`` (each: executed_by,
        client_application, query_tags, statement_text, source_table_full_name, columns: the
        column names it reads), one statement a shape in turn, one second apart, each with its
        own statement_id; table lineage one row a statement, column lineage one a column read;
        ``distinct``: each statement's text its own (a comment with its number)."""
        start = _stamp(self.clock.start)
        when = f"TIMESTAMPTZ '{start}' - INTERVAL (i) SECOND"
        common = [
            {**sh, "execution_status": "FINISHED", "statement_type": "SELECT",
             "source_type": "TABLE", "created_by": sh["executed_by"]}
            for sh in shapes
        ]  # fmt: skip
        text = (
            {"statement_text": "s.\"statement_text\" || ' /* ' || i || ' */'"} if distinct else {}
        )
        generate(self.estate, "__bulk_statements", QUERY_HISTORY_DBX, common, rows, {
            "statement_id": "'bulk-' || i", "start_time": when, "end_time": when, **text,
        })  # fmt: skip
        generate(self.estate, "__bulk_table_lineage", LINEAGE, common, rows, {
            "statement_id": "'bulk-' || i", "event_time": when,
        })  # fmt: skip
        per_column = [
            {**sh, "source_column_name": c, "__shape": n}
            for n, sh in enumerate(common)
            for c in sh.get("columns") or []
        ]
        # column lineage: each statement's columns (shape n's columns for statement i)
        with self.estate.lock:
            db = self.estate.db
            generate(self.estate, "__bulk_column_shapes", [*LINEAGE, ("__shape", "BIGINT")],
                     per_column, len(per_column), {})  # fmt: skip
            vary = {"statement_id": "'bulk-' || i", "event_time": when}
            names = ", ".join(
                f'CAST({vary.get(c, "c." + chr(34) + c + chr(34))} AS {t}) AS "{c}"'
                for c, t in LINEAGE
            )
            db.execute('DROP TABLE IF EXISTS "__bulk_column_lineage"')
            db.execute(
                f'CREATE TABLE "__bulk_column_lineage" AS SELECT {names} FROM range({int(rows)}) '
                f"AS t(i) JOIN __bulk_column_shapes AS c ON c.__shape = t.i % {len(shapes)}"
            )
            db.execute("DROP TABLE __bulk_column_shapes")
        self.bulk = True

    def user(self, token: str, persona: str) -> str:
        return self.users_of_tokens.get(token) or persona or "accord-ci@example.com"

    def answered(
        self, token: str, persona: str, user_agent: str, body: dict[str, Any], sid: str
    ) -> None:
        statement = str(body.get("statement") or "")
        try:
            tree = sqlglot.parse_one(statement, read="databricks")
        except sqlglot.errors.SqlglotError:
            return
        if not isinstance(tree, exp.Query):
            return
        read = _tables_read(tree, self.estate)
        if not read:
            return
        user, when = self.user(token, persona), self.clock()
        tags = {
            str(t.get("key")): t.get("value")
            for t in body.get("query_tags") or []
            if isinstance(t, dict) and t.get("key")
        }
        product = user_agent.split()[0].split("/")[0] if user_agent.split() else ""
        self.statements.append(
            {
                "statement_id": sid,
                "execution_status": "FINISHED",
                "executed_by": user,
                "statement_text": statement,
                "statement_type": "SELECT",
                "client_application": product,
                "client_driver": user_agent,
                "query_tags": json.dumps(tags, sort_keys=True) if tags else None,
                "start_time": when,
                "end_time": when,
            }
        )
        for t, cols in read:
            catalog, schema, name = t.name.split(".")
            row = {
                "entity_type": None,
                "source_table_full_name": t.name,
                "source_table_catalog": catalog,
                "source_table_schema": schema,
                "source_table_name": name,
                "source_type": "TABLE",
                "created_by": user,
                "event_time": when,
                "statement_id": sid,
            }
            self.table_lineage.append(row)
            self.column_lineage += [{**row, "source_column_name": c} for c in cols]

    def may_read(self, table: str) -> bool:
        """Whether the caller may read a system table: USE CATALOG on ``system``, USE SCHEMA
        and SELECT on the table or its schema (docs.databricks.com/aws/en/admin/system-tables:
        "users must be granted USE and SELECT permissions on the system schemas"), or is an
        admin or an owner."""
        estate, who = self.estate, self.estate.caller
        catalog, schema, _ = table.split(".")
        return (
            estate.holds(who, "CATALOG", catalog, "USE_CATALOG")
            and estate.holds(who, "SCHEMA", f"{catalog}.{schema}", "USE_SCHEMA")
            and estate.holds(who, "TABLE", table, "SELECT")
        )

    def view(self, statement: str) -> tuple[list[str], list[tuple[Any, ...]]] | SqlError | None:
        """The answer to a statement reading system.query / system.access, else None; the
        refusal (answered as the statement's failure) when the caller may not read a system
        table it names."""
        low = statement.lower()
        if "system.query." not in low and "system.access." not in low:
            return None
        tree = sqlglot.parse_one(statement, read="databricks")
        for node in tree.find_all(exp.Table):
            name = ".".join(p for p in (node.catalog, node.db, node.name) if p).lower()
            if name.startswith("system.") and name.count(".") == 2 and not self.may_read(name):
                return SqlError(
                    "PERMISSION_DENIED", "42501",
                    "[INSUFFICIENT_PERMISSIONS] Insufficient privileges: User does not have "
                    f"SELECT on Table '{name}'. SQLSTATE: 42501",
                )  # fmt: skip
        bulk = self.bulk
        tables = {
            "SYSTEM.QUERY.HISTORY": self.views.table(
                QUERY_HISTORY_DBX, self.statements, "__bulk_statements" if bulk else ""
            ),
            "SYSTEM.ACCESS.TABLE_LINEAGE": self.views.table(
                LINEAGE, self.table_lineage, "__bulk_table_lineage" if bulk else ""
            ),
            "SYSTEM.ACCESS.COLUMN_LINEAGE": self.views.table(
                LINEAGE, self.column_lineage, "__bulk_column_lineage" if bulk else ""
            ),
        }
        return self.views.run(tree, tables)

    def scim_page(self, path: str, query: str) -> dict[str, Any] | None:
        kind = path.rstrip("/").rsplit("/", 1)[-1]
        if kind not in ("Users", "ServicePrincipals"):
            return None
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        if params.get("startIndex", "1") != "1":
            return {"Resources": [], "totalResults": 0}
        table = self.users if kind == "Users" else self.service_principals
        key = "userName" if kind == "Users" else "applicationId"
        resources = [
            {"id": f"{kind}-{i}", key: name, "groups": [{"display": g, "value": g} for g in gs]}
            for i, (name, gs) in enumerate(sorted(table.items()), start=1)
        ]
        return {"Resources": resources, "totalResults": len(resources), "startIndex": 1}
