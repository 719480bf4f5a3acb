"""What each persona may see: the meaning of the model, computed from the model alone.

This is the one place that answers "what may persona P see of dataset D on surface S".
Analysis, the loosest-surface rule (ACC403) and verification (as its oracle) all call it;
none re-derives it.

Vocabulary:

* a :class:`RowSet` says which rows a persona sees: every row, the rows whose entitlement
  value is in a set, or the rows a hand-written predicate admits (opaque here: verification
  executes it);
* a *disposition* is one of ``clear``, ``masked``, ``filtered``, ``denied``, ``ungoverned``,
  and on Snowflake ``hidden`` (a projection policy: the column cannot be selected) and
  ``aggregated`` (an aggregation policy: only aggregates over groups of a least size); their
  order is :mod:`compiler.meaning.order`'s;
* a :class:`DatasetView` is a persona's view of one dataset through one surface (or directly
  on its platform when no surface is named).

Where the same facts are looser on one surface than another (ACC403) is computed from these
views by :mod:`compiler.meaning.divergence`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Literal, NamedTuple

from accord.compiler.core.platforms import catalog_facts
from accord.compiler.core.today import today
from accord.compiler.model.grants import expiry, holders
from accord.compiler.model.hierarchy import effective
from accord.compiler.model.identities import aliases, identity_subject, persona_principals
from accord.compiler.model.identities import holders as identity_holders
from accord.compiler.model.schema import Dataset, Mask, PolicyModel, Surface
from accord.compiler.model.types import shown_whole

Disposition = Literal["clear", "masked", "filtered", "denied", "ungoverned", "hidden", "aggregated"]

#: Runtimes below which governed Databricks tables return no rows (platform facts).
MIN_RUNTIME_TABLE = (12, 2)
MIN_RUNTIME_DEDICATED = (15, 4)
MIN_RUNTIME_ABAC = (16, 4)


# --------------------------------------------------------------------------------------------
# principals


def principals_on(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """The principals whose grants the persona receives on ``platform``: those it lists that
    have an identity there, then every principal they inherit there
    (:func:`compiler.model.hierarchy.effective`), then every principal that names one of the
    identities it holds (another principal with the same role or group, an everyone identity:
    :func:`compiler.model.identities.persona_principals`). All it lists for ``none``. A
    principal with no identity on a platform grants nothing there."""
    identity = identity_subject(persona)
    if identity is not None:  # an identity held by no persona: what it holds on its platform
        return identity_holders(model, identity) if identity.platform == platform else []
    if catalog_facts(platform) is None:
        return effective(model, model.personas[persona], platform)
    return persona_principals(model, persona, platform)


def listed_on(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """The principals the persona lists itself that have an identity on ``platform``: the
    roles a session activates (primary and secondary) or the groups a user is put in; the
    hierarchy adds the rest (:func:`principals_on`). For an identity subject, the principals
    that name it."""
    identity = identity_subject(persona)
    if identity is not None:
        return aliases(model, identity) if identity.platform == platform else []
    names = model.personas[persona]
    if platform == "none":
        return list(names)
    return [p for p in names if model.principals[p].identity(platform) is not None]


def primary_principal(model: PolicyModel, persona: str) -> str | None:
    """The persona's default role on Snowflake: the first principal listed (for an identity
    subject, the first principal that names it, if any)."""
    identity = identity_subject(persona)
    if identity is not None:
        return next(iter(aliases(model, identity)), None)
    return model.personas[persona][0]


# --------------------------------------------------------------------------------------------
# rows


@dataclass(frozen=True)
class RowSet:
    """Rows a persona sees of a dataset."""

    all: bool = False
    values: frozenset[str] = frozenset()
    #: a hand-written predicate decides (only execution can tell which rows)
    expression: bool = False
    dimension: str | None = None
    #: the values of ``values`` the persona holds only through a date: (value, last day
    #: YYYY-MM-DD), sorted (an entitlement grant with ``until``)
    until: tuple[tuple[str, str], ...] = ()
    #: a filter over several dimensions: (dimension, the values it admits, or None for every
    #: row of it) in the filter's order; a row is visible when every dimension admits it.
    #: ``values`` then holds the admitted values as ``dimension=value`` and ``dimension`` the
    #: dimensions joined by ``+`` (:func:`multi_dimension`), for what reports and diffs
    dims: tuple[tuple[str, frozenset[str] | None], ...] = ()
    #: an aggregation policy: the rows are answered only in aggregates over groups of at least
    #: this many rows (0: row by row)
    aggregated: int = 0

    @property
    def nothing(self) -> bool:
        if self.dims and not self.all:
            return any(v is not None and not v for _, v in self.dims)
        return not self.all and not self.expression and not self.values

    def sees(self, value: str | None) -> bool:
        """Whether a row with entitlement value ``value`` (None for NULL) is visible."""
        if self.expression:
            raise ValueError("a hand-written predicate: only execution can tell")
        if self.all:
            return True
        if self.dims:
            raise ValueError("a filter over several dimensions: ask sees_row")
        return value is not None and value in self.values

    def sees_row(self, values: dict[str, str | None]) -> bool:
        """Whether a row with these values (dimension -> value, None for NULL) is visible;
        a dimension the row does not name is any value of it."""
        if not self.dims:
            if self.all:
                return True
            if self.dimension is not None and self.dimension in values:
                return self.sees(values[self.dimension])
            return not self.nothing
        if self.all:
            return True
        for dim, admitted in self.dims:
            if admitted is None or dim not in values:
                if admitted is not None and not admitted:
                    return False
                continue
            value = values[dim]
            if value is None or value not in admitted:
                return False
        return True

    def covers(self, other: RowSet) -> bool | None:
        """True if every row ``other`` admits is admitted here, as openly (row by row, or in
        groups no larger: an aggregation policy); None when a hand-written predicate makes
        them incomparable. Row by row and in aggregates, neither covering the other, is
        False both ways (:func:`compiler.meaning.order.compare`: incomparable)."""
        if other.nothing:
            return True
        found = self._covers_values(other)
        if found is None or self.aggregated == other.aggregated:
            return found
        openly = self.aggregated == 0 or 0 < self.aggregated <= other.aggregated
        return found and openly

    def _covers_values(self, other: RowSet) -> bool | None:
        if self.expression or other.expression:
            return None if not (self.all or other.nothing) else True
        if self.all or other.nothing:
            return True
        if other.all:
            return False
        if self.dims or other.dims:
            mine, theirs = dict(self.dims), dict(other.dims)
            if set(mine) != set(theirs):
                return None
            for dim, admitted in theirs.items():
                here = mine[dim]
                if here is None:
                    continue
                if admitted is None or not admitted <= here:
                    return False
            return True
        if self.dimension != other.dimension and self.values and other.values:
            return None
        return other.values <= self.values


def multi_dimension(dims: Iterable[str]) -> str:
    """The name reports give a filter over several dimensions: ``region+business_line``."""
    return "+".join(dims)


def qualified(dimension: str, value: str) -> str:
    """A value of one dimension of a filter over several: ``region=EU``."""
    return f"{dimension}={value}"


ALL_ROWS = RowSet(all=True)
NO_ROWS = RowSet()


def rows_visible(model: PolicyModel, persona: str, dataset: str) -> RowSet:
    """Rows the persona sees of ``dataset`` on its own platform, as a caller."""
    return Perspective(model, persona).rows(dataset)


# --------------------------------------------------------------------------------------------
# columns


@dataclass(frozen=True)
class ColumnView:
    column: str
    disposition: Disposition
    mask: str | None = None
    strategy: str | None = None
    identifier: str | None = None


def unmasked(model: PolicyModel, persona: str, mask: str, platform: str) -> bool:
    """Whether the persona sees the clear value behind ``mask`` on ``platform``."""
    return Perspective(model, persona).unmasked(mask, platform)


def column_view(model: PolicyModel, persona: str, dataset: str, column: str) -> ColumnView:
    """How the persona sees ``column`` of ``dataset`` on its own platform, as a caller."""
    return Perspective(model, persona).column(dataset, column)


def reveals_all(model: PolicyModel, ds: Dataset, column: str) -> bool:
    """Whether the column's mask shows every value its declared type can hold whole (a
    ``partial`` mask keeping at least the declared length: ACC206): such a column is ``clear``
    to whoever it masks, whatever the mask is called."""
    spec = ds.columns.get(column)
    if spec is None or spec.mask is None or spec.mask not in model.masks:
        return False
    return shown_whole(model.masks[spec.mask].kept_characters, spec.type, ds.platform)


def apply_mask(mask: Mask, value: str | None, salt: str | None) -> str | None:
    """The value a masked persona sees, per the format's definition of each strategy.

    ``hash``: lower-case hex SHA-256 of the value concatenated with the salt (NULL stays
    NULL). ``redact``: the replacement. ``nullify``: NULL. ``partial``: every character but
    the last ``keep_last`` replaced by ``*`` (NULL stays NULL).
    """
    if mask.strategy == "nullify":
        return None
    if mask.strategy == "redact":
        return mask.redaction
    if value is None:
        return None
    if mask.strategy == "hash":
        return hashlib.sha256((value + (salt or "")).encode("utf-8")).hexdigest()
    keep = mask.keep_last or 0
    hidden = max(len(value) - keep, 0)
    return "*" * hidden + value[hidden:]


# --------------------------------------------------------------------------------------------
# surfaces


@dataclass(frozen=True)
class Enforcement:
    """How a surface's reads are governed."""

    #: catalog: the platform's policies apply per caller; service: one identity answers for
    #: everyone; none: no catalog at all; no-rows: the runtime returns nothing for governed
    #: tables
    mode: Literal["catalog", "service", "none", "no-rows"]
    reason: str = ""


