from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from accord.compiler.commands.options import Choice, live_options, options_from, progress, say
from accord.compiler.core.visible import plain
from accord.compiler.model.validate import load_project


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
    from accord.compiler.live.hierarchy import read_hierarchies
    from accord.compiler.live.session import session
    from accord.targets.inspect import object_json, sort_objects
    from accord.targets.platform import platform as platform_named

    project = load_project(directory)
    if check_reader:
        return _check_reader(project, platform, fmt, options_from(kwargs), progress(fmt))
    options = options_from(kwargs)
    with session(project, [platform], options, progress(fmt)) as read:
        read_hierarchies(project, read, options.jobs)  # with `inherits` in the model
        live = read.catalogs[platform]
    if fmt == "json":
        # valid UTF-8 whatever a name holds (a byte that is not UTF-8 is written \xff)
        click.echo(json.dumps(plain(live.to_json()), indent=2, sort_keys=True))
        return 0
    say(f"{platform}: {live.catalog.governance_schema} (fingerprint {live.fingerprint[:16]})")
    for obj in sort_objects(live.catalog.objects):
        data = object_json(obj, platform)
        kind = data.pop("kind")
        name = data.get("name") or data.get("table", "")
        detail = {
            k: v
            for k, v in data.items()
            if k not in ("name", "body") and v not in ("", (), [], None)
        }
        say(f"  {kind:<20} {name}  {json.dumps(detail, sort_keys=True)}")
    spelling = platform_named(platform).migrations()
    for g in live.salt_grants:
        say(f"  salt grant: {g.privilege} on {g.function} to {spelling.grantee(g.grantee, g.kind)}")
    for name in live.insecure_salts:
        say(f"  not SECURE: {name}")
    for column, over in sorted(live.overrides.items()):
        say(f"  direct mask overrides the tag's: {column} ({over})")
    for what in sorted(live.not_in_effect):
        say(f"  not in effect: {what}")
    for what in sorted(live.inherited_tags):
        say(f"  inherited tag: {what}")
    for edge in live.hierarchy or []:
        say(f"  hierarchy: {edge.child} inherits {edge.parent}")
    for what in live.unreadable:
        say(f"  could not read: {what}", err=True)
    if live.coverage is not None:
        for line in live.coverage.lines():
            say(f"  {line}")
    return 0


def _check_reader(
    project: Any, platform: str, fmt: str, options: Any, shown: Callable[[str], None]
) -> int:
    """What the reading role can see, before any read is trusted: exit 1 when it lacks a
    privilege drift needs (every missing one named, with what it leaves unproven)."""
    from accord.compiler.connect.executor import open_executor
    from accord.compiler.core.progress import finished
    from accord.compiler.live.session import expected_catalogs
    from accord.targets.inspect import reader_for

    expected = expected_catalogs(project, [platform])[platform]
    shown(f"{platform}: connecting")
    executor = open_executor(platform, options)
    try:
        shown(f"{platform}: what the reading role can see")
        reader = reader_for(platform, executor, expected)
        reader.check_reader()
        _check_hierarchy(project, platform, executor, expected, reader.coverage, options.jobs)
    finally:
        executor.close()
        finished(shown)
    coverage = reader.coverage
    if fmt == "json":
        click.echo(json.dumps(plain({"coverage": coverage.to_json()}), indent=2, sort_keys=True))
    else:
        who = coverage.reader or "the reading role"
        say(f"{platform}: reading as {who}")
        for privilege in sorted(coverage.privileges):
            say(f"  holds: {privilege}")
        for u in sorted(coverage.unseen):
            say(f"  missing: {u.sentence()}")
        verdict = "sees everything drift needs" if coverage.complete else "cannot see everything"
        click.echo(f"{platform}: the reading role {verdict}")
    return 0 if coverage.complete else 1


def _check_hierarchy(
    project: Any, platform: str, executor: Any, expected: Any, coverage: Any, jobs: int
) -> None:
    """With ``inherits`` in the model: whether the reading role may see who inherits each
    modelled principal (the read drift makes; what it cannot see joins the coverage)."""
    from accord.compiler.live.hierarchy import read_modelled
    from accord.targets.inspect import LiveCatalog
    from accord.targets.objects import Catalog

    live = LiveCatalog(Catalog(platform, expected.governance_schema, expected.style))
    live.coverage = coverage
    read_modelled(project, platform, executor, expected, live, jobs)
