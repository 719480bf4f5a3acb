"""Reading an HTTP answer by a deadline.

A socket timeout bounds each read only, so a server that drips its answer a byte at a time
would hold the caller for as long as it likes. :func:`read_by` reads the whole answer by one
deadline (``time.monotonic()`` seconds) and at most ``limit + 1`` bytes, so the caller can
tell an answer that is too large."""

from __future__ import annotations

import contextlib
import time
from typing import Any


class DeadlinePassed(TimeoutError):
    """The answer did not finish by the deadline."""


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
