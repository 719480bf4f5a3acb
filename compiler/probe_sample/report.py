"""The sample: reads aggregated over the window, their coverage by probes, and proposed probes.

For each :class:`~compiler.probe_sample.mapping.Fact` (persona, surface, dataset, column,
entitlement value) the number of reads and the last time seen. A probe *covers* a fact when
it asks the fact's persona, names its surface in ``expect``, reaches the dataset there (with
the column, through the column or its identifier domain; without one, any place of the
dataset), and asks about the same rows (no ``where``, or the value the read filtered on).

Coverage is given twice: weighted by reads, over **every** observed read (an unmappable read
is covered by no probe, so it lowers the figure: never a false all-clear), and over the
distinct facts. Everything is ordered (most frequent first, then by name) so the same
history gives byte-identical output; ``top`` limits the uncovered facts listed and the probes
proposed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from accord.compiler.core.visible import visible
from accord.compiler.meaning.probes import OWNED_BY_GOVERNANCE, probe_init
from accord.compiler.model.probe_places import reaching
from accord.compiler.model.schema import PolicyModel, Probe
from accord.compiler.probe_sample.history import Read, Source
from accord.compiler.probe_sample.mapping import Fact, Mapper, Unmappable

#: the owner a proposed probe is written with, for the reviewer to replace
OWNER_PLACEHOLDER = "REVIEW: the owning team"


@dataclass
class Seen:
    """The reads of a fact: each :class:`Read` stands for ``count`` queries of one kind, and
    the kinds are disjoint (a query is of one kind), so the queries add up."""

    reads: int = 0
    last: str = ""
    queries: int = 0
    policies: set[str] = field(default_factory=set)

    def add(self, read: Read) -> None:
        self.reads += read.count
        self.last = max(self.last, read.time)
        self.queries += read.count
        self.policies.update(read.policies)


@dataclass
class Sample:
    platforms: list[str]
    since_days: int
    top: int
    sources: list[Source]
    facts: dict[Fact, Seen]
    covering: dict[Fact, list[str]]
    unmappable: dict[Unmappable, Seen]
    #: the proposed probes, in order: (name, fact, YAML entry text)
    proposals: list[tuple[str, Fact, str]] = field(default_factory=list)

    # ---------------------------------------------------------------- figures

    @property
    def reads(self) -> int:
        return sum(s.reads for s in self.facts.values()) + self.unmappable_reads

    @property
    def unmappable_reads(self) -> int:
        return sum(s.reads for s in self.unmappable.values())

    @property
    def covered_reads(self) -> int:
        return sum(s.reads for f, s in self.facts.items() if self.covering[f])

    def ordered(self) -> list[Fact]:
        return sorted(self.facts, key=lambda f: (-self.facts[f].reads, f.sort_key()))

    def uncovered(self) -> list[Fact]:
        return [f for f in self.ordered() if not self.covering[f]][: self.top]

    def unmappable_ordered(self) -> list[Unmappable]:
        return sorted(
            self.unmappable,
            key=lambda u: (-self.unmappable[u].reads, u.platform, u.reason, u.table),
        )

    def coverage(self) -> dict[str, Any]:
        covered_facts = sum(1 for f in self.facts if self.covering[f])
        return {
            "reads": self.reads,
            "covered_reads": self.covered_reads,
            "unmappable_reads": self.unmappable_reads,
            "reads_share": _share(self.covered_reads, self.reads),
            "facts": len(self.facts),
            "covered_facts": covered_facts,
            "facts_share": _share(covered_facts, len(self.facts)),
        }

    # ---------------------------------------------------------------- renderings

    def to_doc(self) -> dict[str, Any]:
        def fact(f: Fact) -> dict[str, Any]:
            s = self.facts[f]
            return {
                "persona": f.persona,
                "surface": f.surface,
                "dataset": f.dataset,
                "column": f.column,
                "where": {f.where[0]: f.where[1]} if f.where else None,
                "reads": s.reads,
                "queries": s.queries,
                "last_seen": s.last,
                "policies": sorted(s.policies),
                "covered_by": self.covering[f],
            }

        return {
            "platforms": self.platforms,
            "since_days": self.since_days,
            "top": self.top,
            "coverage": [s.to_json() for s in self.sources],
            "probe_coverage": self.coverage(),
            "facts": [fact(f) for f in self.ordered()],
            "uncovered": [fact(f) for f in self.uncovered()],
            "unmappable": [
                {
                    "platform": u.platform,
                    "table": u.table,
                    "reason": u.reason,
                    "reads": self.unmappable[u].reads,
                    "last_seen": self.unmappable[u].last,
                }
                for u in self.unmappable_ordered()
            ],
            "proposed": [name for name, _, _ in self.proposals],
        }

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.to_doc(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"
        if fmt == "yaml":
            # one line per value, never folded: the scrubber of every output (compiler.core.
            # secrets) must see a platform's words whole
            return yaml.safe_dump(
                self.to_doc(),
                sort_keys=False,
                allow_unicode=True,
                default_flow_style=False,
                width=_UNFOLDED,
            )
        return self.text()

    def text(self) -> str:
        c = self.coverage()
        out = [f"accord probe sample: {', '.join(self.platforms)}, the last {self.since_days} days"]
        for s in self.sources:
            state = f"NOT READ: {s.why or 'unknown'}"
            if s.read:
                state = f"{s.queries} queries read ({s.kinds} kinds of read"
                if (s.window_queries, s.window_kinds) != (s.queries, s.kinds):
                    state += (
                        f"; the window holds {s.window_queries} queries in {s.window_kinds} kinds"
                    )
                state += ")"
            out.append(f"  {s.platform}: {state} ({', '.join(s.views)})")
            out.append(f"    latency: {s.latency}")
            for what, n in sorted(s.skipped.items()):
                out.append(f"    not mapped: {n} {what}")
            for what, why, unproven in sorted(s.unseen):
                out.append(f"    not seen: {what} ({why}); {unproven} is not proven")
        out.append(
            f"coverage: {c['covered_reads']} of {c['reads']} reads covered by a probe "
            f"({_percent(c['reads_share'])}; {c['unmappable_reads']} unmappable), "
            f"{c['covered_facts']} of {c['facts']} distinct facts ({_percent(c['facts_share'])})"
            + "".join(f"; {s.platform} NOT READ" for s in self.sources if not s.read)
            + "".join(f"; {s.platform} INCOMPLETE" for s in self.sources if s.read and s.unseen)
        )
        uncovered = self.uncovered()
        out.append(
            f"uncovered (most read first, top {self.top}):" if uncovered else "uncovered: none"
        )
        for f in uncovered:
            s = self.facts[f]
            out.append(f"  {_reads(s.reads)}  {f.text()}  (last {s.last})")
        covered = [f for f in self.ordered() if self.covering[f]]
        if covered:
            out.append("covered:")
            for f in covered:
                s = self.facts[f]
                out.append(f"  {_reads(s.reads)}  {f.text()}  by {', '.join(self.covering[f])}")
        out.append(
            "unmappable reads (covered by no probe):"
            if self.unmappable
            else "unmappable reads: none"
        )
        for u in self.unmappable_ordered():
            s = self.unmappable[u]
            out.append(f"  {_reads(s.reads)}  {u.platform} {u.table}: {u.reason}  (last {s.last})")
        if self.proposals:
            out.append(f"proposed probes: {', '.join(n for n, _, _ in self.proposals)}")
        return "\n".join(visible(line) for line in out) + "\n"

    def proposals_yaml(self) -> str:
        head = [
            "# Probes proposed by `accord probe sample` for facts the access history shows are",
            "# read and no probe covers, most read first. Review each: the owner, and whether",
            "# today's dispositions (filled in from the model, as `accord probe init` does) are",
            "# the answers the governance team expects. Nothing here is applied until it is",
            "# added to the policy directory and reviewed.",
            "probes:",
        ]
        if not self.proposals:
            return "\n".join(head[:-1]) + "\nprobes: {}  # every fact read is covered\n"
        return "\n".join(head) + "\n" + "".join(entry for _, _, entry in self.proposals)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


#: a line width no value reaches: YAML's emitter folds longer strings across lines
_UNFOLDED = 1 << 30


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share * 100:.1f}%"


# --------------------------------------------------------------------------------------------
# building the sample


def covers(model: PolicyModel, probe: Probe, fact: Fact) -> bool:
    if probe.persona != fact.persona or fact.surface not in probe.expect:
        return False
    if probe.where and (fact.where is None or dict([fact.where]) != probe.where):
        return False
    places = [p for _, p in reaching(model, probe).get(fact.surface, [])]
    for place in places:
        if place.dataset != fact.dataset:
            continue
        if fact.column is None:
            return True
        if place.column is not None and place.column.lower() == fact.column.lower():
            return True
    return False


def build(
    model: PolicyModel,
    reads: list[Read],
    sources: list[Source],
    platforms: list[str],
    since_days: int,
    top: int,
) -> Sample:
    mapper = Mapper(model)
    facts: dict[Fact, Seen] = {}
    unmappable: dict[Unmappable, Seen] = {}
    for read in sorted(reads, key=lambda r: (r.platform, r.time, r.query_id, r.table)):
        mapped = mapper.map(read)
        if isinstance(mapped, Unmappable):
            unmappable.setdefault(mapped, Seen()).add(read)
            continue
        for f in mapped:
            facts.setdefault(f, Seen()).add(read)
    covering = {f: sorted(n for n, p in model.probes.items() if covers(model, p, f)) for f in facts}
    sample = Sample(platforms, since_days, top, sources, facts, covering, unmappable)
    sample.proposals = propose(model, sample)
    return sample


_SLUG = re.compile(r"[^a-z0-9]+")


def _name(model: PolicyModel, fact: Fact, taken: set[str]) -> str:
    parts = ["sampled", fact.persona, fact.dataset]
    if fact.column:
        parts.append(fact.column)
    if fact.where:
        parts.append(fact.where[1])
    base = _SLUG.sub("_", "_".join(parts).lower()).strip("_")[:200]
    name, n = base, 2
    while name in taken or name in model.probes:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def propose(model: PolicyModel, sample: Sample) -> list[tuple[str, Fact, str]]:
    """A probe per uncovered fact (of the listed ones), with today's dispositions."""
    out: list[tuple[str, Fact, str]] = []
    taken: set[str] = set()
    for f in sample.uncovered():
        name = _name(model, f, taken)
        text = probe_init(
            model,
            f.persona,
            f.dataset,
            name=name,
            owner=OWNER_PLACEHOLDER,
            where=dict([f.where]) if f.where else None,
            column=f.column,
        )
        body = text.split("\n", 1)[1]  # without the "probes:" line
        s = sample.facts[f]
        seen = (
            f"  # seen {s.reads} time{'s' if s.reads != 1 else ''} in the last "
            f"{sample.since_days} days ({s.queries} quer{'ies' if s.queries != 1 else 'y'}, "
            f"last {s.last}): {f.text()}\n"
        )
        body = body.replace(
            f"  # {OWNED_BY_GOVERNANCE}", "  # REVIEW: who is told when it fails", 1
        )
        out.append((name, f, seen + body))
    return out


def _reads(n: int) -> str:
    return f"{n:>5} read{'s' if n != 1 else ' '}"
