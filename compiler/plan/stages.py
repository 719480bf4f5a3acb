"""Units into stages: cutover groups, placement, the stages of a platform and their order.

A unit that changes an identifier domain held on several platforms belongs to that domain's
*cutover group* (:func:`cutover_groups`); a unit that must not run before another moves into the
same or a later stage (:func:`place`); each platform's units then fall into its prepare, apply,
cutover, handover and retire stages (:func:`buckets`), in an order inside each stage that
hands tables over one at a time (:func:`handover_order`) and never takes access away that a
principal has before and after (:func:`availability_order`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from accord.compiler.model.schema import PLATFORMS
from accord.compiler.plan.model import Group, StageKind, Unit, unique
from accord.compiler.plan.state import Column, State, covers, identity_literals
from accord.targets.identity import references
from accord.targets.kinds import (
    ABAC_SET,
    ABAC_UNSET,
    APPLY_PHASES,
    ATTACH,
    BODY,
    BODY_LATE,
    DETACH,
    FLOW_IN,
    FLOW_OUT,
    RETIRE,
)
from accord.targets.objects import (
    AbacPolicy,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
)


def cutover_groups(units: list[Unit]) -> tuple[list[Unit], dict[str, tuple[str, ...]]]:
    """Give every unit that changes a domain held on several platforms its cutover group;
    domains changed together by one unit share a group. Returns the units and group id -> its
    domains."""
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
    out = []
    for u in units:
        ds = u.domains & shared
        out.append(replace(u, group="-".join(sorted(members[find(min(ds))]))) if ds else u)
    return out, {"-".join(sorted(m)): tuple(sorted(m)) for m in members.values()}


def groups_of(units: list[Unit], members: dict[str, tuple[str, ...]]) -> list[Group]:
    groups = []
    for gid in sorted(members):
        inside = [u for u in units if u.group == gid]
        groups.append(
            Group(
                id=gid,
                domains=members[gid],
                platforms=tuple(p for p in PLATFORMS if any(u.platform == p for u in inside)),
                changes=unique(f"{u.platform}: {u.change}" for u in inside),
            )
        )
    return groups


def place(units: list[Unit]) -> list[Unit]:
    """Move units that must not run before others into the same or a later stage: a unit
    that removes protection from a table follows the units that add its new protection, and
    a policy is dropped and re-created only after everything else left it."""
    order = ["apply", *sorted({u.group for u in units if u.group})]
    group = [u.group for u in units]

    def rank(i: int) -> int:
        return order.index(group[i]) if group[i] else 0  # type: ignore[arg-type]

    # looked up by table and by policy, not scanned per unit (a plan that moves every
    # table was quadratic here); only the latest group of each list matters, not its order
    attaching: dict[str, list[int]] = {}
    bodies: dict[str, list[int]] = {}
    for i, o in enumerate(units):
        if ATTACH <= o.phase <= ABAC_SET:
            for t in o.tables:
                attaching.setdefault(t, []).append(i)
        if o.phase == BODY:
            bodies.setdefault(o.key.split("/")[-1], []).append(i)

    changed = True
    while changed:
        changed = False
        for i, u in enumerate(units):
            if u.phase < APPLY_PHASES or u.phase >= RETIRE:
                continue
            after: Iterable[int] = ()
            if DETACH <= u.phase <= ABAC_UNSET:
                after = [o for t in u.tables for o in attaching.get(t, ())]
            elif ATTACH <= u.phase <= ABAC_SET and u.uses:
                # attached to a policy whose body changes: not before that body change
                after = [o for name in u.uses for o in bodies.get(name, ())]
            elif u.phase in (BODY, BODY_LATE) and narrows(u):
                # a body that lets fewer principals through changes after the columns
                # that keep those principals' access have moved to another policy
                name = u.key.split("/")[-1]
                after = [
                    j
                    for j, o in enumerate(units)
                    if ATTACH <= o.phase <= ABAC_SET and name in o.releases
                ]
            elif u.phase == FLOW_OUT:
                after = [
                    j
                    for j, o in enumerate(units)
                    if (u.flow in o.releases or (o.phase == FLOW_IN and o.key == u.flow)) and j != i
                ]
            latest = max(after, key=rank, default=None)
            if latest is not None and rank(latest) > rank(i):
                group[i] = group[latest]
                changed = True
    return [u if u.group == g else replace(u, group=g) for u, g in zip(units, group, strict=True)]


def buckets(
    units: list[Unit], needed: dict[tuple[str, str | None], frozenset[str] | None]
) -> list[tuple[StageKind, str | None, list[Unit]]]:
    """One platform's units as its stages, in the order they run: (kind, cutover group or
    None, the units in the order their steps run)."""
    slots: dict[tuple[int, str], list[Unit]] = {}
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
        slots.setdefault(slot, []).append(u)
    out: list[tuple[StageKind, str | None, list[Unit]]] = []
    for (rank, name), members in sorted(slots.items()):
        members = availability_order(handover_order(members), needed)
        kind: StageKind = "cutover" if rank == 2 else name  # type: ignore[assignment]
        out.append((kind, name if rank == 2 else None, members))
    return out


def group_subjects(
    state: State, group: str | None, domains: dict[Column, str]
) -> tuple[list[SaltFunction], list[MaskAttachment]]:
    """For a cutover stage: the salt functions behind the masks of the group's domain
    columns, and those columns' attachments, for the stage's checks."""
    if group is None:
        return [], []
    inside = set(group.split("-"))
    salts: dict[str, SaltFunction] = {}
    attached = []
    for col in sorted(c for c, d in domains.items() if d in inside):
        placed = state.places.get(("mask", *col))
        if isinstance(placed, MaskAttachment):
            attached.append(placed)
        for policy in state.masks_on(*col):
            definition = state.defs.get(policy.upper())
            for ref in references(definition) if definition is not None else ():
                if isinstance(salt := state.defs.get(ref), SaltFunction):
                    salts[salt.name] = salt
    return [salts[n] for n in sorted(salts)], attached


# --------------------------------------------------------------------------------------------
# the order inside a stage


def named(unit: Unit) -> tuple[set[str], set[str]]:
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


def narrows(unit: Unit) -> bool:
    """Whether a body change names principals in its identity checks no longer."""
    return bool(named(unit)[0])


def availability_order(
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
        lost, gained = named(b)
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


def handover_order(members: list[Unit]) -> list[Unit]:
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


def outage_notes(blocked: dict[str, str]) -> list[str]:
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
