"""Policy-file rules, table-driven: for every rule, cases that fire (located at the YAML node
that causes them) and near misses that must not."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.lint.engine import lint_project
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.model.validate import Project, load_project
from tests.conftest import ROOT
from tests.estates import DELETE, LINT_BASE, edited, write_estate


def lint_estate(root: Path, patch: dict[str, Any]) -> tuple[Project, list[Finding]]:
    """LINT_BASE with ``patch``, written one file per section under ``root``, and linted."""
    project = load_project(write_estate(root, edited(LINT_BASE, patch), split=True))
    return project, lint_project(project)


@dataclass
class Case:
    id: str
    rule: str
    patch: dict[str, Any]
    #: expected findings of ``rule``: (kind, path) of the YAML node each is located at, where
    #: kind is "value" (project.loc) or "key" (project.key_loc); empty for a near miss
    at: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    #: text every finding's message contains
    says: str = ""


def expr(platform: str, text: str, args: dict[str, str]) -> dict[str, Any]:
    return {
        "row_filter": {
            "entitlement": DELETE,
            "column": DELETE,
            "expression": {platform: text},
            "arguments": args,
        }
    }


SF_EXPR = ("datasets", "customers", "row_filter", "expression", "snowflake")
DBX_EXPR = ("datasets", "customers_lake", "row_filter", "expression", "databricks")
CORTEX = {"platform": "snowflake", "kind": "cortex_search", "source": "customers"}
VECTOR = {"platform": "databricks", "kind": "vector_search", "source": "customers_lake"}
ABAC = {"platforms": {"databricks": {"style": "abac"}}}
NO_SUBJECT = {"masks": {"subject": DELETE}}
TAIL_40 = {"strategy": "partial", "keep_last": 40}


def dataset_patch(name: str, **fields: Any) -> dict[str, Any]:
    return {"datasets": {name: fields}}


CASES = [
    # ---- ACC101 current-role -------------------------------------------------------------------
    Case(
        "current-role",
        "ACC101",
        dataset_patch(
            "customers",
            **expr(
                "snowflake", "REGION = 'EU' OR CURRENT_ROLE() = 'AUDITOR'", {"REGION": "VARCHAR"}
            ),
        ),
        [("value", SF_EXPR)],
        "CURRENT_ROLE()",
    ),
    Case(
        "current-available-roles",
        "ACC101",
        dataset_patch(
            "customers",
            **expr(
                "snowflake",
                "ARRAY_CONTAINS('AUDITOR'::VARIANT, CURRENT_AVAILABLE_ROLES())",
                {"REGION": "VARCHAR"},
            ),
        ),
        [("value", SF_EXPR)],
        "CURRENT_AVAILABLE_ROLES()",
    ),
    Case(
        "near-miss: IS_ROLE_IN_SESSION",
        "ACC101",
        dataset_patch(
            "customers",
            **expr(
                "snowflake", "REGION = 'EU' OR IS_ROLE_IN_SESSION('AUDITOR')", {"REGION": "VARCHAR"}
            ),
        ),
    ),
    Case(
        "near-miss: the words in a string literal",
        "ACC101",
        dataset_patch(
            "customers", **expr("snowflake", "REGION = 'CURRENT_ROLE()'", {"REGION": "VARCHAR"})
        ),
    ),
    # ---- ACC102 workspace-group-check ----------------------------------------------------------
    Case(
        "is_member",
        "ACC102",
        dataset_patch(
            "customers_lake",
            **expr("databricks", "region = 'EU' OR is_member('auditors')", {"region": "STRING"}),
        ),
        [("value", DBX_EXPR)],
        "is_member()",
    ),
    Case(
        "near-miss: is_account_group_member",
        "ACC102",
        dataset_patch(
            "customers_lake",
            **expr(
                "databricks",
                "region = 'EU' OR is_account_group_member('auditors')",
                {"region": "STRING"},
            ),
        ),
    ),
    # ---- ACC204 weak-hash -----------------------------------------------------------------------
    Case(
        "MD5 in a Snowflake predicate",
        "ACC204",
        dataset_patch(
            "customers", **expr("snowflake", "MD5(REGION) <> 'x'", {"REGION": "VARCHAR"})
        ),
        [("value", SF_EXPR)],
        "MD5()",
    ),
    Case(
        "hash() in a Databricks predicate",
        "ACC204",
        dataset_patch(
            "customers_lake", **expr("databricks", "hash(region) % 2 = 0", {"region": "STRING"})
        ),
        [("value", DBX_EXPR)],
        "HASH()",
    ),
    Case(
        "near-miss: SHA2",
        "ACC204",
        dataset_patch(
            "customers", **expr("snowflake", "SHA2(REGION, 256) <> 'x'", {"REGION": "VARCHAR"})
        ),
    ),
    # ---- ACC201 unsalted-hash ---------------------------------------------------------------------
    Case(
        "no salt at all: once per platform using the mask",
        "ACC201",
        {"masks": {"subject": {"salt": DELETE}}},
        [("key", ("masks", "subject")), ("key", ("masks", "subject"))],
        "no salt on",
    ),
    Case(
        "salt for one platform only",
        "ACC201",
        {"masks": {"subject": {"salt": {"databricks": DELETE}}}},
        [("value", ("masks", "subject", "salt"))],
        "no salt on databricks",
    ),
    Case(
        "near-miss: salted where used (snowflake only)",
        "ACC201",
        {
            "masks": {"subject": {"salt": {"databricks": DELETE}}},
            "datasets": {"customers_lake": {"columns": {"subject_id": {"mask": DELETE}}}},
        },
    ),
    Case(
        "near-miss: an unsalted hash mask no column uses",
        "ACC201",
        {"masks": {"spare": {"strategy": "hash"}}},
    ),
    # ---- ACC202 shared-salt -----------------------------------------------------------------------
    Case(
        "one salt on both platforms",
        "ACC202",
        {"masks": {"subject": {"salt": {"snowflake": "env:S", "databricks": "env:S"}}}},
        [("value", ("masks", "subject", "salt", "databricks"))],
        "on both snowflake and databricks",
    ),
    Case(
        "one salt for two masks (file references normalised)",
        "ACC202",
        {
            "masks": {
                "subject": {"salt": {"snowflake": "file:./secrets/s", "databricks": "env:B"}},
                "token": {"strategy": "hash", "salt": {"snowflake": "file:secrets/s"}},
            },
            "datasets": {"customers": {"columns": {"TOKEN": {"type": "VARCHAR", "mask": "token"}}}},
        },
        [("value", ("masks", "token", "salt", "snowflake"))],
        "also the salt of mask subject",
    ),
    Case("near-miss: a salt per mask and platform", "ACC202", {}),
    # ---- ACC203 joinable-digest -------------------------------------------------------------------
    Case(
        "identifier domain unsalted on both platforms",
        "ACC203",
        {"masks": {"subject": {"salt": DELETE}}},
        [("key", ("masks", "subject"))],
        "identifier domain subject gets identical digests on snowflake and databricks",
    ),
    Case(
        "same salt reference on both platforms",
        "ACC203",
        {"masks": {"subject": {"salt": {"snowflake": "env:S", "databricks": "env:S"}}}},
        [("value", ("masks", "subject", "salt", "databricks"))],
        "the same salt env:S",
    ),
    Case(
        "two unsalted masks of one domain",
        "ACC203",
        {
            "masks": {"subject": {"salt": DELETE}, "subject_lake": {"strategy": "hash"}},
            "datasets": {"customers_lake": {"columns": {"subject_id": {"mask": "subject_lake"}}}},
        },
        [("key", ("masks", "subject_lake"))],
        "mask subject_lake",
    ),
    Case("near-miss: different salt per platform", "ACC203", {}),
    Case(
        "near-miss: unsalted, but the domain is held on one platform only",
        "ACC203",
        {
            "masks": {"subject": {"salt": DELETE}},
            "datasets": {"customers_lake": {"columns": {"subject_id": {"identifier": DELETE}}}},
        },
    ),
    # ---- ACC206 mask-reveals ----------------------------------------------------------------------
    Case(
        "partial keeps more than the declared length: the clear value",
        "ACC206",
        {
            "masks": {"tail": TAIL_40},
            "datasets": {
                "customers": {"columns": {"IBAN": {"type": "VARCHAR(34)", "mask": "tail"}}}
            },
        },
        [("value", ("datasets", "customers", "columns", "IBAN", "mask"))],
        "every value is shown whole",
    ),
    Case(
        "partial keeps exactly the declared length (Databricks VARCHAR(n))",
        "ACC206",
        {
            "masks": {"tail": {"strategy": "partial", "keep_last": 10}},
            "datasets": {
                "customers_lake": {"columns": {"acct": {"type": "VARCHAR(10)", "mask": "tail"}}}
            },
        },
        [("value", ("datasets", "customers_lake", "columns", "acct", "mask"))],
        "every value is shown whole",
    ),
    Case(
        "past half of a CHAR(n): a warning",
        "ACC206",
        {
            "masks": {"tail": {"strategy": "partial", "keep_last": 3}},
            "datasets": {"customers": {"columns": {"CODE": {"type": "CHAR(5)", "mask": "tail"}}}},
        },
        [("value", ("datasets", "customers", "columns", "CODE", "mask"))],
        "more than half of a full-length value is shown (3 of 5)",
    ),
    Case(
        "a mask shared by columns of different lengths is judged per column",
        "ACC206",
        {
            "masks": {"tail": TAIL_40},
            "datasets": {
                "customers": {
                    "columns": {
                        "IBAN": {"type": "VARCHAR(34)", "mask": "tail"},
                        "ADDRESS": {"type": "VARCHAR(200)", "mask": "tail"},
                    }
                }
            },
        },
        [("value", ("datasets", "customers", "columns", "IBAN", "mask"))],
        "customers.IBAN is VARCHAR(34)",
    ),
    Case(
        "a replica on the same platform inherits the column: judged once, at its source",
        "ACC206",
        {
            "masks": {"tail": TAIL_40},
            "datasets": {
                "customers": {"columns": {"IBAN": {"type": "VARCHAR(34)", "mask": "tail"}}},
                "customers_copy": {
                    "platform": "snowflake",
                    "table": "SALES.CRM.CUSTOMERS_COPY",
                    "replica_of": "customers",
                    "row_filter": {"entitlement": "region", "column": "REGION"},
                },
            },
        },
        [("value", ("datasets", "customers", "columns", "IBAN", "mask"))],
        "customers.IBAN",
    ),
    Case(
        "near-miss: no declared length (VARCHAR, STRING)",
        "ACC206",
        {
            "masks": {"tail": TAIL_40},
            "datasets": {
                "customers": {"columns": {"IBAN": {"type": "VARCHAR", "mask": "tail"}}},
                "customers_lake": {"columns": {"iban": {"type": "STRING", "mask": "tail"}}},
            },
        },
    ),
    Case(
        "near-miss: exactly half of the declared length",
        "ACC206",
        {
            "masks": {"tail": {"strategy": "partial", "keep_last": 17}},
            "datasets": {
                "customers": {"columns": {"IBAN": {"type": "VARCHAR(34)", "mask": "tail"}}}
            },
        },
    ),
    Case(
        "near-miss: a redact mask on a short column",
        "ACC206",
        {"datasets": {"customers": {"columns": {"EMAIL": {"type": "CHAR(2)", "mask": "email"}}}}},
    ),
    # ---- ACC301 index-over-governed-data ----------------------------------------------------------
    Case(
        "Cortex Search over a row-filtered table",
        "ACC301",
        {"indexes": {"search": {**CORTEX, "columns": ["REGION"]}}},
        [("key", ("indexes", "search"))],
        "owner's rights",
    ),
    Case(
        "Cortex Search holding a masked column, inherit_governance false",
        "ACC301",
        {
            "indexes": {"search": {**CORTEX, "columns": ["EMAIL"], "inherit_governance": False}},
            "datasets": {"customers": {"row_filter": DELETE}},
        },
        [("value", ("indexes", "search", "inherit_governance"))],
        "clear values of masked EMAIL",
    ),
    Case(
        "near-miss: Cortex Search with inherit_governance",
        "ACC301",
        {"indexes": {"search": {**CORTEX, "columns": ["EMAIL"], "inherit_governance": True}}},
    ),
    Case(
        "vector index over a table-style governed table",
        "ACC301",
        {"indexes": {"vec": {**VECTOR, "columns": ["region"]}}},
        [("key", ("indexes", "vec"))],
        "cannot build an index",
    ),
    Case(
        "vector index over ABAC: masked column held",
        "ACC301",
        {
            **ABAC,
            "indexes": {"vec": {**VECTOR, "columns": ["subject_id"]}},
            "datasets": {"customers_lake": {"row_filter": DELETE}},
            "surfaces": {"dbx_agent": {"runtime": "16.4"}},
        },
        [("key", ("indexes", "vec"))],
        "syncs every row",
    ),
    Case(
        "near-miss: vector index over ABAC, no row filter, no masked column held",
        "ACC301",
        {
            **ABAC,
            "indexes": {"vec": {**VECTOR, "columns": ["region"]}},
            # an index column must be a column the model knows (issue 10, item 13)
            "datasets": {
                "customers_lake": {"row_filter": DELETE, "columns": {"region": {"type": "STRING"}}}
            },
            "surfaces": {"dbx_agent": {"runtime": "16.4"}},
        },
    ),
    Case(
        "near-miss: vector index over an ungoverned table",
        "ACC301",
        {"indexes": {"vec": {**VECTOR, "source": "countries", "columns": ["name"]}}},
    ),
    # ---- ACC401 unsupported-runtime ---------------------------------------------------------------
    Case(
        "table-level filters below 12.2",
        "ACC401",
        {"surfaces": {"dbx_agent": {"runtime": "11.3"}}},
        [("value", ("surfaces", "dbx_agent", "runtime"))],
        "12.2",
    ),
    Case(
        "dedicated access mode below 15.4",
        "ACC401",
        {"surfaces": {"dbx_agent": {"runtime": "14.3", "access_mode": "dedicated"}}},
        [("value", ("surfaces", "dbx_agent", "runtime"))],
        "15.4",
    ),
    Case(
        "ABAC below 16.4",
        "ACC401",
        ABAC,
        [("value", ("surfaces", "dbx_agent", "runtime"))],
        "16.4",
    ),
    Case(
        "near-miss: standard access mode on 14.3",
        "ACC401",
        {"surfaces": {"dbx_agent": {"runtime": "14.3", "access_mode": "standard"}}},
    ),
    Case(
        "near-miss: serverless under ABAC",
        "ACC401",
        {**ABAC, "surfaces": {"dbx_agent": {"runtime": "serverless"}}},
    ),
    Case(
        "near-miss: sql-warehouse under ABAC",
        "ACC401",
        {**ABAC, "surfaces": {"dbx_agent": {"runtime": "sql-warehouse"}}},
    ),
    Case(
        "near-miss: an old runtime reading ungoverned data only",
        "ACC401",
        {
            "surfaces": {
                "old": {"platform": "databricks", "reads": ["countries"], "runtime": "10.4"}
            }
        },
    ),
    # ---- ACC402 ungoverned-surface ----------------------------------------------------------------
    Case(
        "no catalog reads a governed dataset",
        "ACC402",
        {"surfaces": {"pipe": {"platform": "none", "reads": ["countries", "customers_lake"]}}},
        [("value", ("surfaces", "pipe", "reads", 1))],
        "no catalog",
    ),
    Case(
        "service identity on a catalog",
        "ACC402",
        {"surfaces": {"sf_agent": {"identity": "service"}}},
        [("value", ("surfaces", "sf_agent", "reads", 0))],
        "service identity",
    ),
    Case(
        "near-miss: no catalog, ungoverned data only",
        "ACC402",
        {"surfaces": {"pipe": {"platform": "none", "reads": ["countries"], "identity": "service"}}},
    ),
    # ---- ACC403 loosest-surface -------------------------------------------------------------------
    Case(
        "a pipeline with no catalog shows what the agent filters",
        "ACC403",
        {"surfaces": {"pipe": {"platform": "none", "reads": ["customers_lake"]}}},
        [("value", ("surfaces", "pipe", "reads", 0))],
        "pipe is looser than sf_agent on the facts of customers and its replicas",
    ),
    Case(
        "a replica without the mask",
        "ACC403",
        {"datasets": {"customers_lake": {"columns": {"email": {"mask": DELETE}}}}},
        [("value", ("surfaces", "dbx_agent", "reads", 0))],
        "customers_lake.email is clear on dbx_agent but customers.EMAIL is masked on sf_agent",
    ),
    Case(
        "an identifier domain masked in one dataset, clear in another",
        "ACC403",
        {
            "datasets": {
                "visits": {
                    "platform": "databricks",
                    "table": "clinic.visits.log",
                    "columns": {"patient": {"type": "STRING", "identifier": "subject"}},
                }
            },
            "surfaces": {"dbx_agent": {"reads": ["customers_lake", "countries", "visits"]}},
        },
        [("value", ("surfaces", "dbx_agent", "reads", 2))],
        "subject identifiers are ungoverned in visits.patient",
    ),
    Case("near-miss: replicas governed alike", "ACC403", {}),
    Case(
        "near-miss: a surface whose runtime returns no rows (ACC401's finding)",
        "ACC403",
        {"surfaces": {"dbx_agent": {"runtime": "11.3"}}},
    ),
    # ---- ACC502 missing-identity ------------------------------------------------------------------
    Case(
        "entitlement granted on a platform where the principal has no identity",
        "ACC502",
        {"principals": {"analyst": {"databricks": DELETE}}},
        [("value", ("entitlements", "region", "EU", 0))],
        "principal analyst has no databricks identity, but entitlement region grants it EU",
    ),
    Case(
        "unmasked_for on a platform that uses the mask",
        "ACC502",
        {
            "principals": {"reviewer": {"snowflake": "REVIEWER"}},
            "masks": {"email": {"unmasked_for": ["auditor", "reviewer"]}},
        },
        [("value", ("masks", "email", "unmasked_for", 1))],
        "mask email shows it the clear value",
    ),
    Case(
        "unfiltered_for on the dataset's platform",
        "ACC502",
        {
            "principals": {"steward": {"snowflake": "STEWARD"}},
            "datasets": {"customers_lake": {"row_filter": {"unfiltered_for": ["steward"]}}},
        },
        [("value", ("datasets", "customers_lake", "row_filter", "unfiltered_for", 0))],
        "shows it every row",
    ),
    Case(
        "near-miss: no identity where nothing is granted to it",
        "ACC502",
        {
            "principals": {"warehouse_admin": {"snowflake": "WH_ADMIN"}},
            "entitlements": {"desk": {"FX": ["warehouse_admin"]}},
            "datasets": {
                "trades": {
                    "platform": "snowflake",
                    "table": "MARKETS.FX.TRADES",
                    "row_filter": {"entitlement": "desk", "column": "DESK"},
                }
            },
            "personas": {"admin": ["warehouse_admin", "analyst"]},
        },
    ),
    # ---- ACC508 everyone-identity ----------------------------------------------------------------
    Case(
        "PUBLIC shown a mask's clear value (Snowflake only: its Databricks group is not everyone)",
        "ACC508",
        {
            "principals": {"everyone": {"snowflake": "PUBLIC", "databricks": "staff"}},
            "masks": {"email": {"unmasked_for": ["auditor", "everyone"]}},
        },
        [("value", ("masks", "email", "unmasked_for", 1))],
        "principal everyone is 'PUBLIC' on snowflake, which every user holds",
    ),
    Case(
        "account users (any case) granted an entitlement value",
        "ACC508",
        {
            "principals": {"analyst": {"databricks": "Account Users"}},
        },
        [("value", ("entitlements", "region", "EU", 0))],
        "principal analyst is 'Account Users' on databricks",
    ),
    Case(
        "the workspace users group shown every row",
        "ACC508",
        {
            "principals": {"everyone": {"databricks": "users"}},
            "datasets": {"customers_lake": {"row_filter": {"unfiltered_for": ["everyone"]}}},
            "personas": {"everyone": ["everyone"]},
        },
        [("value", ("datasets", "customers_lake", "row_filter", "unfiltered_for", 0))],
        "customers_lake's row filter shows it every row",
    ),
    Case(
        "PUBLIC inherits a principal that is granted rows: every user holds it",
        "ACC508",
        {
            "principals": {"everyone": {"snowflake": "PUBLIC", "inherits": ["auditor"]}},
            "personas": {"everyone": ["everyone"]},
        },
        [("value", ("principals", "everyone", "inherits", 0))],
        "and inherits auditor, which is given",
    ),
    Case(
        "near-miss: a principal that inherits PUBLIC is granted rows",
        "ACC508",
        {
            "principals": {
                "everyone": {"snowflake": "PUBLIC"},
                "analyst": {"inherits": ["everyone"]},
            },
        },
    ),
    Case(
        "near-miss: PUBLIC held by a persona only; a role named like it",
        "ACC508",
        {
            "principals": {
                "everyone": {"snowflake": "PUBLIC", "databricks": "account users"},
                "readers": {"snowflake": "PUBLIC_READERS", "databricks": "users-eu"},
            },
            "masks": {"email": {"unmasked_for": ["auditor", "readers"]}},
            "personas": {"everyone": ["everyone"]},
        },
    ),
    Case(
        "near-miss: PUBLIC on Snowflake, every row of a Databricks dataset",
        "ACC508",
        {
            "principals": {"everyone": {"snowflake": "PUBLIC", "databricks": "stewards"}},
            "datasets": {"customers_lake": {"row_filter": {"unfiltered_for": ["everyone"]}}},
        },
    ),
    # ---- ACC509 identity-collision ---------------------------------------------------------------
    Case(
        "a new principal with another's role and group, granted a value it lacks",
        "ACC509",
        {
            "principals": {"analyst_new": {"snowflake": "ANALYST", "databricks": "analysts"}},
            "entitlements": {"region": {"US": ["auditor", "analyst_new"]}},
        },
        [
            ("value", ("principals", "analyst_new", "snowflake")),
            ("value", ("principals", "analyst_new", "databricks")),
        ],
        "principals analyst and analyst_new are both",
    ),
    Case(
        "Databricks groups compared without case; the clear value of a mask",
        "ACC509",
        {
            "principals": {"auditor_lake": {"databricks": "Auditors"}},
            "entitlements": {"region": {"EU": ["analyst", "auditor", "auditor_lake"]}},
        },
        [("value", ("principals", "auditor_lake", "databricks"))],
        "only auditor: the clear value of mask email",
    ),
    Case(
        "near-miss: one identity, the same grants",
        "ACC509",
        {
            "principals": {"analyst_new": {"snowflake": "ANALYST", "databricks": "analysts"}},
            "entitlements": {"region": {"EU": ["analyst", "auditor", "analyst_new"]}},
            "personas": {"analyst_new": ["analyst_new"]},
        },
    ),
    Case(
        "near-miss: one role on Snowflake, the extra grant on Databricks only (own group)",
        "ACC509",
        {
            "principals": {"analyst_new": {"snowflake": "ANALYST", "databricks": "analysts-new"}},
            "entitlements": {"region": {"EU": ["analyst", "auditor", "analyst_new"]}},
            "datasets": {"customers_lake": {"row_filter": {"unfiltered_for": ["analyst_new"]}}},
        },
    ),
    # ---- ACC503 unused ----------------------------------------------------------------------------
    Case(
        "a principal nothing refers to",
        "ACC503",
        {"principals": {"ghost": {"snowflake": "GHOST", "databricks": "ghosts"}}},
        [("key", ("principals", "ghost"))],
        "principal ghost",
    ),
    Case(
        "a mask no column uses",
        "ACC503",
        {"masks": {"phone": {"strategy": "partial", "keep_last": 4}}},
        [("key", ("masks", "phone"))],
        "mask phone",
    ),
    Case(
        "a dimension no row filter uses",
        "ACC503",
        {"entitlements": {"desk": {"FX": ["analyst"]}}},
        [("key", ("entitlements", "desk"))],
        "entitlement dimension desk",
    ),
    Case(
        "near-miss: principals named by a projection, an aggregation and a join only",
        "ACC503",
        {
            "principals": {
                "unblinded": {"snowflake": "UNBLINDED"},
                "steward": {"snowflake": "STEWARD"},
                "joiner": {"snowflake": "JOINER"},
            },
            "datasets": {
                "customers": {
                    "aggregation": {"min_group_size": 5, "unrestricted_for": ["steward"]},
                    "join": {"unrestricted_for": ["joiner"]},
                    "columns": {
                        "EMAIL": {"type": "VARCHAR", "projection": {"allowed_for": ["unblinded"]}}
                    },
                }
            },
        },
    ),
    Case(
        "near-miss: a principal named by a persona only",
        "ACC503",
        {
            "principals": {"guest": {"snowflake": "GUEST", "databricks": "guests"}},
            "personas": {"guest": ["guest"]},
        },
    ),
]


def test_base_estate_is_clean(tmp_path: Path) -> None:
    _, findings = lint_estate(tmp_path / "p", {})
    assert findings == []


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule} {c.id}" for c in CASES])
def test_rule(case: Case, tmp_path: Path) -> None:
    project, findings = lint_estate(tmp_path / "p", case.patch)
    mine = [f for f in findings if f.rule == case.rule]
    expected = sorted(
        project.loc(*path) if kind == "value" else project.key_loc(*path) for kind, path in case.at
    )
    if not case.at:
        assert mine == [], f"near miss fired: {[str(f.location) + ' ' + f.message for f in mine]}"
        return
    inside_expression = case.at[0][1] in (SF_EXPR, DBX_EXPR)
    if inside_expression:
        # located on the node inside the predicate, on the expression's line
        assert [(f.location.file, f.location.line) for f in mine] == [
            (e.file, e.line) for e in expected
        ]
        for f in mine:
            line = source_line(f.location.file, f.location.line)
            assert line is not None
            called = case.says.rstrip("()")
            assert line[f.location.column - 1 :].upper().startswith(called.upper()), line
    else:
        assert sorted(f.location for f in mine) == expected
    for f in mine:
        assert case.says in f.message
        assert f.fix, "every finding says what to change"
        assert not f.suppressed


def test_yaml_suppression_needs_the_entry_and_keeps_the_finding(tmp_path: Path) -> None:
    reason = "index holds public abstracts only; reviewed by data governance"
    patch = {"indexes": {"search": {**CORTEX, "columns": ["REGION"], "ignore": {"ACC301": reason}}}}
    _, findings = lint_estate(tmp_path / "p", patch)
    (only,) = [f for f in findings if f.rule == "ACC301"]
    assert only.suppressed and only.reason == reason


# --------------------------------------------------------------------------------------------
# the reference estates

AS_FOUND = ROOT / "examples" / "as-found"

#: (rule, kind, YAML path of the node): every defect of the design notes' opening paragraph
AS_FOUND_FINDINGS: list[tuple[str, str, tuple[Any, ...]]] = [
    # a Snowflake policy written with CURRENT_ROLE
    ("ACC101", "value", ("datasets", "assay_results", "row_filter", "expression", "snowflake")),
    # two unsalted SHA-256 masks (one mask, used on both platforms) ...
    ("ACC201", "key", ("masks", "subject_pseudonym")),
    ("ACC201", "key", ("masks", "subject_pseudonym")),
    # ... that give a subject the same digest on both platforms
    ("ACC203", "key", ("masks", "subject_pseudonym")),
    # a Cortex Search service that answers with its owner's rights
    ("ACC301", "value", ("indexes", "assay_search", "inherit_governance")),
    # a vector index over an ABAC table that enforces nothing
    ("ACC301", "key", ("indexes", "variant_search")),
    # a runtime too old to apply filters
    ("ACC401", "value", ("surfaces", "lakehouse_agent", "runtime")),
    # a pipeline with no catalog that answers what both catalogs withhold: the loosest surface
    ("ACC402", "value", ("surfaces", "variant_annotation", "reads", 0)),
    ("ACC403", "value", ("surfaces", "variant_annotation", "reads", 0)),  # variant_calls
    ("ACC403", "value", ("surfaces", "variant_annotation", "reads", 0)),  # subject ids
    # an aggregation-only Snowflake table whose lakehouse replica answers row by row
    ("ACC403", "value", ("surfaces", "lakehouse_agent", "reads", 2)),  # trial_outcomes_lake
    # the governance team's probes (examples/as-found/probes.yaml), at their expect entries:
    # the CRO collaborator through the no-catalog pipeline ...
    *[
        ("ACC404", "value", ("probes", probe, "expect", "variant_annotation"))
        for probe in (
            "cro_cannot_unmask_cns_subjects",
            "cro_sees_no_oncology_variants",
            "pharmacologist_sees_cns_subjects",
        )
    ],
    # ... the CURRENT_ROLE predicate, which the model cannot evaluate (verify executes it) ...
    *[
        ("ACC404", "value", ("probes", probe, "expect", "warehouse_agent"))
        for probe in (
            "cro_cannot_unmask_cns_subjects",
            "pharmacologist_sees_cns_subjects",
            "bench_chemist_reads_redacted_oncology_notes",
        )
    ],
    # ... and the lakehouse agent's runtime, which answers with no rows
    *[
        ("ACC404", "value", ("probes", probe, "expect", "lakehouse_agent"))
        for probe in (
            "cro_cannot_unmask_cns_subjects",
            "cro_sees_no_oncology_variants",
            "pharmacologist_sees_cns_subjects",
            "bench_chemist_reads_redacted_oncology_notes",
        )
    ],
]


def test_as_found_estate_has_every_defect_located() -> None:
    project = load_project(AS_FOUND)
    findings = lint_project(project)
    got = sorted((f.rule, f.location.file, f.location.line) for f in findings)
    expected = []
    for rule_id, kind, path in AS_FOUND_FINDINGS:
        where = project.loc(*path) if kind == "value" else project.key_loc(*path)
        expected.append((rule_id, where.file, where.line))
    assert got == sorted(expected)
    platforms = sorted(
        f.message.split(" no salt on ")[1].split()[0] for f in findings if f.rule == "ACC201"
    )
    assert platforms == ["databricks", "snowflake"]
    assert all(f.location.column >= 1 and f.fix for f in findings)
    loosest = {f.object for f in findings if f.rule == "ACC403"}
    assert loosest == {"surfaces.variant_annotation", "surfaces.lakehouse_agent"}


def test_reference_estate_is_clean() -> None:
    assert lint_project(load_project(ROOT / "policies")) == []
