"""What the model uses where, computed once per lint run and shared by the rules."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from accord.compiler.lint.checks import Context
from accord.compiler.model.expressions import ExpressionError, parse_predicate
from accord.compiler.model.grants import names, principal_of, until_of
from accord.compiler.model.schema import PLATFORMS
from accord.compiler.model.shadowing import lookup, table_key, tables_read
from accord.compiler.model.validate import dimension_path
from accord.targets.objects import MappingTable


@dataclass(frozen=True)
class Usage:
    #: mask -> platform -> [(dataset, column)] of the columns it masks there
    mask_columns: dict[str, dict[str, list[tuple[str, str]]]]
    #: entitlement dimension -> platform -> datasets filtered by it there (by `entitlement:`,
    #: or by a hand-written predicate that reads the dimension's mapping table)
    dimension_datasets: dict[str, dict[str, list[str]]]


def usage(ctx: Context) -> Usage:
    """Where the masks and the entitlement dimensions are used: from the datasets alone (and
    the mapping tables a hand-written predicate reads), so the rules that ask read nothing
    else of the model (tests/test_lint_incremental.py records what each rule reads)."""

    def compute() -> Usage:
        m = ctx.model
        masks: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
        dims: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for name in sorted(m.datasets):
            ds = m.datasets[name]
            for col, spec in ds.columns.items():
                if spec.mask:
                    masks[spec.mask][ds.platform].append((name, col))
            if ds.row_filter is not None:
                for dim, _, _ in ds.filter_dimensions:
                    dims[dim][ds.platform].append(name)
                for dim in _mapping_tables_read(ctx, name):
                    if name not in dims[dim][ds.platform]:
                        dims[dim][ds.platform].append(name)
        return Usage({k: dict(v) for k, v in masks.items()}, {k: dict(v) for k, v in dims.items()})

    result: Usage = ctx.memo("usage", compute)
    return result


def referenced_principals(ctx: Context) -> frozenset[str]:
    """Every principal something refers to: a persona, an entitlement, a mask's
    ``unmasked_for``, a row filter's ``unfiltered_for``, a projection's ``allowed_for``, an
    aggregation's or a join's ``unrestricted_for``, another principal's ``inherits``."""

    def compute() -> frozenset[str]:
        m = ctx.model
        referenced: set[str] = set()
        for ds in m.datasets.values():
            if ds.row_filter is not None:
                for _, _, unfiltered in ds.filter_dimensions:
                    referenced.update(unfiltered)
                referenced.update(ds.row_filter.unfiltered_for)
            for rule in (ds.aggregation, ds.join):
                referenced.update(rule.unrestricted_for if rule is not None else ())
            for spec in ds.columns.values():
                referenced.update(spec.projection.allowed_for if spec.projection else ())
        for principals in m.personas.values():
            referenced.update(principals)
        for values in m.entitlements.values():
            for principals in values.values():
                referenced.update(names(principals))
        for mask in m.masks.values():
            referenced.update(mask.unmasked_for)
        for principal in m.principals.values():
            referenced.update(principal.inherits)
        return frozenset(referenced)

    result: frozenset[str] = ctx.memo("referenced_principals", compute)
    return result


@dataclass(frozen=True)
class GrantSite:
    """A place the model gives a principal something on a platform where it takes effect:
    the rows of an entitlement value (on the platforms of the datasets the dimension filters),
    a mask's clear value (on the platforms of the columns it masks), every row of a dataset's
    row filter (on the dataset's platform)."""

    #: the YAML path of the principal's name there
    path: tuple[Any, ...]
    #: the entry it is written in (``entitlements.DIM``, ``masks.NAME``, ``datasets.NAME``)
    obj: str
    principal: str
    platform: str
    #: what the place gives, as a message says it ("mask email shows it the clear value")
    what: str
    #: what is given, the same wherever it is given: ``("rows", dimension, value, until)``,
    #: ``("clear", mask)``, ``("every row", dataset, dimension)`` ("" for every dimension)
    given: tuple[str, ...]


