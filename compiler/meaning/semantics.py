"""What each persona may see: the meaning of the model, computed from the model alone.

This is the one place that answers "what may persona P see of dataset D on surface S".
Analysis, the loosest-surface rule (ACC403) and verification (as its oracle) all call it;
none re-derives it.

Vocabulary:

* a :class:`RowSet` says which rows a persona sees: every row, the rows whose entitlement
  value is in a set, or the rows a hand-written predicate admits (opaque here: verification
  executes it);
* a *disposition* is one of ``clear``, ``masked``, ``filtered``, ``denied``, ``ungoverned``;
* a :class:`DatasetView` is a persona's view of one dataset through one surface (or directly
  on its platform when no surface is named).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from compiler.model.schema import Dataset, Mask, PolicyModel, Surface

Disposition = Literal["clear", "masked", "filtered", "denied", "ungoverned"]

#: Runtimes below which governed Databricks tables return no rows (platform facts).
MIN_RUNTIME_TABLE = (12, 2)
MIN_RUNTIME_DEDICATED = (15, 4)
MIN_RUNTIME_ABAC = (16, 4)


# --------------------------------------------------------------------------------------------
# principals


def principals_on(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """The persona's principals that have an identity on ``platform`` (all of them for
    ``none``). A principal with no identity on a platform grants nothing there."""
    names = model.personas[persona]
    if platform == "none":
        return list(names)
    return [p for p in names if model.principals[p].identity(platform) is not None]


def primary_principal(model: PolicyModel, persona: str) -> str:
    """The persona's default role on Snowflake: the first principal listed."""
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

    @property
    def nothing(self) -> bool:
        return not self.all and not self.expression and not self.values

    def sees(self, value: str | None) -> bool:
        """Whether a row with entitlement value ``value`` (None for NULL) is visible."""
        if self.expression:
            raise ValueError("a hand-written predicate: only execution can tell")
        if self.all:
            return True
        return value is not None and value in self.values

    def covers(self, other: RowSet) -> bool | None:
        """True if every row ``other`` admits is admitted here; None when incomparable."""
        if self.expression or other.expression:
            return None if not (self.all or other.nothing) else True
        if self.all or other.nothing:
            return True
        if other.all:
            return False
        if self.dimension != other.dimension and self.values and other.values:
            return None
        return other.values <= self.values


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
    if surface.platform != "databricks":
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
    """Columns that are masked or carry an identifier, in declaration order."""
    return [n for n, c in ds.columns.items() if c.mask or c.identifier]


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
        else:
            rows = ("entitlement", rf.entitlement, tuple(rf.unfiltered_for))
    masks = []
    for c in columns:
        spec = ds.columns.get(c)
        masks.append(spec.mask if spec is not None else None)
    return (ds.platform, ds.governed, rows, tuple(masks))


class Perspective:
    """One persona's answers, memoised: the principals it holds per platform, the rows each
    entitlement filter leaves it, which masks it sees through, how each surface enforces.
    The functions above build one per call; :func:`divergences` keeps one per persona, since
    the views of thousands of datasets ask the same few questions."""

    def __init__(
        self, model: PolicyModel, persona: str, shared: dict[tuple[str, ...], object] | None = None
    ) -> None:
        self.model = model
        self.persona = persona
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
        ds = self.model.datasets[dataset]
        rf = ds.row_filter
        if rf is None:
            return ALL_ROWS
        if rf.expression is not None:
            return RowSet(expression=True)
        assert rf.entitlement is not None
        key = (ds.platform, rf.entitlement, tuple(rf.unfiltered_for))
        found = self._rows.get(key)
        if found is None:
            mine = self.principals(ds.platform)
            if not mine.isdisjoint(rf.unfiltered_for):
                found = ALL_ROWS
            else:
                grants = self.model.entitlements[rf.entitlement]
                values = frozenset(v for v, who in grants.items() if not mine.isdisjoint(who))
                found = RowSet(values=values, dimension=rf.entitlement)
            self._rows[key] = found
        return found

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
        if spec is not None and spec.mask is not None and not self.unmasked(spec.mask, ds.platform):
            seen = "masked"
        key = ("column", name, column, seen)
        found = self._shared.get(key)
        if found is None:
            if spec is None or spec.mask is None:
                found = ColumnView(column, "clear", identifier=spec.identifier if spec else None)
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
            return self._column(dataset, ds, column)
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


