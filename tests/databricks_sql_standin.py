"""A local Databricks SQL Statement Execution endpoint for the real databricks-sdk client:
``POST /api/2.0/sql/statements`` answered on 127.0.0.1, the persona told apart by its bearer
token (one SDK profile per persona, as ``probe_profiles`` configures).

``answer(persona, statement)`` returns the rows, or raises QueryError whose message becomes the
statement's ``status.error.message`` (with ``status.sql_state``), as a failed statement comes
back from the API: HTTP 200 and ``status.state == FAILED``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from compiler.probe_live.catalog import QueryError
from tests.standins.http import base_url, running

Answer = Callable[[str, str], list[tuple[Any, ...]]]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    tokens: dict[str, str]
    answer: Answer
    requests: list[dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        return

    def _send(self, status: int, doc: Any) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # host metadata and the like: not served
        self._send(404, {"error_code": "NOT_FOUND", "message": self.path})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        persona = self.server.tokens.get(token)
        if persona is None:
            self._send(401, {"error_code": "UNAUTHENTICATED", "message": "bad token"})
            return
        if self.path.rstrip("/") != "/api/2.0/sql/statements":
            self._send(404, {"error_code": "NOT_FOUND", "message": self.path})
            return
        self.server.requests.append({"persona": persona, "body": body})
        try:
            rows = self.server.answer(persona, body["statement"])
        except QueryError as err:
            status = {
                "state": "FAILED",
                "sql_state": err.codes.get("sqlState"),
                "error": {"error_code": "BAD_REQUEST", "message": str(err)},
            }
            self._send(200, {"statement_id": "s-1", "status": status})
            return
        data = [[None if v is None else str(v) for v in row] for row in rows]
        self._send(
            200,
            {
                "statement_id": "s-1",
                "status": {"state": "SUCCEEDED"},
                "manifest": {"format": "JSON_ARRAY", "total_row_count": len(data)},
                "result": {"data_array": data, "row_count": len(data)},
            },
        )


@contextmanager
def databricks_sql_standin(tokens: dict[str, str], answer: Answer) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.tokens = tokens
    server.answer = answer
    server.requests = []
    with running(server):
        yield server


def host(server: _Server) -> str:
    return base_url(server)
