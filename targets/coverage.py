"""What a live read saw, with which reader, and what it could not see.

A clean verdict from a live command is a proof only when the reading role saw everything the
verdict covers. Every reader records here what it read (counted by kind), which role or
principal read it, the privileges that role was found to hold, and each thing it could not
see with the platform's reason and what that leaves unproven. ``accord drift`` turns every
unseen entry into an ACC707 ``live-incomplete`` error (it never exits 0 on an incomplete read),
and every live command's machine output carries :meth:`Coverage.to_json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, order=True)
class Unseen:
    """One thing the reader could not see."""

    #: what could not be read, in words ("policy references of PROD.CRITICAL.PATIENTS")
    what: str
    #: why: the platform's answer, or the privilege the reader lacks
    why: str
    #: what is therefore not proven ("drift of PROD.CRITICAL.PATIENTS's row filter and masks")
    unproven: str = ""

    def sentence(self) -> str:
        """``the reading role cannot see X (why); drift of Y is not proven``."""
        text = f"the reading role cannot see {self.what}"
        if self.why:
            text += f" ({self.why})"
        if self.unproven:
            text += f"; {self.unproven} is not proven"
        return text


@dataclass
class Coverage:
    """The coverage of one platform's read."""

    platform: str
    #: the role (Snowflake) or principal (Databricks) that read, as the platform named it
    reader: str = ""
    #: the privileges found that matter to a complete read (``introspect --check-reader``)
    privileges: list[str] = field(default_factory=list)
    #: how many of each kind were read: tables, policies, functions, grants, tags, rows ...
    read: dict[str, int] = field(default_factory=dict)
    unseen: list[Unseen] = field(default_factory=list)
    #: how the read went where it took another way than the usual one (a bulk view that
    #: could not be read, and the per-object reads that stood in for it): nothing unseen
    notes: list[str] = field(default_factory=list)
    #: what was read and left alone, as the model's ``unmanaged`` entries ask (targets/unmanaged.py)
    left_alone: list[str] = field(default_factory=list)

    def saw(self, kind: str, count: int = 1) -> None:
        self.read[kind] = self.read.get(kind, 0) + count

    def cannot_see(self, what: str, why: str, unproven: str = "") -> None:
        entry = Unseen(what, why, unproven)
        if entry not in self.unseen:
            self.unseen.append(entry)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def leave(self, what: str) -> None:
        if what not in self.left_alone:
            self.left_alone.append(what)

    @property
    def complete(self) -> bool:
        return not self.unseen

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "reader": self.reader,
            "privileges": sorted(self.privileges),
            "read": dict(sorted(self.read.items())),
            "complete": self.complete,
            "unseen": [
                {"what": u.what, "why": u.why, "unproven": u.unproven} for u in sorted(self.unseen)
            ],
            # only when there is one: a read that took the usual way answers as it always has
            **({"notes": sorted(self.notes)} if self.notes else {}),
            **({"left_alone": sorted(self.left_alone)} if self.left_alone else {}),
        }

    def lines(self) -> list[str]:
        """The text form: one summary line, then one line per unseen entry."""
        reader = f" as {self.reader}" if self.reader else ""
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(self.read.items())) or "nothing"
        verdict = "complete" if self.complete else f"INCOMPLETE ({len(self.unseen)} not seen)"
        out = [f"coverage {self.platform}{reader}: read {counts}; {verdict}"]
        out += [f"  not seen: {u.sentence()}" for u in sorted(self.unseen)]
        out += [f"  note: {n}" for n in sorted(self.notes)]
        out += [f"  left alone: {w}" for w in sorted(self.left_alone)]
        return out
