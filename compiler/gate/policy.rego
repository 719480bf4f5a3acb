# accord's default promotion gate over the mesh manifest that `accord manifest` writes.
#
#   accord gate mesh-manifest.json                      # in-process (regorus)
#   opa eval --strict-builtin-errors -d policy.rego -i mesh-manifest.json 'data.accord.gate'
#   conftest test --policy policy.rego --namespace accord.gate mesh-manifest.json
#
# Promotion is allowed only when the manifest is complete and nothing is denied. The rules
# that matter are the completeness rules (every key present, of its type, no string empty, the
# agents distinct and named as surfaces are, as many as the registry expects): in Rego a rule that reads a key the document does
# not have is undefined and emits nothing, so every key any rule below reads is required in
# `incomplete` first. Presence is tested with object.keys, never by reading a value: two of
# the agent fields are booleans, and a bare reference to `false` fails a rule body exactly
# as a missing key does. `accord gate test` proves this policy cannot fail open.
package accord.gate

import rego.v1

# ---- what a complete manifest holds (accord schema --manifest) ----------------------------

required_top := {"accord_manifest", "model_fingerprint", "expected_agent_count", "evidence", "manifest"}

required_evidence := {"mesh_eval_digest", "probe_result_digest"}

required_manifest := {"negotiated_a2a_version", "agents", "retired_agents"}

required_agent := {
	"name", "url", "card_url", "version", "card_digest", "registered_card_digest",
	"a2a_version", "eval_digest", "reads_governed_data", "policy_probe_passed", "probe_owners",
}

required_retired := {"name", "url", "card_served"}

agent_strings := {"name", "url", "card_url", "version", "card_digest", "a2a_version", "eval_digest"}

agent_booleans := {"reads_governed_data", "policy_probe_passed"}

# the keys of an object; no keys for anything else (never an error, never undefined)
keys_of(x) := object.keys(x) if is_object(x)

else := set()

# how a message names an agent: its name when it has a non-empty string one, else its position
label(i, a) := a.name if {
	"name" in keys_of(a)
	is_string(a.name)
	a.name != ""
} else := sprintf("#%d (no name)", [i + 1])

agents := input.manifest.agents if {
	"manifest" in keys_of(input)
	"agents" in keys_of(input.manifest)
	is_array(input.manifest.agents)
} else := []

retired := input.manifest.retired_agents if {
	"manifest" in keys_of(input)
	"retired_agents" in keys_of(input.manifest)
	is_array(input.manifest.retired_agents)
} else := []

# the names of the agents and of the retired agents, where they are strings
agent_names := [a.name | some a in agents; "name" in keys_of(a); is_string(a.name)]

retired_names := [r.name | some r in retired; "name" in keys_of(r); is_string(r.name)]

# ---- completeness ------------------------------------------------------------------------

incomplete contains "incomplete manifest: the document is not a JSON object" if {
	not is_object(input)
}

incomplete contains msg if {
	"accord_manifest" in keys_of(input)
	input.accord_manifest != 1
	msg := sprintf(
		"incomplete manifest: accord_manifest is %v, not 1 (the format this policy reads)",
		[input.accord_manifest],
	)
}

incomplete contains msg if {
	"model_fingerprint" in keys_of(input)
	not is_string(input.model_fingerprint)
	msg := "incomplete manifest: model_fingerprint is not a string"
}

incomplete contains msg if {
	some key in required_top
	not key in keys_of(input)
	msg := sprintf("incomplete manifest: the top-level input %s is missing", [key])
}

incomplete contains msg if {
	"evidence" in keys_of(input)
	some key in required_evidence
	not key in keys_of(input.evidence)
	msg := sprintf("incomplete manifest: evidence.%s is missing", [key])
}

incomplete contains msg if {
	"manifest" in keys_of(input)
	some key in required_manifest
	not key in keys_of(input.manifest)
	msg := sprintf("incomplete manifest: manifest.%s is missing", [key])
}

incomplete contains msg if {
	"manifest" in keys_of(input)
	some key in {"agents", "retired_agents"}
	key in keys_of(input.manifest)
	not is_array(input.manifest[key])
	msg := sprintf("incomplete manifest: manifest.%s is not a list", [key])
}

