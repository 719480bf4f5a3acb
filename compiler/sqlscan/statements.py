"""What a scan gives back: :class:`Statement`, :class:`ScanResult`, :class:`ScanError`,
:class:`Suppression` and the values they hold (:class:`Param`, :class:`AbacPolicy`), the
dialect names and statement kinds, and the offset -> (line, column) index of one file.

The bottom of :mod:`compiler.sqlscan`: it imports nothing else from the package.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlglot import exp

from accord.compiler.core.platforms import DIALECTS as DIALECTS  # the dialect names, re-exported

Dialect = Literal["snowflake", "databricks"]

# Statement kinds, for reference (Statement.kind is always one of these).
KINDS: frozenset[str] = frozenset(
    {
        "row_access_policy",
        "masking_policy",
        "projection_policy",
        "aggregation_policy",
        "join_policy",
        "policy",
        "alter_policy_body",
        "drop_row_access_policy",
        "drop_masking_policy",
        "drop_projection_policy",
        "drop_aggregation_policy",
        "drop_join_policy",
        "function",
        "add_row_access",
        "drop_row_access",
        "set_masking_policy",
        "unset_masking_policy",
        "set_projection_policy",
        "unset_projection_policy",
        "set_aggregation_policy",
        "unset_aggregation_policy",
        "set_join_policy",
        "unset_join_policy",
        "pipeline_view",
        "set_row_filter",
        "drop_row_filter",
        "set_mask",
        "drop_mask",
        "abac_policy",
        "drop_abac_policy",
        "set_tags",
        "snowflake_tag",
        "alter_tag_set_masking",
        "alter_tag_unset_masking",
        "set_column_tag",
        "set_table_tag",
        "other",
    }
)

#: the fields of one statement as a reader gathers them: keyword arguments of Statement
Fields = dict[str, Any]


@dataclass(frozen=True)
class Param:
    """One parameter of a policy or function signature; ``type`` is upper-cased."""

    name: str
    type: str


@dataclass(frozen=True)
class Suppression:
    """``-- accord: ignore ACC101 <reason>`` on the line(s) directly before a statement.

    ``reason`` may be empty: callers report a suppression without a reason as an error.
    ``line``/``column`` locate the comment."""

    rule: str
    reason: str
    line: int
    column: int


@dataclass(frozen=True)
class ScanError:
    """A located problem in the input: ``file:line:column: message``.

    ``kind`` says what could not be read: ``statement`` (a policy statement, reported by lint
    as ACC001), ``tokenize`` (the rest of the file from here), ``dialect`` (a policy
    statement in a file of unknown dialect), ``suppression`` (a malformed suppression
    comment: bad input). ``span`` is the (start, end) offset of the statement concerned."""

    file: str
    line: int
    column: int
    message: str
    kind: str = "statement"
    span: tuple[int, int] | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class AbacPolicy:
    """A Databricks ``CREATE POLICY`` (or, with only the securable filled, ``DROP POLICY``)."""

    securable_type: str  # "CATALOG" | "SCHEMA" | "TABLE"
    securable: str
    kind: str | None = None  # "ROW FILTER" | "COLUMN MASK"
    function: str | None = None
    to: tuple[str, ...] = ()
    except_: tuple[str, ...] = ()
    when: exp.Expression | None = None
    match_columns: tuple[tuple[exp.Expression, str | None], ...] = ()
    on_column: str | None = None
    using: tuple[str, ...] = ()
    comment: str | None = None


class LineIndex:
    """Offset -> 1-based (line, column) for one file."""

    __slots__ = ("starts",)

    def __init__(self, text: str) -> None:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


@dataclass(frozen=True)
class Statement:
    """One recognised statement. The documentation of :mod:`compiler.sqlscan` lists each
    ``kind``.

    ``line``/``column`` locate the statement's first token and ``body_line``/``body_column``
    the body's first token (1-based; 0 when there is no body). ``column_name`` is the
    target column of a column-level attachment (``SET MASKING POLICY``, ``SET MASK``,
    ``SET TAGS``, ``SET TAG``) or the ``ON COLUMN`` alias of an ABAC column mask.
    """

    kind: str
    dialect: str
    file: str
    line: int
    column: int
    text: str
    name: str | None = None
    #: a Snowflake policy's kind in the words before POLICY (``ROW ACCESS``, ``MASKING``,
    #: ``PROJECTION``, ``AGGREGATION``, ``JOIN``, or one accord does not model), on its CREATE,
    #: ``ALTER ... SET BODY`` and DROP statements
    policy_kind: str | None = None
    #: what a pipeline dataset (kind ``pipeline_view``) is: ``STREAMING TABLE``, ``LIVE VIEW``,
    #: ``MATERIALIZED VIEW``...
    dataset_kind: str | None = None
    params: tuple[Param, ...] = ()
    returns: str | None = None
    body: exp.Expression | None = None
    body_text: str | None = None
    body_line: int = 0
    body_column: int = 0
    table: str | None = None
    column_name: str | None = None
    columns: tuple[str, ...] = ()
    policy: str | None = None
    dropped_policy: str | None = None
    policies: tuple[str, ...] = ()
    force: bool = False
    or_replace: bool = False
    if_not_exists: bool = False
    secure: bool = False
    language: str | None = None
    comment: str | None = None
    abac: AbacPolicy | None = None
    tags: tuple[tuple[str, str], ...] = ()
    expression: exp.Expression | None = None
    suppressions: tuple[Suppression, ...] = ()
    # (root expression, offset of its source text in the file) for node_position.
    _roots: tuple[tuple[exp.Expression, int], ...] = field(
        default=(), repr=False, compare=False, hash=False
    )
    _lines: LineIndex | None = field(default=None, repr=False, compare=False, hash=False)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class ScanResult:
    statements: tuple[Statement, ...]
    dialect: str | None
    errors: tuple[ScanError, ...] = ()
    #: the :class:`compiler.sqlscan.template.Template` the SQL was read from, for a Jinja file
    template: Any = field(default=None, compare=False)
