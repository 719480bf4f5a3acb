"""The live front end of ``accord import``: what a platform holds, read by accord's own readers.

Two passes over one reader, through the platform's connection (read only, least privilege:
the grants the README gives ``accord drift``'s reader):

1. the *survey* (``targets/<platform>/survey.py``) says what the scope holds without a model:
   the policies in force there, with their bodies, and where each is placed;
2. the survey's findings become the catalog the reader expects (the governance schema: the
   schema that holds most of those policies; the mapping tables their lookups read
   (:func:`compiler.importer.shapes.filter_shape`); the salt functions their hashes call; the
   governed tables; the tags and ABAC policies), and the ordinary read follows, exactly as
   ``accord drift`` and ``accord plan --base live:P`` read what the imported model names: the
   mapping tables' rows, the salt functions (never their bodies), the policies of the
   governance schema, the placements on the governed tables. Its coverage is the import's.

Every object read is an :class:`~compiler.importer.found.Item` whose SQL is the object rendered
by the platform's own renderer (a salt function as a line that names it: its body is never
read; a salt written as a literal in a policy body withheld), to be lowered back exactly. A
policy defined outside the governance schema and placed in the scope is read by the survey
alone (the ordinary read reads one governance schema): it is kept, never expressed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from accord.compiler.connect.executor import open_executor
from accord.compiler.core.platforms import facts
from accord.compiler.importer.found import Found, Item
from accord.compiler.importer.shapes import filter_shape, mask_shape, withhold
from accord.targets import get_target
from accord.targets.abac import MASK_TAG, ROW_KEY_TAG
from accord.targets.base import UnsafeOutput
from accord.targets.identity import identity
from accord.targets.inspect import AccessPolicy, LiveCatalog, sort_objects, unreadable
from accord.targets.objects import (
    AbacPolicy,
    AggregationAttachment,
    AggregationPolicy,
    Catalog,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.platform import platform as platform_named

_DEFAULT_STYLE = {"snowflake": "column", "databricks": "table"}

#: the kinds of policy a survey finds defined (a governance schema holds them)
_POLICIES = (RowFilterPolicy, MaskPolicy, ProjectionPolicy, AggregationPolicy, JoinPolicy)
#: the attachments a survey finds, which the ordinary read reads on the governed tables
_ATTACHMENTS = (
    RowFilterAttachment,
    MaskAttachment,
    ProjectionAttachment,
    AggregationAttachment,
    JoinAttachment,
)


def read_live(
    platform: str, options: Any, scopes: list[str], progress: Callable[[str], None]
) -> Found:
    """What ``platform`` holds in ``scopes`` (none: everything the reader sees)."""
    progress(f"{platform}: connecting")
    executor = open_executor(platform, options)
    try:
        reader = platform_named(platform).survey()(
            executor, Catalog(platform, "", _DEFAULT_STYLE[platform]), progress, options.jobs
        )
        try:
            surveyed = reader.survey(scopes)
            expected = expected_catalog(platform, surveyed)
            reader.expect(expected)
            if expected.governance_schema:
                live = reader.read()
            else:  # nothing in force in the scope: nothing more to read
                live = reader.finish(LiveCatalog(Catalog(platform, "", expected.style)), [])
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as err:
            raise unreadable(platform, "", err) from None
    finally:
        executor.close()
    gov = expected.governance_schema
    fold = facts(platform).fold
    read = {identity(o) for o in live.catalog}
    foreign = [
        o
        for o in surveyed
        if isinstance(o, _POLICIES)
        and fold(o.name.rsplit(".", 1)[0]) != fold(gov)
        and identity(o) not in read
    ]
    objects = sort_objects([*live.catalog.objects, *foreign])
    items = [_item(platform, o) for o in objects]
    access = {a.label: a for a in [*getattr(reader, "surveyed_access", []), *live.access_policies]}
    items += [_access_item(platform, a) for _, a in sorted(access.items())]
    said = tuple(f"{_where(a)}:" for a in access.values())
    notes = [f"ignored: {what}" for what in live.ignored if not what.startswith(said)]
    if foreign:
        notes.append(
            f"{len(foreign)} polic{'y' if len(foreign) == 1 else 'ies'} in force in the scope "
            f"live outside the governance schema {gov}: read by the survey"
        )
    return Found(
        platform,
        gov or None,
        expected.style,
        items,
        exact=True,
        coverage=live.coverage,
        notes=notes,
    )


def expected_catalog(platform: str, surveyed: list[CatalogObject]) -> Catalog:
    """The catalog the ordinary read expects, from what the survey found."""
    fold = facts(platform).fold
    policies = [o for o in surveyed if isinstance(o, _POLICIES)]
    schemas = Counter(fold(o.name.rsplit(".", 1)[0]) for o in policies if o.name.count(".") == 2)
    gov = ""
    if schemas:
        top = max(schemas.values())
        gov = min(s for s, n in schemas.items() if n == top)
        gov = next(
            o.name.rsplit(".", 1)[0] for o in policies if fold(o.name.rsplit(".", 1)[0]) == gov
        )
    abac = [o for o in surveyed if isinstance(o, AbacPolicy)]
    tagged = [o for o in surveyed if isinstance(o, TagAssignment)]
    plain, tagged_style = facts(platform).styles
    if not facts(platform).tag_masking:  # the governance tags are those ABAC policies match
        style = tagged_style if abac else plain
        keys = {
            k
            for k in (MASK_TAG, ROW_KEY_TAG)
            if any(k in c for p in abac for c, _ in p.match_columns)
        }
        tags = [Tag(k) for k in sorted(keys)]
        tagged = [t for t in tagged if t.tag in keys]
    else:
        style = tagged_style if tagged else plain
        tags = [Tag(n) for n in sorted({t.tag for t in tagged})]
    objects: list[CatalogObject] = []
    seen: set[str] = set()
    for o in policies:
        if isinstance(o, RowFilterPolicy):
            shape = filter_shape(o.body, platform)
            for look in shape.lookups if shape is not None else ():
                name = look.table if look.table.count(".") == 2 else f"{gov}.{look.table}"
                if fold(name) not in seen:
                    seen.add(fold(name))
                    objects.append(
                        MappingTable(
                            name, "", look.key_column, look.principal_column, (), look.expiry_column
                        )
                    )
        elif isinstance(o, MaskPolicy) and o.params:
            shape = mask_shape(o.body, o.params[0].name, platform)
            salt = shape.salt_function if not isinstance(shape, str) else None
            if salt is not None and salt.count(".") == 2 and fold(salt) not in seen:
                seen.add(fold(salt))
                objects.append(SaltFunction(salt, "", ""))
    objects += [o for o in policies if fold(o.name.rsplit(".", 1)[0]) == fold(gov)]
    objects += tags
    objects += [o for o in surveyed if isinstance(o, _ATTACHMENTS)]
    objects += tagged + abac
    return Catalog(platform, gov, style, tuple(objects))  # type: ignore[arg-type]


def _where(a: AccessPolicy) -> str:
    return f"ABAC policy {a.name} on {a.securable_type.lower()} {a.securable}"


def _access_item(platform: str, a: AccessPolicy) -> Item:
    """A Databricks ABAC GRANT or DENY policy as an item kept unmanaged: the policies API answers
    its fields, not SQL, so its SQL is what was read, in comment lines (lint reads nothing
    in them); the model has no such policies."""
    except_ = f" EXCEPT {', '.join(a.except_)}" if a.except_ else ""
    text = (
        f"-- {_where(a)}, as the Unity Catalog policies API answered it (no SQL is read back):\n"
        f"-- {a.verb} {', '.join(a.privileges) or 'no privilege'} TO "
        f"{', '.join(a.to) or 'nobody'}{except_}\n"
    )
    what = "grants privileges" if a.verb == "GRANT" else "denies privileges"
    why = (
        f"an ABAC {a.verb} policy ({what} on the securables its conditions match): the model "
        "governs rows and columns, not privileges"
    )
    if a.widens:
        why += "; it widens what identities reach on the governed tables it covers: review it"
    return Item(
        platform, None, text, f"{platform} (live)", label_=a.label, why=why, kind_="abac_policy"
    )


def _item(platform: str, obj: CatalogObject) -> Item:
    """``obj`` as an item: its SQL as the platform's renderer writes it (never a salt); an
    aggregation attachment set with an entity key with why the model cannot say it."""
    origin = f"{platform} (live)"
    if isinstance(obj, AggregationAttachment) and obj.entity_key:
        text = get_target(platform).render_object(obj)[1]
        keys = ", ".join(obj.entity_key)
        why = (
            f"an aggregation policy set with ENTITY KEY ({keys}): the model's `aggregation` "
            "has no entity key"
        )
        return Item(platform, obj, text, origin, why=why, exact=True)
    if isinstance(obj, RowFilterPolicy | MaskPolicy) and not obj.params:
        # a function of nothing is a salt function: its body (the salt) is dropped unseen
        obj = SaltFunction(obj.name, "", "")
    if isinstance(obj, SaltFunction):
        text = f"-- {obj.name}(): a salt function; its body (the salt) is never read by accord"
        return Item(platform, obj, text, origin, exact=True)
    withheld = ""
    shown = obj
    if isinstance(obj, MaskPolicy) and obj.params:
        body, found = withhold(obj.body, obj.params[0].name, platform)
        if found:
            shown = replace(obj, body=body)
            withheld = "a salt written as a literal in its body"
    try:
        rendered = get_target(platform).render_object(shown)
    except (UnsafeOutput, ValueError):
        rendered = None
    text = rendered[1] if rendered is not None else f"-- {type(obj).__name__} read from {platform}"
    return Item(platform, obj, text, origin, withheld=withheld, exact=True)
