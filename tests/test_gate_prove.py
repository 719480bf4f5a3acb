"""``accord gate test``: the prover that a promotion policy cannot fail open, on accord's
default policy (which passes) and on copies of it with one completeness requirement removed
(the agent's ``name``, its ``reads_governed_data``, the top-level ``evidence``, the
``negotiated_a2a_version``): each copy is caught at exactly the key it no longer requires.
Also the policy "written the obvious way" (deny rules and no completeness rule), a policy that
tests presence by reading a boolean's value, and a denial that disappears behind another.

The sample is a manifest in the shape ``accord manifest`` writes (checked against
``accord schema --manifest``); ``tests/test_gate.py`` runs the default policy's proof on one
written over the wire.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from accord.compiler.gate.check import default_policy
from accord.compiler.gate.manifest import manifest_schema
from accord.compiler.gate.prove import key_paths, label, prove, value_paths
from tests.cli import run_cli

D = "0123456789abcdef" * 4


def agent(name: str, **changes: Any) -> dict[str, Any]:
    out = {
        "name": name,
        "url": f"https://{name}.example.com/a2a",
        "card_url": f"https://{name}.example.com/.well-known/agent-card.json",
        "version": "2.3.0",
        "card_digest": D,
        "registered_card_digest": D,
        "a2a_version": "1.0",
        "eval_digest": D,
        "reads_governed_data": True,
        "policy_probe_passed": True,
        "probe_owners": ["data-governance"],
    }
    out.update(changes)
    return out


def sample(*agents: dict[str, Any]) -> dict[str, Any]:
    agents = agents or (agent("lakehouse_agent"), agent("warehouse_agent"))
    doc = {
        "accord_manifest": 1,
        "model_fingerprint": D,
        "expected_agent_count": len(agents),
        "evidence": {"mesh_eval_digest": D, "probe_result_digest": D},
        "manifest": {
            "negotiated_a2a_version": "1.0",
            "agents": list(agents),
            "retired_agents": [],
        },
    }
    jsonschema.validate(doc, manifest_schema())
    return doc


def seeded(old: str, new: str) -> str:
    policy = default_policy()
    assert policy.count(old) == 1, old
    return policy.replace(old, new)


#: the four seeded defects: one completeness requirement removed each
SEEDED = {
    "name": (
        '"name", "url", "card_url", "version", "card_digest", "registered_card_digest"',
        '"url", "card_url", "version", "card_digest", "registered_card_digest"',
        "manifest.agents[0].name",
    ),
    "reads_governed_data": (
        '"reads_governed_data", "policy_probe_passed", "probe_owners",',
        '"policy_probe_passed", "probe_owners",',
        "manifest.agents[0].reads_governed_data",
    ),
    "evidence": (
        '"expected_agent_count", "evidence", "manifest"}',
        '"expected_agent_count", "manifest"}',
        "evidence",
    ),
    "negotiated_a2a_version": (
        '{"negotiated_a2a_version", "agents", "retired_agents"}',
        '{"agents", "retired_agents"}',
        "manifest.negotiated_a2a_version",
    ),
}


def test_the_default_policy_cannot_fail_open() -> None:
    doc = sample()
    proof = prove(default_policy(), "policy.rego", doc, "sample.json")
    assert proof.passed, proof.render("text")
    paths = list(key_paths(doc))
    booleans = [p for p in paths if isinstance(_get(doc, p), bool)]
    values = list(value_paths(doc))
    strings = [p for p in values if isinstance(_get(doc, p), str)]
    lists = [p for p in values if isinstance(_get(doc, p), list) and _get(doc, p)]
    agents = len(doc["manifest"]["agents"])
    assert len(proof.outcomes) == (
        len(paths) + 2 * len(booleans)  # deleted; false and "true"
        + len(values) + len(strings) + len(lists)  # null, "", shortened
        + 4 * agents  # removed, replaced, duplicated, duplicated with the count raised
    )  # fmt: skip
    # every variant is denied, but a boolean set to false and what is still a manifest of the
    # format: a probe owner fewer, no registered card to compare with (the gate warns), no
    # probe result
    allowed = {(label(o.path), o.action) for o in proof.outcomes if o.verdict == "allowed"}
    assert {a for a in allowed if a[1] != "false"} == {
        ("evidence.probe_result_digest", "null"),
        *(
            (f"manifest.agents[{i}]{what}", action)
            for i in range(agents)
            for what, action in (
                (".probe_owners", "shortened"),
                (".registered_card_digest", "null"),
            )
        ),
    }
    assert proof.unrequired == [] and "compared" in proof.static


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@pytest.mark.parametrize("defect", sorted(SEEDED))
def test_each_seeded_fail_open_copy_is_caught_at_its_key(defect: str) -> None:
    old, new, key = SEEDED[defect]
    proof = prove(seeded(old, new), "broken.rego", sample(), "sample.json")
    assert not proof.passed
    caught = {(label(o.path), o.action) for o in proof.failures}
    assert (key, "deleted") in caught, proof.render("text")
    # only that key fails open (for an agent field: on each agent), nothing else
    keys = {k for k, _ in caught}
    if key.startswith("manifest.agents[0]."):
        assert keys == {key, key.replace("[0]", "[1]")}
    else:
        assert keys == {key}
    (first,) = [o for o in proof.failures if (label(o.path), o.action) == (key, "deleted")]
    assert first.verdict == "allowed"
    assert f"allows the manifest with {key} deleted" in first.failure


def test_the_cli_exits_1_on_a_seeded_copy_and_0_on_the_default(tmp_path: Path) -> None:
    (tmp_path / "sample.json").write_text(json.dumps(sample()))
    old, new, _ = SEEDED["name"]
    (tmp_path / "broken.rego").write_text(seeded(old, new))
    code, out, err = run_cli(
        ["gate", "test", "broken.rego", "--manifest", "sample.json"], cwd=tmp_path
    )
    assert code == 1, err
    assert "FAIL-OPEN  manifest.agents[0].name deleted: the policy allows" in out
    (tmp_path / "policy.rego").write_text(run_cli(["gate", "--print-policy"]).stdout)
    code, out, err = run_cli(
        ["gate", "test", "policy.rego", "--manifest", "sample.json"], cwd=tmp_path
    )
    assert code == 0, out + err
    assert out.splitlines()[-1].endswith("variants that must be denied")


OBVIOUS = """
package team.gate

