"""The error shapes that mean "privilege denied", per platform: one table, two questions.

The table is ``compiler/data/denial_codes.json``; this module is its only reader. It answers:

* :func:`classify`: is this failed statement a denial, and what does the deploying role need?
  A denial is not a fault: the statement is fine, the deploying role lacks a privilege. It is
  reported as ``denied: the deploying role needs X on Y`` and never retried (a live read says
  it of the reading role instead: :meth:`Denial.for_reader`). Each row of the
  table names the error shape (as the real client raises it); the first matching row wins, and
  the table's ``needs`` say what the role needs for the statement that failed. Tests build each
  row's error with the client's own exception classes (tests/test_live_denials.py).
* :func:`find_denial`: does a payload carry a denial code? A platform that denies a persona
  says so with a code, under a key that depends on who relays it: ``errorCode`` and
  ``sqlState`` from a SQL client, ``reason`` from a ``google.rpc.ErrorInfo``, ``code`` from an
  agent framework. An agent that answers politely ("I'm sorry, I can't share that") while a
  code rides in its task's metadata or data parts has been denied; one whose text says so with
  no code has not said anything a probe can trust. The codes are the rows' own: a Snowflake
  errno in six digits and bare, a SQLSTATE, a Databricks error code.

Sources: Snowflake error 002003 / SQLSTATE 42S02 "does not exist or not authorized" (a missing
object and one the role may not see look alike), 003001 / 42501 "SQL access control error:
Insufficient privileges to operate on ..."; docs.snowflake.com/en/user-guide/security-column-ddm-use
and security-row-using (APPLY MASKING POLICY / APPLY ROW ACCESS POLICY on the account, or APPLY on
the policy, plus OWNERSHIP of the table). Databricks: ``[INSUFFICIENT_PERMISSIONS] ... SQLSTATE:
42501``, error code ``PERMISSION_DENIED`` (REST 403, ``databricks.sdk.errors.PermissionDenied``);
docs.databricks.com/.../filters-and-masks (a role needs MANAGE or ownership of the table and
EXECUTE on the function).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from accord.compiler.sqlscan import Statement, scan

TABLE_FILE = Path(__file__).resolve().parent.parent / "data" / "denial_codes.json"
#: how deep a payload is searched (metadata nests, but not without end)
MAX_DEPTH = 12
#: what the role needs when the table says nothing for the statement
_SOME_PRIVILEGE = "the privilege the statement needs"

#: the object a platform message names: 'DB.SCH.OBJ' (Snowflake quotes it; messages, not SQL)
_NAMED = re.compile(r"'([^']+)'")
#: the privilege a Databricks message says the caller lacks: "User does not have X on Y"
_LACKS = re.compile(r"does not have ([A-Z][A-Z_ ]*?(?: or [A-Z][A-Z_ ]*?)*) on (\S+(?: [^\s()]+)?)")


@dataclass(frozen=True)
class Denial:
    """A recognised denial: which row matched and what the role needs."""

    row: str
    privilege: str
    on: str
    said: str
    #: who lacks the privilege: the role running a statement, or the one reading (live reads)
    role: str = "the deploying role"

    def __str__(self) -> str:
        return f"denied: {self.role} needs {self.privilege} on {self.on} ({self.said})"

    def for_reader(self, reader: str, privilege: str = "", on: str = "") -> Denial:
        """The same denial said of the reading role (``reader``: its name as the platform
        gave it, when known), with the grant it lacks: ``privilege`` on ``on`` when the
        reader knows what it asked for, else what the platform's message names ("User does
        not have MANAGE on schema c.s"), else what the table says."""
        role = f"the reading role {reader}" if reader else "the reading role"
        if not privilege:
            named = _LACKS.search(self.said)
            if named is not None and self.privilege == _SOME_PRIVILEGE:
                privilege, on = named.group(1), named.group(2).rstrip(".")
        return dataclasses.replace(
            self, role=role, privilege=privilege or self.privilege, on=on or self.on
        )


@dataclass(frozen=True)
class Row:
    id: str
    platform: str
    #: the error shape, in words (for the docs)
    shape: str
    matches: Callable[[Any], bool]
    #: kinds of statement this row is specific to (empty: any)
    kinds: tuple[str, ...] = ()
    #: the codes that, in a payload, mean this denial
    codes: tuple[str, ...] = ()
    #: what the role needs when the statement's kind has no ``needs`` entry
    privilege: str = _SOME_PRIVILEGE


@dataclass(frozen=True)
class DenialRow:
    """A platform's denial codes and the payload keys they arrive under."""

    platform: str
    keys: tuple[str, ...]
    codes: frozenset[str]


@dataclass(frozen=True)
class DenialCode:
    """A denial found in a payload: which row, under which key, which code."""

    platform: str
    key: str
    code: str

    def __str__(self) -> str:
        return f"{self.platform} denial {self.code} (under {self.key!r})"


# --------------------------------------------------------------------------------------------
# the error shapes


def _attr(err: Any, name: str) -> Any:
    return getattr(err, name, None)


def _errno(err: Any) -> int | None:
    value = _attr(err, "errno")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _text(err: Any) -> str:
    return str(_attr(err, "msg") or err)


