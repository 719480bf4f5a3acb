"""The policy model: pydantic classes for every section of the policy format.

These classes check the shape of each entry (keys, types, identifier syntax, per-strategy
options). References between entries (a mask naming a principal, a dataset naming a mask)
are resolved by :mod:`compiler.model.validate`, which also turns pydantic's errors into located
``file:line:column`` messages. The JSON Schema printed by ``accord schema`` is generated from
these classes, and so is ``docs/policy-format.md`` (``make docs``): each section's class
docstring is its page, each field's ``description`` its line in the key table.
"""

from __future__ import annotations

import re
import sys
import types
from datetime import date
from datetime import datetime as datetime_type
from typing import Annotated, Any, Literal

from accord.compiler.core.platforms import PLATFORMS, CatalogPlatform
from accord.compiler.core.today import parse_day
from accord.compiler.model.names import COLUMN_NAME, checker, no_control
from accord.compiler.model.rules import is_known_rule
from accord.compiler.model.salts import salt_ref_problem


def _without_pydantic_plugins() -> None:
    """Build the model's classes with no pydantic plugin. pydantic looks its plugins up (the
    ``pydantic`` entry points of every installed distribution, through ``importlib.metadata``,
    which imports ``email`` and ``socket``) when the first class is built: a tenth of a cold
    ``accord lint``. accord's validation is never extended by whatever else is installed, so
    the lookup is answered before it is made: ``pydantic.plugin._schema_validator`` imports
    ``get_plugins`` from this module when it builds a validator, and no plugin is the answer
    pydantic gives with ``PYDANTIC_DISABLE_PLUGINS=__all__`` (``tests/test_model_plugins.py``
    checks that pydantic still asks only that, and that a class built here has no plugin)."""
    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        loader = types.ModuleType(name, "accord: no pydantic plugins (compiler/model/schema.py)")
        loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules[name] = loader


_without_pydantic_plugins()

from pydantic import (  # noqa: E402
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    PrivateAttr,
    Tag,
    model_serializer,
    model_validator,
)

# --------------------------------------------------------------------------------------------
# identifier syntax

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SF_IDENT = r"[A-Za-z_][A-Za-z0-9_$]*"
_TABLE = re.compile(rf"^{_SF_IDENT}\.{_SF_IDENT}\.{_SF_IDENT}$")
_SCHEMA = re.compile(rf"^{_SF_IDENT}\.{_SF_IDENT}$")
_SF_ROLE = re.compile(rf"^{_SF_IDENT}$")
_DBX_GROUP = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9 _.@+-]*$")
_RULE = re.compile(r"^ACC\d{3}$")
_RUNTIME = re.compile(r"^(\d+)\.(\d+)(\.[0-9x]+)?([.-][A-Za-z0-9.-]+)?$")


def _checker(pattern: re.Pattern[str], what: str) -> Any:
    # the check itself is pydantic-free (compiler/model/names.py): an incremental lint checks
    # a plain column's name with it without importing this module
    return AfterValidator(checker(pattern, what))


Text = Annotated[str, AfterValidator(no_control)]


Name = Annotated[str, _checker(_NAME, "name (lower_snake_case: a-z, 0-9, _)")]
TableName = Annotated[
    str, _checker(_TABLE, "table name (three parts, database.schema.table, no quotes)")
]
SchemaName = Annotated[str, _checker(_SCHEMA, "schema name (two parts, database.schema)")]
ColumnName = Annotated[str, AfterValidator(COLUMN_NAME)]


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
    str, _checker(_SF_ROLE, "Snowflake role name"), AfterValidator(_stored_role_case)
]
DatabricksGroup = Annotated[
    str, _checker(_DBX_GROUP, "Databricks group name (letters, digits, space, _ . @ + -)")
]


def _salt_ref(value: str) -> str:
    # the grammar is the one placeholders are rendered and read back with (compiler/model/salts.py):
    # no quote, brace, semicolon, space or line break can reach compiled SQL through it
    problem = salt_ref_problem(value)
    if problem:
        raise ValueError(problem)
    return value


SaltRef = Annotated[str, AfterValidator(_salt_ref)]


def _reason(value: str) -> str:
    if not value.strip():
        raise ValueError("a suppression needs a non-empty reason")
    return value


def _check_rule_id(value: str) -> str:
    if not _RULE.match(value) or not is_known_rule(value):
        raise ValueError(f"unknown rule id {value!r}")
    return value


RuleId = Annotated[str, AfterValidator(_check_rule_id)]
Ignore = dict[RuleId, Annotated[str, AfterValidator(_reason)]]


def _code(value: Any) -> Any:
    # entitlement values are codes: a YAML integer key such as 2024 is the code "2024"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


