"""What verification found: mismatches, observations and the summary, as text or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from accord.compiler.core.visible import plain, visible


@dataclass(frozen=True)
class SqlObject:
    """A compiled SQL object held responsible, located in its file."""

    kind: str
    name: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" ({self.file}:{self.line})" if self.file else ""
        return f"{self.kind} {self.name}{where}"


@dataclass(frozen=True)
class Mismatch:
    #: rows | column | replica-rows | replica-column | digest | refused | shadowed (a policy
    #: parameter that a column shadows inside a subquery of the body: lint rule ACC104) |
    #: engines (DuckDB and Spark answer differently: ``--engine all``)
    kind: str
    persona: str | None
    dataset: str
    platform: str
    column: str | None
    expected: str
    actual: str
    rows: tuple[str, ...]
    objects: tuple[SqlObject, ...]
    message: str
    #: the day it was found at, when the model has grants until a date (``--as-of`` and both
    #: sides of every expiry are evaluated)
    as_of: str | None = None
    #: ``accord verify --engine spark|all``: the engines whose answers show it ("duckdb",
    #: "spark", or both joined by "+"); None when only DuckDB ran
    engine: str | None = None
    #: kind ``engines`` (the two engines disagree): per engine, (engine, its answer, the SQL
    #: that produced it)
    answers: tuple[tuple[str, str, str], ...] = ()

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("as_of", "engine"):
            if out[key] is None:
                del out[key]
        if self.answers:
            out["answers"] = [{"engine": e, "answer": a, "sql": q} for e, a, q in self.answers]
        else:
            del out["answers"]
        return out


@dataclass(frozen=True)
class Observation:
    """Rows a hand-written predicate admitted: executed, but not comparable with the model."""

    persona: str
    dataset: str
    platform: str
    admitted: tuple[str, ...]


@dataclass
class Report:
    origin: str
    personas: int
    datasets: int
    platforms: tuple[str, ...]
    checks: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    #: probe outcomes (compiler.meaning.probes.ProbeOutcome), answered through the compiled SQL
    probes: list[Any] = field(default_factory=list)
    #: the days evaluated when the model has grants until a date: ``--as-of`` first, then the
    #: last day of every expiry and the day after it (empty: no grant has a date)
    dates: tuple[str, ...] = ()
    #: ``--engine spark|all``: platform -> the engines that executed its SQL (empty: DuckDB
    #: alone, as always)
    engines: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        n = len(self.mismatches)
        probes = ""
        if self.probes:
            failed = sum(1 for o in self.probes if not o.ok)
            probes = f", {len(self.probes)} probe answers ({failed} failed)"
        return (
            f"accord verify: {self.checks} checks, {self.personas} personas, {self.datasets} "
            f"datasets, {len(self.platforms)} platforms ({', '.join(self.platforms) or 'none'})"
            f"{self._dates_text()}{self._engines_text()}{probes}: "
            f"{n} mismatch{'es' if n != 1 else ''}"
        )

    def _engines_text(self) -> str:
        if not self.engines:
            return ""
        told = "; ".join(f"{p} on {' and '.join(e)}" for p, e in sorted(self.engines.items()))
        return f", executed {told}"

    def _dates_text(self) -> str:
        if not self.dates:
            return ""
        sides = self.dates[1:]
        told = f", evaluated as of {self.dates[0]}"
        if sides:
            told += f" and on both sides of each grant's expiry ({', '.join(sides)})"
        return told

    def to_json(self) -> str:
        doc = {
            "origin": self.origin,
            "summary": {
                "checks": self.checks,
                "personas": self.personas,
                "datasets": self.datasets,
                "platforms": list(self.platforms),
                "mismatches": len(self.mismatches),
            },
            "mismatches": [m.record() for m in self.mismatches],
            "unchecked": [{**asdict(o), "note": UNCHECKED_NOTE} for o in self.observations],
        }
        if self.probes:
            doc["probes"] = [o.to_json() for o in self.probes]
        if self.engines:
            doc["summary"]["engines"] = {p: list(e) for p, e in sorted(self.engines.items())}
        if self.dates:
            doc["summary"]["as_of"] = self.dates[0]
            doc["summary"]["dates"] = list(self.dates)
        return json.dumps(plain(doc), indent=2, sort_keys=True)

    def to_text(self) -> str:
        lines = [f"verifying {self.origin}"]
        for m in self.mismatches:
            who = f"persona {m.persona}" if m.persona else "every persona"
            col = f", column {m.column}" if m.column else ""
            when = f", as of {m.as_of}" if m.as_of else ""
            on = f" (engine: {m.engine.replace('+', ' and ')})" if m.engine else ""
            lines.append(
                f"MISMATCH [{m.kind}] {who}, dataset {m.dataset} on {m.platform}{col}{when}{on}"
            )
            lines.append(f"  {m.message}")
            lines.append(f"  expected: {m.expected}")
            lines.append(f"  actual:   {m.actual}")
            for engine, _, sql in m.answers:
                lines.append(f"  {engine} SQL: {sql}")
            if m.rows:
                shown = ", ".join(m.rows[:6]) + (" ..." if len(m.rows) > 6 else "")
                lines.append(f"  rows:     {shown}")
            for obj in m.objects:
                lines.append(f"  object:   {obj}")
        if self.observations:
            lines.append(f"hand-written predicates ({UNCHECKED_NOTE}):")
            for o in self.observations:
                admitted = ", ".join(o.admitted) if o.admitted else "no rows"
                lines.append(f"  {o.dataset} on {o.platform}, persona {o.persona}: {admitted}")
        lines.append(self.summary())
        # each entry is one line: a line break (or any control character) in a value, a
        # directory's name, a platform's message, is written visibly
        return "\n".join(visible(line) for line in lines)


UNCHECKED_NOTE = (
    "executed per persona; the model cannot say which rows they admit, so these rows are "
    "compared only across replicas"
)
