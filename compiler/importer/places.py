"""Placements read as what they place, for the raise (:mod:`compiler.importer.lift`).

An attachment places a policy on a table (a row filter, with the columns it reads) or a column
(a mask). An ABAC policy places its function on every table in its scope whose columns' tags
its MATCH COLUMNS conditions hold for (:mod:`targets.abac_conditions`, the one evaluator): its
USING columns for a filter, its ON COLUMN for a mask, with its EXCEPT (who sees every row or
the clear value). With Snowflake's tag-based masking, a column carrying a tag that holds
masking policies is masked by the tag's policy for its type. Each :class:`Place` carries the
items that made it (the policy or attachment, the tags), which the part of the model it becomes
claims. A tag assignment nothing reads, an attachment the model cannot say (USING columns, a
tag on a table) is kept by the caller.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError
from sqlglot.errors import ParseError, TokenError

from accord.compiler.core.platforms import facts
from accord.compiler.importer.found import Item
from accord.compiler.model.schema import ColumnName, TableName
from accord.targets import abac_conditions as cond
from accord.targets.abac import MASK_TAG, ROW_KEY_TAG
from accord.targets.objects import (
    AbacPolicy,
    MaskAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)

_TABLE = TypeAdapter(TableName)
_COLUMN = TypeAdapter(ColumnName)


def not_a_place(table: str, column: str | None) -> str:
    """Why a table or column name is not one the model can write (quoted, other characters),
    or ""."""
    try:
        _TABLE.validate_python(table)
        if column is not None:
            _COLUMN.validate_python(column)
    except ValidationError as err:
        return f"the model cannot name {table}{'.' + column if column else ''}: {err.errors()[0]['msg']}"
    return ""


@dataclass
class Place:
    """One placement of a policy on a table: an attachment, or what an ABAC policy or a
    mask's tag places (their items claimed with it)."""

    platform: str
    table: str
    column: str | None
    policy: str
    columns: tuple[str, ...]
    items: list[Item]
    #: identities an ABAC policy's EXCEPT names (who sees every row / the clear value)
    excepted: tuple[str, ...] | None = None
    #: the dataset the placement names (accord's ABAC tag values: `<dataset>__<column>`)
    dataset: str | None = None


