"""``accord analyze``: what every surface answers, per persona, and where surfaces diverge.

Everything here is read from the model through :mod:`compiler.meaning.semantics` (``enforcement``,
``dataset_view``, ``divergences``); nothing re-derives what a persona may see.

Three parts:

* the surface table: each surface's platform, identity, runtime, what enforces its reads and
  where enforcement stops;
* per persona, a matrix of every governed dataset (with its replicas) -- its rows and every
  governed or identifier column -- against every surface that reaches it, with the
  disposition ``clear``, ``masked``, ``filtered``, ``denied`` or ``ungoverned``;
* the divergences (ACC403): the same facts looser on one surface than on another, which
  surface decides (the loosest answers for the mesh) and for which personas;

and, when the model keeps ``unmanaged`` entries, what each reaches, as ``unknown``
(:mod:`compiler.meaning.unmanaged`): never counted as governed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import cached_property
from itertools import chain
from typing import Any

from accord.compiler.core import markdown
from accord.compiler.core.jsonindent import Encoder, Raw, scalar
from accord.compiler.core.platforms import facts
from accord.compiler.core.visible import plain, visible
from accord.compiler.meaning import divergence, semantics, unmanaged
from accord.compiler.model.identities import identity_subject, subject, subjects
from accord.compiler.model.identities import label as subject_label
from accord.compiler.model.schema import PolicyModel

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
    loose: divergence.Reach
    strict: divergence.Reach
    decides: str
    personas: tuple[str, ...]
    detail: str


@dataclass(frozen=True)
class Matrix:
    """Every persona's cells, kept by structure: every persona has a cell for the same
    (dataset, column, surface) triples, so the names are kept once and each persona holds
    only what it sees of each (dataset, surface): a :class:`semantics.Seen`, shared by the
    datasets governed alike. :meth:`cells` spells one persona's out as :class:`Cell` s."""

    #: governed datasets with their replicas (:func:`governed_groups`), in matrix order
    datasets: tuple[str, ...]
    #: per dataset, the surfaces that read it (:func:`divergence.reaches`)
    surfaces: tuple[tuple[str, ...], ...]
    #: per dataset, the columns of its views (the governed ones)
    columns: tuple[tuple[str, ...], ...]
    #: persona -> per dataset -> per surface, what the persona sees there
    seen: dict[str, tuple[tuple[semantics.Seen, ...], ...]]
    #: per dataset, its platform (an identity's table shows its platform's datasets only)
    platforms: tuple[str, ...] = ()

    def cells(self, persona: str) -> tuple[Cell, ...]:
        out: list[Cell] = []
        for dataset, surfaces, columns, per_surface in zip(
            self.datasets, self.surfaces, self.columns, self.seen[persona], strict=True
        ):
            for surface, seen in zip(surfaces, per_surface, strict=True):
                disposition = seen.row_disposition
                out.append(Cell(dataset, None, surface, disposition, _values(seen)))
                out.extend(
                    Cell(dataset, c, surface, d) for c, d in zip(columns, seen.columns, strict=True)
                )
        return tuple(out)


def _values(seen: semantics.Seen) -> tuple[str, ...]:
    """A row cell's ``values``: the entitlement values shown when rows are ``filtered``."""
    return tuple(sorted(seen.rows.values)) if seen.row_disposition == "filtered" else ()


