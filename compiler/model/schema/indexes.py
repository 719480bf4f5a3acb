"""``indexes``: retrieval indexes built over datasets."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from accord.compiler.core.platforms import CatalogPlatform
from accord.compiler.model.schema.base import (
    IGNORE_DESCRIPTION,
    ColumnName,
    Ignore,
    Name,
    Strict,
    empty_list,
)


class Index(Strict):
    """A retrieval index built over a dataset.

    ```yaml
    indexes:
      assay_search:
        platform: snowflake
        kind: cortex_search                # cortex_search | vector_search
        source: assay_results
        columns: [NOTES, SUBJECT_ID]       # columns the index holds
        inherit_governance: false          # Snowflake INHERIT_DATA_GOVERNANCE_POLICIES
    ```

    Cortex Search answers with its owner's rights unless `inherit_governance` is true; a
    Databricks vector index over governed data enforces nothing or cannot be built (ACC301)."""

    platform: CatalogPlatform = Field(description="snowflake | databricks")
    kind: Literal["cortex_search", "vector_search"] = Field(
        description="cortex_search | vector_search"
    )
    source: Name = Field(description="the dataset the index is built from")
    columns: list[ColumnName] = Field(
        default_factory=empty_list, description="columns the index holds"
    )
    inherit_governance: bool = Field(
        False, description="Snowflake INHERIT_DATA_GOVERNANCE_POLICIES: the source's policies apply"
    )
    ignore: Ignore = Field(default_factory=dict, description=IGNORE_DESCRIPTION)
