"""The probes (ACC404) whose outcome a change makes fail, pass or answer otherwise, from
:func:`compiler.meaning.probes.evaluate` (the function lint's ACC404 uses) on both models;
and the probe edits that loosen what is checked (a probe removed, an ``expect`` loosened),
which are widenings: a check the owning team can delete quietly is not a control."""

from __future__ import annotations

from typing import Any

from accord.compiler.exposure.causes import locate
from accord.compiler.meaning.probes import OPENNESS, evaluate
from accord.compiler.model.validate import Project


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


#: an ``expect`` entry moved to a looser disposition, or dropped: what the probe checks widens
def probe_edits(
    base: Project, head: Project, renames: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Probe edits that loosen what the governance team checks, each a widening (``--fail-on
    widening`` fails on it), naming the probe's owner in the base:

    * ``removed`` — a probe of the base is gone from the head, or now asks another question
      (another persona, dataset, column or ``where``): nobody checks the old answer any more;
    * ``loosened`` — an ``expect`` entry says a looser disposition than before (``masked`` ->
      ``clear``, ``denied`` -> ``filtered``: :data:`compiler.meaning.probes.OPENNESS`), or the
      head's ``expect`` drops a surface the base named.

    Located at the head's entry (a removed probe: the head's ``probes`` key, else the head's
    first file), so the record is the same whether the base is a directory or a revision.
    A probe of a dataset renamed with its table (``renames``: base key -> head key) asks the
    same question under the new name."""
    out: list[dict[str, Any]] = []
    b, h = base.model.probes, head.model.probes
    moved = renames or {}
    for name in sorted(b):
        old, new = b[name], h.get(name)
        common = {
            "probe": name,
            "owner": old.owner,
            "persona": old.persona,
            "dataset": old.dataset,
        }
        question = ("persona", "column", "where")
        same_dataset = new is not None and moved.get(old.dataset, old.dataset) == new.dataset
        if (
            new is None
            or not same_dataset
            or any(getattr(old, k) != getattr(new, k) for k in question)
        ):
            loc = locate(head, ("probes", name) if new is not None else ("probes",)).location
            detail = (
                "the probe is deleted"
                if new is None
                else "the probe now asks another question: the old one is no longer checked"
            )
            out.append(
                {**common, "status": "removed", "surface": None, "before": None, "after": None,
                 "detail": detail, "file": loc.file, "line": loc.line, "column": loc.column}
            )  # fmt: skip
            continue
        for surface in sorted(old.expect):
            before, after = old.expect[surface], new.expect.get(surface)
            if after is not None and OPENNESS[after] <= OPENNESS[before]:
                continue
            path = ("probes", name, "expect", surface) if after else ("probes", name, "expect")
            loc = locate(head, path).location
            detail = (
                f"expects {after} on {surface} where it expected {before}"
                if after is not None
                else f"no longer says what {surface} should answer (it expected {before})"
            )
            out.append(
                {**common, "status": "loosened", "surface": surface, "before": before,
                 "after": after, "detail": detail, "file": loc.file, "line": loc.line,
                 "column": loc.column}
            )  # fmt: skip
    return out


def probe_edit_text(e: dict[str, Any]) -> str:
    return f"probe {e['probe']} (owner {e['owner']}) {e['status']}: {e['detail']}"
