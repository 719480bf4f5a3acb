"""Changes into units: what each change of one platform's catalog takes, as steps.

Every change between the base and head catalogs (``compiler/plan/diff.py``) becomes a
:class:`~compiler.plan.model.Unit` with the phase that fixes its place in a stage: a definition
created, changed in place or dropped; a placement attached, swapped or detached; a signature
change as a *flow* through an interim policy (the old policy cannot change in place, and an
attached policy cannot be dropped). Each unit says which identifier domains it changes (for the
cutover groups) and, on Databricks, whether it waits for the handover stage.
"""

from __future__ import annotations

from dataclasses import replace

from accord.compiler.core.platforms import facts
from accord.compiler.plan.diff import Change, PlatformDiff
from accord.compiler.plan.model import Unit
from accord.compiler.plan.state import Column, State, condition_holds, covers
from accord.compiler.plan.steps import Statements, Step
from accord.targets.identity import (
    Definition,
    Placement,
    identity,
    is_definition,
    place_key,
    references,
)
from accord.targets.kinds import (
    ABAC_SET,
    ABAC_UNSET,
    APPLY_PHASES,
    BODY,
    BODY_LATE,
    CREATE_TABLE,
    DETACH,
    FLOW_IN,
    FLOW_OUT,
    RETIRE,
    ROWS,
    TAG_SET,
    kind,
)
from accord.targets.objects import (
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


class UnitMaker:
    """The units of one platform's changes. ``names``: the definition names (upper-cased) of
    both catalogs; an interim policy's name is added to it when one is made."""

    def __init__(
        self,
        diff: PlatformDiff,
        st: Statements,
        before: State,
        after: State,
        names: set[str],
        domains: dict[Column, str],
    ) -> None:
        self.diff = diff
        self.platform = diff.platform
        self.st = st
        self.before = before
        self.after = after
        self.names = names
        self.domains = domains

    def units(self) -> list[Unit]:
        flows = {
            c.obj.name.upper()
            for c in self.diff.changes
            if c.kind == "changed" and c.detail == "signature"
        }
        out: list[Unit] = []
        for change in self.diff.changes:
            obj = change.obj
            if is_definition(obj):
                if change.kind == "changed" and change.detail == "signature":
                    out += self._flow(change)
                elif _gains_expiry(change):
                    out += self._expiry(change)
                else:
                    out.append(self._definition_unit(change))
            elif not (change.head is not None and policy_of(change.head) in flows):
                out.append(self._placement_unit(change))
        out = [replace(unit, domains=frozenset(self._domains_touched(unit))) for unit in out]
        return self._mark_handover(out)

    def _retags_after_policies(self, units: list[Unit]) -> list[Unit]:
        """A column retagged to a value only an ABAC policy this plan creates matches (a row
        key tagged for its table alone when the table gains a second dimension) waits for a
        later stage: a new policy is not certainly in effect within the stage that creates it,
        and the retag ends the match of the old value's policy at once. So does removing the
        ABAC policies that cover the retagged tables, which protect them until the retag. The
        new policy, created first, matches nothing meanwhile: its key values are on no
        column yet."""
        created = [
            (policy, condition)
            for u in units
            if u.phase == ABAC_SET
            for step in u.steps
            if isinstance(policy := step.obj, AbacPolicy) and step.replaces is None
            for condition, _ in policy.match_columns
        ]

        def a_new_policy_matches(tag: TagAssignment) -> bool:
            return any(
                covers(policy, tag.table.upper()) and condition_holds(c, {tag.tag: tag.value})
                for policy, c in created
            )

        retagged: set[str] = set()
        out = []
        for u in units:
            step = u.steps[0] if u.steps else None
            if (
                u.phase == TAG_SET
                and step is not None
                and isinstance(step.obj, TagAssignment)
                and isinstance(step.replaces, TagAssignment)
                and step.replaces.value != step.obj.value
                and a_new_policy_matches(step.obj)
            ):
                retagged.add(step.obj.table.upper())
                u = replace(u, handover=True)
            out.append(u)
        if not retagged:
            return units
        return [
            replace(u, handover=True)
            if u.phase == ABAC_UNSET
            and any(
                isinstance(s.obj, AbacPolicy) and any(covers(s.obj, t) for t in retagged)
                for s in u.steps
            )
            else u
            for u in out
        ]

    def _mark_handover(self, units: list[Unit]) -> list[Unit]:
        """Table level to ABAC on Databricks: the table-level detaches of tables whose columns
        this plan tags wait for a later stage (the tags are not in effect within the stage that
        makes them), and so do body changes of functions that are attached table-level before
        and only used through ABAC after (without their identity check while still attached
        table-level, the ``unmasked_for`` principals would see masked values)."""
        if not facts(self.platform).tags_take_effect_later:
            return units
        units = self._retags_after_policies(units)
        tagged = {
            s.obj.table.upper()
            for u in units
            if u.phase == TAG_SET
            for s in u.steps
            if isinstance(s.obj, TagAssignment)
        }
        units = [
            replace(u, handover=True) if u.phase == DETACH and u.tables & tagged else u
            for u in units
        ]
        table_level_before = {
            p.policy.upper()
            for p in self.before.places.values()
            if isinstance(p, RowFilterAttachment | MaskAttachment)
        }
        table_level_after = {
            p.policy.upper()
            for p in self.after.places.values()
            if isinstance(p, RowFilterAttachment | MaskAttachment)
        }
        abac_after = {
            p.function.upper() for p in self.after.places.values() if isinstance(p, AbacPolicy)
        }
        any_handover = any(o.handover for o in units)
        return [
            replace(u, phase=BODY_LATE, handover=True)
            if (
                u.phase == BODY
                and u.key.split("/")[-1] in table_level_before - table_level_after
                and u.key.split("/")[-1] in abac_after
                and any_handover
            )
            else u
            for u in units
        ]

    def _unit(
        self, phase: int, obj: CatalogObject, steps: list[Step], change: Change, **more: object
    ) -> Unit:
        key = "/".join(identity(obj))
        return Unit(
            self.platform,
            phase,
            key,
            tuple(steps),
            change.describe(self.platform),
            **more,  # type: ignore[arg-type]
        )

    def _definition_unit(self, change: Change) -> Unit:
        obj: Definition = change.obj  # type: ignore[assignment]
        what = change.describe(self.platform)
        phases = kind(obj).phases
        if change.kind == "added":
            step = self.st.define(obj, None, f"new: {what}")
            return self._unit(phases.added, obj, [step], change)
        if change.kind == "removed":
            steps = [self.st.drop(obj, f"unused: {what}")]
            if isinstance(obj, Tag) and obj.masking_policies and facts(self.platform).tag_masking:
                # a tag carrying masking policies cannot be dropped (and they cannot be dropped
                # while on it): unset them first, once no column carries the tag
                # (docs.snowflake.com/en/user-guide/tag-based-masking-policies)
                bare = replace(obj, masking_policies=())
                note = f"unused: {what}: unset its masking policies first"
                steps = [self.st.define(bare, obj, note), self.st.drop(bare, f"unused: {what}")]
            return self._unit(phases.removed, obj, steps, change)
        step = self.st.define(change.head, change.base, what)  # type: ignore[arg-type]
        return self._unit(phases.changed, obj, [step], change)

    def _placement_unit(self, change: Change) -> Unit:
        what = change.describe(self.platform)
        obj = change.obj
        phases = kind(obj).phases
        if change.kind == "removed":
            phase, steps = phases.removed, [self.st.detach(obj, what)]  # type: ignore[arg-type]
        else:
            step = self.st.attach(change.head, change.base, what)  # type: ignore[arg-type]
            phase, steps = phases.added, [step]
        releases: set[str] = set()
        uses: set[str] = set()
        if change.base is not None and policy_of(change.base) != policy_of(change.head):
            releases.add(policy_of(change.base) or "")
        if change.head is not None and policy_of(change.head):
            uses.add(policy_of(change.head) or "")
        tables = {t for t in map(_protected_table, (change.base, change.head)) if t}
        return self._unit(
            phase,
            obj,
            steps,
            change,
            releases=frozenset(releases),
            uses=frozenset(uses),
            tables=frozenset(tables),
        )

    def _expiry(self, change: Change) -> list[Unit]:
        """A mapping table that gains its expiry column: the column is added in the prepare
        stage (no policy reads it yet, so no query answers differently), before any policy
        that reads it is created or changed; the rows are replaced in the apply stage, as any
        grants change."""
        old: MappingTable = change.base  # type: ignore[assignment]
        new: MappingTable = change.head  # type: ignore[assignment]
        what = change.describe(self.platform)
        widened = replace(
            old, expiry_column=new.expiry_column, rows=tuple((*r, None) for r in old.rows)
        )
        add = self.st.define(widened, old, f"{what}: add the expiry column {new.expiry_column}")
        rows = self.st.define(new, widened, what)
        return [
            self._unit(CREATE_TABLE, new, [add], change),
            self._unit(ROWS, new, [rows], change),
        ]

    def _flow(self, change: Change) -> list[Unit]:
        """A signature change: the policy cannot change in place, and an attached policy
        cannot be dropped. Swap every attachment to an interim policy with the new signature
        (one statement each), drop and re-create the policy under its own name, swap back, drop
        the interim: every statement leaves the tables protected, and the catalog ends up
        exactly as compiled."""
        old: RowFilterPolicy | MaskPolicy = change.base  # type: ignore[assignment]
        new: RowFilterPolicy | MaskPolicy = change.head  # type: ignore[assignment]
        what = change.describe(self.platform)
        interim = replace(new, name=self._interim_name(new.name))
        attached = [
            p
            for p in self.after.places.values()
            if isinstance(p, RowFilterAttachment | MaskAttachment)
            and p.policy.upper() == new.name.upper()
        ]
        flow_in: list[Step] = []
        swap_back: list[Step] = []
        if attached:
            flow_in.append(self.st.define(interim, None, f"{what}: interim policy, new signature"))
            for place in attached:
                current = self.before.places.get(place_key(place))
                via = replace(place, policy=interim.name)
                flow_in.append(self.st.attach(via, current, f"{what}: swap to the interim policy"))
                swap_back.append(self.st.attach(place, via, f"{what}: swap back to {new.name}"))
        flow_out = [
            self.st.drop(old, f"{what}: drop the old signature, now detached"),
            self.st.define(new, None, f"{what}: re-create under its own name"),
            *swap_back,
        ]
        if attached:
            flow_out.append(self.st.drop(interim, f"{what}: drop the interim policy"))
        key = new.name.upper()
        tables = frozenset(p.table.upper() for p in attached)
        out = Unit(self.platform, FLOW_OUT, key, tuple(flow_out), what, flow=key, tables=tables)
        if not flow_in:
            return [out]
        released = frozenset(
            c.policy.upper()  # type: ignore[union-attr]
            for p in attached
            if (c := self.before.places.get(place_key(p))) is not None
        )
        flow = Unit(
            self.platform, FLOW_IN, key, tuple(flow_in), what, releases=released, tables=tables
        )
        return [flow, out]

    def _interim_name(self, name: str) -> str:
        n = 2
        while f"{name}_V{n}".upper() in self.names:
            n += 1
        interim = self.st.target.case(f"{name}_v{n}")
        self.names.add(interim.upper())
        return interim

    # ---- identifier domains ---------------------------------------------------------------------

    def _columns_using(self, names: set[str]) -> set[Column]:
        """Domain columns masked, in base or head, by a policy in ``names`` or by a policy that
        reads one of ``names`` (a salt function)."""
        found = set()
        for state in (self.before, self.after):
            # a policy's body is walked once, not per column
            reads_of: dict[str, frozenset[str]] = {}
            for col in self.domains:
                for policy in state.masks_on(*col):
                    key = policy.upper()
                    if key not in reads_of:
                        reads_of[key] = (
                            references(state.defs[key]) if key in state.defs else frozenset()
                        )
                    reads = reads_of[key]
                    if key in names or reads & names:
                        found.add(col)
        return found

    def _domains_touched(self, unit: Unit) -> set[str]:
        if unit.phase < APPLY_PHASES or unit.phase >= RETIRE:
            return set()
        cols: set[Column] = set()
        for step in unit.steps:
            obj = step.obj
            if isinstance(obj, MaskPolicy | SaltFunction) and step.op == "define":
                cols |= self._columns_using({obj.name.upper()})
            elif isinstance(obj, MaskAttachment):
                cols.add((obj.table.upper(), obj.column.upper()))
            elif isinstance(obj, TagAssignment):
                cols |= {
                    c
                    for c in self.domains
                    if c[0] == obj.table.upper() and (not obj.column or c[1] == obj.column.upper())
                }
            elif isinstance(obj, Tag):
                tagged = {
                    (p.table.upper(), (p.column or "").upper())
                    for s in (self.before, self.after)
                    for p in s.places.values()
                    if isinstance(p, TagAssignment) and p.tag.upper() == obj.name.upper()
                }
                cols |= {c for c in self.domains if c in tagged or (c[0], "") in tagged}
            elif isinstance(obj, AbacPolicy) and obj.kind == "COLUMN MASK":
                cols |= self._columns_using({obj.function.upper()})
        return {self.domains[c] for c in cols if c in self.domains}


# --------------------------------------------------------------------------------------------
# what a placement uses and where it is


def policy_of(obj: CatalogObject | None) -> str | None:
    """The function (upper-cased) a placement applies, or None."""
    return None if obj is None else kind(obj).applies(obj)


def table_of(obj: Placement) -> str:
    """The table a placement is on (for an ABAC policy: its securable)."""
    return kind(obj).table(obj)  # type: ignore[return-value]


def _protected_table(obj: CatalogObject | None) -> str | None:
    table = None if obj is None else kind(obj).table(obj)
    return None if table is None else table.upper()


def _gains_expiry(change: Change) -> bool:
    """A mapping table whose grants gain their first date (``until``): its expiry column."""
    old, new = change.base, change.head
    return (
        change.kind == "changed"
        and isinstance(old, MappingTable)
        and isinstance(new, MappingTable)
        and old.expiry_column is None
        and new.expiry_column is not None
    )
