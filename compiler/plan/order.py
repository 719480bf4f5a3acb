"""Order the changes between two lowered models into stages, and prove the order safe.

Every change becomes a *unit* (``compiler/plan/units.py``): one or a few steps that belong
together, with a phase that fixes its place inside a stage (create before attach, attach before
detach, detach before drop). Units go into stages per platform (``compiler/plan/stages.py``;
the stage kinds are described in ``compiler/plan/model.py``). The planner then replays every
stage, and every stage's rollback, on :class:`State` (``compiler/plan/prove.py``) and refuses
the plan (:class:`PlanError`, exit 1) when a statement would break an invariant. The result
is an immutable :class:`~compiler.plan.model.Plan`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from accord.compiler.model.schema import PLATFORMS
from accord.compiler.plan import stages as staging
from accord.compiler.plan.diff import PlatformDiff, diff_catalogs
from accord.compiler.plan.model import Appendix, Domains, Plan, Stage, Unit, number_stages, unique
from accord.compiler.plan.prove import Prover
from accord.compiler.plan.state import Column, PlanError, State
from accord.compiler.plan.steps import Statements, statements_for
from accord.compiler.plan.units import UnitMaker
from accord.compiler.plan.verify import checks_for
from accord.targets.base import Target
from accord.targets.identity import is_definition
from accord.targets.objects import Catalog, MaskPolicy

__all__ = ["Domains", "Plan", "PlanError", "PlatformPlanner", "build_plan"]


def build_plan(
    base: dict[str, Catalog],
    head: dict[str, Catalog],
    domains: Domains,
    targets: dict[str, Target] | None = None,
    live: frozenset[str] = frozenset(),
    *,
    recreate: Mapping[str, Mapping[str, str]] | None = None,
    appendices: Mapping[str, Appendix] | None = None,
    base_fingerprint: str = "",
    head_fingerprint: str = "",
    outside: Iterable[str] = (),
    protect: Iterable[Column] = (),
) -> Plan:
    """The staged migration from the ``base`` catalogs to the ``head`` catalogs. ``live``: the
    platforms whose base was read from the live account. ``recreate``: per platform, the
    definitions to re-create though base and head are equal, by name, with the reason (a live
    salt function that does not return its salt). ``appendices``: per platform, statements
    that change no catalog object, run at the end of its apply stage. ``protect``: columns to
    keep masked besides those masked in both base and head."""
    targets = targets or {}
    recreate = recreate or {}
    appendices = appendices or {}
    platforms = sorted(base.keys() | head.keys(), key=PLATFORMS.index)  # type: ignore[arg-type]
    diffs = {p: diff_catalogs(p, base.get(p), head.get(p), recreate.get(p, {})) for p in platforms}
    units: list[Unit] = []
    planners: dict[str, PlatformPlanner] = {}
    for platform, diff in diffs.items():
        if not diff.changes:
            continue
        planners[platform] = PlatformPlanner(
            diff, domains, targets.get(platform), platform in live, protect
        )
        units += planners[platform].units()
    units, members = staging.cutover_groups(units)
    placed: list[Unit] = []
    for platform in planners:
        placed += staging.place([u for u in units if u.platform == platform])
    groups = staging.groups_of(placed, members)
    stages: list[Stage] = []
    for platform, planner in planners.items():
        stages += planner.stages([u for u in placed if u.platform == platform])
    for platform, appendix in appendices.items():
        stages = _appended(stages, platform, appendix)
    numbered, groups_numbered = number_stages(stages, groups)
    return Plan(
        diffs=diffs,
        stages=numbered,
        groups=groups_numbered,
        base_fingerprint=base_fingerprint,
        head_fingerprint=head_fingerprint,
        outside=tuple(outside),
    )


def _appended(stages: list[Stage], platform: str, appendix: Appendix) -> list[Stage]:
    """``stages`` with ``appendix`` at the end of ``platform``'s apply stage (made when the
    platform has none)."""
    if not appendix.steps:
        return stages
    at = next(
        (i for i, s in enumerate(stages) if s.platform == platform and s.kind == "apply"), None
    )
    if at is None:
        return [
            *stages,
            Stage(platform, "apply", None, appendix.steps, (appendix.change,), (), appendix.checks),
        ]
    stage = stages[at]
    grown = replace(
        stage,
        steps=stage.steps + appendix.steps,
        checks=stage.checks + appendix.checks,
        changes=(*stage.changes, appendix.change),
    )
    return [*stages[:at], grown, *stages[at + 1 :]]


# --------------------------------------------------------------------------------------------
# one platform


class PlatformPlanner:
    """The units and stages of one platform's changes. ``protect``: columns to keep masked
    besides those masked in both base and head (:class:`~compiler.plan.prove.Prover`)."""

    def __init__(
        self,
        diff: PlatformDiff,
        domains: Domains,
        target: Target | None,
        live: bool = False,
        protect: Iterable[Column] = (),
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
        self.prover = Prover(self.platform, self.st, self.before, self.after, self.domains, protect)

    def units(self) -> list[Unit]:
        return UnitMaker(
            self.diff, self.st, self.before, self.after, self.names, self.domains
        ).units()

    def stages(self, units: list[Unit]) -> list[Stage]:
        """The platform's stages from its placed units, each replayed with its rollback and
        given its checks; refused when a stage leaves a table refused, a rollback does not
        restore the catalog, or the stages do not produce the head catalog."""
        prover = self.prover
        state = self.before.copy()
        stages = []
        for kind, group, members in staging.buckets(units, prover.needed):
            steps = tuple(s for u in members for s in u.steps)
            start = state.copy()
            rollback, notes = prover.replay(steps, kind, state)
            left = prover.blocked(state)
            if left:
                raise PlanError(
                    f"{self.platform}: after the {kind} stage, every query is refused on "
                    f"{'; '.join(left.values())} (Databricks blocks access when table-level and "
                    "ABAC policies apply different functions: abac/abac-vs-rls-cm)"
                )
            undone = state.copy()
            restores = set(prover.blocked(start))
            prover.simulate(undone, rollback, f"rollback of the {kind} stage", restores)
            if not undone.same_as(start):
                raise PlanError(
                    f"{self.platform}: the rollback of the {kind} stage does not restore "
                    "the catalog as it was"
                )
            salts, attached = staging.group_subjects(state, group, self.domains)
            checks = checks_for(steps, state, self.st, salts, attached)
            notes += staging.outage_notes(prover.blocked(state, possible=True))
            state.settle()
            stages.append(
                Stage(
                    platform=self.platform,
                    kind=kind,
                    group=group,
                    steps=steps,
                    changes=unique(u.change for u in members),
                    rollback=tuple(rollback),
                    checks=tuple(checks),
                    notes=tuple(notes),
                )
            )
        if not state.same_as(self.after):
            raise PlanError(f"{self.platform}: the stages do not produce the head catalog")
        return stages
