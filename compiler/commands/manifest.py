"""``accord manifest``: the mesh manifest from the model and the evidence.

accord manifest [DIR] --out FILE [--registry FILE | --expected-count N]
    [--eval-digest D] [--probe-result FILE] [--registered-cards DIR] [--timeout S]
"""

from __future__ import annotations

import click

from accord.compiler.commands.options import directory_argument
from accord.compiler.core.visible import visible


@click.command("manifest")
@directory_argument
@click.option("--out", "out", required=True, type=click.Path(), help="Write the manifest here.")
@click.option(
    "--registry",
    type=click.Path(),
    default=None,
    help='The registry export (JSON: {"agents": [{"name", "url"}]}): the expected agents.',
)
@click.option(
    "--expected-count",
    type=click.IntRange(min=0),
    default=None,
    help="The number of agents the mesh must have (instead of --registry).",
)
@click.option("--eval-digest", default=None, help="The mesh evaluation's digest.")
@click.option(
    "--probe-result",
    type=click.Path(),
    default=None,
    help="The result file of accord probe --live --out.",
)
@click.option(
    "--registered-cards",
    type=click.Path(),
    default=None,
    help="The agent cards as the registry stored them (DIR/<agent>.json).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=600),
    default=30.0,
    show_default=True,
    help="Seconds for fetching one agent card (at most the surface's a2a.timeout_seconds).",
)
def command(
    directory: str,
    out: str,
    registry: str | None,
    expected_count: int | None,
    eval_digest: str | None,
    probe_result: str | None,
    registered_cards: str | None,
    timeout: float,
) -> int:
    """Write the mesh manifest: every A2A agent of the model, its served card, its probes."""
    from accord.compiler.gate.manifest import ManifestOptions, build_manifest, write_manifest
    from accord.compiler.model.validate import load_project

    project = load_project(directory)
    built = build_manifest(
        project,
        ManifestOptions(
            registry=registry,
            expected_count=expected_count,
            eval_digest=eval_digest,
            probe_result=probe_result,
            registered_cards=registered_cards,
            timeout=timeout,
        ),
    )
    write_manifest(built, out)
    for note in built.notes:
        click.echo(visible(f"accord manifest: {note}"), err=True)
    agents = len(built.document["manifest"]["agents"])
    click.echo(f"accord manifest: {agents} agent{'s' if agents != 1 else ''} written to {out}")
    return 0
