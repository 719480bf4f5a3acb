"""``accord lint``: policy directories, YAML files of one project, and hand-written policy SQL.

A pre-commit hook: imports neither duckdb nor any platform client.
"""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from compiler.core import store
from compiler.core.errors import Diagnostic, InputError, Location, UsageError
from compiler.core.platforms import DIALECTS
from compiler.lint import Finding, lint_project, lint_sql_batch
from compiler.lint import cache as lint_cache
from compiler.lint.config import LintConfig, load_config, parse_codes
from compiler.lint.report import (
    FORMATS,
    render_github,
    render_json,
    render_sarif,
    render_statistics,
    render_text,
)
from compiler.model.loader import display_path

FAIL_ON = ("error", "warning", "never")
_MISSING = "no such file or directory"


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
    default=None,
    help="Exit 1 when an unsuppressed finding at or above this severity remains "
    "(default: fail-on of the configuration, else error).",
)
@click.option(
    "--select",
    default=None,
    help="Comma-separated rule ids, id prefixes or names to report (replaces the "
    "configuration's select).",
)
@click.option(
    "--ignore",
    "ignore_rules",
    default=None,
    help="Comma-separated rules not to report (added to the configuration's ignore).",
)
@click.option("--statistics", is_flag=True, help="Count findings by rule instead of listing them.")
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
    """Lint PATH...: a policy directory, YAML files of one project, .sql files (plain SQL,
    dbt / Jinja templates, Databricks notebook source, Snowflake scripts), or a repository
    (a dbt project, or a folder with no YAML of its own: every .sql file under it and its
    policy directory). Default: the configured policies, else policies. Exit 0 clean, 1
    findings at or above --fail-on (a policy statement that could not be analysed is one:
    ACC001), 2 unusable input."""
    store.enable(not no_cache)
    try:
        code = _run(**options)
        if code != 2:
            store.flush()  # only a run that read all of its input writes the cache
        return code
    finally:
        store.enable(False)


def _run(
    paths: tuple[str, ...],
    fmt: str,
    fail_on: str | None,
    select: str | None,
    ignore_rules: str | None,
    statistics: bool,
    dialect: str | None,
    show_suppressed: bool,
    plans: str | None,
    ledger: str | None,
) -> int:
    # A loaded estate is a large graph of long-lived objects; at the default threshold (700
    # allocations) the cyclic collector rescans it thousands of times. A larger first
    # threshold cuts lint time on a 3,000-table estate by about a third (bench/lint_bench.py).
    gc.set_threshold(100_000, 50, 100)
    problems: list[Diagnostic] = []
    try:
        config = load_config()
    except InputError as err:  # reported with the findings of the default configuration
        problems += err.diagnostics
        config = LintConfig()
    config = _with_options(config, select, ignore_rules)
    fail_on = fail_on or config.fail_on or "error"
    default = config.policies and os.path.relpath(os.path.join(config.root, config.policies))
    given = paths or (default or "policies",)
    directories, yaml_files, sql_files = _classify(given, problems, config)
    sql_files = [f for f in sql_files if not (config.force_exclude and config.excluded(f))]
    extra: dict[str, object] = {"plans": plans, "ledger": ledger}
    findings: list[Finding] = []
    files = 0
    projects = [(d, None) for d in directories]
    if yaml_files:
        projects.append((None, yaml_files))
    for directory, yaml in projects:
        try:
            found, count = _lint_project(directory, yaml, extra, config)
            findings += found
            files += count
        except InputError as err:
            problems += err.diagnostics
    if sql_files:
        sql_findings, sql_problems, count = _lint_sql(sql_files, dialect, config)
        findings += sql_findings
        problems += sql_problems
        files += count
    findings = sorted(f for f in findings if not config.ignored_in(f.location.file, f.rule))
    problems = sorted(set(problems))
    if statistics and fmt == "text":
        click.echo(render_statistics(findings, files, show_suppressed, len(problems)))
    elif fmt == "json":
        click.echo(render_json(findings, show_suppressed, problems))
    elif fmt == "sarif":
        click.echo(render_sarif(findings, problems))
    elif fmt == "github":
        text = render_github(findings, show_suppressed, problems)
        if text:
            click.echo(text)
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        click.echo(render_text(findings, files, show_suppressed, color, problems), color=color)
    if problems:
        for d in problems:
            missing = d.message == _MISSING and d.location.line == 1 == d.location.column
            click.echo(f"{d.location.file}: {d.message}" if missing else str(d), err=True)
        n = len(problems)
        click.echo(f"accord lint: {n} input error{'s' if n != 1 else ''}", err=True)
        return 2
    return exit_code(findings, fail_on)


