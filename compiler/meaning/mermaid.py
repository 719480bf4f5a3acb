"""The surface graph as a mermaid flowchart: ``accord analyze --format mermaid``, and the
changed part of it in ``accord diff --format markdown``.

Surfaces point at the datasets they read; each edge says what enforces that read (the catalog's
policies, a service identity, no catalog, a runtime that returns nothing); a retrieval index
points at its source, labelled with whose rights it answers with (its owner's, or the source's
policies re-applied); a replica points at its source. The loose side of every ACC403
divergence (:func:`compiler.meaning.analyze.divergence_groups`, the function lint uses) is drawn
in red: its surface node, and its edge, labelled with the surfaces it is looser than.

Names in the model are untrusted text. No name is ever a node id: ids are ``s``/``d``/``i``
and a number, from the sorted names, so nothing a name holds can end a statement, open a
subgraph or name a mermaid keyword. Labels are double-quoted, and every character of a label
but letters, digits, space and ``_ . , : ( ) / + -`` is written as mermaid's entity code
``#NNN;``: no quote, bracket, pipe, backtick (the Markdown fence), ``<`` (HTML) or line break
reaches the diagram. The same model gives the same text, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from accord.compiler.meaning import semantics
from accord.compiler.meaning.analyze import DivergenceGroup, _enforcers, divergence_groups
from accord.compiler.model.schema import PolicyModel

#: the characters a label keeps as they are; every other is ``#NNN;``
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:()/+-")
#: the classes the diagram uses, with their styles
CLASSES = {
    "surface": "fill:#eef3ff,stroke:#4466aa",
    "dataset": "fill:#effaef,stroke:#448844",
    "index": "fill:#fff8e6,stroke:#aa8833",
    "loosest": "fill:#ffe5e5,stroke:#cc0000,stroke-width:3px",
    "changed": "fill:#fff2cc,stroke:#aa7700,stroke-width:2px",
}
LOOSE_EDGE = "stroke:#cc0000,stroke-width:3px"
CHANGED_EDGE = "stroke:#aa7700,stroke-width:2px"


def label(text: str) -> str:
    """``text`` as a double-quoted mermaid label: the safe characters kept, every other one
    its entity code."""
    return '"' + "".join(c if c in _SAFE else f"#{ord(c)};" for c in text) + '"'


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    text: str
    #: solid (``-->``) for a read, dotted (``-.->``) for an index's or replica's source, or a
    #: read that a change removed
    dotted: bool = False
    style: str = ""


@dataclass
class Graph:
    """Nodes by kind (surface, dataset, index): name -> label text; edges in order."""

    nodes: dict[str, dict[str, str]] = field(
        default_factory=lambda: {"surface": {}, "dataset": {}, "index": {}}
    )
    edges: list[Edge] = field(default_factory=list)
    #: node (kind, name) -> extra class
    marked: dict[tuple[str, str], str] = field(default_factory=dict)

    def render(self, title: str) -> str:
        ids: dict[tuple[str, str], str] = {}
        for kind, prefix in (("surface", "s"), ("dataset", "d"), ("index", "i")):
            for n, name in enumerate(sorted(self.nodes[kind])):
                ids[(kind, name)] = f"{prefix}{n}"
        out = ["flowchart LR", f"  %% {''.join(c if c in _SAFE else ' ' for c in title)}"]
        out += [f"  classDef {name} {style}" for name, style in CLASSES.items()]
        shapes = {"surface": ("[", "]"), "dataset": ("[(", ")]"), "index": ("{{", "}}")}
        for kind in ("surface", "dataset", "index"):
            opening, closing = shapes[kind]
            for name in sorted(self.nodes[kind]):
                text = self.nodes[kind][name]
                out.append(f"  {ids[(kind, name)]}{opening}{label(text)}{closing}")
        styles = []
        for n, e in enumerate(self.edges):
            arrow = "-.->" if e.dotted else "-->"
            out.append(f"  {ids[_key(e.source)]} {arrow}|{label(e.text)}| {ids[_key(e.target)]}")
            if e.style:
                styles.append(f"  linkStyle {n} {e.style}")
        for kind in ("surface", "dataset", "index"):
            members = [ids[(kind, n)] for n in sorted(self.nodes[kind])]
            if members:
                out.append(f"  class {','.join(members)} {kind}")
        for extra in sorted(set(self.marked.values())):
            members = sorted((ids[k] for k, v in self.marked.items() if v == extra), key=_id_order)
            out.append(f"  class {','.join(members)} {extra}")
        return "\n".join(out + styles) + "\n"


def _key(node: str) -> tuple[str, str]:
    kind, _, name = node.partition(":")
    return (kind, name)


def _id_order(node_id: str) -> tuple[str, int]:
    return (node_id[0], int(node_id[1:]))


# --------------------------------------------------------------------------------------------
# what each edge says


def read_label(model: PolicyModel, surface: str, dataset: str) -> str:
    """What enforces ``surface``'s read of ``dataset``: the enforcement point of the edge."""
    how = semantics.enforcement(model, surface)
    ds = model.datasets[dataset]
    if how.mode == "none":
        return "no catalog: nothing enforced"
    if how.mode == "service":
        return "service identity: one identity for every caller"
    if how.mode == "no-rows":
        runtime = model.surfaces[surface].runtime or ""
        return f"runtime {runtime} returns nothing".replace("  ", " ")
    if not ds.governed:
        return "catalog: ungoverned data"
    return "catalog policies: " + ", ".join(_enforcers(model, ds.platform, [dataset]))