def _sf(code: int, state: str) -> Callable[[Any], bool]:
    return lambda err: (
        _errno(err) == code or (_attr(err, "sqlstate") == state and _errno(err) in (None, -1, code))
    )


def _dbx_code(*codes: str) -> Callable[[Any], bool]:
    def matches(err: Any) -> bool:
        code = _attr(err, "error_code")
        text = _text(err)
        return code in codes or any(f"[{c}]" in text for c in codes)

    return matches


def _dbx_sqlstate(state: str) -> Callable[[Any], bool]:
    return lambda err: f"SQLSTATE: {state}" in _text(err) or _attr(err, "sql_state") == state


def _sdk_error(name: str) -> Callable[[Any], bool]:
    def matches(err: Any) -> bool:
        try:
            from databricks.sdk import errors
        except ImportError:  # pragma: no cover - the extra is installed wherever this runs
            return False
        return isinstance(err, getattr(errors, name))

    return matches


def _row(platform: str, doc: dict[str, Any]) -> Row:
    """One row of the table: its matcher and payload codes from the fields it gives."""
    codes: list[str] = []
    if "errno" in doc:  # a connector error (Snowflake): its number and SQLSTATE
        errno, state = doc["errno"], doc["sqlstate"]
        matches, codes = _sf(errno, state), [f"{errno:06d}", str(errno), state]
    elif "sdk_error" in doc:
        matches = _sdk_error(doc["sdk_error"])
    elif "error_code" in doc:
        matches, codes = _dbx_code(doc["error_code"]), [doc["error_code"]]
    else:
        matches, codes = _dbx_sqlstate(doc["sqlstate"]), [doc["sqlstate"]]
    return Row(
        doc["id"],
        platform,
        doc["shape"],
        matches,
        tuple(doc.get("kinds", ())),
        tuple(codes),
        doc.get("privilege", _SOME_PRIVILEGE),
    )


@cache
def _document() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))["platforms"]
    return doc


def _rows() -> tuple[Row, ...]:
    return tuple(_row(p, r) for p, section in _document().items() for r in section["rows"])


#: every row, in the order they are tried
ROWS: tuple[Row, ...] = _rows()
#: what the deploying role needs, per platform and statement kind (sqlscan kinds): (privilege, on)
_NEEDS: dict[str, dict[str, tuple[str, str]]] = {
    p: {kind: (need[0], need[1]) for kind, need in section["needs"].items()}
    for p, section in _document().items()
}


# --------------------------------------------------------------------------------------------
# a failed statement


def _statement(platform: str, sql: str | None) -> Statement | None:
    if not sql:
        return None
    found = scan(sql, "<statement>", platform).statements
    return found[0] if found else None


def classify(platform: str, err: Any, sql: str | None = None) -> Denial | None:
    """The denial ``err`` is, for the statement ``sql``; None when it is a fault."""
    stmt = _statement(platform, sql)
    kind = stmt.kind if stmt is not None else ""
    for row in ROWS:
        if row.platform != platform or (row.kinds and kind not in row.kinds):
            continue
        if row.matches(err):
            return _denial(platform, row, err, stmt)
    return None


def _denial(platform: str, row: Row, err: Any, stmt: Statement | None) -> Denial:
    said = " ".join(_text(err).split())
    needs = _NEEDS[platform].get(stmt.kind) if stmt is not None else None
    if needs is not None and stmt is not None:
        fields = {"policy": stmt.policy, "table": stmt.table, "name": stmt.name}
        privilege, on = (part.format(**fields) for part in needs)
        return Denial(row.id, privilege, on, said)
    named = _NAMED.search(said)
    on = named.group(1) if named else "the object the statement names"
    return Denial(row.id, row.privilege, on, said)


# --------------------------------------------------------------------------------------------
# a code in a payload


@cache
def denial_table() -> dict[str, DenialRow]:
    """Per platform (in name order): the payload keys and the codes of its rows."""
    return {
        name: DenialRow(
            name,
            tuple(_document()[name]["keys"]),
            frozenset(c for r in ROWS if r.platform == name for c in r.codes),
        )
        for name in sorted(_document())
    }


def find_denial(payload: Any, platforms: tuple[str, ...] | None = None) -> DenialCode | None:
    """The first denial code (depth first, keys in order) anywhere in ``payload``: nested
    mappings and lists, each mapping's keys checked against every row's keys."""
    rows = [r for n, r in denial_table().items() if platforms is None or n in platforms]

    def walk(node: Any, depth: int) -> DenialCode | None:
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, dict):
            for row in rows:
                for key in row.keys:
                    value = node.get(key)
                    if isinstance(value, str | int) and not isinstance(value, bool):
                        text = str(value).strip()
                        if text in row.codes:
                            return DenialCode(row.platform, key, text)
            for key in sorted(node, key=str):
                found = walk(node[key], depth + 1)
                if found is not None:
                    return found
        elif isinstance(node, list):
            for item in node:
                found = walk(item, depth + 1)
                if found is not None:
                    return found
        return None

    return walk(payload, 0)