def matrix(
    model: PolicyModel,
    personas: list[str] | None = None,
    shared: dict[tuple[str, ...], object] | None = None,
    groups: list[str] | None = None,
    by_dataset: dict[str, list[tuple[str, str]]] | None = None,
) -> Matrix:
    """The :class:`Matrix` of ``personas`` (default: every persona, sorted, then every identity
    no persona holds: :func:`compiler.model.identities.subjects`)."""
    shared = {} if shared is None else shared
    by_dataset = divergence.reaches(model) if by_dataset is None else by_dataset
    datasets = tuple(governed_groups(model) if groups is None else groups)
    surfaces = tuple(tuple(s for s, _ in by_dataset[d]) for d in datasets)
    seen: dict[str, tuple[tuple[semantics.Seen, ...], ...]] = {}
    shapes: list[semantics.Shape] = []
    # datasets alike: the same place keys (semantics.Perspective.place_key) on each of their
    # surfaces, so every persona sees the same there; each kind's first dataset asks
    kind_of: list[int] = []
    first: list[int] = []
    keys: list[tuple[tuple[object, ...], ...]] = []
    for persona in subjects(model) if personas is None else personas:
        # one memoised perspective per persona (semantics.dataset_view builds one per call)
        perspective = semantics.Perspective(model, persona, shared)
        if not shapes:
            shapes = [perspective.shape(d) for d in datasets]
            kinds: dict[tuple[tuple[object, ...], ...], int] = {}
            for i, (shape, on) in enumerate(zip(shapes, surfaces, strict=True)):
                ks = tuple(perspective.place_key(shape, s) for s in on)
                kind = kinds.setdefault(ks, len(kinds))
                if kind == len(first):
                    first.append(i)
                    keys.append(ks)
                kind_of.append(kind)
        see = perspective.seen
        per_kind = [
            tuple(see(datasets[i], s, shapes[i], k) for s, k in zip(surfaces[i], ks, strict=True))
            for i, ks in zip(first, keys, strict=True)
        ]
        seen[persona] = tuple(map(per_kind.__getitem__, kind_of))
    columns = tuple(shape.columns for shape in shapes)
    if not shapes:
        columns = tuple(tuple(semantics.governed_columns(model.datasets[d])) for d in datasets)
    platforms = tuple(model.datasets[d].platform for d in datasets)
    return Matrix(datasets, surfaces, columns, seen, platforms)


@dataclass(frozen=True)
class Analysis:
    surfaces: tuple[SurfaceInfo, ...]
    #: every persona's cells (:attr:`matrix` spells them out)
    cells: Matrix
    divergences: tuple[DivergenceGroup, ...]
    per_persona: dict[str, int]
    #: divergences whose loose surface says ``ignore: {ACC403: reason}``: (group, reason)
    suppressed: tuple[tuple[DivergenceGroup, str], ...] = ()
    #: what the model's unmanaged entries reach: unknown, never governed
    unmanaged: tuple[unmanaged.Reached, ...] = ()

    @cached_property
    def matrix(self) -> dict[str, tuple[Cell, ...]]:
        """persona -> cells, in matrix order (per dataset, per surface: rows, then columns)."""
        return {p: self.cells.cells(p) for p in self.cells.seen}


def _enforcers(model: PolicyModel, platform: str, datasets: list[str]) -> list[str]:
    cfg = model.platform_config(platform)
    enforcers = facts(platform).enforcers
    rows, columns = enforcers[cfg.style] if cfg is not None else next(iter(enforcers.values()))
    filtered = any(model.datasets[d].row_filter is not None for d in datasets)
    masked = any(model.datasets[d].masked_columns for d in datasets)
    return [rows] * filtered + [columns] * masked


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
    """One persona's cells (:class:`Matrix`)."""
    return list(matrix(model, [persona], shared, groups, by_dataset).cells(persona))


def _reach_key(r: divergence.Reach) -> tuple[str, str, str]:
    return (r.surface, r.dataset, r.column or "")


def _reach_text(r: divergence.Reach) -> str:
    column = f".{r.column}" if r.column else ""
    return f"{r.surface}: {r.dataset}{column}"


def suppression(model: PolicyModel, d: divergence.Divergence) -> str | None:
    """The reason the loose surface gives for ignoring ACC403 (as ``accord lint`` reads it:
    the finding's object is the loose surface)."""
    return model.surfaces[d.loose.surface].ignore.get("ACC403")


def _group(items: list[divergence.Divergence]) -> DivergenceGroup:
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
    """The divergences of :func:`compiler.meaning.divergence.divergences` (the function ACC403 uses),
    grouped, split into unsuppressed and suppressed (with the reason)."""
    per_persona = dict.fromkeys(subjects(model), 0)
    grouped: dict[tuple[Any, ...], list[divergence.Divergence]] = {}
    ignored: dict[tuple[Any, ...], list[divergence.Divergence]] = {}
    for d in divergence.divergences(model):
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
    return Analysis(
        surfaces=tuple(surface_table(model)),
        cells=matrix(model),
        divergences=tuple(divergences),
        per_persona=per_persona,
        suppressed=tuple(suppressed),
        unmanaged=tuple(unmanaged.reached(model)),
    )


