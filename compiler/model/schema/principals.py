"""``principals``: entitlement principals and their identity on each platform."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_serializer

from accord.compiler.core.platforms import PLATFORMS
from accord.compiler.model.schema.base import SF_IDENT, Name, Strict, empty_list, name_check

_SF_ROLE = re.compile(rf"^{SF_IDENT}$")
_DBX_GROUP = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9 _.@+-]*$")


def _stored_role_case(value: str) -> str:
    # Snowflake stores an unquoted identifier in upper case, and IS_ROLE_IN_SESSION('<literal>')
    # needs "the same casing as how the role is stored"
    # (docs.snowflake.com/en/sql-reference/functions/is_role_in_session): a policy naming
    # 'clinical_unblinded' would deny everyone granted CLINICAL_UNBLINDED.
    if value != value.upper():
        raise ValueError(
            f"Snowflake role {value!r} is not upper case: Snowflake stores a role created "
            "unquoted in upper case and IS_ROLE_IN_SESSION compares names in the stored case, "
            f"so the policies would deny everyone granted it. Write {value.upper()!r} "
            "(a role created quoted in another case is not supported)"
        )
    return value


SnowflakeRole = Annotated[
    str, name_check(_SF_ROLE, "Snowflake role name"), AfterValidator(_stored_role_case)
]
DatabricksGroup = Annotated[
    str, name_check(_DBX_GROUP, "Databricks group name (letters, digits, space, _ . @ + -)")
]


class Principal(Strict):
    """An entitlement principal and its identity on each platform.

    ```yaml
    principals:
      clinical_unblinded:
        snowflake: CLINICAL_UNBLINDED     # a Snowflake role
        databricks: clinical-unblinded    # a Databricks account group
    ```

    A principal may lack one platform; granting it something there is finding ACC502. A
    principal whose identity every user of the platform holds (Snowflake `PUBLIC`;
    Databricks `account users` or the workspace `users` group) stands for everyone: granting
    it rows or clear values there is ACC508. Two principals with one identity on a platform
    are one identity there: giving them different grants is ACC509. A Snowflake role is
    written in upper case, as Snowflake stores a role created unquoted (`IS_ROLE_IN_SESSION`
    compares names in the stored case). `inherits` names the principals it holds through the
    platforms' hierarchy (a cycle is a validation error)."""

    snowflake: SnowflakeRole | None = Field(None, description="a Snowflake role")
    databricks: DatabricksGroup | None = Field(None, description="a Databricks account group")
    inherits: list[Name] = Field(
        default_factory=empty_list,
        description="principals this one inherits: on Snowflake their roles are granted to "
        "this role, on Databricks this group is nested in their groups. A persona holding "
        "this principal holds them too (IS_ROLE_IN_SESSION and is_account_group_member see "
        "inherited roles and indirect group membership), on each platform where both have an "
        "identity. A cycle is a validation error.",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # an empty ``inherits`` is not written: a model's dump (its fingerprint, which plans
        # record) is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and not self.inherits:
            data.pop("inherits", None)
        return data

    def identity(self, platform: str) -> str | None:
        return getattr(self, platform, None) if platform in PLATFORMS else None
