"""The estates tests are built from: the base estates as named constants, one way to edit one
(``edited``), and one way to write one to disk (``write_files`` / ``write_estate``).

A base estate is never changed in place: ``edited(BASE, ...)`` returns a fresh copy, and a
test that wants the base itself as its own dict writes ``edited(BASE)``.

- ``MINIMAL``: one Snowflake table, filtered and masked, as YAML *text*, for tests that edit the
  text and read positions back; ``MINIMAL_DATA`` is the same estate as data.
- ``LINT_BASE``: MINIMAL with the table's Databricks replica, a reference table, a salted
  pseudonym and an agent on each platform: what the lint rules are tried on.
- ``PLAN_BASE``: a filtered and masked table on each platform, ``subject`` held on both: the
  planner's estate (salts in ``PLAN_SALTS``).
- ``DIFF_BASE``: a warehouse table and its lakehouse replica, filtered by programme, with a
  salted pseudonym, a redacted note and a partial phone number; one agent on each platform.
- ``DATABRICKS_BASE``: Databricks only, three teams and no dataset (``databricks_estate``
  sets the style and the sections a test needs).
"""

from __future__ import annotations

import copy
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

Estate = dict[str, Any]

#: in a patch given to ``edited``, removes the key
DELETE = object()

#: a change to an estate: a patch (merged, see ``edited``) or a function that edits the copy
Change = Mapping[str, Any] | Callable[[Estate], None]


def edited(base: Mapping[str, Any], *changes: Change) -> Estate:
    """A deep copy of ``base`` with each change applied in turn. A patch merges mappings key
    by key; any other value replaces, and DELETE removes the key. A function is called on the
    copy and edits it in place."""
    out: Estate = copy.deepcopy(dict(base))
    for change in changes:
        if callable(change):
            change(out)
        else:
            _merge(out, change)
    return out


def _merge(out: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), dict):
            _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)


def write_files(directory: Path, files: Mapping[str, str | bytes | Mapping[str, Any]]) -> Path:
    """Write ``{relative path: content}`` under ``directory`` and return it: bytes as they are,
    text dedented, data as YAML (keys in their order)."""
    directory.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        else:
            text = yaml.safe_dump(dict(content), sort_keys=False, width=1000)
            path.write_text(text, encoding="utf-8")
    return directory


def write_estate(
    directory: Path, estate: Mapping[str, Any], *, name: str = "estate.yaml", split: bool = False
) -> Path:
    """``estate`` as one file ``name`` under ``directory``, or with ``split`` one file per
    section (``masks.yaml``, ...), as a real estate is split. Returns ``directory``."""
    if split:
        return write_files(directory, {f"{s}.yaml": {s: v} for s, v in estate.items()})
    return write_files(directory, {name: estate})


# --------------------------------------------------------------------------------------------
# the base estates

MINIMAL = """\
version: 1
platforms:
  snowflake: {governance_schema: GOV.POL}
  databricks: {governance_schema: gov.pol}
principals:
  analyst: {snowflake: ANALYST, databricks: analysts}
  auditor: {snowflake: AUDITOR, databricks: auditors}
entitlements:
  region:
    EU: [analyst]
    US: [auditor]
masks:
  email:
    strategy: redact
    unmasked_for: [auditor]
datasets:
  customers:
    platform: snowflake
    table: SALES.CRM.CUSTOMERS
    row_filter: {entitlement: region, column: REGION}
    columns:
      EMAIL: {type: VARCHAR, mask: email}
personas:
  analyst: [analyst]
  auditor: [auditor, analyst]
"""

MINIMAL_DATA: Estate = yaml.safe_load(MINIMAL)

#: the two platforms every two-platform base estate starts from
BOTH_PLATFORMS: Estate = {
    "version": 1,
    "platforms": {
        "snowflake": {"governance_schema": "GOV.POL"},
        "databricks": {"governance_schema": "gov.pol"},
    },
}

_LINT_SURFACES: Estate = {
    "sf_agent": {"platform": "snowflake", "reads": ["customers"], "identity": "caller"},
    "dbx_agent": {
        "platform": "databricks",
        "reads": ["customers_lake", "countries"],
        "identity": "caller",
        "runtime": "15.4",
    },
}

LINT_BASE: Estate = edited(
    MINIMAL_DATA,
    {
        "entitlements": {"region": {"EU": ["analyst", "auditor"]}},
        "masks": {
            "subject": {
                "strategy": "hash",
                "unmasked_for": ["auditor"],
                "salt": {"snowflake": "env:SUBJECT_SALT_SF", "databricks": "env:SUBJECT_SALT_DBX"},
            }
        },
        "datasets": {
            "customers": {
                "columns": {
                    "SUBJECT_ID": {"type": "VARCHAR", "mask": "subject", "identifier": "subject"}
                }
            },
            "customers_lake": {
                "platform": "databricks",
                "table": "sales.crm.customers",
                "replica_of": "customers",
                "row_filter": {"entitlement": "region", "column": "region"},
                "columns": {
                    "email": {"type": "STRING", "mask": "email"},
                    "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
                },
            },
            "countries": {
                "platform": "databricks",
                "table": "ref.geo.countries",
                "columns": {"name": {"type": "STRING"}},
            },
        },
    },
    # the sections in the order a person writes them: surfaces before personas
    lambda e: e.update(surfaces=copy.deepcopy(_LINT_SURFACES), personas=e.pop("personas")),
)

