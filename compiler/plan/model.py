"""The plan as data: units, stages, cutover groups and the plan itself, all immutable.

The planner (``compiler/plan/order.py``) turns every change between two lowered catalogs into
*units* (``compiler/plan/units.py``), places them into *stages* (``compiler/plan/stages.py``),
proves the stages safe (``compiler/plan/prove.py``) and returns a :class:`Plan`. Once built,
nothing changes a plan: it is written (``compiler/plan/write.py``) as it is. What the planner
adds beyond the changes of catalog objects (a grant revoked) is handed to it as an
:class:`Appendix`, not added afterwards.

Stage kinds, in the order they run on each platform:

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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from accord.compiler.model.schema import PLATFORMS
from accord.compiler.plan.diff import PlatformDiff
from accord.compiler.plan.steps import Step
from accord.compiler.plan.verify import Check
from accord.targets.objects import AbacPolicy, TagAssignment

StageKind = Literal["prepare", "apply", "cutover", "handover", "retire"]
#: (platform, TABLE, COLUMN) upper-cased -> identifier domain
Domains = dict[tuple[str, str, str], str]


#: what a handover stage hands over (:func:`why`): table-level policies to ABAC ones, or a
#: column retagged from one ABAC policy to another (a table's row key tagged for its table
#: alone when the table gains a dimension), or both
_TABLE_LEVEL = (
    "removes the table-level filters and masks that the ABAC policies of an earlier stage "
    "replace, then drops the identity checks the functions no longer need."
)
_RETAG = (
    "retags columns to the values that only the ABAC policies of an earlier stage match, then "
    "drops the ABAC policies those replace: the new policies match nothing until the retag, and "
    "the old ones stop matching at it."
)
_SETTLE = (
    "`accord migrate apply` starts it only --abac-settle minutes (default 15) after the stage "
    "before it was applied."
)
_POLICIES_IN_EFFECT = (
    "are in effect: the documentation says a tag assignment can take a few minutes to take "
    "effect (unity-catalog/abac/requirements), and no API says when a policy is."
)

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
    "handover": f"{_TABLE_LEVEL} Apply it only after the earlier stage's checks passed and the "
    "governed tags are in effect: the documentation says a tag assignment can take a few "
    "minutes to take effect (unity-catalog/abac/requirements), and until then the ABAC "
    f"policies match nothing. {_SETTLE}",
    "retire": "removes what the head model no longer uses. Everything was detached from it in "
    "the earlier stages: an attached policy is never dropped.",
}


def why(stage: Stage) -> str:
    """Why ``stage`` is a stage of its own, as its SQL file says: its kind's :data:`WHY`; a
    handover says what it hands over (its steps: tag assignments and ABAC policies for a retag,
    anything else for table-level policies handed to ABAC ones)."""
    if stage.kind != "handover":
        return WHY[stage.kind]

    retag = any(isinstance(s.obj, AbacPolicy | TagAssignment) for s in stage.steps)
    table_level = any(not isinstance(s.obj, AbacPolicy | TagAssignment) for s in stage.steps)
    if not retag:
        return WHY["handover"]
    if not table_level:
        return (
            f"{_RETAG} Apply it only after the earlier stage's checks passed and its ABAC "
            f"policies {_POLICIES_IN_EFFECT} {_SETTLE}"
        )
    return (
        f"{_TABLE_LEVEL} It also {_RETAG} Apply it only after the earlier stage's checks passed "
        f"and its governed tags and ABAC policies {_POLICIES_IN_EFFECT} {_SETTLE}"
    )


@dataclass(frozen=True)
class Unit:
    """One change of a catalog object as one or a few steps that belong together; its phase
    fixes its place inside a stage. The planner refines a unit (its domains, its group, a later
    phase) by replacing it, never by changing it."""

    platform: str
    phase: int
    key: str
    steps: tuple[Step, ...]
    change: str
    #: identifier domains whose masked values this unit changes
    domains: frozenset[str] = frozenset()
    #: policies this unit stops using (so their flow can drop them afterwards)
    releases: frozenset[str] = frozenset()
    #: tables whose protection this unit adds (attach-class) or removes (detach-class)
    tables: frozenset[str] = frozenset()
    #: for FLOW_OUT units: the policy re-created under its own name
    flow: str | None = None
    group: str | None = None
    #: for attach-class units: the policies (upper-cased) the new placement uses
    uses: frozenset[str] = frozenset()
    #: goes to the handover stage (after the stage that makes the ABAC tags and policies)
    handover: bool = False


@dataclass(frozen=True)
class Stage:
    platform: str
    kind: StageKind
    group: str | None
    steps: tuple[Step, ...]
    changes: tuple[str, ...]
    rollback: tuple[Step, ...] = ()
    checks: tuple[Check, ...] = ()
    id: str = ""
    requires: tuple[str, ...] = ()
    #: what a reviewer must know before running the stage (outages it cannot avoid)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    id: str
    domains: tuple[str, ...]
    platforms: tuple[str, ...]
    changes: tuple[str, ...]
    stages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Appendix:
    """Statements that change no catalog object (a grant revoked), run at the end of a
    platform's apply stage (one is made when the platform has none). The simulator does not
    replay them and no rollback undoes them."""

    steps: tuple[Step, ...]
    checks: tuple[Check, ...]
    change: str


@dataclass(frozen=True)
class Plan:
    diffs: dict[str, PlatformDiff]
    stages: tuple[Stage, ...]
    groups: tuple[Group, ...]
    base_fingerprint: str = ""
    head_fingerprint: str = ""
    #: changes of the model that lower to no catalog object (indexes, surfaces)
    outside: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.stages


def order_key(stage: Stage) -> tuple[int, str, int]:
    """Listing order: by kind, then cutover group, then platform."""
    rank = {"prepare": 0, "apply": 1, "cutover": 2, "handover": 3, "retire": 4}[stage.kind]
    return (rank, stage.group or "", PLATFORMS.index(stage.platform))  # type: ignore[arg-type]


def number_stages(
    stages: list[Stage], groups: list[Group]
) -> tuple[tuple[Stage, ...], tuple[Group, ...]]:
    """The stages in listing order (a cutover group's stages on every platform next to each
    other), each with its id and requiring the previous stage of its platform; the groups with
    their stages' ids."""
    last: dict[str, str] = {}
    members: dict[str, list[str]] = {g.id: [] for g in groups}
    numbered = []
    for n, stage in enumerate(sorted(stages, key=order_key), start=1):
        suffix = f"_{stage.group}" if stage.group else ""
        sid = f"{n:02d}_{stage.platform}_{stage.kind}{suffix}"
        requires = (last[stage.platform],) if stage.platform in last else ()
        last[stage.platform] = sid
        if stage.group:
            members[stage.group].append(sid)
        numbered.append(replace(stage, id=sid, requires=requires))
    return tuple(numbered), tuple(replace(g, stages=tuple(members[g.id])) for g in groups)


def unique(items: object) -> tuple[str, ...]:
    """``items`` without repeats, in their order."""
    return tuple(dict.fromkeys(items))  # type: ignore[call-overload]
