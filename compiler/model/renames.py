"""Datasets renamed between two versions of a model: a dataset is identified by its table.

A dataset's key is the model's name for it; the platforms know its table. A key renamed with
the same table (on the same platform, compared as the platform folds names) is the same
dataset: ``accord diff`` compares it with itself, ``accord plan`` plans nothing for it, and a
probe of it asks the same question under the new name.
"""

from __future__ import annotations

from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import PolicyModel


def dataset_renames(b: PolicyModel, h: PolicyModel) -> dict[str, str]:
    """Datasets whose key the head renamed, keeping their table: base key -> head key. A
    dataset is identified by its table on its platform (compared as the platform folds names),
    so such a rename is the same dataset: nothing it exposes moves."""
    gone = {k: v for k, v in b.datasets.items() if k not in h.datasets}
    new = {
        (v.platform, facts(v.platform).fold(v.table)): k
        for k, v in h.datasets.items()
        if k not in b.datasets
    }
    out: dict[str, str] = {}
    for k, v in gone.items():
        found = new.get((v.platform, facts(v.platform).fold(v.table)))
        if found is not None:
            out[k] = found
    return out
