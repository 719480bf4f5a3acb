from __future__ import annotations

import json
from typing import Any

import click

from compiler.commands.options import Choice, live_options, options_from, progress
from compiler.core.visible import visible
from compiler.model.validate import (
    load_project,
    refuse_dated_grants,
    refuse_hierarchy,
    refuse_several_dimensions,
)


@click.command("introspect")
@click.option("--platform", required=True, type=Choice(["snowflake", "databricks"]))
@click.argument("directory", default="policies", type=click.Path())
@click.option("--format", "fmt", default="text", type=Choice(["text", "json"]))
@click.option(
    "--check-reader",
    is_flag=True,
    help="Only say what the reading role can and cannot see; exit 1 when it cannot see "
    "everything drift needs.",
)
@live_options
def command(platform: str, directory: str, fmt: str, check_reader: bool, **kwargs: Any) -> int:
    """Read the governance objects deployed on PLATFORM for the model in DIRECTORY.

    Reads only (SHOW / DESCRIBE / POLICY_REFERENCES / SELECT on Snowflake; Unity Catalog GETs
    and SELECT on Databricks); changes nothing. Salt function bodies are never read out.
    With --check-reader, says which privileges the reading role holds and which it lacks."""
    from compiler.live.introspect import object_json, sort_objects
    from compiler.live.session import session

    project = load_project(directory)
    refuse_dated_grants(project, "accord introspect")
    refuse_hierarchy(project, "accord introspect")
    refuse_several_dimensions(project, "accord introspect")
    if check_reader:
        return _check_reader(project, platform, fmt, options_from(kwargs))
    with session(project, [platform], options_from(kwargs), progress()) as read:
        live = read.catalogs[platform]
    if fmt == "json":
        click.echo(json.dumps(live.to_json(), indent=2, sort_keys=True))
        return 0
    click.echo(
        f"{platform}: {live.catalog.governance_schema} (fingerprint {live.fingerprint[:16]})"
    )
    for obj in sort_objects(live.catalog.objects):
        data = object_json(obj, platform)
        kind = data.pop("kind")
        name = data.get("name") or data.get("table", "")
        detail = {
            k: v
            for k, v in data.items()
            if k not in ("name", "body") and v not in ("", (), [], None)
        }
        click.echo(f"  {kind:<20} {name}  {json.dumps(detail, sort_keys=True)}")
    for g in live.salt_grants:
        kind = f"{g.kind.replace('_', ' ').lower()} " if platform == "snowflake" else ""
        click.echo(f"  salt grant: {g.privilege} on {g.function} to {kind}{g.grantee}")
    for name in live.insecure_salts:
        click.echo(f"  not SECURE: {name}")
    for column, over in sorted(live.overrides.items()):
        click.echo(f"  direct mask overrides the tag's: {visible(column)} ({visible(over)})")
    for what in sorted(live.not_in_effect):
        click.echo(f"  not in effect: {visible(what)}")
    for what in sorted(live.inherited_tags):
        click.echo(f"  inherited tag: {visible(what)}")
    for what in live.unreadable:
        click.echo(f"  could not read: {visible(what)}", err=True)
    if live.coverage is not None:
        for line in live.coverage.lines():
            click.echo(f"  {visible(line)}")
    return 0


def _check_reader(project: Any, platform: str, fmt: str, options: Any) -> int:
    """What the reading role can see, before any read is trusted: exit 1 when it lacks a
    privilege drift needs (every missing one named, with what it leaves unproven)."""
    from compiler.connect.executor import open_executor
    from compiler.live.introspect import reader_for
    from compiler.live.session import expected_catalogs

    expected = expected_catalogs(project, [platform])[platform]
    executor = open_executor(platform, options)
    try:
        reader = reader_for(platform, executor, expected)
        reader.check_reader()
    finally:
        executor.close()
    coverage = reader.coverage
    if fmt == "json":
        click.echo(json.dumps({"coverage": coverage.to_json()}, indent=2, sort_keys=True))
    else:
        who = coverage.reader or "the reading role"
        click.echo(f"{platform}: reading as {visible(who)}")
        for privilege in sorted(coverage.privileges):
            click.echo(f"  holds: {visible(privilege)}")
        for u in sorted(coverage.unseen):
            click.echo(f"  missing: {visible(u.sentence())}")
        verdict = "sees everything drift needs" if coverage.complete else "cannot see everything"
        click.echo(f"{platform}: the reading role {verdict}")
    return 0 if coverage.complete else 1
