"""The ACC403 divergences a change introduces or resolves: those of
:func:`compiler.meaning.divergence.divergences` (the function lint's ACC403 uses) present in
one model and not the other, one entry per loose place with its personas."""

from __future__ import annotations

from typing import Any

from accord.compiler.exposure.causes import locate
from accord.compiler.exposure.changes import DivergenceChange
from accord.compiler.meaning.divergence import Divergence, divergences
from accord.compiler.model.source import Path_
from accord.compiler.model.validate import Project


def _divergence_key(d: Divergence) -> tuple[Any, ...]:
    return (d.facts, d.aspect, d.loose.surface, d.loose.dataset, (d.loose.column or "").lower())


def divergence_changes(
    base: Project,
    head: Project,
    personas: list[str] | None = None,
    renames: dict[str, str] | None = None,
) -> list[DivergenceChange]:
    """ACC403 divergences (as lint computes them: :func:`compiler.meaning.divergence.divergences`)
    present in one model and not the other, one entry per loose place with its personas;
    only for ``personas`` when given (those whose divergences may differ). ``renames``: base
    dataset key -> head key of a dataset renamed with its table (the same divergence)."""
    out: list[DivergenceChange] = []
    if personas is not None and not personas:
        return out
    found_b = divergences(
        base.model,
        [p for p in personas or base.model.personas if p in base.model.personas],
        refused_as_intended=True,
    )
    found_h = divergences(
        head.model,
        [p for p in personas or head.model.personas if p in head.model.personas],
        refused_as_intended=True,
    )
    moved = renames or {}

    def key(d: Divergence, renamed: bool) -> tuple[Any, ...]:
        found = _divergence_key(d)
        if renamed:  # the base's names as the head calls them
            facts = tuple(moved.get(f, f) for f in found[0])
            found = (facts, *found[1:3], moved.get(found[3], found[3]), found[4])
        return (d.persona, *found)

    for status, mine, other, project in (
        ("new", found_h, found_b, head),
        ("resolved", found_b, found_h, base),
    ):
        theirs = {key(d, project is head) for d in other}
        grouped: dict[tuple[Any, ...], list[Divergence]] = {}
        for d in mine:
            if key(d, project is base) not in theirs:
                grouped.setdefault(_divergence_key(d), []).append(d)
        for _key, items in sorted(grouped.items()):
            first = items[0]
            s = first.loose.surface
            m = project.model
            if status == "new":
                path: Path_ = (
                    "surfaces",
                    s,
                    "reads",
                    m.surfaces[s].reads.index(first.loose.dataset),
                )
            else:
                hs = head.model.surfaces.get(s)
                path = ("surfaces", s, "reads") if hs is not None else ("surfaces", s)
            out.append(
                DivergenceChange(
                    status,  # type: ignore[arg-type]
                    first.facts,
                    first.aspect,
                    first.loose,
                    first.strict,
                    tuple(sorted({d.persona for d in items})),
                    first.detail,
                    locate(head, path).location,
                )
            )
    return out
