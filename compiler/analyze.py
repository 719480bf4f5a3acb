"""``accord analyze``: what every surface answers, per persona, and where surfaces diverge.

Everything here is read from the model through :mod:`compiler.semantics` (``enforcement``,
``dataset_view``, ``divergences``); nothing re-derives what a persona may see.

Three parts:

* the surface table: each surface's platform, identity, runtime, what enforces its reads and
  where enforcement stops;
* per persona, a matrix of every governed dataset (with its replicas) -- its rows and every
  governed or identifier column -- against every surface that reaches it, with the
  disposition ``clear``, ``masked``, ``filtered``, ``denied`` or ``ungoverned``;
* the divergences (ACC403): the same facts looser on one surface than on another, which
  surface decides (the loosest answers for the mesh) and for which personas.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from compiler import semantics
from compiler.model import PolicyModel

ROWS = "(rows)"


@dataclass(frozen=True)
class SurfaceInfo:
    surface: str
    platform: str
    identity: str
    runtime: str
    #: catalog | service | none | no-rows (semantics.enforcement)
    mode: str
    enforced_by: tuple[str, ...]
    stops: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    dataset: str
    #: None for the dataset's rows
    column: str | None
    surface: str
    disposition: str
    #: rows only: the entitlement values shown when the rows are ``filtered``
    values: tuple[str, ...] = ()

    def text(self) -> str:
        if self.values:
            return f"{self.disposition} ({', '.join(self.values)})"
        return self.disposition


@dataclass(frozen=True)
class DivergenceGroup:
    """One divergence, with every persona it holds for."""

    #: ("dataset", replica-group root) or ("identifier", domain)
    facts: tuple[str, str]
    aspect: str
    loose: semantics.Reach
    strict: semantics.Reach
    decides: str
    personas: tuple[str, ...]
    detail: str


@dataclass(frozen=True)
class Analysis:
    surfaces: tuple[SurfaceInfo, ...]
    #: persona -> cells
    matrix: dict[str, tuple[Cell, ...]]
    divergences: tuple[DivergenceGroup, ...]
    per_persona: dict[str, int]
    #: divergences whose loose surface says ``ignore: {ACC403: reason}``: (group, reason)
    suppressed: tuple[tuple[DivergenceGroup, str], ...] = ()


def _enforcers(model: PolicyModel, platform: str, datasets: list[str]) -> list[str]:
    style = model.platforms.databricks.style if model.platforms.databricks else "table"
    filtered = any(model.datasets[d].row_filter is not None for d in datasets)
    masked = any(model.datasets[d].masked_columns for d in datasets)
    out = []
    if platform == "snowflake":
        out += ["row access policy"] if filtered else []
        out += ["masking policies"] if masked else []
    elif style == "abac":
        out += ["ABAC row filter"] if filtered else []
        out += ["ABAC column masks"] if masked else []
    else:
        out += ["row filter"] if filtered else []
        out += ["column masks"] if masked else []
    return out


def _index_stops(model: PolicyModel, datasets: list[str]) -> list[str]:
    style = model.platforms.databricks.style if model.platforms.databricks else "table"
    out = []
    for name in sorted(model.indexes):
        idx = model.indexes[name]
        if idx.source not in datasets or not model.datasets[idx.source].governed:
            continue
        if idx.kind == "cortex_search":
            if idx.inherit_governance:
                out.append(f"index {name}: Cortex Search re-applies the source's policies")
            else:
                out.append(f"index {name}: Cortex Search answers with its owner's rights")
        elif style == "abac":
            out.append(
                f"index {name}: vector index over ABAC data syncs every row, enforces nothing"
            )
        else:
            out.append(
                f"index {name}: vector index over a filtered or masked table cannot be built"
            )
    return out


def surface_table(model: PolicyModel) -> list[SurfaceInfo]:
    out = []
    for name in sorted(model.surfaces):
        s = model.surfaces[name]
        how = semantics.enforcement(model, name)
        governed = [d for d in s.reads if model.datasets[d].governed]
        stops = _index_stops(model, s.reads)
        if how.mode == "catalog":
            enforced = _enforcers(model, s.platform, governed) or ["nothing (ungoverned data only)"]
        else:
            enforced = ["nothing"]
            if governed:
                stops.insert(0, how.reason)
        runtime = s.runtime or "-"
        if s.access_mode:
            runtime += f" ({s.access_mode})"
        out.append(
            SurfaceInfo(
                name, s.platform, s.identity, runtime, how.mode, tuple(enforced), tuple(stops)
            )
        )
    return out


def governed_groups(model: PolicyModel) -> list[str]:
    """Datasets in a replica group that holds at least one governed dataset, sorted."""
    groups: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        groups.setdefault(model.replica_root(d), []).append(d)
    return [
        d
        for _, members in sorted(groups.items())
        if any(model.datasets[m].governed for m in members)
        for d in members
    ]


def persona_matrix(
    model: PolicyModel,
    persona: str,
    shared: dict[tuple[str, ...], object] | None = None,
    groups: list[str] | None = None,
    by_dataset: dict[str, list[tuple[str, str]]] | None = None,
) -> list[Cell]:
    cells = []
    by_dataset = semantics.reaches(model) if by_dataset is None else by_dataset
    # one memoised perspective for the persona (semantics.dataset_view builds one per call)
    seen = semantics.Perspective(model, persona, shared)
    for dataset in governed_groups(model) if groups is None else groups:
        for surface, _ in by_dataset[dataset]:
            view = seen.view(dataset, surface)
            values = tuple(sorted(view.rows.values)) if view.row_disposition == "filtered" else ()
            cells.append(Cell(dataset, None, surface, view.row_disposition, values))
            cells.extend(Cell(dataset, c.column, surface, c.disposition) for c in view.columns)
    return cells


def _reach_key(r: semantics.Reach) -> tuple[str, str, str]:
    return (r.surface, r.dataset, r.column or "")


def _reach_text(r: semantics.Reach) -> str:
    column = f".{r.column}" if r.column else ""
    return f"{r.surface}: {r.dataset}{column}"


def suppression(model: PolicyModel, d: semantics.Divergence) -> str | None:
    """The reason the loose surface gives for ignoring ACC403 (as ``accord lint`` reads it:
    the finding's object is the loose surface)."""
    return model.surfaces[d.loose.surface].ignore.get("ACC403")


def _group(items: list[semantics.Divergence]) -> DivergenceGroup:
    return DivergenceGroup(
        items[0].facts,
        items[0].aspect,
        items[0].loose,
        items[0].strict,
        items[0].loose.surface,
        tuple(sorted({d.persona for d in items})),
        items[0].detail,
    )


def divergence_groups(model: PolicyModel) -> tuple[list[DivergenceGroup], dict[str, int]]:
    """The unsuppressed divergences, grouped, and their count per persona."""
    active, per_persona, _ = _partition(model)
    return active, per_persona


def _partition(
    model: PolicyModel,
) -> tuple[list[DivergenceGroup], dict[str, int], list[tuple[DivergenceGroup, str]]]:
    """The divergences of :func:`compiler.semantics.divergences` (the function ACC403 uses),
    grouped, split into unsuppressed and suppressed (with the reason)."""
    per_persona = {p: 0 for p in sorted(model.personas)}
    grouped: dict[tuple[Any, ...], list[semantics.Divergence]] = {}
    ignored: dict[tuple[Any, ...], list[semantics.Divergence]] = {}
    for d in semantics.divergences(model):
        key = (d.facts, d.aspect, _reach_key(d.loose), _reach_key(d.strict))
        if suppression(model, d):
            ignored.setdefault(key, []).append(d)
            continue
        per_persona[d.persona] += 1
        grouped.setdefault(key, []).append(d)
    active = [_group(items) for _, items in sorted(grouped.items())]
    suppressed = [
        (_group(items), suppression(model, items[0]) or "") for _, items in sorted(ignored.items())
    ]
    return active, per_persona, suppressed


def analyze(model: PolicyModel) -> Analysis:
    divergences, per_persona, suppressed = _partition(model)
    shared: dict[tuple[str, ...], object] = {}
    groups, by_dataset = governed_groups(model), semantics.reaches(model)
    return Analysis(
        surfaces=tuple(surface_table(model)),
        matrix={
            p: tuple(persona_matrix(model, p, shared, groups, by_dataset))
            for p in sorted(model.personas)
        },
        divergences=tuple(divergences),
        per_persona=per_persona,
        suppressed=tuple(suppressed),
    )


# --------------------------------------------------------------------------------------------
# rendering

Table = tuple[str, list[str], list[list[str]]]


def _divergence_row(d: DivergenceGroup) -> list[str]:
    return [" ".join(d.facts), d.aspect, _reach_text(d.loose), _reach_text(d.strict)]


def tables(a: Analysis) -> list[Table]:
    """(title, header, rows) of every table, in order: surfaces, one matrix per persona,
    divergences, counts."""
    out: list[Table] = [
        (
            "Surfaces",
            ["surface", "platform", "identity", "runtime", "enforced by", "enforcement stops"],
            [
                [
                    s.surface,
                    s.platform,
                    s.identity,
                    s.runtime,
                    ", ".join(s.enforced_by),
                    "; ".join(s.stops) or "-",
                ]
                for s in a.surfaces
            ],
        )
    ]
    for persona, cells in a.matrix.items():
        surfaces = sorted({c.surface for c in cells})
        # first-seen order, deduplicated by a dict (a list scan made this quadratic)
        keys = list(dict.fromkeys((c.dataset, c.column) for c in cells))
        lookup = {(c.dataset, c.column, c.surface): c.text() for c in cells}
        rows = [
            [dataset, column or ROWS] + [lookup.get((dataset, column, s), "") for s in surfaces]
            for dataset, column in keys
        ]
        out.append((f"Persona {persona}", ["dataset", "column", *surfaces], rows))
    out.append(
        (
            "Divergences (ACC403)",
            ["facts", "aspect", "looser", "stricter", "decides", "personas"],
            [[*_divergence_row(d), d.decides, ", ".join(d.personas)] for d in a.divergences],
        )
    )
    if a.suppressed:
        out.append(
            (
                "Suppressed divergences (ACC403)",
                ["facts", "aspect", "looser", "stricter", "personas", "reason"],
                [
                    [*_divergence_row(d), ", ".join(d.personas), reason]
                    for d, reason in a.suppressed
                ],
            )
        )
    out.append(
        (
            "Divergences per persona",
            ["persona", "divergences"],
            [[p, str(n)] for p, n in a.per_persona.items()],
        )
    )
    return out


def summary(a: Analysis) -> str:
    n = sum(a.per_persona.values())
    if not n and a.suppressed:
        return f"accord analyze: no divergences ({len(a.suppressed)} distinct suppressed)"
    if not n:
        return "accord analyze: no divergences: every surface answers each persona alike"
    worst = [p for p, k in a.per_persona.items() if k]
    return (
        f"accord analyze: {n} divergence{'s' if n != 1 else ''} ({len(a.divergences)} distinct) "
        f"for {len(worst)} persona{'s' if len(worst) != 1 else ''}: the loosest surface answers "
        "for the mesh"
    )


def _escape_md(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(a: Analysis) -> str:
    parts = []
    for title, header, rows in tables(a):
        parts.append(f"### {title}\n")
        if not rows:
            parts.append("_none_\n")
            continue
        parts.append("| " + " | ".join(header) + " |")
        parts.append("|" + "|".join("---" for _ in header) + "|")
        parts.extend("| " + " | ".join(_escape_md(c) or " " for c in row) + " |" for row in rows)
        parts.append("")
    parts.append(summary(a))
    return "\n".join(parts) + "\n"


def to_text(a: Analysis) -> str:
    parts = []
    for title, header, rows in tables(a):
        parts.append(title)
        if not rows:
            parts.append("  (none)\n")
            continue
        widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
        line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
        parts.append(line.rstrip())
        parts.append("  ".join("-" * w for w in widths))
        parts.extend(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
        )
        parts.append("")
    parts.append(summary(a))
    return "\n".join(parts)


def to_json(a: Analysis) -> str:
    doc = {
        "surfaces": [asdict(s) for s in a.surfaces],
        "personas": {
            p: [
                # a Cell holds plain values only: its fields as they are (asdict deep-copies)
                dict(vars(c))
                for c in sorted(cells, key=lambda c: (c.dataset, c.column or "", c.surface))
            ]
            for p, cells in a.matrix.items()
        },
        "divergences": [asdict(d) for d in a.divergences],
        "summary": {"divergences": sum(a.per_persona.values()), "per_persona": a.per_persona},
    }
    if a.suppressed:
        doc["suppressed"] = [{**asdict(d), "reason": reason} for d, reason in a.suppressed]
    return json.dumps(doc, indent=2, sort_keys=True)
