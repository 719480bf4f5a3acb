"""What the model uses where, computed once per lint run and shared by the rules."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from accord.compiler.lint.checks import Context
from accord.compiler.model.expressions import ExpressionError, parse_predicate
from accord.compiler.model.grants import names
from accord.compiler.model.schema import PLATFORMS
from accord.compiler.model.shadowing import lookup, table_key, tables_read
from accord.targets.objects import MappingTable


@dataclass(frozen=True)
class Usage:
    #: mask -> platform -> [(dataset, column)] of the columns it masks there
    mask_columns: dict[str, dict[str, list[tuple[str, str]]]]
    #: entitlement dimension -> platform -> datasets filtered by it there (by `entitlement:`,
    #: or by a hand-written predicate that reads the dimension's mapping table)
    dimension_datasets: dict[str, dict[str, list[str]]]
    #: every principal something refers to
    referenced_principals: frozenset[str]


def usage(ctx: Context) -> Usage:
    def compute() -> Usage:
        m = ctx.model
        masks: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
        dims: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        referenced: set[str] = set()
        for name in sorted(m.datasets):
            ds = m.datasets[name]
            for col, spec in ds.columns.items():
                if spec.mask:
                    masks[spec.mask][ds.platform].append((name, col))
            if ds.row_filter is not None:
                for dim, _, unfiltered in ds.filter_dimensions:
                    dims[dim][ds.platform].append(name)
                    referenced.update(unfiltered)
                for dim in _mapping_tables_read(ctx, name):
                    if name not in dims[dim][ds.platform]:
                        dims[dim][ds.platform].append(name)
                referenced.update(ds.row_filter.unfiltered_for)
        for principals in m.personas.values():
            referenced.update(principals)
        for values in m.entitlements.values():
            for principals in values.values():
                referenced.update(names(principals))
        for mask in m.masks.values():
            referenced.update(mask.unmasked_for)
        for principal in m.principals.values():
            referenced.update(principal.inherits)
        return Usage(
            {k: dict(v) for k, v in masks.items()},
            {k: dict(v) for k, v in dims.items()},
            frozenset(referenced),
        )

    result: Usage = ctx.memo("usage", compute)
    return result


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