def grant_sites(ctx: Context) -> list[GrantSite]:
    """Every place the model gives a principal rows, a clear value or every row, per platform
    where it takes effect, in the order of the model (computed once per lint run)."""

    def compute() -> list[GrantSite]:
        m = ctx.model
        used = usage(ctx)
        out: list[GrantSite] = []
        for dim in sorted(m.entitlements):
            on = used.dimension_datasets.get(dim, {})
            for value, entries in m.entitlements[dim].items():
                for i, entry in enumerate(entries):
                    until = until_of(entry)
                    given = ("rows", dim, str(value), until.isoformat() if until else "")
                    for platform in platforms_in(on):
                        out.append(
                            GrantSite(
                                ("entitlements", dim, value, i),
                                f"entitlements.{dim}",
                                principal_of(entry),
                                platform,
                                f"entitlement {dim} grants it {value} for "
                                f"{', '.join(on[platform])}",
                                given,
                            )
                        )
        for name in sorted(m.masks):
            for platform in platforms_in(used.mask_columns.get(name, {})):
                for i, p in enumerate(m.masks[name].unmasked_for):
                    out.append(
                        GrantSite(
                            ("masks", name, "unmasked_for", i),
                            f"masks.{name}",
                            p,
                            platform,
                            f"mask {name} shows it the clear value",
                            ("clear", name),
                        )
                    )
        for name in sorted(m.datasets):
            ds = m.datasets[name]
            if ds.row_filter is None:
                continue
            for i, p in enumerate(ds.row_filter.unfiltered_for):
                out.append(
                    GrantSite(
                        ("datasets", name, "row_filter", "unfiltered_for", i),
                        f"datasets.{name}",
                        p,
                        ds.platform,
                        f"{name}'s row filter shows it every row",
                        ("every row", name, ""),
                    )
                )
            for k, d in enumerate(ds.row_filter.dimensions or []):
                for i, p in enumerate(d.unfiltered_for):
                    out.append(
                        GrantSite(
                            (*dimension_path(ctx.project, name, k), "unfiltered_for", i),
                            f"datasets.{name}",
                            p,
                            ds.platform,
                            f"{name}'s row filter shows it every row of {d.entitlement}",
                            ("every row", name, d.entitlement),
                        )
                    )
        return out

    result: list[GrantSite] = ctx.memo("grant_sites", compute)
    return result


def describe(given: tuple[str, ...]) -> str:
    """What :attr:`GrantSite.given` gives, for a message."""
    if given[0] == "rows":
        _, dim, value, until = given
        return f"the rows of {dim} {value}" + (f" until {until}" if until else "")
    if given[0] == "clear":
        return f"the clear value of mask {given[1]}"
    _, dataset, dim = given
    return f"every row of {dataset}" + (f" for {dim}" if dim else "")


def _mapping_tables_read(ctx: Context, dataset: str) -> list[str]:
    """The entitlement dimensions whose mapping table the hand-written predicate of
    ``dataset``, on its platform, reads."""
    ds = ctx.model.datasets[dataset]
    rf = ds.row_filter
    if rf is None or rf.expression is None:
        return []
    text = rf.expression.get(ds.platform)  # type: ignore[call-overload]
    if not text:
        return []
    catalog = ctx.catalogs.get(ds.platform)
    if catalog is None:
        return []
    try:
        tree = parse_predicate(text, ds.platform)
    except ExpressionError:
        return []
    tables = {
        table_key(o.name.split("."), ds.platform): o.dimension
        for o in catalog.objects
        if isinstance(o, MappingTable)
    }
    out = []
    for key in tables_read(tree, ds.platform):
        found = lookup(tables, key)
        if found is not None and found not in out:
            out.append(found)
    return out


def platforms_in(platforms: dict[str, Any]) -> list[str]:
    """The platforms among the keys, in the canonical order."""
    return [p for p in PLATFORMS if p in platforms]


def has_key(ctx: Context, *path: Any) -> bool:
    return tuple(path) in ctx.project.source.keys
