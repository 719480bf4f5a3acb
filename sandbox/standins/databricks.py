"""A Databricks workspace for the real ``WorkspaceClient``: the Unity Catalog and statement
execution REST endpoints accord's introspection and executor call.

Payload field names are the SDK's own (databricks/sdk/service/catalog.py: TableInfo,
ColumnInfo.mask = ColumnMask{function_name, using_column_names}, TableRowFilter{function_name,
input_column_names}, FunctionInfo{full_name, input_params.parameters[{name, type_text,
type_name, position}], data_type, full_data_type, routine_definition, comment},
GetPermissionsResponse.privilege_assignments[{principal, privileges}], PolicyInfo,
EntityTagAssignment; service/sql.py: StatementResponse{statement_id, status{state, error
{error_code, message}}, manifest.schema.columns, result.data_array}).

Failure modes for tests: ``forbidden`` (path prefixes answered 403 PERMISSION_DENIED),
``fail_on`` (statements answered FAILED with HTTP 200), ``hang_on`` (statements that stay
RUNNING on every poll).

Privileges (issue 20): the caller is a principal (``reader`` unless ``tokens`` name another);
``admins`` see everything, as a metastore admin does (the default reader is one, so the suite's
older tests read as before). Anyone else sees by ownership (``owners``, the deployer owning
what it made) and by grants (``privileges``: (securable type, name, privilege, principal),
inherited downward from catalog to schema to table and function, as GrantsAPI says): fact 9,
``grants.get`` answers the securable's own grants only and ``grants.get_effective`` adds the
inherited ones (``inherited_from_type``, ``inherited_from_name``), both paged by
``grant_page_size`` assignments with ``next_page_token``; fact 10, a statement's rows come in
chunks of ``chunk_rows`` (``result.next_chunk_index``, the rest through
``/result/chunks/{n}``); fact 11, ``functions.list`` lists only the functions the caller owns
or may EXECUTE (all of them to an admin or the owner of the schema or catalog); fact 12, ABAC
GRANT and DENY policies (:meth:`DatabricksEstate.add_grant_policy`) are listed with the row
filters and column masks; fact 14, a failed statement carries ``status.sql_state`` (with
``terse_errors`` its message says nothing else); fact 15, SQL privileges are spelled with
spaces (``ALL PRIVILEGES``), ``ALL_PRIVILEGES`` is a syntax error. Viewing ABAC policies needs
MANAGE or READ METADATA (or ownership) on the securable, a grant listing MANAGE or ownership,
a table's metadata any privilege on it; information_schema rows are those of tables the
caller may see. The reading principal's statements need SELECT on the tables they read.

Hostile servers (issue 22 item 17): ``drip_on`` (path prefixes whose answer is sent one byte
at a time, slower than any deadline) and ``endless_on`` (path prefixes that answer an empty
page with a fresh ``next_page_token`` forever).

Groups (issue 26): account groups nested in account groups (:meth:`DatabricksEstate.nest`,
as an administrator nests them), served by the workspace's SCIM Groups API
(:meth:`DatabricksEstate.scim_groups`: a group's members to a workspace admin only; account
groups not assigned to the workspace not listed), and ``is_account_group_member`` true for
direct and indirect members.

Personas: with ``tokens`` (bearer token -> persona, one SDK profile per persona, as
``probe_profiles`` configures) a POST without a known token is answered 401, and with
``answer`` a statement is answered by ``answer(persona, statement)`` (its rows, or a SqlError
that comes back FAILED) instead of by the estate; ``statement_requests`` keeps each statement
request with its persona. Without ``answer``, a persona's statement runs on the estate with
``is_account_group_member`` seeing the account groups ``member_of`` gives the persona's
principal (``accord sandbox``: one principal and token per persona, as a workspace knows its
users' groups).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs

from sqlglot import exp

from accord.sandbox.standins.databricks_http import handler_for
from accord.sandbox.standins.databricks_owners import OwnershipMixin
from accord.sandbox.standins.engine import Estate, SqlError, TagDef, missing
from accord.sandbox.standins.http import serve

#: answers a statement for a persona with its rows (or raises SqlError)
Answer = Callable[[str, str], list[tuple[Any, ...]]]

TYPE_NAMES = {"STRING": "STRING", "BOOLEAN": "BOOLEAN", "INT": "INT", "BIGINT": "LONG"}


class DatabricksEstate(OwnershipMixin, Estate):
    def __init__(self, owner: str = "accord-deployer") -> None:
        super().__init__("databricks", owner)
        self.forbidden: list[str] = []
        self.fail_on: list[str] = []
        self.hang_on: list[str] = []
        #: statements answered with a final state other than SUCCEEDED (CANCELED, CLOSED)
        self.state_on: dict[str, str] = {}
        #: statement id -> the last answer (what GET /api/2.0/sql/statements/{id} returns)
        self.statements: dict[str, dict[str, Any]] = {}
        #: bearer token -> persona; when empty, any caller is let in
        self.tokens: dict[str, str] = {}
        #: when set, the tokens a workspace accepts (besides ``tokens``): any other bearer
        #: token is answered 403 ``Invalid access token.``, as a workspace answers an invalid
        #: personal access token on every API (databricks-sdk-go issue 873 shows the answer)
        self.accepted: set[str] = set()
        #: when set, statements are answered by it, not by the estate
        self.answer: Answer | None = None
        #: principal -> the account groups it is a member of: its statements (its token named
        #: in ``tokens``) see them through ``is_account_group_member``, which asks about "the
        #: current user" (sql/language-manual/functions/is_account_group_member); a principal
        #: not listed sees :attr:`Estate.session`
        self.member_of: dict[str, set[str]] = {}
        #: each POST /api/2.0/sql/statements: {"persona": ..., "body": ...}
        self.statement_requests: list[dict[str, Any]] = []
        #: the principal that calls when no token names a persona (current_user.me's userName)
        self.reader = "accord-ci@example.com"
        #: principals that see everything (metastore admins)
        self.admins: set[str] = {self.reader}
        #: principals holding READ METADATA on the metastore: they list its ABAC policies
        self.metastore_readers: set[str] = set()
        #: (securable type, lower-case full name, privilege as the REST enum, principal)
        self.privileges: set[tuple[str, str, str, str]] = set()
        #: (securable type, lower-case full name) -> owner, for catalogs and schemas
        self.owners: dict[tuple[str, str], str] = {}
        #: rows per statement result chunk (None: every row in the first chunk)
        self.chunk_rows: int | None = None
        #: privilege assignments per page of grants.get / get_effective
        self.grant_page_size = 1
        #: each grants request: (path, query)
        self.grant_requests: list[tuple[str, str]] = []
        #: failed statements carry only ``status.sql_state``, no code or bracketed class
        self.terse_errors = False
        #: information_schema column names: "reference" (the documentation's) or "adapter"
        #: (table_catalog, table_schema, ..., target_columns, using_columns)
        self.info_schema_names = "reference"
        #: whether information_schema.abac_policy_definitions exists (a Public Preview: where
        #: it is not enabled, the view is not found)
        self.abac_definitions = True
        self.drip_on: list[str] = []
        self.endless_on: list[str] = []
        self._local = threading.local()
        #: every request: (method, path)
        self.requests: list[tuple[str, str]] = []
        #: the last chunk of a multi-chunk result is not named by the one before it
        self.drop_last_chunk = False
        #: set when the workspace stops serving (a drip ends then)
        self.stopped = False
        #: seconds every request waits before it is answered (a real workspace's round trip,
        #: for the benchmarks)
        self.latency = 0.0
        #: group display name -> the groups nested in it (its members that are groups)
        self.group_members: dict[str, set[str]] = {}
        #: group display name -> ``meta.resourceType``: ``Group`` (an account group assigned
        #: to the workspace, the default) or ``WorkspaceGroup`` (a legacy workspace-local one)
        self.group_kinds: dict[str, str] = {}
        #: groups the workspace's SCIM API does not list (account groups not assigned to it)
        self.unassigned_groups: set[str] = set()
        #: workspace admins (not the metastore's: SCIM is the workspace's), who may read the
        #: members of a group
        self.workspace_admins: set[str] = {self.reader}

    def requests_seen(self) -> list[tuple[str, str]]:
        return list(self.requests)

    # ------------------------------------------------------------------ groups
    # An admin nests groups in groups (account console or SCIM PATCH); accord never does.

    def nest(self, child: str, parent: str) -> None:
        """Make group ``child`` a member of group ``parent``."""
        self.group_members.setdefault(parent, set()).add(child)
        self.group_members.setdefault(child, set())

    def unnest(self, child: str, parent: str) -> None:
        self.group_members.get(parent, set()).discard(child)

    def account_groups_of(self, groups: set[str]) -> set[str]:
        """``groups`` and every account group they are nested in, directly or indirectly:
        ``is_account_group_member`` is true for "a direct or indirect member of the specified
        group at the account level" (sql/language-manual/functions/is_account_group_member).
        A workspace-local group nests nothing at the account level."""
        out, todo = set(groups), list(groups)
        while todo:
            child = todo.pop()
            for parent, members in self.group_members.items():
                account = self.group_kinds.get(parent, "Group") == "Group"
                if child in members and parent not in out and account:
                    out.add(parent)
                    todo.append(parent)
        return out

    def scim_groups(self, path: str, query: str) -> dict[str, Any] | None:
        """The workspace's SCIM Groups API as ``w.groups.list`` / ``w.groups.get`` call it
        (GET /api/2.0/preview/scim/v2/Groups[/{id}]; databricks-sdk service/iam.py
        GroupsAPI): ``Resources`` of ``{id, displayName, meta: {resourceType}, members:
        [{display, value, $ref: "Groups/<id>"}]}``, paged by ``startIndex``, filtered by
        ``displayName eq "..."``. It lists the account groups assigned to the workspace and its
        workspace-local groups, not the other account groups (admin/users-groups/groups).
        The legacy SCIM reference says a non-admin caller gets each group's name and id only:
        here the list answers a non-admin without ``members`` and a group's details are
        refused it (403), so a reader that is not an admin cannot see any nesting."""
        base = "/api/2.0/preview/scim/v2/Groups"
        if path != base and not path.startswith(base + "/"):
            return None
        params = {k: v[0] for k, v in parse_qs(query).items()}
        names = sorted(n for n in self.group_members if n not in self.unassigned_groups)
        ids = {n: f"g{i}" for i, n in enumerate(names, start=1)}
        admin = self.caller in self.workspace_admins

        def resource(name: str, members: bool) -> dict[str, Any]:
            out: dict[str, Any] = {
                "id": ids[name],
                "displayName": name,
                "meta": {"resourceType": self.group_kinds.get(name, "Group")},
            }
            if members:
                out["members"] = [
                    {"display": m, "value": ids.get(m, m), "$ref": f"Groups/{ids.get(m, m)}"}
                    for m in sorted(self.group_members.get(name, ()))
                ]
            return out

        if path != base:
            gid = path.rsplit("/", 1)[1]
            name = next((n for n, i in ids.items() if i == gid), None)
            if name is None:
                raise SqlError("NOT_FOUND", "42704", f"Group with id {gid} not found.")
            if not admin:
                raise self.refuse("permission to read the members of group " + name)
            return resource(name, True)
        wanted = params.get("filter", "")
        if wanted:
            match = re.fullmatch(r'\s*displayName\s+eq\s+"(.*)"\s*', wanted)
            if match is None:
                raise SqlError("INVALID_PARAMETER_VALUE", "22023", f"unsupported filter {wanted}")
            names = [n for n in names if n == match.group(1)]
        start = int(params.get("startIndex") or 1)
        page = names[start - 1 :]
        return {
            "Resources": [resource(n, admin) for n in page],
            "totalResults": len(names),
            "startIndex": start,
            "itemsPerPage": len(page),
        }

    def rewrite(self, tree: exp.Expression) -> exp.Expression:
        """A query reads a governed table through its row filter and column masks, the
        functions being what the deployed statements left here, ``is_account_group_member``
        seeing :attr:`Estate.session` and every account group it is nested in, directly or
        indirectly (docs.databricks.com/aws/en/tables/row-and-column-filters;
        :meth:`account_groups_of`)."""
        if isinstance(tree, exp.Query):
            self._refuse_multiple_masks(tree)
            tree = self._govern(tree)
        saved = self.session
        self.session = self.account_groups_of(set(saved))
        try:
            return super().rewrite(tree)
        finally:
            self.session = saved

    def abac_masks_on(self, t: Any) -> dict[str, list[tuple[str, str]]]:
        """UPPER column -> (policy, function) of each ABAC column-mask policy that masks it
        for the session: the policy's securable holds the table, its WHEN (if any) holds on
        the table's tags, the MATCH COLUMNS condition its ON COLUMN names holds on the
        column's tags (has_tag / has_tag_value with AND, OR, NOT), and the session's principal
        or one of its groups is in TO (``account users``: everyone) and none in EXCEPT
        (unity-catalog/abac/policy-evaluation, steps 1-4). Conditions are read with sqlglot."""
        import sqlglot

        def holds(text: str | None, tags: dict[str, str]) -> bool:
            def ev(n: exp.Expression) -> bool:
                if isinstance(n, exp.Paren):
                    return ev(n.this)
                if isinstance(n, exp.And):
                    return ev(n.this) and ev(n.expression)
                if isinstance(n, exp.Or):
                    return ev(n.this) or ev(n.expression)
                if isinstance(n, exp.Not):
                    return not ev(n.this)
                if isinstance(n, exp.Boolean):
                    return bool(n.this)
                args = [a.this for a in n.expressions] if isinstance(n, exp.Anonymous) else []
                if isinstance(n, exp.Anonymous) and n.name.lower() == "has_tag":
                    return args[0] in tags
                if isinstance(n, exp.Anonymous) and n.name.lower() == "has_tag_value":
                    return tags.get(args[0]) == args[1]
                raise SqlError("INVALID_PARAMETER_VALUE", "22023", f"condition {n.sql()}")

            return True if not text else ev(sqlglot.parse_one(text, read="databricks"))

        who = {self.caller, *self.session}
        table_tags = {tag: v or "" for (c, tag), v in t.tags.items() if not c}
        out: dict[str, list[tuple[str, str]]] = {}
        for (kind, name, _), info in sorted(self.abac.items()):
            if info.get("policy_type") != "POLICY_TYPE_COLUMN_MASK":
                continue
            if (kind, name.lower()) not in self.parents("TABLE", t.name):
                continue
            to = set(info.get("to_principals") or ())
            if not ("account users" in to or to & who) or who & set(info["except_principals"]):
                continue
            if not holds(info.get("when_condition"), table_tags):
                continue
            on = info["column_mask"].get("on_column")
            conds = [m["condition"] for m in info.get("match_columns") or [] if m["alias"] == on]
            for upper in t.columns:
                tags = {tag: v or "" for (c, tag), v in t.tags.items() if c == upper}
                if any(holds(c, tags) for c in conds):
                    out.setdefault(upper, []).append(
                        (info["name"], info["column_mask"]["function_name"])
                    )
        return out

    def _refuse_multiple_masks(self, tree: exp.Expression) -> None:
        """A query of a table where a column's own mask (ALTER TABLE ... SET MASK) and an
        ABAC column mask with another function both apply fails: neither takes precedence
        (error-messages/column-masks-feature-not-supported-error-class, MULTIPLE_MASKS;
        unity-catalog/abac/abac-vs-rls-cm)."""
        for node in tree.find_all(exp.Table):
            t = self.tables.get(self.key(self._table_name(node))) if node.name else None
            if t is None or not t.masks:
                continue
            for upper, found in sorted(self.abac_masks_on(t).items()):
                direct = t.masks.get(upper)
                others = [f for _, f in found if direct and self.key(f) != self.key(direct[0])]
                if direct and others:
                    column = t.columns[upper][0]
                    masks = ", ".join([direct[0], *others])
                    raise SqlError(
                        "COLUMN_MASKS_FEATURE_NOT_SUPPORTED",
                        "0A000",
                        "[COLUMN_MASKS_FEATURE_NOT_SUPPORTED.MULTIPLE_MASKS] Column mask "
                        f"policies for {t.name.lower()} are not supported: Table "
                        f"{t.name.lower()} has access control policies resulting in multiple "
                        f"column masks [{masks}] applying to the same column(s) [{column}]. "
                        "Please contact the table owner or policy definer to resolve the issue "
                        "by updating policies such that at most one mask applies to this "
                        "column and then retry the query again. SQLSTATE: 0A000",
                    )

    # ------------------------------------------------------------------ who may see what

    @property
    def caller(self) -> str:
        """The principal of the request being answered (the handler sets it per thread)."""
        return getattr(self._local, "caller", "") or self.reader

    def calling(self, principal: str) -> None:
        self._local.caller = principal

    def execute_by(self, principal: str, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``sql`` as ``principal`` sends it: with the groups ``member_of`` gives it in the
        session (else with :attr:`Estate.session`, as for any caller)."""
        groups = self.member_of.get(principal)
        if groups is None:
            return self.execute(sql)
        with self.lock:
            saved, self.session = self.session, set(groups)
            try:
                return self.execute(sql)
            finally:
                self.session = saved

    @staticmethod
    def parents(kind: str, name: str) -> list[tuple[str, str]]:
        """``(kind, name)`` and the containers it inherits from, nearest first."""
        parts = name.lower().split(".")
        out = [(kind.upper(), name.lower())]
        if len(parts) == 3:
            out += [("SCHEMA", ".".join(parts[:2])), ("CATALOG", parts[0])]
        elif len(parts) == 2:
            out.append(("CATALOG", parts[0]))
        return out

    def owner_of(self, kind: str, name: str) -> str:
        kind, key = kind.upper(), name.lower()
        if kind == "FUNCTION" and self.key(name) in self.policies:
            return self.policies[self.key(name)].owner
        return self.owners.get((kind, key), self.owner)

    def grant(self, kind: str, name: str, privilege: str, principal: str) -> None:
        self.privileges.add((kind.upper(), name.lower(), privilege, principal))

    def effective(self, kind: str, name: str) -> list[tuple[str, str, str, str]]:
        """(principal, privilege, inherited_from_type, inherited_from_name) on a securable,
        its own grants first (inherited_from empty), then each container's."""
        out = []
        for i, (k, n) in enumerate(self.parents(kind, name)):
            for gk, gn, priv, who in sorted(self.privileges):
                if (gk, gn) == (k, n):
                    out.append((who, priv, "" if i == 0 else k, "" if i == 0 else n))
            if i == 0 and k == "FUNCTION":  # the engine's function grants (GRANT ... ON FUNCTION)
                for priv, who in sorted(self.grants.get(self.key(n), ())):
                    out.append((who, priv.replace(" ", "_"), "", ""))  # the REST enum
        return out

    def holds(self, who: str, kind: str, name: str, *privileges: str) -> bool:
        """Whether ``who`` is an admin, owns the securable or a container, or holds one of
        ``privileges`` on it or a container (any privilege when none is named)."""
        if who in self.admins:
            return True
        if any(self.owner_of(k, n) == who for k, n in self.parents(kind, name)):
            return True
        return any(
            p == who and (not privileges or priv in privileges or priv == "ALL_PRIVILEGES")
            for p, priv, _, _ in self.effective(kind, name)
        )

    def may_see_table(self, name: str, who: str | None = None) -> bool:
        return self.holds(who or self.caller, "TABLE", name)

    def may_list_function(self, full_name: str, who: str) -> bool:
        """Fact 11: functions.list shows the functions the caller owns or may EXECUTE (an
        admin, and the owner of the schema or catalog, see every one): databricks-sdk
        FunctionsAPI.list, "the output list contains only functions for which either the user
        has the EXECUTE privilege or the user is the owner". MANAGE is not said to list them,
        and does not here (issue 41, item 5)."""
        return self.holds(who, "FUNCTION", full_name, "EXECUTE")

    def may_browse_function(self, full_name: str, who: str) -> bool:
        """``include_browse``: "Whether to include functions in the response for which the
        principal can only access selective metadata for" (FunctionsAPI.list); BROWSE, granted
        on a catalog, lets a principal see an object's metadata (docs.databricks.com
        discover/database-objects, data-governance/unity-catalog privileges reference)."""
        return self.holds(who, "FUNCTION", full_name, "BROWSE")

    def interacts_with_function(self, full_name: str, who: str) -> bool:
        """``information_schema.routines`` / ``parameters``: "The rows returned are limited to
        the routines the user is privileged to interact with" (sql/language-manual/
        information-schema/routines): a privilege on it other than BROWSE (which shows
        metadata only), inherited ones included, or ownership."""
        if self.holds(who, "FUNCTION", full_name, "EXECUTE", "MANAGE"):
            return True
        return any(
            p == who and priv not in ("BROWSE", "USE_CATALOG", "USE_SCHEMA")
            for p, priv, _, _ in self.effective("FUNCTION", full_name)
        )

    def refuse(self, what: str) -> SqlError:
        return SqlError("PERMISSION_DENIED", "42501", f"User does not have {what}")

    # catalog.information_schema.{routines,row_filters,column_masks,column_tags}: the rows of
    # the tables the caller may see (sql-ref-information-schema: "Information is displayed
    # only for relation the user has permission to interact with")
    def rewrite_tables(self, tree: exp.Expression) -> exp.Expression:
        adapter = self.info_schema_names == "adapter"
        where = ["table_catalog", "table_schema"] if adapter else ["catalog_name", "schema_name"]

        def visible(t: Any, catalog: str) -> bool:
            return t.name.split(".")[0] == catalog and self.may_see_table(t.name)

        def replace(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Table) or node.db.lower() != "information_schema":
                return node
            view = node.name.lower()
            catalog = node.catalog.lower()
            rows: list[tuple[Any, ...]]
            if view == "routines":
                cols = ["routine_catalog", "routine_schema", "routine_name", "routine_definition"]
                cols += ["data_type", "full_data_type", "comment"]
                rows = [
                    (*p.name.split("."), p.body, p.returns.upper(), p.returns.lower(), p.comment)
                    for p in self.policies.values()
                    if p.kind == "FUNCTION"
                    and p.name.split(".")[0] == catalog
                    and self.interacts_with_function(p.name, self.caller)
                ]
            elif view == "parameters":
                cols = ["specific_catalog", "specific_schema", "specific_name"]
                cols += ["ordinal_position", "parameter_name", "data_type", "full_data_type"]
                rows = [
                    (*p.name.split("."), i, n, t.upper(), t.lower())
                    for p in self.policies.values()
                    if p.kind == "FUNCTION"
                    and p.name.split(".")[0] == catalog
                    and self.interacts_with_function(p.name, self.caller)
                    for i, (n, t) in enumerate(p.params)
                ]
            elif view == "row_filters":
                cols = [*where, "table_name", "filter_catalog", "filter_schema", "filter_name"]
                cols.append("target_columns" if adapter else "filter_col_usage")
                rows = [
                    (*t.name.split("."), *t.row_filter[0].split("."), ",".join(t.row_filter[1]))
                    for t in self.tables.values()
                    if t.row_filter and visible(t, catalog)
                ]
            elif view == "column_masks":
                cols = [*where, "table_name", "column_name", "mask_catalog", "mask_schema"]
                cols += ["mask_name", "using_columns" if adapter else "mask_col_usage"]
                rows = [
                    (*t.name.split("."), t.columns[c][0], *policy.split("."),
                     ",".join(using) or None)
                    for t in self.tables.values()
                    if visible(t, catalog)
                    for c, (policy, using) in t.masks.items()
                ]  # fmt: skip
            elif view == "abac_policy_definitions":
                if not self.abac_definitions:
                    raise missing(
                        "databricks", "table or view", f"{catalog}.information_schema.{view}"
                    )
                cols, rows = self.abac_definitions_rows(catalog)
            elif view == "tables":
                cols, rows = self.tables_rows(catalog)
            elif view == "schemata":
                cols, rows = self.schemata_rows(catalog)
            elif view == "schema_privileges":
                cols, rows = self.schema_privileges_rows(catalog)
            elif view == "column_tags":
                cols = [*where, "table_name", "column_name", "tag_name", "tag_value"]
                rows = [
                    (*t.name.split("."), t.columns[c][0], tag, value)
                    for t in self.tables.values()
                    if visible(t, catalog)
                    for (c, tag), value in sorted(t.tags.items())
                    if c
                ]
            else:
                return node
            table = self.materialize(cols, rows)
            if node.args.get("alias") is not None:
                table.set("alias", node.args["alias"])
            return table

        return tree.transform(replace)

    def abac_definitions_rows(self, catalog: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``<catalog>.information_schema.abac_policy_definitions`` (Public Preview;
        sql/language-manual/information-schema/abac_policy_definitions): one row per ABAC
        policy attached to a securable of the catalog, in the documented columns; a caller
        sees only the policies on securables where it holds MANAGE or READ METADATA, or owns
        them ("This matches the access pattern of DESCRIBE POLICY"). ``SCHEMA_NAME`` is NULL
        for a catalog-attached policy, ``SECURABLE_NAME`` for catalog- and schema-attached
        ones; ``POLICY_TYPE`` reads ROW_FILTER, COLUMN_MASK, GRANT or DENY; ``PRIVILEGES`` is
        NULL for row filters and column masks, ``MATCH_COLUMNS`` for GRANT and DENY. The
        ARRAY<STRING> columns come as JSON text, as statement execution's JSON_ARRAY format
        sends arrays. The policy's function and USING columns are not in the view."""
        import hashlib
        import json

        cols = ["policy_id", "policy_name", "policy_type", "catalog_name", "schema_name",
                "securable_name", "on_securable_type", "to_principals", "except_principals",
                "for_securable_type", "privileges", "when_condition", "match_columns",
                "created_by"]  # fmt: skip
        rows = []
        for (kind, name, _), info in sorted(self.abac.items()):
            parts = name.lower().split(".")
            if parts[0] != catalog or not self.holds(
                self.caller, kind, name, "MANAGE", "READ_METADATA"
            ):
                continue
            policy_type = str(info["policy_type"]).removeprefix("POLICY_TYPE_")
            held = info.get("grant") or info.get("deny")
            privileges = json.dumps(held["privileges"]) if held else None
            match = None
            if policy_type in ("ROW_FILTER", "COLUMN_MASK"):
                match = json.dumps([m["alias"] for m in info.get("match_columns") or []])
            rows.append((
                hashlib.sha1(f"{kind}/{name}/{info['name']}".encode()).hexdigest()[:16], info["name"],
                policy_type, parts[0], parts[1] if len(parts) > 1 else None,
                parts[2] if len(parts) > 2 else None, kind, json.dumps(info["to_principals"]),
                json.dumps(info["except_principals"]), info["for_securable_type"], privileges,
                info.get("when_condition"), match, self.owner,
            ))  # fmt: skip
        return cols, rows

    def _duckdb(self, tree: exp.Expression) -> tuple[list[str], list[tuple[Any, ...]]]:
        """A statement of the reading principal reads or writes only the tables it holds
        SELECT (or MODIFY) on (personas named by ``tokens`` read every table: the probe tests
        model what the policies show them, not their table grants; a test's own statements,
        not sent over HTTP, are the administrator's)."""
        if (
            getattr(self._local, "in_request", False)
            and self.caller == self.reader
            and isinstance(tree, exp.Query | exp.Insert | exp.Merge | exp.Delete | exp.Update)
        ):
            for table in tree.find_all(exp.Table):
                name = self._table_name(table)
                if table.db.lower() == "information_schema" or name.count(".") != 2:
                    continue
                if self.key(name) in self.tables or self._exists(name):
                    privilege = "SELECT" if isinstance(tree, exp.Query) else "MODIFY"
                    if not self.holds(self.caller, "TABLE", name, privilege):
                        raise SqlError(
                            "PERMISSION_DENIED",
                            "42501",
                            f"[INSUFFICIENT_PERMISSIONS] Insufficient privileges: User does not "
                            f"have {privilege} on Table '{name.lower()}'. SQLSTATE: 42501",
                        )
        return super()._duckdb(tree)

    def _exists(self, name: str) -> bool:
        parts = self.key(name).split(".")
        rows = self.db.execute(
            "SELECT 1 FROM information_schema.tables WHERE upper(table_catalog) = ? AND "
            "upper(table_schema) = ? AND upper(table_name) = ?",
            parts,
        ).fetchall()
        return bool(rows)

    # GRANT / REVOKE on catalogs, schemas and tables (the engine keeps function grants)
    def _grant(self, tree: exp.Grant | exp.Revoke) -> Any:
        kind = str(tree.args.get("kind") or "").upper()
        privileges = [p.this.name.upper() for p in tree.args.get("privileges") or []]
        if any("_" in p for p in privileges):
            raise self._syntax(
                f"privilege {next(p for p in privileges if '_' in p)} is not SQL: "
                "Databricks SQL spells privileges with spaces (ALL PRIVILEGES, USE SCHEMA)"
            )
        if kind in ("", "FUNCTION") and not (
            isinstance(tree, exp.Revoke) and "ALL PRIVILEGES" in privileges
        ):
            return super()._grant(tree)
        name = self._table_name(tree.args["securable"])
        grantees = [p.this.name for p in tree.args.get("principals") or []]
        return self._grants(isinstance(tree, exp.Grant), kind or "FUNCTION", name, privileges,
                            grantees)  # fmt: skip

    def _grants(
        self, grant: bool, kind: str, name: str, privileges: list[str], grantees: list[str]
    ) -> Any:
        enum = [p.replace(" ", "_") for p in privileges]
        for who in grantees:
            if kind == "FUNCTION":
                held = self.grants.setdefault(self.key(name), set())
                if not grant and "ALL_PRIVILEGES" in enum:
                    held -= {(p, w) for p, w in held if w == who}
                for priv in enum:
                    (held.add if grant else held.discard)((priv, who))
                continue
            for priv in enum:
                if grant:
                    self.grant(kind, name, priv, who)
                elif priv == "ALL_PRIVILEGES":
                    self.privileges -= {
                        g for g in self.privileges if g[:2] == (kind, name.lower()) and g[3] == who
                    }
                else:
                    self.privileges.discard((kind, name.lower(), priv, who))
        return self._ok("OK")

    def _command(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``GRANT | REVOKE <privileges> ON CATALOG c TO | FROM p`` (sqlglot reads no CATALOG
        securable), read from sqlglot's tokens."""
        from sqlglot.dialects.dialect import Dialect

        tokens = [
            t.text for t in Dialect.get_or_raise("databricks").tokenizer_class().tokenize(sql)
        ]
        upper = [t.upper() for t in tokens]
        owned = self.ownership_command(tokens)
        if owned is not None:
            return owned  # type: ignore[no-any-return]
        if upper[:1] in (["GRANT"], ["REVOKE"]) and "ON" in upper and "CATALOG" in upper:
            on = upper.index("ON")
            privileges = " ".join(tokens[1:on]).upper().replace(" ,", ",").split(",")
            name = tokens[on + 2]
            grantees = [t for t in tokens[on + 4 :] if t != ","]
            return self._grants(
                upper[0] == "GRANT", "CATALOG", name, [p.strip() for p in privileges], grantees
            )
        return super()._command(sql)

    def add_grant_policy(
        self,
        name: str,
        securable_type: str,
        securable: str,
        privileges: list[str],
        to: list[str],
        deny: bool = False,
        except_: list[str] | None = None,
    ) -> None:
        """An ABAC GRANT (or DENY) policy made from a console: PolicyInfo with ``policy_type``
        POLICY_TYPE_GRANT / POLICY_TYPE_DENY and ``grant`` / ``deny`` {privileges}."""
        kind = "POLICY_TYPE_DENY" if deny else "POLICY_TYPE_GRANT"
        self.abac[(securable_type.upper(), self.key(securable), name.upper())] = {
            "name": name,
            "on_securable_type": securable_type.upper(),
            "on_securable_fullname": securable,
            "for_securable_type": "FUNCTION",
            "policy_type": kind,
            "to_principals": list(to),
            "except_principals": list(except_ or ()),
            "deny" if deny else "grant": {"privileges": list(privileges)},
        }

    # ------------------------------------------------------------------ REST payloads

    def table_info(self, full_name: str) -> dict[str, Any]:
        t = self.table(full_name)
        if not self.may_see_table(t.name):
            raise self.refuse(f"any privilege on table {t.name}")
        catalog, schema, name = t.name.split(".")
        columns = []
        for i, (key, (col, typ)) in enumerate(t.columns.items()):
            info: dict[str, Any] = {
                "name": col,
                "type_text": typ.lower(),
                "type_name": TYPE_NAMES.get(typ.upper(), "STRING"),
                "position": i,
                "nullable": True,
            }
            if key in t.masks:
                policy, using = t.masks[key]
                info["mask"] = {"function_name": policy, "using_column_names": list(using)}
            columns.append(info)
        out: dict[str, Any] = {
            "name": name,
            "catalog_name": catalog,
            "schema_name": schema,
            "full_name": t.name,
            "table_type": "MANAGED",
            "data_source_format": "DELTA",
            "owner": self.owner_of("TABLE", t.name),
            "columns": columns,
        }
        if t.row_filter is not None:
            out["row_filter"] = {
                "function_name": t.row_filter[0],
                "input_column_names": list(t.row_filter[1]),
            }
        return out

    def browse_info(self, full_name: str) -> dict[str, Any]:
        """A function as a BROWSE-only caller lists it: its names and owner, ``browse_only``
        (FunctionInfo.browse_only), no parameters and no definition."""
        p = self._policy(full_name, "Routine")
        catalog, schema, name = p.name.split(".")
        return {
            "name": name,
            "catalog_name": catalog,
            "schema_name": schema,
            "full_name": p.name,
            "owner": p.owner,
            "browse_only": True,
        }

    def function_info(self, full_name: str) -> dict[str, Any]:
        p = self._policy(full_name, "Routine")
        catalog, schema, name = p.name.split(".")
        return {
            "name": name,
            "catalog_name": catalog,
            "schema_name": schema,
            "full_name": p.name,
            "owner": p.owner,
            "comment": p.comment,
            "data_type": TYPE_NAMES.get(p.returns.upper(), "STRING"),
            "full_data_type": p.returns.lower(),
            "input_params": {
                "parameters": [
                    {
                        "name": n,
                        "type_text": t.lower(),
                        "type_name": TYPE_NAMES.get(t.upper(), "STRING"),
                        "position": i,
                    }
                    for i, (n, t) in enumerate(p.params)
                ]
            },
            "routine_body": "SQL",
            "routine_definition": p.body,
            "security_type": "DEFINER",
            "sql_data_access": "READS_SQL_DATA",
            "is_deterministic": True,
            "parameter_style": "S",
        }

    def tag_policy(self, key: str) -> dict[str, Any]:
        """A governed tag (account level: an account admin creates it, SQL cannot)."""
        tag = self.tags.get(key.upper())
        if tag is None:
            raise SqlError("NOT_FOUND", "42704", f"Tag policy {key} does not exist")
        return {
            "tag_key": tag.name,
            "description": tag.comment,
            "values": [{"name": v} for v in tag.allowed_values],
        }

    def govern_tag(self, key: str, values: tuple[str, ...], description: str = "") -> None:
        self.tags[key.upper()] = TagDef(key, tuple(values), comment=description)

    def permissions(
        self, kind: str, full_name: str, query: dict[str, str], effective: bool
    ) -> dict[str, Any]:
        """``grants.get`` (the securable's own grants: "Does not include inherited
        permissions") or ``grants.get_effective`` (inherited ones too), paged: without
        ``max_results`` every assignment at once (the unpaginated form the SDK says will be
        deprecated); ``max_results`` 0 or at least 150 pages by :attr:`grant_page_size`
        assignments; anything else is INVALID_PARAMETER_VALUE."""
        if kind.upper() == "FUNCTION":
            self._policy(full_name, "Routine")
        who = self.caller
        mine = query.get("principal") == who
        if not (mine or self.holds(who, kind, full_name, "MANAGE")):
            raise self.refuse(f"MANAGE on {kind.lower()} {full_name}")
        by: dict[str, list[Any]] = {}
        for principal, priv, from_type, from_name in self.effective(kind, full_name):
            if from_type and not effective:
                continue
            if query.get("principal") and principal != query["principal"]:
                continue
            if effective:
                entry: Any = {"privilege": priv}
                if from_type:
                    entry.update(inherited_from_type=from_type, inherited_from_name=from_name)
            else:
                entry = priv
            if entry not in by.setdefault(principal, []):
                by[principal].append(entry)
        assignments = [{"principal": w, "privileges": privs} for w, privs in sorted(by.items())]
        if "max_results" not in query:
            return {"privilege_assignments": assignments}
        size = int(query["max_results"])
        if size < 0 or 0 < size < 150:
            raise SqlError("INVALID_PARAMETER_VALUE", "22023", f"max_results {size} is invalid")
        start = int(query.get("page_token") or 0)
        end = start + self.grant_page_size
        out: dict[str, Any] = {"privilege_assignments": assignments[start:end]}
        if end < len(assignments):
            out["next_page_token"] = str(end)
        return out

    def policies_on(self, securable_type: str, securable: str) -> list[dict[str, Any]]:
        """Viewing policies needs READ METADATA or MANAGE on the securable, or ownership
        (unity-catalog/abac/policies, Requirements); those on the metastore (Beta), READ
        METADATA on it or the metastore admin role (unity-catalog/abac/metastore-policies)."""
        if securable_type.upper() == "METASTORE":
            if self.caller not in self.admins and self.caller not in self.metastore_readers:
                raise self.refuse("READ METADATA on the metastore (or the metastore admin role)")
            return [i for (kind, _, _), i in sorted(self.abac.items()) if kind == "METASTORE"]
        if not self.holds(self.caller, securable_type, securable, "MANAGE", "READ_METADATA"):
            raise self.refuse(f"MANAGE or READ METADATA on {securable_type.lower()} {securable}")
        return [
            info
            for (kind, name, _), info in sorted(self.abac.items())
            if kind == securable_type.upper() and name == self.key(securable)
        ]

    def tag_assignments(self, entity_type: str, entity_name: str) -> list[dict[str, Any]]:
        parts = entity_name.split(".")
        table = self.table(".".join(parts[:3]))
        if not self.may_see_table(table.name):
            raise self.refuse(f"any privilege on table {table.name}")
        column = parts[3].upper() if entity_type == "columns" and len(parts) == 4 else ""
        return [
            {"entity_type": entity_type, "entity_name": entity_name, "tag_key": tag,
             "tag_value": value or None}
            for (col, tag), value in sorted(table.tags.items())
            if col == column
        ]  # fmt: skip


@contextmanager
def workspace(estate: DatabricksEstate, port: int = 0) -> Iterator[str]:
    """Serve ``estate`` (on ``port``, else a free one); yields its host URL."""
    estate.stopped = False
    try:
        with serve(handler_for(estate), port) as port:
            yield f"http://127.0.0.1:{port}"
    finally:
        estate.stopped = True