# --------------------------------------------------------------------------------------------
# divergences (ACC403)

_COLUMN_OPENNESS = {"clear": 2, "ungoverned": 2, "masked": 1, "denied": 0}


@dataclass(frozen=True)
class Reach:
    """One place a fact is answered: a surface reading a dataset (and a column of it)."""

    surface: str
    dataset: str
    column: str | None = None


@dataclass(frozen=True)
class Divergence:
    """The same facts are less restricted for ``persona`` on ``loose`` than on ``strict``."""

    persona: str
    #: ("dataset", replica-group root) or ("identifier", domain)
    facts: tuple[str, str]
    loose: Reach
    strict: Reach
    aspect: Literal["rows", "column"]
    detail: str


def reaches(model: PolicyModel) -> dict[str, list[tuple[str, str]]]:
    """For each dataset, the (surface, dataset) pairs that read it, in a stable order."""
    out: dict[str, list[tuple[str, str]]] = {d: [] for d in model.datasets}
    for sname in sorted(model.surfaces):
        for d in model.surfaces[sname].reads:
            out[d].append((sname, d))
    return out


def _describe_rows(rows: RowSet, disposition: Disposition) -> str:
    if disposition == "ungoverned":
        return "every row (ungoverned)"
    if rows.all:
        return "every row"
    if rows.nothing:
        return "no rows"
    if rows.expression:
        return "rows the hand-written predicate admits"
    return "rows of " + ", ".join(sorted(rows.values))


