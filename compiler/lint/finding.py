"""What a lint rule reports: :class:`Finding`, :class:`SqlHit`, and a finding's one JSON record.

A finding is a value: a position, a rule id of the rule table (:mod:`compiler.model.rules`),
the entry it belongs to (whose ``ignore:`` may suppress it), a message and a fix. It depends
on nothing but the error types and the rule table, so ``accord drift`` (which builds findings
from the live platforms) and the lint-result cache use it without loading the engine.

:meth:`Finding.to_record` is the one JSON shape of a finding: ``accord lint --format json``
lists its fields (docs/cli.md) and the lint cache stores it whole;
:meth:`Finding.from_record` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from accord.compiler.core.errors import Location
from accord.compiler.model.rules import RULES_BY_ID, Severity

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from accord.compiler.sqlscan import Statement


@dataclass(frozen=True, order=True)
class Finding:
    location: Location
    rule: str
    object: str
    message: str
    fix: str = ""
    suppressed: bool = False
    reason: str = ""
    #: other places the finding names (the second file of an ACC203 across SQL files)
    related: tuple[Location, ...] = ()
    #: the finding's own severity where its rule's page says it is lower than the rule's (an
    #: ACC206 mask that reveals more than half of a column, not all of it); "": the rule's
    level: Severity | Literal[""] = ""

    @property
    def name(self) -> str:
        return RULES_BY_ID[self.rule].name

    @property
    def severity(self) -> Severity:
        return self.level or RULES_BY_ID[self.rule].severity

    def to_record(self) -> dict[str, Any]:
        """The finding as JSON values: the fields ``--format json`` lists, in its order
        (``name`` is the rule table's, ``severity`` the rule's unless the finding has its own),
        then ``suppressed``, ``reason`` and the ``related`` positions."""
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "file": self.location.file,
            "line": self.location.line,
            "column": self.location.column,
            "object": self.object,
            "message": self.message,
            "fix": self.fix,
            "suppressed": self.suppressed,
            "reason": self.reason,
            "related": [_position(r) for r in self.related],
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Finding:
        """The finding :meth:`to_record` gave. Raises KeyError, TypeError or ValueError
        when ``record`` is not one (a missing field, a rule not in the rule table)."""
        rule = record["rule"]
        if rule not in RULES_BY_ID:
            raise KeyError(rule)
        severity = record["severity"]
        if severity not in ("error", "warning"):
            raise ValueError(f"severity {severity!r}")
        return cls(
            _location(record),
            rule,
            str(record["object"]),
            str(record["message"]),
            str(record["fix"]),
            bool(record["suppressed"]),
            str(record["reason"]),
            tuple(_location(r) for r in record["related"]),
            "" if severity == RULES_BY_ID[rule].severity else severity,
        )


def _position(loc: Location) -> dict[str, Any]:
    return {"file": loc.file, "line": loc.line, "column": loc.column}


def _location(record: Mapping[str, Any]) -> Location:
    line, column = record["line"], record["column"]
    if not isinstance(line, int) or not isinstance(column, int):
        raise TypeError("line and column are integers")
    return Location(str(record["file"]), line, column)


@dataclass(frozen=True)
class SqlHit:
    """A finding in SQL and the statements whose suppression comments may silence it."""

    finding: Finding
    statements: tuple[Statement, ...]
