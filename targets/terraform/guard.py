"""Changes in a saved Terraform plan that would leave governed data unprotected.

``accord terraform plan`` reads the saved plan as ``terraform show -json`` prints it
(developer.hashicorp.com/terraform/internals/json-format: ``resource_changes[]`` with
``address``, ``type`` and ``change`` {``actions``, ``before``, ``after``, ``after_unknown``})
and refuses a plan that

* changes the masking policies of an existing ``snowflake_tag``: provider v2.x unsets the
  removed policies, then sets the added ones, without FORCE (pkg/resources/tag.go), so every
  column carrying the tag is unmasked in between;
* replaces or changes an existing ``snowflake_table_column_masking_policy_application``: the
  old application is removed before the new one is created;
* replaces or changes an existing row access attachment (``snowflake_execute`` running
  ``ADD ROW ACCESS POLICY``): its revert drops the policy before the new one is added;
* replaces or changes a projection, aggregation or join policy or attachment (a
  ``snowflake_execute`` running ``CREATE ... POLICY`` or ``SET {PROJECTION | AGGREGATION | JOIN}
  POLICY``: the provider has no resource for them): the old resource's revert runs first, and
  drops a policy Snowflake refuses to drop while attached, or unsets the table's or column's
  policy before the new one is set;
* replaces a mapping table's rows (the ``snowflake_execute`` named ``<table>__rows``) so that
  the table is emptied: destroying the old rows before creating the new ones, or (state made
  by an accord before ``create_before_destroy``) running an old revert that deletes the rows
  after the new ones are written. accord writes the rows with ``create_before_destroy`` and a
  read as revert, so its own change replaces every row in one statement.

Each of these is one statement in ``accord plan`` (``ALTER TAG ... SET MASKING POLICY ...
FORCE``, ``SET MASKING POLICY ... FORCE``, ``DROP ROW ACCESS POLICY ..., ADD ROW ACCESS
POLICY ...``).
"""

from __future__ import annotations

import re
from typing import Any

from accord.targets.terraform.document import REVERT_ROWS

ALTERNATIVE = (
    "plan this change with `accord plan` (it swaps in one statement: ALTER TAG ... SET "
    "MASKING POLICY ... FORCE, SET MASKING POLICY ... FORCE, or DROP ROW ACCESS POLICY ..., "
    "ADD ROW ACCESS POLICY ...), apply it with `accord migrate apply`, then recompile and "
    "plan Terraform again (or `terraform import` the result)"
)


#: what a ``snowflake_execute`` of a projection, aggregation or join policy or attachment runs
_CONSTRAINT = re.compile(
    r"\b(?:CREATE\s+OR\s+REPLACE\s+|SET\s+)(?:PROJECTION|AGGREGATION|JOIN)\s+POLICY\b",
    re.IGNORECASE,
)


def _changes(actions: list[str]) -> bool:
    return "update" in actions or ("delete" in actions and "create" in actions)


def _differs(change: dict[str, Any], key: str) -> bool:
    before = (change.get("before") or {}).get(key)
    after = (change.get("after") or {}).get(key)
    unknown = bool((change.get("after_unknown") or {}).get(key))
    return unknown or before != after


def unsafe_changes(plan: dict[str, Any]) -> list[str]:
    """Why each refused change is refused, one line per resource."""
    out = []
    for rc in plan.get("resource_changes") or []:
        change = rc.get("change") or {}
        actions = list(change.get("actions") or [])
        before = change.get("before")
        if before is None or not _changes(actions):
            continue  # created, deleted, read or untouched: no swap on an existing object
        address, kind = rc.get("address", "?"), rc.get("type")
        replaced = "delete" in actions
        if kind == "snowflake_tag" and _differs(change, "masking_policies"):
            out.append(
                f"{address}: the tag's masking policies change; the provider unsets the old "
                "policies before it sets the new ones, without FORCE, so every column carrying "
                "the tag is unmasked in between"
            )
        elif kind == "snowflake_table_column_masking_policy_application" and (
            replaced or _differs(change, "masking_policy")
        ):
            out.append(
                f"{address}: the column's masking policy is "
                f"{'replaced' if replaced else 'changed'}; the old application is removed "
                "before the new one is made, leaving the column unmasked in between"
            )
        elif kind == "snowflake_execute" and str(rc.get("name") or address).endswith("__rows"):
            if replaced:
                out += _rows_replacement(address, actions, before)
        elif kind == "snowflake_execute" and _CONSTRAINT.search(str(before.get("execute"))):
            out.append(
                f"{address}: a projection, aggregation or join policy (or its attachment) is "
                f"{'replaced' if replaced else 'changed'}; its revert drops the policy (refused "
                "while it is attached) or unsets the attachment before the new one is set, "
                "leaving the table or column unconstrained in between (accord plan changes it "
                "in place: ALTER ... SET BODY, SET ... FORCE)"
            )
        elif kind == "snowflake_execute" and "ROW ACCESS POLICY" in str(before.get("execute")):
            out.append(
                f"{address}: the row access attachment is "
                f"{'replaced' if replaced else 'changed'}; its revert drops the policy before "
                "the new one is added, leaving the table without a row access policy in between"
            )
    return out


def _rows_replacement(address: str, actions: list[str], before: dict[str, Any]) -> list[str]:
    """A mapping table's rows replaced: safe only when the new rows are written first and the
    old revert leaves them alone (``targets.terraform.document.REVERT_ROWS``)."""

    revert = " ".join(str(before.get("revert") or "").split())
    if actions and actions[0] == "delete":
        return [
            f"{address}: the grants are replaced by running the old rows' revert ({revert!r}) "
            "before the new rows are written: the policies read an emptied mapping table in "
            "between (write the resource with lifecycle create_before_destroy, as accord "
            "compile does)"
        ]
    if revert.upper() != REVERT_ROWS.upper():
        return [
            f"{address}: the new rows are written first, then the old resource's revert "
            f"({revert!r}) runs and empties the mapping table (state from an accord before "
            f"create_before_destroy): run `terraform state rm {address}` and plan again; the "
            "new INSERT OVERWRITE replaces every row in one statement"
        ]
    return []
