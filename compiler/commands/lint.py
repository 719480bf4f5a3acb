"""``accord lint``: policy directories, YAML files of one project, and hand-written policy SQL.

A pre-commit hook: imports neither duckdb nor any platform client.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from compiler import cache
from compiler.errors import Diagnostic, InputError, Location, UsageError
from compiler.lint import Finding, lint_project, lint_sql
from compiler.lint.report import FORMATS, render_github, render_json, render_sarif, render_text

if TYPE_CHECKING:
    from compiler.sqlscan import ScanResult

FAIL_ON = ("error", "warning", "never")
#: compiler.sqlscan.DIALECTS, spelled out so that linting policy files never imports sqlscan
#: and its sqlglot dialects (tests/test_cache.py checks they agree)
DIALECTS = ("snowflake", "databricks")


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people; json, sarif (2.1.0) or github annotations for machines.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    help="Exit 1 when an unsuppressed finding at or above this severity remains.",
)
@click.option(
    "--dialect",
    type=click.Choice(DIALECTS),
    default=None,
    help="Dialect of the SQL files (default: from a .snowflake.sql / .databricks.sql "
    "suffix, else from the statements).",
)
@click.option("--show-suppressed", is_flag=True, help="List suppressed findings too.")
@click.option(
    "--plans",
    type=click.Path(exists=True, file_okay=False),
    help="Migration plans directory (read by ACC601).",
)
@click.option(
    "--ledger",
    type=click.Path(exists=True, dir_okay=False),
    help="Migration ledger file (read by ACC601).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the cache of parsed files and results (.accord_cache/, or "
    "$ACCORD_CACHE_DIR; also ACCORD_NO_CACHE=1).",
)
def command(no_cache: bool = False, **options: Any) -> int:
    """Lint PATH...: a policy directory, YAML files of one project, or .sql files (default:
    policies). Exit 0 clean, 1 findings at or above --fail-on, 2 unusable input."""
    cache.enable(not no_cache)
    try:
        code = _run(**options)
        cache.flush()  # only a run that read all of its input writes the cache
        return code
    finally:
        cache.enable(False)


def _run(
    paths: tuple[str, ...],
    fmt: str,
    fail_on: str,
    dialect: str | None,
    show_suppressed: bool,
    plans: str | None,
    ledger: str | None,
) -> int:
    # A loaded estate is a large graph of long-lived objects; at the default threshold (700
    # allocations) the cyclic collector rescans it thousands of times. A larger first
    # threshold cuts lint time on a 3,000-table estate by about a third (bench/lint_bench.py).
    gc.set_threshold(100_000, 50, 100)
    directories, yaml_files, sql_files = _classify(paths or ("policies",))
    extra: dict[str, object] = {"plans": plans, "ledger": ledger}
    findings: list[Finding] = []
    problems: list[Diagnostic] = []
    files = 0
    projects = [(d, None) for d in directories]
    if yaml_files:
        projects.append((None, yaml_files))
    for directory, yaml in projects:
        try:
            found, count = _lint_project(directory, yaml, extra)
            findings += found
            files += count
        except InputError as err:
            problems += err.diagnostics
    if sql_files:
        try:
            findings += lint_sql(_scan(sql_files, dialect))
            files += len(sql_files)
        except InputError as err:
            problems += err.diagnostics
    if problems:
        raise InputError(problems)
    findings.sort()
    if fmt == "json":
        click.echo(render_json(findings, show_suppressed))
    elif fmt == "sarif":
        click.echo(render_sarif(findings))
    elif fmt == "github":
        text = render_github(findings, show_suppressed)
        if text:
            click.echo(text)
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        click.echo(render_text(findings, files, show_suppressed, color), color=color)
    return exit_code(findings, fail_on)


def exit_code(findings: list[Finding], fail_on: str) -> int:
    """1 when an unsuppressed finding at or above ``fail_on`` remains, else 0."""
    active = [f for f in findings if not f.suppressed]
    if fail_on == "never":
        return 0
    if fail_on == "warning":
        return 1 if active else 0
    return 1 if any(f.severity == "error" for f in active) else 0


def _classify(paths: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    directories, yaml_files, sql_files = [], [], []
    for path in paths:
        lowered = path.lower()
        if os.path.isdir(path):
            directories.append(path)
        elif not os.path.exists(path):
            raise UsageError(f"{path}: no such file or directory")
        elif lowered.endswith(".sql"):
            sql_files.append(path)
        elif lowered.endswith((".yaml", ".yml")):
            yaml_files.append(path)
        else:
            raise UsageError(f"{path}: not a policy directory, a YAML policy file or a .sql file")
    return directories, yaml_files, sql_files


def _lint_project(
    directory: str | None, yaml_files: list[str] | None, extra: dict[str, object]
) -> tuple[list[Finding], int]:
    """The findings of one project and its number of files; from the cache when the files,
    and accord, are those the cached findings were computed from (compiler/cache.py)."""
    from compiler.loader import directory_files, load_documents, read_files

    if directory is not None:
        files, root = directory_files(directory)
    else:
        assert yaml_files
        files, root = [(Path(f), f) for f in yaml_files], Path(yaml_files[0]).parent
    documents, unreadable = read_files(files)
    key = None
    if cache.enabled() and not unreadable and not any(extra.values()):
        key = cache.project_key(documents, "lint")
        payload = cache.read("lint", key)
        hit = cache.findings_from_json(payload) if payload is not None else None
        if hit is not None:
            return hit
    from compiler.validate import validate_raw

    project = validate_raw(load_documents(documents, root, unreadable))
    findings = lint_project(project, extra)
    if key is not None:
        cache.later("lint", key, cache.findings_to_json(findings, len(project.files)))
    return findings, len(project.files)


def _scan(paths: list[str], dialect: str | None) -> list[ScanResult]:
    from compiler.sqlscan import scan

    results = []
    problems = []
    for path in paths:
        try:
            raw = Path(path).read_bytes()
        except OSError as err:
            problems.append(Diagnostic(Location(path, 1, 1), f"cannot read file: {err.strerror}"))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            before = raw[: err.start]
            line = before.count(b"\n") + 1
            column = len(before) - (before.rfind(b"\n") + 1) + 1
            problems.append(
                Diagnostic(
                    Location(path, line, column),
                    f"file is not valid UTF-8 (byte 0x{raw[err.start]:02x})",
                )
            )
            continue
        results.append(scan(text, path, dialect))
    if problems:
        raise InputError(problems)
    return results
