"""Source lines of the files findings point at (for positions inside a YAML scalar and for
the text report's excerpts). Read once per file and run."""

from __future__ import annotations

import os
import stat
from functools import lru_cache


@lru_cache(maxsize=256)
def _lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    if text.startswith("\ufeff"):
        text = " " + text[1:]  # as the scanners do: a byte-order mark keeps every offset
    return tuple(text.splitlines())


def source_line(path: str, line: int) -> str | None:
    """Line ``line`` (1-based) of ``path``, or None when the file or line cannot be read."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 64 * 1024 * 1024:
            return None  # never read a FIFO or a device for an excerpt
        lines = _lines(path, info.st_mtime_ns, info.st_size)
    except OSError:
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None
