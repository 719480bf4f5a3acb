"""Plain catalog objects: what the model lowers to on each platform.

Lower once, then everything reads the same objects: SQL rendering, Terraform, migration
diffs, drift detection and verification all start from a :class:`Catalog`. Policy bodies are
sqlglot expressions in the platform's dialect; names are fully qualified, unquoted dotted
strings (quoting happens when rendering, through sqlglot). Each object carries ``source``, the
model path that made it (provenance: never compared, fingerprinted or rendered); what a kind
is, apart from its fields, is its row in :mod:`targets.kinds`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from sqlglot import exp

Platform = Literal["snowflake", "databricks"]


@dataclass(frozen=True)
class Param:
    name: str
    type: str


@dataclass(frozen=True)
class MappingTable:
    """One entitlement dimension's grants: (value, principal identity) rows; with an
    ``expiry_column`` (a dimension with a grant ``until`` a date), (value, identity, last day
    YYYY-MM-DD or None for a standing grant) rows."""

    name: str
    dimension: str
    key_column: str
    principal_column: str
    rows: tuple[tuple[str, ...], ...]
    #: the DATE column a grant holds through (inclusive); None: the table has none, as
    #: before grants could carry ``until``
    expiry_column: str | None = None
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class SaltFunction:
    """A function returning a mask's salt. Its body is the secret: it is written only when SQL
    is applied (see ``compiler.salts``), never by ``compile``, which records the reference."""

    name: str
    mask: str
    salt_ref: str
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class RowFilterPolicy:
    """A Snowflake row access policy or a Databricks row-filter function."""

    name: str
    params: tuple[Param, ...]
    body: exp.Expression
    #: the entitlement dimension it enforces, or None for a hand-written predicate (and for
    #: a filter over several dimensions: ``dimensions``)
    dimension: str | None
    comment: str
    #: a reviewer's note rendered as comment lines above the statement
    note: str = ""
    #: the dimensions of a filter over several, in parameter order (empty otherwise)
    dimensions: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class MaskPolicy:
    """A Snowflake masking policy or a Databricks mask function."""

    name: str
    params: tuple[Param, ...]
    returns: str
    body: exp.Expression
    mask: str
    strategy: str
    comment: str
    #: a reviewer's note rendered as comment lines above the statement
    note: str = ""
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class RowFilterAttachment:
    table: str
    policy: str
    columns: tuple[str, ...]
    #: the dataset that made it (bookkeeping: a dataset is identified by its table, so a
    #: renamed dataset key changes no attachment)
    dataset: str = field(compare=False)
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class MaskAttachment:
    table: str
    column: str
    policy: str
    #: the dataset that made it (bookkeeping, never compared)
    dataset: str = field(compare=False)
    using: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Tag:
    """A tag (Snowflake: a schema object) or a governed tag (Databricks: an account-level tag
    policy; ``CREATE GOVERNED TAG`` from Runtime 18.1, without IF NOT EXISTS) and its allowed
    values."""

    name: str
    allowed_values: tuple[str, ...] = ()
    #: Snowflake tag-based masking: masking policies attached to the tag, one per data type
    masking_policies: tuple[str, ...] = ()
    comment: str = ""
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class TagAssignment:
    """A tag set on a column (``column``) or on the table itself (``column`` None)."""

    table: str
    column: str | None
    tag: str
    value: str
    #: the dataset that made it (bookkeeping, never compared)
    dataset: str = field(compare=False)
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class AbacPolicy:
    """A Unity Catalog ABAC policy (CREATE POLICY). ``name`` is local to the securable."""

    name: str
    securable_type: Literal["CATALOG", "SCHEMA", "TABLE"]
    securable: str
    kind: Literal["ROW FILTER", "COLUMN MASK"]
    function: str
    #: principals (Databricks account groups, or ``account users``)
    to: tuple[str, ...]
    except_: tuple[str, ...]
    #: (condition, alias) pairs, e.g. ("has_tag_value('accord_mask', 'x')", "c")
    match_columns: tuple[tuple[str, str], ...]
    on_column: str | None
    using: tuple[str, ...]
    comment: str
    when: str | None = None
    #: the mask a COLUMN MASK policy applies, or the dimension a ROW FILTER policy enforces
    #: (None for a hand-written predicate)
    mask: str | None = None
    dimension: str | None = None
    #: the datasets whose tables the policy governs (bookkeeping, never compared)
    datasets: tuple[str, ...] = field(default=(), compare=False)
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class ProjectionPolicy:
    """A Snowflake projection policy (``AS () RETURNS PROJECTION_CONSTRAINT``): whether the
    caller may select a column it is set on (sql-reference/sql/create-projection-policy)."""

    name: str
    body: exp.Expression
    comment: str
    #: the principals who may select the column and what happens to the others (fail |
    #: nullify): bookkeeping, as the model wrote them
    allowed_for: tuple[str, ...] = ()
    enforcement: str = "fail"
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class AggregationPolicy:
    """A Snowflake aggregation policy (``AS () RETURNS AGGREGATION_CONSTRAINT``): whether the
    caller gets only aggregates, over groups of at least a size
    (sql-reference/sql/create-aggregation-policy)."""

    name: str
    body: exp.Expression
    comment: str
    #: the group size and who is exempt: bookkeeping, as the model wrote them
    min_group_size: int = 0
    unrestricted_for: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class JoinPolicy:
    """A Snowflake join policy (``AS () RETURNS JOIN_CONSTRAINT``): whether the caller must join
    the table to read it (sql-reference/sql/create-join-policy); the allowed join keys are on
    the attachment."""

    name: str
    body: exp.Expression
    comment: str
    #: who is exempt: bookkeeping, as the model wrote it
    unrestricted_for: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class ProjectionAttachment:
    """``ALTER TABLE t MODIFY COLUMN c SET PROJECTION POLICY p``."""

    table: str
    column: str
    policy: str
    #: the dataset that made it (bookkeeping, never compared)
    dataset: str = field(compare=False)
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class AggregationAttachment:
    """``ALTER TABLE t SET AGGREGATION POLICY p [ENTITY KEY (c, ...)]``."""

    table: str
    policy: str
    #: the dataset that made it (bookkeeping, never compared)
    dataset: str = field(compare=False)
    #: the ENTITY KEY the policy is set with (the model's ``aggregation`` sets none; a live
    #: attachment read with one differs from the model's, so drift reports it)
    entity_key: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class JoinAttachment:
    """``ALTER TABLE t SET JOIN POLICY p [ALLOWED JOIN KEYS (c, ...)]``."""

    table: str
    policy: str
    #: the dataset that made it (bookkeeping, never compared)
    dataset: str = field(compare=False)
    allowed_join_keys: tuple[str, ...] = ()
    #: provenance: the model path that made it (targets/kinds.py), never compared
    source: tuple[str | int, ...] = field(default=(), compare=False, repr=False)


CatalogObject = (
    MappingTable
    | SaltFunction
    | RowFilterPolicy
    | MaskPolicy
    | ProjectionPolicy
    | AggregationPolicy
    | JoinPolicy
    | RowFilterAttachment
    | MaskAttachment
    | ProjectionAttachment
    | AggregationAttachment
    | JoinAttachment
    | Tag
    | TagAssignment
    | AbacPolicy
)

T = TypeVar("T")


@dataclass(frozen=True)
class Catalog:
    """Everything accord manages on one platform, in apply order within each kind."""

    platform: Platform
    governance_schema: str
    style: str
    objects: tuple[CatalogObject, ...] = field(default_factory=tuple)
    #: who should own what accord deploys (``platforms.<p>.owner``; None: not judged)
    owner: str | None = None

    def of(self, kind: type[T]) -> list[T]:
        return [o for o in self.objects if isinstance(o, kind)]

    def __iter__(self) -> Iterator[CatalogObject]:
        return iter(self.objects)

    def get(self, kind: type[T], name: str) -> T | None:
        return next((o for o in self.of(kind) if getattr(o, "name", None) == name), None)
