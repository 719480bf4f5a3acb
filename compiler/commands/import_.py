"""``accord import``: write a policy directory from what is deployed and from hand-written SQL."""

from __future__ import annotations

from typing import Any

import click

from accord.compiler.commands.options import (
    Choice,
    live_options,
    options_from,
    platforms_of,
    progress,
    say,
)


@click.command("import")
@click.argument("sources", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option(
    "--out", required=True, type=click.Path(), help="The policy directory to write (new or empty)."
)
@click.option(
    "--platform",
    default=None,
    type=Choice(["snowflake", "databricks", "all"]),
    help="Read what is deployed on the platform (live, read only).",
)
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    metavar="DB.SCHEMA|CATALOG",
    help="--platform: read only the policies of tables in these schemas or databases/catalogs "
    "(repeatable) [default: everything the reading role sees].",
)
@click.option(
    "--dialect",
    default=None,
    type=Choice(["snowflake", "databricks"]),
    help="PATH: the SQL dialect [default: as accord lint decides it].",
)
@live_options
def command(
    sources: tuple[str, ...],
    out: str,
    platform: str | None,
    scopes: tuple[str, ...],
    dialect: str | None,
    **kwargs: Any,
) -> int:
    """Write a policy directory OUT from what is deployed (--platform: read live, least
    privilege, coverage reported) and/or from hand-written policy SQL (PATH: files or
    directories, read as accord lint reads them: plain SQL, dbt/Jinja, notebooks).

    What the model expresses becomes the model; everything else is kept verbatim as an
    `unmanaged` entry with why, listed here and in OUT/IMPORT.md (exit 1). Salts are never
    read: each salt function becomes a reference to fill, named here. Right after an import of
    P, `accord plan OUT --base live:P` plans no change. Never writes into a non-empty OUT."""
    from accord.compiler.importer.run import run_import

    options = options_from(kwargs)
    outcome = run_import(
        out,
        list(sources),
        platforms_of(platform) if platform else [],
        list(scopes),
        options,
        dialect,
        progress(),
    )
    for line in outcome.lines:
        say(line)
    return outcome.code