def required_runtime(model: PolicyModel, surface: Surface) -> tuple[tuple[int, int], str]:
    """The lowest Databricks Runtime that applies the policies ``surface`` reads under, and
    what needs it (platform facts: 12.2 for table-level filters and masks, 15.4 in dedicated
    access mode, 16.4 for ABAC)."""
    cfg = model.platforms.databricks
    if cfg is not None and cfg.style == "abac":
        return MIN_RUNTIME_ABAC, "ABAC policies need"
    if surface.access_mode == "dedicated":
        return MIN_RUNTIME_DEDICATED, "filters and masks in dedicated access mode need"
    return MIN_RUNTIME_TABLE, "filters and masks need"


def runtime_refusal(model: PolicyModel, surface: Surface) -> str | None:
    """Why a Databricks surface's runtime returns no rows for governed tables, or None."""
    platform = catalog_facts(surface.platform)
    if platform is None or not platform.versioned_runtimes:
        return None
    version = surface.runtime_version
    if version is None:  # serverless, sql-warehouse, or not stated
        return None
    needed, what = required_runtime(model, surface)
    if version < needed:
        return (
            f"{what} Databricks Runtime {needed[0]}.{needed[1]} or later; "
            f"{surface.runtime} returns no rows"
        )
    return None


def enforcement(model: PolicyModel, surface: str) -> Enforcement:
    s = model.surfaces[surface]
    if s.platform == "none":
        return Enforcement("none", "no catalog: nothing enforces row filters or masks")
    if s.identity == "service":
        return Enforcement(
            "service", "service identity: every caller gets what the service identity sees"
        )
    refusal = runtime_refusal(model, s)
    if refusal:
        return Enforcement("no-rows", refusal)
    return Enforcement("catalog")


