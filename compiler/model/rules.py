"""The rule table: every lint rule, one row each (as ruff's ``codes.rs``).

A row says all there is to say about a rule but its check and its page:

* ``id``, ``name``, ``severity``: stable, named by the policy format (docs/policy-format.md).
  ``ignore:`` entries are validated against the ids, which is why the table lives in the
  model. A finding may be of a lower severity than its rule's where the rule's page says so
  (ACC206);
* ``family``: the module of :mod:`compiler.lint.rules` that holds the rule's checks (or, for
  a rule another command raises, its page). :mod:`compiler.lint.checks` refuses a check
  registered anywhere else, and an incremental lint imports only the families of the rules it
  re-runs;
* ``scope`` and ``reads``, for a rule with a policy check (incremental lint,
  :mod:`compiler.lint.incremental.deps`): ``entry`` (its findings are per entry of a section)
  or ``cross`` (it compares entries), and the inputs it reads: sections of the merged model
  (``masks``, ``principals``...) or :data:`GOVERNANCE`. A policy rule whose ``reads`` is None
  reads everything, and is re-run on every edit;
* ``sql_reads``, for a rule with a SQL check: what it reads of the policy model linted with
  the SQL files (:data:`MAPPING_TABLES`). Lint computes it only for the rules selected that
  declare it, hands it to the SQL checks, and keys the SQL files' cached result by it
  (``compiler/lint/run.py``): a SQL check sees nothing of the model it does not declare.

Adding a rule: a row here, its check with its page in the family module, a test case, then
``make docs`` (CONTRIBUTING.md, "Where a change goes"). The standard library only: ``accord lint`` is a
pre-commit hook and reads this table on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]
#: ``entry``: findings per entry of a section; ``cross``: the rule compares entries
Scope = Literal["entry", "cross"]

#: the governance of the datasets: every dataset's entry but for the columns nothing refers
#: to (:func:`compiler.lint.incremental.deps.governance`). Adding, removing or retyping such a
#: column changes no mask, row filter, identifier domain, replica or lowered policy.
GOVERNANCE = "datasets:governance"

#: what lowering the model reads: the inputs of every rule that reads the lowered catalogs
#: (or ``compiler.lint.usage``, which looks at them)
LOWERED = ("version", "platforms", "principals", "entitlements", "masks", GOVERNANCE)

#: what a SQL check may read of the policy model linted with the SQL files (a policy directory
#: given beside them, or a repository's): the mapping tables the model compiles, their names
#: and columns (:func:`compiler.model.grants.grants_tables`, from ``platforms`` and
#: ``entitlements``)
MAPPING_TABLES = "model:mapping_tables"


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str
    severity: Severity
    #: the module of ``compiler.lint.rules`` that holds its checks, or its page
    family: str
    #: incremental lint (policy checks only): per entry, or across entries
    scope: Scope | None = None
    #: incremental lint (policy checks only): the inputs it reads; None: everything
    reads: tuple[str, ...] | None = None
    #: its SQL check: what it reads of the policy model linted beside the SQL files
    sql_reads: tuple[str, ...] = ()


RULE_TABLE: tuple[RuleInfo, ...] = (
    # SQL files only (ACC001); over the other checks' findings (ACC002): nothing to declare
    RuleInfo("ACC001", "unanalysed-policy", "error", "coverage"),
    RuleInfo("ACC002", "unused-suppression", "warning", "suppressions"),
    # role context functions in hand-written row-filter expressions and mask bodies (the
    # predicates are in the row filters, which the governance view keeps whole)
    RuleInfo("ACC101", "current-role", "error", "identity", "entry", ("platforms", GOVERNANCE)),
    RuleInfo(
        "ACC102", "workspace-group-check", "error", "identity", "entry", ("platforms", GOVERNANCE)
    ),
    RuleInfo("ACC103", "invoker-role", "warning", "identity", "entry", ("platforms", GOVERNANCE)),
    # parameters shadowed by the columns of the mapping tables a predicate reads (in SQL files,
    # the tables the model linted beside them compiles)
    RuleInfo(
        "ACC104",
        "shadowed-parameter",
        "error",
        "parameters",
        "entry",
        LOWERED,
        sql_reads=(MAPPING_TABLES,),
    ),
    # hashing: lowered mask bodies, salts across masks and platforms, identifier domains
    RuleInfo("ACC201", "unsalted-hash", "error", "hashing", "entry", LOWERED),
    RuleInfo("ACC202", "shared-salt", "error", "hashing", "cross", ("masks", "platforms")),
    RuleInfo("ACC203", "joinable-digest", "error", "hashing", "cross", LOWERED),
    RuleInfo("ACC204", "weak-hash", "error", "hashing", "entry", LOWERED),
    # Added by accord beyond the format's table (SQL files): a salt written as a literal in a
    # policy body, readable by every role that may describe the policy.
    RuleInfo("ACC205", "literal-salt", "error", "hashing"),
    # a partial mask against the declared length of each column it masks (a warning past half)
    RuleInfo("ACC206", "mask-reveals", "error", "masks", "cross", ("masks", GOVERNANCE)),
    # surfaces and indexes
    RuleInfo(
        "ACC301",
        "index-over-governed-data",
        "error",
        "surfaces",
        "entry",
        ("indexes", GOVERNANCE, "masks", "platforms"),
    ),
    RuleInfo(
        "ACC401", "unsupported-runtime", "error", "surfaces", "entry", ("surfaces", "platforms")
    ),
    RuleInfo(
        "ACC402",
        "ungoverned-surface",
        "error",
        "surfaces",
        "entry",
        ("surfaces", GOVERNANCE, "platforms"),
    ),
    # every persona's view through every surface: the whole governance of the mesh
    RuleInfo(
        "ACC403",
        "loosest-surface",
        "error",
        "surfaces",
        "cross",
        (*LOWERED, "personas", "surfaces", "indexes", "mesh"),
    ),
    # probes compare what a persona would see with what they expect
    # (compiler/meaning/probes.py, compiler/model/probe_places.py). What was checked:
    # * a probe's column is looked up among a dataset's columns, its filter columns and its
    #   row filter's arguments, and in the view's columns, without case (`str.lower`:
    #   probe_places.declared, semantics.DatasetView.column, replicas.column_origin /
    #   column_path). Two names equal under `lower` are equal under `casefold`, which
    #   GOVERNANCE folds by (checked over every code point), and the probe's column is a word
    #   of the probes section, so a plain column a probe names (on its dataset or a replica) is
    #   kept; a name that is not one word (a `$`) is always kept;
    # * with an identifier domain, the places are the columns carrying it: never plain;
    # * a probe without a column answers the rows only (the view's columns are the governed
    #   ones, masked or with an identifier, plus the probe's column); nothing counts, orders or
    #   lists a dataset's columns ("every column" is never asked). `governed` reads masks and
    #   the row filter, `omits` and `replica_of` are kept by GOVERNANCE;
    # * the deciders it cites are mask, row filter, entitlement, persona and surface paths, and
    #   the declared column of a probe's column (kept, above);
    # * the rest: personas and principals (with the hierarchy), entitlements (with `until`,
    #   judged at today, which the index key holds), masks, platforms (Databricks style), the
    #   surfaces' reads, identity, platform and runtime, the probes. Nothing reads `indexes`
    #   or `mesh` (`accord manifest` alone reads the mesh).
    RuleInfo(
        "ACC404",
        "probe-mismatch",
        "error",
        "probes",
        "entry",
        (*LOWERED, "personas", "surfaces", "probes"),
    ),
    # principals: identities, usage (masks, dimensions and principals referred to), expiry
    RuleInfo("ACC502", "missing-identity", "error", "principals", "cross", (*LOWERED, "personas")),
    RuleInfo(
        "ACC503", "unused", "warning", "principals", "cross", (*LOWERED, "personas", "surfaces")
    ),
    # Unity Catalog ABAC quotas and identities: the lowered Databricks catalog
    RuleInfo("ACC504", "abac-quota", "error", "abac", "cross", LOWERED),
    # Added by accord (platform behaviour the documentation leaves open; docs/live.md, Platform notes)
    RuleInfo("ACC505", "abac-service-identity", "warning", "abac", "entry", (*LOWERED, "surfaces")),
    RuleInfo("ACC506", "abac-salt-execute", "warning", "abac", "entry", LOWERED),
    RuleInfo(
        "ACC507", "expired-grant", "warning", "principals", "entry", ("entitlements", "principals")
    ),
    # identities: what the model grants an everyone identity, or two principals of one identity
    # (on the platforms where grants, masks and filters take effect: compiler.lint.usage)
    RuleInfo("ACC508", "everyone-identity", "error", "principals", "cross", LOWERED),
    RuleInfo("ACC509", "identity-collision", "error", "principals", "cross", LOWERED),
    # ACC601 reads the migration history only (`--plans` / `--ledger`); the cache, and so the
    # dependency index, is used only without them, when it reads nothing
    RuleInfo("ACC601", "half-applied-migration", "error", "migrations", "entry", ()),
    # raised by `accord drift` (live platforms); lint documents them and runs no check
    RuleInfo("ACC701", "live-missing", "error", "drift"),
    RuleInfo("ACC702", "live-unmanaged", "error", "drift"),
    RuleInfo("ACC703", "live-changed", "error", "drift"),
    RuleInfo("ACC704", "grants-diverge", "error", "drift"),
    RuleInfo("ACC705", "salt-exposed", "error", "drift"),
    RuleInfo("ACC706", "salt-drift", "error", "drift"),
    RuleInfo("ACC707", "live-incomplete", "error", "drift"),
    RuleInfo("ACC708", "hierarchy-drift", "error", "drift"),
)

RULES_BY_ID: dict[str, RuleInfo] = {r.id: r for r in RULE_TABLE}

#: the rule modules, in the order of the table (:mod:`compiler.lint.rules` loads them)
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(r.family for r in RULE_TABLE))


def is_known_rule(rule_id: str) -> bool:
    return rule_id in RULES_BY_ID
