from __future__ import annotations

import json

import click

from accord.compiler.model.schema import PolicyModel


def policy_schema() -> dict[str, object]:
    """The JSON Schema of the policy format, generated from the pydantic models. Every key is
    optional at file level (sections may be split over files), so `required` is dropped at the
    top."""
    schema = PolicyModel.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "accord policy file (version 1)"
    schema.pop("required", None)
    return schema


@click.command("schema")
@click.option(
    "--manifest", is_flag=True, help="The mesh manifest's schema (accord manifest) instead."
)
def command(manifest: bool) -> int:
    """Print the JSON Schema of the policy format (for editors via yaml-language-server), or
    with --manifest that of the mesh manifest."""
    if manifest:
        from accord.compiler.gate.manifest import manifest_schema

        click.echo(json.dumps(manifest_schema(), indent=2, sort_keys=True))
        return 0
    click.echo(json.dumps(policy_schema(), indent=2, sort_keys=True))
    return 0
