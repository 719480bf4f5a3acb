"""Connect, read and close: what introspect, drift and plan --base live share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler.connect.config import LiveOptions
from compiler.core.errors import UsageError
from compiler.live.introspect import LiveCatalog, introspect
from compiler.model.validate import Project


def expected_catalogs(project: Project, platforms: list[str]) -> dict[str, Any]:
    from targets import lower_all

    lowered = lower_all(project)
    for p in platforms:
        if p not in lowered:
            raise UsageError(f"--platform {p}: the model declares no {p} platform")
    return {p: lowered[p] for p in platforms}


def read_live(
    project: Project,
    platforms: list[str],
    options: LiveOptions,
    progress: Callable[[str], None],
    keep_open: bool = False,
) -> tuple[dict[str, Any], dict[str, LiveCatalog], dict[str, Any]]:
    """(expected catalogs, live catalogs, executors): executors are closed unless keep_open."""
    from compiler.connect.executor import open_executor

    expected = expected_catalogs(project, platforms)
    executors: dict[str, Any] = {}
    lives: dict[str, LiveCatalog] = {}
    try:
        for p in platforms:
            executors[p] = open_executor(p, options)
            lives[p] = introspect(p, executors[p], expected[p], progress)
    finally:
        if not keep_open:
            for ex in executors.values():
                ex.close()
    return expected, lives, executors
