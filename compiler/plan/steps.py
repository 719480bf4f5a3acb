"""Plan steps: one statement (or one atomic group of statements) with its effect on the catalog.

A :class:`Step` says what it does to the catalog state (define, drop, attach or detach one
object, possibly replacing another) and carries its SQL. Creating statements are rendered by
the platform's target (``render_object``), exactly as ``accord compile`` writes them; the
statements only a migration needs (``SET BODY``, ``FORCE`` swaps, combined ``DROP``/``ADD``,
``DROP``, ``UNSET``) are written here, one thin class per platform, with every name and literal
spelled through the target's helpers (targets/sql.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from compiler.plan.state import PlanError, State
from targets import get_target
from targets.base import Target
from targets.identity import Definition, Placement, is_definition, place_key
from targets.objects import (
    AbacPolicy,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

Op = Literal["define", "drop", "attach", "detach"]


@dataclass(frozen=True)
class Step:
    op: Op
    obj: CatalogObject
    #: for define/attach: the object this one replaces in place (None: created or added)
    replaces: CatalogObject | None
    sql: str
    #: why, in a few words; written as a comment above the statement
    note: str

    def run(self, state: State) -> list[str]:
        """Apply the effect to ``state``; return the invariants it broke on the way."""
        if self.op == "define":
            return state.define(self.obj, self.replaces)  # type: ignore[arg-type]
        if self.op == "drop":
            return state.drop(self.obj)  # type: ignore[arg-type]
        if self.op == "attach":
            return state.attach(self.obj, self.replaces)  # type: ignore[arg-type]
        return state.detach(self.obj)  # type: ignore[arg-type]


class Statements:
    """Builds steps for one platform. Subclasses spell what differs."""

    platform: str = ""

    def __init__(
        self,
        target: Target | None = None,
        types: dict[str, str] | None = None,
        live: bool = False,
    ) -> None:
        self.target = target or get_target(self.platform)
        #: masking policy name (upper-cased) -> the data type it masks
        self.types = types or {}
        #: the base was read from the live platform (``plan --base live:...``): what it lacks
        #: is absent from the account, not merely from a model
        self.live = live

    # ---- steps ----------------------------------------------------------------------------------

    def define(self, obj: Definition, replaces: Definition | None, note: str) -> Step:
        sql = self.create(obj) if replaces is None else self.replace(obj, replaces)
        return Step("define", obj, replaces, sql, note)

    def drop(self, obj: Definition, note: str) -> Step:
        return Step("drop", obj, None, self.drop_sql(obj), note)

    def attach(self, obj: Placement, replaces: Placement | None, note: str) -> Step:
        sql = self.create(obj) if replaces is None else self.swap(obj, replaces)
        return Step("attach", obj, replaces, sql, note)

    def detach(self, obj: Placement, note: str) -> Step:
        return Step("detach", obj, None, self.detach_sql(obj), note)

    def inverse(self, step: Step, before: State) -> Step:
        """The step that undoes ``step``, given the state before it ran."""
        note = f"undo: {step.note}"
        if step.op == "define":
            previous = before.defs.get(step.obj.name.upper())  # type: ignore[union-attr]
            if previous is None:
                return self.drop(step.obj, note)  # type: ignore[arg-type]
            return self.define(previous, step.obj, note)  # type: ignore[arg-type]
        if step.op == "drop":
            return self.define(before.defs[step.obj.name.upper()], None, note)  # type: ignore[union-attr]
        key = place_key(step.obj)  # type: ignore[arg-type]
        if step.op == "attach":
            previous_place = before.places.get(key)
            if previous_place is None:
                return self.detach(step.obj, note)  # type: ignore[arg-type]
            return self.attach(previous_place, step.obj, note)  # type: ignore[arg-type]
        return self.attach(before.places[key], None, note)

    # ---- SQL ------------------------------------------------------------------------------------

    def create(self, obj: CatalogObject) -> str:
        """The target's own statement for ``obj``, as ``accord compile`` writes it."""
        try:
            rendered = self.target.render_object(obj)
        except NotImplementedError:
            raise PlanError(
                f"the {self.platform} target cannot render {type(obj).__name__} objects yet"
            ) from None
        if rendered is None:
            raise PlanError(f"the {self.platform} target renders no SQL for {_what(obj)}")
        return rendered[1].strip()

    def q(self, name: str) -> str:
        return self.target.q(name)

    def lit(self, value: str) -> str:
        return self.target.lit(value)

    def replace(self, obj: Definition, old: Definition) -> str:
        """Change a definition in place. Default: the target's CREATE OR REPLACE."""
        return self.create(obj)

    def swap(self, obj: Placement, old: Placement) -> str:
        """Replace a placement in one statement. Default: the target's statement replaces."""
        return self.create(obj)

    def drop_sql(self, obj: Definition) -> str:
        raise NotImplementedError

    def detach_sql(self, obj: Placement) -> str:
        raise NotImplementedError


