"""Databricks' stage checks written as data, read through the SDK (:mod:`targets.checks`).

Table metadata with ``w.tables.get(full_name)`` (``TableInfo.row_filter``, ``ColumnInfo.mask``),
ABAC policies with ``w.policies.list_policies``, column tags with
``w.entity_tag_assignments.list``, governed tags with ``w.tag_policies.get_tag_policy``, and
who may call a function with ``grants.get_effective`` (inherited grants included; the one pager
of :func:`targets.databricks.inspect.effective_grants`). Every SDK call ends within the
statement timeout (``DatabricksExecutor.call``).
"""

from __future__ import annotations

from typing import Any

from accord.targets.checks import MetadataCheck, grant_gone, owned_by
from accord.targets.databricks.inspect import effective_grants


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


def function_grants(executor: Any, check: MetadataCheck) -> list[tuple[str, str]]:
    """(privilege, grantee) of every grant on the function: ``grants.get_effective("function",
    f)`` (privilege_assignments with principal and privileges, inherited ones included: a
    grant on the schema reaches every function in it, and ``grants.get`` "does not include
    inherited permissions"), every page read, within the statement timeout."""
    client = executor.client

    def pages() -> list[tuple[str, str]]:
        return [
            (privilege, who)
            for who, privilege, _ in effective_grants(client, "function", check.table)
        ]

    call = getattr(executor, "call", None)
    what = f"the grants on {check.table}"
    return call(what, pages) if call is not None else pages()


def run_checks(executor: Any, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check, read with ``client.tables.get``. Raises ``RuntimeError``
    when the executor has no Databricks client (the checks cannot run)."""
    if all(c.kind in ("no_grant", "owner") for c in checks):
        return [[(_grant_or_owner(executor, c),)] for c in checks]
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
        if check.kind in ("no_grant", "owner"):
            out.append([(_grant_or_owner(executor, check),)])
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


def _grant_or_owner(executor: Any, check: MetadataCheck) -> bool:
    if check.kind == "no_grant":
        return grant_gone(check, function_grants(executor, check))
    return owned_by(check, owner(executor, check))


def owner(executor: Any, check: MetadataCheck) -> str:
    """Who owns the object of an "owner" check: ``FunctionInfo.owner`` / ``TableInfo.owner``
    (functions.get, tables.get), within the statement timeout."""
    client = executor.client
    kind = check.securable_type or ""
    api = client.functions if kind in ("salt function", "policy function") else client.tables
    call = getattr(executor, "call", None)

    def read() -> Any:
        return api.get(check.table)

    info = call(f"the owner of {check.table}", read) if call is not None else read()
    return str(getattr(info, "owner", "") or "")


def _governed_tag(tag_policies: Any, check: MetadataCheck) -> Any:
    """The account's governed tag, or None when it does not exist (``NotFound``). Any other
    error (a denial, a timeout) propagates: the check was not run, so the stage fails."""
    from databricks.sdk.errors import NotFound

    try:
        return tag_policies.get_tag_policy(tag_key=check.tag)
    except NotFound:
        return None
