"""Platform targets: each lowers the policy model into catalog objects and renders them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compiler.core.platforms import PLATFORMS

if TYPE_CHECKING:
    from targets.base import Target

SQL_TARGETS = PLATFORMS


def get_target(platform: str) -> Target:
    if platform == "snowflake":
        from targets.snowflake import SnowflakeTarget

        return SnowflakeTarget()
    if platform == "databricks":
        from targets.databricks import DatabricksTarget

        return DatabricksTarget()
    raise KeyError(platform)