# --------------------------------------------------------------------------------------------
# views


@dataclass(frozen=True)
class DatasetView:
    persona: str
    dataset: str
    surface: str | None
    platform: str
    rows: RowSet
    row_disposition: Disposition
    columns: tuple[ColumnView, ...] = field(default_factory=tuple)

    def column(self, name: str) -> ColumnView | None:
        folded = name.lower()
        return next((c for c in self.columns if c.column.lower() == folded), None)


def governed_columns(ds: Dataset) -> list[str]:
    """Columns that are masked, hidden by a projection policy or carry an identifier, in
    declaration order."""
    return [n for n, c in ds.columns.items() if c.mask or c.identifier or c.projection]


def dataset_view(
    model: PolicyModel,
    persona: str,
    dataset: str,
    surface: str | None = None,
    also: Iterable[str] = (),
) -> DatasetView:
    """The persona's view of ``dataset`` through ``surface`` (None: directly as a caller).

    Its columns are the governed ones, and ``also`` (matched case-insensitively): columns to
    show as this dataset has them even when it does not govern them, such as the columns a
    replica's original masks."""
    return Perspective(model, persona).view(dataset, surface, also)


class Seen(NamedTuple):
    """The dispositions of a :class:`DatasetView`, without its names: what several datasets
    governed alike (:func:`shape_key`) show a persona through surfaces of one enforcement mode.
    """

    rows: RowSet
    row_disposition: Disposition
    #: one per column of the view, in its order
    columns: tuple[Disposition, ...]


