"""``accord manifest``: the mesh manifest, written from the model and the evidence.

One document describes every agent of the mesh that the model declares (``surfaces.*`` with
an ``a2a`` endpoint) and what a promotion gate needs to judge it::

    {"accord_manifest": 1, "model_fingerprint": ..., "expected_agent_count": N,
     "evidence": {"mesh_eval_digest": ..., "probe_result_digest": ...},
     "manifest": {"negotiated_a2a_version": "1.0",
                  "agents": [{"name", "url", "card_url", "version", "card_digest",
                              "registered_card_digest", "a2a_version", "eval_digest",
                              "reads_governed_data", "policy_probe_passed",
                              "probe_owners"}, ...],
                  "retired_agents": [{"name", "url", "card_served", ...}]}}

Where each value comes from:

- ``expected_agent_count``: never from the manifest's own agent list (a document cannot vouch
  for its own completeness): the number of agents in the registry export (``--registry``),
  or ``--expected-count``. Without either it is left out, and the gate denies.
- ``negotiated_a2a_version``: the model's ``mesh: {a2a_version: ...}``.
- ``mesh_eval_digest``: ``--eval-digest``, else the digest of the probe result file.
- ``version``, ``card_digest``, ``a2a_version``: the card the agent serves now at its
  origin's well-known path (:mod:`.cards`); a card that cannot be fetched leaves them out
  and says why in ``card_error``.
- ``registered_card_digest``: the digest of the registry's copy (``--registered-cards DIR``,
  ``DIR/<name>.json``); ``null`` when no directory is given (the gate warns: not compared);
  left out, with ``registered_card_error``, when the directory has no copy of the agent's.
- ``eval_digest``: the evaluation the agent was cleared against: the registry entry's
  ``eval_digest``, else the probe result's digest when that result is of this model (and
  sealed, and live); otherwise it is left out.
- ``reads_governed_data``: the surface reads a dataset with a row filter or a mask.
- ``policy_probe_passed``: every probe naming the surface passed, live, in a probe result
  whose model fingerprint is the current model's and whose seal matches its content; a stale,
  unsealed or missing result, or no probe naming the surface, is ``false``.
- ``probe_owners``: the owners of the probes naming the surface.
- ``retired_agents``: registry agents the model no longer declares; ``card_served`` says
  whether their card is still served (left out, with ``card_error``, when that could not be
  told).

The registry export is JSON: ``{"agents": [{"name": ..., "url": <A2A endpoint>,
"eval_digest": ... (optional)}]}``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from accord.compiler.core.canonical import sealed_digest, sha256_of
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import read_bytes, read_json
from accord.compiler.core.outdir import write_report
from accord.compiler.gate.cards import Card, CardError, card_url, fetch_card

MANIFEST_FORMAT = 1
#: the probe's default timeout (accord probe --live)
DEFAULT_TIMEOUT = 30.0
#: the format of the result file accord probe --out writes
PROBE_RESULT_FORMAT = 1


@dataclass
class ManifestOptions:
    registry: str | None = None
    expected_count: int | None = None
    eval_digest: str | None = None
    probe_result: str | None = None
    registered_cards: str | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass
class Built:
    """The manifest, and what the command tells its user about it (stderr)."""

    document: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        return json.dumps(self.document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------
# inputs


@dataclass(frozen=True)
class RegistryAgent:
    name: str
    url: str
    eval_digest: str | None


def _http_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def read_registry(path: str) -> list[RegistryAgent]:
    """The registry export: ``{"agents": [{"name", "url", "eval_digest"?}]}``."""
    doc, _ = read_json(Path(path), "registry export")

    def bad(message: str) -> InputError:
        return InputError(Diagnostic(Location(path, 1, 1), f"registry export: {message}"))

    if not isinstance(doc, dict) or not isinstance(doc.get("agents"), list):
        raise bad('expected {"agents": [{"name": ..., "url": ...}, ...]}')
    out: list[RegistryAgent] = []
    seen: set[str] = set()
    for i, entry in enumerate(doc["agents"]):
        if not isinstance(entry, dict):
            raise bad(f"agents[{i}] is not an object")
        name, url = entry.get("name"), entry.get("url")
        if not isinstance(name, str) or not name:
            raise bad(f"agents[{i}].name: a non-empty string expected")
        if not _http_url(url):
            raise bad(f"agents[{i}] ({name}).url: an http(s) URL of the agent's A2A endpoint")
        if name in seen:
            raise bad(f"agents[{i}]: {name} is listed twice")
        seen.add(name)
        digest = entry.get("eval_digest")
        if digest is not None and not isinstance(digest, str):
            raise bad(f"agents[{i}] ({name}).eval_digest: a string expected")
        out.append(RegistryAgent(name, url, digest))
    return out


@dataclass(frozen=True)
class ProbeEvidence:
    """What a probe result file says, and whether it may be relied on."""

    digest: str
    #: why the result cannot clear any agent (None: it can)
    problem: str | None
    #: surface -> every outcome naming it passed live (only surfaces with outcomes)
    passed: dict[str, bool]


def read_probe_result(path: str, fingerprint: str) -> ProbeEvidence:
    target = Path(path)
    raw = read_bytes(target, "probe result")
    digest = hashlib.sha256(raw).hexdigest()
    doc, _ = read_json(target, "probe result")
    if not isinstance(doc, dict) or doc.get("accord_probe_result") != PROBE_RESULT_FORMAT:
        raise InputError(
            Diagnostic(
                Location(path, 1, 1),
                "probe result: not a result file of accord probe --out "
                f'("accord_probe_result": {PROBE_RESULT_FORMAT})',
            )
        )
    problem = None
    if doc.get("sha256") != sealed_digest(doc):
        problem = f"{path}: its sha256 does not match its content (edited after it was written)"
    elif doc.get("model_fingerprint") != fingerprint:
        problem = (
            f"{path}: it was written for another model (fingerprint "
            f"{str(doc.get('model_fingerprint'))[:12]}..., the current model's is "
            f"{fingerprint[:12]}...): run accord probe --live --out again"
        )
    elif doc.get("depth") != "live":
        problem = f"{path}: it is not a live result (run accord probe --live --out)"
    passed: dict[str, bool] = {}
    outcomes = doc.get("outcomes") if isinstance(doc.get("outcomes"), list) else []
    for o in outcomes:
        if not isinstance(o, dict) or not isinstance(o.get("surface"), str):
            continue
        ok = o.get("ok") is True and o.get("depth") == "live"
        passed[o["surface"]] = passed.get(o["surface"], True) and ok
    return ProbeEvidence(digest, problem, passed)


def _registered_digest(directory: str, name: str) -> tuple[str | None, str | None]:
    """(digest, error) of the registry's copy of ``name``'s card."""
    path = Path(directory) / f"{name}.json"
    if not path.exists():
        return None, f"no registered card {path}"
    doc, _ = read_json(path, "registered agent card")
    if not isinstance(doc, dict):
        raise InputError(
            Diagnostic(Location(str(path), 1, 1), "registered agent card: not a JSON object")
        )
    return sha256_of(doc), None


# --------------------------------------------------------------------------------------------
# the manifest


def governed_reads(model: Any, surface: Any) -> bool:
    """The surface reads a dataset with a row filter or a mask (its own or inherited)."""
    for name in surface.reads:
        dataset = model.datasets.get(name)
        if dataset is not None and (dataset.governed or dataset.inherited):
            return True
    return False


def build_manifest(project: Any, options: ManifestOptions) -> Built:
    model = project.model
    notes: list[str] = []
    fingerprint = project.fingerprint
    if options.registry is not None and options.expected_count is not None:
        raise UsageError("give the expected agent count once: --registry or --expected-count")
    if options.registered_cards is not None and not Path(options.registered_cards).is_dir():
        raise UsageError(f"--registered-cards {options.registered_cards}: not a directory")
    registry = read_registry(options.registry) if options.registry is not None else None
    evidence = (
        read_probe_result(options.probe_result, fingerprint)
        if options.probe_result is not None
        else None
    )

    doc: dict[str, Any] = {"accord_manifest": MANIFEST_FORMAT, "model_fingerprint": fingerprint}
    if registry is not None:
        doc["expected_agent_count"] = len(registry)
    elif options.expected_count is not None:
        doc["expected_agent_count"] = options.expected_count
    else:
        notes.append(
            "no --registry or --expected-count: expected_agent_count is left out (the gate "
            "denies an incomplete manifest)"
        )

    ev: dict[str, Any] = {"probe_result_digest": evidence.digest if evidence else None}
    mesh_eval = options.eval_digest or (evidence.digest if evidence else None)
    if mesh_eval is not None:
        ev["mesh_eval_digest"] = mesh_eval
    else:
        notes.append("no --eval-digest or --probe-result: evidence.mesh_eval_digest is left out")
    if evidence is None:
        notes.append("no --probe-result: no agent has a passing probe")
    elif evidence.problem is not None:
        notes.append(f"the probe result clears no agent: {evidence.problem}")
    doc["evidence"] = ev

    mesh: dict[str, Any] = {}
    if model.mesh is not None:
        mesh["negotiated_a2a_version"] = model.mesh.a2a_version
    else:
        notes.append(
            'the model has no mesh: {a2a_version: "1.0"}: manifest.negotiated_a2a_version is '
            "left out"
        )
    by_name = {r.name: r for r in registry or []}
    agents = []
    for name in sorted(model.surfaces):
        s = model.surfaces[name]
        if s.a2a is None:
            continue
        agents.append(_agent(project, name, s, by_name.get(name), evidence, options, notes))
    mesh["agents"] = agents
    retired = []
    for entry in sorted(registry or [], key=lambda r: r.name):
        s = model.surfaces.get(entry.name)
        if s is not None and s.a2a is not None:
            continue
        retired.append(_retired(entry, options.timeout))
    mesh["retired_agents"] = retired
    doc["manifest"] = mesh
    return Built(doc, notes)


def _agent(
    project: Any,
    name: str,
    s: Any,
    registered: RegistryAgent | None,
    evidence: ProbeEvidence | None,
    options: ManifestOptions,
    notes: list[str],
) -> dict[str, Any]:
    model = project.model
    url = s.a2a.url
    agent: dict[str, Any] = {"name": name, "url": url, "card_url": card_url(url)}
    timeout = min(s.a2a.timeout_seconds, options.timeout)
    try:
        card: Card | None = fetch_card(url, timeout)
    except CardError as err:
        card = None
        agent["card_error"] = str(err)
        notes.append(f"agent {name}: {err}")
    if card is not None:
        agent["card_url"] = card.url
        agent["card_digest"] = card.digest
        if card.version is not None:
            agent["version"] = card.version
        a2a = card.a2a_version(url)
        if a2a is not None:
            agent["a2a_version"] = a2a
        else:
            notes.append(f"agent {name}: its card declares no A2A protocol version")
    if options.registered_cards is None:
        agent["registered_card_digest"] = None
    else:
        digest, error = _registered_digest(options.registered_cards, name)
        if digest is not None:
            agent["registered_card_digest"] = digest
        else:
            agent["registered_card_error"] = error
            notes.append(f"agent {name}: {error}")
    fresh = evidence is not None and evidence.problem is None
    if registered is not None and registered.eval_digest is not None:
        agent["eval_digest"] = registered.eval_digest
    elif fresh and evidence is not None:
        agent["eval_digest"] = evidence.digest
    agent["reads_governed_data"] = governed_reads(model, s)
    owners = sorted({p.owner for p in model.probes.values() if name in p.expect})
    agent["policy_probe_passed"] = bool(
        fresh and evidence is not None and owners and evidence.passed.get(name, False)
    )
    agent["probe_owners"] = owners
    return agent


def _retired(entry: RegistryAgent, timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"name": entry.name, "url": entry.url, "card_url": card_url(entry.url)}
    try:
        card = fetch_card(entry.url, timeout)
    except CardError as err:
        text = str(err)
        out["card_error"] = text
        # no card there (404) or nothing listening: not served; anything else: not known
        if "HTTP 404" in text or "Connection refused" in text:
            out["card_served"] = False
        return out
    out["card_served"] = True
    out["card_url"] = card.url
    out["card_digest"] = card.digest
    return out


def write_manifest(built: Built, out: str) -> None:
    """Write the manifest (:func:`compiler.core.outdir.write_report`: scrubbed of every known
    secret, atomically: a gate never reads half a manifest)."""
    write_report(out, built.text())


# --------------------------------------------------------------------------------------------
# the versioned JSON Schema (accord schema --manifest)


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema of the mesh manifest, format 1. Every key accord writes is listed;
    the keys the gate requires are ``required`` (extra keys are allowed)."""
    digest = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    #: no string of the manifest is empty: two empty digests are equal and prove nothing
    text = {"type": "string", "minLength": 1}
    agent = {
        "type": "object",
        "required": [
            "name",
            "url",
            "card_url",
            "version",
            "card_digest",
            "registered_card_digest",
            "a2a_version",
            "eval_digest",
            "reads_governed_data",
            "policy_probe_passed",
            "probe_owners",
        ],
        "properties": {
            "name": {
                "type": "string",
                "pattern": "^[a-z][a-z0-9_]*$",
                "description": "the surface's name in the model",
            },
            "url": {**text, "description": "the agent's A2A endpoint (the model's)"},
            "card_url": {**text, "description": "where its card was fetched"},
            "version": {**text, "description": "the served card's version"},
            "card_digest": {
                **digest,
                "description": "SHA-256 of the canonical JSON of the served card",
            },
            "registered_card_digest": {
                "type": ["string", "null"],
                "pattern": digest["pattern"],
                "description": "SHA-256 of the registry's copy of the card (null: none given)",
            },
            "a2a_version": {**text, "description": "the A2A version the card declares"},
            "eval_digest": {**text, "description": "the evaluation that cleared it"},
            "reads_governed_data": {"type": "boolean"},
            "policy_probe_passed": {"type": "boolean"},
            "probe_owners": {"type": "array", "items": text},
            "card_error": {"type": "string", "description": "why the card is not described"},
            "registered_card_error": {"type": "string"},
        },
    }
    retired = {
        "type": "object",
        "required": ["name", "url", "card_served"],
        "properties": {
            "name": text,
            "url": text,
            "card_url": {"type": "string"},
            "card_served": {"type": "boolean"},
            "card_digest": digest,
            "card_error": {"type": "string"},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:accord:mesh-manifest:{MANIFEST_FORMAT}",
        "title": f"accord mesh manifest (format {MANIFEST_FORMAT})",
        "type": "object",
        "required": [
            "accord_manifest",
            "model_fingerprint",
            "expected_agent_count",
            "evidence",
            "manifest",
        ],
        "properties": {
            "accord_manifest": {"const": MANIFEST_FORMAT},
            "model_fingerprint": {**digest, "description": "the model it was written from"},
            "expected_agent_count": {
                "type": "integer",
                "minimum": 0,
                "description": "from the registry export or --expected-count, never counted "
                "from the agents listed here",
            },
            "evidence": {
                "type": "object",
                "required": ["mesh_eval_digest", "probe_result_digest"],
                "properties": {
                    "mesh_eval_digest": text,
                    "probe_result_digest": {
                        "type": ["string", "null"],
                        "pattern": digest["pattern"],
                    },
                },
            },
            "manifest": {
                "type": "object",
                "required": ["negotiated_a2a_version", "agents", "retired_agents"],
                "properties": {
                    "negotiated_a2a_version": {"type": "string", "enum": ["0.3", "1.0"]},
                    "agents": {"type": "array", "items": agent},
                    "retired_agents": {"type": "array", "items": retired},
                },
            },
        },
    }


def manifest_problem(doc: Any) -> str | None:
    """What makes ``doc`` no manifest of this format, or None: its JSON Schema
    (:func:`manifest_schema`), and what a schema cannot say: the agents and the retired agents
    are as many as the registry expects, and each is listed once (a copy of one agent never
    stands in for another). What ``accord gate test`` requires a policy to deny."""
    problem = _schema_problem(doc, manifest_schema(), "")
    if problem is not None:
        return problem
    mesh = doc["manifest"]
    names = [a["name"] for a in mesh["agents"]] + [r["name"] for r in mesh["retired_agents"]]
    if len(names) != doc["expected_agent_count"]:
        return (
            f"it describes {len(names)} agents, retired ones included; the registry expects "
            f"{doc['expected_agent_count']}"
        )
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        return f"{twice} is listed {names.count(twice)} times"
    return None


_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _schema_problem(value: Any, schema: dict[str, Any], where: str) -> str | None:
    """The first place ``value`` breaks ``schema`` (the keywords :func:`manifest_schema`
    uses: type, const, enum, minLength, pattern, minimum, required, properties, items)."""
    at = where or "the document"
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[k](value) for k in kinds):
            return f"{at} is not {' or '.join(kinds)}"
    if "const" in schema and (type(value) is not type(schema["const"]) or value != schema["const"]):
        return f"{at} is not {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{at} is none of {', '.join(map(repr, schema['enum']))}"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{at} is empty"
        if "pattern" in schema and re.search(schema["pattern"], value) is None:
            return f"{at} is not of the form {schema['pattern']}"
    if _TYPES["integer"](value) and value < schema.get("minimum", value):
        return f"{at} is below {schema['minimum']}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where + '.' if where else ''}{key} is missing"
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                found = _schema_problem(value[key], sub, f"{where + '.' if where else ''}{key}")
                if found is not None:
                    return found
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found = _schema_problem(item, schema["items"], f"{where}[{i}]")
            if found is not None:
                return found
    return None
