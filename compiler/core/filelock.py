"""Lock files: one ``accord migrate apply`` or ``rollback`` at a time per ledger, one
``accord compile`` or ``plan`` at a time per output directory.

A lock is a file (``ledger.jsonl.lock`` beside the ledger; ``.OUT.accord-lock`` beside an
output directory) holding the holder's pid, host and start time. It is taken atomically with
an exclusive ``flock`` on that file, which the kernel releases when the holder exits, however
it exits: a lock file left behind by a killed run is stale and simply taken over (its contents
are rewritten). While another run holds it, the second run stops (the ledger: before reading
it) or waits (an output directory), with a message naming the holder.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from accord.compiler.core.errors import UsageError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

F = TypeVar("F", bound=Callable[..., Any])


class Locked(UsageError):
    """Another run holds the lock."""


LedgerLocked = Locked


def lock_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + ".lock")


def _holder(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8")[:4096])
        return f"pid {int(data['pid'])} on host {str(data['host'])[:255]} since {data['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (its lock file names no holder yet)"


@contextmanager
def exclusive(path: Path, busy: Callable[[str], str], wait: float = 0.0) -> Iterator[None]:
    """Hold the lock file ``path`` for the duration of the block. While another process holds
    it, retry for ``wait`` seconds, then raise :class:`Locked` with ``busy(holder)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as err:
            raise UsageError(f"{path}: cannot create the lock file: {err.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise Locked(busy(_holder(path))) from None
        # the file may have been removed by a holder releasing it between our open and our
        # lock: then we hold a lock on a file nobody else sees, so take the new one instead
        try:
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(holder) + "\n").encode("utf-8"))
        yield
    finally:
        with suppress(OSError):
            os.unlink(path)
        os.close(fd)


def ledger_lock(ledger: Path) -> Any:
    """The lock of one ledger: a second ``migrate apply`` or ``rollback`` stops at once."""
    path = lock_path(Path(ledger))
    return exclusive(
        path,
        lambda holder: (
            f"{ledger} is locked by {holder} (another accord migrate apply or rollback): wait "
            f"for it to finish; the lock ({path}) is released when it exits"
        ),
    )


def locked(function: F) -> F:
    """Run ``function(plans_dir, ledger, ...)`` holding the lock of ``ledger``."""

    @functools.wraps(function)
    def run(plans_dir: Any, ledger: Any, *args: Any, **kwargs: Any) -> Any:
        if not Path(plans_dir).is_dir():  # before the lock creates anything
            raise UsageError(f"{plans_dir}: no such plans directory")
        with ledger_lock(Path(ledger)):
            return function(plans_dir, ledger, *args, **kwargs)

    return run  # type: ignore[return-value]