class Shape(NamedTuple):
    """A dataset's view columns and :func:`shape_key`."""

    dataset: str
    columns: tuple[str, ...]
    key: tuple[object, ...]


def shape_key(ds: Dataset, columns: Iterable[str]) -> tuple[object, ...]:
    """Everything a persona's dispositions of ``ds`` (rows, and each of ``columns``) depend
    on apart from the persona and the surface's enforcement mode: the platform, whether the
    dataset is governed, its row filter's entitlement and exemptions (a hand-written
    predicate is opaque: any one is alike), and the mask of each column. Two datasets with
    equal keys show every persona the same dispositions through surfaces of the same mode
    (``tests/test_semantics_shapes.py`` checks it against fresh views)."""
    rf = ds.row_filter
    rows: tuple[object, ...] | None = None
    if rf is not None:
        if rf.expression is not None:
            rows = ("expression",)
        elif rf.dimensions is not None:
            rows = (
                "dimensions",
                tuple((d, tuple(u)) for d, _, u in ds.filter_dimensions),
                tuple(rf.unfiltered_for),
            )
        else:
            rows = ("entitlement", rf.entitlement, tuple(rf.unfiltered_for))
    masks: list[object] = []
    for c in columns:
        spec = ds.columns.get(c)
        rule = spec.projection if spec is not None else None
        hidden = (tuple(rule.allowed_for), rule.enforcement) if rule is not None else None
        masks.append((spec.mask, hidden) if spec is not None else None)
    agg = ds.aggregation
    aggregated = (agg.min_group_size, tuple(agg.unrestricted_for)) if agg is not None else None
    return (ds.platform, ds.governed, rows, tuple(masks), aggregated)


