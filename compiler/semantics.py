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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from compiler.model import Dataset, Mask, PolicyModel, Surface

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
    ds = model.datasets[dataset]
    rf = ds.row_filter
    if rf is None:
        return ALL_ROWS
    if rf.expression is not None:
        return RowSet(expression=True)
    assert rf.entitlement is not None
    mine = set(principals_on(model, persona, ds.platform))
    if mine & set(rf.unfiltered_for):
        return ALL_ROWS
    grants = model.entitlements[rf.entitlement]
    values = frozenset(v for v, granted in grants.items() if mine & set(granted))
    return RowSet(values=values, dimension=rf.entitlement)


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
    mine = set(principals_on(model, persona, platform))
    return bool(mine & set(model.masks[mask].unmasked_for))


def column_view(model: PolicyModel, persona: str, dataset: str, column: str) -> ColumnView:
    """How the persona sees ``column`` of ``dataset`` on its own platform, as a caller."""
    ds = model.datasets[dataset]
    spec = ds.columns.get(column)
    if spec is None or spec.mask is None:
        return ColumnView(column, "clear", identifier=spec.identifier if spec else None)
    mask = model.masks[spec.mask]
    if unmasked(model, persona, spec.mask, ds.platform):
        return ColumnView(column, "clear", spec.mask, mask.strategy, spec.identifier)
    return ColumnView(column, "masked", spec.mask, mask.strategy, spec.identifier)


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


def runtime_refusal(model: PolicyModel, surface: Surface) -> str | None:
    """Why a Databricks surface's runtime returns no rows for governed tables, or None."""
    if surface.platform != "databricks":
        return None
    version = surface.runtime_version
    if version is None:  # serverless, sql-warehouse, or not stated
        return None
    cfg = model.platforms.databricks
    shown = surface.runtime
    if cfg is not None and cfg.style == "abac" and version < MIN_RUNTIME_ABAC:
        return f"ABAC policies need Databricks Runtime 16.4 or later; {shown} returns no rows"
    if surface.access_mode == "dedicated" and version < MIN_RUNTIME_DEDICATED:
        return (
            f"filters and masks in dedicated access mode need Databricks Runtime 15.4 or later; "
            f"{shown} returns no rows"
        )
    if version < MIN_RUNTIME_TABLE:
        return f"filters and masks need Databricks Runtime 12.2 or later; {shown} returns no rows"
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
    model: PolicyModel, persona: str, dataset: str, surface: str | None = None
) -> DatasetView:
    """The persona's view of ``dataset`` through ``surface`` (None: directly as a caller)."""
    ds = model.datasets[dataset]
    cols = governed_columns(ds)
    mode = enforcement(model, surface).mode if surface is not None else "catalog"
    if mode == "catalog" or not ds.governed:
        rows = rows_visible(model, persona, dataset)
        if ds.row_filter is None:
            row_disp: Disposition = "clear" if ds.governed else "ungoverned"
        elif rows.all:
            row_disp = "clear"
        elif rows.nothing:
            row_disp = "denied"
        else:
            row_disp = "filtered"
        views = tuple(column_view(model, persona, dataset, c) for c in cols)
        if not ds.governed:
            views = tuple(
                ColumnView(v.column, "ungoverned", identifier=v.identifier) for v in views
            )
        elif rows.nothing:
            views = tuple(
                ColumnView(v.column, "denied", v.mask, v.strategy, v.identifier) for v in views
            )
        return DatasetView(persona, dataset, surface, ds.platform, rows, row_disp, views)
    if mode == "no-rows":
        views = tuple(
            ColumnView(c, "denied", ds.columns[c].mask, identifier=ds.columns[c].identifier)
            for c in cols
        )
        return DatasetView(persona, dataset, surface, ds.platform, NO_ROWS, "denied", views)
    # service identity or no catalog: nothing is enforced per caller
    views = tuple(
        ColumnView(c, "ungoverned", ds.columns[c].mask, identifier=ds.columns[c].identifier)
        for c in cols
    )
    return DatasetView(persona, dataset, surface, ds.platform, ALL_ROWS, "ungoverned", views)


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


def divergences(model: PolicyModel, personas: Iterable[str] | None = None) -> list[Divergence]:
    """Every place where the same facts are looser for a persona on one surface than on
    another: a dataset and its replicas (rows and same-named columns), and every identifier
    domain (columns). Deterministic order."""
    personas = sorted(personas if personas is not None else model.personas)
    by_dataset = reaches(model)
    groups: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        groups.setdefault(model.replica_root(d), []).append(d)
    domains: dict[str, list[tuple[str, str]]] = {}
    for d in sorted(model.datasets):
        for col, spec in model.datasets[d].columns.items():
            if spec.identifier:
                domains.setdefault(spec.identifier, []).append((d, col))

    out: list[Divergence] = []
    cache: dict[tuple[str, str, str], DatasetView] = {}
    for persona in personas:

        def view(s: str, d: str, persona: str = persona) -> DatasetView:
            key = (persona, s, d)
            if key not in cache:
                cache[key] = dataset_view(model, persona, d, s)
            return cache[key]

        for root, members in sorted(groups.items()):
            places = [r for d in members for r in by_dataset[d]]
            if not any(model.datasets[d].governed for d in members):
                continue
            for a in places:
                for b in places:
                    if a == b:
                        continue
                    va, vb = view(*a), view(*b)
                    if va.rows.covers(vb.rows) and vb.rows.covers(va.rows) is False:
                        out.append(
                            Divergence(
                                persona,
                                ("dataset", root),
                                Reach(*a),
                                Reach(*b),
                                "rows",
                                f"{a[0]} shows {_describe_rows(va.rows, va.row_disposition)} of "
                                f"{a[1]}; {b[0]} shows "
                                f"{_describe_rows(vb.rows, vb.row_disposition)} of {b[1]}",
                            )
                        )
                    for ca in va.columns:
                        cb = vb.column(ca.column)
                        if cb is None:
                            continue
                        if _COLUMN_OPENNESS[ca.disposition] > _COLUMN_OPENNESS[cb.disposition]:
                            out.append(
                                Divergence(
                                    persona,
                                    ("dataset", root),
                                    Reach(a[0], a[1], ca.column),
                                    Reach(b[0], b[1], cb.column),
                                    "column",
                                    f"{a[1]}.{ca.column} is {ca.disposition} on {a[0]} but "
                                    f"{b[1]}.{cb.column} is {cb.disposition} on {b[0]}",
                                )
                            )
        for domain, cols in sorted(domains.items()):
            places_c = [(s, d, c) for d, c in cols for (s, _) in by_dataset[d]]
            for a3 in places_c:
                for b3 in places_c:
                    if a3 == b3 or model.replica_root(a3[1]) == model.replica_root(b3[1]):
                        continue  # replicas are compared above
                    ca = view(a3[0], a3[1]).column(a3[2])
                    cb = view(b3[0], b3[1]).column(b3[2])
                    if ca is None or cb is None:
                        continue
                    if _COLUMN_OPENNESS[ca.disposition] > _COLUMN_OPENNESS[cb.disposition]:
                        out.append(
                            Divergence(
                                persona,
                                ("identifier", domain),
                                Reach(*a3),
                                Reach(*b3),
                                "column",
                                f"{domain} identifiers are {ca.disposition} in "
                                f"{a3[1]}.{a3[2]} on {a3[0]} but {cb.disposition} in "
                                f"{b3[1]}.{b3[2]} on {b3[0]}",
                            )
                        )
    return out
