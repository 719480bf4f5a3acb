"""``accord gate``: the promotion policy evaluated over a mesh manifest.

Promotion is allowed only when the policy's ``allow`` is true, its ``deny`` set is empty and
the manifest was written from the current model (its ``model_fingerprint``): a manifest of
another model is refused, whatever the policy says. What the policy could not check
(its ``warnings``) is printed beside the verdict, never as a pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes, read_json
from accord.compiler.core.visible import plain, visible
from accord.compiler.gate.engine import ENGINE, ENGINE_VERSION, Evaluation, evaluate

DEFAULT_POLICY_NAME = "accord/gate/policy.rego"


def default_policy() -> str:
    """accord's default promotion policy (``accord gate --print-policy``)."""
    return (
        resources.files("accord.compiler.gate").joinpath("policy.rego").read_text(encoding="utf-8")
    )


def read_policy(path: str | None) -> tuple[str, str]:
    """(text, name) of the policy to evaluate: ``path``, else the default."""
    if path is None:
        return default_policy(), DEFAULT_POLICY_NAME
    target = Path(path)
    text = decode(read_bytes(target, "policy", MAX_FILE_BYTES), path, "policy")
    return text, path


def read_manifest(path: str) -> Any:
    doc, _ = read_json(Path(path), "mesh manifest")
    return doc


@dataclass
class GateResult:
    manifest: str
    policy: str
    evaluation: Evaluation
    #: why the manifest is refused before the policy (another model's), if it is
    refusals: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return self.evaluation.allowed and not self.refusals

    @property
    def denials(self) -> list[str]:
        return [*self.refusals, *self.evaluation.deny]

    def document(self) -> dict[str, Any]:
        return plain(
            {
                "allow": self.allowed,
                "deny": self.denials,
                "warnings": list(self.evaluation.warnings),
                "complete": self.evaluation.complete,
                "manifest": self.manifest,
                "policy": self.policy,
                "engine": f"{ENGINE} {ENGINE_VERSION}",
            }
        )

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.document(), indent=2, sort_keys=True) + "\n"
        lines = [f"deny  {d}" for d in self.denials]
        lines += [f"note  {w}" for w in self.evaluation.warnings]
        n = len(self.denials)
        verdict = (
            "allow: promotion may proceed"
            if self.allowed
            else f"deny: {n} denial{'s' if n != 1 else ''}"
            if n
            else "deny: the policy's allow is false"
        )
        lines.append(f"accord gate ({self.policy} on {self.manifest}): {verdict}")
        return "\n".join(visible(line) for line in lines) + "\n"


def run_gate(
    manifest: str, policy: str | None, fingerprint: str, agents: Sequence[str] = ()
) -> GateResult:
    """Evaluate ``policy`` (default: accord's) on the manifest at ``manifest``, written for the
    model whose fingerprint is ``fingerprint`` and whose A2A surfaces are ``agents`` (by
    name). Raises EngineError when it cannot be evaluated, InputError when the manifest cannot
    be read."""
    doc = read_manifest(manifest)
    text, name = read_policy(policy)
    evaluation = evaluate(text, name, doc)
    refusals = []
    written_for = doc.get("model_fingerprint") if isinstance(doc, dict) else None
    if written_for != fingerprint:
        what = (
            f"for another model (fingerprint {str(written_for)[:12]}...)"
            if isinstance(written_for, str)
            else "without a model fingerprint"
        )
        refusals.append(
            f"the manifest was written {what}; the current model's is {fingerprint[:12]}...: "
            "run accord manifest again"
        )
    refusals += agent_refusals(doc, agents)
    return GateResult(manifest, name, evaluation, refusals)


def agent_refusals(doc: Any, agents: Sequence[str]) -> list[str]:
    """The manifest's agents compared with the model's A2A surfaces ``agents``, by name: each
    surface listed once, no other agent, none of them among the retired. A count the registry
    expects can be filled by a copy, a look-alike name or a retired entry while the agent a
    policy would deny is left out; the model says which agents there are. (What is not a list
    of named objects is the policy's to call incomplete.)"""
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    listed = manifest.get("agents") if isinstance(manifest, dict) else None
    if not isinstance(listed, list):
        return []
    names = [a.get("name") for a in listed if isinstance(a, dict)]
    expected = set(agents)
    out = [
        f"the model's agent {name} is not among the manifest's agents"
        for name in sorted(expected)
        if name not in names
    ]
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):
        if name not in expected:
            out.append(f"the manifest's agent {_shown(name)} is no A2A surface of the model")
        elif names.count(name) > 1:
            out.append(f"the manifest lists agent {name} {names.count(name)} times")
    retired = manifest.get("retired_agents") if isinstance(manifest, dict) else None
    for entry in retired if isinstance(retired, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name in expected:
            out.append(f"retired agent {name} is an A2A surface of the model, not retired")
    return out


def _shown(name: str) -> str:
    """A name as a message shows it: a look-alike's letters escaped (``lakehouse_\\u0430gent``)."""
    return name if name.isascii() and name.isprintable() else ascii(name)
