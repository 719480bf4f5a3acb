"""Replicas inherit their source's column masks, by column name.

A replica (``replica_of``) holds the same facts as its source. A masked column of the source
that the replica does not declare is still a column of the replica's table, unless the
replica says the table physically lacks it (``omits: [COLUMN, ...]``, which ``accord drift``
checks on the live table). So after validation every such column is added to the replica
with the source's mask (and identifier domain), its type spelled for the replica's platform,
and everything that reads the model — the lowering, the views of ``accord analyze``, ACC403,
probes, verify — sees it; nothing downstream treats it specially.

The YAML path of an inherited column's mask is the source's (:func:`column_origin`), so a
finding or an ``accord diff`` cause about it points at the line that declares the mask.

* :func:`inherit_masks` — the model with every replica's inherited columns added;
* :func:`replica_problems` — what cannot stand once they are (``omits``, types, filters);
* :func:`column_origin` — where the mask of a dataset's column is declared.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import ColumnSpec, Dataset, PolicyModel
from accord.compiler.model.types import translate_type

Path = tuple[Any, ...]


def fold(column: str, platform: str) -> str:
    """How ``platform`` compares an unquoted column name."""
    return facts(platform).fold(column)


def _find(columns: Any, column: str) -> str | None:
    folded = column.lower()
    return next((c for c in columns if c.lower() == folded), None)


def _order(model: PolicyModel) -> list[str]:
    """Replicas, each after its source (a source's own inherited columns pass on)."""

    def depth(name: str) -> int:
        n, seen = 0, set()
        while (parent := model.datasets[name].replica_of) in model.datasets and name not in seen:
            seen.add(name)
            name, n = parent, n + 1  # type: ignore[assignment]
        return n

    return sorted(
        (d for d in model.datasets if model.datasets[d].replica_of), key=lambda d: (depth(d), d)
    )


def replica_problems(model: PolicyModel) -> list[tuple[Path, str]]:
    """(YAML path, message) for what inheritance cannot stand, read on the model *after*
    :func:`inherit_masks`: ``omits`` on a dataset that is no replica, naming no masked column
    of the source, or naming a column the replica declares; an inherited column the replica's
    row filter reads; a masked source column whose type has no spelling on the replica's
    platform."""
    out: list[tuple[Path, str]] = []
    for name in sorted(model.datasets):
        ds = model.datasets[name]
        base = ("datasets", name, "omits")
        if ds.replica_of is None:
            if ds.omits:
                out.append((base, "'omits' applies to replicas only (datasets with replica_of)"))
            continue
        src = model.datasets.get(ds.replica_of)
        if src is None:
            continue  # reported as an unknown dataset
        masked = src.masked_columns
        seen: set[str] = set()
        for i, col in enumerate(ds.omits):
            if col.lower() in seen:
                out.append(((*base, i), f"{col} is listed twice"))
                continue
            seen.add(col.lower())
            if _find(masked, col) is None:
                lowered = {c.lower(): c for c in masked}
                close = _close_matches(col.lower(), list(lowered), n=1)
                hint = f" (did you mean {lowered[close[0]]!r}?)" if close else ""
                known = ", ".join(sorted(masked)) or "none"
                out.append(
                    (
                        (*base, i),
                        f"{col} is not a masked column of {ds.replica_of}{hint}: 'omits' names "
                        f"the source's masked columns this table lacks (masked: {known})",
                    )
                )
            elif (declared := _find(ds.columns, col)) is not None:
                out.append(
                    (
                        (*base, i),
                        f"{col} is declared under datasets.{name}.columns as {declared} and "
                        "omitted: a column the table lacks cannot be declared",
                    )
                )
        rf = ds.row_filter
        filtered = [c for _, c, _ in ds.filter_dimensions]
        filtered += list((rf.arguments or {}) if rf is not None else {})
        for col in sorted(masked):
            if _find(ds.columns, col) or _find(ds.omits, col):
                if _find(ds.inherited, col) is not None and _find(filtered, col) is not None:
                    out.append(
                        (
                            ("datasets", name, "row_filter"),
                            f"{name} inherits the mask of {ds.replica_of}.{col}, which its row "
                            "filter reads: a column may be in a row filter or a mask, not both "
                            f"(declare {col} under datasets.{name}.columns unmasked if that is "
                            "intended)",
                        )
                    )
                continue
            out.append(
                (
                    ("datasets", name, "replica_of"),
                    f"{name} inherits the mask of {ds.replica_of}.{col}, whose type "
                    f"{masked[col].type} has no {ds.platform} spelling: declare {col} under "
                    f"datasets.{name}.columns with its {ds.platform} type",
                )
            )
    return out


def inherit_masks(model: PolicyModel) -> PolicyModel:
    """``model`` with, on every replica, each masked column of its source it neither declares
    nor omits, masked the same way; the model itself when no replica inherits anything (so
    estates that declare every column are unchanged, byte for byte)."""
    datasets = dict(model.datasets)
    changed = False
    for name in _order(model):
        ds = datasets[name]
        src_name = ds.replica_of
        if src_name is None or src_name not in datasets:
            continue
        src = datasets[src_name]
        added: dict[str, ColumnSpec] = {}
        origin: dict[str, tuple[str, str]] = {}
        for col, spec in src.masked_columns.items():
            if _find(ds.columns, col) is not None or _find(ds.omits, col) is not None:
                continue
            typ = translate_type(spec.type, src.platform, ds.platform)
            if typ is None:
                continue  # a validation error (inheritance_problems)
            mine = fold(col, ds.platform)
            added[mine] = spec.model_copy(update={"type": typ})
            origin[mine] = src.inherited.get(col, (src_name, col))
        if not added:
            continue
        changed = True
        new: Dataset = ds.model_copy(update={"columns": {**ds.columns, **added}})
        new._inherited = {**ds.inherited, **origin}
        datasets[name] = new
    if not changed:
        return model
    return model.model_copy(update={"datasets": datasets})


def column_origin(model: PolicyModel, dataset: str, column: str) -> tuple[str, str]:
    """(dataset, column) whose ``columns`` entry declares ``dataset.column``: the source's for a
    column a replica inherits, else the dataset's own (the name as declared when it is)."""
    ds = model.datasets[dataset]
    key = _find(ds.columns, column) or column
    return ds.inherited.get(key, (dataset, key))


def column_path(model: PolicyModel, dataset: str, column: str) -> Path:
    """The YAML path of the ``columns`` entry that declares ``dataset.column``."""
    d, c = column_origin(model, dataset, column)
    return ("datasets", d, "columns", c)


def _close_matches(word: str, possibilities: Any, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches``, importing difflib only when a message needs a suggestion."""
    import difflib  # noqa: PLC0415 - only when a message needs a suggestion

    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)