# --------------------------------------------------------------------------------------------
# rendering

Table = tuple[str, list[str], list[list[str]]]

#: a persona's table, sparse: the header, and per row its dataset, its column label and its
#: non-empty cells as (position among the surfaces, text), in order
Sparse = tuple[str, list[str], list[tuple[str, str, list[tuple[int, str]]]]]


def _divergence_row(d: DivergenceGroup) -> list[str]:
    return [" ".join(d.facts), d.aspect, _reach_text(d.loose), _reach_text(d.strict)]


def tables(a: Analysis) -> list[Table]:
    """(title, header, rows) of every table, in order: surfaces, one matrix per persona,
    divergences, counts."""
    return [t if not _is_sparse(t) else _dense(t) for t in _tables(a)]  # type: ignore[arg-type]


def _is_sparse(t: Table | Sparse) -> bool:
    return bool(t[2]) and isinstance(t[2][0], tuple)


def _dense(t: Sparse) -> Table:
    title, header, rows = t
    width = len(header) - 2
    out = []
    for dataset, label, cells in rows:
        row = [""] * width
        for k, text in cells:
            row[k] = text
        out.append([dataset, label, *row])
    return title, header, out


def _tables(a: Analysis) -> Iterator[Table | Sparse]:
    """:func:`tables`, each persona's matrix sparse (a row holds a cell for the few surfaces
    that read its dataset, among all surfaces that read a governed one), one at a time."""
    yield (
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
    yield from _persona_tables(a.cells)
    yield (
        "Divergences (ACC403)",
        ["facts", "aspect", "looser", "stricter", "decides", "personas"],
        [[*_divergence_row(d), d.decides, ", ".join(d.personas)] for d in a.divergences],
    )
    if a.suppressed:
        yield (
            "Suppressed divergences (ACC403)",
            ["facts", "aspect", "looser", "stricter", "personas", "reason"],
            [[*_divergence_row(d), ", ".join(d.personas), reason] for d, reason in a.suppressed],
        )
    yield (
        "Divergences per persona",
        ["persona", "divergences"],
        [[subject_label(p), str(n)] for p, n in a.per_persona.items()],
    )
    if a.unmanaged:
        yield (
            "Unmanaged objects (what they reach is unknown: accord does not judge them)",
            ["entry", "platform", "kind", "name", "reaches", "dataset", "disposition"],
            [
                [
                    r.entry,
                    r.platform,
                    r.kind,
                    r.name,
                    (f"{r.table}.{r.column}" if r.column else r.table) or "-",
                    r.dataset or "-",
                    r.disposition,
                ]
                for r in a.unmanaged
            ],
        )


def _persona_tables(m: Matrix) -> Iterator[Sparse]:
    """One table per persona: a row per (dataset, column) in first-seen order (rows first),
    a column per surface that reads a governed dataset (sorted), each cell the disposition
    (filtered rows with their values)."""
    everywhere = sorted({s for on in m.surfaces for s in on})
    position = {s: k for k, s in enumerate(everywhere)}
    header = ["dataset", "column", *everywhere]
    at = [[position[s] for s in on] for on in m.surfaces]
    for persona, per_dataset in m.seen.items():
        rows: list[tuple[str, str, list[tuple[int, str]]]] = []
        identity = identity_subject(persona)
        on = m.platforms or ("",) * len(m.datasets)
        for dataset, columns, ks, seen, platform in zip(
            m.datasets, m.columns, at, per_dataset, on, strict=True
        ):
            if not ks or (identity is not None and platform != identity.platform):
                continue
            texts = [_row_text(st) for st in seen]
            rows.append((dataset, ROWS, _cells(ks, texts)))
            for c, column in enumerate(columns):
                rows.append((dataset, column, _cells(ks, [st.columns[c] for st in seen])))
        if identity_subject(persona) is None:
            yield (f"Persona {persona}", header, rows)
        else:
            yield (f"Identity {subject_label(persona)}", header, rows)


def _row_text(seen: semantics.Seen) -> str:
    values = _values(seen)
    if values:
        return f"{seen.row_disposition} ({', '.join(values)})"
    return seen.row_disposition


def _cells(ks: list[int], texts: list[str]) -> list[tuple[int, str]]:
    if len(ks) == 1:
        return [(ks[0], texts[0])]
    return sorted(dict(zip(ks, texts, strict=True)).items())  # a surface listed twice: the last


def summary(a: Analysis) -> str:
    text = _summary(a)
    if a.unmanaged:
        entries = len({r.entry for r in a.unmanaged})
        text += f"; {entries} unmanaged object{'s' if entries != 1 else ''} not judged (unknown)"
    return text


def _summary(a: Analysis) -> str:
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
    return markdown.text(text)


def to_markdown(a: Analysis) -> str:
    return "".join(markdown_chunks(a))


def markdown_chunks(a: Analysis) -> Iterator[str]:
    """:func:`to_markdown` one table at a time (each ends with a newline): a persona's table
    is rows x surfaces, so the whole is large on big estates."""
    for title, header, rows in _tables(a):
        parts = [f"### {markdown.text(title)}\n"]
        if not rows:
            parts.append("_none_\n")
            yield "\n".join(parts) + "\n"
            continue
        parts.append("| " + " | ".join(markdown.text(h) for h in header) + " |")
        parts.append("|" + "|".join("---" for _ in header) + "|")
        if isinstance(rows[0], tuple):
            parts.extend(_markdown_sparse(len(header) - 2, rows))  # type: ignore[arg-type]
        else:
            parts.extend(
                "| " + " | ".join(_escape_md(c) or " " for c in row) + " |"
                for row in rows  # type: ignore[union-attr]
            )
        parts.append("")
        yield "\n".join(parts) + "\n"
    yield summary(a) + "\n"


def _markdown_sparse(width: int, rows: list[tuple[str, str, list[tuple[int, str]]]]) -> list[str]:
    """The rows of :func:`to_markdown` (``| a | b |  |``: an empty cell is a space), written
    from the non-empty cells: a run of empty cells is one repeated string."""
    empty = " |  "
    escaped: dict[str, str] = {}
    out = []
    for dataset, label, cells in rows:
        parts = ["| ", _escape_md(dataset) or " ", " | ", _escape_md(label) or " "]
        last = -1
        for k, text in cells:
            found = escaped.get(text)
            if found is None:
                found = escaped[text] = _escape_md(text) or " "
            parts.append(empty * (k - last - 1))
            parts.append(" | " + found)
            last = k
        parts.append(empty * (width - last - 1))
        parts.append(" |")
        out.append("".join(parts))
    return out


def to_text(a: Analysis) -> str:
    return "".join(text_chunks(a))


def text_chunks(a: Analysis) -> Iterator[str]:
    """:func:`to_text` one table at a time (each but the last ends with a newline)."""
    for title, header, rows in _tables(a):
        parts = [title]
        if not rows:
            parts.append("  (none)\n")
            yield "\n".join(parts) + "\n"
            continue
        rows = _visible_rows(rows)  # a line break in a reason stays in its cell
        if isinstance(rows[0], tuple):
            widths = _sparse_widths(header, rows)  # type: ignore[arg-type]
        else:
            widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
        line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
        parts.append(line.rstrip())
        parts.append("  ".join("-" * w for w in widths))
        if isinstance(rows[0], tuple):
            parts.extend(_text_sparse(widths, rows))  # type: ignore[arg-type]
        else:
            parts.extend(
                "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                for row in rows  # type: ignore[union-attr]
            )
        parts.append("")
        yield "\n".join(parts) + "\n"
    yield summary(a)


def _visible_rows(rows: Any) -> Any:
    """The rows of a text table with every cell rendered visibly (a control character, a line
    break, a byte that is not UTF-8 written as an escape): one row is one line."""
    if isinstance(rows[0], tuple):
        return [
            (visible(d), visible(label), [(k, visible(t)) for k, t in cells])
            for d, label, cells in rows
        ]
    return [[visible(c) for c in row] for row in rows]


def _sparse_widths(
    header: list[str], rows: list[tuple[str, str, list[tuple[int, str]]]]
) -> list[int]:
    widths = [len(h) for h in header]
    widths[0] = max(widths[0], *(len(r[0]) for r in rows))
    widths[1] = max(widths[1], *(len(r[1]) for r in rows))
    for _, _, cells in rows:
        for k, text in cells:
            if len(text) > widths[k + 2]:
                widths[k + 2] = len(text)
    return widths


def _text_sparse(
    widths: list[int], rows: list[tuple[str, str, list[tuple[int, str]]]]
) -> list[str]:
    """The rows of :func:`to_text` (cells padded to their column's width, two spaces apart,
    trailing spaces stripped), written from the non-empty cells: each cell is placed at its
    column's offset."""
    starts = [0]
    for w in widths:
        starts.append(starts[-1] + w + 2)
    first = widths[0]
    out = []
    for dataset, label, cells in rows:
        parts = [dataset.ljust(first), "  ", label]
        pos = starts[1] + len(label)
        for k, text in cells:
            if text:
                at = starts[k + 2]
                parts.append(" " * (at - pos))
                parts.append(text)
                pos = at + len(text)
        out.append("".join(parts).rstrip())
    return out


#: the JSON document's nesting: {"personas": {persona: [cell {values: [...]}]}}
_PERSONA_LEVEL = 2
#: a name holding this (or ``%``) would spell a hole of the formats: no shortcut then
_HOLE = "\x00\x01"


def to_json(a: Analysis) -> str:
    """``json.dumps(document, indent=2, sort_keys=True)`` of the analysis (the contract in
    docs: every persona's cells sorted by dataset, column and surface), written without
    building a dict per cell: see :func:`_persona_json`. ``tests/test_analyze_output.py``
    compares it with ``json.dumps`` of the document built cell by cell."""
    return "".join(json_chunks(a))


def json_chunks(a: Analysis) -> list[str]:
    """:func:`to_json` in pieces (one per persona's cells, and the small ones around them),
    for a caller that writes them out without joining a document of a hundred megabytes."""
    encoder = Encoder(2, sort_keys=True)
    # every string valid Unicode (a reason may hold a lone surrogate: written \xff); the
    # personas' cells are JSON text already, their values made plain where they are encoded
    doc: dict[str, Any] = {
        "surfaces": plain([asdict(s) for s in a.surfaces]),
        "personas": _persona_json(a.cells, encoder),
        "divergences": plain([asdict(d) for d in a.divergences]),
        "summary": {"divergences": sum(a.per_persona.values()), "per_persona": a.per_persona},
    }
    if a.suppressed:
        doc["suppressed"] = plain([{**asdict(d), "reason": reason} for d, reason in a.suppressed])
    if a.unmanaged:  # only when the model has any: the document is as it was without
        doc["unmanaged"] = plain([asdict(r) for r in a.unmanaged])
    # the identities no persona holds, judged all the same: their cells are under
    # ``personas`` by subject (``platform:name``); only when the model has any
    found = [identity_subject(s) for s in a.cells.seen]
    held = [{"subject": subject(i), **i.to_json()} for i in found if i is not None]
    if held:
        doc["identities"] = held
    return encoder.chunks(doc, 0)


def _persona_json(m: Matrix, encoder: Encoder) -> dict[str, Any]:
    """persona -> its list of cells as JSON text (:class:`jsonindent.Raw`).

    Every persona has the same cells but for their dispositions (and a row cell's values),
    so each dataset's run of cells, sorted, is encoded once with holes for those (the
    ``%s`` of a format string); a persona's run is the format applied to what it sees."""
    level = _PERSONA_LEVEL + 1
    names = {c for cs in m.columns for c in cs} | set(m.datasets)
    names.update(s for ss in m.surfaces for s in ss)
    if any(_HOLE in n or "%" in n for n in names):  # names that would spell a hole
        return {p: [dict(vars(c)) for c in _sorted(m.cells(p))] for p in m.seen}
    row_format, row_fields = _cell_format(encoder, level, rows=True)
    column_format, column_fields = _cell_format(encoder, level, rows=False)
    text_of: dict[str, str] = {}

    def name(n: str) -> str:
        found = text_of.get(n)
        if found is None:
            found = text_of[n] = scalar(n)  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    formats: list[tuple[str, list[tuple[int, int]]] | None] = []
    for dataset, surfaces, columns in zip(m.datasets, m.surfaces, m.columns, strict=True):
        places = [(j, k) for j in range(len(surfaces)) for k in range(-1, len(columns))]
        places.sort(key=lambda jk: (columns[jk[1]] if jk[1] >= 0 else "", surfaces[jk[0]]))
        texts = []
        for j, k in places:
            fields = {"dataset": name(dataset), "surface": name(surfaces[j])}
            if k < 0:
                texts.append(row_format % tuple(fields[f] for f in row_fields))
            else:
                fields["column"] = name(columns[k])
                texts.append(column_format % tuple(fields[f] for f in column_fields))
        formats.append(((",\n" + encoder.unit * level).join(texts), places) if places else None)
    # datasets with cells, by name (the document's order); their formats joined into one
    order = [i for i in sorted(range(len(m.datasets)), key=m.datasets.__getitem__) if formats[i]]
    open_ = "[\n" + encoder.unit * level
    sep = ",\n" + encoder.unit * level
    close = "\n" + encoder.unit * _PERSONA_LEVEL + "]"
    whole = open_ + sep.join(formats[i][0] for i in order) + close  # type: ignore[index]
    # the arguments of one dataset's format, by what is seen on each of its surfaces: Seen
    # are interned (semantics.Perspective.seen), so the same objects recur across datasets
    # governed alike and across personas; the places of datasets alike are one object too
    alike: dict[tuple[tuple[int, int], ...], list[tuple[int, int]]] = {}
    places_of = [alike.setdefault(tuple(formats[i][1]), formats[i][1]) for i in order]  # type: ignore[index]
    place_ids = [id(p) for p in places_of]
    made: dict[tuple[int, int], tuple[str, ...]] = {}
    written: dict[str, str] = {}
    values: dict[int, str] = {}  # id(Seen) -> its values, encoded (the Seen live in m)

    def arguments(
        places: list[tuple[int, int]], seen: tuple[semantics.Seen, ...]
    ) -> tuple[str, ...]:
        args: list[str] = []
        for j, k in places:
            st = seen[j]
            d = st.columns[k] if k >= 0 else st.row_disposition
            args.append(written.get(d) or written.setdefault(d, scalar(d)))  # type: ignore[arg-type]
            if k < 0:
                v = values.get(id(st))
                if v is None:
                    v = values[id(st)] = "".join(encoder.chunks(plain(_values(st)), level + 1))
                args.append(v)
        return tuple(args)

    out: dict[str, Any] = {}
    for persona, per_dataset in m.seen.items():
        if not order:
            out[persona] = Raw("[]")
            continue
        seen_in_order = [per_dataset[i] for i in order]
        keys = list(zip(place_ids, map(id, seen_in_order), strict=True))
        args = list(map(made.get, keys))
        for n, found in enumerate(args):
            if found is None:  # (an earlier miss of this persona may have made it)
                key = keys[n]
                made_now = made.get(key)
                if made_now is None:
                    made_now = made[key] = arguments(places_of[n], seen_in_order[n])
                args[n] = made_now
        out[persona] = Raw(whole % tuple(chain.from_iterable(args)))  # type: ignore[arg-type]
    return out


def _cell_format(encoder: Encoder, level: int, rows: bool) -> tuple[str, list[str]]:
    """The JSON text of a row cell (or a column cell) at ``level``, as a format of two stages:
    first the names (the fields listed, JSON-encoded, in the order returned), then ``%s``
    for the disposition and, for rows, the values (JSON text)."""
    holes = {f: f"{_HOLE}{f}" for f in ("column", "dataset", "disposition", "surface", "values")}
    cell = Cell(holes["dataset"], None if rows else holes["column"], holes["surface"], "")
    fields = dict(vars(cell))
    fields["disposition"] = holes["disposition"]
    if rows:
        fields["values"] = holes["values"]
    # a literal % survives both stages
    text = "".join(encoder.chunks(fields, level)).replace("%", "%%%%")
    where = {f: text.find(scalar(h)) for f, h in holes.items()}  # type: ignore[arg-type]
    named = sorted(
        (at, f) for f, at in where.items() if at >= 0 and f in ("column", "dataset", "surface")
    )
    for f, h in holes.items():
        hole = "%%s" if f in ("disposition", "values") else "%s"
        text = text.replace(scalar(h), hole)  # type: ignore[arg-type]
    return text, [f for _, f in named]


def _sorted(cells: tuple[Cell, ...]) -> list[Cell]:
    return sorted(cells, key=lambda c: (c.dataset, c.column or "", c.surface))
