"""The platforms' access history, read through the live connections into :class:`Read` records.

**Snowflake** — one statement over three ACCOUNT_USAGE views, joined as documented:

* ``SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY`` (docs.snowflake.com/en/sql-reference/account-usage/
  access_history): ``QUERY_ID``, ``QUERY_START_TIME``, ``USER_NAME``, ``DIRECT_OBJECTS_ACCESSED``
  and ``BASE_OBJECTS_ACCESSED`` (JSON arrays of ``{objectDomain, objectName, objectId,
  columns: [{columnId, columnName}]}``) and ``POLICIES_REFERENCED``. The base objects are the
  tables a query read, under any view it named, so they are what is mapped to datasets;
* ``SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY`` (sql-reference/account-usage/query_history):
  ``QUERY_ID``, ``QUERY_TEXT``, ``SESSION_ID``, ``ROLE_NAME`` ("role that was active in the
  session at the time of the query"), ``QUERY_TAG`` and ``SECONDARY_ROLE_STATS`` ("a
  JSON-formatted string that contains three fields regarding secondary roles that were
  evaluated in the query: a list of secondary roles or ``ALL`` depending on the session, a
  count ..., and the internal/system-generated ID for each"; the list is read from its
  ``roles`` field, a comma-separated string or an array; NULL is none; a value that cannot
  be read makes the read unmappable, never a guess). ``ALL`` is every role granted to the
  user (docs.snowflake.com/en/sql-reference/sql/use-secondary-roles), read from
  ``SNOWFLAKE.ACCOUNT_USAGE.GRANTS_TO_USERS`` (``ROLE``, ``GRANTEE_NAME``, ``DELETED_ON``:
  the grants as they are now, not as they were at the query);
* ``SNOWFLAKE.ACCOUNT_USAGE.SESSIONS`` (sql-reference/account-usage/sessions): ``SESSION_ID``,
  ``CLIENT_APPLICATION_ID`` (e.g. ``JDBC 3.8.7``) and ``CLIENT_ENVIRONMENT`` (JSON, with the
  connection's ``APPLICATION``), which say the client.

Latency: the views' pages say up to three hours (QUERY_HISTORY: "latency for the view may be
up to 180 minutes"); a window that ends now misses the last hours' reads.

**Databricks** — ``system.query.history`` (docs.databricks.com/aws/en/admin/system-tables/
query-history: ``statement_id``, ``start_time``, ``executed_by``, ``execution_status``,
``client_application``, ``query_tags``, ``statement_text``) joined on ``statement_id`` with
``system.access.table_lineage`` (the tables read) and ``system.access.column_lineage`` (their
columns) (admin/system-tables/lineage: ``source_table_full_name``, ``source_column_name``,
``source_type``). Lineage holds a subset of reads ("records are only emitted when lineage can
be inferred"); query history records are "typically available within one hour". A user's
account groups come from the workspace's SCIM users and service principals (their
``groups``), through the SDK (``users.list``, ``service_principals.list``).

Every statement goes through :mod:`compiler.connect.executor` (timeouts, denials); the rows
are turned into records here, with nothing dropped: an object this module cannot read is
counted in :attr:`Source.skipped` with why.

**Grouped on the platform.** A month of history is millions of rows, most of them the same
read again (a dashboard's statement, an agent's): one statement per platform groups the
window's queries on the warehouse that holds the history and returns one row per *kind of
read*: the same identity (Snowflake: user, role, secondary roles; Databricks: the user), the
same client and query tag, the same objects and columns (Snowflake: the objects accessed, as
their JSON; Databricks: one table, with the columns column lineage gives for it) and the same
statement text, which holds the filter the entitlement value is read from. Each row carries
the number of queries of its kind and its last time; beside them, computed over every kind
of the window before the bound cuts (window functions over the grouped rows), the window's
queries and kinds. Nothing is dropped by the grouping: a kind's count is every query of it.
On Databricks a query is counted once per table it read (lineage gives reads per table).

**The bound.** The grouped statement returns at most :data:`MAX_HISTORY_ROWS` kinds of read,
the most recently seen first. A window that holds more is read in part, and the source says
so (:meth:`Source.cannot_see`: the kinds last seen before the cut are not read; how many
queries and kinds the window holds and how many were read), and the sample is not complete.
What accord holds is bounded by it, whatever the window's length; a kind is read whole or
not at all. A shorter ``--since`` reads a long window whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from accord.compiler.connect.executor import ExecutionError, as_reader

#: the documented latency of each source, said in every report
LATENCY = {
    "snowflake": (
        "the ACCOUNT_USAGE views (ACCESS_HISTORY, QUERY_HISTORY, SESSIONS) lag up to 3 hours: "
        "the last hours of the window may be missing"
    ),
    "databricks": (
        "system.query.history records are typically available within one hour; the lineage "
        "tables hold only the reads lineage could be inferred for"
    ),
}
VIEWS = {
    "snowflake": [
        "SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY",
        "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY",
        "SNOWFLAKE.ACCOUNT_USAGE.SESSIONS",
        "SNOWFLAKE.ACCOUNT_USAGE.GRANTS_TO_USERS (for secondary roles ALL)",
    ],
    "databricks": [
        "system.query.history",
        "system.access.column_lineage",
        "system.access.table_lineage",
        "SCIM users and service principals (groups)",
    ],
}


@dataclass(frozen=True)
class Read:
    """One table read by one query, as the history says."""

    platform: str
    query_id: str
    #: when the query started, ISO 8601 in UTC
    time: str
    #: Snowflake USER_NAME, Databricks executed_by
    user: str
    #: the table as the history names it
    table: str
    #: the columns of it the query read, as the history names them
    columns: tuple[str, ...]
    #: Snowflake: the primary role, then the secondary roles
    roles: tuple[str, ...] = ()
    #: Databricks: the account groups of the user (None: unknown, with ``why``)
    groups: tuple[str, ...] | None = None
    #: Snowflake: the QUERY_TAG; Databricks: each query tag as KEY:VALUE (and KEY)
    tags: tuple[str, ...] = ()
    #: the client names to compare with ``traffic.client``
    clients: tuple[str, ...] = ()
    #: the statement's text (the entitlement value it filtered on is read from it)
    text: str = ""
    #: the policies the platform says it applied (Snowflake POLICIES_REFERENCED)
    policies: tuple[str, ...] = ()
    #: why the read's identity cannot be told (set when the history is not readable)
    why: str | None = None
    #: why the objects the query read cannot be read (its table is then unknown): the read is
    #: unmappable, never dropped
    unreadable: str | None = None
    #: the queries this read stands for: the platform grouped them (the same user, roles,
    #: client, tag, text and objects); ``time`` is the last one's, ``query_id`` the greatest
    #: of the kind (for a stable order)
    count: int = 1


@dataclass
class Source:
    """What was read from one platform's history, and what could not be: its ``to_json`` is
    the ``coverage`` object every live command's machine output carries (``platform``,
    ``reader``, ``privileges``, ``read``, ``complete``, ``unseen``), with the views read and
    their latency."""

    platform: str
    views: list[str]
    latency: str
    read: bool = False
    why: str | None = None
    #: the queries read: what the kinds of read returned stand for (Databricks: a query once
    #: per table it read)
    queries: int = 0
    #: the kinds of read returned (at most :data:`MAX_HISTORY_ROWS`)
    kinds: int = 0
    #: the queries and kinds of read of the whole window, as the platform counted them before
    #: the bound (equal to :attr:`queries` and :attr:`kinds` when the window is read whole)
    window_queries: int = 0
    window_kinds: int = 0
    #: objects of the history this module does not map (not tables: functions, stages),
    #: counted by kind, never silently dropped
    skipped: dict[str, int] = field(default_factory=dict)
    #: (what, why, what is therefore not proven) for each thing that could not be read
    unseen: list[tuple[str, str, str]] = field(default_factory=list)

    def cannot_see(self, what: str, why: str, unproven: str) -> None:
        if (what, why, unproven) not in self.unseen:
            self.unseen.append((what, why, unproven))

    def to_json(self) -> dict[str, Any]:
        read: dict[str, int] = {"queries": self.queries}
        if self.read:
            read |= {
                "kinds of read": self.kinds,
                "queries in the window": self.window_queries,
                "kinds of read in the window": self.window_kinds,
            }
        read |= {f"skipped {k}": n for k, n in self.skipped.items()}
        return {
            "platform": self.platform,
            "reader": "",
            "privileges": [],
            "read": dict(sorted(read.items())),
            "complete": self.read and not self.unseen,
            "unseen": [{"what": w, "why": y, "unproven": u} for w, y, u in sorted(self.unseen)],
            "views": self.views,
            "latency": self.latency,
        }


Query = Callable[[str], list[dict[str, Any]]]


def _time(value: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="milliseconds")
    text = str(value or "")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return _time(parsed)


#: the most rows the grouped history statement returns: kinds of read, the most recently seen
#: first; the window's other kinds are not read, and said so
MAX_HISTORY_ROWS = 20_000


def bounded(rows: list[dict[str, Any]], source: Source, time_key: str) -> list[dict[str, Any]]:
    """``rows`` (kinds of read, the most recently seen first, at most
    :data:`MAX_HISTORY_ROWS` + 1) cut to the bound, and turned oldest first. ``source`` is
    told what was read (:attr:`Source.queries`, :attr:`Source.kinds`) and what the window
    holds (``window_queries`` and ``window_kinds`` of the rows, never less than what was
    read); when there were more kinds than the bound, which were not read. A kind of read is
    one row, whole: the bound never reads part of one."""
    kept = rows[:MAX_HISTORY_ROWS]
    source.kinds = len(kept)
    source.queries = sum(count(r) for r in kept)
    first = rows[0] if rows else {}
    source.window_queries = max(_int(first.get("window_queries")), sum(count(r) for r in rows))
    source.window_kinds = max(_int(first.get("window_kinds")), len(rows))
    if len(rows) <= MAX_HISTORY_ROWS:
        return kept[::-1]
    cut = rows[MAX_HISTORY_ROWS]
    kinds = (
        f"{source.window_kinds:,} kinds of read (grouped on the platform), more than "
        f"{MAX_HISTORY_ROWS:,},"
        if source.window_kinds > MAX_HISTORY_ROWS + 1
        else f"more than {MAX_HISTORY_ROWS:,} kinds of read (grouped on the platform)"
    )
    source.cannot_see(
        f"the {source.platform} kinds of read last seen at or before {_time(cut.get(time_key))}",
        f"the window holds {source.window_queries:,} queries in {kinds} and accord probe "
        f"sample reads the newest {MAX_HISTORY_ROWS:,} ({source.queries:,} of the queries; a "
        "shorter --since reads a window whole)",
        "the coverage of the probes by the reads of those kinds",
    )
    return kept[::-1]


def count(row: dict[str, Any]) -> int:
    """The queries a grouped row stands for (``queries``; at least one)."""
    return max(1, _int(row.get("queries"), 1))


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _json(value: Any) -> Any:
    if value is None or isinstance(value, list | dict):
        return value
    try:
        return json.loads(str(value))
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------
# Snowflake


#: what makes two Snowflake queries the same kind of read (ACCESS_HISTORY, QUERY_HISTORY and
#: SESSIONS columns, documented above). The ARRAY columns are grouped as their JSON text
#: (TO_JSON "converts any VARIANT value to a string containing the JSON representation":
#: docs.snowflake.com/en/sql-reference/functions/to_json)
SNOWFLAKE_KIND = {
    "USER_NAME": "ah.USER_NAME",
    "ROLE_NAME": "qh.ROLE_NAME",
    "SECONDARY_ROLE_STATS": "qh.SECONDARY_ROLE_STATS",
    "QUERY_TAG": "qh.QUERY_TAG",
    "QUERY_TEXT": "qh.QUERY_TEXT",
    "CLIENT_APPLICATION_ID": "s.CLIENT_APPLICATION_ID",
    "CLIENT_ENVIRONMENT": "s.CLIENT_ENVIRONMENT",
    "DIRECT_OBJECTS_ACCESSED": "TO_JSON(ah.DIRECT_OBJECTS_ACCESSED)",
    "BASE_OBJECTS_ACCESSED": "TO_JSON(ah.BASE_OBJECTS_ACCESSED)",
    "POLICIES_REFERENCED": "TO_JSON(ah.POLICIES_REFERENCED)",
}


def _bounded_kinds(kinds: str, time: str, ident: str) -> str:
    """The grouped rows ``kinds`` (a query), each with the window's queries and kinds (window
    functions with an empty ``OVER ()``: one partition, every grouped row, computed before
    ``LIMIT``), the most recently seen first, cut to the bound (one more row says it was
    reached)."""
    return (
        f"WITH kinds AS ({kinds}) "
        "SELECT kinds.*, SUM(kinds.queries) OVER () AS window_queries, "
        "COUNT(*) OVER () AS window_kinds FROM kinds "
        f"ORDER BY kinds.{time} DESC, kinds.{ident} DESC LIMIT {MAX_HISTORY_ROWS + 1}"
    )


def snowflake_statement(days: int) -> str:
    """The window's queries grouped into kinds of read, the most recently seen first."""
    return _bounded_kinds(
        "SELECT "
        + ", ".join(f"{e} AS {name}" for name, e in SNOWFLAKE_KIND.items())
        + ", COUNT(*) AS queries, MAX(ah.QUERY_START_TIME) AS QUERY_START_TIME, "
        "MAX(ah.QUERY_ID) AS QUERY_ID "
        "FROM SNOWFLAKE.ACCOUNT_USAGE.ACCESS_HISTORY AS ah "
        "JOIN SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY AS qh ON qh.QUERY_ID = ah.QUERY_ID "
        "LEFT JOIN SNOWFLAKE.ACCOUNT_USAGE.SESSIONS AS s ON s.SESSION_ID = qh.SESSION_ID "
        f"WHERE ah.QUERY_START_TIME >= DATEADD(day, -{int(days)}, CURRENT_TIMESTAMP()) "
        f"GROUP BY {', '.join(SNOWFLAKE_KIND.values())}",
        "QUERY_START_TIME",
        "QUERY_ID",
    )


