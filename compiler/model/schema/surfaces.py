"""``surfaces``: what answers questions (agents, pipelines, MCP servers), and ``mesh``: the
agent mesh as a whole."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_serializer, model_validator

from accord.compiler.core.platforms import catalog_facts
from accord.compiler.model.schema.base import (
    IGNORE_DESCRIPTION,
    Ignore,
    Name,
    Strict,
    Text,
    empty_list,
)

_RUNTIME = re.compile(r"^(\d+)\.(\d+)(\.[0-9x]+)?([.-][A-Za-z0-9.-]+)?$")


def _runtime_text(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        # the number as written in the file (the loader keeps it): 16.10, not 16.1
        written = getattr(value, "text", None) or str(value)
        raise ValueError(
            f'write the runtime as a quoted string, e.g. "{written}": unquoted, YAML reads a '
            "number (16.10 would become 16.1)"
        )
    return value


class A2AEndpoint(Strict):
    """An agent surface's A2A endpoint (an accord extension, used by ``accord probe --live``)."""

    url: Annotated[Text, Field(pattern=r"^https?://[^\s]+$")] = Field(
        description="the agent's JSON-RPC endpoint (http or https URL)"
    )
    timeout_seconds: float = Field(30.0, gt=0, le=600, description="per request")


class SurfaceTraffic(Strict):
    """How a surface's queries are recognised in the platforms' access history (``accord
    probe sample``); every key given must match, so two keys narrow the match."""

    query_tag: Annotated[Text, Field(min_length=1, max_length=2000)] | None = Field(
        None,
        description="Snowflake: the session's QUERY_TAG, exactly; Databricks: a query tag "
        "KEY:VALUE (or KEY) among the statement's query_tags",
    )
    client: Annotated[Text, Field(min_length=1, max_length=256)] | None = Field(
        None,
        description="the client application, compared without case: Snowflake CLIENT_APPLICATION_ID "
        "(its first word) or the connection's APPLICATION; Databricks client_application",
    )
    principal: Annotated[Text, Field(min_length=1, max_length=256)] | None = Field(
        None,
        description="the user or service principal the surface's queries run as, compared "
        "without case (Snowflake USER_NAME, Databricks executed_by)",
    )

    @model_validator(mode="after")
    def _something(self) -> SurfaceTraffic:
        if self.query_tag is None and self.client is None and self.principal is None:
            raise ValueError("traffic needs at least one of query_tag, client, principal")
        return self

    def key(self) -> tuple[str, str, str]:
        """What two surfaces must not share (the same traffic would match both)."""
        return (
            self.query_tag or "",
            (self.client or "").lower(),
            (self.principal or "").lower(),
        )


class Surface(Strict):
    """What answers questions: an agent, a pipeline, an MCP or tool server.

    ```yaml
    surfaces:
      warehouse_agent:
        platform: snowflake
        reads: [assay_results]
        identity: caller                   # caller: runs as the asking user | service: one identity
      lakehouse_agent:
        platform: databricks
        reads: [variant_calls, assay_results_lake]
        runtime: "15.4"                    # Databricks Runtime version, serverless | sql-warehouse
        access_mode: standard              # standard | dedicated
      variant_annotation:
        platform: none                     # no catalog: a pipeline or tool server
        reads: [variant_calls]
        identity: service
    ```

    A surface with platform `none` or identity `service` that reads governed data is ACC402;
    a Databricks runtime too old for the policies returns no rows (ACC401)."""

    platform: Literal["snowflake", "databricks", "none"] = Field(
        description="snowflake | databricks | none (no catalog)"
    )
    reads: list[Name] = Field(default_factory=empty_list, description="datasets the surface reads")
    identity: Literal["caller", "service"] = Field(
        "caller", description="caller: runs as the asking user; service: one identity for all"
    )
    runtime: Annotated[Text, BeforeValidator(_runtime_text)] | None = Field(
        None, description='Databricks Runtime version ("15.4"), serverless or sql-warehouse'
    )
    access_mode: Literal["standard", "dedicated"] | None = Field(
        None, description="Databricks compute access mode: standard | dedicated"
    )
    a2a: A2AEndpoint | None = Field(
        None, description="A2A endpoint the probes ask as the persona (accord probe --live)"
    )
    traffic: SurfaceTraffic | None = Field(
        None,
        description="how the surface is recognised in the access history (accord probe sample)",
    )
    ignore: Ignore = Field(default_factory=dict, description=IGNORE_DESCRIPTION)

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # no ``traffic`` is not written: a model's dump (its fingerprint, which plans and
        # probe results record) is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.traffic is None:
            data.pop("traffic", None)
        return data

    @model_validator(mode="after")
    def _runtime_form(self) -> Surface:
        if self.runtime is not None:
            if not _versioned(self.platform):
                raise ValueError("'runtime' applies to Databricks surfaces only")
            if self.runtime not in ("serverless", "sql-warehouse") and not _RUNTIME.match(
                self.runtime
            ):
                raise ValueError(
                    f'runtime {self.runtime!r} is not a version like "15.4", serverless or '
                    "sql-warehouse"
                )
        if self.access_mode is not None and not _versioned(self.platform):
            raise ValueError("'access_mode' applies to Databricks surfaces only")
        return self

    @property
    def runtime_version(self) -> tuple[int, int] | None:
        """(major, minor) of a numbered runtime; None for serverless, sql-warehouse or unset."""
        if self.runtime is None:
            return None
        m = _RUNTIME.match(self.runtime)
        return (int(m.group(1)), int(m.group(2))) if m else None


class Mesh(Strict):
    """The agent mesh as a whole (an accord extension, read by ``accord manifest``)."""

    a2a_version: Literal["0.3", "1.0"] = Field(
        description="the A2A protocol version the mesh negotiates (MAJOR.MINOR, quoted)"
    )


def _versioned(platform: str) -> bool:
    """Whether surfaces of ``platform`` run on versioned runtimes (a runtime and an access
    mode say something there)."""
    found = catalog_facts(platform)
    return found is not None and found.versioned_runtimes
