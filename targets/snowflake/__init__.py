"""Snowflake: row access and masking policies, IS_ROLE_IN_SESSION, ``||``; column- or
tag-attached masks.

The platform's parts, each in its own file (the same files in every platform's folder):

- ``target.py``: :class:`SnowflakeTarget`, the lowering hooks and the SQL of every kind;
- ``migration.py``: :class:`SnowflakeMigrationSQL`, what only a migration says (``SET BODY``,
  ``FORCE`` swaps, ``ALTER TAG``, ``REVOKE``) and the stage checks' queries;
- ``inspect.py``: :class:`SnowflakeReader`, what is deployed read back (``SHOW``,
  ``DESCRIBE``, ``POLICY_REFERENCES``), with the role hierarchy (``SHOW GRANTS OF ROLE``);
- ``survey.py``: :class:`SnowflakeSurvey`, the reader asked what a scope holds without a model
  (``SHOW ... IN ACCOUNT``, ``POLICY_REFERENCES``): ``accord import``;
- ``terraform.py``: the ``snowflakedb/snowflake`` provider's resources;
- ``checks.py``: the stage checks written as data (who may still call a salt function).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets.platform import Platform

if TYPE_CHECKING:
    from accord.targets.checks import MetadataCheck
    from accord.targets.snowflake.inspect import SnowflakeReader
    from accord.targets.snowflake.survey import SnowflakeSurvey
    from accord.targets.snowflake.target import SnowflakeTarget
    from accord.targets.snowflake.terraform import SnowflakeResources


class Snowflake(Platform):
    facts = SNOWFLAKE

    def target(self) -> SnowflakeTarget:
        from accord.targets.snowflake.target import SnowflakeTarget

        return SnowflakeTarget()

    def reader(self) -> type[SnowflakeReader]:
        from accord.targets.snowflake.inspect import SnowflakeReader

        return SnowflakeReader

    def survey(self) -> type[SnowflakeSurvey]:
        from accord.targets.snowflake.survey import SnowflakeSurvey

        return SnowflakeSurvey

    def terraform(self) -> type[SnowflakeResources]:
        from accord.targets.snowflake.terraform import SnowflakeResources

        return SnowflakeResources

    def run_checks(self, executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
        from accord.targets.snowflake.checks import run_checks

        return run_checks(executor, checks)


PLATFORM = Snowflake()