def divergences(
    model: PolicyModel,
    personas: Iterable[str] | None = None,
    *,
    refused_as_intended: bool = True,
    datasets: Iterable[str] | None = None,
) -> list[Divergence]:
    """Where the same facts are looser for a persona on one surface than on another: a
    dataset and its replicas (rows and same-named columns), and every identifier domain
    (columns). Deterministic order.

    Each loose place (a surface reading a dataset, and a column of it) is reported once per
    persona and aspect, against the *strictest* place that reads the same facts, so the
    result grows with the number of places, not with the number of pairs of them.

    The one function behind ACC403 in ``accord lint``, ``accord analyze`` (and ``accord
    diff``): they report the same set.

    ``refused_as_intended`` (the default, as ACC403's page says): a surface whose runtime
    returns no rows (:func:`runtime_refusal`) is compared by what its catalog's policies
    intend instead of as "denied". Its failure is a
    defect of its own (ACC401), not a restriction, and counting it as one would make every
    working surface that reads the same facts look loose.

    ``datasets``: only the facts that hold one of them (their replica groups, and the
    identifier domains of their columns): the divergences of the whole model whose facts
    are those, in the same order. Used to recompute only what a change can touch.

    How it stays cheap: what a persona sees of a place is :meth:`Perspective.seen`, memoised
    by how the dataset is governed rather than by its name; and the divergences of one set
    of facts are a function of what each of its places shows, so personas that see the
    same there share one computation (only the persona differs in what is reported)."""
    personas = sorted(personas if personas is not None else model.personas)
    by_dataset = reaches(model)
    root_of = {d: model.replica_root(d) for d in model.datasets}
    groups: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        groups.setdefault(root_of[d], []).append(d)
    domains: dict[str, list[tuple[str, str]]] = {}
    for d in sorted(model.datasets):
        for col, spec in model.datasets[d].columns.items():
            if spec.identifier:
                domains.setdefault(spec.identifier, []).append((d, col))
    if datasets is not None:
        wanted = set(datasets) & set(model.datasets)
        roots = {root_of[d] for d in wanted}
        groups = {r: m for r, m in groups.items() if r in roots}
        domains = {k: v for k, v in domains.items() if any(d in wanted for d, _ in v)}
    refused = {
        s for s in model.surfaces if refused_as_intended and enforcement(model, s).mode == "no-rows"
    }
    # a replica shows every column its group governs anywhere: one that lost its mask is the
    # very leak to find
    also: dict[str, list[str]] = {}
    for members in groups.values():
        if len(members) > 1:
            union = sorted({c for d in members for c in governed_columns(model.datasets[d])})
            also.update((d, union) for d in members)

    if not personas:
        return []
    shared: dict[tuple[str, ...], object] = {}
    first = Perspective(model, personas[0], shared)
    needed = {d for members in groups.values() for d in members}
    needed.update(d for cols in domains.values() for d, _ in cols)
    shapes = {d: first.shape(d, also.get(d, ())) for d in sorted(needed)}
    compared = [
        (root, [r for d in members for r in by_dataset[d]])
        for root, members in sorted(groups.items())
        if any(model.datasets[d].governed for d in members)
    ]
    compared = [(root, places) for root, places in compared if len(places) >= 2]
    keys = _PlaceKeys(first, refused, shapes)
    # each domain: its places (surface, dataset, column); the distinct questions they ask
    # (what a persona sees of a column position of datasets governed alike, through surfaces
    # of one mode), and which question each place asks
    domain_places = []
    for domain, cols in sorted(domains.items()):
        places3 = [(s, d, c) for d, c in cols for s, _ in by_dataset[d]]
        questions: dict[tuple[object, ...], int] = {}
        asks = []
        for s, d, c in places3:
            q = (keys(s, d), shapes[d].columns.index(c))
            asks.append(questions.setdefault(q, len(questions)))
        first_of = {j: p for p, j in zip(places3, asks, strict=True)}
        distinct = [(first_of[j][0], first_of[j][1], q[1]) for q, j in questions.items()]
        domain_places.append((domain, places3, distinct, asks))

    # groups alike: the same place keys (so every persona sees the same there), and for
    # columns the same column names too; whether a group diverges depends on that alone.
    # One numbering for both kinds, so their entries in ``quiet`` never meet
    kinds: dict[tuple[object, ...], int] = {}
    group_kinds = []
    for _, places in compared:
        rows_kind = tuple(keys(*p) for p in places)
        names = tuple(tuple(c.lower() for c in shapes[d].columns) for _, d in places)
        group_kinds.append(
            (
                kinds.setdefault(rows_kind, len(kinds)),
                kinds.setdefault((rows_kind, names), len(kinds)),
            )
        )

    out: list[Divergence] = []
    # the divergences of each set of facts, by what its places show (the first persona's)
    done: dict[tuple[object, ...], list[Divergence]] = {}
    done_columns: dict[tuple[object, ...], list[Divergence]] = {}
    done_domains: dict[tuple[object, ...], list[Divergence]] = {}
    # what groups alike show that diverges nowhere (Seen and their parts are interned, so
    # identities stand for values)
    quiet: set[tuple[object, ...]] = set()
    for persona in personas:
        view = _Views(Perspective(model, persona, shared), keys)
        seen_of: dict[int, list[Seen]] = {}
        for (root, places), (rows_kind, columns_kind) in zip(compared, group_kinds, strict=True):
            seen = seen_of.get(rows_kind)
            if seen is None:
                seen = seen_of[rows_kind] = [view(*p) for p in places]
            # rows depend on the row sets only, columns on the column dispositions only
            rows = seen[0].rows
            if any(v.rows is not rows for v in seen):  # else one row set: nothing is looser
                shows: tuple[object, ...] = (rows_kind, *(id(v.rows) for v in seen))
                shows += tuple(v.row_disposition for v in seen)
                if shows not in quiet:
                    key: tuple[object, ...] = (root, shows)
                    found = done.get(key)
                    if found is None:
                        found = done[key] = list(_row_divergences(persona, root, places, view))
                        if not found:
                            quiet.add(shows)
                        out.extend(found)
                    else:
                        out.extend(_for(persona, found))
            shows = (columns_kind, *(id(v.columns) for v in seen))
            if shows not in quiet:
                key = (root, shows)
                found = done_columns.get(key)
                if found is None:
                    found = done_columns[key] = list(
                        _column_divergences(persona, root, places, view, shapes)
                    )
                    if not found:
                        quiet.add(shows)
                    out.extend(found)
                else:
                    out.extend(_for(persona, found))
        for domain, places3, distinct, asks in domain_places:
            answers = tuple(view(s, d).columns[i] for s, d, i in distinct)
            key = (domain, answers)
            found = done_domains.get(key)
            if found is None:
                shown = [answers[j] for j in asks]
                found = done_domains[key] = list(
                    _domain_divergences(persona, domain, places3, shown, root_of)
                )
                out.extend(found)
            else:
                out.extend(_for(persona, found))
    return out


