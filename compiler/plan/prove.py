"""The proof of a plan: replay every stage and every rollback on the simulator, and refuse.

The planner replays every stage, and every stage's rollback, on
:class:`~compiler.plan.state.State` and refuses the plan (:class:`PlanError`, exit 1) when a
statement would break an invariant: a protected table or column without its filter or mask,
two ABAC policies for one user, a table on which every query is refused for longer than its
handover, or a principal losing access it has before and after the plan (said in the stage's
notes when no order of single statements avoids it).
"""

from __future__ import annotations

from collections.abc import Iterable

from accord.compiler.plan.index import Places
from accord.compiler.plan.state import Column, PlanError, State, covers
from accord.compiler.plan.steps import Statements, Step
from accord.targets.identity import ConstraintAttachment, is_definition
from accord.targets.objects import (
    AbacPolicy,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    Tag,
    TagAssignment,
)

#: what :meth:`Prover.answers` says of a state
#: (unprotected, doubled, blocked, losses: watched entry -> who may not see what there)
Answers = tuple[list[str], list[str], dict[str, str], dict[tuple[str, str | None], str]]


def protected_places(
    before: State, after: State, domains: Iterable[Column]
) -> tuple[list[str], list[Column]]:
    """The tables filtered and the columns masked both before and after the plan: those must
    stay protected at every statement."""
    tables: set[str] = set()
    columns: set[Column] = set()
    for state in (before, after):
        for p in state.places.values():
            tables.add((p.securable if isinstance(p, AbacPolicy) else p.table).upper())
            if isinstance(p, MaskAttachment | TagAssignment) and p.column:
                columns.add((p.table.upper(), p.column.upper()))
    domains = set(domains)
    tables |= {t for t, _ in domains}
    columns |= domains
    keep_tables = sorted(t for t in tables if before.filters_on(t) and after.filters_on(t))
    keep_columns = sorted(c for c in columns if before.masks_on(*c) and after.masks_on(*c))
    return keep_tables, keep_columns


def constrained_places(before: State, after: State) -> list[tuple[str, ...]]:
    """The places of projection, aggregation and join policies held both before and after the
    plan: each must hold one at every statement (a swap is one ``SET ... FORCE``)."""
    return sorted(
        k
        for k, p in before.places.items()
        if isinstance(p, ConstraintAttachment) and k in after.places
    )