def _with_options(config: LintConfig, select: str | None, ignore: str | None) -> LintConfig:
    """``--select`` replaces the configured select; ``--ignore`` adds to its ignore."""
    where = Location("<command line>", 1, 1)
    try:
        if select is not None:
            config = replace(config, select=parse_codes(select, where))
        if ignore is not None:
            config = replace(config, ignore=config.ignore + parse_codes(ignore, where))
    except InputError as err:
        raise UsageError(f"--select / --ignore: {err.diagnostics[0].message}") from None
    return config


def exit_code(findings: list[Finding], fail_on: str) -> int:
    """1 when an unsuppressed finding at or above ``fail_on`` remains, else 0."""
    active = [f for f in findings if not f.suppressed]
    if fail_on == "never":
        return 0
    if fail_on == "warning":
        return 1 if active else 0
    return 1 if any(f.severity == "error" for f in active) else 0


#: folders a repository walk never enters (build tools' caches, virtual environments, dbt's
#: compiled output and installed packages)
_SKIPPED_DIRS = frozenset(
    {"node_modules", "target", "dbt_packages", "dbt_modules", "logs", "__pycache__", "venv"}
)


def _classify(
    paths: tuple[str, ...], problems: list[Diagnostic], config: LintConfig
) -> tuple[list[str], list[str], list[str]]:
    """Policy directories, YAML policy files and SQL files among ``paths``. A directory that
    is a repository (see :func:`_is_repository`) has its SQL files linted (dbt macros and
    models, notebooks, scripts), and its policy directory: the configured ``policies`` when
    it lies inside, else ``policies/``. Paths that do not exist are reported and the others
    still linted."""
    directories, yaml_files, sql_files = [], [], []
    for path in paths:
        lowered = path.lower()
        if os.path.isdir(path):
            inside = _policies_inside(path, config)
            if _is_repository(path, inside):
                sql_files += [f for f in _walk_sql(path) if not config.excluded(f)]
                if inside is not None:
                    directories.append(inside)
            else:
                directories.append(path)
        elif not os.path.exists(path):
            problems.append(Diagnostic(Location(path, 1, 1), _MISSING))
        elif lowered.endswith(".sql") or _is_python_notebook(path):
            sql_files.append(path)
        elif lowered.endswith((".yaml", ".yml")):
            yaml_files.append(path)
        else:
            raise UsageError(f"{path}: not a policy directory, a YAML policy file or a .sql file")
    return directories, yaml_files, list(dict.fromkeys(sql_files))


def _policies_inside(path: str, config: LintConfig) -> str | None:
    """The policy directory inside ``path``: the configured one, else ``policies/``."""
    candidates = []
    if config.policies:
        configured = os.path.abspath(os.path.join(config.root, config.policies))
        candidates.append(configured)
    candidates.append(os.path.abspath(os.path.join(path, "policies")))
    here = os.path.abspath(path)
    for found in candidates:
        if found != here and found.startswith(here + os.sep) and os.path.isdir(found):
            return display_path(Path(found), Path(here), path)
    return None


def _is_repository(path: str, policies: str | None) -> bool:
    """A dbt project; or a directory with no YAML file of its own that holds a policy
    directory (configured, or ``policies/``), SQL files, or no YAML at all. Anything else
    (YAML files, at the top or in sub-folders) is a policy directory."""
    from compiler.model.loader import discover

    names = os.listdir(path)
    if "dbt_project.yml" in names or "dbt_project.yaml" in names:
        return True
    own_yaml = any(
        n.endswith((".yaml", ".yml"))
        and not n.startswith(".")
        and os.path.isfile(os.path.join(path, n))
        for n in names
    )
    if own_yaml:
        return False
    return policies is not None or bool(_walk_sql(path)) or not discover(Path(path))