def index_label(model: PolicyModel, index: str) -> str:
    idx = model.indexes[index]
    source = model.datasets[idx.source]
    style = model.platforms.databricks.style if model.platforms.databricks else "table"
    if not source.governed:
        return "built over ungoverned data"
    if idx.kind == "cortex_search":
        return "source policies re-applied" if idx.inherit_governance else "owner's rights"
    if style == "abac":
        return "syncs every row: nothing enforced"
    return "cannot be built over a governed table"


def surface_text(model: PolicyModel, name: str) -> str:
    s = model.surfaces[name]
    parts = [name, s.platform, s.identity]
    if s.runtime:
        parts.append(f"runtime {s.runtime}")
    return ", ".join(parts)


def dataset_text(model: PolicyModel, name: str) -> str:
    ds = model.datasets[name]
    return f"{name}, {ds.platform} {ds.table}"


def _loose(
    model: PolicyModel, groups: Iterable[DivergenceGroup] | None
) -> dict[tuple[str, str], set[str]]:
    """(loose surface, dataset) -> the surfaces it is looser than, for every unsuppressed
    ACC403 divergence (``groups``: :func:`divergence_groups`, computed when not given)."""
    out: dict[tuple[str, str], set[str]] = {}
    if groups is None:
        groups, _ = divergence_groups(model)
    for g in groups:
        out.setdefault((g.loose.surface, g.loose.dataset), set()).add(g.strict.surface)
    return out


def _add_read(g: Graph, model: PolicyModel, surface: str, dataset: str) -> None:
    g.nodes["surface"][surface] = surface_text(model, surface)
    g.nodes["dataset"][dataset] = dataset_text(model, dataset)


