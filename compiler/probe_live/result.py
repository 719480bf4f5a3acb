"""A probe run: every outcome, the surfaces that disagree, and how they are reported.

Formats: text (one block per probe), JSON, JUnit XML (one test case per probe and surface,
the owner in each), and the result file a promotion gate requires: the model fingerprint, the
compiled-output fingerprint, every outcome and a SHA-256 over all of it.

A probe that did not run (its ``fault``: the session, the warehouse, the roles, the positive
control, the table, the query or the A2A exchange) is reported as a fault, apart from a
wrong answer: ``FAULT`` in the text, ``fault`` on the outcome and ``faults`` in JSON and the
result file, an ``<error type="probe-fault">`` in JUnit; it never passes.

An agent's answer and a platform's error are anything: the text shows their control
characters visibly (one line per entry), JSON holds only valid Unicode
(:func:`compiler.core.visible.plain`) and JUnit only what XML 1.0 allows
(:func:`compiler.core.visible.xml_text`), so every format is a valid document for any answer.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core.canonical import sealed_digest
from accord.compiler.core.outdir import write_report
from accord.compiler.core.secrets import redact_tree
from accord.compiler.core.visible import plain, visible, xml_text
from accord.compiler.meaning.probes import ProbeOutcome

RESULT_FORMAT = 1


@dataclass(frozen=True)
class Disagreement:
    """Two surfaces expected to answer a probe alike that answered differently."""

    probe: str
    owner: str
    surfaces: tuple[str, str]
    answers: tuple[str, str]

    def to_json(self) -> dict[str, object]:
        return {
            "probe": self.probe,
            "owner": self.owner,
            "surfaces": list(self.surfaces),
            "answers": list(self.answers),
        }


def disagreements(outcomes: list[ProbeOutcome]) -> list[Disagreement]:
    """Per probe: pairs of surfaces whose expected answers are equal and whose actual answers
    (both known) are not. Each pair once, in a stable order."""
    out: list[Disagreement] = []
    by_probe: dict[str, list[ProbeOutcome]] = {}
    for o in outcomes:
        by_probe.setdefault(o.probe, []).append(o)
    for name in sorted(by_probe):
        group = sorted(by_probe[name], key=lambda o: o.surface)
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if (
                    a.expected == b.expected
                    and a.actual is not None
                    and b.actual is not None
                    and a.actual != b.actual
                ):
                    out.append(
                        Disagreement(name, a.owner, (a.surface, b.surface), (a.actual, b.actual))
                    )
    return out


@dataclass
class ProbeRun:
    depth: str
    model_fingerprint: str
    compiled_fingerprint: str | None
    outcomes: list[ProbeOutcome]
    #: probe name -> one line describing the question (persona, fact)
    questions: dict[str, str] = field(default_factory=dict)
    #: what the answers do not show, in words (a simulated run's limits: probe --simulate)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_outcomes(
        cls,
        project: Any,
        outcomes: list[ProbeOutcome],
        depth: str,
        compiled_fingerprint: str | None = None,
    ) -> ProbeRun:
        questions = {name: describe(p) for name, p in project.model.probes.items()}
        return cls(depth, project.fingerprint, compiled_fingerprint, outcomes, questions)

    @property
    def disagreements(self) -> list[Disagreement]:
        return disagreements(self.outcomes)

    @property
    def failed(self) -> list[ProbeOutcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def faults(self) -> list[ProbeOutcome]:
        """The probes that did not run (a subset of :attr:`failed`)."""
        return [o for o in self.outcomes if o.fault is not None]

    @property
    def unasked(self) -> bool:
        """The model has probes and none was answered (a platform filter left nothing): not a
        pass."""
        return bool(self.questions) and not self.outcomes

    @property
    def passed(self) -> bool:
        return not self.failed and not self.disagreements and not self.unasked

    # ---- formats -------------------------------------------------------------------------

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.document(), indent=2, sort_keys=True) + "\n"
        if fmt == "junit":
            return self.junit()
        return self.text()

    def summary(self) -> str:
        probes = len({o.probe for o in self.outcomes})
        n = len(self.failed)
        d = len(self.disagreements)
        f = len(self.faults)
        faults = f" ({f} did not run)" if f else ""
        return (
            f"accord probe ({self.depth}): {probes} probe{'s' if probes != 1 else ''}, "
            f"{len(self.outcomes)} answers: {n} failed{faults}, "
            f"{d} disagreement{'s' if d != 1 else ''}"
        )

    def text(self) -> str:
        lines: list[str] = []
        current = None
        for o in sorted(self.outcomes, key=lambda o: (o.probe, o.surface)):
            if o.probe != current:
                current = o.probe
                lines.append(
                    f"probe {o.probe} (owner {o.owner}): {self.questions.get(o.probe, '')}"
                )
            by = f" (answered by the {o.depth})" if o.depth != self.depth else ""
            if o.ok:
                lines.append(f"  ok    {o.surface}: {o.actual}{by}")
            elif o.fault is not None:
                lines.append(
                    f"  FAULT {o.surface}: expected {o.expected}, the probe did not run "
                    f"({o.fault}): owner {o.owner} told{by}"
                )
                lines.append(f"        {o.detail}")
            else:
                got = o.actual if o.actual is not None else "no answer"
                lines.append(f"  FAIL  {o.surface}: expected {o.expected}, got {got}{by}")
                lines.append(f"        {o.detail}")
        for d in self.disagreements:
            lines.append(
                f"DISAGREE probe {d.probe} (owner {d.owner}): {d.surfaces[0]} answered "
                f"{d.answers[0]}, {d.surfaces[1]} answered {d.answers[1]}"
            )
        if self.unasked:
            lines.append("no probe was answered: nothing this run could ask reaches a probe")
        elif not self.questions:
            lines.append("the model has no probes")
        lines += [f"note: {n}" for n in self.notes]
        lines.append(self.summary())
        return "\n".join(visible(line) for line in lines) + "\n"

    def document(self) -> dict[str, Any]:
        """The result file's content without its digest (no known secret in it, valid
        Unicode)."""
        return plain(
            redact_tree(
                {
                    "accord_probe_result": RESULT_FORMAT,
                    "depth": self.depth,
                    "model_fingerprint": self.model_fingerprint,
                    "compiled_fingerprint": self.compiled_fingerprint,
                    "passed": self.passed,
                    "outcomes": [
                        {**o.to_json(), "fault": o.fault}
                        for o in sorted(self.outcomes, key=lambda o: (o.probe, o.surface))
                    ],
                    "faults": len(self.faults),
                    "disagreements": [d.to_json() for d in self.disagreements],
                    # only when there are some: a run without notes reads as before
                    **({"notes": list(self.notes)} if self.notes else {}),
                }
            )
        )

    def sealed(self) -> dict[str, Any]:
        """The result file: the document and a SHA-256 over its canonical JSON."""
        doc = self.document()
        doc["sha256"] = digest(doc)
        return doc

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the result file (:func:`compiler.core.outdir.write_report`: scrubbed,
        atomically)."""
        write_report(path, json.dumps(self.sealed(), indent=2, sort_keys=True) + "\n")

    def junit(self) -> str:
        """JUnit XML; every value through :func:`xml_text` (ElementTree escapes markup but
        writes a control character as it is, which no XML parser accepts)."""

        def element(parent: ET.Element | None, tag: str, attrs: dict[str, str]) -> ET.Element:
            values = {k: xml_text(v) for k, v in attrs.items()}
            return ET.Element(tag, values) if parent is None else ET.SubElement(parent, tag, values)

        suite = element(
            None,
            "testsuite",
            {
                "name": f"accord probe ({self.depth})",
                "tests": str(len(self.outcomes) + len(self.disagreements)),
                "failures": str(len(self.failed) - len(self.faults) + len(self.disagreements)),
                "errors": str(len(self.faults)),
            },
        )
        props = element(suite, "properties", {})
        for key in ("model_fingerprint", "compiled_fingerprint"):
            element(props, "property", {"name": key, "value": getattr(self, key) or ""})
        for o in sorted(self.outcomes, key=lambda o: (o.probe, o.surface)):
            case = element(
                suite,
                "testcase",
                {"classname": f"probes.{o.probe}", "name": f"{o.surface} (owner {o.owner})"},
            )
            cprops = element(case, "properties", {})
            for key, value in (
                ("owner", o.owner),
                ("persona", o.persona),
                ("surface", o.surface),
                ("expected", o.expected),
                ("actual", o.actual or ""),
                ("fault", o.fault or ""),
            ):
                element(cprops, "property", {"name": key, "value": value})
            if o.fault is not None:
                error = element(
                    case,
                    "error",
                    {
                        "type": "probe-fault",
                        "message": f"owner {o.owner}: the probe did not run ({o.fault})",
                    },
                )
                error.text = xml_text(o.detail)
            elif not o.ok:
                got = o.actual if o.actual is not None else "no answer"
                failure = element(
                    case,
                    "failure",
                    {
                        "type": "probe-mismatch",
                        "message": f"owner {o.owner}: expected {o.expected}, got {got}",
                    },
                )
                failure.text = xml_text(o.detail)
        for d in self.disagreements:
            case = element(
                suite,
                "testcase",
                {
                    "classname": f"probes.{d.probe}",
                    "name": f"{d.surfaces[0]} = {d.surfaces[1]} (owner {d.owner})",
                },
            )
            element(
                case,
                "failure",
                {
                    "type": "surfaces-disagree",
                    "message": f"owner {d.owner}: {d.surfaces[0]} answered {d.answers[0]}, "
                    f"{d.surfaces[1]} answered {d.answers[1]}",
                },
            )
        root = ET.Element("testsuites", {"name": "accord probe"})
        root.append(suite)
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def digest(doc: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``doc`` without its ``sha256`` key."""
    return sealed_digest(doc)


def describe(probe: Any) -> str:
    fact = probe.dataset
    if probe.where:
        fact += " where " + " and ".join(f"{d} = {v}" for d, v in probe.where.items())
    if probe.column:
        fact += f", column {probe.column}"
    return f"{probe.persona} asks {fact}"
