"""The promotion gate end to end, over the wire: the reference estate with its two agents on
A2A endpoints (each a local A2A stand-in on 127.0.0.1 serving its agent card at the
well-known path), ``accord probe --live --out``, ``accord manifest`` and ``accord gate`` as a
pipeline step runs them; and the mesh states a gate exists for: a served card that differs from
its registered copy, a retired agent still serving its card, an agent on another A2A version,
one cleared against another evaluation, one without a passing probe, a manifest honestly
missing an agent, a stale model fingerprint.

Cards are in the shapes of the A2A 1.0 specification (``supportedInterfaces`` with
``protocolBinding`` and ``protocolVersion``) and of 0.3 (a top-level ``protocolVersion``,
``url`` and ``preferredTransport``), which a mesh may still serve.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from accord.compiler.gate.cards import CardError, declared_a2a_version, fetch_card
from accord.compiler.gate.manifest import manifest_schema
from accord.compiler.model.validate import load_project
from tests.a2a_standin import a2a_standin, base_url, url
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import SALTS

#: every test but one serves agent cards from A2A stand-ins (the ``mesh`` fixture)
pytestmark = pytest.mark.standin

CANARY = "SUBJ-CANARY-0204"
#: the salt of each agent's platform (the fixture sets them): accord recomputes the digest
SALT_OF = {
    "warehouse_agent": "SUBJECT_SALT_SNOWFLAKE",
    "lakehouse_agent": "SUBJECT_SALT_DATABRICKS",
    "retired_agent": "SUBJECT_SALT_SNOWFLAKE",
}


def masked_answer(agent: str) -> str:
    """The agent answers the CRO's question with the canary's salted digest on its platform
    (the one accord recomputes from the salt): masked, as the probe expects."""
    digest = hashlib.sha256((CANARY + SALTS[SALT_OF[agent]]).encode()).hexdigest()
    return "/task/TASK_STATE_COMPLETED/The%20subjects%20are%20" + digest


WELL_KNOWN = "/.well-known/agent-card.json"


def card_v1(name: str, endpoint: str, version: str = "2.3.0") -> dict[str, Any]:
    """An agent card in the A2A 1.0 shape."""
    return {
        "name": name,
        "description": f"{name}: answers questions on the assay results",
        "supportedInterfaces": [
            {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": "Discovery Data", "url": "https://example.com"},
        "version": version,
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "assay-questions",
                "name": "Assay questions",
                "description": "Questions on assay results, as the caller",
                "tags": ["assay"],
            }
        ],
    }


def card_v03(name: str, endpoint: str, version: str = "1.4.0") -> dict[str, Any]:
    """An agent card in the A2A 0.3 shape."""
    return {
        "protocolVersion": "0.3.0",
        "name": name,
        "description": f"{name}: answers questions on the variant calls",
        "url": endpoint,
        "preferredTransport": "JSONRPC",
        "version": version,
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "variants", "name": "Variants", "description": "", "tags": []}],
    }


@dataclass
class Mesh:
    """Three agents' servers, the estate declaring two of them, and the pipeline's files."""

    tmp: Path
    root: Path
    servers: dict[str, Any]

    def endpoint(self, agent: str) -> str:
        return url(self.servers[agent], masked_answer(agent))

    def serve(self, agent: str, card: Any, path: str = WELL_KNOWN) -> None:
        self.servers[agent].cards.clear()
        if card is not None:
            self.servers[agent].cards[path] = card

    def registry(self, *agents: str, **eval_digests: str) -> Path:
        entries = []
        for a in agents:
            entry = {"name": a, "url": self.endpoint(a)}
            if a in eval_digests:
                entry["eval_digest"] = eval_digests[a]
            entries.append(entry)
        path = self.tmp / "registry.json"
        path.write_text(json.dumps({"agents": entries}))
        return path

    def register_cards(self, **cards: dict[str, Any]) -> Path:
        folder = self.tmp / "registered"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name, card in cards.items():
            (folder / f"{name}.json").write_text(json.dumps(card, indent=4))
        return folder

    def probe(self) -> Path:
        out = self.tmp / "probe-result.json"
        code, _, err = run_cli(
            [
                "probe",
                "--live",
                str(self.root),
                "--platform",
                "a2a",
                "--out",
                str(out),
                "--config",
                str(self.tmp / "probe.yaml"),
            ],
            cwd=self.tmp,
        )
        assert code == 0, err
        return out

    def manifest(self, *extra: str, expect: int = 0) -> dict[str, Any]:
        out = self.tmp / "mesh-manifest.json"
        code, stdout, err = run_cli(
            ["manifest", str(self.root), "--out", str(out), *extra], cwd=self.tmp
        )
        assert code == expect, err
        if code != 0:
            return {}
        assert f"written to {out}" in stdout
        return json.loads(out.read_text())

    def gate(self, *extra: str, manifest: Path | None = None) -> tuple[int, str, str]:
        target = manifest or self.tmp / "mesh-manifest.json"
        return run_cli(["gate", str(target), "--model", str(self.root), *extra], cwd=self.tmp)

    def pipeline(self, **cards: dict[str, Any]) -> dict[str, Any]:
        """probe --live --out, then manifest with the registry and its cards."""
        result = self.probe()
        registered = self.register_cards(**cards) if cards else None
        extra = ["--registered-cards", str(registered)] if registered else []
        return self.manifest(
            "--registry",
            str(self.registry("lakehouse_agent", "warehouse_agent")),
            "--probe-result",
            str(result),
            *extra,
        )


@pytest.fixture
def mesh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Mesh]:
    with ExitStack() as stack:
        servers = {
            name: stack.enter_context(a2a_standin())
            for name in ("warehouse_agent", "lakehouse_agent", "retired_agent")
        }
        root = tmp_path / "estate"
        shutil.copytree(ROOT / "policies", root)
        surfaces = yaml.safe_load((root / "surfaces.yaml").read_text())
        for name in ("warehouse_agent", "lakehouse_agent"):
            surfaces["surfaces"][name]["a2a"] = {
                "url": url(servers[name], masked_answer(name)),
                "timeout_seconds": 5,
            }
        (root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
        probes = yaml.safe_load((root / "probes.yaml").read_text())
        keep = probes["probes"]["cro_cannot_unmask_cns_subjects"]
        keep["canary"] = CANARY
        (root / "probes.yaml").write_text(
            yaml.safe_dump({"probes": {"cro_cannot_unmask_cns_subjects": keep}})
        )
        (root / "mesh.yaml").write_text('mesh:\n  a2a_version: "1.0"\n')
        origins = [base_url(s) for s in servers.values()]
        config = {"a2a_tokens": {"cro_collaborator": {"token": "env:A2A_CRO", "origins": origins}}}
        (tmp_path / "probe.yaml").write_text(yaml.safe_dump(config))
        monkeypatch.setenv("A2A_CRO", "tok-cro")
        for var, value in SALTS.items():
            monkeypatch.setenv(var, value)
        m = Mesh(tmp_path, root, servers)
        for name in ("warehouse_agent", "lakehouse_agent"):
            m.serve(name, card_v1(name, m.endpoint(name)))
        yield m


def cards_of(mesh: Mesh) -> dict[str, dict[str, Any]]:
    return {n: mesh.servers[n].cards[WELL_KNOWN] for n in ("warehouse_agent", "lakehouse_agent")}


# --------------------------------------------------------------------------------------------
# the pipeline


def test_the_pipeline_allows_a_mesh_that_is_whole_and_probed(mesh: Mesh) -> None:
    doc = mesh.pipeline(**cards_of(mesh))
    jsonschema.validate(doc, manifest_schema())
    project = load_project(mesh.root)
    assert doc["model_fingerprint"] == project.fingerprint
    assert doc["expected_agent_count"] == 2
    result = (mesh.tmp / "probe-result.json").read_bytes()
    assert doc["evidence"]["probe_result_digest"] == hashlib.sha256(result).hexdigest()
    assert doc["evidence"]["mesh_eval_digest"] == doc["evidence"]["probe_result_digest"]
    assert doc["manifest"]["negotiated_a2a_version"] == "1.0"
    assert doc["manifest"]["retired_agents"] == []
    agents = {a["name"]: a for a in doc["manifest"]["agents"]}
    assert set(agents) == {"warehouse_agent", "lakehouse_agent"}
    wh = agents["warehouse_agent"]
    card = mesh.servers["warehouse_agent"].cards[WELL_KNOWN]
    canonical = json.dumps(card, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert wh["card_digest"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert wh["registered_card_digest"] == wh["card_digest"]  # stored indented: same digest
    assert wh["version"] == "2.3.0" and wh["a2a_version"] == "1.0"
    assert wh["reads_governed_data"] is True and wh["policy_probe_passed"] is True
    assert wh["probe_owners"] == ["data-governance"]
    assert wh["card_url"] == base_url(mesh.servers["warehouse_agent"]) + WELL_KNOWN
    code, out, err = mesh.gate()
    assert code == 0, out + err
    assert "allow" in out.splitlines()[-1]
    # same input, byte-identical manifest
    first = (mesh.tmp / "mesh-manifest.json").read_bytes()
    mesh.pipeline(**cards_of(mesh))
    assert (mesh.tmp / "mesh-manifest.json").read_bytes() == first


def test_the_default_policy_passes_its_own_test_on_a_real_manifest(mesh: Mesh) -> None:
    mesh.pipeline(**cards_of(mesh))
    (mesh.tmp / "policy.rego").write_text(run_cli(["gate", "--print-policy"]).stdout)
    code, out, err = run_cli(
        ["gate", "test", "policy.rego", "--manifest", "mesh-manifest.json", "--format", "json"],
        cwd=mesh.tmp,
    )
    assert code == 0, out + err
    proof = json.loads(out)
    assert proof["passed"] is True and proof["fail_open"] == []
    # every key path was tried: 5 top-level + 2 evidence + 3 manifest + 11 per agent, and the
    # two booleans of each agent twice more; every value null (those 32 and the 2 agents and
    # their 2 probe owners); every string empty (the fingerprint, 2 digests, the negotiated
    # version, 8 strings and a probe owner per agent); 3 lists shortened (the agents, each
    # agent's probe owners); each of the 2 agents removed, replaced, duplicated, counted
    keys = 5 + 2 + 3 + 2 * 11
    assert proof["variants"] == keys + 2 * 2 * 2 + (keys + 4) + (4 + 2 * 9) + 3 + 2 * 4
    allowed = {(o["key"], o["variant"]) for o in proof["outcomes"] if o["verdict"] == "allowed"}
    # what is still a manifest of the format: a probe owner fewer, no registered card, no
    # probe result
    assert {a for a in allowed if a[1] != "false"} == {
        ("evidence.probe_result_digest", "null"),
        *(
            (f"manifest.agents[{i}].{key}", variant)
            for i in (0, 1)
            for key, variant in (("probe_owners", "shortened"), ("registered_card_digest", "null"))
        ),
    }


# --------------------------------------------------------------------------------------------
# what the gate denies


def denials(mesh: Mesh) -> list[str]:
    code, out, err = mesh.gate("--format", "json")
    assert code == 1, out + err
    doc = json.loads(out)
    assert doc["allow"] is False
    return doc["deny"]


def test_a_served_card_that_moved_from_its_registered_copy_is_denied(mesh: Mesh) -> None:
    registered = cards_of(mesh)
    moved = copy.deepcopy(registered["lakehouse_agent"])
    moved["skills"].append({"id": "export", "name": "Export", "description": "", "tags": []})
    mesh.serve("lakehouse_agent", moved)
    doc = mesh.pipeline(**registered)
    agents = {a["name"]: a for a in doc["manifest"]["agents"]}
    assert (
        agents["lakehouse_agent"]["card_digest"]
        != agents["lakehouse_agent"]["registered_card_digest"]
    )
    (only,) = denials(mesh)
    assert only.startswith("agent lakehouse_agent serves a card (sha256 ")
    assert "differs from its registered card" in only


def test_a_retired_agent_still_serving_its_card_is_denied(mesh: Mesh) -> None:
    mesh.serve("retired_agent", card_v1("retired_agent", mesh.endpoint("retired_agent")))
    result = mesh.probe()
    registry = mesh.registry("lakehouse_agent", "retired_agent", "warehouse_agent")
    doc = mesh.manifest(
        "--registry",
        str(registry),
        "--probe-result",
        str(result),
        "--registered-cards",
        str(mesh.register_cards(**cards_of(mesh))),
    )
    (retired,) = doc["manifest"]["retired_agents"]
    assert retired["name"] == "retired_agent" and retired["card_served"] is True
    assert doc["expected_agent_count"] == 3
    got = denials(mesh)
    assert any(
        d.startswith("agent retired_agent is in the registry but no longer in the model")
        and "still served" in d
        for d in got
    )
    # once it stops serving its card it is retired, not discoverable
    mesh.serve("retired_agent", None)
    doc = mesh.manifest(
        "--registry",
        str(registry),
        "--probe-result",
        str(result),
        "--expected-count",
        "3",
        expect=2,
    )
    doc = mesh.manifest(
        "--registry",
        str(registry),
        "--probe-result",
        str(result),
        "--registered-cards",
        str(mesh.register_cards(**cards_of(mesh))),
    )
    assert doc["manifest"]["retired_agents"][0]["card_served"] is False
    # the registry's count covers the retired agent too: nothing is missing, the gate allows
    assert doc["expected_agent_count"] == 3 and len(doc["manifest"]["agents"]) == 2
    code, out, err = mesh.gate("--format", "json")
    assert code == 0, out + err
    assert json.loads(out)["allow"] is True


def test_a_manifest_honestly_missing_an_agent_is_denied(mesh: Mesh) -> None:
    result = mesh.probe()
    doc = mesh.manifest(
        "--expected-count",
        "3",
        "--probe-result",
        str(result),
        "--registered-cards",
        str(mesh.register_cards(**cards_of(mesh))),
    )
    assert doc["expected_agent_count"] == 3 and len(doc["manifest"]["agents"]) == 2
    assert denials(mesh) == [
        "incomplete manifest: it describes 2 agents and 0 retired, the registry expects 3"
    ]


def test_an_agent_on_another_a2a_version_is_denied(mesh: Mesh) -> None:
    old = card_v03("lakehouse_agent", mesh.endpoint("lakehouse_agent"))
    mesh.serve("lakehouse_agent", old)
    doc = mesh.pipeline(**cards_of(mesh))
    agents = {a["name"]: a for a in doc["manifest"]["agents"]}
    assert agents["lakehouse_agent"]["a2a_version"] == "0.3"
    assert agents["lakehouse_agent"]["version"] == "1.4.0"
    assert denials(mesh) == ["agent lakehouse_agent speaks A2A 0.3; the mesh negotiates 1.0"]


def test_a_card_at_the_pre_0_3_path_is_read_when_the_well_known_one_is_missing(
    mesh: Mesh,
) -> None:
    card = card_v03("lakehouse_agent", mesh.endpoint("lakehouse_agent"))
    mesh.serve("lakehouse_agent", card, "/.well-known/agent.json")
    got = fetch_card(mesh.endpoint("lakehouse_agent"), timeout=5)
    assert got.url.endswith("/.well-known/agent.json") and got.version == "1.4.0"
    assert mesh.servers["lakehouse_agent"].gets[-2:] == [WELL_KNOWN, "/.well-known/agent.json"]


def test_an_agent_cleared_against_another_evaluation_is_denied(mesh: Mesh) -> None:
    result = mesh.probe()
    registry = mesh.registry("lakehouse_agent", "warehouse_agent", warehouse_agent="e" * 64)
    mesh.manifest(
        "--registry",
        str(registry),
        "--probe-result",
        str(result),
        "--registered-cards",
        str(mesh.register_cards(**cards_of(mesh))),
    )
    (only,) = denials(mesh)
    assert only.startswith(f"agent warehouse_agent was cleared against evaluation {'e' * 64}")


def test_an_agent_reading_governed_data_without_a_passing_probe_is_denied(mesh: Mesh) -> None:
    # the lakehouse agent now answers the CRO with the clear canary: its probe fails
    surfaces = yaml.safe_load((mesh.root / "surfaces.yaml").read_text())
    leak = url(mesh.servers["lakehouse_agent"], f"/task/TASK_STATE_COMPLETED/{CANARY}")
    surfaces["surfaces"]["lakehouse_agent"]["a2a"]["url"] = leak
    (mesh.root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    out = mesh.tmp / "probe-result.json"
    code, _, _ = run_cli(
        [
            "probe",
            "--live",
            str(mesh.root),
            "--platform",
            "a2a",
            "--out",
            str(out),
            "--config",
            str(mesh.tmp / "probe.yaml"),
        ],
        cwd=mesh.tmp,
    )
    assert code == 1
    mesh.manifest(
        "--registry",
        str(mesh.registry("lakehouse_agent", "warehouse_agent")),
        "--probe-result",
        str(out),
        "--registered-cards",
        str(mesh.register_cards(**cards_of(mesh))),
    )
    assert denials(mesh) == [
        "agent lakehouse_agent reads governed data without a passing probe "
        "(probe owners: data-governance)"
    ]


def test_a_stale_probe_result_clears_no_agent(mesh: Mesh) -> None:
    result = mesh.probe()
    # the model changes after the probes ran: the result is of another model
    (mesh.root / "mesh.yaml").write_text('mesh:\n  a2a_version: "0.3"\n')
    doc = mesh.manifest(
        "--expected-count", "2", "--probe-result", str(result), "--eval-digest", "d" * 64
    )
    assert {a["policy_probe_passed"] for a in doc["manifest"]["agents"]} == {False}
    assert all("eval_digest" not in a for a in doc["manifest"]["agents"])


def test_the_gate_refuses_a_manifest_of_another_model(mesh: Mesh) -> None:
    mesh.pipeline(**cards_of(mesh))
    assert mesh.gate()[0] == 0
    # the model changes after the manifest was written (an agent's timeout, nothing else)
    surfaces = yaml.safe_load((mesh.root / "surfaces.yaml").read_text())
    surfaces["surfaces"]["warehouse_agent"]["a2a"]["timeout_seconds"] = 6
    (mesh.root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    (only,) = denials(mesh)
    assert only.startswith("the manifest was written for another model")
    assert "run accord manifest again" in only
    got = denials(mesh)
    assert got[0].startswith("the manifest was written for another model")


def test_an_unreachable_card_leaves_the_agent_incomplete_never_clear(mesh: Mesh) -> None:
    registered = cards_of(mesh)
    mesh.serve("warehouse_agent", ("redirect", "http://127.0.0.1:9/elsewhere"))
    doc = mesh.pipeline(**registered)
    agents = {a["name"]: a for a in doc["manifest"]["agents"]}
    assert "redirects are not followed" in agents["warehouse_agent"]["card_error"]
    assert "card_digest" not in agents["warehouse_agent"]
    got = denials(mesh)
    assert "incomplete manifest: agent warehouse_agent has no card_digest" in got
    assert "incomplete manifest: agent warehouse_agent has no version" in got


def test_a_card_that_is_not_json_is_a_card_error(mesh: Mesh) -> None:
    mesh.serve("warehouse_agent", b"<html>not a card</html>")
    with pytest.raises(CardError, match="not JSON"):
        fetch_card(mesh.endpoint("warehouse_agent"), timeout=5)


def test_the_version_a_card_declares() -> None:
    e = "https://a.example.com/a2a"
    assert declared_a2a_version(card_v1("a", e), e) == "1.0"
    assert declared_a2a_version(card_v03("a", e), e) == "0.3"
    two = card_v1("a", e)
    two["supportedInterfaces"].insert(
        0,
        {
            "url": "https://a.example.com/old",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
    )
    assert declared_a2a_version(two, e) == "1.0"  # the entry of the model's endpoint
    assert declared_a2a_version({"name": "a"}, e) is None


def test_bad_manifest_inputs_exit_2_and_write_nothing(mesh: Mesh) -> None:
    (mesh.tmp / "registry.json").write_text('{"agents": [{"name": "a"}]}')
    out = mesh.tmp / "mesh-manifest.json"
    code, _, err = run_cli(
        ["manifest", str(mesh.root), "--out", str(out), "--registry", "registry.json"],
        cwd=mesh.tmp,
    )
    assert code == 2 and "registry.json:1:1: registry export: agents[0] (a).url" in err
    assert not out.exists()
    code, _, err = run_cli(
        [
            "manifest",
            str(mesh.root),
            "--out",
            str(out),
            "--expected-count",
            "2",
            "--registry",
            "registry.json",
        ],
        cwd=mesh.tmp,
    )
    assert code == 2 and not out.exists()
    (mesh.tmp / "result.json").write_text('{"accord_probe_result": 7}')
    code, _, err = run_cli(
        ["manifest", str(mesh.root), "--out", str(out), "--probe-result", "result.json"],
        cwd=mesh.tmp,
    )
    assert code == 2 and "not a result file of accord probe --out" in err
    assert not out.exists()
