"""``accord lint``: policy directories, YAML files of one project, and hand-written policy SQL.

A pre-commit hook: imports neither duckdb nor any platform client. The session (which paths
are what, the repository walk, the cache) is :func:`compiler.lint.run.lint_paths`; this module
parses the options and renders.
"""

from __future__ import annotations

import contextlib
import os
import sys

import click

from accord.compiler.commands.options import Choice, fail_on_option, format_option
from accord.compiler.core.platforms import DIALECTS
from accord.compiler.core.visible import own_commands, own_styles, visible
from accord.compiler.lint.report import (
    FORMATS,
    render_github,
    render_json,
    render_sarif,
    render_statistics,
    render_text,
)
from accord.compiler.lint.run import MISSING, exit_code, lint_paths

FAIL_ON = ("error", "warning", "never")


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path())
@format_option(FORMATS, "text for people; json, sarif (2.1.0) or github annotations for machines.")
@fail_on_option(
    FAIL_ON,
    "Exit 1 when an unsuppressed finding at or above this severity remains "
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
    type=Choice(DIALECTS),
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
    # not yet written before the first apply: a ledger that does not exist is an empty one
    type=click.Path(dir_okay=False),
    help="Migration ledger file (read by ACC601; one not written yet is empty).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the cache of parsed files and results (in the user's cache "
    "directory, or $ACCORD_CACHE_DIR; off on CI unless $ACCORD_CACHE_DIR is set; also "
    "ACCORD_NO_CACHE=1).",
)
def command(
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
    no_cache: bool = False,
) -> int:
    """Lint PATH...: a policy directory, YAML files of one project, .sql files (plain SQL,
    dbt / Jinja templates, Databricks notebook source, Snowflake scripts), or a repository
    (a dbt project, or a folder with no YAML of its own: every .sql file under it and its
    policy directory). Default: the configured policies, else policies. Exit 0 clean, 1
    findings at or above --fail-on (a policy statement that could not be analysed is one:
    ACC001), 2 unusable input."""
    result = lint_paths(
        paths,
        fail_on=fail_on,
        select=select,
        ignore=ignore_rules,
        dialect=dialect,
        plans=plans,
        ledger=ledger,
        cache=not no_cache,
    )
    findings, problems = result.findings, result.problems
    warnings, skipped, lowered = result.warnings, result.skipped, result.lowered
    if fmt != "github":  # every run: what the configuration turns off (github: annotations)
        for w in warnings:
            click.echo(str(w), err=True)
    if result.cache_refused:
        click.echo(f"note: {visible(result.cache_refused)}", err=True)
    if statistics and fmt == "text":
        click.echo(
            render_statistics(
                findings, result.files, show_suppressed, len(problems), skipped, lowered
            )
        )
    elif fmt == "json":
        click.echo(
            render_json(findings, show_suppressed, problems, warnings, skipped, lowered=lowered)
        )
    elif fmt == "sarif":
        click.echo(
            render_sarif(findings, problems, warnings=warnings, skipped=skipped, lowered=lowered)
        )
    elif fmt == "github":
        text = render_github(findings, show_suppressed, problems, warnings, lowered)
        if text:
            with own_commands():  # every value in them is escaped
                click.echo(text)
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        # the colours pass the guard; every value in the text is rendered visibly
        with own_styles() if color else contextlib.nullcontext():
            click.echo(
                render_text(findings, result.files, show_suppressed, color, problems, lowered),
                color=color,
            )
    if problems:
        for d in problems:
            missing = d.message == MISSING and d.location.line == 1 == d.location.column
            shown = f"{visible(d.location.file)}: {visible(d.message)}" if missing else str(d)
            click.echo(shown, err=True)
        n = len(problems)
        click.echo(f"accord lint: {n} input error{'s' if n != 1 else ''}", err=True)
        return 2
    return exit_code(findings, result.fail_on)
