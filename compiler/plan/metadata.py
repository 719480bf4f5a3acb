"""Structured stage checks that read table metadata instead of running SQL.

Unity Catalog's ``information_schema.row_filters`` / ``column_masks`` column names differ
between the reference page and what live workspaces answer, so a SQL check written against
either may fail on a correct deployment. The SDK's ``w.tables.get(full_name)`` is typed:
``TableInfo.row_filter`` (``function_name``, ``input_column_names``) and each
``ColumnInfo.mask`` (``function_name``, ``using_column_names``)
(docs.databricks.com/api/workspace/tables/get; databricks-sdk ``service.catalog``).

A metadata check is written into the stage's ``.verify.sql`` as one comment line (so it is
covered by the file's SHA-256 and never sent as SQL)::

    -- accord-check: {"column": "notes", "function": "gov.pol.m", "kind": "mask", "table": "c.s.t"}

``accord migrate apply`` runs it through the Databricks executor's SDK client. An executor
that cannot read table metadata fails the stage: a check that was not run never passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PREFIX = "-- accord-check: "


@dataclass(frozen=True)
class MetadataCheck:
    kind: str  # "row_filter" or "mask"
    table: str
    column: str | None
    #: the function expected in place, or None: nothing may be in place
    function: str | None

    def line(self) -> str:
        body = {"kind": self.kind, "table": self.table, "column": self.column}
        body["function"] = self.function
        return PREFIX + json.dumps(body, sort_keys=True)


def parse(text: str) -> list[MetadataCheck]:
    """The metadata checks of a ``.verify.sql`` text, in order."""
    out = []
    for raw in text.splitlines():
        if raw.startswith(PREFIX):
            data = json.loads(raw[len(PREFIX) :])
            out.append(MetadataCheck(data["kind"], data["table"], data["column"], data["function"]))
    return out


def _same(a: str | None, b: str | None) -> bool:
    return (a or "").lower() == (b or "").lower()


def evaluate(check: MetadataCheck, info: Any) -> bool:
    """Whether ``info`` (a ``TableInfo``) shows what ``check`` expects."""
    if check.kind == "row_filter":
        found = getattr(getattr(info, "row_filter", None), "function_name", None)
        return _same(found, check.function) if check.function else found is None
    columns = [
        c
        for c in getattr(info, "columns", None) or []
        if (c.name or "").lower() == (check.column or "").lower()
    ]
    if len(columns) != 1:
        return False  # the column is not there: nothing can be checked, so it fails
    found = getattr(columns[0].mask, "function_name", None) if columns[0].mask else None
    return _same(found, check.function) if check.function else found is None


def run(executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check, read with ``client.tables.get``. Raises ``RuntimeError``
    when the executor has no Databricks client (the checks cannot run)."""
    client = getattr(executor, "client", None)
    tables = getattr(client, "tables", None)
    if tables is None:
        raise RuntimeError("this executor cannot read table metadata (client.tables.get)")
    cache: dict[str, Any] = {}
    out = []
    for check in checks:
        if check.table not in cache:
            cache[check.table] = tables.get(full_name=check.table)
        out.append([(evaluate(check, cache[check.table]),)])
    return out
