"""Connect, read and close: what introspect, drift and plan --base live share.

``with session(project, platforms, options) as live:`` connects to each platform, reads what
it holds (:func:`targets.inspect.introspect`), and closes every connection on leaving
the block, whether it ends or fails (a connection opened before a later one failed included).
Inside the block the connections are open for what needs them still (drift's canary digests).
An answer the platform gave about an object that was not asked about is ignored by the reader
and said here, on standard error, as a warning. What the model's ``unmanaged`` entries name is
taken out of what was read (:func:`targets.unmanaged.leave_alone`): drift and plan leave it
alone, and the coverage lists it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from accord.compiler.connect.config import LiveOptions
from accord.compiler.connect.executor import open_executor
from accord.compiler.core.errors import Diagnostic, InputError, UsageError
from accord.compiler.core.progress import finished
from accord.compiler.core.visible import visible
from accord.compiler.model.validate import Project
from accord.targets import lower_all
from accord.targets.inspect import LiveCatalog, UnreadableAnswer, introspect
from accord.targets.unmanaged import leave_alone


def expected_catalogs(project: Project, platforms: list[str]) -> dict[str, Any]:
    lowered = lower_all(project)
    for p in platforms:
        if p not in lowered:
            raise UsageError(f"--platform {p}: the model declares no {p} platform")
    return {p: lowered[p] for p in platforms}


@dataclass(frozen=True)
class Live:
    """What a session read, per platform: the model's catalogs, the live ones, and the open
    executors (closed when the session ends)."""

    expected: dict[str, Any]
    catalogs: dict[str, LiveCatalog]
    executors: dict[str, Any]


@contextlib.contextmanager
def session(
    project: Project,
    platforms: list[str],
    options: LiveOptions,
    progress: Callable[[str], None] = lambda _: None,
) -> Iterator[Live]:
    """Each platform connected and read, in order; every connection closed on leaving."""
    expected = expected_catalogs(project, platforms)
    executors: dict[str, Any] = {}
    catalogs: dict[str, LiveCatalog] = {}
    try:
        for p in platforms:
            try:
                progress(f"{p}: connecting")
                executors[p] = open_executor(p, options)
                read = introspect(p, executors[p], expected[p], progress, options.jobs)
                catalogs[p] = leave_alone(project.model, expected[p], read)
            except UnreadableAnswer as err:  # located where the model names what was read
                where = project.loc("platforms", p, "governance_schema")
                raise InputError(Diagnostic(where, str(err))) from None
            finally:
                finished(progress)  # what is said next is not drawn over
            for what in catalogs[p].ignored:  # said on every live command, whatever the format
                # one line, whatever the platform's answer holds
                print(visible(f"accord: warning: {p}: {what}"), file=sys.stderr)
        yield Live(expected, catalogs, executors)
    finally:
        for ex in executors.values():
            ex.close()