PLAN_BASE: Estate = edited(
    BOTH_PLATFORMS,
    {
        "principals": {
            "analyst": {"snowflake": "ANALYST", "databricks": "analysts"},
            "steward": {"snowflake": "STEWARD", "databricks": "stewards"},
        },
        "entitlements": {"programme": {"P1": ["analyst"], "P2": ["analyst", "steward"]}},
        "masks": {
            "subject": {"strategy": "hash", "unmasked_for": ["steward"]},
            "notes": {"strategy": "redact", "unmasked_for": ["steward"]},
        },
        "datasets": {
            "wh": {
                "platform": "snowflake",
                "table": "DB.S.T",
                "row_filter": {"entitlement": "programme", "column": "PROGRAMME"},
                "columns": {
                    "PROGRAMME": {"type": "VARCHAR"},
                    "SUBJECT_ID": {"type": "VARCHAR", "mask": "subject", "identifier": "subject"},
                    "NOTES": {"type": "VARCHAR", "mask": "notes"},
                },
            },
            "lake": {
                "platform": "databricks",
                "table": "cat.s.t",
                "row_filter": {"entitlement": "programme", "column": "programme"},
                "columns": {
                    "programme": {"type": "STRING"},
                    "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
                    "notes": {"type": "STRING", "mask": "notes"},
                },
            },
        },
    },
)

#: a salt for PLAN_BASE's ``subject`` mask
PLAN_SALTS = {"snowflake": "env:SUBJECT_SALT_SF", "databricks": "env:SUBJECT_SALT_DBX"}

DIFF_BASE: Estate = edited(
    BOTH_PLATFORMS,
    {
        "principals": {
            "chemist": {"snowflake": "CHEMIST", "databricks": "chemists"},
            "clinician": {"snowflake": "CLINICIAN", "databricks": "clinicians"},
            "steward": {"snowflake": "STEWARD", "databricks": "stewards"},
        },
        "entitlements": {"programme": {"P1": ["chemist", "clinician"], "P2": ["clinician"]}},
        "masks": {
            "subject": {
                "strategy": "hash",
                "unmasked_for": ["clinician"],
                "salt": {"snowflake": "env:S_SF", "databricks": "env:S_DBX"},
            },
            "notes": {"strategy": "redact", "unmasked_for": ["clinician"]},
            "phone": {"strategy": "partial", "keep_last": 4},
        },
        "datasets": {
            "results": {
                "platform": "snowflake",
                "table": "DB.S.RESULTS",
                "row_filter": {
                    "entitlement": "programme",
                    "column": "PROGRAMME",
                    "unfiltered_for": ["steward"],
                },
                "columns": {
                    "SUBJECT_ID": {"type": "VARCHAR", "mask": "subject", "identifier": "subject"},
                    "NOTES": {"type": "VARCHAR", "mask": "notes"},
                    "PHONE": {"type": "VARCHAR", "mask": "phone"},
                },
            },
            "results_lake": {
                "platform": "databricks",
                "table": "cat.s.results",
                "replica_of": "results",
                "row_filter": {
                    "entitlement": "programme",
                    "column": "programme",
                    "unfiltered_for": ["steward"],
                },
                "columns": {
                    "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
                    "notes": {"type": "STRING", "mask": "notes"},
                    "phone": {"type": "STRING", "mask": "phone"},
                },
            },
        },
        "surfaces": {
            "wh_agent": {"platform": "snowflake", "reads": ["results"], "identity": "caller"},
            "lake_agent": {
                "platform": "databricks",
                "reads": ["results_lake"],
                "identity": "caller",
                "runtime": "15.4",
            },
        },
        "personas": {"chemist": ["chemist"], "clinician": ["clinician"], "steward": ["steward"]},
    },
)


def teams(n: int) -> dict[str, dict[str, str]]:
    """``n`` principals team_01.. with a Databricks group and a Snowflake role each."""
    return {
        f"team_{i:02d}": {"databricks": f"team-{i:02d}", "snowflake": f"TEAM_{i:02d}"}
        for i in range(1, n + 1)
    }


DATABRICKS_BASE: Estate = {
    "version": 1,
    "platforms": {"databricks": {"governance_schema": "gov.policies", "style": "abac"}},
    "principals": teams(3),
    "entitlements": {"programme": {"P1": ["team_01"], "P2": ["team_02"]}},
    "masks": {"redacted": {"strategy": "redact", "unmasked_for": ["team_03"]}},
    "datasets": {},
}


def databricks_estate(style: str = "abac", **sections: Any) -> Estate:
    """DATABRICKS_BASE in ``style``; ``sections`` replace or add top-level sections."""
    return edited(
        DATABRICKS_BASE,
        {"platforms": {"databricks": {"style": style}}},
        lambda e: e.update(sections),
    )