#: SECONDARY_ROLE_STATS says ``ALL``: every role granted to the user
ALL = "ALL"


def secondary_roles(value: Any) -> tuple[str, ...] | str | None:
    """The role names of SECONDARY_ROLE_STATS; () for NULL; :data:`ALL`; None when it cannot
    be read."""
    if value is None or value == "":
        return ()
    doc = _json(value)
    if not isinstance(doc, dict):
        return None
    roles = doc.get("roles")
    if roles is None or roles == "":
        return ()
    if isinstance(roles, str):
        roles = [r.strip() for r in roles.split(",") if r.strip()]
    if isinstance(roles, list) and all(isinstance(r, str) for r in roles):
        return ALL if [r.upper() for r in roles] == [ALL] else tuple(roles)
    return None


def grants_statement() -> str:
    return (
        "SELECT GRANTEE_NAME, ROLE FROM SNOWFLAKE.ACCOUNT_USAGE.GRANTS_TO_USERS "
        "WHERE DELETED_ON IS NULL ORDER BY GRANTEE_NAME, ROLE"
    )


def user_grants(query: Query) -> dict[str, tuple[str, ...]]:
    """UPPER user -> the roles granted to it now."""
    out: dict[str, list[str]] = {}
    for row in query(grants_statement()):
        out.setdefault(str(row.get("grantee_name") or "").upper(), []).append(str(row.get("role")))
    return {u: tuple(sorted(set(r))) for u, r in out.items()}