class Placer:
    """Reads one platform's placements."""

    def __init__(
        self,
        platform: str,
        tags: dict[str, Item],
        string_masks: set[str],
        usable: Callable[[Item], bool],
        keep: Callable[[Item, str], None],
    ) -> None:
        self.platform = platform
        self.fold = facts(platform).fold
        #: folded tag -> its item (its definition read)
        self.tags = tags
        #: folded masking policies of the string type (a tag's policy for a column of unknown type)
        self.string_masks = string_masks
        self.usable = usable
        self.keep = keep

    def read(self, items: list[Item]) -> list[Place]:
        """Every placement read as (table, column, policy): attachments as they are, ABAC
        policies and mask tags as what they place."""
        platform, fold = self.platform, self.fold
        out: list[Place] = []
        tagged: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
        assignments: dict[tuple[str, str, str], Item] = {}
        policies: list[Item] = []
        for item in items:
            if not self.usable(item):
                continue
            obj = item.obj
            if isinstance(obj, RowFilterAttachment):
                out.append(Place(platform, obj.table, None, obj.policy, obj.columns, [item]))
            elif isinstance(obj, MaskAttachment):
                if obj.using:
                    self.keep(
                        item,
                        "conditional masking (USING columns): the model's masks read the masked "
                        "column only",
                    )
                    continue
                out.append(Place(platform, obj.table, obj.column, obj.policy, (), [item]))
            elif isinstance(obj, TagAssignment):
                if obj.column is None:
                    self.keep(item, "a tag set on a table: the model sets tags on columns only")
                    continue
                tagged[(fold(obj.table), obj.column)][obj.tag] = obj.value
                assignments[(fold(obj.table), obj.column, obj.tag.upper())] = item
            elif isinstance(obj, AbacPolicy):
                policies.append(item)
        tables = {fold(o.obj.table): o.obj.table for o in assignments.values()}  # type: ignore[union-attr]
        used: set[tuple[str, str, str]] = set()
        for item in policies:
            out += self.abac_places(item, tagged, tables, assignments, used)
        out += self.tag_places(tagged, tables, assignments, used)
        for k, item in sorted(assignments.items()):
            if k not in used:
                self.keep(item, "a tag no policy the model expresses reads")
        return out

    def abac_places(
        self,
        item: Item,
        tagged: dict[tuple[str, str], dict[str, str]],
        tables: dict[str, str],
        assignments: dict[tuple[str, str, str], Item],
        used: set[tuple[str, str, str]],
    ) -> list[Place]:
        """What one ABAC policy places: for each table in its scope, the columns its MATCH
        COLUMNS conditions hold for (its USING order for a filter; its ON COLUMN for a
        mask)."""
        pol = item.obj
        assert isinstance(pol, AbacPolicy)
        platform, fold = self.platform, self.fold
        if pol.securable_type == "METASTORE":
            self.keep(
                item,
                "an ABAC policy at metastore scope (Beta), which applies to every catalog: the "
                "model's ABAC policies are set on a schema or a table",
            )
            return []
        if pol.when or pol.to != ("account users",):
            self.keep(
                item,
                "an ABAC policy with a WHEN condition or other principals than `account users` "
                "in TO: accord's ABAC policies apply to every user but EXCEPT",
            )
            return []
        try:
            conditions = {alias: cond.parse(c) for c, alias in pol.match_columns}
        except (ParseError, TokenError):
            self.keep(item, "an ABAC policy whose MATCH COLUMNS condition accord cannot read")
            return []
        out: list[Place] = []
        for folded_table, table in sorted(tables.items()):
            if not cond.covers(pol, folded_table, fold):
                continue
            columns = {c: tags for (t, c), tags in tagged.items() if t == folded_table}
            try:
                matched = {
                    alias: sorted(c for c, tags in columns.items() if cond.holds(node, tags))
                    for alias, node in conditions.items()
                }
            except cond.ConditionError:
                self.keep(item, "an ABAC policy whose conditions read more than tags")
                return []
            tag_key = MASK_TAG if pol.kind == "COLUMN MASK" else ROW_KEY_TAG
            tag_defs = [t for t in [self.tags.get(fold(tag_key))] if t is not None]
            if pol.kind == "COLUMN MASK":
                for column in matched.get(pol.on_column or "", []):
                    claimed = [
                        item,
                        *tag_defs,
                        *self.tag_items(
                            columns[column], folded_table, column, assignments, used, MASK_TAG
                        ),
                    ]
                    out.append(
                        Place(platform, table, column, pol.function, (), claimed, pol.except_)
                    )
                continue
            if any(len(matched.get(a, [])) != 1 for a in pol.using):
                if any(matched.values()):
                    self.keep(item, f"an ABAC row filter whose columns on {table} are not one each")
                continue
            cols = tuple(matched[a][0] for a in pol.using)
            claimed = [item, *tag_defs]
            for column in cols:
                claimed += self.tag_items(
                    columns[column], folded_table, column, assignments, used, ROW_KEY_TAG
                )
            # accord tags a table's own key columns `<dataset>__<column>`: the dataset's name
            said = {
                v.rsplit("__", 1)[0] for c in cols if "__" in (v := columns[c].get(ROW_KEY_TAG, ""))
            }
            place = Place(platform, table, None, pol.function, cols, claimed, pol.except_)
            place.dataset = next(iter(said)) if len(said) == 1 else None
            out.append(place)
        return out

    def tag_items(
        self,
        tags: dict[str, str],
        table: str,
        column: str,
        assignments: dict[tuple[str, str, str], Item],
        used: set[tuple[str, str, str]],
        tag: str,
    ) -> list[Item]:
        key = (table, column, tag.upper())
        if key in assignments:
            used.add(key)
            return [assignments[key]]
        return []

    def tag_places(
        self,
        tagged: dict[tuple[str, str], dict[str, str]],
        tables: dict[str, str],
        assignments: dict[tuple[str, str, str], Item],
        used: set[tuple[str, str, str]],
    ) -> list[Place]:
        """Snowflake tag-based masking: a column carrying a tag whose masking policies the read
        holds is masked by that tag's policy for its type (the string one, types unknown)."""
        platform, fold = self.platform, self.fold
        out = []
        for (table, column), tags in sorted(tagged.items()):
            for tag, _value in sorted(tags.items()):
                tag_item = self.tags.get(fold(tag))
                obj = tag_item.obj if tag_item is not None else None
                if not isinstance(obj, Tag) or not obj.masking_policies:
                    continue
                key = (table, column, tag.upper())
                if key not in assignments or key in used:
                    continue
                used.add(key)
                policy = next(
                    (x for x in obj.masking_policies if fold(x) in self.string_masks),
                    obj.masking_policies[0],
                )
                out.append(
                    Place(platform, tables[table], column, policy, (), [assignments[key], tag_item])  # type: ignore[list-item]
                )
        return out
