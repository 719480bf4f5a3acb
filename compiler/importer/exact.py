"""What was read live must come back exactly: the imported model, lowered, against what was read.

``accord plan DIR --base live:P`` right after an import of P must plan no change, so every object
the model expresses must lower to the object read: the same identity (name, or place) and the
same fingerprint, with the model's bookkeeping taken over as the live readers take it
(:func:`targets.inspect.annotate`: equal bodies as trees). Where it does not, the import keeps
what was read as it is instead: :func:`differences` returns the items to keep unmanaged, each
with why (what accord would have compiled instead), and the raise runs again without them, until
the lowering and the read agree. An object the model would compile that was not read (a mapping
table a dimension compiles on a platform that has none) takes the items of the part of the model
that makes it with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from accord.compiler.importer.found import Found, Item, ItemKey, Lifted
from accord.compiler.model.validate import Project
from accord.targets import lower_all
from accord.targets.identity import describe_object, fingerprint, identity, same_body
from accord.targets.inspect import annotate
from accord.targets.kinds import KINDS
from accord.targets.objects import CatalogObject

Part = tuple[str, ...]

#: the parts of the model a dataset holds (:attr:`~compiler.importer.found.Lifted.claims`)
_DATASET_PARTS = ("filter", "column", "projection", "aggregation", "join")


def differences(project: Project, founds: Iterable[Found], lifted: Lifted) -> dict[ItemKey, str]:
    """The items read live that the model does not lower back to, with why."""
    lowered = lower_all(project)
    kept = {k.item.key for k in lifted.kept}
    out: dict[ItemKey, str] = {}
    for found in founds:
        if not found.exact:
            continue
        p = found.platform
        catalog = lowered.get(p)
        model = {identity(o): o for o in (catalog.objects if catalog is not None else ())}
        read: dict[tuple[str, ...], Item] = {
            identity(i.obj): i for i in found.items if i.obj is not None and i.exact
        }
        for key, item in sorted(read.items()):
            assert item.obj is not None
            want = model.get(key)
            if item.key in kept:
                if want is not None:
                    out.update(
                        _part_items(want, lifted, f"{describe_object(want, p)} is kept unmanaged")
                    )
                continue
            if want is None:
                out[item.key] = "the model as imported does not compile it"
                continue
            why = _differs(item.obj, want, p)
            if why:
                out[item.key] = why
        for key, want in sorted(model.items()):
            if key not in read:
                out.update(
                    _part_items(
                        want,
                        lifted,
                        f"the model would also compile {describe_object(want, p)}, which "
                        f"{p} does not hold",
                    )
                )
    return {k: v for k, v in out.items() if k not in kept}


def _differs(live: CatalogObject, want: CatalogObject, platform: str) -> str:
    """Why ``live`` is not what the model compiles in its place, or ""."""
    have = annotate(live, want, platform)
    if fingerprint(have) == fingerprint(want):
        return ""
    fields = []
    for f in dataclasses.fields(want):
        if not f.compare or f.name in KINDS[type(want)].model_only:
            continue
        a, b = getattr(have, f.name), getattr(want, f.name)
        if f.name == "body":
            if not same_body(a, b, platform):
                fields.append(
                    f"its body ({b.sql(dialect=platform)} where it has {a.sql(dialect=platform)})"
                )
        elif a != b:
            fields.append(f"{f.name} {b!r} where it has {a!r}")
    what = "; ".join(fields) or "its definition"
    return f"accord would compile {describe_object(want, platform)} with {what}"


def _part_items(obj: CatalogObject, lifted: Lifted, why: str) -> dict[ItemKey, str]:
    """The items claimed by the part of the model that makes ``obj`` (its provenance), else by
    the parts whose items apply or carry it (a governed tag: the ABAC parts that claim its
    assignments)."""
    parts = _parts(obj.source, lifted) or _referencing(obj, lifted)
    return {i.key: f"{why}: not expressed" for part in parts for i in lifted.claims.get(part, [])}


def _parts(source: tuple[str | int, ...], lifted: Lifted) -> list[Part]:
    if len(source) >= 2 and source[0] == "entitlements":
        return [("dimension", str(source[1]))]
    if len(source) >= 2 and source[0] == "masks":
        return [("mask", str(source[1]))]
    if len(source) >= 3 and source[0] == "datasets" and source[2] == "row_filter":
        return [("filter", str(source[1]))]
    if len(source) >= 5 and source[0] == "datasets" and source[4] == "projection":
        return [("projection", str(source[1]), str(source[3]))]
    if len(source) >= 3 and source[0] == "datasets" and source[2] in ("aggregation", "join"):
        return [(str(source[2]), str(source[1]))]
    if len(source) >= 4 and source[0] == "datasets" and source[2] == "columns":
        return [("column", str(source[1]), str(source[3]))]
    if len(source) >= 2 and source[0] == "datasets":
        name = str(source[1])
        return [p for p in lifted.claims if len(p) > 1 and p[0] in _DATASET_PARTS and p[1] == name]
    return []


def _referencing(obj: CatalogObject, lifted: Lifted) -> list[Part]:
    name = str(getattr(obj, "name", "")).upper()
    if not name:
        return []

    def refers(item: Item) -> bool:
        o = item.obj
        named = [getattr(o, f, None) for f in ("tag", "policy", "function")]
        named += list(getattr(o, "masking_policies", ()))
        return any(isinstance(n, str) and n.upper() == name for n in named)

    return [part for part, items in lifted.claims.items() if any(refers(i) for i in items)]