def snowflake_clients(app_id: Any, environment: Any) -> tuple[str, ...]:
    """CLIENT_APPLICATION_ID (whole, and its first word) and the environment's APPLICATION."""
    out: list[str] = []
    if app_id:
        out += [str(app_id), str(app_id).split()[0]]
    env = _json(environment)
    if isinstance(env, dict):
        app = env.get("APPLICATION") or env.get("application")
        if isinstance(app, str) and app:
            out.append(app)
    return tuple(dict.fromkeys(out))


def snowflake_reads(query: Query, days: int, source: Source) -> list[Read]:
    rows = bounded(query(snowflake_statement(days)), source, "query_start_time")
    grants: dict[str, tuple[str, ...]] | None = None
    grants_why = ""
    if any(secondary_roles(r.get("secondary_role_stats")) == ALL for r in rows):
        try:
            grants = user_grants(query)
        except ExecutionError as err:
            grants_why = " ".join(as_reader(err).split())
    out: list[Read] = []
    for row in rows:
        objects, unreadable = _objects(row)
        policies = _json(row.get("policies_referenced")) or []
        applied = tuple(
            sorted(
                {
                    str(p.get("policyName"))
                    for p in _policy_entries(policies)
                    if isinstance(p, dict) and p.get("policyName")
                }
            )
        )
        secondary = secondary_roles(row.get("secondary_role_stats"))
        primary = str(row.get("role_name") or "")
        user = str(row.get("user_name") or "")
        why = None
        if secondary is None:
            why = "its SECONDARY_ROLE_STATS cannot be read, so its roles are not known"
            secondary = ()
        elif secondary == ALL:
            if grants is None:
                why = (
                    "secondary roles ALL, and the roles granted to the user cannot be read "
                    f"from GRANTS_TO_USERS ({grants_why})"
                )
                secondary = ()
            else:
                secondary = tuple(r for r in grants.get(user.upper(), ()) if r != primary)
        if unreadable is not None:
            source.cannot_see(
                "the tables some queries read", unreadable, "the coverage of those reads"
            )
            out.append(
                Read(
                    platform="snowflake",
                    query_id=str(row.get("query_id") or ""),
                    time=_time(row.get("query_start_time")),
                    user=user,
                    table="(unknown)",
                    columns=(),
                    roles=tuple(r for r in (primary, *secondary) if r),
                    unreadable=f"the tables the query read are not known ({unreadable})",
                    count=count(row),
                )
            )
        for obj in objects:
            domain = str(obj.get("objectDomain") or "")
            if domain.lower() != "table":
                key = f"{domain or 'unknown'} objects (no data a probe asks about)"
                source.skipped[key] = source.skipped.get(key, 0) + count(row)
                continue
            listed = obj.get("columns") or []
            if not isinstance(listed, list):
                source.cannot_see(
                    "the columns of some reads",
                    "the history gives their columns as something other than a list",
                    "which columns those reads touched",
                )
                listed = []
            columns = tuple(
                str(c.get("columnName"))
                for c in listed
                if isinstance(c, dict) and c.get("columnName")
            )
            out.append(
                Read(
                    platform="snowflake",
                    query_id=str(row.get("query_id") or ""),
                    time=_time(row.get("query_start_time")),
                    user=user,
                    table=str(obj.get("objectName") or ""),
                    columns=columns,
                    roles=tuple(r for r in (primary, *secondary) if r),
                    tags=(str(row["query_tag"]),) if row.get("query_tag") else (),
                    clients=snowflake_clients(
                        row.get("client_application_id"), row.get("client_environment")
                    ),
                    text=str(row.get("query_text") or ""),
                    policies=applied,
                    why=why,
                    count=count(row),
                )
            )
    return out


