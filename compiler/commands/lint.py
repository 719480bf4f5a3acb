"""``accord lint``: policy directories, YAML files of one project, and hand-written policy SQL.

A pre-commit hook: imports neither duckdb nor any platform client.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from compiler.errors import Diagnostic, InputError, UsageError
from compiler.lint import Finding, lint_project, lint_sql
from compiler.lint.report import FORMATS, render_github, render_json, render_sarif, render_text
from compiler.sqlscan import DIALECTS, ScanResult, scan

if TYPE_CHECKING:
    from compiler.validate import Project

FAIL_ON = ("error", "warning", "never")


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
def command(
    paths: tuple[str, ...],
    fmt: str,
    fail_on: str,
    dialect: str | None,
    show_suppressed: bool,
    plans: str | None,
    ledger: str | None,
) -> int:
    """Lint PATH...: a policy directory, YAML files of one project, or .sql files (default:
    policies). Exit 0 clean, 1 findings at or above --fail-on, 2 unusable input."""
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
            project = _load(directory, yaml)
            findings += lint_project(project, extra)
            files += len(project.files)
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


def _load(directory: str | None, yaml_files: list[str] | None) -> Project:
    from compiler.loader import load_files
    from compiler.validate import load_project, validate_raw

    if directory is not None:
        return load_project(directory)
    assert yaml_files
    root = Path(yaml_files[0]).parent
    return validate_raw(load_files([(Path(f), f) for f in yaml_files], root))


def _scan(paths: list[str], dialect: str | None) -> list[ScanResult]:
    results = []
    problems = []
    for path in paths:
        from compiler.jsonfile import decode, read_bytes
        from compiler.loader import MAX_FILE_BYTES

        try:
            raw = read_bytes(Path(path), "SQL file", MAX_FILE_BYTES, path)
        except InputError as err:
            problems.extend(err.diagnostics)
            continue
        try:
            text = decode(raw, path, "file")
        except InputError as err:
            problems.extend(err.diagnostics)
            continue
        results.append(scan(text, path, dialect))
    if problems:
        raise InputError(problems)
    return results
