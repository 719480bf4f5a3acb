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

Personas: with ``tokens`` (bearer token -> persona, one SDK profile per persona, as
``probe_profiles`` configures) a POST without a known token is answered 401, and with
``answer`` a statement is answered by ``answer(persona, statement)`` (its rows, or a SqlError
that comes back FAILED) instead of by the estate; ``statement_requests`` keeps each statement
request with its persona.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

from sqlglot import exp

from tests.standins.engine import Estate, SqlError, TagDef
from tests.standins.history import history_of
from tests.standins.http import Handler, serve

#: answers a statement for a persona with its rows (or raises SqlError)
Answer = Callable[[str, str], list[tuple[Any, ...]]]

TYPE_NAMES = {"STRING": "STRING", "BOOLEAN": "BOOLEAN", "INT": "INT", "BIGINT": "LONG"}


class DatabricksEstate(Estate):
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
        #: when set, statements are answered by it, not by the estate
        self.answer: Answer | None = None
        #: each POST /api/2.0/sql/statements: {"persona": ..., "body": ...}
        self.statement_requests: list[dict[str, Any]] = []

    def rewrite(self, tree: exp.Expression) -> exp.Expression:
        """A query reads a governed table through its row filter and column masks, the
        functions being what the deployed statements left here, ``is_account_group_member``
        seeing :attr:`Estate.session` (docs.databricks.com/aws/en/tables/row-and-column-filters)."""
        if isinstance(tree, exp.Query):
            tree = self._govern(tree)
        return super().rewrite(tree)

    # catalog.information_schema.{routines,row_filters,column_masks}
    def rewrite_tables(self, tree: exp.Expression) -> exp.Expression:
        def replace(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Table) or node.db.lower() != "information_schema":
                return node
            view = node.name.lower()
            catalog = node.catalog.lower()
            rows: list[tuple[Any, ...]]
            if view == "routines":
                cols = ["routine_catalog", "routine_schema", "routine_name", "routine_definition"]
                rows = [
                    (*p.name.split("."), p.body)
                    for p in self.policies.values()
                    if p.kind == "FUNCTION" and p.name.split(".")[0] == catalog
                ]
            elif view == "row_filters":
                cols = ["table_catalog", "table_schema", "table_name", "filter_catalog"]
                cols += ["filter_schema", "filter_name", "target_columns"]
                rows = [
                    (*t.name.split("."), *t.row_filter[0].split("."), ",".join(t.row_filter[1]))
                    for t in self.tables.values()
                    if t.row_filter and t.name.split(".")[0] == catalog
                ]
            elif view == "column_masks":
                cols = ["table_catalog", "table_schema", "table_name", "column_name"]
                cols += ["mask_catalog", "mask_schema", "mask_name", "using_columns"]
                rows = [
                    (*t.name.split("."), t.columns[c][0], *policy.split("."), ",".join(using))
                    for t in self.tables.values()
                    if t.name.split(".")[0] == catalog
                    for c, (policy, using) in t.masks.items()
                ]
            else:
                return node
            table = self.materialize(cols, rows)
            if node.args.get("alias") is not None:
                table.set("alias", node.args["alias"])
            return table

        return tree.transform(replace)

    # ------------------------------------------------------------------ REST payloads

    def table_info(self, full_name: str) -> dict[str, Any]:
        t = self.table(full_name)
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
            "owner": self.owner,
            "columns": columns,
        }
        if t.row_filter is not None:
            out["row_filter"] = {
                "function_name": t.row_filter[0],
                "input_column_names": list(t.row_filter[1]),
            }
        return out

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

    def permissions(self, full_name: str) -> dict[str, Any]:
        p = self._policy(full_name, "Routine")
        by: dict[str, list[str]] = {}
        for priv, who in sorted(self.grants.get(self.key(p.name), ())):
            by.setdefault(who, []).append(priv)
        return {
            "privilege_assignments": [
                {"principal": who, "privileges": privs} for who, privs in sorted(by.items())
            ]
        }

    def policies_on(self, securable_type: str, securable: str) -> list[dict[str, Any]]:
        return [
            info
            for (kind, name, _), info in sorted(self.abac.items())
            if kind == securable_type.upper() and name == self.key(securable)
        ]

    def tag_assignments(self, entity_type: str, entity_name: str) -> list[dict[str, Any]]:
        parts = entity_name.split(".")
        table = self.table(".".join(parts[:3]))
        column = parts[3].upper() if entity_type == "columns" and len(parts) == 4 else ""
        return [
            {"entity_type": entity_type, "entity_name": entity_name, "tag_key": tag,
             "tag_value": value or None}
            for (col, tag), value in sorted(table.tags.items())
            if col == column
        ]  # fmt: skip


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "LONG"
    return "STRING"


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def handler_for(estate: DatabricksEstate) -> type[Handler]:
    ids = itertools.count(1)

    class Workspace(Handler):
        state: ClassVar[DatabricksEstate] = estate
        statements: ClassVar[dict[str, dict[str, Any]]] = estate.statements
        requests: ClassVar[list[tuple[str, str]]] = []

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            path = unquote(url.path).rstrip("/")
            self.requests.append((method, path))
            if any(path.startswith(p) for p in estate.forbidden):
                return self.send_json(403, {
                    "error_code": "PERMISSION_DENIED",
                    "message": f"User does not have USE SCHEMA / EXECUTE on {path.rsplit('/', 1)[-1]}",
                })  # fmt: skip
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            persona = estate.tokens.get(token, "")
            if method == "POST" and estate.tokens and not persona:
                return self.send_json(
                    401, {"error_code": "UNAUTHENTICATED", "message": "bad token"}
                )
            try:
                body = self.body() if method == "POST" else {}
                if method == "POST" and path == "/api/2.0/sql/statements":
                    estate.statement_requests.append({"persona": persona, "body": body})
                    view = history_of(estate).view(body["statement"])  # system.query, .access
                    status, answer = 200, self._execute(body["statement"], persona, view)
                    if view is None and answer["status"]["state"] == "SUCCEEDED":
                        ua = self.headers.get("User-Agent") or ""
                        history_of(estate).answered(
                            token, persona, ua, body, answer["statement_id"]
                        )
                else:
                    status, answer = self._answer(method, path, url.query, body)
            except SqlError as err:
                status, answer = 404, {"error_code": err.code, "message": err.message}
            self.send_json(status, answer)

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def _answer(self, method: str, path: str, query: str, body: Any) -> tuple[int, Any]:
            uc = "/api/2.1/unity-catalog/"
            if method == "POST" and path.endswith("/cancel"):
                sid = path.split("/")[-2]
                if sid in self.statements:
                    self.statements[sid]["status"] = {"state": "CANCELED"}
                return 200, {}
            if path.startswith("/api/2.0/sql/statements/"):
                return 200, self.statements[path.rsplit("/", 1)[1]]
            if path == "/api/2.0/preview/scim/v2/Me":
                return 200, {"id": "1", "userName": "accord-ci@example.com", "active": True}
            if (scim := history_of(estate).scim_page(path, query)) is not None:
                return 200, scim  # SCIM Users / ServicePrincipals, with their groups
            if path.startswith("/api/2.1/tag-policies/"):
                return 200, estate.tag_policy(path.rsplit("/", 1)[1])
            if path.startswith(uc + "tables/"):
                return 200, estate.table_info(path[len(uc + "tables/") :])
            if path == uc + "functions":
                params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
                prefix = f"{params.get('catalog_name')}.{params.get('schema_name')}".upper()
                names = sorted(
                    p.name for k, p in estate.policies.items() if k.rsplit(".", 1)[0] == prefix
                )
                return 200, {"functions": [estate.function_info(n) for n in names]}
            if path.startswith(uc + "functions/"):
                return 200, estate.function_info(path[len(uc + "functions/") :])
            if path.startswith(uc + "permissions/function/"):
                return 200, estate.permissions(path[len(uc + "permissions/function/") :])
            if path.startswith(uc + "policies/"):
                _, kind, name = path[len(uc) :].split("/", 2)
                return 200, {"policies": estate.policies_on(kind, name)}
            if path.startswith(uc + "entity-tag-assignments/"):
                _, kind, name, _tags = path[len(uc) :].split("/", 3)
                return 200, {"tag_assignments": estate.tag_assignments(kind, name)}
            return 404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"no such endpoint {path}"}

        def _execute(self, statement: str, persona: str, view: Any = None) -> dict[str, Any]:
            sid = f"01ef-{next(ids):04d}"
            if any(s in statement for s in estate.hang_on):
                answer: dict[str, Any] = {"statement_id": sid, "status": {"state": "RUNNING"}}
                self.statements[sid] = answer
                return answer
            forced = next((v for k, v in estate.state_on.items() if k in statement), None)
            if forced is not None:
                answer = {"statement_id": sid, "status": {"state": forced}}
                self.statements[sid] = answer
                return answer
            if any(s in statement for s in estate.fail_on):
                err = SqlError(
                    "PERMISSION_DENIED", "42501",
                    "[INSUFFICIENT_PERMISSIONS] Insufficient privileges: User does not have "
                    "MANAGE on Table. SQLSTATE: 42501",
                )  # fmt: skip
            else:
                try:
                    if view is not None:
                        names, rows = view
                    elif estate.answer is not None:
                        rows = estate.answer(persona, statement)
                        names = [f"c{i}" for i in range(len(rows[0]) if rows else 1)]
                    else:
                        names, rows = estate.execute(statement.strip().rstrip(";"))
                except SqlError as failure:
                    err = failure
                else:
                    answer = {
                        "statement_id": sid,
                        "status": {"state": "SUCCEEDED"},
                        "manifest": {
                            "format": "JSON_ARRAY",
                            "schema": {
                                "column_count": len(names),
                                "columns": [
                                    {
                                        "name": n,
                                        "position": i,
                                        "type_name": _type_name(rows[0][i]) if rows else "STRING",
                                    }
                                    for i, n in enumerate(names)
                                ],
                            },
                            "total_row_count": len(rows),
                        },
                        "result": {
                            "chunk_index": 0,
                            "row_offset": 0,
                            "row_count": len(rows),
                            "data_array": [[_cell(v) for v in r] for r in rows],
                        },
                    }
                    self.statements[sid] = answer
                    return answer
            answer = {
                "statement_id": sid,
                "status": {
                    "state": "FAILED",
                    "sql_state": err.sqlstate,
                    "error": {"error_code": _error_code(err.code), "message": err.message},
                },
            }
            self.statements[sid] = answer
            return answer

    return Workspace


def _error_code(code: str) -> str:
    """ServiceErrorCode values the SDK accepts (sql.py ServiceErrorCode)."""
    known = {"BAD_REQUEST", "NOT_FOUND", "INTERNAL_ERROR", "DEADLINE_EXCEEDED", "ALREADY_EXISTS"}
    return code if code in known else "BAD_REQUEST"


@contextmanager
def workspace(estate: DatabricksEstate) -> Iterator[str]:
    """Serve ``estate``; yields its host URL."""
    with serve(handler_for(estate)) as port:
        yield f"http://127.0.0.1:{port}"
