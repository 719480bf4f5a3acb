"""What else a Snowflake read must see to be the truth (issue 41, item 3): policies on the
mapping tables, and masking policies that exempt themselves from other policies.

* A row access policy or masking policy on a mapping table filters (or changes) the grant rows
  every read of the table sees: the reader's, and the policies' own subqueries, which read it as
  the policy owner (a mapping table "protected by a row access policy" may be referenced in
  another policy's body: docs.snowflake.com/en/user-guide/security-row-using). The references
  read (``POLICY_REFERENCES`` of every policy in the account) names them; each is kept as an
  attachment on the mapping table (drift: ACC702) and what the rows read then cannot prove is
  said (ACC707).
* ``EXEMPT_OTHER_POLICIES = TRUE`` (sql-reference/sql/create-masking-policy) lets a masking
  policy sit on a column that a row access policy or a conditional masking policy references
  (without it the platform refuses): the ``options`` column of ``SHOW MASKING POLICIES`` says
  it, a JSON object (the Snowflake Terraform provider reads ``EXEMPT_OTHER_POLICIES`` from it,
  pkg/sdk masking policies). Drift names such a console policy on a column accord's policies
  read.
"""

from __future__ import annotations

import json
from typing import Any

from accord.targets.objects import CatalogObject, MappingTable, MaskAttachment, RowFilterAttachment


def exempt_of(row: dict[str, Any]) -> bool:
    """Whether a SHOW MASKING POLICIES row's ``options`` says EXEMPT_OTHER_POLICIES = TRUE
    (an object that is not JSON, or says nothing of it: not exempt)."""
    text = str(row.get("options") or "").strip()
    if not text:
        return False
    try:
        options = json.loads(text)
    except ValueError:
        return False
    found = options.get("EXEMPT_OTHER_POLICIES") if isinstance(options, dict) else None
    return found is True or str(found).upper() == "TRUE"


def mapping_policies(reader: Any, objects: list[CatalogObject]) -> None:
    """Say what the read cannot prove of each mapping table a policy is on."""
    mapping = {m.name.upper() for m in reader.expected.of(MappingTable)}
    for o in objects:
        if isinstance(o, RowFilterAttachment | MaskAttachment) and o.table.upper() in mapping:
            reader.mapping_policy(o)