class Prover:
    """Replays one platform's stages on its simulator. ``protect``: columns to keep masked
    besides those masked both before and after (none, but for tests of a refusal)."""

    def __init__(
        self,
        platform: str,
        st: Statements,
        before: State,
        after: State,
        domains: Iterable[Column],
        protect: Iterable[Column] = (),
    ) -> None:
        self.platform = platform
        self.st = st
        self.protected_tables, self.protected_columns = protected_places(before, after, domains)
        self.protected_columns += [c for c in protect if c not in self.protected_columns]
        self.constrained = constrained_places(before, after)
        #: availability lost during the stage being replayed: what -> statement numbers
        self.degraded: dict[str, list[int]] = {}
        self.at = 0
        #: who may see every row / the clear values both before and after: nobody may lose it
        keys = [(t, None) for t in self.protected_tables] + self.protected_columns
        exempt_before, exempt_after = before.exempt_all(keys), after.exempt_all(keys)
        self.needed = {key: _both(exempt_before[key], exempt_after[key]) for key in keys}
        #: the entries whose access the simulator watches: a principal can lose only what it
        #: needs (None or empty: nobody needs anything there)
        self.watched = [key for key, need in self.needed.items() if need]
        self._watch_order = {key: i for i, key in enumerate(self.watched)}
        self._tables_kept = set(self.protected_tables)
        self._columns_kept = set(self.protected_columns)
        #: :meth:`answers` by what they depend on
        self.remembered: dict[tuple[object, ...], tuple[Answers, list[object]]] = {}

    def blocked(self, state: State, possible: bool = False) -> dict[str, str]:
        """The protected tables every query is refused on in ``state``."""
        return state.blocked(self.protected_tables, self.protected_columns, possible)

    def replay(
        self, steps: Iterable[Step], kind: str, state: State
    ) -> tuple[list[Step], list[str]]:
        """Run a stage's ``steps`` on ``state`` (checking every statement); return its rollback
        and the notes its header needs (access no order avoids taking away)."""
        undo = []
        blocked = self.blocked(state)
        # refused before the stage starts: the tagging stage before a handover leaves each
        # table carrying both mechanisms once its tags take effect (said in that stage's
        # header); the handover removes them one table at a time and must end with none
        inherited = set(blocked)
        self.degraded = {}
        for i, step in enumerate(steps, start=1):
            # the undoing step reads the state before the step: made first, instead of copying
            # the whole catalog per statement; what it raises is raised where it was (after
            # the step's checks), so a refused step still says why it is refused
            try:
                undoing: Step | Exception = self.st.inverse(step, state)
            except Exception as err:  # re-raised below, unchanged
                undoing = err
            self.at = i
            where = f"{kind} stage, statement {i}"
            blocked = self.check(step, state, where, blocked, inherited)
            if isinstance(undoing, Exception):
                raise undoing
            undo.append(undoing)
        notes = [
            f"{what} between statements {min(at)} and {max(at) + 1}: no order of single "
            "statements avoids it (the policies it moves between change in opposite ways); "
            "run the stage in one go"
            for what, at in self.degraded.items()
        ]
        self.degraded = {}
        return list(reversed(undo)), notes

    def simulate(
        self, state: State, steps: Iterable[Step], where: str, restores: set[str] | None = None
    ) -> None:
        """Replay ``steps`` (a rollback) on ``state``; ``restores``: the tables refused in the
        state the rollback returns to, which may be refused on the way there."""
        blocked = self.blocked(state)
        excused = set(blocked) | (restores or set())
        for i, step in enumerate(steps, start=1):
            blocked = self.check(step, state, f"{where}, statement {i}", blocked, excused)

    def answers(
        self, state: State, step: Step | None = None, previous: Answers | None = None
    ) -> Answers:
        """What the invariants ask of ``state`` after a statement: the protected tables and
        columns left unprotected, those two ABAC policies apply to for one user, the tables
        every query is refused on, and who may not see, among the watched entries, what they
        see before and after the plan.

        They depend only on the placements, the pending tag and ABAC changes, and the policy
        and tag definitions, so they are remembered by those: most statements of a plan
        (mapping tables, salt functions, a stage's rollback) leave all three as they were,
        and asking again was most of the time of planning a big estate (bench/README.md).
        ``previous``: the answers of the state before ``step``, from which those after a
        table-level attachment are derived (:meth:`stepped`)."""
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
            hit = self.remembered.get(key)
            if hit is not None:
                return hit[0]
        answers = self.stepped(state, step, previous)
        if answers is None:
            answers = self.asked_afresh(state)
        if key is not None:
            if len(self.remembered) >= 8:  # few: a full answer holds one per watched entry
                self.remembered.clear()
            # the definitions are kept with the answer, so their ids in the key stay theirs
            self.remembered[key] = (answers, [stamp, shaping])
        return answers

    def asked_afresh(self, state: State) -> Answers:
        """:meth:`answers`, neither remembered nor derived."""
        return (
            state.unprotected(self.protected_tables, self.protected_columns)
            + state.unconstrained(self.constrained),
            state.doubled(self.protected_tables, self.protected_columns),
            state.blocked(self.protected_tables, self.protected_columns),
            self.losses(state.exempt_all(self.watched)),
        )

    def stepped(self, state: State, step: Step | None, previous: Answers | None) -> Answers | None:
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
            losses.update(self.losses({entry: state.exempt(*entry)}))
        return gaps, [], {}, losses

    def losses(
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

    def check(
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
        previous = self.answers(state)
        problems = step.run(state)
        unprotected, doubled, now, losses = self.answers(state, step, previous)
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
    return {obj.table.upper()}, []  # type: ignore[union-attr]


def _touches(step: Step, tables: set[str]) -> bool:
    direct, policies = _step_tables(step)
    return bool(direct & tables) or any(covers(p, t) for p in policies for t in tables)
