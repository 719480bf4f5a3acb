"""Order the changes between two lowered models into stages, and prove the order safe.

Every change becomes a *unit*: one or a few steps that belong together, with a phase that
fixes its place inside a stage (create before attach, attach before detach, detach before
drop). Units go into stages per platform:

``prepare``
    new objects that nothing uses yet (policies, salt functions, mapping tables, tags):
    no query answers differently afterwards;
``apply``
    everything that changes what queries return and belongs to one platform only: grants
    (one transaction / one MERGE), bodies changed in place, attachments added or swapped in
    one statement, signature changes through an interim policy;
``cutover``
    one stage per platform for each *cutover group*: the changes to an identifier domain
    held on several platforms (a salt introduced or rotated, a mask's strategy changed).
    The group is done only when every platform's stage is;
``handover``
    on Databricks, the table-level filters and masks that ABAC policies replace, dropped only
    in a stage after the one that tagged the columns and created the policies (a governed-tag
    assignment takes minutes to take effect), once that stage's checks passed; then the
    function bodies that no longer need their identity check;
``retire``
    what the head model no longer uses, dropped after everything was detached from it.

The planner then replays every stage, and every stage's rollback, on :class:`State` and
refuses the plan (:class:`PlanError`, exit 1) when a statement would break an invariant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from compiler.model.schema import PLATFORMS
from compiler.plan.diff import Change, PlatformDiff, diff_catalogs
from compiler.plan.index import Places
from compiler.plan.state import Column, PlanError, State, covers, identity_literals
from compiler.plan.steps import Statements, Step, statements_for
from compiler.plan.verify import Check, checks_for
from targets.base import Target
from targets.identity import Definition, Placement, identity, is_definition, place_key, references
from targets.objects import (
    AbacPolicy,
    Catalog,
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

StageKind = Literal["prepare", "apply", "cutover", "handover", "retire"]
#: (platform, TABLE, COLUMN) upper-cased -> identifier domain
Domains = dict[tuple[str, str, str], str]
#: what :meth:`_PlatformPlanner._answers` says of a state
#: (unprotected, doubled, blocked, losses: watched entry -> who may not see what there)
_Answers = tuple[list[str], list[str], dict[str, str], dict[tuple[str, str | None], str]]

# phases: the order of units inside a stage; < APPLY_PHASES go to prepare, >= RETIRE to retire
CREATE_TABLE, CREATE_SALT, CREATE_POLICY, CREATE_TAG = 0, 1, 2, 3
APPLY_PHASES = 10
ROWS, SALT, BODY, TAG_DEF, ATTACH, TAG_SET, ABAC_SET = 10, 11, 12, 13, 14, 15, 16
DETACH, TAG_UNSET, ABAC_UNSET = 20, 21, 22
#: a body change that must wait until the table-level attachments of the function are gone
BODY_LATE = 23
FLOW_IN, FLOW_OUT = 30, 31
RETIRE = 40
DROP_TAG, DROP_POLICY, DROP_REST = 40, 41, 42

WHY = {
    "prepare": "creates objects that nothing uses yet: no query answers differently afterwards.",
    "apply": "changes what queries return, on this platform only. Bodies change in place and "
    "attachments are swapped in single statements, so every governed table and column stays "
    "protected between any two statements.",
    "cutover": "changes what a masked identifier looks like on this platform. The same "
    "identifier domain is held on other platforms, and they change in the same group: until "
    "every platform has applied its stage, digests on one side no longer match the plan for the "
    "other (or still join with it). `accord migrate status` and lint rule ACC601 report the "
    "group until it is done everywhere.",
    "handover": "removes the table-level filters and masks that the ABAC policies of an earlier "
    "stage replace, then drops the identity checks the functions no longer need. Apply it only "
    "after the earlier stage's checks passed and the governed tags are in effect: the "
    "documentation says a tag assignment can take a few minutes to take effect "
    "(unity-catalog/abac/requirements), and until then the ABAC policies match nothing. "
    "`accord migrate apply` starts it only --abac-settle minutes (default 15) after the stage "
    "before it was applied.",
    "retire": "removes what the head model no longer uses. Everything was detached from it in "
    "the earlier stages: an attached policy is never dropped.",
}


@dataclass
class Unit:
    platform: str
    phase: int
    key: str
    steps: list[Step]
    change: str
    #: identifier domains whose masked values this unit changes
    domains: set[str] = field(default_factory=set)
    #: policies this unit stops using (so their flow can drop them afterwards)
    releases: set[str] = field(default_factory=set)
    #: tables whose protection this unit adds (attach-class) or removes (detach-class)
    tables: set[str] = field(default_factory=set)
    #: for FLOW_OUT units: the policy re-created under its own name
    flow: str | None = None
    group: str | None = None
    #: for attach-class units: the policies (upper-cased) the new placement uses
    uses: set[str] = field(default_factory=set)
    #: goes to the handover stage (after the stage that makes the ABAC tags and policies)
    handover: bool = False


@dataclass
class Stage:
    platform: str
    kind: StageKind
    group: str | None
    steps: list[Step]
    changes: list[str]
    rollback: list[Step] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    id: str = ""
    requires: list[str] = field(default_factory=list)
    #: what a reviewer must know before running the stage (outages it cannot avoid)
    notes: list[str] = field(default_factory=list)


@dataclass
class Group:
    id: str
    domains: tuple[str, ...]
    platforms: tuple[str, ...]
    changes: list[str]
    stages: list[str] = field(default_factory=list)


@dataclass
class Plan:
    diffs: dict[str, PlatformDiff]
    stages: list[Stage]
    groups: list[Group]
    base_fingerprint: str = ""
    head_fingerprint: str = ""
    #: changes of the model that lower to no catalog object (indexes, surfaces)
    outside: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.stages


# --------------------------------------------------------------------------------------------
# entry point


def build_plan(
    base: dict[str, Catalog],
    head: dict[str, Catalog],
    domains: Domains,
    targets: dict[str, Target] | None = None,
    live: frozenset[str] = frozenset(),
) -> Plan:
    """The staged migration from the ``base`` catalogs to the ``head`` catalogs. ``live``: the
    platforms whose base was read from the live account."""
    targets = targets or {}
    platforms = sorted(base.keys() | head.keys(), key=PLATFORMS.index)  # type: ignore[arg-type]
    diffs = {p: diff_catalogs(p, base.get(p), head.get(p)) for p in platforms}
    units: list[Unit] = []
    planners: dict[str, _PlatformPlanner] = {}
    for platform, diff in diffs.items():
        if not diff.changes:
            continue
        planners[platform] = _PlatformPlanner(
            diff, domains, targets.get(platform), platform in live
        )
        units += planners[platform].units()
    members = _cutover_groups(units)
    for platform, planner in planners.items():
        planner.place([u for u in units if u.platform == platform])
    groups = _groups(units, members)
    stages: list[Stage] = []
    for platform, planner in planners.items():
        stages += planner.stages([u for u in units if u.platform == platform])
    stages.sort(key=_order_key)
    _number(stages, groups)
    return Plan(diffs=diffs, stages=stages, groups=groups)


# --------------------------------------------------------------------------------------------
# one platform


class _PlatformPlanner:
    def __init__(
        self, diff: PlatformDiff, domains: Domains, target: Target | None, live: bool = False
    ) -> None:
        self.diff = diff
        self.platform = diff.platform
        everything = [
            *(diff.base.objects if diff.base else ()),
            *(diff.head.objects if diff.head else ()),
        ]
        self.names = {o.name.upper() for o in everything if is_definition(o)}  # type: ignore[union-attr]
        types = {o.name.upper(): o.params[0].type for o in everything if isinstance(o, MaskPolicy)}
        self.st: Statements = statements_for(self.platform, target, types, live)
        self.before = State.of(diff.base, self.platform, self.names)
        self.after = State.of(diff.head, self.platform, self.names)
        self.domains = {(t, c): d for (p, t, c), d in domains.items() if p == self.platform}
        self.protected_tables, self.protected_columns = self._protected()
        #: availability lost during the stage being replayed: what -> statement numbers
        self.degraded: dict[str, list[int]] = {}
        self.at = 0
        #: who may see every row / the clear values both before and after: nobody may lose it
        keys = [(t, None) for t in self.protected_tables] + self.protected_columns
        before, after = self.before.exempt_all(keys), self.after.exempt_all(keys)
        self.needed = {key: _both(before[key], after[key]) for key in keys}
        #: the entries whose access the simulator watches: a principal can lose only what it
        #: needs (None or empty: nobody needs anything there)
        self.watched = [key for key, need in self.needed.items() if need]
        self._watch_order = {key: i for i, key in enumerate(self.watched)}
        self._tables_kept = set(self.protected_tables)
        self._columns_kept = set(self.protected_columns)
        #: :meth:`_answers` by what they depend on
        self._answered: dict[tuple[object, ...], tuple[_Answers, list[object]]] = {}

    # ---- what must stay protected --------------------------------------------------------------

    def _protected(self) -> tuple[list[str], list[Column]]:
        tables: set[str] = set()
        columns: set[Column] = set()
        for state in (self.before, self.after):
            for p in state.places.values():
                tables.add(_table_of(p).upper())
                if isinstance(p, MaskAttachment | TagAssignment) and p.column:
                    columns.add((p.table.upper(), p.column.upper()))
        tables |= {t for t, _ in self.domains}
        columns |= set(self.domains)
        keep_tables = sorted(
            t for t in tables if self.before.filters_on(t) and self.after.filters_on(t)
        )
        keep_columns = sorted(
            c for c in columns if self.before.masks_on(*c) and self.after.masks_on(*c)
        )
        return keep_tables, keep_columns

    # ---- units ---------------------------------------------------------------------------------

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
                else:
                    out.append(self._definition_unit(change))
            elif not (change.head is not None and _policy_of(change.head) in flows):
                out.append(self._placement_unit(change))
        for unit in out:
            unit.domains = self._domains_touched(unit)
        self._mark_handover(out)
        return out

    def _mark_handover(self, units: list[Unit]) -> None:
        """Table level to ABAC on Databricks: the table-level detaches of tables whose columns
        this plan tags wait for a later stage (the tags are not in effect within the stage that
        makes them), and so do body changes of functions that are attached table-level before
        and only used through ABAC after (without their identity check while still attached
        table-level, the ``unmasked_for`` principals would see masked values)."""
        if self.platform != "databricks":
            return
        tagged = {
            s.obj.table.upper()
            for u in units
            if u.phase == TAG_SET
            for s in u.steps
            if isinstance(s.obj, TagAssignment)
        }
        for u in units:
            if u.phase == DETACH and u.tables & tagged:
                u.handover = True
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
        for u in units:
            if (
                u.phase == BODY
                and u.key.split("/")[-1] in table_level_before - table_level_after
                and u.key.split("/")[-1] in abac_after
                and any(o.handover for o in units)
            ):
                u.phase, u.handover = BODY_LATE, True

    def _unit(self, phase: int, obj: CatalogObject, steps: list[Step], change: Change) -> Unit:
        key = "/".join(identity(obj))
        return Unit(self.platform, phase, key, steps, change.describe(self.platform))

    def _definition_unit(self, change: Change) -> Unit:
        obj: Definition = change.obj  # type: ignore[assignment]
        what = change.describe(self.platform)
        if change.kind == "added":
            phase = {
                MappingTable: CREATE_TABLE,
                SaltFunction: CREATE_SALT,
                RowFilterPolicy: CREATE_POLICY,
                MaskPolicy: CREATE_POLICY,
                Tag: CREATE_TAG,
            }[type(obj)]
            return self._unit(phase, obj, [self.st.define(obj, None, f"new: {what}")], change)
        if change.kind == "removed":
            phase = (
                DROP_TAG
                if isinstance(obj, Tag)
                else DROP_POLICY
                if isinstance(obj, RowFilterPolicy | MaskPolicy)
                else DROP_REST
            )
            steps = [self.st.drop(obj, f"unused: {what}")]
            if isinstance(obj, Tag) and obj.masking_policies and self.platform == "snowflake":
                # a tag carrying masking policies cannot be dropped (and they cannot be dropped
                # while on it): unset them first, once no column carries the tag
                # (docs.snowflake.com/en/user-guide/tag-based-masking-policies)
                bare = replace(obj, masking_policies=())
                note = f"unused: {what}: unset its masking policies first"
                steps = [self.st.define(bare, obj, note), self.st.drop(bare, f"unused: {what}")]
            return self._unit(phase, obj, steps, change)
        phase = {MappingTable: ROWS, SaltFunction: SALT, Tag: TAG_DEF}.get(type(obj), BODY)
        step = self.st.define(change.head, change.base, what)  # type: ignore[arg-type]
        return self._unit(phase, obj, [step], change)

    def _placement_unit(self, change: Change) -> Unit:
        what = change.describe(self.platform)
        obj = change.obj
        add_phase, remove_phase = {
            RowFilterAttachment: (ATTACH, DETACH),
            MaskAttachment: (ATTACH, DETACH),
            TagAssignment: (TAG_SET, TAG_UNSET),
            AbacPolicy: (ABAC_SET, ABAC_UNSET),
        }[type(obj)]
        if change.kind == "removed":
            unit = self._unit(remove_phase, obj, [self.st.detach(obj, what)], change)  # type: ignore[arg-type]
        else:
            step = self.st.attach(change.head, change.base, what)  # type: ignore[arg-type]
            unit = self._unit(add_phase, obj, [step], change)
        if change.base is not None and _policy_of(change.base) != _policy_of(change.head):
            unit.releases.add(_policy_of(change.base) or "")
        if change.head is not None and _policy_of(change.head):
            unit.uses.add(_policy_of(change.head) or "")
        unit.tables = {t for t in map(_protected_table, (change.base, change.head)) if t}
        return unit

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
        tables = {p.table.upper() for p in attached}
        out = Unit(self.platform, FLOW_OUT, key, flow_out, what, flow=key, tables=tables)
        if not flow_in:
            return [out]
        released = {
            c.policy.upper()  # type: ignore[union-attr]
            for p in attached
            if (c := self.before.places.get(place_key(p))) is not None
        }
        flow = Unit(self.platform, FLOW_IN, key, flow_in, what, releases=released, tables=tables)
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

    # ---- stages -------------------------------------------------------------------------------

    def place(self, units: list[Unit]) -> None:
        """Move units that must not run before others into the same or a later stage: a unit
        that removes protection from a table follows the units that add its new protection, and
        a policy is dropped and re-created only after everything else left it."""
        order = ["apply", *sorted({u.group for u in units if u.group})]

        def rank(u: Unit) -> int:
            return order.index(u.group) if u.group else 0

        # looked up by table and by policy, not scanned per unit (a plan that moves every
        # table was quadratic here); only the latest group of each list matters, not its order
        attaching: dict[str, list[Unit]] = {}
        bodies: dict[str, list[Unit]] = {}
        for o in units:
            if ATTACH <= o.phase <= ABAC_SET:
                for t in o.tables:
                    attaching.setdefault(t, []).append(o)
            if o.phase == BODY:
                bodies.setdefault(o.key.split("/")[-1], []).append(o)

        changed = True
        while changed:
            changed = False
            for u in units:
                if u.phase < APPLY_PHASES or u.phase >= RETIRE:
                    continue
                after: Iterable[Unit] = ()
                if DETACH <= u.phase <= ABAC_UNSET:
                    after = [o for t in u.tables for o in attaching.get(t, ())]
                elif ATTACH <= u.phase <= ABAC_SET and u.uses:
                    # attached to a policy whose body changes: not before that body change
                    after = [o for name in u.uses for o in bodies.get(name, ())]
                elif u.phase in (BODY, BODY_LATE) and _narrows(u):
                    # a body that lets fewer principals through changes after the columns
                    # that keep those principals' access have moved to another policy
                    name = u.key.split("/")[-1]
                    after = [
                        o for o in units if ATTACH <= o.phase <= ABAC_SET and name in o.releases
                    ]
                elif u.phase == FLOW_OUT:
                    after = [
                        o
                        for o in units
                        if (u.flow in o.releases or (o.phase == FLOW_IN and o.key == u.flow))
                        and o is not u
                    ]
                latest = max(after, key=rank, default=None)
                if latest is not None and rank(latest) > rank(u):
                    u.group = latest.group
                    changed = True

    def stages(self, units: list[Unit]) -> list[Stage]:
        buckets: dict[tuple[int, str], list[Unit]] = {}
        for u in units:
            if u.phase < APPLY_PHASES:
                slot = (0, "prepare")
            elif u.phase >= RETIRE:
                slot = (4, "retire")
            elif u.handover:
                slot = (3, "handover")
            elif u.group:
                slot = (2, u.group)
            else:
                slot = (1, "apply")
            buckets.setdefault(slot, []).append(u)
        state = self.before.copy()
        stages = []
        for (rank, name), members in sorted(buckets.items()):
            members = _availability_order(_handover_order(members), self.needed)
            kind: StageKind = "cutover" if rank == 2 else name  # type: ignore[assignment]
            stage = Stage(
                platform=self.platform,
                kind=kind,
                group=name if rank == 2 else None,
                steps=[s for u in members for s in u.steps],
                changes=_unique(u.change for u in members),
            )
            start = state.copy()
            stage.rollback = self._replay(stage, state)
            left = state.blocked(self.protected_tables, self.protected_columns)
            if left:
                raise PlanError(
                    f"{self.platform}: after the {stage.kind} stage, every query is refused on "
                    f"{'; '.join(left.values())} (Databricks blocks access when table-level and "
                    "ABAC policies apply different functions: abac/abac-vs-rls-cm)"
                )
            undone = state.copy()
            restores = set(start.blocked(self.protected_tables, self.protected_columns))
            self._simulate(undone, stage.rollback, f"rollback of the {stage.kind} stage", restores)
            if not undone.same_as(start):
                raise PlanError(
                    f"{self.platform}: the rollback of the {stage.kind} stage does not restore "
                    "the catalog as it was"
                )
            salts, attached = self.group_subjects(state, stage)
            stage.checks = checks_for(stage.steps, state, self.st, salts, attached)
            stage.notes += _outage_notes(
                state.blocked(self.protected_tables, self.protected_columns, possible=True)
            )
            state.settle()
            stages.append(stage)
        if not state.same_as(self.after):
            raise PlanError(f"{self.platform}: the stages do not produce the head catalog")
        return stages

    def group_subjects(
        self, state: State, stage: Stage
    ) -> tuple[list[SaltFunction], list[MaskAttachment]]:
        """For a cutover stage: the salt functions behind the masks of the group's domain
        columns, and those columns' attachments, for the stage's checks."""
        if stage.group is None:
            return [], []
        domains = set(stage.group.split("-"))
        salts: dict[str, SaltFunction] = {}
        attached = []
        for col in sorted(c for c, d in self.domains.items() if d in domains):
            place = state.places.get(("mask", *col))
            if isinstance(place, MaskAttachment):
                attached.append(place)
            for policy in state.masks_on(*col):
                definition = state.defs.get(policy.upper())
                for ref in references(definition) if definition is not None else ():
                    if isinstance(salt := state.defs.get(ref), SaltFunction):
                        salts[salt.name] = salt
        return [salts[n] for n in sorted(salts)], attached

    def _replay(self, stage: Stage, state: State) -> list[Step]:
        """Run the stage on ``state`` (checking every statement) and return its rollback."""
        undo = []
        blocked = state.blocked(self.protected_tables, self.protected_columns)
        # refused before the stage starts: the tagging stage before a handover leaves each
        # table carrying both mechanisms once its tags take effect (said in that stage's
        # header); the handover removes them one table at a time and must end with none
        inherited = set(blocked)
        self.degraded: dict[str, list[int]] = {}
        for i, step in enumerate(stage.steps, start=1):
            # the undoing step reads the state before the step: made first, instead of copying
            # the whole catalog per statement; what it raises is raised where it was (after
            # the step's checks), so a refused step still says why it is refused
            try:
                undoing: Step | Exception = self.st.inverse(step, state)
            except Exception as err:  # re-raised below, unchanged
                undoing = err
            self.at = i
            where = f"{stage.kind} stage, statement {i}"
            blocked = self._check(step, state, where, blocked, inherited)
            if isinstance(undoing, Exception):
                raise undoing
            undo.append(undoing)
        stage.notes += [
            f"{what} between statements {min(at)} and {max(at) + 1}: no order of single "
            "statements avoids it (the policies it moves between change in opposite ways); "
            "run the stage in one go"
            for what, at in self.degraded.items()
        ]
        self.degraded = {}
        return list(reversed(undo))

    def _simulate(
        self, state: State, steps: list[Step], where: str, restores: set[str] | None = None
    ) -> None:
        """Replay ``steps`` (a rollback) on ``state``; ``restores``: the tables refused in the
        state the rollback returns to, which may be refused on the way there."""
        blocked = state.blocked(self.protected_tables, self.protected_columns)
        excused = set(blocked) | (restores or set())
        for i, step in enumerate(steps, start=1):
            blocked = self._check(step, state, f"{where}, statement {i}", blocked, excused)

    def _answers(
        self, state: State, step: Step | None = None, previous: _Answers | None = None
    ) -> _Answers:
        """What the invariants ask of ``state`` after a statement: the protected tables and
        columns left unprotected, those two ABAC policies apply to for one user, the tables
        every query is refused on, and who may not see, among the watched entries, what they
        see before and after the plan.

        They depend only on the placements, the pending tag and ABAC changes, and the policy
        and tag definitions, so they are remembered by those: most statements of a plan
        (mapping tables, salt functions, a stage's rollback) leave all three as they were,
        and asking again was most of the time of planning a big estate (bench/README.md).
        ``previous``: the answers of the state before ``step``, from which those after a
        table-level attachment are derived (:meth:`_stepped`)."""
        stamp = state.places.stamp if isinstance(state.places, Places) else None
        key = None
        if stamp is not None:
            shaping = [
                (name, d)
                for name, d in state.defs.items()
                if isinstance(d, RowFilterPolicy | MaskPolicy | Tag)
            ]
            key = (
                stamp,
                tuple(state.prior.items()),
                tuple((name, id(d)) for name, d in shaping),
            )
            hit = self._answered.get(key)
            if hit is not None:
                return hit[0]
        answers = self._stepped(state, step, previous)
        if answers is None:
            answers = (
                state.unprotected(self.protected_tables, self.protected_columns),
                state.doubled(self.protected_tables, self.protected_columns),
                state.blocked(self.protected_tables, self.protected_columns),
                self._losses(state.exempt_all(self.watched)),
            )
        if key is not None:
            if len(self._answered) >= 8:  # few: a full answer holds one per watched entry
                self._answered.clear()
            # the definitions are kept with the answer, so their ids in the key stay theirs
            self._answered[key] = (answers, [stamp, shaping])
        return answers

    def _stepped(
        self, state: State, step: Step | None, previous: _Answers | None
    ) -> _Answers | None:
        """The answers after ``step`` from those before it (``previous``), when the step
        attaches or detaches a table-level row filter or mask and no tag or ABAC policy is
        placed or pending anywhere: then each table's and column's answers depend on its own
        attachment and that policy's definition only, so only the entry the step touches can
        change. None when that does not hold (everything is asked again): a plan that moves
        every table to another policy is linear, not quadratic."""
        if previous is None or step is None or step.op not in ("attach", "detach"):
            return None
        obj = step.obj
        if not isinstance(obj, RowFilterAttachment | MaskAttachment) or not state.plain():
            return None
        unprotected, doubled, blocked, losses = previous
        if unprotected or doubled or blocked:
            return None
        table = obj.table.upper()
        gaps = []
        entry: tuple[str, str | None]
        if isinstance(obj, RowFilterAttachment):
            entry = (table, None)
            if table in self._tables_kept and not state.filters_on(table):
                gaps.append(f"table {table} has no row filter")
        else:
            column = obj.column.upper()
            entry = (table, column)
            if entry in self._columns_kept and not state.masks_on(table, column):
                gaps.append(f"column {table}.{column} has no mask")
        losses = dict(losses)
        losses.pop(entry, None)
        if entry in self._watch_order:
            losses.update(self._losses({entry: state.exempt(*entry)}))
        return gaps, [], {}, losses

    def _losses(
        self, exempt: dict[tuple[str, str | None], frozenset[str] | None]
    ) -> dict[tuple[str, str | None], str]:
        """Who may not see, at each watched entry, what they see before and after the plan."""
        out = {}
        for (table, column), have in exempt.items():
            need = self.needed[(table, column)]
            lost = sorted(need - have) if need is not None and have is not None else []
            if need is not None and have is not None and lost:
                what = (
                    f"the clear values of {table}.{column}" if column else f"every row of {table}"
                )
                out[(table, column)] = (
                    f"{', '.join(lost)} may not see {what}, which they see before and after"
                )
        return out

    def _check(
        self,
        step: Step,
        state: State,
        where: str,
        blocked: dict[str, str] | None = None,
        excused: set[str] | None = None,
    ) -> dict[str, str]:
        """Run ``step`` on ``state`` and check every invariant; return the tables on which
        every query is refused afterwards. Such an outage (a table-level and an ABAC policy
        with different functions) may last only while the statements hand that table over:
        a statement that concerns none of the refused tables while one stays refused is an
        outage accord could have avoided by ordering, and is refused. ``excused``: tables
        refused already when the sequence started (or in the state a rollback returns to),
        which no order of this sequence could spare."""
        previous = self._answers(state)
        problems = step.run(state)
        unprotected, doubled, now, losses = self._answers(state, step, previous)
        problems += unprotected + doubled
        lasting = (set(blocked or {}) & set(now)) - (excused or set())
        if lasting and not _touches(step, lasting | set(now)):
            problems.append(
                "every query stays refused on "
                + "; ".join(now[t] for t in sorted(lasting))
                + " (Databricks blocks access when table-level and ABAC policies apply "
                "different functions: abac/abac-vs-rls-cm) while this statement concerns "
                "another table: hand each table over right after its table-level policy is set"
            )
        # not refused: said in the stage header, once the best order is found (the issue's
        # rule: "or say so in the stage header when it cannot be avoided"); in watched order
        for entry in sorted(losses, key=self._watch_order.__getitem__):
            self.degraded.setdefault(losses[entry], []).append(self.at)
        if problems:
            raise PlanError(
                f"{self.platform}, {where} ({step.note}): {'; '.join(problems)}. No ordering "
                "accord knows keeps every invariant here: plan this change in two steps, or "
                "keep the object's name so it can change in place."
            )
        return now


# --------------------------------------------------------------------------------------------
# cutover groups and numbering


def _cutover_groups(units: list[Unit]) -> dict[str, tuple[str, ...]]:
    """Give every unit that changes a domain held on several platforms its cutover group;
    domains changed together by one unit share a group. Returns group id -> its domains."""
    platforms: dict[str, set[str]] = {}
    for u in units:
        for d in u.domains:
            platforms.setdefault(d, set()).add(u.platform)
    shared = {d for d, ps in platforms.items() if len(ps) > 1}
    parent = {d: d for d in sorted(shared)}

    def find(d: str) -> str:
        while parent[d] != d:
            d = parent[d]
        return d

    for u in units:
        ds = sorted(u.domains & shared)
        for d in ds[1:]:
            parent[find(d)] = find(ds[0])
    members: dict[str, set[str]] = {}
    for d in shared:
        members.setdefault(find(d), set()).add(d)
    for u in units:
        ds = u.domains & shared
        if ds:
            u.group = "-".join(sorted(members[find(min(ds))]))
    return {"-".join(sorted(m)): tuple(sorted(m)) for m in members.values()}


def _groups(units: list[Unit], members: dict[str, tuple[str, ...]]) -> list[Group]:
    groups = []
    for gid in sorted(members):
        inside = [u for u in units if u.group == gid]
        groups.append(
            Group(
                id=gid,
                domains=members[gid],
                platforms=tuple(p for p in PLATFORMS if any(u.platform == p for u in inside)),
                changes=_unique(f"{u.platform}: {u.change}" for u in inside),
            )
        )
    return groups


def _order_key(stage: Stage) -> tuple[int, str, int]:
    rank = {"prepare": 0, "apply": 1, "cutover": 2, "handover": 3, "retire": 4}[stage.kind]
    return (rank, stage.group or "", PLATFORMS.index(stage.platform))  # type: ignore[arg-type]


def _number(stages: list[Stage], groups: list[Group]) -> None:
    """Ids in listing order (a cutover group's stages on every platform next to each other);
    each stage requires the previous stage of its platform."""
    last: dict[str, str] = {}
    by_group = {g.id: g for g in groups}
    for n, stage in enumerate(stages, start=1):
        suffix = f"_{stage.group}" if stage.group else ""
        stage.id = f"{n:02d}_{stage.platform}_{stage.kind}{suffix}"
        stage.requires = [last[stage.platform]] if stage.platform in last else []
        last[stage.platform] = stage.id
        if stage.group:
            by_group[stage.group].stages.append(stage.id)


# --------------------------------------------------------------------------------------------
# helpers


def _policy_of(obj: CatalogObject | None) -> str | None:
    if isinstance(obj, RowFilterAttachment | MaskAttachment):
        return obj.policy.upper()
    if isinstance(obj, AbacPolicy):
        return obj.function.upper()
    return None


def _table_of(obj: Placement) -> str:
    return obj.securable if isinstance(obj, AbacPolicy) else obj.table


def _protected_table(obj: CatalogObject | None) -> str | None:
    if obj is None or is_definition(obj):
        return None
    if isinstance(obj, AbacPolicy):
        return obj.securable.upper()
    return _table_of(obj).upper()  # type: ignore[arg-type]


def _named(unit: Unit) -> tuple[set[str], set[str]]:
    """The principals a body change stops and starts naming in its identity checks."""
    lost: set[str] = set()
    gained: set[str] = set()
    for step in unit.steps:
        old, new = step.replaces, step.obj
        if isinstance(old, RowFilterPolicy | MaskPolicy) and isinstance(
            new, RowFilterPolicy | MaskPolicy
        ):
            before, after = identity_literals(old.body), identity_literals(new.body)
            lost |= before - after
            gained |= after - before
    return lost, gained


def _narrows(unit: Unit) -> bool:
    """Whether a body change names principals in its identity checks no longer."""
    return bool(_named(unit)[0])


def _availability_order(
    units: list[Unit], needed: dict[tuple[str, str | None], frozenset[str] | None]
) -> list[Unit]:
    """``units`` in their order, except that a body change that lets fewer principals through
    follows the attachments that move columns needing them off its policy, and one that lets
    more through precedes the attachments that move columns needing them onto it (no principal
    loses access it has before and after: ``needed``). A stable topological sort; on a cycle
    the order stays as it was and the simulator decides."""

    def needs(a: Unit, principals: set[str]) -> bool:
        obj = a.steps[0].obj if a.steps else None
        if isinstance(obj, MaskAttachment):
            need = needed.get((obj.table.upper(), obj.column.upper()), frozenset())
        elif isinstance(obj, RowFilterAttachment):
            need = needed.get((obj.table.upper(), None), frozenset())
        else:
            need = None  # through tags or ABAC: assume anyone may need it
        return bool(principals) and (need is None or bool(principals & need))

    before: dict[int, set[int]] = {id(u): set() for u in units}
    for b in units:
        if b.phase not in (BODY, BODY_LATE):
            continue
        name = b.key.split("/")[-1]
        lost, gained = _named(b)
        for a in units:
            if not ATTACH <= a.phase <= ABAC_SET:
                continue
            if name in a.releases and needs(a, lost):
                before[id(b)].add(id(a))
            elif name in a.uses and needs(a, gained):
                before[id(a)].add(id(b))
    out: list[Unit] = []
    done: set[int] = set()
    left = list(units)
    while left:
        pick = next((u for u in left if before[id(u)] <= done), left[0])
        left.remove(pick)
        out.append(pick)
        done.add(id(pick))
    return out


def _both(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """Who is exempt in both states (None: everyone)."""
    if a is None:
        return b
    return a if b is None else a & b


def _step_tables(step: Step) -> tuple[set[str], list[AbacPolicy]]:
    obj = step.obj
    if isinstance(obj, AbacPolicy):
        return set(), [obj]
    if is_definition(obj):
        return set(), []
    return {_table_of(obj).upper()}, []  # type: ignore[arg-type]


def _touches(step: Step, tables: set[str]) -> bool:
    direct, policies = _step_tables(step)
    return bool(direct & tables) or any(covers(p, t) for p in policies for t in tables)


def _handover_order(members: list[Unit]) -> list[Unit]:
    """The units of a stage in phase order, except that moving a table between table-level
    and ABAC protection is done table by table (for ABAC policies: securable by securable):
    the ABAC policy of a schema is dropped right after the table-level policies of its tables
    are set, and a table's table-level policies are dropped one after the other, so that no
    table is refused (both mechanisms, different functions) for longer than it must be."""
    drops = [u for u in members if u.phase == ABAC_UNSET]
    scopes: dict[int, str] = {}
    for u in members:
        if u.phase == ATTACH and not u.handover:
            for d in drops:
                policy = d.steps[0].obj
                if isinstance(policy, AbacPolicy) and any(covers(policy, t) for t in u.tables):
                    scopes.setdefault(id(u), policy.securable.upper())
                    scopes[id(d)] = policy.securable.upper()
        elif u.phase == DETACH and u.handover:
            scopes[id(u)] = min(u.tables, default="")

    def key(u: Unit) -> tuple[int, str, int, str]:
        if id(u) in scopes:
            return (ATTACH if u.phase == ABAC_UNSET else u.phase, scopes[id(u)], u.phase, u.key)
        return (u.phase, "", u.phase, u.key)

    return sorted(members, key=key)


def _outage_notes(blocked: dict[str, str]) -> list[str]:
    if not blocked:
        return []
    return [
        "until the next stage of this platform has run, queries may be refused (fail closed) "
        "on: " + "; ".join(blocked[t] for t in sorted(blocked)) + ". A governed-tag change "
        "can take minutes to take effect (unity-catalog/abac/requirements; whether an ABAC "
        "policy's creation or removal lags too is not documented), and while both mechanisms "
        "apply with different functions Databricks blocks access "
        "(unity-catalog/abac/abac-vs-rls-cm). Nothing leaks either way: run the next stage "
        "as soon as this stage's checks pass."
    ]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