def _walk_sql(root: str) -> list[str]:
    """Every ``.sql`` file (and Databricks Python notebook) under ``root``, in a stable order;
    hidden and tool folders skipped."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS
        )
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            if name.lower().endswith(".sql") or _is_python_notebook(str(path)):
                found.append(display_path(path, Path(root), root))
    return found


def _is_python_notebook(path: str) -> bool:
    from compiler.lint.inputs.notebooks import is_python_notebook  # light: no scanner, no sqlglot

    return is_python_notebook(path)


def _lint_project(
    directory: str | None, yaml_files: list[str] | None, extra: dict[str, object], config: Any
) -> tuple[list[Finding], int]:
    """The findings of one project and its number of files; from the cache when the content
    of the files (what lint reads of them: ``parsecache.content_digest``), the selected rules and
    accord are those the cached findings were computed from (compiler/lint/cache.py). The same as
    loading the project and ``lint_project(project, extra, config.selected)``."""
    from compiler.model.loader import directory_files, load_documents, parse_document, read_files
    from compiler.model.rules import RULES_BY_ID

    if directory is not None:
        files, root = directory_files(directory)
    else:
        assert yaml_files
        files, root = [(Path(f), f) for f in yaml_files], Path(yaml_files[0]).parent
    documents, unreadable = read_files(files)
    key = None
    if store.enabled() and not unreadable and not any(extra.values()):
        selected = ",".join(r for r in sorted(RULES_BY_ID) if config.selected(r))
        key = lint_cache.project_key(documents, "lint\0" + selected, parse_document)
        payload = store.read("lint", key) if key is not None else None
        hit = lint_cache.findings_from_json(payload) if payload is not None else None
        if hit is not None:
            return hit
    from compiler.model.validate import validate_raw

    project = validate_raw(load_documents(documents, root, unreadable))
    findings = lint_project(project, extra, config.selected)
    if key is not None:
        store.later("lint", key, lint_cache.findings_to_json(findings, len(project.files)))
    return findings, len(project.files)


def _lint_sql(
    sql_files: list[str], dialect: str | None, config: Any
) -> tuple[list[Finding], list[Diagnostic], int]:
    """The findings of the SQL files linted together, the problems (unreadable files, bad
    suppression comments) and the number of files scanned. From the cache when every file's
    name and bytes, ``--dialect``, the selected rules and accord are those the cached findings
    were computed from: SQL rules compare files (ACC203 across platforms), so the key covers
    all of them, and a warm run imports neither the scanner nor sqlglot. Only a batch with no
    problem is stored. The same as ``lint_sql_batch(read_sql_files(...))``; the files are read
    once, and the bytes hashed are the bytes scanned."""
    from compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
    from compiler.model.rules import RULES_BY_ID

    blobs: list[tuple[str, bytes]] = []
    problems: list[Diagnostic] = []
    for path in sql_files:
        try:  # as compiler.lint.inputs.sqlfiles.read_text reads them
            blobs.append((path, read_bytes(Path(path), "SQL file", MAX_FILE_BYTES, path)))
        except InputError as err:
            problems.append(err.diagnostics[0])
    key = None
    if store.enabled() and not problems:
        selected = ",".join(r for r in sorted(RULES_BY_ID) if config.selected(r))
        key = lint_cache.sql_key(blobs, f"sql\0{dialect or ''}\0{selected}")
        payload = store.read("lint", key)
        hit = lint_cache.findings_from_json(payload) if payload is not None else None
        if hit is not None:
            found, count = hit
            return found, [], count
    from compiler.lint.inputs.sqlfiles import scan_sql

    results = []
    for path, raw in blobs:
        try:
            text = decode(raw, path, "file")
        except InputError as err:
            problems.append(err.diagnostics[0])
            continue
        results.append(scan_sql(text, path, dialect))
    found, bad_suppressions = lint_sql_batch(results, config.selected)
    problems += bad_suppressions
    if key is not None and not problems:
        store.later("lint", key, lint_cache.findings_to_json(found, len(results)))
    return found, problems, len(results)
