"""Structured stage checks that read table metadata instead of running SQL.

Unity Catalog's ``information_schema.row_filters`` / ``column_masks`` column names differ
between the reference page and what live workspaces answer, so a SQL check written against
either may fail on a correct deployment. The SDK's ``w.tables.get(full_name)`` is typed:
``TableInfo.row_filter`` (``function_name``, ``input_column_names``) and each
``ColumnInfo.mask`` (``function_name``, ``using_column_names``)
(docs.databricks.com/api/workspace/tables/get; databricks-sdk ``service.catalog``). ABAC
policies appear in no information_schema view: ``w.policies.list_policies(on_securable_type,
on_securable_fullname)`` lists them (``PolicyInfo.name``, ``row_filter`` / ``column_mask``
with ``function_name``); governed-tag assignments of a column come from
``w.entity_tag_assignments.list("columns", "<table>.<column>")`` (``tag_key``, ``tag_value``).

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
    #: "row_filter" or "mask" (read with tables.get), or "abac_policy" (policies.list_policies)
    kind: str
    #: the table; for "abac_policy", the securable the policy is on
    table: str
    column: str | None
    #: the function expected in place, or None: nothing may be in place
    function: str | None
    #: for "abac_policy": the policy's name and the securable's type (CATALOG, SCHEMA, TABLE)
    policy: str | None = None
    securable_type: str | None = None
    #: for "tag": the governed tag's key and the value expected (None: not assigned)
    tag: str | None = None
    value: str | None = None
    #: for "governed_tag" (the tag's key in ``tag``): the allowed values the account's governed
    #: tag must have, read with ``tag_policies.get_tag_policy``
    values: tuple[str, ...] | None = None
    #: for "no_grant" (the function in ``table``): the platform, and the privilege the grantee
    #: must no longer hold (Snowflake ``SHOW GRANTS ON FUNCTION``; Databricks
    #: ``grants.get_effective``, inherited grants included)
    platform: str | None = None
    privilege: str | None = None
    grantee: str | None = None

    def line(self) -> str:
        body = {"kind": self.kind, "table": self.table, "column": self.column}
        body["function"] = self.function
        if self.policy is not None:
            body.update(policy=self.policy, securable_type=self.securable_type)
        if self.tag is not None:
            body.update(tag=self.tag, value=self.value)
        if self.values is not None:
            body["values"] = list(self.values)
        if self.grantee is not None:
            body.update(platform=self.platform, privilege=self.privilege, grantee=self.grantee)
        return PREFIX + json.dumps(body, sort_keys=True)


def parse(text: str) -> list[MetadataCheck]:
    """The metadata checks of a ``.verify.sql`` text, in order."""
    out = []
    for raw in text.splitlines():
        if raw.startswith(PREFIX):
            data = json.loads(raw[len(PREFIX) :])
            out.append(
                MetadataCheck(
                    data["kind"],
                    data["table"],
                    data["column"],
                    data["function"],
                    data.get("policy"),
                    data.get("securable_type"),
                    data.get("tag"),
                    data.get("value"),
                    None if data.get("values") is None else tuple(data["values"]),
                    data.get("platform"),
                    data.get("privilege"),
                    data.get("grantee"),
                )
            )
    return out


def evaluate_tags(check: MetadataCheck, assignments: list[Any]) -> bool:
    """Whether a column's governed-tag assignments (``EntityTagAssignment`` items of
    ``w.entity_tag_assignments.list("columns", "<table>.<column>")``: tag_key, tag_value) show
    what ``check`` expects."""
    found = [a for a in assignments if (a.tag_key or "") == check.tag]
    if check.value is None:
        return not found
    return len(found) == 1 and (found[0].tag_value or "") == check.value


def evaluate_governed_tag(check: MetadataCheck, found: Any) -> bool:
    """Whether the account's governed tag (a ``TagPolicy`` of ``tag_policies.get_tag_policy``:
    tag_key, values[].name; None when it does not exist) has the key and allows every value
    ``check`` expects (assignments of a value the tag does not allow are refused; values other
    teams added do not matter here, and drift reports them). Keys and values are
    case-sensitive (admin/governed-tags)."""
    if found is None or (found.tag_key or "") != check.tag:
        return False
    return set(check.values or ()) <= {v.name or "" for v in found.values or ()}


def evaluate_policies(check: MetadataCheck, policies: list[Any]) -> bool:
    """Whether the ABAC policies on a securable (``PolicyInfo`` items of
    ``w.policies.list_policies``: name, row_filter / column_mask .function_name) show what
    ``check`` expects."""
    found = [p for p in policies if (p.name or "").lower() == (check.policy or "").lower()]
    if check.function is None:
        return not found
    if len(found) != 1:
        return False
    options = found[0].row_filter or found[0].column_mask
    return _same(getattr(options, "function_name", None), check.function)


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


def grant_gone(check: MetadataCheck, grants: list[tuple[str, str]]) -> bool:
    """Whether none of ``grants`` ((privilege, grantee) on the function) is the one ``check``
    says was revoked. Snowflake role names compare upper-case (stored so when unquoted);
    Databricks principals as written."""
    fold = str.upper if check.platform == "snowflake" else str
    want = (fold(check.privilege or ""), fold(check.grantee or ""))
    return want not in {(fold(p), fold(g)) for p, g in grants}


def function_grants(executor: Any, check: MetadataCheck) -> list[tuple[str, str]]:
    """(privilege, grantee) of every grant on the function: ``SHOW GRANTS ON FUNCTION f()``
    (privilege, grantee_name) on Snowflake; on Databricks ``grants.get_effective("function",
    f)`` (privilege_assignments with principal and privileges, inherited ones included: a
    grant on the schema reaches every function in it, and ``grants.get`` "does not include
    inherited permissions"), every page read, within the statement timeout."""
    if check.platform == "snowflake":
        from accord.targets.sql import name_sql

        rows = executor.query(f"SHOW GRANTS ON FUNCTION {name_sql(check.table, 'snowflake')}()")
        return [(str(r["privilege"]), str(r["grantee_name"])) for r in rows]
    client = executor.client

    def pages() -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        token: str | None = None
        seen: set[str] = set()
        while True:
            page = client.grants.get_effective(
                "function", check.table, max_results=0, page_token=token
            )
            for pa in page.privilege_assignments or []:
                for priv in pa.privileges or []:
                    value = getattr(priv.privilege, "value", priv.privilege)
                    out.append((str(value or ""), pa.principal or ""))
            token = page.next_page_token
            if not token:
                return out
            if token in seen:
                raise RuntimeError(f"grants.get_effective named page {token!r} twice")
            seen.add(token)

    call = getattr(executor, "call", None)
    what = f"the grants on {check.table}"
    return call(what, pages) if call is not None else pages()


def run(executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check, read with ``client.tables.get``. Raises ``RuntimeError``
    when the executor has no Databricks client (the checks cannot run)."""
    if all(c.kind == "no_grant" for c in checks):
        return [[(grant_gone(c, function_grants(executor, c)),)] for c in checks]
    client = getattr(executor, "client", None)
    tables, policies = getattr(client, "tables", None), getattr(client, "policies", None)
    tags = getattr(client, "entity_tag_assignments", None)
    tag_policies = getattr(client, "tag_policies", None)
    if tables is None or policies is None or tags is None or tag_policies is None:
        raise RuntimeError(
            "this executor cannot read table metadata (client.tables, client.policies, "
            "client.entity_tag_assignments, client.tag_policies)"
        )
    cache: dict[tuple[str, ...], Any] = {}
    bounded = getattr(executor, "call", None)

    def call(what: str, fn: Any) -> Any:
        # every SDK call ends within the statement timeout (DatabricksExecutor.call)
        return bounded(what, fn) if bounded is not None else fn()

    out = []
    for check in checks:
        if check.kind == "no_grant":
            out.append([(grant_gone(check, function_grants(executor, check)),)])
            continue
        if check.kind == "governed_tag":
            found = call(
                f"governed tag {check.tag}", lambda c=check: _governed_tag(tag_policies, c)
            )
            out.append([(evaluate_governed_tag(check, found),)])
            continue
        if check.kind == "tag":
            entity = f"{check.table}.{check.column}"
            key = ("tags", entity)
            if key not in cache:
                cache[key] = call(
                    f"tags on {entity}",
                    lambda e=entity: list(tags.list(entity_type="columns", entity_name=e)),
                )
            out.append([(evaluate_tags(check, cache[key]),)])
            continue
        if check.kind == "abac_policy":
            key = ("policies", check.securable_type or "", check.table)
            if key not in cache:
                cache[key] = call(
                    f"ABAC policies on {check.table}",
                    lambda c=check: list(
                        policies.list_policies(
                            on_securable_type=c.securable_type, on_securable_fullname=c.table
                        )
                    ),
                )
            out.append([(evaluate_policies(check, cache[key]),)])
            continue
        key = ("table", check.table)
        if key not in cache:
            cache[key] = call(f"table {check.table}", lambda c=check: tables.get(full_name=c.table))
        out.append([(evaluate(check, cache[key]),)])
    return out


def _governed_tag(tag_policies: Any, check: MetadataCheck) -> Any:
    """The account's governed tag, or None when it does not exist (``NotFound``). Any other
    error (a denial, a timeout) propagates: the check was not run, so the stage fails."""
    from databricks.sdk.errors import NotFound

    try:
        return tag_policies.get_tag_policy(tag_key=check.tag)
    except NotFound:
        return None