incomplete contains msg if {
	"evidence" in keys_of(input)
	"mesh_eval_digest" in keys_of(input.evidence)
	not is_string(input.evidence.mesh_eval_digest)
	msg := "incomplete manifest: evidence.mesh_eval_digest is not a string"
}

incomplete contains msg if {
	"manifest" in keys_of(input)
	"negotiated_a2a_version" in keys_of(input.manifest)
	not is_string(input.manifest.negotiated_a2a_version)
	msg := "incomplete manifest: manifest.negotiated_a2a_version is not a string"
}

# an empty string is no value: two empty digests are equal, and prove nothing
incomplete contains msg if {
	is_object(input)
	some path in [
		["model_fingerprint"], ["evidence", "mesh_eval_digest"],
		["evidence", "probe_result_digest"], ["manifest", "negotiated_a2a_version"],
	]
	object.get(input, path, null) == ""
	msg := sprintf("incomplete manifest: %s is empty", [concat(".", path)])
}

incomplete contains msg if {
	"expected_agent_count" in keys_of(input)
	not is_number(input.expected_agent_count)
	msg := "incomplete manifest: expected_agent_count is not a number"
}

incomplete contains msg if {
	"expected_agent_count" in keys_of(input)
	is_number(input.expected_agent_count)
	# the registry counts the agents it still lists and the model retired: each is either
	# described (agents) or accounted for (retired_agents, judged below)
	count(agents) + count(retired) != input.expected_agent_count
	# %v, not %d: the count comes from the input and may be negative or fractional (OPA
	# writes -1 for both verbs; regorus 0.9.1 writes a negative %d as --1, and refuses a
	# fraction for %d, which would make the gate exit 2 instead of denying)
	msg := sprintf(
		"incomplete manifest: it describes %d agents and %d retired, the registry expects %v",
		[count(agents), count(retired), input.expected_agent_count],
	)
}

incomplete contains msg if {
	some i, a in agents
	not is_object(a)
	msg := sprintf("incomplete manifest: agent %s is not an object", [label(i, a)])
}

incomplete contains msg if {
	some i, a in agents
	is_object(a)
	some key in required_agent
	not key in keys_of(a)
	msg := sprintf("incomplete manifest: agent %s has no %s", [label(i, a), key])
}

incomplete contains msg if {
	some i, a in agents
	some key in agent_strings
	key in keys_of(a)
	not is_string(a[key])
	msg := sprintf("incomplete manifest: agent %s: %s is not a string", [label(i, a), key])
}

incomplete contains msg if {
	some i, a in agents
	some key in agent_strings
	key in keys_of(a)
	a[key] == ""
	msg := sprintf("incomplete manifest: agent %s: %s is empty", [label(i, a), key])
}

# an agent is named as the model names its surfaces (lower_snake_case): a look-alike (a
# Cyrillic letter) names no surface of any model
incomplete contains msg if {
	some a in agents
	"name" in keys_of(a)
	is_string(a.name)
	not regex.match(`^[a-z][a-z0-9_]*$`, a.name)
	msg := sprintf("incomplete manifest: agent %s: its name is not a surface's name", [a.name])
}

# ---- distinct agents: a copy of one agent never stands in for another

incomplete contains msg if {
	some name in {n | some n in agent_names}
	n := count([x | some x in agent_names; x == name])
	n > 1
	msg := sprintf("incomplete manifest: agent %s is listed %d times", [name, n])
}

incomplete contains msg if {
	some name in {n | some n in retired_names}
	n := count([x | some x in retired_names; x == name])
	n > 1
	msg := sprintf("incomplete manifest: retired agent %s is listed %d times", [name, n])
}

incomplete contains msg if {
	some name in {n | some n in agent_names}
	name in retired_names
	msg := sprintf("incomplete manifest: %s is listed both as an agent and as retired", [name])
}

# ----

incomplete contains msg if {
	some i, a in agents
	some key in agent_booleans
	key in keys_of(a)
	not is_boolean(a[key])
	msg := sprintf("incomplete manifest: agent %s: %s is not a boolean", [label(i, a), key])
}

incomplete contains msg if {
	some i, a in agents
	"probe_owners" in keys_of(a)
	not is_array(a.probe_owners)
	msg := sprintf("incomplete manifest: agent %s: probe_owners is not a list", [label(i, a)])
}

