"""``accord gate``: the promotion policy over a mesh manifest.

    accord gate [MANIFEST] [--policy FILE.rego] [--format text|json] [--model DIR]
    accord gate --print-policy
    accord gate test POLICY.rego --manifest SAMPLE.json [--format text|json]

Exit 0 allow, 1 deny (or, for ``test``, the policy fails open), 2 cannot evaluate.
"""

from __future__ import annotations

import click

from accord.compiler.commands.options import format_option
from accord.compiler.core.errors import UsageError

DEFAULT_MANIFEST = "mesh-manifest.json"


@click.command("gate")
@click.argument("args", nargs=-1)
@click.option(
    "--policy",
    "policy",
    type=click.Path(),
    default=None,
    help="The promotion policy (.rego); default: accord's (--print-policy).",
)
@click.option("--print-policy", is_flag=True, help="Print accord's default policy and exit.")
@click.option(
    "--manifest",
    "sample",
    type=click.Path(),
    default=None,
    help="test: the sample manifest the variants are made from.",
)
@click.option(
    "--model",
    "model_dir",
    default="policies",
    show_default=True,
    type=click.Path(),
    help="The policy directory whose fingerprint the manifest must carry.",
)
@format_option(("text", "json"))
def command(
    args: tuple[str, ...],
    policy: str | None,
    print_policy: bool,
    sample: str | None,
    model_dir: str,
    fmt: str,
) -> int:
    """Evaluate the promotion policy over a mesh manifest, or prove a policy cannot fail open.

    \b
    accord gate [MANIFEST]                            allow (0), deny (1), cannot evaluate (2)
    accord gate --print-policy                        accord's default policy, for OPA/conftest
    accord gate test POLICY.rego --manifest SAMPLE    exit 1 when the policy fails open"""
    from accord.compiler.gate.check import default_policy, read_manifest, read_policy, run_gate
    from accord.compiler.gate.engine import EngineError

    if print_policy:
        if args or policy or sample:
            raise UsageError("--print-policy takes no other argument")
        click.echo(default_policy(), nl=False)
        return 0
    try:
        if args and args[0] == "test":
            if len(args) != 2 or sample is None:
                raise UsageError("usage: accord gate test POLICY.rego --manifest SAMPLE.json")
            if policy is not None:
                raise UsageError("accord gate test takes the policy as its argument, not --policy")
            from accord.compiler.gate.prove import prove

            text, name = read_policy(args[1])
            proof = prove(text, name, read_manifest(sample), sample)
            click.echo(proof.render(fmt), nl=False)
            return 0 if proof.passed else 1
        if sample is not None:
            raise UsageError("--manifest is for accord gate test; give the manifest as MANIFEST")
        if len(args) > 1:
            raise UsageError("usage: accord gate [MANIFEST] [--policy FILE.rego]")
        from accord.compiler.model.validate import load_project

        project = load_project(model_dir)
        surfaces = project.model.surfaces
        agents = [name for name in sorted(surfaces) if surfaces[name].a2a is not None]
        manifest = args[0] if args else DEFAULT_MANIFEST
        result = run_gate(manifest, policy, project.fingerprint, agents)
    except EngineError as err:
        raise UsageError(f"accord gate: cannot evaluate: {err}") from None
    click.echo(result.render(fmt), nl=False)
    return 0 if result.allowed else 1
