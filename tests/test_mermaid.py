"""``accord analyze --format mermaid`` and the diagrams embedded in the markdown of ``accord
analyze`` and ``accord diff``, read back by a parser (below) of exactly the mermaid subset
accord writes: every line must be one of its forms, every label only safe characters and
entity codes. The nodes, edges, edge labels and classes read back are compared with the
model (surfaces, datasets and indexes; every read, index source and replica; the enforcement
of each read from ``semantics.enforcement``; the loose side of every ACC403 divergence from
``divergence_groups``, the function lint uses)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from accord.compiler.meaning import semantics
from accord.compiler.meaning.analyze import divergence_groups
from accord.compiler.meaning.mermaid import Edge, Graph, label
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import load_project
from tests.cli import run_cli, run_process
from tests.conftest import ROOT

ESTATES = [ROOT / "policies", ROOT / "examples" / "as-found"]
SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:()/+-")

_LABEL = r'"((?:[A-Za-z0-9 _.,:()/+\-]|#\d+;)*)"'
_NODE = re.compile(rf"^  ([sdi]\d+)(\[|\[\(|\{{\{{){_LABEL}(\]|\)\]|\}}\}})$")
_EDGE = re.compile(rf"^  ([sdi]\d+) (-->|-\.->)\|{_LABEL}\| ([sdi]\d+)$")
_CLASSDEF = re.compile(r"^  classDef ([a-z]+) ([a-z0-9:#,.\-]+)$")
_CLASS = re.compile(r"^  class ([sdi]\d+(?:,[sdi]\d+)*) ([a-z]+)$")
_LINKSTYLE = re.compile(r"^  linkStyle (\d+) ([a-z0-9:#,.\-]+)$")
_SHAPES = {("[", "]"): "s", ("[(", ")]"): "d", ("{{", "}}"): "i"}


def unescape(text: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m[1])), text)


@dataclass
class Diagram:
    nodes: dict[str, str] = field(default_factory=dict)  # id -> label
    edges: list[tuple[str, str, str, bool]] = field(default_factory=list)  # from, arrow...
    classdefs: dict[str, str] = field(default_factory=dict)
    classes: dict[str, set[str]] = field(default_factory=dict)  # class -> ids
    linkstyles: dict[int, str] = field(default_factory=dict)

    def named(self, node_id: str) -> str:
        """The model name a node's label starts with."""
        return self.nodes[node_id].split(", ", 1)[0]


def parse(text: str) -> Diagram:
    """The subset accord writes; anything else fails the test."""
    lines = text.splitlines()
    assert lines[0] == "flowchart LR", lines[0]
    d = Diagram()
    for line in lines[1:]:
        if m := _NODE.match(line):
            node_id, opening, raw, closing = m.groups()
            assert _SHAPES[(opening, closing)] == node_id[0], line
            assert node_id not in d.nodes, line
            d.nodes[node_id] = unescape(raw)
        elif m := _EDGE.match(line):
            source, arrow, raw, target = m.groups()
            assert source in d.nodes and target in d.nodes, line  # nodes come first
            d.edges.append((source, target, unescape(raw), arrow == "-.->"))
        elif m := _CLASSDEF.match(line):
            d.classdefs[m[1]] = m[2]
        elif m := _CLASS.match(line):
            assert m[2] in d.classdefs, line
            d.classes.setdefault(m[2], set()).update(m[1].split(","))
        elif m := _LINKSTYLE.match(line):
            assert int(m[1]) < len(d.edges), line
            d.linkstyles[int(m[1])] = m[2]
        elif line.startswith("  %% "):
            assert set(line[5:]) <= SAFE, line
        else:
            raise AssertionError(f"not in accord's mermaid subset: {line!r}")
    return d


def read_kind(model: PolicyModel, surface: str, dataset: str) -> str:
    """What the test expects an edge to say, from semantics.enforcement (not the renderer)."""
    mode = semantics.enforcement(model, surface).mode
    if mode == "catalog":
        return "catalog policies" if model.datasets[dataset].governed else "catalog: ungoverned"
    return {"none": "no catalog", "service": "service identity", "no-rows": "returns nothing"}[mode]


@pytest.mark.parametrize("estate", ESTATES, ids=lambda p: p.name)
def test_the_diagram_reads_back_as_the_model(estate: Path) -> None:
    model = load_project(estate).model
    run = run_cli(["analyze", str(estate), "--format", "mermaid"])
    groups, _ = divergence_groups(model)
    assert run.returncode == (1 if groups else 0), run.stderr
    d = parse(run.stdout)
    names = {kind: {d.named(i) for i in d.nodes if i[0] == kind} for kind in "sdi"}
    assert names == {"s": set(model.surfaces), "d": set(model.datasets), "i": set(model.indexes)}
    for i in d.nodes:
        if i[0] == "s":
            assert d.nodes[i].startswith(f"{d.named(i)}, {model.surfaces[d.named(i)].platform}, ")
        if i[0] == "d":
            ds = model.datasets[d.named(i)]
            assert d.nodes[i] == f"{d.named(i)}, {ds.platform} {ds.table}"
    edges = {(d.named(a), d.named(b), dotted): text for a, b, text, dotted in d.edges}
    assert len(edges) == len(d.edges)  # no edge twice
    reads = {(s, ds, False) for s, surface in model.surfaces.items() for ds in surface.reads}
    indexes = {(i, idx.source, True) for i, idx in model.indexes.items()}
    replicas = {(n, ds.replica_of, True) for n, ds in model.datasets.items() if ds.replica_of}
    assert set(edges) == reads | indexes | replicas
    for surface, dataset, _ in reads:
        assert read_kind(model, surface, dataset) in edges[(surface, dataset, False)]
    for name, idx in model.indexes.items():
        text = edges[(name, idx.source, True)]
        if idx.kind == "cortex_search" and model.datasets[idx.source].governed:
            assert text == (
                "source policies re-applied" if idx.inherit_governance else "owner's rights"
            )
    # ACC403: the loose surfaces, and exactly their edges, in red
    loose = {(g.loose.surface, g.loose.dataset) for g in groups}
    assert {d.named(i) for i in d.classes.get("loosest", set())} == {s for s, _ in loose}
    red = {n for n, style in d.linkstyles.items() if "#cc0000" in style}
    assert {(d.named(d.edges[n][0]), d.named(d.edges[n][1])) for n in red} == loose
    for s, ds in loose:
        assert "ACC403: looser than" in edges[(s, ds, False)]
    assert {d.named(i) for i in d.classes["surface"]} == set(model.surfaces)