class Perspective:
    """One persona's answers, memoised: the principals it holds per platform, the rows each
    entitlement filter leaves it, which masks it sees through, how each surface enforces.
    The functions above build one per call; :func:`compiler.meaning.divergence.divergences`
    keeps one per persona, since the views of thousands of datasets ask the same few
    questions."""

    def __init__(
        self,
        model: PolicyModel,
        persona: str,
        shared: dict[tuple[str, ...], object] | None = None,
        as_of: date | None = None,
    ) -> None:
        self.model = model
        self.persona = persona
        #: the day grants with ``until`` are judged at (None: :func:`compiler.core.today.today`,
        #: asked only when a grant has a date)
        self._as_of = as_of
        #: answers that do not depend on the persona (a dataset's governed columns, a column
        #: seen clear or masked), shared by the perspectives of one model
        self._shared: dict[tuple[str, ...], object] = {} if shared is None else shared
        self._mine: dict[str, frozenset[str]] = {}
        self._rows: dict[tuple[str, str, tuple[str, ...]], RowSet] = {}
        self._clear: dict[tuple[str, str], bool] = {}
        self._modes: dict[str, str] = {}
        self._seen: dict[tuple[object, ...], Seen] = {}

    def principals(self, platform: str) -> frozenset[str]:
        found = self._mine.get(platform)
        if found is None:
            found = frozenset(principals_on(self.model, self.persona, platform))
            self._mine[platform] = found
        return found

    def rows(self, dataset: str) -> RowSet:
        """The rows the persona sees of ``dataset`` as a caller: its row filter's, answered in
        aggregates only when an aggregation policy applies to the persona."""
        ds = self.model.datasets[dataset]
        found = self._filtered(ds)
        agg = ds.aggregation
        if agg is None or found.nothing:
            return found
        if not self.principals(ds.platform).isdisjoint(agg.unrestricted_for):
            return found
        return dataclasses.replace(found, aggregated=agg.min_group_size)

    def _filtered(self, ds: Dataset) -> RowSet:
        rf = ds.row_filter
        if rf is None:
            return ALL_ROWS
        if rf.expression is not None:
            return RowSet(expression=True)
        if rf.dimensions is not None:
            return self._several(ds)
        assert rf.entitlement is not None
        key = (ds.platform, rf.entitlement, tuple(rf.unfiltered_for))
        found = self._rows.get(key)
        if found is None:
            mine = self.principals(ds.platform)
            if not mine.isdisjoint(rf.unfiltered_for):
                found = ALL_ROWS
            else:
                found = self._granted(rf.entitlement, mine)
            self._rows[key] = found
        return found

    def _several(self, ds: Dataset) -> RowSet:
        """The rows of a filter over several dimensions: every row for a filter-wide
        unfiltered principal; else, per dimension, every row of it for one of its unfiltered
        principals, or the values granted (at :attr:`as_of`)."""
        rf = ds.row_filter
        assert rf is not None and rf.dimensions is not None
        mine = self.principals(ds.platform)
        if not mine.isdisjoint(rf.unfiltered_for):
            return ALL_ROWS
        dims: list[tuple[str, frozenset[str] | None]] = []
        until: list[tuple[str, str]] = []
        for d in rf.dimensions:
            if not mine.isdisjoint(d.unfiltered_for):
                dims.append((d.entitlement, None))
                continue
            one = self._granted(d.entitlement, mine)
            dims.append((d.entitlement, one.values))
            until += [(qualified(d.entitlement, v), day) for v, day in one.until]
        if all(v is None for _, v in dims):
            return ALL_ROWS
        values = frozenset(
            qualified(dim, v) if v is not None else qualified(dim, "*")
            for dim, admitted in dims
            for v in (sorted(admitted) if admitted is not None else [None])
        )
        return RowSet(
            values=values,
            dimension=multi_dimension(d for d, _ in dims),
            until=tuple(sorted(until)),
            dims=tuple(dims),
        )

    @property
    def as_of(self) -> date:
        if self._as_of is None:
            self._as_of = today()
        return self._as_of

    def _granted(self, dimension: str, mine: frozenset[str]) -> RowSet:
        """The values of ``dimension`` granted to a principal in ``mine`` on :attr:`as_of`,
        and the last day of those held only until a date."""
        grants = self.model.entitlements[dimension]
        values = []
        until = []
        for value, entries in grants.items():
            if all(isinstance(e, str) for e in entries):
                if not mine.isdisjoint(entries):
                    values.append(value)
                continue
            if mine.isdisjoint(holders(entries, self.as_of)):
                continue
            values.append(value)
            last = [expiry(entries, p) for p in mine]
            if not any(held and day is None for held, day in last):
                until.append((value, max(day for held, day in last if day).isoformat()))
        return RowSet(values=frozenset(values), dimension=dimension, until=tuple(sorted(until)))

    def unmasked(self, mask: str, platform: str) -> bool:
        key = (mask, platform)
        found = self._clear.get(key)
        if found is None:
            found = not self.principals(platform).isdisjoint(self.model.masks[mask].unmasked_for)
            self._clear[key] = found
        return found

    def column(self, dataset: str, column: str) -> ColumnView:
        return self._column(dataset, self.model.datasets[dataset], column)

    def _column(self, name: str, ds: Dataset, column: str) -> ColumnView:
        spec = ds.columns.get(column)
        seen: Disposition = "clear"
        if (
            spec is not None
            and spec.mask is not None
            and not self.unmasked(spec.mask, ds.platform)
            and not reveals_all(self.model, ds, column)
        ):
            seen = "masked"
        if (
            spec is not None
            and spec.projection is not None
            and self.principals(ds.platform).isdisjoint(spec.projection.allowed_for)
        ):
            seen = "hidden"  # a projection policy: the column cannot be selected at all
        key = ("column", name, column, seen)
        found = self._shared.get(key)
        if found is None:
            if spec is None or (spec.mask is None and seen == "clear"):
                found = ColumnView(column, "clear", identifier=spec.identifier if spec else None)
            elif spec.mask is None:
                found = ColumnView(column, seen, identifier=spec.identifier)
            else:
                strategy = self.model.masks[spec.mask].strategy
                found = ColumnView(column, seen, spec.mask, strategy, spec.identifier)
            self._shared[key] = found
        return found  # type: ignore[return-value]

    def _governed(self, name: str, ds: Dataset) -> list[str]:
        key = ("governed", name)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = tuple(governed_columns(ds))
        return list(found)  # type: ignore[call-overload]

    def mode(self, surface: str | None) -> str:
        if surface is None:
            return "catalog"
        found = self._modes.get(surface)
        if found is None:
            found = enforcement(self.model, surface).mode
            self._modes[surface] = found
        return found

    def _columns(self, dataset: str, ds: Dataset, also: Iterable[str]) -> list[str]:
        """The columns of :meth:`view`: the governed ones, then ``also``."""
        cols = self._governed(dataset, ds)
        if also:
            shown = {c.lower() for c in cols}
            listed = {c.lower(): c for c in ds.columns}
            for extra in also:
                if extra.lower() not in shown:
                    shown.add(extra.lower())
                    cols.append(listed.get(extra.lower(), extra))
        return cols

    def shape(self, dataset: str, also: Iterable[str] = ()) -> Shape:
        """The persona-independent part of :meth:`seen` (shared by the perspectives of one
        model): pass it back to :meth:`seen` to skip looking it up."""
        extra = tuple(also)
        key = ("shape", dataset, *extra)
        found = self._shared.get(key)
        if found is None:
            ds = self.model.datasets[dataset]
            cols = tuple(self._columns(dataset, ds, extra))
            found = self._shared[key] = Shape(dataset, cols, shape_key(ds, cols))
        return found  # type: ignore[return-value]

    def place_key(self, shape: Shape, surface: str | None) -> tuple[object, ...]:
        """What :meth:`seen` of a dataset of ``shape`` through ``surface`` is memoised by:
        the same for every persona."""
        return (shape.key, self.mode(surface))

    def seen(
        self,
        dataset: str,
        surface: str | None = None,
        shape: Shape | None = None,
        key: tuple[object, ...] | None = None,
    ) -> Seen:
        """The dispositions of :meth:`view` (``shape``: of :meth:`shape`, by default the
        governed columns; ``key``: its :meth:`place_key`, to skip computing it). Memoised
        per persona by what they depend on (:func:`shape_key` and the surface's enforcement
        mode), not per dataset: thousands of datasets governed alike ask the same question.

        Interned across the perspectives that share answers: equal ``Seen`` (and their
        ``rows``) are one object, so callers may compare them by identity."""
        if shape is None:
            shape = self.shape(dataset)
        if key is None:
            key = (shape.key, self.mode(surface))
        found = self._seen.get(key)
        if found is None:
            mode: str = key[1]  # type: ignore[assignment]
            ds = self.model.datasets[dataset]
            rows, row_disp = self._rows_through(dataset, ds, mode)
            rows = self._shared.setdefault(("rows", rows), rows)  # type: ignore[assignment]
            views = tuple(
                self._column_through(dataset, ds, mode, rows, c).disposition for c in shape.columns
            )
            found = Seen(rows, row_disp, views)
            found = self._shared.setdefault(("seen", found), found)  # type: ignore[assignment]
            self._seen[key] = found
        return found

    def view(
        self, dataset: str, surface: str | None = None, also: Iterable[str] = ()
    ) -> DatasetView:
        """See :func:`dataset_view`. Built from :meth:`seen`: the column views of a dataset
        are one tuple per (columns shown, enforcement mode, whether any row is seen, each
        column's disposition), shared by the perspectives of one model."""
        ds = self.model.datasets[dataset]
        shape = self.shape(dataset, also)
        key = self.place_key(shape, surface)
        seen = self.seen(dataset, surface, shape, key)
        # a Shape lives in the shared answers, so its identity is stable
        columns_key = ("view", id(shape), key[1], seen.rows.nothing, seen.columns)
        views = self._shared.get(columns_key)  # type: ignore[arg-type]
        if views is None:
            mode: str = key[1]  # type: ignore[assignment]
            views = self._shared[columns_key] = tuple(  # type: ignore[index]
                self._column_through(dataset, ds, mode, seen.rows, c) for c in shape.columns
            )
        return DatasetView(
            self.persona,
            dataset,
            surface,
            ds.platform,
            seen.rows,
            seen.row_disposition,
            views,  # type: ignore[arg-type]
        )

    def column_through(self, dataset: str, surface: str | None, column: str) -> ColumnView:
        """One column of :meth:`view`, without building the rest of the view."""
        ds = self.model.datasets[dataset]
        mode = self.mode(surface)
        rows, _ = self._rows_through(dataset, ds, mode)
        return self._column_through(dataset, ds, mode, rows, column)

    def _rows_through(self, dataset: str, ds: Dataset, mode: str) -> tuple[RowSet, Disposition]:
        if mode == "catalog" or not ds.governed:
            rows = self.rows(dataset)
            if rows.aggregated and not rows.nothing:
                return rows, "aggregated"
            if ds.row_filter is None:
                return rows, "clear" if ds.governed else "ungoverned"
            if rows.all:
                return rows, "clear"
            return rows, "denied" if rows.nothing else "filtered"
        # no-rows: the runtime returns nothing; otherwise (service identity or no catalog)
        # nothing is enforced per caller
        if mode == "no-rows":
            return NO_ROWS, "denied"
        return ALL_ROWS, "ungoverned"

    def _column_through(
        self, dataset: str, ds: Dataset, mode: str, rows: RowSet, column: str
    ) -> ColumnView:
        if mode == "catalog" and ds.governed and not rows.nothing:
            found = self._column(dataset, ds, column)
            if rows.aggregated and found.disposition == "clear":
                # a clear column of rows answered only in aggregates
                return dataclasses.replace(found, disposition="aggregated")
            return found
        spec = ds.columns.get(column)
        identifier = spec.identifier if spec else None
        if not ds.governed:
            return ColumnView(column, "ungoverned", identifier=identifier)
        mask = spec.mask if spec else None
        if mode == "catalog":  # every row filtered away
            strategy = self.model.masks[mask].strategy if mask else None
            return ColumnView(column, "denied", mask, strategy, identifier)
        disposition: Disposition = "denied" if mode == "no-rows" else "ungoverned"
        return ColumnView(column, disposition, mask, identifier=identifier)