def surface_graph(model: PolicyModel, groups: Iterable[DivergenceGroup] | None = None) -> Graph:
    """Every surface, dataset and index of ``model``, with every read, index source and
    replica source; the ACC403 loose sides marked (``groups``: the analysis's divergences,
    when it has them)."""
    g = Graph()
    loose = _loose(model, groups)
    for name in sorted(model.surfaces):
        g.nodes["surface"][name] = surface_text(model, name)
    for name in sorted(model.datasets):
        g.nodes["dataset"][name] = dataset_text(model, name)
    for surface in sorted(model.surfaces):
        for dataset in sorted(set(model.surfaces[surface].reads)):
            text = read_label(model, surface, dataset)
            than = loose.get((surface, dataset))
            if than:
                g.marked[("surface", surface)] = "loosest"
                text += f" - ACC403: looser than {', '.join(sorted(than))}"
            g.edges.append(
                Edge(
                    f"surface:{surface}",
                    f"dataset:{dataset}",
                    text,
                    False,
                    LOOSE_EDGE if than else "",
                )
            )
    for name in sorted(model.indexes):
        idx = model.indexes[name]
        g.nodes["index"][name] = f"{name}, {idx.kind}"
        g.edges.append(
            Edge(f"index:{name}", f"dataset:{idx.source}", index_label(model, name), True)
        )
    for name in sorted(model.datasets):
        source = model.datasets[name].replica_of
        if source is not None:
            g.edges.append(Edge(f"dataset:{name}", f"dataset:{source}", "replica of", True))
    return g


#: the title of the analyze diagram (a mermaid comment)
TITLE = "accord analyze: surfaces to datasets, the enforcement point on each edge, ACC403 in red"
#: the most edges a diagram embedded in markdown holds (GitHub renders a few hundred)
EMBEDDED_EDGES = 400


def diagram(model: PolicyModel, groups: Iterable[DivergenceGroup] | None = None) -> str:
    """``accord analyze --format mermaid``."""
    return surface_graph(model, groups).render(TITLE)


def markdown_section(model: PolicyModel, groups: Iterable[DivergenceGroup] | None = None) -> str:
    """The section of ``accord analyze --format markdown`` holding the diagram as a mermaid
    block (GitHub renders it), or on a large estate the command that prints it."""
    graph = surface_graph(model, groups)
    head = "### Surfaces and datasets\n\n"
    if len(graph.edges) > EMBEDDED_EDGES:
        return (
            f"{head}_{len(graph.edges)} edges, too many to draw here: "
            "`accord analyze --format mermaid` prints the diagram_\n\n"
        )
    return f"{head}```mermaid\n{graph.render(TITLE)}```\n\n"


def changed_diagram(
    base: PolicyModel,
    head: PolicyModel,
    reads: Iterable[tuple[str, str]],
    new_loose: Iterable[tuple[str, str]] = (),
) -> str | None:
    """The part of the surface graph a change touches: the ``reads`` (surface, dataset) whose
    dispositions changed, as ``head`` has them (a read ``head`` no longer has, dotted, with
    what ``base`` enforced); the loose sides of the ACC403 divergences the change introduces
    (``new_loose``) in red. None when no read changed."""
    g = Graph()
    loose: dict[tuple[str, str], bool] = dict.fromkeys(new_loose, True)
    wanted = sorted(set(reads) | set(loose))
    if not wanted:
        return None
    for surface, dataset in wanted:
        now = (
            surface in head.surfaces
            and dataset in head.datasets
            and dataset in head.surfaces[surface].reads
        )
        model = head if now else base
        if surface not in model.surfaces or dataset not in model.datasets:
            continue
        _add_read(g, model, surface, dataset)
        g.marked[("surface", surface)] = (
            "loosest"
            if (surface, dataset) in loose
            else (g.marked.get(("surface", surface), "changed"))
        )
        if now:
            text = read_label(head, surface, dataset)
            if (surface, dataset) in loose:
                text += " - ACC403: new divergence"
            style = LOOSE_EDGE if (surface, dataset) in loose else CHANGED_EDGE
            g.edges.append(Edge(f"surface:{surface}", f"dataset:{dataset}", text, False, style))
        else:
            was = read_label(base, surface, dataset)
            text = f"no longer read (was {was})"
            g.edges.append(
                Edge(f"surface:{surface}", f"dataset:{dataset}", text, True, CHANGED_EDGE)
            )
    if not g.edges:
        return None
    return g.render("accord diff: the reads whose exposure changed")
