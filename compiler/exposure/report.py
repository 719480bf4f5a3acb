"""The renderings of an exposure diff: text for people, markdown for a pull-request comment,
JSON, and GitHub workflow annotations (escaped as lint's, by :mod:`compiler.core.annotations`).
Changes that differ only by place share one line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from accord.compiler.core import markdown
from accord.compiler.core.annotations import annotation
from accord.compiler.core.errors import Diagnostic, Location
from accord.compiler.core.visible import plain, visible
from accord.compiler.exposure.cells import readers
from accord.compiler.exposure.changes import Change, ExposureDiff, Kind, place_text
from accord.compiler.exposure.configuration import config_edit_text
from accord.compiler.exposure.endpoints import endpoint_text
from accord.compiler.exposure.probes import probe_edit_text
from accord.compiler.meaning.mermaid import changed_diagram
from accord.compiler.model.schema import PolicyModel


def verdict(d: ExposureDiff, places: dict[str, tuple[str | None, ...]] | None = None) -> str:
    """The one-line verdict. With ``places`` (text, markdown, github) it counts the rows those
    formats print, where changes that differ only by place share one; without (JSON) it counts
    the changes, one entry each."""
    told = _verdict(d, places)
    if d.probe_edits:
        k = len(d.probe_edits)
        edits = f"{k} probe{'s' if k != 1 else ''} removed or loosened"
        told = f"{told}; {edits}" if d.changes else f"{edits}; no view changed"
    if d.config_edits:
        k = len(d.config_edits)
        lowered = f"{k} lint setting{'s' if k != 1 else ''} lower{'s' if k == 1 else ''} what fails"
        told = f"{told}; {lowered}"
    if d.endpoints:
        k = len(d.endpoints)
        moved = f"{k} agent endpoint{'s' if k != 1 else ''} moved"
        return f"{told}; {moved}" if d.changes else f"{moved}; no view changed"
    return told


def _verdict(d: ExposureDiff, places: dict[str, tuple[str | None, ...]] | None) -> str:
    if not d.changes and d.notes:
        n = len(d.notes)
        return f"no change in exposure on any surface; {n} note{'s' if n != 1 else ''} to read"
    if not d.changes:
        return "no change in exposure"
    if places is None:
        w, n = len(d.widenings), len(d.narrowings)
    else:
        w, n = len(lines(d, "widening", places)), len(lines(d, "narrowing", places))
    return f"{w} widening{'s' if w != 1 else ''}, {n} narrowing{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class Line:
    """Changes that differ only by place, shown as one line."""

    first: Change
    places: tuple[str | None, ...]
    everywhere: bool

    def where(self) -> str:
        """Every place of the row, each surface by name."""
        c = self.first
        if self.everywhere and len(self.places) > 1:
            names = ", ".join(sorted(p for p in self.places if p is not None))
            if None in self.places:
                return (
                    f"on every surface reading {c.dataset} ({names}) and directly on {c.platform}"
                )
            return f"on every surface reading {c.dataset} ({names})"
        return ", ".join(place_text(p, c.platform) for p in self.places)

    def text(self, arrow: str = "->") -> str:
        c = self.first
        if c.gains:
            of = "" if self.everywhere and len(self.places) > 1 else f" of {c.dataset}"
            return f"{c.who()} {c.transition(arrow)}{of} {self.where()}"
        return f"{c.who()}: {c.what()} {self.where()} {c.transition(arrow)}"


def lines(d: ExposureDiff, kind: Kind, all_places: dict[str, tuple[str | None, ...]]) -> list[Line]:
    grouped: dict[tuple[Any, ...], list[Change]] = {}
    for c in d.changes:
        if c.kind != kind:
            continue
        key = (
            c.persona,
            c.identity,
            c.dataset,
            (c.column or "").lower(),
            c.before,
            c.after,
            c.values,
            c.cause,
            c.note,
        )
        grouped.setdefault(key, []).append(c)
    out = []
    for items in grouped.values():
        places = tuple(c.surface for c in items)
        out.append(Line(items[0], places, set(places) == set(all_places.get(items[0].dataset, ()))))
    return out


def places_of(base: PolicyModel, head: PolicyModel) -> dict[str, tuple[str | None, ...]]:
    """Per dataset, every place it is read in either model (None: directly)."""
    out: dict[str, dict[str | None, None]] = {}
    for m in (base, head):
        for d, surfaces in readers(m).items():
            out.setdefault(d, {None: None}).update(dict.fromkeys(surfaces))
    return {d: tuple(v) for d, v in out.items()}


def _cause_text(c: Change) -> str:
    loc = c.cause.location
    return f"{loc}" + (f" ({c.cause.object})" if c.cause.object else "")


def to_text(
    d: ExposureDiff, places: dict[str, tuple[str | None, ...]], base: str | None = None
) -> str:
    """``base``: which base was read (:meth:`compiler.plan.source.Base.describe`), the first
    line."""
    out = [f"base: {base}"] if base else []
    for kind, title in (("widening", "Widenings"), ("narrowing", "Narrowings")):
        found = lines(d, kind, places)  # type: ignore[arg-type]
        if not found:
            continue
        out.append(f"{title}:")
        for line in found:
            out.append(f"  {line.text()}")
            out.append(f"      caused by {_cause_text(line.first)}")
            if line.first.note:
                out.append(f"      note: {line.first.note}")
    for status in ("new", "resolved"):
        found_d = [x for x in d.divergences if x.status == status]
        if found_d:
            out.append(f"{'New' if status == 'new' else 'Resolved'} divergences (ACC403):")
            out.extend(f"  {x.location}: {x.detail} (for {', '.join(x.personas)})" for x in found_d)
    out.extend(_probe_lines(d))
    if d.probe_edits:
        out.append("Probes removed or loosened (widenings of what is checked):")
        out.extend(
            f"  {e['file']}:{e['line']}:{e['column']}: {probe_edit_text(e)}" for e in d.probe_edits
        )
    if d.config_edits:
        out.append("Configuration that lowers what fails (widenings of what is checked):")
        out.extend(
            f"  {e['file']}:{e['line']}:{e['column']}: {config_edit_text(e)}"
            for e in d.config_edits
        )
    if d.endpoints:
        out.append("Agent endpoints:")
        out.extend(
            f"  {e['file']}:{e['line']}:{e['column']}: {endpoint_text(e)}" for e in d.endpoints
        )
    out.extend(f"note: {n}" for n in d.notes)
    out.append(f"accord diff: {verdict(d, places)}")
    # each entry is one line: a value's control characters (a line break too) shown visibly
    return "\n".join(visible(line) for line in out)


def _probe_answer(actual: str | None, probed: bool) -> str:
    if not probed:
        return "no such probe"
    return actual if actual is not None else "cannot tell"


def probe_text(p: dict[str, Any]) -> str:
    return (
        f"probe {p['probe']} ({p['persona']} on {p['surface']}, expects {p['expected']}): "
        f"{p['status']}, {_probe_answer(p['before'], p['was_probed'])} -> "
        f"{_probe_answer(p['after'], True)}"
    )


def _probe_lines(d: ExposureDiff) -> list[str]:
    if not d.probes:
        return []
    return [
        "Probes (ACC404):",
        *[f"  {p['file']}:{p['line']}:{p['column']}: {probe_text(p)}" for p in d.probes],
    ]


def _md(text: str) -> str:
    return markdown.text(text)


def diagram(d: ExposureDiff, base: PolicyModel, head: PolicyModel) -> str | None:
    """The changed part of the surface graph (:func:`compiler.meaning.mermaid.changed_diagram`):
    every (surface, dataset) read a change is on, and the loose side of each new ACC403
    divergence; None when no change is on a surface (only direct reads changed)."""

    reads = {(c.surface, c.dataset) for c in d.changes if c.surface is not None}
    loose = [(x.loose.surface, x.loose.dataset) for x in d.divergences if x.status == "new"]
    return changed_diagram(base, head, sorted(reads), loose)


def to_markdown(
    d: ExposureDiff,
    places: dict[str, tuple[str | None, ...]],
    drawn: str | None = None,
    base: str | None = None,
) -> str:
    """The pull-request comment; ``drawn`` (:func:`diagram`) is embedded as a mermaid block
    after the tables of changes; ``base`` (which base was read) is said under the title."""
    out = ["<!-- accord diff -->", "### accord diff: who sees what", ""]
    if base:
        out += [f"Compared with the base: {_md(base)}", ""]
    out += [f"**{verdict(d, places)}**", ""]
    header = "| whose view | what | where | change | caused by |\n|---|---|---|---|---|"
    for kind, title in (("widening", "Widenings"), ("narrowing", "Narrowings")):
        found = lines(d, kind, places)  # type: ignore[arg-type]
        out.append(f"#### {title}: {len(found)}")
        out.append("")
        if not found:
            out += ["_none_", ""]
            continue
        out.append(header)
        for line in found:
            c = line.first
            change = c.transition("→") + (f" ({c.note})" if c.note else "")
            out.append(
                f"| {_md(c.who())} | {_md(c.what())} | {_md(line.where())} | {_md(change)} | "
                f"{markdown.code(_cause_text(c))} |"
            )
        out.append("")
    if drawn:
        out += [
            "#### Surfaces whose reads changed",
            "",
            "```mermaid",
            drawn.rstrip("\n"),
            "```",
            "",
        ]
    for status, title in (
        ("new", "New divergences (ACC403)"),
        ("resolved", "Resolved divergences (ACC403)"),
    ):
        found_d = [x for x in d.divergences if x.status == status]
        out.append(f"#### {title}: {len(found_d)}")
        out.append("")
        if not found_d:
            out += ["_none_", ""]
            continue
        out.append("| looser surface | facts | detail | personas | at |\n|---|---|---|---|---|")
        for x in found_d:
            out.append(
                f"| {_md(x.loose.surface)} | {_md(' '.join(x.facts))} | {_md(x.detail)} | "
                f"{_md(', '.join(x.personas))} | {markdown.code(x.location)} |"
            )
        out.append("")
    out.append("#### Probes (ACC404)")
    out.append("")
    if not d.probes:
        out.append("_no probe changes its outcome_")
    else:
        out.extend(
            f"- {_md(probe_text(p))} ({markdown.code(str(p['file']) + ':' + str(p['line']))})"
            for p in d.probes
        )
    out.append("")
    out.append(f"#### Probes removed or loosened: {len(d.probe_edits)}")
    out.append("")
    if not d.probe_edits:
        out.append("_none_")
    else:
        out.extend(
            f"- {_md(probe_edit_text(e))} ({markdown.code(str(e['file']) + ':' + str(e['line']))})"
            for e in d.probe_edits
        )
    out.append("")
    out.append(f"#### Configuration that lowers what fails: {len(d.config_edits)}")
    out.append("")
    if not d.config_edits:
        out.append("_none_")
    else:
        out.extend(
            f"- {_md(config_edit_text(e))} ({markdown.code(str(e['file']) + ':' + str(e['line']))})"
            for e in d.config_edits
        )
    out.append("")
    if d.endpoints:
        out += ["#### Agent endpoints", ""]
        out.extend(
            f"- {_md(endpoint_text(e))} ({markdown.code(str(e['file']) + ':' + str(e['line']))})"
            for e in d.endpoints
        )
        out.append("")
    if d.notes:
        out += ["#### Notes", "", *[f"- {_md(n)}" for n in d.notes], ""]
    return "\n".join(out)


def to_json(
    d: ExposureDiff, errors: list[Diagnostic] | None = None, base: dict[str, Any] | None = None
) -> str:
    """``base``: which base was read (:meth:`compiler.plan.source.Base.to_json`), null when
    none could be."""
    doc: dict[str, Any] = {
        "base": base,
        "changes": [c.to_json() for c in d.changes],
        "divergences": [x.to_json() for x in d.divergences],
        "probes": d.probes,
        "probe_edits": d.probe_edits,
        "config_edits": d.config_edits,
        "notes": d.notes,
        "endpoints": d.endpoints,
        "summary": {
            "endpoints": len(d.endpoints),
            "probe_edits": len(d.probe_edits),
            "config_edits": len(d.config_edits),
            "widenings": len(d.widenings),
            "narrowings": len(d.narrowings),
            "verdict": verdict(d),
        },
    }
    if errors is not None:
        doc["errors"] = [
            {
                "file": e.location.file,
                "line": e.location.line,
                "column": e.location.column,
                "message": e.message,
            }
            for e in errors
        ]
    return json.dumps(plain(doc), indent=2, sort_keys=True, ensure_ascii=False)


def to_github(
    d: ExposureDiff, places: dict[str, tuple[str | None, ...]], base: str | None = None
) -> str:
    """``base``: which base was read, a ``::notice`` of the run (no file) before the rest."""
    out = [annotation("notice", None, "accord diff: base", f"base: {base}")] if base else []
    for kind, command in (("widening", "warning"), ("narrowing", "notice")):
        for line in lines(d, kind, places):  # type: ignore[arg-type]
            text = line.text("→") + (f" ({line.first.note})" if line.first.note else "")
            out.append(annotation(command, line.first.cause.location, f"accord diff: {kind}", text))
    for x in d.divergences:
        if x.status == "new":
            out.append(
                annotation(
                    "warning",
                    x.location,
                    "accord diff: new ACC403 divergence",
                    f"{x.detail} (for {', '.join(x.personas)})",
                )
            )
    for p in d.probes:
        if p["status"] != "resolved":
            where = Location(p["file"], p["line"], p["column"])
            out.append(annotation("warning", where, "accord diff: ACC404 probe", probe_text(p)))
    for e in d.probe_edits:
        where = Location(e["file"], e["line"], e["column"])
        out.append(
            annotation("warning", where, f"accord diff: probe {e['status']}", probe_edit_text(e))
        )
    for e in d.config_edits:
        where = Location(e["file"], e["line"], e["column"])
        out.append(
            annotation("warning", where, "accord diff: lint configuration", config_edit_text(e))
        )
    for e in d.endpoints:
        where = Location(e["file"], e["line"], e["column"])
        out.append(annotation("warning", where, "accord diff: agent endpoint", endpoint_text(e)))
    return "\n".join(out)