def _for(persona: str, found: list[Divergence]) -> Iterator[Divergence]:
    """The divergences another persona has, for ``persona`` (who sees the same)."""
    for d in found:
        yield Divergence(persona, d.facts, d.loose, d.strict, d.aspect, d.detail)


class _PlaceKeys:
    """What the :class:`Seen` of a place (surface, dataset) is memoised by: the dataset's
    :func:`shape_key` and the surface's enforcement mode (a refused surface's as its catalog
    intends). The same for every persona."""

    def __init__(self, perspective: Perspective, refused: set[str], shapes: dict[str, Shape]):
        self.perspective = perspective
        self.refused = refused
        self.shapes = shapes
        self.found: dict[tuple[str, str], tuple[object, ...]] = {}
        #: key -> a place with that key, and the surface to read it through
        self.through: dict[tuple[object, ...], tuple[str, str | None]] = {}

    def __call__(self, surface: str, dataset: str) -> tuple[object, ...]:
        place = (surface, dataset)
        key = self.found.get(place)
        if key is None:
            through = None if surface in self.refused else surface
            key = self.found[place] = self.perspective.place_key(self.shapes[dataset], through)
            self.through.setdefault(key, (dataset, through))
        return key


class _Views:
    """One persona's :class:`Seen` of each place, computed once per place key."""

    def __init__(self, perspective: Perspective, keys: _PlaceKeys) -> None:
        self.perspective = perspective
        self.keys = keys
        self.seen: dict[tuple[object, ...], Seen] = {}

    def __call__(self, surface: str, dataset: str) -> Seen:
        key = self.keys.found.get((surface, dataset)) or self.keys(surface, dataset)
        found = self.seen.get(key)
        if found is None:
            d, through = self.keys.through[key]
            found = self.seen[key] = self.perspective.seen(d, through, self.keys.shapes[d], key)
        return found


_View = Callable[[str, str], Seen]


def _row_divergences(
    persona: str, root: str, places: list[tuple[str, str]], view: _View
) -> Iterator[Divergence]:
    """Rows: each place whose row set strictly covers another's, against a minimal one.
    Places are grouped by their row set first, so only distinct row sets are compared."""
    first_with: dict[RowSet, tuple[str, str]] = {}
    for place in places:
        first_with.setdefault(view(*place).rows, place)
    distinct = list(first_with)
    strictest: dict[RowSet, RowSet] = {}
    for ra in distinct:
        best: RowSet | None = None
        for rb in distinct:
            below = ra.covers(rb) and rb.covers(ra) is False
            if below and (best is None or (best.covers(rb) and rb.covers(best) is False)):
                best = rb
        if best is not None:
            strictest[ra] = best
    for a in places:
        va = view(*a)
        if va.rows not in strictest:
            continue
        b = first_with[strictest[va.rows]]
        vb = view(*b)
        yield Divergence(
            persona,
            ("dataset", root),
            Reach(*a),
            Reach(*b),
            "rows",
            f"{a[0]} shows {_describe_rows(va.rows, va.row_disposition)} of {a[1]}; {b[0]} "
            f"shows {_describe_rows(vb.rows, vb.row_disposition)} of {b[1]}",
        )