incomplete contains msg if {
	some i, a in agents
	"probe_owners" in keys_of(a)
	is_array(a.probe_owners)
	some owner in a.probe_owners
	not is_string(owner)
	msg := sprintf("incomplete manifest: agent %s: a probe owner is not a string", [label(i, a)])
}

incomplete contains msg if {
	some i, a in agents
	"probe_owners" in keys_of(a)
	is_array(a.probe_owners)
	"" in a.probe_owners
	msg := sprintf("incomplete manifest: agent %s: a probe owner is empty", [label(i, a)])
}

incomplete contains msg if {
	some i, a in agents
	"registered_card_digest" in keys_of(a)
	a.registered_card_digest == ""
	msg := sprintf("incomplete manifest: agent %s: registered_card_digest is empty", [label(i, a)])
}

incomplete contains msg if {
	some i, a in agents
	"registered_card_digest" in keys_of(a)
	not is_string(a.registered_card_digest)
	not is_null(a.registered_card_digest)
	msg := sprintf(
		"incomplete manifest: agent %s: registered_card_digest is neither a string nor null",
		[label(i, a)],
	)
}

incomplete contains msg if {
	some i, r in retired
	some key in required_retired
	not key in keys_of(r)
	msg := sprintf("incomplete manifest: retired agent #%d has no %s", [i + 1, key])
}

incomplete contains msg if {
	some i, r in retired
	not is_object(r)
	msg := sprintf("incomplete manifest: retired agent #%d is not an object", [i + 1])
}

incomplete contains msg if {
	some i, r in retired
	some key in {"name", "url"}
	key in keys_of(r)
	not is_string(r[key])
	msg := sprintf("incomplete manifest: retired agent #%d: %s is not a string", [i + 1, key])
}

incomplete contains msg if {
	some i, r in retired
	some key in {"name", "url"}
	key in keys_of(r)
	r[key] == ""
	msg := sprintf("incomplete manifest: retired agent #%d: %s is empty", [i + 1, key])
}

incomplete contains msg if {
	some i, r in retired
	"card_served" in keys_of(r)
	not is_boolean(r.card_served)
	msg := sprintf("incomplete manifest: retired agent #%d: card_served is not a boolean", [i + 1])
}

default complete := false

complete if count(incomplete) == 0

# ---- denials -----------------------------------------------------------------------------

deny contains msg if {
	some msg in incomplete
}

deny contains msg if {
	some a in agents
	a.a2a_version != input.manifest.negotiated_a2a_version
	msg := sprintf(
		"agent %s speaks A2A %s; the mesh negotiates %s",
		[a.name, a.a2a_version, input.manifest.negotiated_a2a_version],
	)
}

deny contains msg if {
	some a in agents
	a.eval_digest != input.evidence.mesh_eval_digest
	msg := sprintf(
		"agent %s was cleared against evaluation %s, not the mesh's %s",
		[a.name, a.eval_digest, input.evidence.mesh_eval_digest],
	)
}

deny contains msg if {
	some a in agents
	a.reads_governed_data == true
	a.policy_probe_passed != true
	msg := sprintf(
		"agent %s reads governed data without a passing probe (probe owners: %s)",
		[a.name, owners(a)],
	)
}

deny contains msg if {
	some a in agents
	is_string(a.registered_card_digest)
	a.registered_card_digest != a.card_digest
	msg := sprintf(
		"agent %s serves a card (sha256 %s) that differs from its registered card (sha256 %s)",
		[a.name, a.card_digest, a.registered_card_digest],
	)
}

deny contains msg if {
	some r in retired
	r.card_served == true
	msg := sprintf(
		"agent %s is in the registry but no longer in the model, and its card is still served at %s",
		[r.name, r.url],
	)
}

owners(a) := concat(", ", a.probe_owners) if count(a.probe_owners) > 0

else := "none: no probe names it"

# ---- what the gate could not check (shown, never a denial) ---------------------------------

warnings contains msg if {
	some a in agents
	"registered_card_digest" in keys_of(a)
	is_null(a.registered_card_digest)
	msg := sprintf("agent %s: no registered card to compare its served card with", [a.name])
}

default allow := false

allow if {
	complete
	count(deny) == 0
}