class SnowflakeStatements(Statements):
    platform = "snowflake"

    @staticmethod
    def _kind(obj: CatalogObject) -> str:
        return "ROW ACCESS POLICY" if isinstance(obj, RowFilterPolicy) else "MASKING POLICY"

    def replace(self, obj: Definition, old: Definition) -> str:
        if isinstance(obj, RowFilterPolicy | MaskPolicy):
            # the policy stays attached and protecting; the new body applies from the next query
            head = f"ALTER {self._kind(obj)} {self.q(obj.name)}"
            lines = [f"{head} SET BODY ->\n{self.target.body_sql(obj.body)};"]
            if obj.comment != getattr(old, "comment", None):
                lines.append(f"{head} SET COMMENT = {self.lit(obj.comment)};")
            return "\n".join(lines)
        if isinstance(obj, Tag):
            return self._alter_tag(obj, old)  # type: ignore[arg-type]
        return self.create(obj)

    def _alter_tag(self, tag: Tag, old: Tag) -> str:
        name = self.q(tag.name)
        lines = []
        added = [v for v in tag.allowed_values if v not in old.allowed_values]
        removed = [v for v in old.allowed_values if v not in tag.allowed_values]
        if added:
            lines.append(f"ALTER TAG {name} ADD ALLOWED_VALUES {', '.join(map(self.lit, added))};")
        new = [p for p in tag.masking_policies if p not in old.masking_policies]
        if new:
            # FORCE replaces the tag's policy for the same data type in one statement
            policies = ", ".join(f"MASKING POLICY {self.q(p)}" for p in new)
            lines.append(f"ALTER TAG {name} SET {policies} FORCE;")
        forced = {self.types.get(p.upper()) for p in new}
        for p in sorted(set(old.masking_policies) - set(tag.masking_policies)):
            if self.types.get(p.upper()) not in forced:  # not already replaced by FORCE
                lines.append(f"ALTER TAG {name} UNSET MASKING POLICY {self.q(p)};")
        if removed:
            lines.append(
                f"ALTER TAG {name} DROP ALLOWED_VALUES {', '.join(map(self.lit, removed))};"
            )
        return "\n".join(lines)

    def inverse(self, step: Step, before: State) -> Step:
        obj = step.obj
        if (
            step.op == "define"
            and isinstance(obj, Tag)
            and obj.masking_policies
            and obj.name.upper() not in before.defs
        ):
            # undoing a new tag: "a tag cannot be dropped while a masking policy is assigned
            # to it" (user-guide/tag-based-masking-policies): unset them, then drop the bare tag
            bare = replace(obj, masking_policies=())
            sql = f"{self._alter_tag(bare, obj)}\n{self.drop_sql(bare)}"
            return Step("drop", bare, None, sql, f"undo: {step.note}")
        return super().inverse(step, before)

    def swap(self, obj: Placement, old: Placement) -> str:
        if isinstance(obj, RowFilterAttachment):
            assert isinstance(old, RowFilterAttachment)
            cols = ", ".join(self.q(c) for c in obj.columns)
            # one statement: the table is never without a row access policy
            return (
                f"ALTER TABLE {self.q(obj.table)} DROP ROW ACCESS POLICY {self.q(old.policy)},\n"
                f"  ADD ROW ACCESS POLICY {self.q(obj.policy)} ON ({cols});"
            )
        if isinstance(obj, MaskAttachment):
            # FORCE replaces the column's policy in one statement (never UNSET, then SET)
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                f"SET MASKING POLICY {self.q(obj.policy)} FORCE;"
            )
        return self.create(obj)

    def drop_sql(self, obj: Definition) -> str:
        if isinstance(obj, MappingTable):
            return f"DROP TABLE {self.q(obj.name)};"
        if isinstance(obj, SaltFunction):
            return f"DROP FUNCTION {self.q(obj.name)}();"
        if isinstance(obj, Tag):
            return f"DROP TAG {self.q(obj.name)};"
        return f"DROP {self._kind(obj)} {self.q(obj.name)};"

    def detach_sql(self, obj: Placement) -> str:
        if isinstance(obj, RowFilterAttachment):
            return f"ALTER TABLE {self.q(obj.table)} DROP ROW ACCESS POLICY {self.q(obj.policy)};"
        if isinstance(obj, MaskAttachment):
            return (
                f"ALTER TABLE {self.q(obj.table)} MODIFY COLUMN {self.q(obj.column)} "
                "UNSET MASKING POLICY;"
            )
        if isinstance(obj, TagAssignment):
            where = f"ALTER TABLE {self.q(obj.table)}"
            if obj.column:
                where += f" MODIFY COLUMN {self.q(obj.column)}"
            return f"{where} UNSET TAG {self.q(obj.tag)};"
        raise PlanError(f"Snowflake has no ABAC policies (found {obj.name})")


