from __future__ import annotations

import json
from typing import Any

import click

from compiler.commands.options import Choice, live_options, options_from, progress
from compiler.core.visible import visible
from compiler.model.validate import load_project


@click.command("introspect")
@click.option("--platform", required=True, type=Choice(["snowflake", "databricks"]))
@click.argument("directory", default="policies", type=click.Path())
@click.option("--format", "fmt", default="text", type=Choice(["text", "json"]))
@live_options
def command(platform: str, directory: str, fmt: str, **kwargs: Any) -> int:
    """Read the governance objects deployed on PLATFORM for the model in DIRECTORY.

    Reads only (SHOW / DESCRIBE / POLICY_REFERENCES / SELECT on Snowflake; Unity Catalog GETs
    and SELECT on Databricks); changes nothing. Salt function bodies are never read out."""
    from compiler.live.introspect import object_json, sort_objects
    from compiler.live.session import session

    project = load_project(directory)
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
        click.echo(f"  salt grant: {g.privilege} on {g.function} to {g.grantee}")
    for name in live.insecure_salts:
        click.echo(f"  not SECURE: {name}")
    for what in live.unreadable:
        click.echo(f"  could not read: {visible(what)}", err=True)
    if live.coverage is not None:
        for line in live.coverage.lines():
            click.echo(f"  {visible(line)}")
    return 0
