"""The per-platform denial-code table (``compiler/data/denial_codes.json``).

A platform that denies a persona says so with a code, under a key that depends on who relays
it: ``errorCode`` and ``sqlState`` from a SQL client, ``reason`` from a ``google.rpc.ErrorInfo``,
``code`` from an agent framework. An agent that answers politely ("I'm sorry, I can't share
that") while a code rides in its task's metadata or data parts has been denied; one whose text
says so with no code has not said anything a probe can trust.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TABLE_FILE = Path(__file__).resolve().parent.parent / "data" / "denial_codes.json"
#: how deep a payload is searched (metadata nests, but not without end)
MAX_DEPTH = 12


@dataclass(frozen=True)
class DenialRow:
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


@cache
def denial_table() -> dict[str, DenialRow]:
    doc = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    return {
        name: DenialRow(name, tuple(row["keys"]), frozenset(row["codes"]))
        for name, row in sorted(doc["platforms"].items())
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
