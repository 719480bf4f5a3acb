"""The probes (ACC404) whose outcome a change makes fail, pass or answer otherwise, from
:func:`compiler.meaning.probes.evaluate` (the function lint's ACC404 uses) on both models."""

from __future__ import annotations

from typing import Any

from compiler.exposure.causes import locate
from compiler.meaning.probes import evaluate
from compiler.model.validate import Project


def probe_changes(base: Project, head: Project) -> list[dict[str, Any]]:
    """Probes (ACC404): each probe outcome (probe, surface) that fails in the head and did
    not before (``introduced``), passes in the head and failed before (``resolved``), or
    fails on both sides with another answer (``changed``), from ``compiler.meaning.probes.evaluate``
    on each model (the function lint's ACC404 uses)."""

    def outcomes(p: Project) -> dict[tuple[str, str], Any]:
        return {(o.probe, o.surface): o for o in evaluate(p.model)}

    before, after = outcomes(base), outcomes(head)
    out: list[dict[str, Any]] = []
    for key in sorted(before.keys() | after.keys()):
        b, a = before.get(key), after.get(key)
        if a is not None and not a.ok and (b is None or b.ok):
            status = "introduced"
        elif a is not None and a.ok and b is not None and not b.ok:
            status = "resolved"
        elif a is not None and b is not None and not a.ok and a.actual != b.actual:
            status = "changed"
        else:
            continue
        loc = locate(head, ("probes", key[0], "expect", key[1])).location
        out.append(
            {
                "probe": key[0],
                "surface": key[1],
                "persona": a.persona,
                "expected": a.expected,
                "before": b.actual if b is not None else None,
                "was_probed": b is not None,
                "after": a.actual,
                "status": status,
                "file": loc.file,
                "line": loc.line,
                "column": loc.column,
            }
        )
    return out
