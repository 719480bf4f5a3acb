"""Stage checks written as data: read through a platform's API instead of run as SQL.

A stage's ``.verify.sql`` holds SQL checks (each query returns ``ok``) and, where SQL cannot
say it, checks written as data, one comment line each. Each platform runs its own
(:meth:`targets.platform.Platform.run_checks`: ``targets/<platform>/checks.py``).

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

from accord.compiler.core.platforms import facts
from accord.targets.platform import platform as platform_named

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
    #: for "owner" (the object in ``table``, its kind, one of targets.inspect.OWNED_KINDS, in
    #: ``securable_type``): ``grantee`` must own it

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
        if self.kind == "owner":
            body["securable_type"] = self.securable_type
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


def grant_gone(check: MetadataCheck, grants: list[tuple[str, str]]) -> bool:
    """Whether none of ``grants`` ((privilege, grantee) on the function) is the one ``check``
    says was revoked. Names compare as the platform compares identities (Snowflake role names
    upper-case, as stored when unquoted; Databricks principals without regard to case): a grant
    that may be the revoked one is taken for it, so the check never passes on a spelling."""
    fold = facts(check.platform).fold_identity if check.platform else str
    want = (fold(check.privilege or ""), fold(check.grantee or ""))
    return want not in {(fold(p), fold(g)) for p, g in grants}


def owned_by(check: MetadataCheck, owner: str) -> bool:
    """Whether ``owner`` (as the platform answered it) is the one ``check`` expects, compared
    as the platform compares identities."""
    fold = facts(check.platform).fold_identity if check.platform else str
    return bool(owner) and fold(owner) == fold(check.grantee or "")


def run(executor: Any, platform: str, checks: list[MetadataCheck]) -> list[list[tuple[Any, ...]]]:
    """One row ``(ok,)`` per check, run by ``platform``'s own runner."""
    return platform_named(platform).run_checks(executor, checks)
