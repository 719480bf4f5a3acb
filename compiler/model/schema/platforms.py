"""``platforms``: which catalogs exist and how policies are written there."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from accord.compiler.model.schema.base import SchemaName, Strict
from accord.compiler.model.schema.principals import DatabricksGroup, SnowflakeRole

#: what ``owner`` is for, on both platforms
_OWNER = (
    "the owner of what accord deploys here (salt functions, policies and their functions, "
    "mapping tables): drift judges every owner it reads against it (another owner of a salt "
    "is ACC705, of a policy, policy function or mapping table ACC702; a governed table owned "
    "by anyone else must be an identity the model gives everything on it), and a repair plan "
    "transfers ownership back. Without it, ownership is not judged (drift's coverage says so)"
)


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
    owner: SnowflakeRole | None = Field(None, description=f"a role: {_OWNER}")


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
    owner: DatabricksGroup | None = Field(
        None, description=f"an account group, user or service principal: {_OWNER}"
    )


class Platforms(Strict):
    """Which catalogs exist and how policies are written there.

    ```yaml
    platforms:
      snowflake:
        governance_schema: GOVERNANCE.POLICIES   # <database>.<schema>
        owner: ACCORD_DEPLOYER                   # optional: who owns what accord deploys
      databricks:
        governance_schema: governance.policies   # <catalog>.<schema>
        style: table                             # table (default) | abac
    ```

    `snowflake` and `databricks` are the two catalog platforms; either may be absent.
    Databricks `style: table` writes UDFs attached with `SET ROW FILTER` / `SET MASK`;
    `style: abac` writes governed tags and `CREATE POLICY` (attribute-based access control).
    Platform `none` is implicit: it is the platform of a surface with no catalog.

    **Ownership.** An owner of a salt function, a policy, a policy function or a mapping table
    is one more who can call, read or change it (on Databricks a table's owner can also drop
    its filter and masks). `owner` names who should own what accord deploys: drift reads every
    owner and reports another owner of a salt as ACC705, of a policy, policy function or
    mapping table as ACC702, and a governed table owned by an identity the model does not give
    everything on it as ACC702 (and in its coverage); `accord plan --base live:P` transfers
    ownership back. Without `owner`, drift says ownership was not judged."""

    snowflake: SnowflakePlatform | None = Field(None, description="the Snowflake account")
    databricks: DatabricksPlatform | None = Field(
        None, description="the Databricks Unity Catalog metastore"
    )