def test_the_as_found_diagram_shows_every_kind_of_enforcement() -> None:
    run = run_cli(["analyze", str(ROOT / "examples/as-found"), "--format", "mermaid"])
    d = parse(run.stdout)
    texts = [text for _, _, text, _ in d.edges]
    assert any("no catalog" in t and "ACC403: looser than lakehouse_agent" in t for t in texts)
    assert "runtime 14.3 returns nothing" in texts
    assert "owner's rights" in texts
    assert any(t.startswith("catalog policies: row access policy") for t in texts)


def test_labels_escape_everything_a_name_could_hold() -> None:
    hostile = [
        'a"] --> x["b',
        "end",
        "x|y",
        "`\n```\n<script>alert(1)</script>",
        "%% comment\nclick s0 call evil()",
        "#35; &amp; ; { } [ ] < >",
        "naïve ☃ \u202e",
    ]
    for text in hostile:
        written = label(text)
        assert written.startswith('"') and written.endswith('"')
        inner = written[1:-1]
        assert re.fullmatch(r"(?:[A-Za-z0-9 _.,:()/+\-]|#\d+;)*", inner), written
        assert unescape(inner) == text
    g = Graph()
    g.nodes["surface"] = {text: text for text in hostile}
    g.nodes["dataset"] = {"d": "d"}
    g.edges = [Edge(f"surface:{t}", "dataset:d", t) for t in hostile]
    d = parse(g.render('title "with` quotes\n'))
    assert {d.nodes[i] for i in d.nodes if i[0] == "s"} == set(hostile)
    assert sorted(text for _, _, text, _ in d.edges) == sorted(hostile)


def test_the_same_model_gives_the_same_bytes() -> None:
    args = ["analyze", str(ROOT / "examples/as-found"), "--format", "mermaid"]
    first = run_process(args, env={"PYTHONHASHSEED": "1"})
    second = run_process(args, env={"PYTHONHASHSEED": "2"})
    assert first.stdout == second.stdout == run_cli(args).stdout


def _mermaid_block(markdown: str) -> str:
    blocks = re.findall(r"```mermaid\n(.*?)```", markdown, re.S)
    assert len(blocks) == 1, markdown
    return blocks[0]


@pytest.mark.parametrize("estate", ESTATES, ids=lambda p: p.name)
def test_analyze_markdown_embeds_the_diagram(estate: Path) -> None:
    markdown = run_cli(["analyze", str(estate), "--format", "markdown"]).stdout
    drawn = run_cli(["analyze", str(estate), "--format", "mermaid"]).stdout
    assert "### Surfaces and datasets\n\n```mermaid\n" in markdown
    assert _mermaid_block(markdown) == drawn
    assert markdown.rstrip("\n").splitlines()[-1].startswith("accord analyze")


def test_diff_markdown_draws_only_the_changed_part() -> None:
    args = ["diff", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    markdown = run_cli([*args, "--format", "markdown"]).stdout
    changes = json.loads(run_cli([*args, "--format", "json"]).stdout)
    d = parse(_mermaid_block(markdown))
    expected = {(c["surface"], c["dataset"]) for c in changes["changes"] if c["surface"]}
    expected |= {
        (x["loose"]["surface"], x["loose"]["dataset"])
        for x in changes["divergences"]
        if x["status"] == "new"
    }
    drawn = {(d.named(a), d.named(b)) for a, b, _, _ in d.edges}
    assert drawn == expected
    assert not any(i[0] == "i" for i in d.nodes)  # no index: none changed a read
    head = load_project(ROOT / "policies").model
    for a, b, text, dotted in d.edges:
        surface, dataset = d.named(a), d.named(b)
        now = surface in head.surfaces and dataset in head.surfaces[surface].reads
        if now:
            assert not dotted and read_kind(head, surface, dataset) in text
        else:
            assert dotted and text.startswith("no longer read (was ")
    same = run_cli(
        [
            "diff",
            str(ROOT / "policies"),
            "--base",
            f"dir:{ROOT / 'policies'}",
            "--format",
            "markdown",
        ]
    )
    assert "```mermaid" not in same.stdout


def test_a_large_estate_names_the_command_instead_of_drawing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from accord.compiler.meaning import mermaid

    model = load_project(ROOT / "examples/as-found").model
    edges = len(mermaid.surface_graph(model).edges)
    monkeypatch.setattr(mermaid, "EMBEDDED_EDGES", edges - 1)
    section = mermaid.markdown_section(model)
    assert "```" not in section and f"_{edges} edges, too many to draw here" in section
    assert "`accord analyze --format mermaid`" in section
