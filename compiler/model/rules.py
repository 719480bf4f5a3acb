"""The rule table of the policy format (docs/policy-format.md): stable ids, names and
severities. Its ids are stable; the lint engine attaches a check to each id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str
    severity: Severity


RULE_TABLE: tuple[RuleInfo, ...] = (
    RuleInfo("ACC001", "unanalysed-policy", "error"),
    RuleInfo("ACC002", "unused-suppression", "warning"),
    RuleInfo("ACC101", "current-role", "error"),
    RuleInfo("ACC102", "workspace-group-check", "error"),
    RuleInfo("ACC103", "invoker-role", "warning"),
    RuleInfo("ACC104", "shadowed-parameter", "error"),
    RuleInfo("ACC201", "unsalted-hash", "error"),
    RuleInfo("ACC202", "shared-salt", "error"),
    RuleInfo("ACC203", "joinable-digest", "error"),
    RuleInfo("ACC204", "weak-hash", "error"),
    # Added by accord beyond the format's table (SQL files): a salt written as a literal in a
    # policy body, readable by every role that may describe the policy.
    RuleInfo("ACC205", "literal-salt", "error"),
    RuleInfo("ACC301", "index-over-governed-data", "error"),
    RuleInfo("ACC401", "unsupported-runtime", "error"),
    RuleInfo("ACC402", "ungoverned-surface", "error"),
    RuleInfo("ACC403", "loosest-surface", "error"),
    RuleInfo("ACC404", "probe-mismatch", "error"),
    RuleInfo("ACC502", "missing-identity", "error"),
    RuleInfo("ACC503", "unused", "warning"),
    RuleInfo("ACC504", "abac-quota", "error"),
    # Added by accord (platform behaviour the documentation leaves open; README platform notes)
    RuleInfo("ACC505", "abac-service-identity", "warning"),
    RuleInfo("ACC506", "abac-salt-execute", "warning"),
    RuleInfo("ACC507", "expired-grant", "warning"),
    RuleInfo("ACC601", "half-applied-migration", "error"),
    # accord drift (live platforms)
    RuleInfo("ACC701", "live-missing", "error"),
    RuleInfo("ACC702", "live-unmanaged", "error"),
    RuleInfo("ACC703", "live-changed", "error"),
    RuleInfo("ACC704", "grants-diverge", "error"),
    RuleInfo("ACC705", "salt-exposed", "error"),
    RuleInfo("ACC706", "salt-drift", "error"),
    RuleInfo("ACC707", "live-incomplete", "error"),
    RuleInfo("ACC708", "hierarchy-drift", "error"),
)

RULES_BY_ID: dict[str, RuleInfo] = {r.id: r for r in RULE_TABLE}


def is_known_rule(rule_id: str) -> bool:
    return rule_id in RULES_BY_ID
