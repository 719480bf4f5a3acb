"""``platforms``: which catalogs exist and how policies are written there."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from accord.compiler.model.schema.base import SchemaName, Strict


class SnowflakePlatform(Strict):
    """The Snowflake account's governance schema: row access and masking policies, mapping
    tables and salt functions are created there."""

    governance_schema: SchemaName = Field(
        description="<database>.<schema> holding policies, mapping tables and salt functions"
    )
    style: Literal["column", "tag"] = Field(
        "column",
        description="column: masks attached column by column; tag: masks attached through tags",
    )


class DatabricksPlatform(Strict):
    """The Unity Catalog schema that holds row filter and mask functions, mapping tables and
    salt functions."""

    governance_schema: SchemaName = Field(
        description="<catalog>.<schema> holding functions, mapping tables and salt functions"
    )
    style: Literal["table", "abac"] = Field(
        "table",
        description="table: UDFs attached with SET ROW FILTER / SET MASK; abac: governed tags "
        "and CREATE POLICY",
    )


class Platforms(Strict):
    """Which catalogs exist and how policies are written there.

    ```yaml
    platforms:
      snowflake:
        governance_schema: GOVERNANCE.POLICIES   # <database>.<schema>
      databricks:
        governance_schema: governance.policies   # <catalog>.<schema>
        style: table                             # table (default) | abac
    ```

    `snowflake` and `databricks` are the two catalog platforms; either may be absent.
    Databricks `style: table` writes UDFs attached with `SET ROW FILTER` / `SET MASK`;
    `style: abac` writes governed tags and `CREATE POLICY` (attribute-based access control).
    Platform `none` is implicit: it is the platform of a surface with no catalog."""

    snowflake: SnowflakePlatform | None = Field(None, description="the Snowflake account")
    databricks: DatabricksPlatform | None = Field(
        None, description="the Databricks Unity Catalog metastore"
    )
