"""The raise step of ``accord import``: the catalog objects read on each platform, as a model.

What the model expresses is recognised, in this order, and every part of the model records
the items it expresses (:attr:`~compiler.importer.found.Lifted.claims`):

1. *dimensions*: a mapping table written as accord writes one (``<governance
   schema>.<DIM>_GRANTS`` with ``<dim>_code`` and ``role_name`` / ``group_name``, perhaps
   ``valid_until``) is an entitlement dimension, its rows its grants (a dated row a grant
   ``until`` that day); one dimension for both platforms when they name it alike;
2. *row filters*: a filter policy whose body looks a value up in such tables
   (:func:`compiler.importer.shapes.filter_shape`) is an entitlement filter of those
   dimensions, the identities it admits every row for its ``unfiltered_for``; any other
   filter body is a hand-written predicate (``expression``, its parameters renamed to the
   columns it is attached on), kept as written so lint reads it (a ``CURRENT_ROLE()`` lookup
   is such a predicate: ACC101);
3. *masks*: a mask body of one of the model's strategies
   (:func:`compiler.importer.shapes.mask_shape`) is a mask named after its policy (``<mask>_mask``),
   its clear identities its ``unmasked_for``, its salt function a salt reference to fill
   (``env:<MASK>_SALT_<PLATFORM>``: the salt is never read); one mask for both platforms when
   they name it alike and agree;
4. *placements*: attachments (and, under ABAC, the columns an ABAC policy's conditions match,
   with its ``EXCEPT`` as who sees every row or the clear value; with Snowflake tag-based
   masking, the columns a mask's tag is set on) are the datasets' row filters and masked
   columns; a dataset is named from its table (from a hand-written filter's name where it
   says the dataset's), and its columns' types are the policies' parameter types;
5. *projection, aggregation and join policies* (Snowflake) of the shapes accord compiles, with
   their attachments: a column's ``projection``, a dataset's ``aggregation`` and ``join``
   (:mod:`compiler.importer.constraints`);
6. *principals* (:mod:`compiler.importer.principals`): every identity named.

Everything else is kept (:class:`~compiler.importer.found.Kept`) with why: a policy of no
shape the model has (a literal salt, a weak hash, a CASE on CURRENT_ROLE(), an ABAC GRANT or
DENY policy, a policy at metastore scope, an aggregation set with an entity key), a placement of
a policy the model does not express, conditional masking, a statement. Items the caller
excludes (what did not lower back exactly: :mod:`compiler.importer.exact`) are kept with the
caller's reason.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from accord.compiler.core.platforms import facts
from accord.compiler.importer.constraints import (
    ConstraintAttachment,
    ConstraintPolicy,
    place_constraints,
    read_constraints,
    written,
)
from accord.compiler.importer.found import Found, Item, ItemKey, Kept, Lifted
from accord.compiler.importer.places import Place, Placer, not_a_place
from accord.compiler.importer.principals import Naming, not_an_identity, snake
from accord.compiler.importer.shapes import (
    FilterShape,
    MaskShape,
    filter_shape,
    mask_shape,
    rename_columns,
)
from accord.compiler.model.grants import EXPIRY_COLUMN
from accord.targets import sql as tsql
from accord.targets.base import type_suffix
from accord.targets.objects import (
    AbacPolicy,
    MappingTable,
    MaskPolicy,
    RowFilterPolicy,
    SaltFunction,
    Tag,
)

Part = tuple[str, ...]


@dataclass
class _Filter:
    """A row filter policy read, and what it is."""

    item: Item
    shape: FilterShape | None
    #: the dimension of each lookup (shape only)
    dims: tuple[str, ...] = ()
    #: a hand-written filter's dataset, as its name or accord's comment says
    dataset: str | None = None


@dataclass
class _Mask:
    item: Item
    name: str
    ptype: str
    shape: MaskShape


@dataclass
class _Platform:
    found: Found
    gov: str
    tables: dict[str, Item] = field(default_factory=dict)
    salts: dict[str, Item] = field(default_factory=dict)
    filters: dict[str, Item] = field(default_factory=dict)
    masks: dict[str, Item] = field(default_factory=dict)
    tags: dict[str, Item] = field(default_factory=dict)
    places: list[Item] = field(default_factory=list)
    #: projection, aggregation and join policies (folded name), and their attachments
    constraints: dict[str, Item] = field(default_factory=dict)
    constraint_places: list[Item] = field(default_factory=list)
    #: folded mapping table -> dimension
    dimension_of: dict[str, str] = field(default_factory=dict)
    read_filters: dict[str, _Filter] = field(default_factory=dict)
    read_masks: dict[str, _Mask] = field(default_factory=dict)


def lift(founds: list[Found], exclude: dict[ItemKey, str] | None = None) -> Lifted:
    """The model (as plain data) of what ``founds`` hold, and what it keeps unmanaged."""
    return _Lift(founds, exclude or {}).run()


class _Lift:
    def __init__(self, founds: list[Found], exclude: dict[ItemKey, str]) -> None:
        self.founds = founds
        self.exclude = exclude
        self.kept: list[Kept] = []
        self.kept_keys: set[ItemKey] = set()
        self.claims: dict[Part, list[Item]] = defaultdict(list)
        self.naming = Naming()
        self.notes: list[str] = []
        self.salts: list[tuple[str, str, str, str]] = []
        self.platforms: dict[str, _Platform] = {}
        #: dimension -> value -> [(platform, identity, day)]
        self.grants: dict[str, dict[str, list[tuple[str, str, str | None]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        #: mask name -> its spec per platform
        self.mask_specs: dict[str, dict[str, _Mask]] = defaultdict(dict)
        #: dataset name -> spec (plain data, principals as (platform, identity))
        self.datasets: dict[str, dict[str, Any]] = {}
        #: platforms whose read holds something but names no governance schema
        self.unplaced: list[str] = []

    # ---------------------------------------------------------------------------- helpers

    def keep(self, item: Item, why: str) -> None:
        if item.key not in self.kept_keys:
            self.kept_keys.add(item.key)
            self.kept.append(Kept(item, self.exclude.get(item.key, why)))

    def usable(self, item: Item) -> bool:
        """Whether the raise may express ``item`` (not excluded, not kept already)."""
        if item.key in self.exclude:
            self.keep(item, self.exclude[item.key])
            return False
        return item.key not in self.kept_keys

    # ---------------------------------------------------------------------------- the run

    def run(self) -> Lifted:
        for found in self.founds:
            if found.governance_schema is None:
                for item in found.items:
                    self.keep(
                        item,
                        item.why or (_STATEMENT if item.obj is None else _NO_GOVERNANCE_SCHEMA),
                    )
                if found.items:
                    self.unplaced.append(found.platform)
                continue
            self.platforms[found.platform] = self.index(found)
        for p in self.platforms.values():
            self.dimensions(p)
        for p in self.platforms.values():
            self.filters(p)
            self.masks(p)
        for p in self.platforms.values():
            self.place(p)
        for p in self.platforms.values():
            place_constraints(self, p, read_constraints(self, p))
        return self.assemble()

    def index(self, found: Found) -> _Platform:
        fold = facts(found.platform).fold
        assert found.governance_schema is not None
        p = _Platform(found, fold(found.governance_schema))
        for item in found.items:
            obj = item.obj
            if obj is None or item.why:
                self.keep(item, item.why or _STATEMENT)
            elif isinstance(obj, MappingTable):
                p.tables[fold(obj.name)] = item
            elif isinstance(obj, SaltFunction):
                p.salts[fold(obj.name)] = item
            elif isinstance(obj, RowFilterPolicy):
                p.filters[fold(obj.name)] = item
            elif isinstance(obj, MaskPolicy):
                p.masks[fold(obj.name)] = item
            elif isinstance(obj, Tag):
                p.tags[fold(obj.name)] = item
            elif isinstance(obj, ConstraintPolicy):
                p.constraints[fold(obj.name)] = item
            elif isinstance(obj, ConstraintAttachment):
                p.constraint_places.append(item)
            else:
                p.places.append(item)
        return p

    # ---------------------------------------------------------------------------- dimensions

    def dimensions(self, p: _Platform) -> None:
        f = facts(p.found.platform)
        for folded, item in sorted(p.tables.items()):
            if not self.usable(item):
                continue
            t = item.obj
            assert isinstance(t, MappingTable)
            schema, _, leaf = folded.rpartition(".")
            suffix = f.fold("_grants")
            dim = leaf[: -len(suffix)].lower() if leaf.endswith(suffix) else ""
            shaped = (
                schema == p.gov
                and re.fullmatch(r"[a-z][a-z0-9_]*", dim) is not None
                and f.fold(t.key_column) == f.fold(f"{dim}_code")
                and f.fold(t.principal_column) == f.fold(f"{f.principal_kind}_name")
                and (t.expiry_column is None or f.fold(t.expiry_column) == f.fold(EXPIRY_COLUMN))
            )
            if not shaped:
                self.keep(
                    item,
                    f"a mapping table of another shape than accord's (<governance schema>."
                    f"<DIMENSION>_GRANTS with <dimension>_code and {f.principal_kind}_name): "
                    "the policies that read it are kept as written",
                )
                continue
            bad = not_an_identity(p.found.platform, sorted({str(r[1]) for r in t.rows}))
            if bad:
                self.keep(item, f"a mapping table whose rows the model cannot hold: {bad}")
                continue
            p.dimension_of[folded] = dim
            self.claims[("dimension", dim)].append(item)
            self.grants.setdefault(dim, defaultdict(list))
            for row in t.rows:
                value, identity = str(row[0]), str(row[1])
                day = row[2] if len(row) > 2 else None
                self.naming.grant(p.found.platform, dim, identity, value, day)
                self.grants[dim][value].append((p.found.platform, identity, day))

    # ---------------------------------------------------------------------------- filters

    def outside(self, p: _Platform, item: Item) -> bool:
        """A policy read live outside the governance schema: the model's policies are all in
        it, so this one cannot be the model's (kept, said so)."""
        name = str(getattr(item.obj, "name", ""))
        if item.exact and facts(p.found.platform).fold(name.rsplit(".", 1)[0]) != p.gov:
            self.keep(
                item,
                f"it is defined in {name.rsplit('.', 1)[0]}, outside the governance schema "
                f"{p.found.governance_schema} that holds the model's policies",
            )
            return True
        return False

    def filters(self, p: _Platform) -> None:
        platform = p.found.platform
        fold = facts(platform).fold
        for folded, item in sorted(p.filters.items()):
            if not self.usable(item) or self.outside(p, item):
                continue
            obj = item.obj
            assert isinstance(obj, RowFilterPolicy)
            shape = filter_shape(obj.body, platform)
            dims: list[str] = []
            if shape is not None:
                params = [x.name.lower() for x in obj.params]
                for look in shape.lookups:
                    dim = p.dimension_of.get(fold(look.table))
                    if dim is None and "." not in look.table:
                        dim = p.dimension_of.get(f"{p.gov}.{fold(look.table)}")
                    dims.append(dim or "")
                if (
                    not all(dims)
                    or len(set(dims)) != len(dims)
                    or [look.param.lower() for look in shape.lookups] != params
                ):
                    shape, dims = None, []
            named = [
                *(shape.exempt if shape else ()),
                *(i for k in (shape.lookups if shape else ()) for i in k.exempt),
            ]
            bad = not_an_identity(platform, named)
            if bad:
                self.keep(item, f"the model cannot express this row filter: {bad}")
                continue
            found = _Filter(item, shape, tuple(dims))
            if shape is None:
                found.dataset = _hand_written_dataset(obj)
            else:
                said = _said(obj.comment, r"accord: rows by entitlements? ")
                self.hint(platform, shape.exempt, said.get("row", []))
                for dim, look in zip(dims, shape.lookups, strict=True):
                    self.hint(platform, look.exempt, said.get(dim, []))
            p.read_filters[folded] = found

    def hint(
        self, platform: str, identities: tuple[str, ...], names: list[str], ordered: bool = True
    ) -> None:
        """The names accord's comment gives ``identities``: in the lowering's order (the
        principals sorted by name) when ``ordered``, else (an ABAC policy's sorted identities)
        each name to the identity it is the snake case of first."""
        for identity, name in _matched(identities, names, ordered):
            self.naming.see(platform, identity, name)
        for identity in identities:
            self.naming.see(platform, identity)

    # ---------------------------------------------------------------------------- masks

    def masks(self, p: _Platform) -> None:
        platform = p.found.platform
        f = facts(platform)
        for folded, item in sorted(p.masks.items()):
            if not self.usable(item) or self.outside(p, item):
                continue
            obj = item.obj
            assert isinstance(obj, MaskPolicy)
            if not obj.params:
                self.keep(item, "a mask function without parameters")
                continue
            if len(obj.params) > 1:
                self.keep(
                    item,
                    "conditional masking: its signature takes other columns besides the masked "
                    "value, which the model's masks do not",
                )
                continue
            ptype = obj.params[0].type
            shape = mask_shape(obj.body, obj.params[0].name, platform)
            if isinstance(shape, str):
                self.keep(item, f"the model cannot express this mask: {shape}")
                continue
            bad = not_an_identity(platform, shape.clear)
            if bad:
                self.keep(item, f"the model cannot express this mask: {bad}")
                continue
            if shape.strategy != "nullify" and ptype != f.string_type:
                self.keep(
                    item,
                    f"a {shape.strategy} mask of type {ptype}: the model's hash, redact and "
                    "partial masks apply to string columns only",
                )
                continue
            name = _mask_name(obj.name, ptype, platform)
            said = _said(obj.comment, r"accord: mask [a-z0-9_]+ \([a-z]+\)")
            self.hint(platform, shape.clear, said.get("clear", []))
            for identity in shape.clear:
                self.naming.clears(platform, name, identity)
            p.read_masks[folded] = _Mask(item, name, ptype, shape)

    # ---------------------------------------------------------------------------- placements

    def place(self, p: _Platform) -> None:
        platform = p.found.platform
        fold = facts(platform).fold
        string_masks = {
            k for k, m in p.read_masks.items() if m.ptype == facts(p.found.platform).string_type
        }
        places = Placer(p.found.platform, p.tags, string_masks, self.usable, self.keep).read(
            p.places
        )
        kept = []
        for place in places:
            bad = not_a_place(place.table, place.column) or not_an_identity(
                p.found.platform, place.excepted or ()
            )
            if bad:
                for item in place.items:
                    self.keep(item, bad)
            else:
                kept.append(place)
        places = kept
        for place in sorted(places, key=lambda x: (fold(x.table), x.column or "", x.policy)):
            if place.column is None:
                self.place_filter(p, place)
            else:
                self.place_mask(p, place)

    def place_filter(self, p: _Platform, place: Place) -> None:
        platform = p.found.platform
        fold = facts(platform).fold
        read = p.read_filters.get(fold(place.policy))
        if read is None or read.item.key in self.kept_keys:
            for item in place.items:
                self.keep(item, f"it applies {place.policy}, which the model does not express")
            return
        obj = read.item.obj
        assert isinstance(obj, RowFilterPolicy)
        if len(place.columns) != len(obj.params):
            for item in place.items:
                self.keep(item, f"it passes {len(place.columns)} columns to {place.policy}")
            return
        name = self.dataset_name(p, place.table, place.dataset or read.dataset)
        if "row_filter" in self.datasets.get(name, {}):
            for item in place.items:
                self.keep(item, f"{place.table} has another row filter already")
            return
        part = ("filter", name)
        if read.shape is not None:
            ds = self.datasets.setdefault(name, _dataset(platform, place.table))
            exempt_all = place.excepted if place.excepted is not None else read.shape.exempt
            if place.excepted is not None:
                self.hint_abac(platform, place.excepted, place.items)
            entries = [
                {
                    "entitlement": dim,
                    "column": column,
                    "unfiltered_for": [(platform, i) for i in look.exempt],
                }
                for dim, column, look in zip(
                    read.dims, place.columns, read.shape.lookups, strict=True
                )
            ]
            ds["row_filter"] = {
                "entries": entries,
                "unfiltered_for": [(platform, i) for i in exempt_all],
            }
            for dim in read.dims:
                part_dim = ("dimension", dim)
                self.claims.setdefault(part_dim, [])
        else:
            if place.excepted:
                for item in place.items:
                    self.keep(item, "a hand-written ABAC row filter with EXCEPT principals")
                return
            params = [x.name for x in obj.params]
            shadowed = _shadowed(obj.body, params, place.columns)
            if shadowed:
                for item in [read.item, *place.items]:
                    self.keep(
                        item,
                        f"a hand-written row filter whose parameter {shadowed[0]} would take the "
                        f"name of the column it is attached on, {shadowed[1]}, which a column the "
                        "body reads also has: the predicate would read that column instead",
                    )
                return
            body = rename_columns(
                obj.body, {a.lower(): c for a, c in zip(params, place.columns, strict=True)}
            )
            ds = self.datasets.setdefault(name, _dataset(platform, place.table))
            ds["row_filter"] = {
                "expression": {platform: tsql.render(body, platform)},
                "arguments": {c: x.type for c, x in zip(place.columns, obj.params, strict=True)},
            }
        for c, x in zip(place.columns, obj.params, strict=True):
            if x.type != facts(platform).string_type and read.shape is not None:
                ds["columns"].setdefault(c, {"type": x.type})
        self.claims[part] += [read.item, *place.items]

    def hint_abac(self, platform: str, excepted: tuple[str, ...], items: list[Item]) -> None:
        for item in items:
            obj = item.obj
            if isinstance(obj, AbacPolicy):
                said = _said(obj.comment, r"accord: [^;]*")
                names = said.get("row", []) or said.get("clear", [])
                self.hint(platform, excepted, names, ordered=False)
        for identity in excepted:
            self.naming.see(platform, identity)

    def place_mask(self, p: _Platform, place: Place) -> None:
        platform = p.found.platform
        fold = facts(platform).fold
        read = p.read_masks.get(fold(place.policy))
        if read is None or read.item.key in self.kept_keys:
            for item in place.items:
                self.keep(item, f"it applies {place.policy}, which the model does not express")
            return
        clear = read.shape.clear
        if place.excepted is not None:
            if read.shape.clear:
                for item in place.items:
                    self.keep(item, "an ABAC mask whose function also decides who sees the value")
                return
            clear = place.excepted
            self.hint_abac(platform, place.excepted, place.items)
            for identity in clear:
                self.naming.clears(platform, read.name, identity)
        mine = self.mask_specs[read.name].get(platform)
        if mine is not None and mine.item.key != read.item.key and _spec(mine) != _spec(read):
            for item in place.items:
                self.keep(item, f"two policies read as mask {read.name} say different things")
            return
        others = [m for q, m in self.mask_specs[read.name].items() if q != platform]
        if others and _spec(others[0]) != _spec(read):
            # the other platform's mask of this name is another mask: this one is its own
            renamed = f"{read.name}_{platform}"
            self.notes.append(
                f"mask {read.name}: the {platform} policy {read.item.label} is not the other "
                f"platform's mask of that name: imported as mask {renamed}"
            )
            read = _Mask(read.item, renamed, read.ptype, read.shape)
        self.mask_specs[read.name][platform] = _Mask(
            read.item, read.name, read.ptype, MaskShape(**{**read.shape.__dict__, "clear": clear})
        )
        name = self.dataset_name(p, place.table, None)
        ds = self.datasets.setdefault(name, _dataset(platform, place.table))
        assert place.column is not None
        if place.column in ds["columns"] and "mask" in ds["columns"][place.column]:
            for item in place.items:
                self.keep(item, f"{place.table}.{place.column} is masked twice")
            return
        ds["columns"][place.column] = {"type": read.ptype, "mask": read.name}
        self.claims[("column", name, place.column)] += place.items
        self.claims[("mask", read.name)].append(read.item)
        salt = read.shape.salt_function
        if salt is not None:
            item = p.salts.get(fold(salt))
            if item is not None and self.usable(item):
                self.claims[("mask", read.name)].append(item)

    def dataset_name(self, p: _Platform, table: str, said: str | None) -> str:
        platform = p.found.platform
        fold = facts(platform).fold
        for name, ds in self.datasets.items():
            if ds["platform"] == platform and fold(ds["table"]) == fold(table):
                return name
        parts = table.split(".")
        candidates = ([said] if said else []) + [
            snake("_".join(parts[-n:]), "t") for n in (1, 2, 3)
        ]
        for candidate in candidates:
            if candidate not in self.datasets:
                return candidate
        n = 2
        while f"{candidates[-1]}_{n}" in self.datasets:
            n += 1
        return f"{candidates[-1]}_{n}"

    # ---------------------------------------------------------------------------- the model

    def assemble(self) -> Lifted:
        principals, of = self.naming.resolve()

        def names(idents: list[tuple[str, str]]) -> list[str]:
            return sorted({of[i] for i in idents if i in of})

        data: dict[str, Any] = {"version": 1, "platforms": {}}
        for platform, p in self.platforms.items():
            style = p.found.style
            entry: dict[str, Any] = {"governance_schema": p.found.governance_schema}
            if style and style != _default_style(platform):
                entry["style"] = style
            data["platforms"][platform] = entry
        for platform in self.unplaced:
            # what is kept must name a declared platform: the schema is accord's usual one
            gov = _PLACEHOLDER_SCHEMA[platform]
            data["platforms"][platform] = {"governance_schema": gov}
            self.notes.append(
                f"platforms.{platform}.governance_schema: no policy, mapping table or salt "
                f"function read says where accord's objects live on {platform}: {gov} is "
                "written; set it before planning"
            )
        if principals:
            data["principals"] = principals
        entitlements: dict[str, dict[str, list[Any]]] = {}
        for dim in sorted(self.grants):
            values: dict[str, list[Any]] = {}
            for value, holders in sorted(self.grants[dim].items()):
                grants: dict[str, str | None] = {}
                for platform, identity, day in holders:
                    who = of[(platform, identity)]
                    held = grants.get(who, day)
                    grants[who] = None if day is None or held is None else max(day, held)
                values[value] = [
                    w if d is None else {"principal": w, "until": d}
                    for w, d in sorted(grants.items())
                ]
            entitlements[dim] = values
        if entitlements:
            data["entitlements"] = entitlements
        masks: dict[str, Any] = {}
        for name, per in sorted(self.mask_specs.items()):
            shape = next(iter(per.values())).shape
            agreed = all(_spec(m) == _spec(next(iter(per.values()))) for m in per.values())
            assert agreed, name
            spec: dict[str, Any] = {"strategy": shape.strategy}
            clear = [(platform, i) for platform, m in per.items() for i in m.shape.clear]
            if clear:
                spec["unmasked_for"] = names(clear)
            if shape.strategy == "redact" and shape.replacement != "***":
                spec["replacement"] = shape.replacement
            if shape.strategy == "partial":
                spec["keep_last"] = shape.keep_last
            salts = {}
            for platform, m in sorted(per.items()):
                if m.shape.salt_function is not None:
                    ref = f"env:{name.upper()}_SALT_{platform.upper()}"
                    salts[platform] = ref
                    read = self.platforms[platform].salts.get(
                        facts(platform).fold(m.shape.salt_function)
                    )
                    shown = read.label if read is not None else m.shape.salt_function
                    self.salts.append((name, platform, ref, shown))
            if salts:
                spec["salt"] = salts
            masks[name] = spec
        if masks:
            data["masks"] = masks
        datasets: dict[str, Any] = {}
        for name, ds in sorted(self.datasets.items()):
            out: dict[str, Any] = {"platform": ds["platform"], "table": ds["table"]}
            rf = ds.get("row_filter")
            if rf is not None and "entries" in rf:
                entries = [
                    {
                        "entitlement": e["entitlement"],
                        "column": e["column"],
                        **(
                            {"unfiltered_for": names(e["unfiltered_for"])}
                            if e["unfiltered_for"]
                            else {}
                        ),
                    }
                    for e in rf["entries"]
                ]
                wide = names(rf["unfiltered_for"])
                if len(entries) == 1:
                    out["row_filter"] = {**entries[0], **({"unfiltered_for": wide} if wide else {})}
                else:
                    out["row_filter"] = {
                        "dimensions": entries,
                        **({"unfiltered_for": wide} if wide else {}),
                    }
            elif rf is not None:
                out["row_filter"] = rf
            out.update(written(ds, names))
            if ds["columns"]:
                out["columns"] = {
                    c: {
                        **{k: v for k, v in spec.items() if k != "projection"},
                        **written(spec, names),
                    }
                    for c, spec in sorted(ds["columns"].items())
                }
            datasets[name] = out
        if datasets:
            data["datasets"] = datasets
        for p in self.platforms.values():
            self.leftovers(p)
        kept = {k.item.key for k in self.kept}
        claims = {
            part: [i for i in items if i.key not in kept]
            for part, items in sorted(self.claims.items())
        }
        claims = {
            part: list({i.key: i for i in items}.values())
            for part, items in claims.items()
            if items
        }
        return Lifted(data, self.kept, claims, self.salts, self.notes)

    def leftovers(self, p: _Platform) -> None:
        """What nothing expressed: kept, with the reason a reader can act on."""
        claimed = {i.key for items in self.claims.values() for i in items}
        for group, why in (
            (p.tables, "a mapping table no policy the model expresses reads"),
            (p.salts, "a salt function no mask the model expresses calls"),
            (p.filters, "a row filter no table the model governs is filtered by"),
            (p.masks, "a mask no column the model governs is masked by"),
            (p.tags, "a tag no policy the model expresses reads"),
            (p.constraints, "a policy no table or column the model governs carries"),
        ):
            for item in group.values():
                if item.key not in claimed or item.key in self.exclude:
                    self.keep(item, why)
        for item in [*p.places, *p.constraint_places]:
            if item.key not in claimed or item.key in self.exclude:
                self.keep(item, "a placement the model does not express")


