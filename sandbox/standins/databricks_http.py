"""The Databricks workspace stand-in's HTTP side: the REST paths and the SQL statement API the
SDK calls, answered from :class:`~accord.sandbox.standins.databricks.DatabricksEstate` (its module
holds the state and the privilege model)."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import unquote, urlparse

from accord.sandbox.standins.engine import SqlError
from accord.sandbox.standins.history import history_of
from accord.sandbox.standins.http import Handler

#: answers a statement for a persona with its rows (or raises SqlError)
Answer = Callable[[str, str], list[tuple[Any, ...]]]

if TYPE_CHECKING:
    from accord.sandbox.standins.databricks import DatabricksEstate


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
        #: statement id -> its result chunks (ResultData), the first sent with the statement
        chunks: ClassVar[dict[str, list[dict[str, Any]]]] = {}
        requests: ClassVar[list[tuple[str, str]]] = []

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            path = unquote(url.path).rstrip("/")
            self.requests.append((method, path))
            estate.requests.append((method, path))
            if estate.latency:
                time.sleep(estate.latency)
            if any(path.startswith(p) for p in estate.forbidden):
                return self.send_json(403, {
                    "error_code": "PERMISSION_DENIED",
                    "message": f"User does not have USE SCHEMA / EXECUTE on {path.rsplit('/', 1)[-1]}",
                })  # fmt: skip
            if any(path.startswith(p) for p in estate.drip_on):
                return self._drip()
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            if estate.accepted and token not in estate.accepted | set(estate.tokens):
                return self.send_json(403, {"error_code": 403, "message": "Invalid access token."})
            persona = estate.tokens.get(token, "")
            if method == "POST" and estate.tokens and not persona:
                return self.send_json(
                    401, {"error_code": "UNAUTHENTICATED", "message": "bad token"}
                )
            estate.calling(persona)
            estate._local.in_request = True  # a caller's statement (direct ones are the admin's)
            try:
                body = self.body() if method == "POST" else {}
                if method == "POST" and path == "/api/2.0/sql/statements":
                    estate.statement_requests.append({"persona": persona, "body": body})
                    # a statement refused for its privileges is refused before it is run
                    refused = estate.denial_of(body["statement"]) is not None
                    # system.query, system.access
                    view = None if refused else history_of(estate).view(body["statement"])
                    status, answer = 200, self._execute(body["statement"], persona, view)
                    if view is None and answer["status"]["state"] == "SUCCEEDED":
                        ua = self.headers.get("User-Agent") or ""
                        history_of(estate).answered(
                            token, persona, ua, body, answer["statement_id"]
                        )
                else:
                    status, answer = self._answer(method, path, url.query, body)
            except SqlError as err:
                status = {"PERMISSION_DENIED": 403, "INVALID_PARAMETER_VALUE": 400}.get(
                    err.code, 404
                )
                answer = {"error_code": err.code, "message": err.message}
            finally:
                estate.calling("")
                estate._local.in_request = False
            self.send_json(status, answer)

        def _drip(self) -> None:
            """A server that answers one byte at a time, never finishing in time."""
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            try:
                for _ in range(10_000):
                    if estate.stopped:
                        return
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass  # the client gave up: what a deadline is for

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def _answer(self, method: str, path: str, query: str, body: Any) -> tuple[int, Any]:
            uc = "/api/2.1/unity-catalog/"
            params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
            params = {k: unquote(v) for k, v in params.items()}
            if any(path.startswith(p) for p in estate.endless_on):
                # an empty page and a fresh token, forever: only a deadline ends the paging
                page = int(params.get("page_token") or 0) + 1
                return 200, {"next_page_token": str(page), "policies": [], "functions": [],
                             "privilege_assignments": [], "tag_assignments": []}  # fmt: skip
            chunk = re.fullmatch(r"/api/2\.0/sql/statements/([^/]+)/result/chunks/(\d+)", path)
            if chunk is not None:
                return 200, self.chunks[chunk.group(1)][int(chunk.group(2))]
            if method == "POST" and path.endswith("/cancel"):
                sid = path.split("/")[-2]
                if sid in self.statements:
                    self.statements[sid]["status"] = {"state": "CANCELED"}
                return 200, {}
            if path.startswith("/api/2.0/sql/statements/"):
                return 200, self.statements[path.rsplit("/", 1)[1]]
            if path == "/api/2.0/preview/scim/v2/Me":
                return 200, {"id": "1", "userName": estate.caller, "active": True}
            if path == uc + "metastore_summary":
                # the metastore's owner is its admin (the first of ``admins``)
                owner = min(estate.admins) if estate.admins else "metastore-admins"
                return 200, {"metastore_id": "ms-standin", "name": "standin", "owner": owner}
            if path == uc + "catalogs":
                # catalogs.list: "only catalogs owned by the caller (or for which the caller
                # has the USE_CATALOG privilege) will be retrieved", all of them for a metastore
                # admin (databricks-sdk service/catalog.py, CatalogsAPI.list)
                names = sorted(
                    c
                    for c in estate._catalogs
                    if estate.holds(estate.caller, "CATALOG", c, "USE_CATALOG")
                )
                return 200, {"catalogs": [{"name": c, "full_name": c} for c in names]}
            for kind in ("catalogs", "schemas"):
                if path.startswith(f"{uc}{kind}/"):
                    name = path[len(f"{uc}{kind}/") :]
                    securable = kind[:-1].upper()
                    if not estate.holds(estate.caller, securable, name):
                        raise estate.refuse(f"any privilege on {securable.lower()} {name}")
                    info = {"name": name.split(".")[-1], "full_name": name.lower()}
                    return 200, {**info, "owner": estate.owner_of(securable, name)}
            if (groups := estate.scim_groups(path, query)) is not None:
                return 200, groups  # SCIM Groups, with the groups nested in each
            if (scim := history_of(estate).scim_page(path, query)) is not None:
                return 200, scim  # SCIM Users / ServicePrincipals, with their groups
            if path.startswith("/api/2.1/tag-policies/"):
                return 200, estate.tag_policy(path.rsplit("/", 1)[1])
            if path.startswith(uc + "tables/"):
                return 200, estate.table_info(path[len(uc + "tables/") :])
            if path == uc + "functions":
                prefix = f"{params.get('catalog_name')}.{params.get('schema_name')}".upper()
                browse = str(params.get("include_browse") or "").lower() == "true"
                listed = []
                for k, p in sorted(estate.policies.items()):
                    if k.rsplit(".", 1)[0] != prefix:
                        continue
                    if estate.may_list_function(p.name, estate.caller):
                        listed.append(estate.function_info(p.name))
                    elif browse and estate.may_browse_function(p.name, estate.caller):
                        listed.append(estate.browse_info(p.name))
                return 200, {"functions": listed}
            if path.startswith(uc + "functions/"):
                return 200, estate.function_info(path[len(uc + "functions/") :])
            for route, effective in (("permissions/", False), ("effective-permissions/", True)):
                if path.startswith(uc + route):
                    kind, name = path[len(uc + route) :].split("/", 1)
                    estate.grant_requests.append((path, query))
                    return 200, estate.permissions(kind, name, params, effective)
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
            elif (denied := estate.denial_of(statement)) is not None:
                err = denied
            else:
                try:
                    if isinstance(view, SqlError):  # a system table the caller may not read
                        raise view
                    if view is not None:
                        names, rows = view
                    elif estate.answer is not None:
                        rows = estate.answer(persona, statement)
                        names = [f"c{i}" for i in range(len(rows[0]) if rows else 1)]
                    else:
                        names, rows = estate.execute_by(persona, statement.strip().rstrip(";"))
                except SqlError as failure:
                    err = failure
                else:
                    data = [[_cell(v) for v in r] for r in rows]
                    size = estate.chunk_rows or max(1, len(data))
                    pieces = [data[i : i + size] for i in range(0, len(data), size)] or [[]]
                    chunks = []
                    for n, piece in enumerate(pieces):
                        chunk: dict[str, Any] = {
                            "chunk_index": n,
                            "row_offset": n * size,
                            "row_count": len(piece),
                            "data_array": piece,
                        }
                        if n + 1 < len(pieces):
                            chunk["next_chunk_index"] = n + 1
                        chunks.append(chunk)
                    if estate.drop_last_chunk and len(chunks) > 1:
                        del chunks[-2]["next_chunk_index"]
                    self.chunks[sid] = chunks
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
                            "total_chunk_count": len(chunks),
                            "chunks": [
                                {k: c[k] for k in ("chunk_index", "row_offset", "row_count")}
                                for c in chunks
                            ],
                        },
                        # only the first chunk arrives with the statement (fact 10)
                        "result": chunks[0],
                    }
                    self.statements[sid] = answer
                    return answer
            error = {"error_code": _error_code(err.code), "message": err.message}
            if estate.terse_errors:  # the message format is not a contract (fact 14)
                error = {"message": "The statement could not run."}
            answer = {
                "statement_id": sid,
                "status": {"state": "FAILED", "sql_state": err.sqlstate, "error": error},
            }
            self.statements[sid] = answer
            return answer

    return Workspace


def _error_code(code: str) -> str:
    """ServiceErrorCode values the SDK accepts (sql.py ServiceErrorCode)."""
    known = {"BAD_REQUEST", "NOT_FOUND", "INTERNAL_ERROR", "DEADLINE_EXCEEDED", "ALREADY_EXISTS"}
    return code if code in known else "BAD_REQUEST"