def _objects(row: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The objects a history row read: BASE_OBJECTS_ACCESSED (the tables under any view),
    else DIRECT_OBJECTS_ACCESSED when it lists none; and why they cannot be read, when a value
    is not a JSON array of objects (then nothing of the row is mapped, and it is said)."""
    for key in ("base_objects_accessed", "direct_objects_accessed"):
        raw = row.get(key)
        if raw is None or raw == "":
            continue
        doc = _json(raw)
        if not isinstance(doc, list) or not all(isinstance(o, dict) for o in doc):
            return [], f"{key.upper()} cannot be read: not a JSON array of objects"
        if doc:
            return doc, None
    return [], None


def _policy_entries(policies: Any) -> list[Any]:
    """POLICIES_REFERENCED: objects whose ``policies`` (or columns' ``policies``) list the
    policies, each with ``policyName``; flattened."""
    out: list[Any] = []
    stack = list(policies) if isinstance(policies, list) else [policies]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "policyName" in node:
                out.append(node)
            stack.extend(v for v in node.values() if isinstance(v, list | dict))
        elif isinstance(node, list):
            stack.extend(node)
    return out


# --------------------------------------------------------------------------------------------
# Databricks


#: what makes two Databricks statements' reads of a table the same kind of read (the
#: query history's and table lineage's columns, documented above); ``query_tags`` (a map,
#: which cannot be grouped) as its JSON text (to_json: docs.databricks.com/aws/en/sql/
#: language-manual/functions/to_json, ``to_json(map('a', 1))``)
DATABRICKS_KIND = {
    "executed_by": "h.executed_by",
    "client_application": "h.client_application",
    "query_tags": "to_json(h.query_tags)",
    "statement_text": "h.statement_text",
    "source_table_full_name": "t.source_table_full_name",
}


def databricks_statement(days: int) -> str:
    """The window's table reads grouped into kinds of read, the most recently seen first:
    each with the statements that made it (counted once each, however many lineage rows they
    have) and the columns column lineage gives for them, as the JSON of a struct
    ``{"columns": [...]}`` (to_json takes a STRUCT)."""
    return _bounded_kinds(
        "SELECT "
        + ", ".join(f"{e} AS {name}" for name, e in DATABRICKS_KIND.items())
        + ", count(DISTINCT h.statement_id) AS queries, max(h.start_time) AS start_time, "
        "max(h.statement_id) AS statement_id, to_json(named_struct('columns', "
        "array_sort(collect_set(c.source_column_name)))) AS source_columns "
        "FROM system.query.history AS h "
        "JOIN system.access.table_lineage AS t ON t.statement_id = h.statement_id "
        "LEFT JOIN system.access.column_lineage AS c ON c.statement_id = t.statement_id "
        "AND c.source_table_full_name = t.source_table_full_name "
        f"WHERE h.start_time >= current_timestamp() - INTERVAL {int(days)} DAYS "
        "AND h.execution_status = 'FINISHED' AND t.source_table_full_name IS NOT NULL "
        f"GROUP BY {', '.join(DATABRICKS_KIND.values())}",
        "start_time",
        "statement_id",
    )


def query_tags(value: Any) -> tuple[str, ...]:
    """``query_tags`` (a map of key to value): each as KEY:VALUE, and KEY alone."""
    doc = _json(value)
    out: list[str] = []
    if isinstance(doc, dict):
        for k, v in sorted(doc.items(), key=lambda kv: str(kv[0])):
            out += [f"{k}:{v}" if v not in (None, "") else str(k), str(k)]
    elif isinstance(doc, list):  # an array of {key, value} entries
        for e in doc:
            if isinstance(e, dict) and "key" in e:
                v = e.get("value")
                out += [f"{e['key']}:{v}" if v not in (None, "") else str(e["key"]), str(e["key"])]
    return tuple(dict.fromkeys(out))


def databricks_reads(
    query: Query, days: int, source: Source, groups_of: Callable[[str], tuple[str, ...] | None]
) -> list[Read]:
    """The reads of the window, one per kind of read (a table read by the same user, client,
    tags and text), with the columns lineage gives for it."""
    out: list[Read] = []
    for row in bounded(query(databricks_statement(days)), source, "start_time"):
        user = str(row.get("executed_by") or "")
        app = str(row.get("client_application") or "")
        doc = _json(row.get("source_columns"))
        columns = doc.get("columns") if isinstance(doc, dict) else None
        if not isinstance(columns, list):
            source.cannot_see(
                "the columns of some reads",
                "the grouped history gives their columns as something other than a list",
                "which columns those reads touched",
            )
            columns = []
        out.append(
            Read(
                platform="databricks",
                query_id=str(row.get("statement_id") or ""),
                time=_time(row.get("start_time")),
                user=user,
                table=str(row.get("source_table_full_name") or ""),
                columns=tuple(dict.fromkeys(str(c) for c in columns if c)),
                groups=groups_of(user),
                tags=query_tags(row.get("query_tags")),
                clients=(app,) if app else (),
                text=str(row.get("statement_text") or ""),
                count=count(row),
            )
        )
    return out


def scim_directory(client: Any) -> dict[str, tuple[str, ...]]:
    """user name or service principal application id (lower case) -> its groups' names."""
    out: dict[str, tuple[str, ...]] = {}
    for user in client.users.list(attributes="userName,groups"):
        if user.user_name:
            out[user.user_name.lower()] = tuple(
                sorted(g.display for g in (user.groups or []) if g.display)
            )
    for sp in client.service_principals.list(attributes="applicationId,displayName,groups"):
        names = [n for n in (sp.application_id, sp.display_name) if n]
        for n in names:
            out.setdefault(
                n.lower(), tuple(sorted(g.display for g in (sp.groups or []) if g.display))
            )
    return out