def _shadowed(
    body: exp.Expression, params: list[str], columns: tuple[str, ...]
) -> tuple[str, str] | None:
    """(parameter, column) of a hand-written predicate's parameter whose renaming to its
    column would collide with another name the body reads (a subquery's column)."""
    names = {p.lower() for p in params}
    read = {c.name.lower() for c in body.find_all(exp.Column) if c.name.lower() not in names}
    for param, column in zip(params, columns, strict=True):
        if param.lower() != column.lower() and column.lower() in read:
            return param, column
    return None


_STATEMENT = "a statement that decides access, no catalog object the model expresses"
_NO_GOVERNANCE_SCHEMA = "the read found no governance schema to express it in"
#: the governance schema written for a platform whose read names none (the docs' example)
_PLACEHOLDER_SCHEMA = {"snowflake": "GOVERNANCE.POLICIES", "databricks": "governance.policies"}


def _dataset(platform: str, table: str) -> dict[str, Any]:
    return {"platform": platform, "table": table, "columns": {}}


def _default_style(platform: str) -> str:
    return facts(platform).styles[0]


def _spec(m: _Mask) -> tuple[Any, ...]:
    s = m.shape
    return (s.strategy, s.replacement, s.keep_last, s.salt_function is not None)


def _mask_name(policy: str, ptype: str, platform: str) -> str:
    """``<gov>.<MASK>_MASK[_<type>]`` -> ``mask``; another name in lower snake case."""
    leaf = policy.rsplit(".", 1)[-1].lower()
    suffix = (
        "_mask" if ptype == facts(platform).string_type else f"_mask_{type_suffix(ptype).lower()}"
    )
    if leaf.endswith(suffix) and len(leaf) > len(suffix):
        return snake(leaf[: -len(suffix)], "m")
    return snake(leaf, "m")