def _column_divergences(
    persona: str,
    root: str,
    places: list[tuple[str, str]],
    view: _View,
    shapes: dict[str, Shape],
) -> Iterator[Divergence]:
    """Same-named columns of a replica group: each place more open than the strictest."""
    by_column: dict[str, list[tuple[tuple[str, str], str, Disposition]]] = {}
    for place in places:
        for name, disposition in zip(shapes[place[1]].columns, view(*place).columns, strict=True):
            # a column of no row exposes no value: the row aspect reports that place
            if disposition != "denied":
                by_column.setdefault(name.lower(), []).append((place, name, disposition))
    for entries in by_column.values():
        b, name_b, disp_b = min(entries, key=lambda e: _COLUMN_OPENNESS[e[2]])
        floor = _COLUMN_OPENNESS[disp_b]
        for a, name_a, disp_a in entries:
            if _COLUMN_OPENNESS[disp_a] > floor:
                yield Divergence(
                    persona,
                    ("dataset", root),
                    Reach(a[0], a[1], name_a),
                    Reach(b[0], b[1], name_b),
                    "column",
                    f"{a[1]}.{name_a} is {disp_a} on {a[0]} but "
                    f"{b[1]}.{name_b} is {disp_b} on {b[0]}",
                )


#: how an identifier's *value* is exposed where the persona reaches rows: in the clear, or
#: masked (a digest or a redaction: neither gives the value)
_EXPOSURE = {"clear": 2, "ungoverned": 2, "masked": 1}


def _domain_divergences(
    persona: str,
    domain: str,
    places3: list[tuple[str, str, str]],
    shown: list[Disposition],
    root_of: dict[str, str],
) -> Iterator[Divergence]:
    """An identifier domain: datasets that share it hold the same *kind* of identifier, not
    the same rows. What is compared is how the identifier value is exposed (clear or masked)
    on each surface, for the rows the persona reaches there: a place where the persona
    reaches no row exposes no value and is not compared (being denied a row of one dataset
    and seeing a masked identifier in another is no divergence), nor are two places of one
    surface (a surface is not looser than itself) or of one replica group (compared column
    by column above). Each place is compared with the strictest place of another surface
    and another group.

    ``places3``: every (surface, dataset, column) of the domain; ``shown``: the persona's
    disposition of each."""
    places: list[tuple[tuple[str, str, str], Disposition, int]] = []
    for place, disposition in zip(places3, shown, strict=True):
        rank = _EXPOSURE.get(disposition)
        if rank is not None:
            places.append((place, disposition, rank))
    # the strictest place per (replica group, surface), strictest first
    strictest: dict[tuple[str, str], tuple[int, tuple[str, str, str], Disposition]] = {}
    for place, disposition, rank in places:
        key = (root_of[place[1]], place[0])
        if key not in strictest or rank < strictest[key][0]:
            strictest[key] = (rank, place, disposition)
    ordered = sorted(strictest.items(), key=lambda kv: (kv[1][0], kv[0]))
    lowest = ordered[0][1][0] if ordered else 0
    for a3, disp_a, rank_a in places:
        if rank_a <= lowest:  # nothing is stricter
            continue
        group, surface = root_of[a3[1]], a3[0]
        for (other_group, other_surface), (rank, b3, disp_b) in ordered:
            if rank >= rank_a:
                break
            if other_group == group or other_surface == surface:
                continue
            yield Divergence(
                persona,
                ("identifier", domain),
                Reach(*a3),
                Reach(*b3),
                "column",
                f"{domain} identifiers are {disp_a} in {a3[1]}.{a3[2]} on {a3[0]} "
                f"but {disp_b} in {b3[1]}.{b3[2]} on {b3[0]}",
            )
            break
