"""``accord probe sample``: read each platform's access history, map it to the model, report.

Each platform asked (``--platform``, ``all``: every platform the model declares) is read
through its live connection (:func:`compiler.connect.executor.open_executor`, with its
connect and statement timeouts). A platform that cannot be reached is a usage error (exit 2,
as for every live command); a history the reading role may not read (a privilege denial, a
view that is not there) is reported as *not read*, with what the platform said, in every
format: the sample then says what it could not see, never that all was covered.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.connect.config import LiveOptions
from accord.compiler.connect.executor import ExecutionError, as_reader, open_executor
from accord.compiler.core.errors import InputError, UsageError, one_line
from accord.compiler.core.outdir import write_report
from accord.compiler.core.platforms import facts
from accord.compiler.core.progress import finished
from accord.compiler.meaning.probes import evaluate
from accord.compiler.model.loader import directory_files, load_documents, read_files
from accord.compiler.model.validate import validate_raw
from accord.compiler.probe_sample.history import (
    LATENCY,
    VIEWS,
    Read,
    Source,
    databricks_reads,
    scim_directory,
    snowflake_reads,
)
from accord.compiler.probe_sample.report import Sample, build


@dataclass
class SampleOptions:
    platform: str = "all"
    since: int = 30
    top: int = 20
    live: LiveOptions = field(default_factory=LiveOptions)
    #: platform -> an executor-like object with ``query(statement)`` (and, for Databricks,
    #: ``client``); used instead of connecting (tests, other callers)
    executors: dict[str, Any] | None = None
    #: what is shown as each platform's history is read (``compiler.core.progress``)
    progress: Callable[[str], None] = field(default=lambda _: None)


def platforms_of(model: Any, platform: str) -> list[str]:
    declared = model.declared_platforms()
    if platform == "all":
        if not declared:
            raise UsageError("the model declares no platform (platforms:) to sample")
        return list(declared)
    if platform not in declared:
        raise UsageError(f"--platform {platform}: the model declares no {platform} platform")
    return [platform]


def sample(project: Any, options: SampleOptions) -> Sample:
    model = project.model
    platforms = platforms_of(model, options.platform)
    reads: list[Read] = []
    sources: list[Source] = []
    for platform in platforms:
        source = Source(platform, VIEWS[platform], LATENCY[platform])
        sources.append(source)
        with _executor(platform, options) as executor:
            options.progress(f"probe sample: {platform}: reading the access history")
            try:
                reads += _read(platform, executor, options.since, source)
                source.read = True
            except ExecutionError as err:
                # what the platform said, redacted; a denial names the reading role
                source.why = " ".join(as_reader(err).split())
                source.cannot_see(
                    f"the {platform} access history ({', '.join(VIEWS[platform])})",
                    source.why,
                    f"the coverage of the probes by {platform} traffic",
                )
    finished(options.progress)
    return build(model, reads, sources, platforms, options.since, options.top)


@contextlib.contextmanager
def _executor(platform: str, options: SampleOptions) -> Any:
    given = (options.executors or {}).get(platform)
    if given is not None:
        yield given
        return
    executor = open_executor(platform, options.live)
    try:
        yield executor
    finally:
        executor.close()


def _read(platform: str, executor: Any, days: int, source: Source) -> list[Read]:
    if facts(platform).principal_kind == "role":  # the session's roles are in the history
        return snowflake_reads(executor.query, days, source)
    groups_of = _directory(executor, source)  # a user's groups are in the directory
    return databricks_reads(executor.query, days, source, groups_of)


def _directory(executor: Any, source: Source) -> Callable[[str], tuple[str, ...] | None]:
    """user -> groups from the workspace's SCIM directory; when it cannot be read, every
    user's groups are unknown (their reads are unmappable, saying so)."""
    try:
        directory = scim_directory(executor.client)
    except Exception as err:  # the SDK's errors: denied, unreachable, not found
        source.cannot_see(
            "the workspace's users and service principals with their groups (SCIM)",
            one_line(err),
            "the persona of every Databricks read",
        )
        return lambda user: None
    return lambda user: directory.get(user.lower())


def write_proposals(directory: str, sample: Sample, out: str) -> None:
    """Write the proposed probes to ``out``, after checking that they validate with the
    model and pass (``accord probe``): the project's own policy files (read as the loader
    reads them: regular files only, each bounded, no link out of the directory) loaded with
    the proposals beside them, in memory, with nothing copied. A file ``out`` replaces is
    left out. Nothing is written when they do not validate or pass."""

    text = sample.proposals_yaml()
    files, root = directory_files(directory)
    replaced = os.path.realpath(out)
    documents, problems = read_files([f for f in files if os.path.realpath(f[0]) != replaced])
    if problems:
        raise InputError(problems)
    documents.append((text.encode("utf-8"), out))
    checked = validate_raw(load_documents(documents, root))
    names = [n for n, _, _ in sample.proposals]
    failing = [o for o in evaluate(checked.model, names) if not o.ok]
    if failing:
        o = failing[0]
        raise UsageError(
            f"--out: proposed probe {o.probe} would not pass on {o.surface} "
            f"({o.detail}); nothing was written"
        )
    write_report(out, text)
