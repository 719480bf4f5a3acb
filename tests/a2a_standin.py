"""A local A2A agent: a small JSON-RPC server on 127.0.0.1 that answers ``SendMessage`` with
whatever scenario its URL path names (``/task/<STATE>``, ``/denial/<key>/<code>``, ...).

It speaks A2A 1.0 as a2a-sdk's server does: a request without the ``A2A-Version`` header is
taken as 0.3 and refused with ``-32009`` (VersionNotSupportedError), the 0.3 method name
``message/send`` is an unknown method (``-32601``), and a message needs a ``messageId``
(``-32602``). Every request it accepted is kept in ``requests`` with its headers.

It also serves agent cards as an A2A server does, by GET: ``server.cards`` maps a path (the
well-known ``/.well-known/agent-card.json``, or 0.3's older ``/.well-known/agent.json``) to
the card (a dict, served as JSON, or bytes, served as they are); any other GET is 404, and a
path mapped to ``("redirect", URL)`` answers 302 to URL. Every GET is kept in ``gets``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from accord.sandbox.standins.http import base_url, running


def task(state: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state}
    if text is not None:
        status["message"] = {
            "messageId": "m-agent",
            "role": "ROLE_AGENT",
            "parts": [{"text": text}],
        }
    return {"task": {"id": "t-1", "contextId": "c-1", "status": status, **extra}}


def scenario(path: str, canary_text: str = "") -> Any:
    """The answer a path stands for (see the module docstring)."""
    parts = [unquote(p) for p in path.strip("/").split("/")]
    head = parts[0]
    if head == "task":  # /task/<STATE>[/<text>]
        text = parts[2] if len(parts) > 2 else canary_text
        return task(parts[1], text)
    if head == "artifact":  # completed, the answer in an artifact
        return task(
            "TASK_STATE_COMPLETED",
            None,
            artifacts=[{"artifactId": "a-1", "parts": [{"text": parts[1]}]}],
        )
    if head == "message":  # a bare Message result
        return {
            "message": {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": parts[1]}]}
        }
    if head == "polite":  # completed, a polite sentence, and a code in the task metadata
        return task(
            "TASK_STATE_COMPLETED",
            "I'm sorry, I can't share subject identifiers for that programme.",
            metadata={"platform": {parts[1]: parts[2]}},
        )
    if head == "datapart":  # completed, the code in a data part
        result = task("TASK_STATE_COMPLETED", "No results.")
        result["task"]["status"]["message"]["parts"].append({"data": {parts[1]: parts[2]}})
        return result
    if head == "leak":  # completed, the canary text shown, and a denial code in a data part
        result = task("TASK_STATE_COMPLETED", canary_text)
        result["task"]["status"]["message"]["parts"].append({"data": {parts[1]: parts[2]}})
        return result
    if head == "failed":  # /failed/<key>/<code> or /failed
        extra = {"metadata": {parts[1]: parts[2]}} if len(parts) > 2 else {}
        return task("TASK_STATE_FAILED", "The query failed.", **extra)
    if head == "rpcerror":  # JSON-RPC error, the code in its data
        return ("error", {"code": -32603, "message": "internal", "data": {parts[1]: parts[2]}})
    if head == "rpcleak":  # JSON-RPC error quoting the canary text, a denial code beside it
        data = {parts[1]: parts[2], "rows": canary_text}
        return ("error", {"code": -32603, "message": "query failed", "data": data})
    if head == "http":
        return ("http", int(parts[1]))
    if head == "sleep":
        return ("sleep", float(parts[1]))
    if head == "redirect":
        return ("redirect", "/task/TASK_STATE_COMPLETED/leak")
    return ("http", 404)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    #: TCP_NODELAY: an answer's headers and body are two sends (see sandbox/standins/http.py)
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.gets.append(self.path)
        card = self.server.cards.get(self.path)
        if card is None:
            self._send(404, {"error": "not found"})
            return
        if isinstance(card, tuple):
            self._send(302, {}, {"Location": card[1]})
            return
        body = card if isinstance(card, bytes) else json.dumps(card).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            req = json.loads(raw)
        except json.JSONDecodeError:
            self._send(200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700}})
            return
        rid = req.get("id")
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "body": req})
        version = self.headers.get("A2A-Version") or "0.3"
        if version != "1.0":
            err = {"code": -32009, "message": f"A2A version '{version}' is not supported"}
            self._send(200, {"jsonrpc": "2.0", "id": rid, "error": err})
            return
        if req.get("method") != "SendMessage":
            err = {"code": -32601, "message": f"Method not found: {req.get('method')}"}
            self._send(200, {"jsonrpc": "2.0", "id": rid, "error": err})
            return
        message = (req.get("params") or {}).get("message") or {}
        if not message.get("messageId"):
            err = {"code": -32602, "message": "message.messageId is required"}
            self._send(200, {"jsonrpc": "2.0", "id": rid, "error": err})
            return
        answer = scenario(self.path, self.server.canary_text)
        if isinstance(answer, tuple):
            kind, value = answer
            if kind == "error":
                self._send(200, {"jsonrpc": "2.0", "id": rid, "error": value})
            elif kind == "http":
                self._send(value, {"error": {"message": "refused"}})
            elif kind == "redirect":
                self._send(307, {}, {"Location": value})
            else:
                time.sleep(value)
                self._send(
                    200,
                    {"jsonrpc": "2.0", "id": rid, "result": task("TASK_STATE_COMPLETED", "late")},
                )
            return
        self._send(200, {"jsonrpc": "2.0", "id": rid, "result": answer})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    canary_text: str
    cards: dict[str, Any]
    gets: list[str]


@contextmanager
def a2a_standin(canary_text: str = "", cards: dict[str, Any] | None = None) -> Iterator[_Server]:
    """A running stand-in on 127.0.0.1 (an ephemeral port); ``server.url(path)``."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.canary_text = canary_text
    server.cards = dict(cards or {})
    server.gets = []
    with running(server):
        yield server


def url(server: _Server, path: str) -> str:
    return base_url(server) + path
