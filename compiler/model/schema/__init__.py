"""The policy model: pydantic classes for every section of the policy format, one module per
section as docs/policy-format.md orders them.

* :mod:`~compiler.model.schema.base`: the base class (:class:`Strict`), names, texts,
  ``ignore:``;
* :mod:`~compiler.model.schema.platforms`, :mod:`~compiler.model.schema.principals`,
  :mod:`~compiler.model.schema.entitlements`, :mod:`~compiler.model.schema.masks`,
  :mod:`~compiler.model.schema.datasets`, :mod:`~compiler.model.schema.indexes`,
  :mod:`~compiler.model.schema.surfaces` (with ``mesh``), :mod:`~compiler.model.schema.probes`,
  :mod:`~compiler.model.schema.unmanaged`: one section each (``personas`` is a plain mapping of :class:`PolicyModel`);
* :mod:`~compiler.model.schema.model`: :class:`PolicyModel`, the whole project.

These classes check the shape of each entry (keys, types, identifier syntax, per-strategy
options). References between entries (a mask naming a principal, a dataset naming a mask)
are resolved by :mod:`compiler.model.validate`, which also turns pydantic's errors into located
``file:line:column`` messages. The JSON Schema printed by ``accord schema`` is generated from
these classes, and so is ``docs/policy-format.md`` (``make docs``): each section's class
docstring is its page, each field's ``description`` its line in the key table.

Every class is imported from here (``from accord.compiler.model.schema import PolicyModel``);
the section modules are where they are written.
"""

from accord.compiler.core.platforms import PLATFORMS, CatalogPlatform
from accord.compiler.model.schema.base import (
    ColumnName,
    Ignore,
    Name,
    RuleId,
    SchemaName,
    Strict,
    TableName,
    Text,
)
from accord.compiler.model.schema.datasets import (
    Aggregation,
    ColumnSpec,
    Dataset,
    DimensionFilter,
    JoinRule,
    Projection,
    Replaces,
    RowFilter,
)
from accord.compiler.model.schema.entitlements import (
    Day,
    EntitlementValue,
    Grant,
    GrantEntry,
)
from accord.compiler.model.schema.indexes import Index
from accord.compiler.model.schema.masks import Mask, SaltRef, Strategy
from accord.compiler.model.schema.model import PolicyModel
from accord.compiler.model.schema.platforms import (
    DatabricksPlatform,
    Platforms,
    SnowflakePlatform,
)
from accord.compiler.model.schema.principals import (
    DatabricksGroup,
    Principal,
    SnowflakeRole,
)
from accord.compiler.model.schema.probes import (
    Probe,
    ProbeControl,
    ProbeDisposition,
)
from accord.compiler.model.schema.surfaces import (
    A2AEndpoint,
    Mesh,
    Surface,
    SurfaceTraffic,
)
from accord.compiler.model.schema.unmanaged import Unmanaged, UnmanagedKind

__all__ = [
    "PLATFORMS",
    "A2AEndpoint",
    "Aggregation",
    "CatalogPlatform",
    "ColumnName",
    "ColumnSpec",
    "DatabricksGroup",
    "DatabricksPlatform",
    "Dataset",
    "Day",
    "DimensionFilter",
    "EntitlementValue",
    "Grant",
    "GrantEntry",
    "Ignore",
    "Index",
    "JoinRule",
    "Mask",
    "Mesh",
    "Name",
    "Platforms",
    "PolicyModel",
    "Principal",
    "Probe",
    "ProbeControl",
    "ProbeDisposition",
    "Projection",
    "Replaces",
    "RowFilter",
    "RuleId",
    "SaltRef",
    "SchemaName",
    "SnowflakePlatform",
    "SnowflakeRole",
    "Strategy",
    "Strict",
    "Surface",
    "SurfaceTraffic",
    "TableName",
    "Text",
    "Unmanaged",
    "UnmanagedKind",
]
