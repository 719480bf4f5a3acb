"""Deadlines: a call that must return in time, and an HTTP answer read by a deadline.

:func:`call_within` runs a call in a daemon thread and gives up on it after a number of
seconds (:class:`StillRunning`): a client stuck in its own retries, or on a server that
never answers, never holds the command. A socket timeout bounds each read only, so a server
that drips its answer a byte at a time would hold the caller for as long as it likes:
:func:`read_by` reads the whole answer by one deadline (``time.monotonic()`` seconds) and at
most ``limit + 1`` bytes, so the caller can tell an answer that is too large."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any


class DeadlinePassed(TimeoutError):
    """The answer did not finish by the deadline."""


class StillRunning(Exception):
    """The call had not returned when its time was up (it is abandoned, in a daemon thread)."""


def call_within(seconds: float, fn: Callable[[], Any], name: str) -> Any:
    """``fn()``, or :class:`StillRunning` when it has not returned after ``seconds``; what
    ``fn`` raises is raised in the caller's thread. ``name`` names the worker thread."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    worker = threading.Thread(target=work, daemon=True, name=name)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise StillRunning(name)
    if "error" in box:
        raise box["error"]
    return box["value"]


def read_by(resp: Any, deadline: float, limit: int) -> bytes:
    """The answer's bytes, all of them by ``deadline``, at most ``limit + 1`` of them."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed
        with contextlib.suppress(AttributeError, OSError):
            resp.fp.raw._sock.settimeout(left)  # the next read waits no longer than what is left
        chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