EntitlementValue = Annotated[Text, BeforeValidator(_code), Field(min_length=1, max_length=256)]


#: the description of every ``ignore`` key
_IGNORE = "suppressed findings: rule id -> the reason (required, non-empty)"


def _empty_list() -> list[Any]:
    """A new empty list: the default factory of the list fields. pydantic reads a default
    factory's signature when it builds the class, and ``list``'s (a builtin's text signature)
    is parsed through ``ast`` and ``tokenize``, whose first use compiles tokenize's regular
    expressions (~14 ms of a cold start for 7 fields); a Python function's is read directly."""
    return []


class Strict(BaseModel):
    # ``defer_build``: a class's validator is built when it is first used, not at import.
    # ``PolicyModel``'s validator inlines every section's schema, so a lint builds only that
    # one; a section class used on its own (``Probe(...)``) builds its own validator then.
    # ``tests/test_schema.py`` checks that the two builds give each class the same schema.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


def _day(value: Any) -> Any:
    # a day is written YYYY-MM-DD (the loader keeps an unquoted 2027-03-31 as its text); a
    # datetime, a number or any other spelling is refused rather than guessed at
    if isinstance(value, date) and not isinstance(value, datetime_type):
        return value
    day = parse_day(value) if isinstance(value, str) else None
    if day is None:
        raise ValueError(f"{value!r} is not a date written YYYY-MM-DD")
    return day


Day = Annotated[
    date,
    BeforeValidator(_day),
    PlainSerializer(lambda d: d.isoformat(), return_type=str),
]


class Grant(Strict):
    """A time-bound grant of an entitlement value: the principal holds the value through
    ``until`` (inclusive) and not after. The compiled policies enforce it: the mapping table
    carries the date in an expiry column and a row is admitted only while ``CURRENT_DATE()``
    is on or before it. ``accord lint`` warns once the date has passed (ACC507
    ``expired-grant``)."""

    principal: Name = Field(description="the principal granted the value")
    until: Day = Field(
        description="the last day the grant holds (YYYY-MM-DD, inclusive; the platform "
        "session's CURRENT_DATE() decides)"
    )


def _grant_kind(value: Any) -> str:
    return "grant" if isinstance(value, dict | Grant) else "name"


#: one entry of an entitlement value's grant list: a principal's name (a standing grant) or
#: ``{principal: NAME, until: YYYY-MM-DD}`` (a grant that holds through that date)
GrantEntry = Annotated[
    Annotated[Name, Tag("name")] | Annotated[Grant, Tag("grant")],
    Discriminator(_grant_kind),
]


# --------------------------------------------------------------------------------------------
# sections


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


class Platforms(Strict):
    """Which catalogs exist and how policies are written there.

    ```yaml
    platforms:
      snowflake:
        governance_schema: GOVERNANCE.POLICIES   # <database>.<schema>
      databricks:
        governance_schema: governance.policies   # <catalog>.<schema>
        style: table                             # table (default) | abac
    ```

    `snowflake` and `databricks` are the two catalog platforms; either may be absent.
    Databricks `style: table` writes UDFs attached with `SET ROW FILTER` / `SET MASK`;
    `style: abac` writes governed tags and `CREATE POLICY` (attribute-based access control).
    Platform `none` is implicit: it is the platform of a surface with no catalog."""

    snowflake: SnowflakePlatform | None = Field(None, description="the Snowflake account")
    databricks: DatabricksPlatform | None = Field(
        None, description="the Databricks Unity Catalog metastore"
    )


