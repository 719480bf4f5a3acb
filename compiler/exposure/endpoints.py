"""Agent endpoints a change moves: ``accord probe --live`` sends a persona's bearer token to
the surface's ``a2a.url``, so a URL the head adds, removes or changes decides where
credentials go. Such a change is exposure-relevant whatever the views say: it is listed, and
``--fail-on widening`` fails on an endpoint added or changed (credentials would go to a host
they did not go to before)."""

from __future__ import annotations

from typing import Any

from accord.compiler.exposure.causes import locate
from accord.compiler.model.validate import Project


def _urls(project: Project) -> dict[str, str]:
    return {n: s.a2a.url for n, s in project.model.surfaces.items() if s.a2a is not None}


def endpoint_changes(base: Project, head: Project) -> list[dict[str, Any]]:
    """Each surface whose A2A endpoint is ``added``, ``changed`` or ``removed``, in name
    order, located at the head's ``a2a.url`` (its nearest surviving parent when removed)."""
    before, after = _urls(base), _urls(head)
    out: list[dict[str, Any]] = []
    for surface in sorted(before.keys() | after.keys()):
        b, a = before.get(surface), after.get(surface)
        if b == a:
            continue
        status = "added" if b is None else "removed" if a is None else "changed"
        loc = locate(head, ("surfaces", surface, "a2a", "url")).location
        out.append(
            {
                "surface": surface,
                "status": status,
                "before": b,
                "after": a,
                "widens": a is not None,
                "file": loc.file,
                "line": loc.line,
                "column": loc.column,
            }
        )
    return out


def endpoint_text(e: dict[str, Any]) -> str:
    where = "probes send persona tokens there"
    if e["status"] == "added":
        return f"agent endpoint of {e['surface']} added: {e['after']} ({where})"
    if e["status"] == "removed":
        return f"agent endpoint of {e['surface']} removed (was {e['before']})"
    return f"agent endpoint of {e['surface']} changed: {e['before']} -> {e['after']} ({where})"
