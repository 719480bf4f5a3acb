"""Plan steps: one statement (or one atomic group of statements) with its effect on the catalog.

A :class:`Step` says what it does to the catalog state (define, drop, attach or detach one
object, possibly replacing another) and carries its SQL. Creating statements are rendered by
the platform's target (``render_object``), exactly as ``accord compile`` writes them; the
statements only a migration needs (``SET BODY``, ``FORCE`` swaps, combined ``DROP``/``ADD``,
``DROP``, ``UNSET``) are spelled by the platform's target file too
(:class:`targets.migration.MigrationSQL`); :class:`Statements` pairs each with its effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from accord.compiler.plan.state import PlanError, State
from accord.targets import get_target
from accord.targets.base import Target
from accord.targets.identity import Definition, Placement, is_definition, place_key
from accord.targets.migration import NoStatement
from accord.targets.objects import (
    CatalogObject,
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
    """Builds steps for one platform: the SQL from the platform's target, the effect here."""

    def __init__(
        self,
        target: Target,
        types: dict[str, str] | None = None,
        live: bool = False,
    ) -> None:
        self.target = target
        self.platform: str = target.platform
        #: the platform's migration statements (targets/snowflake.py, targets/databricks.py)
        self.sql = target.migrations(types, live)

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
                undone = self.sql.undo_create(step.obj)  # type: ignore[arg-type]
                if undone is not None:
                    return Step("drop", undone[0], None, undone[1], note)
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
        """The target's own statement for ``obj``, as ``accord compile`` writes it (unless the
        platform spells a migration's creation otherwise)."""
        spelled = self.sql.create(obj)
        if spelled is not None:
            return spelled
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
        spelled = self.sql.replace(obj, old)
        return self.create(obj) if spelled is None else spelled

    def swap(self, obj: Placement, old: Placement) -> str:
        """Replace a placement in one statement. Default: the target's statement replaces."""
        spelled = self.sql.swap(obj, old)
        return self.create(obj) if spelled is None else spelled

    def drop_sql(self, obj: Definition) -> str:
        return self.sql.drop(obj)

    def detach_sql(self, obj: Placement) -> str:
        try:
            return self.sql.detach(obj)
        except NoStatement as err:
            raise PlanError(str(err)) from None


def statements_for(
    platform: str,
    target: Target | None = None,
    types: dict[str, str] | None = None,
    live: bool = False,
) -> Statements:
    return Statements(target or get_target(platform), types, live)


def _what(obj: CatalogObject) -> str:
    if is_definition(obj):
        return f"{type(obj).__name__} {obj.name}"  # type: ignore[union-attr]
    return f"{type(obj).__name__} {'.'.join(place_key(obj)[1:])}"  # type: ignore[arg-type]