class Principal(Strict):
    """An entitlement principal and its identity on each platform.

    ```yaml
    principals:
      clinical_unblinded:
        snowflake: CLINICAL_UNBLINDED     # a Snowflake role
        databricks: clinical-unblinded    # a Databricks account group
    ```

    A principal may lack one platform; granting it something there is finding ACC502. A
    Snowflake role is written in upper case, as Snowflake stores a role created unquoted
    (`IS_ROLE_IN_SESSION` compares names in the stored case). `inherits` names the principals
    it holds through the platforms' hierarchy (a cycle is a validation error)."""

    snowflake: SnowflakeRole | None = Field(None, description="a Snowflake role")
    databricks: DatabricksGroup | None = Field(None, description="a Databricks account group")
    inherits: list[Name] = Field(
        default_factory=_empty_list,
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


Strategy = Literal["hash", "redact", "nullify", "partial"]


class Mask(Strict):
    """A column mask.

    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash                   # hash | redact | nullify | partial
        unmasked_for: [clinical_unblinded]
        salt:                            # hash only: one secret reference per platform
          snowflake: env:SUBJECT_SALT_SNOWFLAKE
          databricks: env:SUBJECT_SALT_DATABRICKS
      free_text:
        strategy: redact
        replacement: "[redacted]"        # redact only; default '***'
        unmasked_for: [clinical_unblinded]
      phone:
        strategy: partial
        keep_last: 4                     # partial only
    ```

    - `hash`: deterministic SHA-256 of the value concatenated with the platform's salt, as a
      lower-case hex string; NULL stays NULL.
    - `redact`: the replacement string. `nullify`: NULL. `partial`: every character but the
      last `keep_last` replaced by `*`.
    - `hash`, `redact` and `partial` apply to string columns only; `nullify` to any type.
    - A salt reference is `env:NAME` (read from the environment when SQL is applied) or
      `file:PATH`. The salt value itself never appears in any file accord writes. Each
      platform needs its own salt (ACC202), or masked identifiers join across platforms.
    - `unmasked_for`: principals who see the clear value; everyone else sees the mask."""

    strategy: Strategy = Field(description="hash | redact | nullify | partial")
    unmasked_for: list[Name] = Field(
        default_factory=_empty_list, description="principals who see the clear value"
    )
    salt: dict[CatalogPlatform, SaltRef] | None = Field(
        None, description="hash only: one secret reference per platform"
    )
    replacement: Text | None = Field(None, description="redact only; default '***'")
    keep_last: int | None = Field(None, ge=0, le=1000, description="partial only")
    ignore: Ignore = Field(default_factory=dict, description=_IGNORE)

    @model_validator(mode="after")
    def _options_fit_strategy(self) -> Mask:
        if self.salt is not None and self.strategy != "hash":
            raise ValueError(f"'salt' applies to strategy hash only, not {self.strategy}")
        if self.replacement is not None and self.strategy != "redact":
            raise ValueError(f"'replacement' applies to strategy redact only, not {self.strategy}")
        if self.keep_last is not None and self.strategy != "partial":
            raise ValueError(f"'keep_last' applies to strategy partial only, not {self.strategy}")
        if self.strategy == "partial" and self.keep_last is None:
            raise ValueError("strategy partial needs 'keep_last'")
        return self

    @property
    def redaction(self) -> str:
        return "***" if self.replacement is None else self.replacement


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


class DimensionFilter(Strict):
    """One entitlement dimension of a row filter over several: the rows whose ``column``
    holds a value of ``entitlement`` granted to a principal the caller holds (or every row,
    for this dimension, to the principals of ``unfiltered_for``)."""

    entitlement: Name = Field(description="dimension from `entitlements`")
    column: ColumnName = Field(description="the column holding the dimension's value")
    unfiltered_for: list[Name] = Field(
        default_factory=_empty_list,
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
        default_factory=_empty_list, description="principals who see every row"
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
    omits: list[ColumnName] = Field(
        default_factory=_empty_list,
        description="replicas only: masked columns of the source this table physically lacks "
        "(checked on the live table by accord drift)",
    )
    ignore: Ignore = Field(default_factory=dict, description=_IGNORE)
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
        return data

    @property
    def inherited(self) -> dict[str, tuple[str, str]]:
        """Columns this replica inherits from its source: column -> (dataset, column) where
        the mask is declared."""
        return self._inherited

    @property
    def governed(self) -> bool:
        return self.row_filter is not None or any(c.mask for c in self.columns.values())

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


class Index(Strict):
    """A retrieval index built over a dataset.

    ```yaml
    indexes:
      assay_search:
        platform: snowflake
        kind: cortex_search                # cortex_search | vector_search
        source: assay_results
        columns: [NOTES, SUBJECT_ID]       # columns the index holds
        inherit_governance: false          # Snowflake INHERIT_DATA_GOVERNANCE_POLICIES
    ```

    Cortex Search answers with its owner's rights unless `inherit_governance` is true; a
    Databricks vector index over governed data enforces nothing or cannot be built (ACC301)."""

    platform: CatalogPlatform = Field(description="snowflake | databricks")
    kind: Literal["cortex_search", "vector_search"] = Field(
        description="cortex_search | vector_search"
    )
    source: Name = Field(description="the dataset the index is built from")
    columns: list[ColumnName] = Field(
        default_factory=_empty_list, description="columns the index holds"
    )
    inherit_governance: bool = Field(
        False, description="Snowflake INHERIT_DATA_GOVERNANCE_POLICIES: the source's policies apply"
    )
    ignore: Ignore = Field(default_factory=dict, description=_IGNORE)


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
    reads: list[Name] = Field(default_factory=_empty_list, description="datasets the surface reads")
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
    ignore: Ignore = Field(default_factory=dict, description=_IGNORE)

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
            if self.platform != "databricks":
                raise ValueError("'runtime' applies to Databricks surfaces only")
            if self.runtime not in ("serverless", "sql-warehouse") and not _RUNTIME.match(
                self.runtime
            ):
                raise ValueError(
                    f'runtime {self.runtime!r} is not a version like "15.4", serverless or '
                    "sql-warehouse"
                )
        if self.access_mode is not None and self.platform != "databricks":
            raise ValueError("'access_mode' applies to Databricks surfaces only")
        return self

    @property
    def runtime_version(self) -> tuple[int, int] | None:
        """(major, minor) of a numbered runtime; None for serverless, sql-warehouse or unset."""
        if self.runtime is None:
            return None
        m = _RUNTIME.match(self.runtime)
        return (int(m.group(1)), int(m.group(2))) if m else None


#: what a surface answers of a probe's fact: the dispositions of ``accord analyze`` and
#: ``empty`` (the surface returns no rows although nothing withholds them: a runtime too old
#: to apply the policies, ACC401)
ProbeDisposition = Literal["clear", "masked", "filtered", "denied", "ungoverned", "empty"]


class ProbeControl(Strict):
    """A positive control: a query the probe's persona is expected to see rows of, run in the
    same live session before a deny-expecting probe's question (accord probe --live)."""

    dataset: Name | None = Field(
        None,
        description="the dataset to read (default: the probe's; a replica on the probed "
        "platform stands in for it there)",
    )
    where: Annotated[dict[Name, EntitlementValue], Field(min_length=1, max_length=1)] | None = (
        Field(None, description="the rows of one entitlement value the persona is granted")
    )


class Probe(Strict):
    """The governance team's expected answer, per surface, to one question of one persona.

    ```yaml
    probes:
      cro_cannot_unmask_cns_subjects:
        owner: data-governance            # required: who is told when it fails
        persona: cro_collaborator
        dataset: assay_results            # the fact: this dataset and its replicas
        where: {programme: CNS-204}       # optional: the rows of one entitlement value
        column: SUBJECT_ID                # optional: one column
        expect:                           # every surface that reaches the fact, and no other
          warehouse_agent: masked         # clear | masked | filtered | denied | ungoverned | empty
          lakehouse_agent: masked
          variant_annotation: denied
    ```

    Checked against the model (ACC404), the compiled SQL (`accord verify`) and the live
    platforms (`accord probe --live`). A surface *reaches* the fact when it reads the dataset
    or one of its replicas, or, for a column with an identifier domain, a dataset whose column
    carries the same domain. A surface that reaches the fact without an `expect` entry is
    ACC404; an entry for a surface that does not reach it, or a `where` naming a dimension
    the dataset is not filtered by, is a validation error. On a dataset filtered by several
    dimensions, `where` may name one value of each of several of them
    (`where: {region: EU, business_line: RETAIL}`: the rows that hold both). For rows,
    `denied` means the persona sees none of the rows the probe names, `filtered` that it sees
    some."""

    owner: Annotated[Text, Field(min_length=1)] = Field(
        description="who is told when the probe fails: a team or a person"
    )
    persona: Name = Field(description="a persona from `personas`")
    dataset: Name = Field(description="the fact: this dataset and its replicas")
    where: Annotated[dict[Name, EntitlementValue], Field(min_length=1)] | None = Field(
        None,
        description="the rows of one entitlement value: {dimension: value}; on a dataset "
        "filtered by several dimensions, one value of each of several of them (the rows that "
        "hold every named value)",
    )
    column: ColumnName | None = Field(
        None, description="one column (with an identifier domain: every column of the domain)"
    )
    expect: dict[Name, ProbeDisposition] = Field(
        description="one expected disposition per surface that reaches the fact, and no other"
    )
    question: Annotated[Text, Field(min_length=1)] | None = Field(
        None, description="the question sent to A2A surfaces (default: generated)"
    )
    canary: Annotated[Text, Field(min_length=1)] | None = Field(
        None,
        description="clear value of `column` in a canary row of the `where` value, kept in the "
        "estate so live answers can be told clear from masked",
    )
    control: ProbeControl | None = Field(
        None,
        description="the positive control of a deny-expecting probe (accord probe --live; "
        "default: the probe's fact with a `where` value the persona is granted)",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # no ``control`` is not written: a model's dump (its fingerprint, which plans record)
        # is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.control is None:
            data.pop("control", None)
        return data


class Mesh(Strict):
    """The agent mesh as a whole (an accord extension, read by ``accord manifest``)."""

    a2a_version: Literal["0.3", "1.0"] = Field(
        description="the A2A protocol version the mesh negotiates (MAJOR.MINOR, quoted)"
    )


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

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # a model without ``mesh`` dumps (and so fingerprints) as it did before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.mesh is None:
            data.pop("mesh", None)
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