import rego.v1

deny contains msg if {
    some a in input.manifest.agents
    a.a2a_version != input.manifest.negotiated_a2a_version
    msg := sprintf("%s speaks another A2A version", [a.name])
}

deny contains msg if {
    some a in input.manifest.agents
    a.reads_governed_data
    not a.policy_probe_passed
    msg := sprintf("%s has no passing probe", [a.name])
}

deny contains msg if {
    count(input.manifest.agents) != input.expected_agent_count
    msg := "agents missing"
}

default allow := false

allow if count(deny) == 0
"""


def test_the_policy_written_the_obvious_way_fails_open() -> None:
    proof = prove(OBVIOUS, "team.rego", sample(), "sample.json")
    failed = {label(o.path) for o in proof.failures if o.action == "deleted"}
    # the three: an agent's name, reads_governed_data, the negotiated version
    assert {
        "manifest.agents[0].name",
        "manifest.agents[0].reads_governed_data",
        "manifest.negotiated_a2a_version",
        "expected_agent_count",
    } <= failed
    # and statically: no `complete` rule, so every key read is unrequired
    assert "no `complete` rule" in proof.static
    assert any("reads reads_governed_data" in u for u in proof.unrequired)


def test_a_denial_that_disappears_behind_another_is_caught() -> None:
    # two denials in the sample; deleting reads_governed_data removes one, the other stays,
    # so the manifest is still denied, but the probe rule read a key complete does not require
    old, new, _ = SEEDED["reads_governed_data"]
    doc = sample(
        agent("lakehouse_agent", policy_probe_passed=False),
        agent("warehouse_agent", a2a_version="0.3"),
    )
    proof = prove(seeded(old, new), "broken.rego", doc, "sample.json")
    (hit,) = [
        o
        for o in proof.failures
        if label(o.path) == "manifest.agents[0].reads_governed_data" and o.action == "deleted"
    ]
    assert hit.verdict == "denied"
    assert "disappears and no completeness denial takes its place" in hit.failure
    assert "lakehouse_agent reads governed data" in hit.failure
    # the default policy: the completeness denial takes its place
    assert prove(default_policy(), "policy.rego", doc, "sample.json").passed


def test_presence_tested_by_reading_a_boolean_is_reported() -> None:
    policy = """
package bad

import rego.v1

incomplete contains "no probe result" if {
    some a in input.manifest.agents
    not a.policy_probe_passed
}

default complete := false

complete if count(incomplete) == 0

deny contains msg if {
    some msg in incomplete
}

default allow := false

allow if {
    complete
    count(deny) == 0
}
"""
    proof = prove(policy, "bad.rego", sample(), "sample.json")
    hits = [o for o in proof.failures if o.action == "false"]
    assert {label(o.path) for o in hits} == {
        "manifest.agents[0].policy_probe_passed",
        "manifest.agents[1].policy_probe_passed",
    }
    assert "tests its presence by reading its value" in hits[0].failure


def test_a_probe_owner_that_is_not_a_string_is_incomplete_not_an_engine_error() -> None:
    from accord.compiler.gate.engine import evaluate

    doc = sample(agent("a"))
    doc["manifest"]["agents"][0]["probe_owners"] = [7]  # not the schema's: the gate's input
    got = evaluate(default_policy(), "policy.rego", doc)
    assert got.complete is False and not got.allowed
    assert "incomplete manifest: agent a: a probe owner is not a string" in got.deny


def test_a_sample_the_policy_finds_incomplete_cannot_prove_anything(tmp_path: Path) -> None:
    doc = sample()
    del doc["evidence"]
    (tmp_path / "sample.json").write_text(json.dumps(doc))
    (tmp_path / "policy.rego").write_text(default_policy())
    code, out, err = run_cli(
        ["gate", "test", "policy.rego", "--manifest", "sample.json"], cwd=tmp_path
    )
    assert code == 2 and out == ""
    assert "the sample is not complete" in err


def test_the_variants_of_a_sample() -> None:
    doc = {"a": True, "b": {"c": 1}, "d": [{"e": False}]}
    assert [label(p) for p in key_paths(doc)] == ["a", "b", "b.c", "d", "d[0].e"]
    from accord.compiler.gate.prove import variants

    got = [(label(p), action, v) for p, action, v in variants(doc)]
    assert ("a", "non-boolean", {"a": "true", "b": {"c": 1}, "d": [{"e": False}]}) in got
    assert ("d[0].e", "deleted", {"a": True, "b": {"c": 1}, "d": [{}]}) in got
    assert ("d[0]", "null", {"a": True, "b": {"c": 1}, "d": [None]}) in got
    assert ("d", "shortened", {"a": True, "b": {"c": 1}, "d": []}) in got
    # 5 keys deleted, 2 booleans twice, 6 values null (the keys and the list's item), 1 list
    # shortened (no string to empty, no agents)
    assert len(got) == 5 + 2 * 2 + 6 + 1
    assert doc == {"a": True, "b": {"c": 1}, "d": [{"e": False}]}  # the sample is untouched
    copy.deepcopy(doc)
