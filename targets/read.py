"""SQL read back into catalog objects: scanned statements (:mod:`compiler.sqlscan`) replayed,
in order, into the placements of :mod:`targets.objects`.

The compiler lowers the model into catalog objects and renders them as SQL; this module goes
the other way for whatever reads SQL back (``accord verify`` reads the SQL that ships). A
:class:`Placements` replays one platform's statements: ``ADD ROW ACCESS POLICY`` / ``SET ROW
FILTER`` and their drops into :class:`~targets.objects.RowFilterAttachment`, ``SET MASKING
POLICY`` / ``SET MASK`` and their unsets into :class:`~targets.objects.MaskAttachment`, ``SET
TAG`` / ``SET TAGS`` into :class:`~targets.objects.TagAssignment`, ``ALTER TAG ... SET / UNSET
MASKING POLICY`` into the masking policies of a :class:`~targets.objects.Tag`, and ``CREATE
POLICY`` / ``DROP POLICY`` into :class:`~targets.objects.AbacPolicy` (conditions as Databricks
SQL text, as the lowering writes them), and Snowflake's ``SET`` / ``UNSET`` of projection,
aggregation and join policies into their attachments. A later statement replaces an earlier one on the same
place; each place remembers the statement that put it there, for reports that locate it.

Names are keyed as the platform resolves them (:func:`fold`); tag keys of Databricks
``SET TAGS`` are kept as written (they are case-sensitive: :mod:`targets.abac_conditions`).
Objects read back carry no ``dataset``: the SQL does not say which dataset a place serves.
Definitions with bodies (policies, functions) and the statements that fill mapping tables are
not read here: the catalog model holds no salt-function body and no arbitrary DML, and their
readers keep the scanned statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accord.compiler.core.platforms import facts
from accord.compiler.sqlscan import Statement
from accord.targets.objects import (
    AbacPolicy,
    AggregationAttachment,
    JoinAttachment,
    MaskAttachment,
    ProjectionAttachment,
    RowFilterAttachment,
    Tag,
    TagAssignment,
)

#: the statement kinds :meth:`Placements.read` replays
PLACEMENT_KINDS = frozenset(
    {
        "add_row_access",
        "set_row_filter",
        "drop_row_access",
        "drop_row_filter",
        "set_masking_policy",
        "set_mask",
        "unset_masking_policy",
        "drop_mask",
        "set_tags",
        "set_column_tag",
        "set_table_tag",
        "alter_tag_set_masking",
        "alter_tag_unset_masking",
        "abac_policy",
        "drop_abac_policy",
        "set_projection_policy",
        "unset_projection_policy",
        "set_aggregation_policy",
        "unset_aggregation_policy",
        "set_join_policy",
        "unset_join_policy",
    }
)

#: a projection, aggregation or join attachment
Constrained = ProjectionAttachment | AggregationAttachment | JoinAttachment


def fold(name: str, platform: str) -> str:
    """A catalog name as the platform resolves it: Snowflake upper-cases unquoted names,
    Databricks is case-insensitive (lower case here)."""
    return facts(platform).fold(name)


@dataclass
class Placements:
    """What one platform's statements, replayed in order, leave placed."""

    platform: str
    #: folded table -> its row filter
    row_filters: dict[str, RowFilterAttachment] = field(default_factory=dict)
    #: (folded table, folded column) -> its mask
    masks: dict[tuple[str, str], MaskAttachment] = field(default_factory=dict)
    #: (folded table, folded column or "" for the table) -> {tag: value}
    tags: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    #: (folded table, folded column or "", tag) -> the assignment
    assignments: dict[tuple[str, str, str], TagAssignment] = field(default_factory=dict)
    #: Snowflake tag-based masking: folded tag -> the tag with its masking policies
    tag_policies: dict[str, Tag] = field(default_factory=dict)
    #: ABAC policies by (folded name, folded securable)
    abac: dict[tuple[str, str], AbacPolicy] = field(default_factory=dict)
    #: projection (kind, folded table, folded column), aggregation and join (kind, folded
    #: table) attachments
    constraints: dict[tuple[str, ...], Constrained] = field(default_factory=dict)
    #: the statement that placed each row filter, mask and ABAC policy, by the key above
    sources: dict[tuple[str, ...], Statement] = field(default_factory=dict)

    def objects(
        self,
    ) -> list[TagAssignment | RowFilterAttachment | MaskAttachment | AbacPolicy | Constrained]:
        """Every placement in place, as catalog objects."""
        return [
            *self.row_filters.values(),
            *self.masks.values(),
            *self.assignments.values(),
            *self.abac.values(),
            *self.constraints.values(),
        ]

    def read(self, stmt: Statement) -> bool:
        """Replay ``stmt``; False when it places nothing (not a placement statement, or one
        missing what it names)."""
        p = self.platform
        kind = stmt.kind
        if kind in ("add_row_access", "set_row_filter") and stmt.table and stmt.policy:
            key = fold(stmt.table, p)
            self.row_filters[key] = RowFilterAttachment(stmt.table, stmt.policy, stmt.columns, "")
            self.sources[("filter", key)] = stmt
        elif kind in ("drop_row_access", "drop_row_filter") and stmt.table:
            self.row_filters.pop(fold(stmt.table, p), None)
        elif kind in ("set_masking_policy", "set_mask") and stmt.table and stmt.column_name:
            ckey = (fold(stmt.table, p), fold(stmt.column_name, p))
            self.masks[ckey] = MaskAttachment(
                stmt.table, stmt.column_name, stmt.policy or "", "", stmt.columns
            )
            self.sources[("mask", *ckey)] = stmt
        elif kind in ("unset_masking_policy", "drop_mask") and stmt.table and stmt.column_name:
            self.masks.pop((fold(stmt.table, p), fold(stmt.column_name, p)), None)
        elif kind in ("set_tags", "set_column_tag", "set_table_tag") and stmt.table:
            tkey = (fold(stmt.table, p), fold(stmt.column_name or "", p))
            self.tags.setdefault(tkey, {}).update(stmt.tags)
            for tag, value in stmt.tags:
                self.assignments[(*tkey, tag)] = TagAssignment(
                    stmt.table, stmt.column_name, tag, value, ""
                )
        elif kind == "alter_tag_set_masking" and stmt.name:
            tag = fold(stmt.name, p)
            old = self.tag_policies.get(tag) or Tag(stmt.name)
            self.tag_policies[tag] = Tag(
                old.name, masking_policies=(*old.masking_policies, *stmt.policies)
            )
        elif kind == "alter_tag_unset_masking" and stmt.name:
            tag = fold(stmt.name, p)
            gone = {fold(x, p) for x in stmt.policies}
            old = self.tag_policies.get(tag) or Tag(stmt.name)
            self.tag_policies[tag] = Tag(
                old.name,
                masking_policies=tuple(x for x in old.masking_policies if fold(x, p) not in gone),
            )
        elif kind == "abac_policy" and stmt.name and stmt.abac is not None:
            akey = (fold(stmt.name, p), fold(stmt.abac.securable, p))
            self.abac[akey] = abac_policy(stmt)
            self.sources[("abac", *akey)] = stmt
        elif kind == "drop_abac_policy" and stmt.name and stmt.abac is not None:
            self.abac.pop((fold(stmt.name, p), fold(stmt.abac.securable, p)), None)
        elif kind.startswith(("set_", "unset_")) and kind.endswith(_CONSTRAINT_ENDS) and stmt.table:
            self._constraint(stmt)
        else:
            return False
        return True

    def _constraint(self, stmt: Statement) -> None:
        p = self.platform
        what = stmt.kind.split("_")[1]  # projection | aggregation | join
        table = stmt.table or ""
        key: tuple[str, ...] = (what, fold(table, p))
        if what == "projection":
            if not stmt.column_name:
                return
            key = (*key, fold(stmt.column_name, p))
        if stmt.kind.startswith("unset_"):
            self.constraints.pop(key, None)
            return
        policy = stmt.policy or ""
        found: Constrained
        if what == "projection":
            found = ProjectionAttachment(table, stmt.column_name or "", policy, "")
        elif what == "aggregation":
            found = AggregationAttachment(table, policy, "", tuple(stmt.columns))
        else:
            found = JoinAttachment(table, policy, "", stmt.columns)
        self.constraints[key] = found
        self.sources[key] = stmt


_CONSTRAINT_ENDS = ("_projection_policy", "_aggregation_policy", "_join_policy")


def abac_policy(stmt: Statement) -> AbacPolicy:
    """A scanned ``CREATE POLICY`` as a catalog object; its conditions as Databricks SQL."""
    a = stmt.abac
    assert a is not None and stmt.name is not None
    return AbacPolicy(
        name=stmt.name,
        securable_type=a.securable_type,  # type: ignore[arg-type]
        securable=a.securable,
        kind=a.kind,  # type: ignore[arg-type]
        function=a.function or "",
        to=a.to,
        except_=a.except_,
        match_columns=tuple(
            (cond.sql("databricks"), alias or "") for cond, alias in a.match_columns
        ),
        on_column=a.on_column,
        using=a.using,
        comment=a.comment or "",
        when=a.when.sql("databricks") if a.when is not None else None,
    )
