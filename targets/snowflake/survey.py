"""Snowflake's reader, asked what a scope holds without a model (``accord import``).

The ordinary read (:class:`~targets.snowflake.inspect.SnowflakeReader`) is told by the model
where to look. A survey finds the places: every row access, masking, projection, aggregation
and join policy the reading role may see (``SHOW ... POLICIES IN ACCOUNT``), where each is in
force (``POLICY_REFERENCES(POLICY_NAME => ...)``: tables, columns, the tags a masking policy is
set on with the columns they mask, an aggregation policy's entity key and a join policy's
allowed join keys), and the body of each policy that is in force in the scope or lives in it
(``DESCRIBE ... POLICY``). Sources as the reader's (docs.snowflake.com/en/sql-reference:
show-row-access-policies, show-masking-policies, show-projection-policies,
show-aggregation-policies, show-join-policies, functions/policy_references,
desc-masking-policy, desc-row-access-policy, desc-projection-policy, desc-aggregation-policy,
desc-join-policy; the reader's :data:`~targets.snowflake.inspect.CONSTRAINTS` says what of
these is unconfirmed).

What the reading role cannot see is said, never passed: ``SHOW ... IN ACCOUNT`` and
``POLICY_REFERENCES`` answer only for the policies the role holds APPLY or OWNERSHIP on unless
it holds the global APPLY privilege of the kind (functions/policy_references, usage notes), so
a survey without it records what it cannot see in the coverage.
"""

from __future__ import annotations

from typing import Any

from accord.targets.identity import parse_body, unparsed
from accord.targets.inspect import norm_type
from accord.targets.objects import (
    AggregationAttachment,
    CatalogObject,
    JoinAttachment,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    RowFilterAttachment,
    RowFilterPolicy,
    TagAssignment,
)
from accord.targets.snowflake.inspect import (
    CONSTRAINTS,
    SF_GLOBAL,
    SnowflakeReader,
    _params,
    _sf_literal,
    _sf_name,
    references,
)

#: (the kind as DESCRIBE names it, SHOW ... IN ACCOUNT, the global APPLY privilege)
_KINDS = (
    ("ROW ACCESS", "ROW ACCESS POLICIES", "APPLY ROW ACCESS POLICY"),
    ("MASKING", "MASKING POLICIES", "APPLY MASKING POLICY"),
    *((kind, show, apply) for kind, (show, _, _, apply) in CONSTRAINTS.items()),
)


class SnowflakeSurvey(SnowflakeReader):
    """The Snowflake reader with one more question: what does a scope hold?"""

    def survey(self, scopes: list[str]) -> list[CatalogObject]:
        """Every policy in force on a table of ``scopes`` (``DB`` or ``DB.SCHEMA``; none: the
        whole account) or defined in one, with its body, and every placement of one on such a
        table: row filter, mask, projection, aggregation and join attachments, and the columns
        a mask's tag masks (as tag assignments whose value the ordinary read fills in). The
        entity key an aggregation policy is set with (REF_ARG_COLUMN_NAMES), which the model
        cannot say, is kept on its attachment."""
        wanted = [s.upper() for s in scopes]

        def inside(name: str) -> bool:
            up = name.upper()
            return not wanted or any(up == s or up.startswith(s + ".") for s in wanted)

        self.check_survey()
        self.progress("snowflake: policies in the account")
        defined: dict[str, tuple[str, dict[str, Any]]] = {}
        for kind, show, _ in _KINDS:
            for row in self.query(f"SHOW {show} IN ACCOUNT", f"SHOW {show} IN ACCOUNT") or []:
                name = ".".join(
                    str(row.get(k) or "") for k in ("database_name", "schema_name", "name")
                )
                defined[name] = (kind, row)
        names = sorted(defined)
        answers = self.each(
            lambda p: self.information_schema(
                p, f"POLICY_REFERENCES(POLICY_NAME => {_sf_literal(p)})", f"references of {p}"
            ),
            names,
        )
        placed: list[CatalogObject] = []
        used: set[str] = set()
        for policy, rows in zip(names, answers, strict=True):
            for ref in references(self, policy, rows):
                entity, column, args, kind = ref.entity, ref.column, ref.args, ref.kind
                if ref.domain == "TAG" or not inside(entity):
                    continue
                used.add(policy)
                if kind == "ROW_ACCESS_POLICY":
                    placed.append(RowFilterAttachment(entity, policy, args, ""))
                elif kind == "PROJECTION_POLICY":
                    placed.append(ProjectionAttachment(entity, column, policy, ""))
                elif kind == "AGGREGATION_POLICY":
                    placed.append(AggregationAttachment(entity, policy, "", args))
                elif kind == "JOIN_POLICY":
                    placed.append(JoinAttachment(entity, policy, "", args))
                elif ref.tag:
                    placed.append(TagAssignment(entity, column, ref.tag, "", ""))
                else:
                    placed.append(MaskAttachment(entity, column, policy, "", args))
        chosen = [p for p in names if p in used or inside(p)]
        described = self.each(
            lambda p: self.query(
                f"DESCRIBE {defined[p][0]} POLICY {_sf_name(p)}",
                f"DESCRIBE {defined[p][0]} POLICY {p}",
            ),
            chosen,
        )
        out: list[CatalogObject] = []
        for name, desc in zip(chosen, described, strict=True):
            if not desc:
                continue
            d, (kind, row) = desc[0], defined[name]
            body = parse_body(str(d["body"]), self.platform)
            if body is None:
                self.cannot_see(name, unparsed(str(d["body"])), f"the import of {name}")
                continue
            comment = row.get("comment") or ""
            if kind == "ROW ACCESS":
                out.append(RowFilterPolicy(name, _params(d["signature"]), body, None, comment))
            elif kind in CONSTRAINTS:
                out.append(CONSTRAINTS[kind][1](name, body, comment))
            else:
                out.append(
                    MaskPolicy(
                        name,
                        _params(d["signature"]),
                        norm_type(d["return_type"]),
                        body,
                        "",
                        "",
                        comment,
                    )
                )
        self.coverage.saw("policies surveyed", len(out))
        return out + sorted(set(placed), key=repr)

    def check_survey(self) -> None:
        """Whether the reading role sees every policy of the account: the global APPLY
        privileges (functions/policy_references, usage notes), else what it misses is said."""
        rows = self.query("SELECT CURRENT_ROLE() AS ROLE", "the reading role (CURRENT_ROLE())")
        role = str(next(iter(rows[0].values())) or "") if rows else ""
        if not role:
            return
        self.coverage.reader = role
        held = {(p, on) for p, on, _ in self.reader_grants(role)}
        for privilege in (apply for _, _, apply in _KINDS):
            if (privilege, "ACCOUNT") in held:
                self.coverage.privileges.append(f"{privilege} on ACCOUNT")
                continue
            what, why, _ = SF_GLOBAL[privilege]
            self.cannot_see(
                what,
                f"it lacks the global {privilege} privilege: {why}",
                "the import of every policy it holds no privilege on",
            )
