"""``unmanaged``: what exists on a platform and the model does not express, kept verbatim."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from accord.compiler.core.platforms import CatalogPlatform
from accord.compiler.model.schema.base import Strict

#: the kinds of catalog object accord reads, as an unmanaged entry names them (each kind's row
#: of targets/kinds.py says its keyword: tests/test_unmanaged.py holds the two together), and
#: ``statement``: SQL that is no catalog object accord reads (a view that decides access)
UnmanagedKind = Literal[
    "mapping_table",
    "salt_function",
    "row_filter_policy",
    "masking_policy",
    "projection_policy",
    "aggregation_policy",
    "join_policy",
    "tag",
    "row_filter_attachment",
    "mask_attachment",
    "projection_attachment",
    "aggregation_attachment",
    "join_attachment",
    "tag_assignment",
    "abac_policy",
    "statement",
]


def _some_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


Some = Annotated[str, AfterValidator(_some_text)]


class Unmanaged(Strict):
    """An object a platform holds that the model does not express, kept verbatim.

    ```yaml
    unmanaged:
      console_mask_on_notes:
        platform: snowflake
        kind: masking_policy            # any kind accord reads, or `statement`
        name: GOVERNANCE.POLICIES.NOTES_MASK
        sql: "CREATE MASKING POLICY ..."  # verbatim, as read
        why: "the body hashes with a literal salt: not expressible"
    ```

    `accord import` writes one entry for each object it read and could not express in the
    model (or write by hand). `accord lint` reads its `sql` like any hand-written SQL, in the
    platform's dialect, with findings located in this file; `accord drift` and `accord plan
    --base live:P` leave the object alone and list it; `accord analyze` counts what it
    reaches as unknown, never as governed.

    `name` is what the object is known by: a definition's qualified name
    (`GOVERNANCE.POLICIES.NOTES_MASK`), a row filter, aggregation or join attachment's table,
    a mask or projection attachment's `TABLE.COLUMN`, a tag assignment's `TABLE[.COLUMN] TAG
    tag`, an ABAC policy's (row filter, column mask, GRANT or DENY) `NAME ON
    SCHEMA|CATALOG|TABLE|METASTORE securable`; a `statement` is named freely. A salt never reaches
    `sql`: `accord import` writes a salt function as a reference to fill, and a literal salt
    in a policy body as a placeholder, and says so."""

    platform: CatalogPlatform = Field(description="snowflake | databricks")
    kind: UnmanagedKind = Field(description="the kind of object (a catalog kind), or statement")
    name: Some = Field(description="the object's name as the platform knows it")
    sql: Some = Field(description="the object's SQL, verbatim as read (linted as such)")
    why: Some = Field(description="why the model does not express it")
