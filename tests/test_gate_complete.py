"""The gate's completeness is more than a count (issue 39, items 9 and 10).

Accord's default policy (``accord gate --print-policy``) on manifests that fill the expected
count while the failing agent is left out: a duplicate of another agent, a look-alike name (a
Cyrillic ``а``), a copy of an agent among the retired ones; and on evidence strings left
empty (``"" == ""`` is no difference). ``accord gate`` with the model loaded compares the
agents with the model's A2A surfaces by name. A key written twice in the manifest's JSON is a
parse error. ``accord gate test`` tries the variants a policy must deny (every value null,
every string empty, every list shortened by one, each agent removed, replaced by another's
copy, duplicated) and requires every key ``complete`` reads.

The samples are those of tests/test_gate_prove.py (the shape ``accord manifest`` writes).
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.gate.check import default_policy
from accord.compiler.gate.engine import evaluate
from accord.compiler.gate.prove import label, prove
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.test_gate_prove import agent, sample, seeded

#: an agent the default policy denies: it reads governed data without a passing probe
FAILING = agent("lakehouse_agent", policy_probe_passed=False)
GOOD = agent("warehouse_agent")


def _gate(doc: Any) -> tuple[bool, tuple[str, ...]]:
    got = evaluate(default_policy(), "policy.rego", doc)
    return got.allowed, got.deny


def _filled(agents: list[dict[str, Any]], retired: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """The sample with ``agents`` and ``retired``, its expected count that of the registry
    (two agents: the failing one among them)."""
    doc = sample(FAILING, GOOD)
    doc["manifest"]["agents"] = agents
    doc["manifest"]["retired_agents"] = list(retired)
    return doc


def test_the_failing_agent_is_denied() -> None:
    allowed, deny = _gate(sample(FAILING, GOOD))
    assert not allowed
    assert deny == (
        "agent lakehouse_agent reads governed data without a passing probe "
        "(probe owners: data-governance)",
    )


@pytest.mark.parametrize(
    ("doc", "denial"),
    [
        pytest.param(
            _filled([GOOD, copy.deepcopy(GOOD)]),
            "incomplete manifest: agent warehouse_agent is listed 2 times",
            id="a duplicate fills the count",
        ),
        pytest.param(
            _filled([GOOD, agent("lakehouse_\u0430gent")]),
            "incomplete manifest: agent lakehouse_\u0430gent: its name is not a surface's name",
            id="a look-alike name",
        ),
        pytest.param(
            _filled(
                [GOOD], [{"name": "warehouse_agent", "url": GOOD["url"], "card_served": False}]
            ),
            "incomplete manifest: warehouse_agent is listed both as an agent and as retired",
            id="a retired copy fills the count",
        ),
        pytest.param(
            _filled([GOOD, agent("lakehouse_agent", eval_digest="")], [])
            | {"evidence": {"mesh_eval_digest": "", "probe_result_digest": None}},
            "incomplete manifest: evidence.mesh_eval_digest is empty",
            id="empty digests",
        ),
        pytest.param(
            _filled([GOOD, agent("lakehouse_agent", card_digest="", registered_card_digest="")]),
            "incomplete manifest: agent lakehouse_agent: card_digest is empty",
            id="empty card digests",
        ),
        pytest.param(
            _filled([GOOD, agent("lakehouse_agent", probe_owners=[""])]),
            "incomplete manifest: agent lakehouse_agent: a probe owner is empty",
            id="an empty probe owner",
        ),
        pytest.param(
            _filled([GOOD, FAILING]) | {"model_fingerprint": None},
            "incomplete manifest: model_fingerprint is not a string",
            id="no fingerprint",
        ),
        pytest.param(
            _filled([GOOD, FAILING]) | {"accord_manifest": 2},
            "incomplete manifest: accord_manifest is 2, not 1 (the format this policy reads)",
            id="another format",
        ),
    ],
)
def test_what_fills_the_count_is_not_completeness(doc: dict[str, Any], denial: str) -> None:
    allowed, deny = _gate(doc)
    assert not allowed
    assert denial in deny, deny


def _estate(tmp_path: Path) -> Path:
    """The reference estate with two A2A agents (their endpoints are never called here)."""
    root = tmp_path / "estate"
    shutil.copytree(ROOT / "policies", root)
    surfaces = yaml.safe_load((root / "surfaces.yaml").read_text())
    for name in ("warehouse_agent", "lakehouse_agent"):
        surfaces["surfaces"][name]["a2a"] = {"url": f"https://{name}.example.com/a2a"}
    (root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    (root / "mesh.yaml").write_text('mesh:\n  a2a_version: "1.0"\n')
    return root


@pytest.mark.parametrize(
    ("agents", "retired", "refusals"),
    [
        pytest.param(
            [GOOD],
            [{"name": "lakehouse_agent", "url": FAILING["url"], "card_served": False}],
            [
                "the model's agent lakehouse_agent is not among the manifest's agents",
                "retired agent lakehouse_agent is an A2A surface of the model, not retired",
            ],
            id="the failing agent moved among the retired",
        ),
        pytest.param(
            [GOOD, agent("billing_agent")],
            [],
            [
                "the model's agent lakehouse_agent is not among the manifest's agents",
                "the manifest's agent billing_agent is no A2A surface of the model",
            ],
            id="another name fills the count",
        ),
    ],
)
def test_the_gate_compares_the_agents_with_the_model(
    tmp_path: Path, agents: list[Any], retired: list[Any], refusals: list[str]
) -> None:
    root = _estate(tmp_path)
    doc = _filled(agents, retired)
    doc["model_fingerprint"] = load_project(root).fingerprint
    assert _gate(doc)[0]  # the policy alone cannot tell: the model can
    (tmp_path / "m.json").write_text(json.dumps(doc))
    code, out, err = run_cli(
        ["gate", "m.json", "--model", str(root), "--format", "json"], cwd=tmp_path
    )
    assert code == 1, out + err
    assert json.loads(out)["deny"] == refusals
    # the manifest as written for the model: allowed
    doc["manifest"]["agents"] = [GOOD, agent("lakehouse_agent")]
    doc["manifest"]["retired_agents"] = []
    (tmp_path / "m.json").write_text(json.dumps(doc))
    code, out, err = run_cli(["gate", "m.json", "--model", str(root)], cwd=tmp_path)
    assert code == 0, out + err


def test_a_key_written_twice_is_a_parse_error(tmp_path: Path) -> None:
    """JSON readers disagree on a key written twice (the first or the last wins): the gate
    must not judge one document while OPA or conftest reads another."""
    root = _estate(tmp_path)
    doc = sample(FAILING, GOOD)
    doc["model_fingerprint"] = load_project(root).fingerprint
    text = json.dumps(doc, indent=2).replace(
        '"policy_probe_passed": false,',
        '"policy_probe_passed": false,\n      "policy_probe_passed": true,',
    )
    (tmp_path / "m.json").write_text(text)
    code, out, err = run_cli(["gate", "m.json", "--model", str(root)], cwd=tmp_path)
    assert code == 2, out + err
    line = text.splitlines().index('      "policy_probe_passed": true,') + 1
    assert (
        f"m.json:{line}:7: mesh manifest: invalid JSON: the key 'policy_probe_passed' is written twice"
        in err
    )
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------------
# accord gate test: the variants (item 10)

#: the completeness rule a copy of the default policy lacks, and the variant that then fails open
STRING_RULE = """incomplete contains msg if {
	some i, a in agents
	some key in agent_strings
	key in keys_of(a)
	not is_string(a[key])
	msg := sprintf("incomplete manifest: agent %s: %s is not a string", [label(i, a), key])
}
"""


def test_a_policy_that_fails_open_on_a_null_string_is_caught() -> None:
    proof = prove(seeded(STRING_RULE, ""), "broken.rego", sample(), "sample.json")
    caught = {(label(o.path), o.action) for o in proof.failures}
    assert ("manifest.agents[0].version", "null") in caught, proof.render("text")
    assert not proof.passed


def test_an_omitted_or_duplicated_agent_is_a_variant(tmp_path: Path) -> None:
    """A policy that counts the agents but never asks whether they are distinct, or never
    counts them: caught by the agent variants."""
    count_rule = "\tcount(agents) + count(retired) != input.expected_agent_count\n"
    no_count = seeded(count_rule, "\tfalse\n")
    proof = prove(no_count, "no-count.rego", sample(), "sample.json")
    caught = {(label(o.path), o.action) for o in proof.failures}
    assert ("manifest.agents[0]", "removed") in caught, proof.render("text")
    assert ("manifest.agents", "shortened") in caught
    distinct = default_policy().split("# ---- distinct")[1].split("# ----")[0]
    no_distinct = seeded(distinct, "\n")
    proof = prove(no_distinct, "no-distinct.rego", sample(), "sample.json")
    caught = {(label(o.path), o.action) for o in proof.failures}
    assert ("manifest.agents[0]", "replaced") in caught, proof.render("text")
    assert ("manifest.agents[0]", "duplicated, counted") in caught


def test_the_default_policy_denies_every_malformed_variant() -> None:
    doc = sample(FAILING, GOOD)
    proof = prove(default_policy(), "policy.rego", doc, "sample.json")
    assert proof.passed, proof.render("text")
    actions = {o.action for o in proof.outcomes}
    assert {
        "deleted", "false", "non-boolean", "null", "empty", "shortened", "removed", "replaced",
        "duplicated", "duplicated, counted",
    } <= actions  # fmt: skip
    # a value the format allows as null is a legitimate manifest: the gate warns, never fails
    (registered,) = [
        o for o in proof.outcomes
        if label(o.path) == "manifest.agents[0].registered_card_digest" and o.action == "null"
    ]  # fmt: skip
    assert registered.failure is None


#: the issue's policy: `complete` reads its keys rather than naming them as strings
READS_IN_COMPLETE = """
package reads

import rego.v1

default complete := false

complete if {
    is_string(input.evidence.mesh_eval_digest)
    is_string(input.manifest.negotiated_a2a_version)
    count(input.manifest.agents) == input.expected_agent_count
    not input.nothing.here
    object.get(input, "optional", "") == ""
}

deny contains msg if {
    some a in input.manifest.agents
    a.eval_digest != input.evidence.mesh_eval_digest
    msg := "cleared against another evaluation"
}

deny contains msg if {
    input.manifest.negotiated_a2a_version != "1.0"
    msg := "another version"
}

deny contains msg if {
    input.nothing.here
    input.optional
    msg := "read under not and object.get only"
}

default allow := false

allow if {
    complete
    count(deny) == 0
}
"""


def test_a_key_complete_reads_is_required() -> None:
    proof = prove(READS_IN_COMPLETE, "reads.rego", sample(), "sample.json")
    keys = sorted(u.split(" reads ")[1].split(",")[0] for u in proof.unrequired)
    # evidence, mesh_eval_digest, manifest, agents, negotiated_a2a_version: read by complete;
    # eval_digest is not, nor what complete reads only under `not` or through object.get
    assert keys == ["eval_digest", "here", "nothing", "optional"], proof.unrequired