class DatabricksStatements(Statements):
    platform = "databricks"

    # Governed tags (docs.databricks.com/aws/en/sql/language-manual/sql-ref-syntax-ddl-create-
    # governed-tag, -alter-governed-tag, -drop-governed-tag; Runtime 18.1+): CREATE fails with
    # ALREADY_EXISTS when the key exists, ALTER ... SET VALUES replaces the allowed values
    # (declarative), DROP leaves the assignments in place, ungoverned. A plan from a live base
    # read the account's governed tags (compiler/live/introspect.py), so a tag absent from that
    # base is absent from the account and CREATE is right; from a model base the account may
    # hold the tag already (other teams' estates), so the statement is named for the account
    # admin, and the stage's check (``governed_tag``) fails until the tag exists.

    def create(self, obj: CatalogObject) -> str:
        if isinstance(obj, Tag) and self.live:
            return self._governed_tag("CREATE", obj)
        return super().create(obj)

    def replace(self, obj: Definition, old: Definition) -> str:
        if isinstance(obj, Tag) and self.live:
            return self._governed_tag("ALTER", obj)
        return super().replace(obj, old)

    def _governed_tag(self, verb: str, tag: Tag) -> str:
        values = ", ".join(self.lit(v) for v in tag.allowed_values)
        name = self.q(tag.name)
        if verb == "ALTER":
            return f"ALTER GOVERNED TAG {name} SET VALUES ({values});"
        described = f" DESCRIPTION {self.lit(tag.comment)}" if tag.comment else ""
        return f"CREATE GOVERNED TAG {name}{described} VALUES ({values});"

    def inverse(self, step: Step, before: State) -> Step:
        obj = step.obj
        if (
            self.live
            and step.op == "define"
            and isinstance(obj, Tag)
            and obj.name.upper() not in before.defs
        ):
            # this plan created the governed tag (the live base had none): undo drops it
            sql = f"DROP GOVERNED TAG {self.q(obj.name)};"
            return Step("drop", obj, None, sql, f"undo: {step.note}")
        return super().inverse(step, before)

    def drop_sql(self, obj: Definition) -> str:
        if isinstance(obj, MappingTable):
            return f"DROP TABLE {self.q(obj.name)};"
        if isinstance(obj, Tag):
            # governed tags are account-level tag policies, possibly used by other teams'
            # tables: accord does not remove one itself
            return (
                f"-- governed tag {obj.name} is no longer used by this model. It is an "
                "account-level tag\n-- policy: remove it in the account console or with "
                "Terraform once nothing else uses it."
            )
        return f"DROP FUNCTION {self.q(obj.name)};"

    def detach_sql(self, obj: Placement) -> str:
        if isinstance(obj, RowFilterAttachment):
            return f"ALTER TABLE {self.q(obj.table)} DROP ROW FILTER;"
        if isinstance(obj, MaskAttachment):
            return f"ALTER TABLE {self.q(obj.table)} ALTER COLUMN {self.q(obj.column)} DROP MASK;"
        if isinstance(obj, TagAssignment):
            where = f"ALTER TABLE {self.q(obj.table)}"
            if obj.column:
                where += f" ALTER COLUMN {self.q(obj.column)}"
            return f"{where} UNSET TAGS ({self.lit(obj.tag)});"
        assert isinstance(obj, AbacPolicy)
        return f"DROP POLICY {self.q(obj.name)} ON {obj.securable_type} {self.q(obj.securable)};"


STATEMENTS: dict[str, type[Statements]] = {
    "snowflake": SnowflakeStatements,
    "databricks": DatabricksStatements,
}


def statements_for(
    platform: str,
    target: Target | None = None,
    types: dict[str, str] | None = None,
    live: bool = False,
) -> Statements:
    return STATEMENTS[platform](target, types, live)


def _what(obj: CatalogObject) -> str:
    if is_definition(obj):
        return f"{type(obj).__name__} {obj.name}"  # type: ignore[union-attr]
    return f"{type(obj).__name__} {'.'.join(place_key(obj)[1:])}"  # type: ignore[arg-type]
