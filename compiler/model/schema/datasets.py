"""``datasets``: governed tables, their row filters and their masked or identifier columns."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PrivateAttr,
    model_serializer,
    model_validator,
)

from accord.compiler.core.platforms import CatalogPlatform
from accord.compiler.model.schema.base import (
    IGNORE_DESCRIPTION,
    ColumnName,
    Ignore,
    Name,
    Strict,
    TableName,
    Text,
    empty_list,
)


class Projection(Strict):
    """A Snowflake projection policy on a column (sql-reference/sql/create-projection-policy):
    identities outside `allowed_for` cannot select the column (it may still appear in a WHERE
    or a JOIN). Disposition: `hidden`.

    ```yaml
    columns:
      SUBJECT_ID: {type: VARCHAR, projection: {allowed_for: [clinical_unblinded]}}
    ```"""

    allowed_for: list[Name] = Field(
        default_factory=empty_list, description="principals who may select the column"
    )
    enforcement: Literal["fail", "nullify"] = Field(
        "fail",
        description="fail (default): a query selecting the column fails; nullify: the column "
        "reads as NULL",
    )


class ColumnSpec(Strict):
    """A column of a dataset that is masked or carries an identifier; other columns may be
    left out. Columns in different datasets with the same `identifier` domain hold the same
    kind of identifier, which is what makes a deterministic mask a join key across
    platforms."""

    type: Text = Field(
        description="the column's SQL type on its platform, e.g. VARCHAR, STRING; its "
        "parameters within the platform's limits (a precision of 1 to 38 and a scale of at most "
        "the precision, and on Snowflake at most 37; a Snowflake VARCHAR or CHAR of at most "
        "134,217,728; 0 to 9 fractional-second digits)"
    )
    mask: Name | None = Field(None, description="a mask from `masks`")
    identifier: Name | None = Field(
        None, description="identifier domain: columns of one domain hold the same identifiers"
    )
    projection: Projection | None = Field(
        None,
        description="Snowflake only: a projection policy, {allowed_for: [principal, ...], "
        "enforcement: fail | nullify}",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # no ``projection`` is not written: a model's dump (its fingerprint, which plans
        # record) is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.projection is None:
            data.pop("projection", None)
        return data


class Aggregation(Strict):
    """A Snowflake aggregation policy on a dataset (sql-reference/sql/create-aggregation-policy):
    identities outside `unrestricted_for` get only aggregates over groups of at least
    `min_group_size` rows. Disposition: `aggregated`.

    ```yaml
    aggregation: {min_group_size: 10, unrestricted_for: [data_steward]}
    ```"""

    min_group_size: int = Field(
        ge=1, description="the fewest rows a group an aggregate answers may hold (at least 1)"
    )
    unrestricted_for: list[Name] = Field(
        default_factory=empty_list, description="principals who may read rows unaggregated"
    )


class JoinRule(Strict):
    """A Snowflake join policy on a dataset (sql-reference/sql/create-join-policy): identities
    outside `unrestricted_for` may read the table only joined to another one, on the listed
    keys.

    ```yaml
    join: {allowed_join_keys: [PROGRAMME_CODE], unrestricted_for: [data_steward]}
    ```"""

    allowed_join_keys: list[ColumnName] = Field(
        default_factory=empty_list,
        description="the columns a join must be on (ALLOWED JOIN KEYS); empty: any column",
    )
    unrestricted_for: list[Name] = Field(
        default_factory=empty_list, description="principals who may read the table unjoined"
    )


class DimensionFilter(Strict):
    """One entitlement dimension of a row filter over several: the rows whose ``column``
    holds a value of ``entitlement`` granted to a principal the caller holds (or every row,
    for this dimension, to the principals of ``unfiltered_for``)."""

    entitlement: Name = Field(description="dimension from `entitlements`")
    column: ColumnName = Field(description="the column holding the dimension's value")
    unfiltered_for: list[Name] = Field(
        default_factory=empty_list,
        description="principals this dimension admits every row for (the others still apply)",
    )


class RowFilter(Strict):
    """The rows a principal sees: those whose `column` holds an entitlement value it is
    granted; several dimensions (`dimensions`, or the list form: a row is visible when every
    dimension admits it); or what a hand-written predicate per platform admits (linted like
    any SQL). `unfiltered_for` is who sees every row whatever the dimensions say.

    ```yaml
    row_filter:
      entitlement: programme                   # a dimension from `entitlements`
      column: PROGRAMME_CODE
      unfiltered_for: [data_steward]           # optional: principals who see every row
    ```

    ```yaml
    row_filter:                                # several dimensions: every one must admit a row
      - {entitlement: programme, column: PROGRAMME_CODE}
      - {entitlement: region, column: REGION}
    ```

    ```yaml
    row_filter:
      expression:
        snowflake: "REGION = 'EU' OR IS_ROLE_IN_SESSION('GLOBAL_READER')"
      arguments: {REGION: VARCHAR}             # columns the predicate reads, with types
    ```"""

    entitlement: Name | None = Field(None, description="a dimension from `entitlements`")
    column: ColumnName | None = Field(None, description="the column holding the dimension's value")
    unfiltered_for: list[Name] = Field(
        default_factory=empty_list, description="principals who see every row"
    )
    dimensions: list[DimensionFilter] | None = Field(
        None,
        description="several entitlement dimensions, every one of which must admit a row "
        "(written as a row_filter list, or here with a filter-wide unfiltered_for)",
    )
    expression: dict[CatalogPlatform, Text] | None = Field(
        None, description="hand-written predicate per platform (instead of entitlement/column)"
    )
    arguments: dict[ColumnName, Text] | None = Field(
        None, description="columns the expression reads, with their types"
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # no ``dimensions`` is not written: a model's dump (its fingerprint, which plans
        # record) is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.dimensions is None:
            data.pop("dimensions", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _one_dimension(cls, data: Any) -> Any:
        # one dimension is the mapping form, whichever way it is written: it compiles exactly
        # as the mapping form always has (the filter-wide unfiltered_for joins the entry's)
        if isinstance(data, dict) and isinstance(data.get("dimensions"), list):
            entries = data["dimensions"]
            if len(entries) == 1 and isinstance(entries[0], dict):
                entry = entries[0]
                merged = {k: v for k, v in data.items() if k != "dimensions"}
                merged.update({k: v for k, v in entry.items() if k != "unfiltered_for"})
                wide = data.get("unfiltered_for") or []
                own = entry.get("unfiltered_for") or []
                if isinstance(wide, list) and isinstance(own, list):
                    merged["unfiltered_for"] = [*own, *(p for p in wide if p not in own)]
                return merged
        return data

    @model_validator(mode="after")
    def _one_form(self) -> RowFilter:
        if self.dimensions is not None:
            if (
                self.entitlement is not None
                or self.column is not None
                or self.expression is not None
                or self.arguments is not None
            ):
                raise ValueError(
                    "use either dimensions or entitlement/column (or expression), not both"
                )
            if not self.dimensions:
                raise ValueError("'dimensions' needs at least one {entitlement, column} entry")
            seen_dims: set[str] = set()
            seen_cols: set[str] = set()
            for d in self.dimensions:
                if d.entitlement in seen_dims:
                    raise ValueError(f"dimension {d.entitlement!r} is listed twice")
                if d.column.lower() in seen_cols:
                    raise ValueError(f"column {d.column} keys two dimensions")
                seen_dims.add(d.entitlement)
                seen_cols.add(d.column.lower())
            return self
        if self.expression is not None:
            if self.entitlement is not None or self.column is not None:
                raise ValueError("use either entitlement/column or expression/arguments, not both")
            if not self.arguments:
                raise ValueError("an expression row filter needs 'arguments'")
            if self.unfiltered_for:
                raise ValueError(
                    "'unfiltered_for' applies to entitlement filters; write it into the expression"
                )
        else:
            if self.entitlement is None or self.column is None:
                raise ValueError("a row filter needs 'entitlement' and 'column' (or 'expression')")
            if self.arguments is not None:
                raise ValueError("'arguments' applies to expression row filters only")
        return self


def _dropped(value: bool) -> bool:
    if value is not True:
        raise ValueError(
            "dropped: true is the only value: a table left in place is ungoverned once its "
            "dataset moves (leave 'replaces' out, and accord diff reports the widening)"
        )
    return value


class Replaces(Strict):
    """The table a dataset was moved from, which the model says is dropped: ``accord diff``
    then reports no widening for it (its rows are gone with it)."""

    table: TableName = Field(description="the table the dataset named before it was moved")
    dropped: Annotated[bool, AfterValidator(_dropped)] = Field(
        description="true: the old table is dropped (the only value)"
    )


#: the keys of one entry of a row_filter list
_DIMENSION_KEYS = frozenset({"entitlement", "column", "unfiltered_for"})


def _row_filter_form(value: Any) -> Any:
    # a row_filter list holds {entitlement, column[, unfiltered_for]} entries, one per
    # entitlement dimension: the ``dimensions`` of the mapping form (one entry is the mapping
    # form itself, and compiles exactly as it)
    if not isinstance(value, list):
        return value
    if not value:
        raise ValueError("a row_filter list needs at least one {entitlement, column} entry")
    for entry in value:
        if not isinstance(entry, dict):
            raise ValueError("each row_filter entry is a mapping {entitlement, column}")
        extra = sorted(set(entry) - _DIMENSION_KEYS)
        if extra:
            raise ValueError(
                f"a row_filter list entry takes entitlement, column and unfiltered_for, not "
                f"{', '.join(extra)} (a hand-written expression is the mapping form)"
            )
    return {"dimensions": value}


class Dataset(Strict):
    """A table in a catalog, governed when it has a `row_filter` or a masked column.

    ```yaml
    datasets:
      assay_results:
        platform: snowflake
        table: DISCOVERY.ASSAYS.RESULTS            # fully qualified, three parts
        row_filter: {entitlement: programme, column: PROGRAMME_CODE}
        columns:
          SUBJECT_ID: {type: VARCHAR, mask: subject_pseudonym, identifier: subject}
          NOTES: {type: VARCHAR, mask: free_text}
      assay_results_lake:
        platform: databricks
        table: discovery_lake.assays.results
        replica_of: assay_results                  # holds the same facts as another dataset
        row_filter: {entitlement: programme, column: programme_code}
        columns:
          subject_id: {type: STRING, mask: subject_pseudonym, identifier: subject}
    ```

    A replica inherits its source's column masks by column name."""

    platform: CatalogPlatform = Field(description="snowflake | databricks")
    table: TableName = Field(description="database.schema.table (catalog.schema.table), no quotes")
    replaces: Replaces | None = Field(
        default=None,
        description="the table this dataset was moved from, said dropped "
        "({table: OLD, dropped: true}; accord diff)",
    )
    replica_of: Name | None = Field(
        None, description="another dataset holding the same facts (its source)"
    )
    row_filter: Annotated[RowFilter | None, BeforeValidator(_row_filter_form)] = Field(
        None,
        description="the rows each principal sees: {entitlement, column[, unfiltered_for]}, a "
        "list of such entries (one per dimension: a row is visible when every dimension "
        "admits it), or a hand-written {expression, arguments}",
    )
    columns: dict[ColumnName, ColumnSpec] = Field(
        default_factory=dict, description="masked and identifier columns, by name"
    )
    aggregation: Aggregation | None = Field(
        None,
        description="Snowflake only: an aggregation policy, {min_group_size: N, "
        "unrestricted_for: [principal, ...]}",
    )
    join: JoinRule | None = Field(
        None,
        description="Snowflake only: a join policy, {allowed_join_keys: [column, ...], "
        "unrestricted_for: [principal, ...]}",
    )
    omits: list[ColumnName] = Field(
        default_factory=empty_list,
        description="replicas only: masked columns of the source this table physically lacks "
        "(checked on the live table by accord drift)",
    )
    ignore: Ignore = Field(default_factory=dict, description=IGNORE_DESCRIPTION)
    #: column -> (dataset, column) it inherits its mask from: a replica's masked source
    #: columns it does not declare (``compiler.model.replicas``); never written in YAML
    _inherited: dict[str, tuple[str, str]] = PrivateAttr(default_factory=dict)

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # an empty ``omits`` (or no ``replaces``) is not written: a model's dump (its
        # fingerprint, which plans record) is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and not self.omits:
            data.pop("omits", None)
        if isinstance(data, dict) and self.replaces is None:
            data.pop("replaces", None)
        for key in ("aggregation", "join"):
            if isinstance(data, dict) and getattr(self, key) is None:
                data.pop(key, None)
        return data

    @property
    def inherited(self) -> dict[str, tuple[str, str]]:
        """Columns this replica inherits from its source: column -> (dataset, column) where
        the mask is declared."""
        return self._inherited

    @property
    def governed(self) -> bool:
        """A row filter, a masked column, or (Snowflake) a projection, aggregation or join
        policy."""
        return (
            self.row_filter is not None
            or any(c.mask or c.projection for c in self.columns.values())
            or self.aggregation is not None
            or self.join is not None
        )

    @property
    def projected_columns(self) -> dict[str, ColumnSpec]:
        """Columns with a projection policy."""
        return {n: c for n, c in self.columns.items() if c.projection is not None}

    @property
    def filter_dimensions(self) -> list[tuple[str, str, list[str]]]:
        """(dimension, column, unfiltered_for of that dimension) of each entitlement dimension
        the row filter keys rows by, in order: one for the mapping form (its unfiltered_for
        is the filter's), none without an entitlement filter."""
        rf = self.row_filter
        if rf is None:
            return []
        if rf.dimensions is not None:
            return [(d.entitlement, d.column, d.unfiltered_for) for d in rf.dimensions]
        if rf.entitlement is not None and rf.column is not None:
            return [(rf.entitlement, rf.column, rf.unfiltered_for)]
        return []

    @property
    def masked_columns(self) -> dict[str, ColumnSpec]:
        return {n: c for n, c in self.columns.items() if c.mask}
