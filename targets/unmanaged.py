"""Live objects the model's ``unmanaged`` entries name: left alone by drift and plan.

An entry of the model's ``unmanaged`` section names an object a platform holds and the model
does not express, by its kind's keyword and its name (:mod:`compiler.model.unmanaged`; each
kind's row in :mod:`targets.kinds` says how it is named). What a live read finds that an entry
names is taken out of the live catalog before anything compares it with the model, so drift
reports nothing about it and a plan never changes or drops it; each is listed in the read's
coverage instead (``left alone``). A Databricks ABAC GRANT or DENY policy (no catalog object:
:class:`~targets.inspect.AccessPolicy`) is named as an ABAC policy is, and left alone alike. An entry that names what the model itself compiles (the
same place or name) does not take it out: the model manages it, and the entry is said to be
stale.
"""

from __future__ import annotations

import dataclasses

from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.unmanaged import entry_key, key
from accord.targets.identity import describe_object, identity
from accord.targets.inspect import LiveCatalog
from accord.targets.kinds import KINDS
from accord.targets.objects import AbacPolicy, Catalog, CatalogObject


def unmanaged_key(obj: CatalogObject, platform: str) -> tuple[str, str, str]:
    """The key an entry naming ``obj`` has (:func:`compiler.model.unmanaged.key`)."""
    row = KINDS[type(obj)]
    return key(platform, row.keyword, row.label(obj))


def entries_of(model: PolicyModel, platform: str) -> dict[tuple[str, str, str], str]:
    """Key -> entry name, of the entries on ``platform`` (statements name no live object)."""
    return {
        entry_key(e): name
        for name, e in sorted(model.unmanaged.items())
        if e.platform == platform and e.kind != "statement"
    }


def leave_alone(model: PolicyModel, expected: Catalog, live: LiveCatalog) -> LiveCatalog:
    """``live`` without the objects an unmanaged entry names, each listed in its coverage
    (``left alone``); an entry naming an object the model compiles leaves it in, said too."""
    entries = entries_of(model, live.catalog.platform)
    if not entries:
        return live
    platform = live.catalog.platform
    managed = {identity(o) for o in expected}
    kept: list[CatalogObject] = []
    for obj in live.catalog:
        name = entries.get(unmanaged_key(obj, platform))
        what = describe_object(obj, platform)
        if name is None:
            kept.append(obj)
        elif identity(obj) in managed:
            kept.append(obj)
            if live.coverage is not None:
                live.coverage.note(
                    f"unmanaged entry {name!r} names {what}, which the model compiles: compared "
                    "as the model's (remove the entry)"
                )
        elif live.coverage is not None:
            live.coverage.leave(f"{what} (unmanaged entry {name!r})")
    live.catalog = dataclasses.replace(live.catalog, objects=tuple(kept))
    access = []
    for policy in live.access_policies:  # Databricks ABAC GRANT / DENY policies
        name = entries.get(key(platform, KINDS[AbacPolicy].keyword, policy.label))
        if name is None:
            access.append(policy)
        elif live.coverage is not None:
            live.coverage.leave(
                f"ABAC {policy.verb} policy {policy.label} (unmanaged entry {name!r})"
            )
    live.access_policies = access
    return live
