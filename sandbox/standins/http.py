"""The one HTTP server helper of the stand-ins: a threaded server on 127.0.0.1 for the duration
of a test or of ``accord sandbox`` (every stand-in: Snowflake, Databricks, the tests' A2A agent),
a JSON handler base, and ports that never answer or refuse.

Stopping is immediate: ``serve_forever`` polls for the stop request every POLL_INTERVAL
seconds (the default, 0.5 s, was paid at every test's teardown)."""

from __future__ import annotations

import gzip
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

#: guards the request counters of the stand-ins' states (handlers run on many threads)
_COUNT = threading.Lock()

#: how often a serving thread looks for a stop request (seconds)
POLL_INTERVAL = 0.01

#: the servers and silent hosts this process started: a test that starts one is marked
#: ``standin`` (tests/conftest.py checks it)
STARTED = 0

#: the sockets behind closed_port(), held bound (never listening) until the process ends
_REFUSING: list[socket.socket] = []

S = TypeVar("S", bound=ThreadingHTTPServer)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: TCP_NODELAY on every connection (socketserver.StreamRequestHandler): an answer is
    #: written as two sends (the headers, then the body), and with Nagle's algorithm the second
    #: waits for the client's delayed ACK of the first, about 40 ms per request on Linux
    disable_nagle_algorithm = True

    def body(self) -> Any:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        return json.loads(raw) if raw else {}

    def send_json(self, status: int, body: Any) -> None:
        """Answer with ``body``, after the stand-in's latency (``state.latency`` seconds, the
        latency knob of every platform stand-in: the round trip a real service costs), and
        count the round trip (``state.round_trips``)."""
        state = getattr(self, "state", None)
        if state is not None:
            with _COUNT:
                state.round_trips = getattr(state, "round_trips", 0) + 1
            if getattr(state, "latency", 0.0):
                time.sleep(state.latency)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def running(server: S) -> Iterator[S]:
    """Serve ``server`` (bound to 127.0.0.1) in a thread; stop and close it afterwards."""
    global STARTED
    STARTED += 1
    server.daemon_threads = True
    server.handle_error = _handle_error(server.handle_error)  # type: ignore[method-assign]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": POLL_INTERVAL}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _handle_error(report: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """socketserver prints a handler's exception to stderr, from the handler's thread: a client
    that went away (a test of a timeout gives up on a slow answer) is no error of the stand-in,
    and its traceback, printed seconds later, would land in another test's captured output.
    Any other exception is reported as before."""

    def handle_error(request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            report(request, client_address)

    return handle_error


def base_url(server: ThreadingHTTPServer) -> str:
    address, port = server.server_address[:2]
    return f"http://{address}:{port}"


@contextmanager
def serve(handler: type[Handler], port: int = 0) -> Iterator[int]:
    """Serve ``handler`` on ``port`` of 127.0.0.1 (0: a free one) for the duration of the
    block; OSError when the port cannot be had."""
    with running(ThreadingHTTPServer(("127.0.0.1", port), handler)) as server:
        yield server.server_address[1]


@contextmanager
def silent_host() -> Iterator[int]:
    """A port that accepts TCP connections and never answers: an unreachable service, as a
    firewall that drops packets looks to a client (the connect succeeds, the reply never
    comes)."""
    global STARTED
    STARTED += 1
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def closed_port() -> int:
    """A port nothing listens on (connection refused). Its socket stays bound, never listening,
    until the process ends: a connection to it is refused, and no other process (the suite runs
    on several) can take the port meanwhile."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    _REFUSING.append(sock)
    return sock.getsockname()[1]
