"""Databricks Unity Catalog: SQL UDFs attached with SET ROW FILTER / SET MASK (``style:
table``), or through governed column tags and CREATE POLICY (``style: abac``).

The platform's parts, each in its own file (the same files in every platform's folder):

- ``target.py``: :class:`DatabricksTarget`, the lowering hooks and the SQL of every kind (the
  ABAC lowering is ``targets/abac.py``);
- ``migration.py``: :class:`DatabricksMigrationSQL`, what only a migration says (``DROP ROW
  FILTER``, ``DROP MASK``, ``UNSET TAGS``, ``DROP POLICY``, ``REVOKE``) and the stage checks'
  query;
- ``inspect.py``: :class:`DatabricksReader`, what is deployed read back through the SDK and
  ``information_schema``, with the group nesting (SCIM Groups) and the one pager of
  ``grants.get_effective``;
- ``survey.py``: :class:`DatabricksSurvey`, the reader asked what a scope holds without a model
  (``catalogs.list``, information_schema, ``policies.list_policies``): ``accord import``;
- ``terraform.py``: the ``databricks/databricks`` provider's resources;
- ``checks.py``: the stage checks written as data (table metadata, ABAC policies, governed
  tags and grants, read through the SDK).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from accord.compiler.core.platforms import DATABRICKS
from accord.targets.platform import Platform

if TYPE_CHECKING:
    from accord.targets.checks import MetadataCheck
    from accord.targets.databricks.inspect import DatabricksReader
    from accord.targets.databricks.survey import DatabricksSurvey
    from accord.targets.databricks.target import DatabricksTarget
    from accord.targets.databricks.terraform import DatabricksResources


class Databricks(Platform):
    facts = DATABRICKS

    def target(self) -> DatabricksTarget:
        from accord.targets.databricks.target import DatabricksTarget

        return DatabricksTarget()

    def reader(self) -> type[DatabricksReader]:
        from accord.targets.databricks.inspect import DatabricksReader

        return DatabricksReader

    def survey(self) -> type[DatabricksSurvey]:
        from accord.targets.databricks.survey import DatabricksSurvey

        return DatabricksSurvey

    def terraform(self) -> type[DatabricksResources]:
        from accord.targets.databricks.terraform import DatabricksResources

        return DatabricksResources

    def run_checks(self, executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
        from accord.targets.databricks.checks import run_checks

        return run_checks(executor, checks)


PLATFORM = Databricks()
