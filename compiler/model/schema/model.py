"""The whole policy project: every section, all files merged (:class:`PolicyModel`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_serializer

from accord.compiler.core.platforms import PLATFORMS, CatalogPlatform
from accord.compiler.model.schema.base import Name, Strict
from accord.compiler.model.schema.datasets import Dataset
from accord.compiler.model.schema.entitlements import EntitlementValue, GrantEntry
from accord.compiler.model.schema.indexes import Index
from accord.compiler.model.schema.masks import Mask
from accord.compiler.model.schema.platforms import DatabricksPlatform, Platforms, SnowflakePlatform
from accord.compiler.model.schema.principals import Principal
from accord.compiler.model.schema.probes import Probe
from accord.compiler.model.schema.surfaces import Mesh, Surface
from accord.compiler.model.schema.unmanaged import Unmanaged


class PolicyModel(Strict):
    """A whole policy project, all files merged.

    A policy project is a directory (default `policies/`): every `*.yaml` / `*.yml` file
    under it, recursively, is read and merged into one model. Each top-level section is a
    mapping; the same entry (for example `masks.subject_pseudonym`) defined in two files is
    an error naming both places. Unknown keys are errors ("did you mean ...?"). Every error
    and every finding carries the `file:line:column` of the YAML node it is about. References
    that do not resolve (an undeclared principal, mask, dataset or entitlement) are
    validation errors: the command exits 2 and names the place."""

    version: Literal[1] = Field(
        description="required in at least one file; any other value is an error"
    )
    platforms: Platforms = Field(
        default_factory=Platforms,
        description="which catalogs exist and how policies are written there",
    )
    principals: dict[Name, Principal] = Field(
        default_factory=dict,
        description="entitlement principals and their identity on each platform",
    )
    entitlements: dict[Name, dict[EntitlementValue, list[GrantEntry]]] = Field(
        default_factory=dict,
        description="dimension -> value -> the principals granted it: a name (standing) or "
        "{principal: NAME, until: YYYY-MM-DD} (through that date)",
    )
    masks: dict[Name, Mask] = Field(default_factory=dict, description="column masks")
    datasets: dict[Name, Dataset] = Field(default_factory=dict, description="governed tables")
    indexes: dict[Name, Index] = Field(
        default_factory=dict, description="retrieval indexes built over datasets"
    )
    surfaces: dict[Name, Surface] = Field(
        default_factory=dict,
        description="what answers questions: agents, pipelines, MCP servers",
    )
    personas: dict[Name, Annotated[list[Name], Field(min_length=1)]] = Field(
        default_factory=dict,
        description="who asks: principals held, the first the primary (Snowflake) role",
    )
    probes: dict[Name, Probe] = Field(
        default_factory=dict,
        description="expected dispositions per persona and surface (optional)",
    )
    mesh: Mesh | None = Field(None, description='the agent mesh: {a2a_version: "1.0"}')
    unmanaged: dict[Name, Unmanaged] = Field(
        default_factory=dict,
        description="what a platform holds that the model does not express, kept verbatim",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # a model without ``mesh`` (or ``unmanaged``) dumps, and so fingerprints, as it did
        # before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.mesh is None:
            data.pop("mesh", None)
        if isinstance(data, dict) and not self.unmanaged:
            data.pop("unmanaged", None)
        return data

    # ---- convenience used throughout the compiler -------------------------------------------

    def platform_config(self, platform: str) -> SnowflakePlatform | DatabricksPlatform | None:
        return getattr(self.platforms, platform, None) if platform in PLATFORMS else None

    def declared_platforms(self) -> list[CatalogPlatform]:
        return [p for p in PLATFORMS if self.platform_config(p) is not None]

    def replica_root(self, dataset: str) -> str:
        seen = set()
        while (parent := self.datasets[dataset].replica_of) is not None and dataset not in seen:
            seen.add(dataset)
            dataset = parent
        return dataset

    def replica_group(self, dataset: str) -> list[str]:
        root = self.replica_root(dataset)
        return sorted(d for d in self.datasets if self.replica_root(d) == root)