def _hand_written_dataset(obj: RowFilterPolicy) -> str | None:
    said = re.fullmatch(
        r"accord: hand-written row filter of dataset ([a-z][a-z0-9_]*)", obj.comment or ""
    )
    if said:
        return said.group(1)
    leaf = obj.name.rsplit(".", 1)[-1].lower()
    if leaf.endswith("_row_filter") and re.fullmatch(
        r"[a-z][a-z0-9_]*", leaf[: -len("_row_filter")]
    ):
        return leaf[: -len("_row_filter")]
    return None


def _said(comment: str | None, head: str) -> dict[str, list[str]]:
    """The principals accord's comment names: ``every row for a, b`` -> {"row": [a, b]},
    ``every <dim> for a`` -> {dim: [a]}, ``clear for a, b`` -> {"clear": [a, b]}."""
    text = comment or ""
    if not re.match(head, text):
        return {}
    out: dict[str, list[str]] = {}
    for part in text.split("; ")[1:]:
        part = part.removesuffix(" (named in the policy, not here)")
        m = re.fullmatch(r"every ([a-z][a-z0-9_]*) for (.+)", part) or re.fullmatch(
            r"(clear) for (.+)", part
        )
        if m:
            out[m.group(1)] = [n.strip() for n in m.group(2).split(",")]
    return out


def _matched(identities: tuple[str, ...], names: list[str], ordered: bool) -> list[tuple[str, str]]:
    """Identities and the principal names a comment gives them, as many of each: in order, or
    (not ``ordered``) each name to the identity it is the snake case of first."""
    if len(identities) != len(names) or not all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names):
        return []
    if ordered:
        return list(zip(identities, names, strict=True))
    left = list(identities)
    out: list[tuple[str, str]] = []
    rest: list[str] = []
    for name in names:
        same = next((i for i in left if snake(i) == name), None)
        if same is not None:
            out.append((same, name))
            left.remove(same)
        else:
            rest.append(name)
    out += list(zip(left, rest, strict=True))
    return out
