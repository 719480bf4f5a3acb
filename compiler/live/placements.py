"""What a policy the model did not put in place does beyond being there (issue 41, item 3):
drift's ACC702 says it in the same finding.

* On a mapping table, a row filter or a mask changes the grant rows every read of the table
  sees, the reader's and accord's own policies' (which read it as their owner): the grants the
  model makes may not be the ones that apply, and the rows drift compared may not be all of
  them (the read's coverage says so: ACC707).
* A Snowflake masking policy that is EXEMPT_OTHER_POLICIES = TRUE on a column one of accord's
  policies reads (the row access policy's columns, a conditional mask's USING columns) is one
  the platform refuses there unless it exempts itself from them: it exempts itself from
  accord's (sql-reference/sql/create-masking-policy).
"""

from __future__ import annotations

from accord.targets.inspect import LiveCatalog
from accord.targets.objects import (
    Catalog,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    RowFilterAttachment,
)


def placement_note(expected: Catalog, live: LiveCatalog, have: CatalogObject) -> str:
    """What ``have`` (a placement the model did not make) does beyond being there, as a
    clause beginning with ``; `` (empty when nothing more)."""
    if not isinstance(have, MaskAttachment | RowFilterAttachment):
        return ""
    mapping = {m.name.upper() for m in expected.of(MappingTable)}
    if have.table.upper() in mapping:
        return (
            f"; {have.table} is a mapping table: the policy changes the grant rows the reader "
            "and accord's policies (which read the table as their owner) see, so the grants "
            "that apply may not be the model's, and drift cannot prove its rows"
        )
    if isinstance(have, MaskAttachment) and have.policy.upper() in {p.upper() for p in live.exempt}:
        read = _read_by_policies(expected, have.table)
        if have.column.upper() in read:
            return (
                "; it is EXEMPT_OTHER_POLICIES = TRUE, on a column accord's policies read: the "
                "platform allows it there only because it exempts itself from accord's"
            )
        return "; it is EXEMPT_OTHER_POLICIES = TRUE: it exempts itself from other policies"
    return ""


def _read_by_policies(expected: Catalog, table: str) -> set[str]:
    """Upper-case columns of ``table`` the model's row filter or conditional masks read."""
    out: set[str] = set()
    for o in expected.objects:
        if getattr(o, "table", "").upper() != table.upper():
            continue
        if isinstance(o, RowFilterAttachment):
            out |= {c.upper() for c in o.columns}
        elif isinstance(o, MaskAttachment):
            out |= {c.upper() for c in o.using}
    return out
