"""Snowflake's Terraform resources (``snowflakedb/snowflake``): see :mod:`targets.terraform.render`.

mapping table: ``snowflake_table`` and, for its rows, a ``snowflake_execute`` running one
``INSERT OVERWRITE`` (``create_before_destroy``, revert a read: a grants change never empties
the table); salt function: ``snowflake_function_sql`` (secure) whose definition comes from a
sensitive variable; row access policy: ``snowflake_row_access_policy``; masking policy:
``snowflake_masking_policy``; row access attachment: ``snowflake_execute`` (the provider has no
attachment resource for tables and documents this workaround); mask attachment:
``snowflake_table_column_masking_policy_application``; tag-based masking: ``snowflake_tag`` with
``masking_policies`` and one ``snowflake_tag_association`` per tag and value.

Projection, aggregation and join policies and their attachments: ``snowflake_execute``. The
provider (v2.20.0, and its default branch when this was written: docs/resources/) has no
resource for these policies, and attaches aggregation and projection policies only on
``snowflake_view`` (``aggregation_policy``, ``column.projection_policy``), never on a table, and
join policies nowhere: each is one ``snowflake_execute`` running accord's own statement (the
policy: its CREATE, reverted by DROP; an attachment: its SET, reverted by UNSET). A changed body
or attachment replaces the resource (drop, then create), which Snowflake refuses for an
attached policy and which leaves the table unconstrained in between for an attachment: such a
plan is refused (targets/terraform/guard.py); change them through ``accord plan`` (``ALTER ...
SET BODY``, ``SET ... FORCE``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlglot import exp

from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets import sql
from accord.targets.base import row_values
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    Catalog,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.snowflake.migration import SnowflakeMigrationSQL
from accord.targets.snowflake.target import SnowflakeTarget
from accord.targets.terraform.document import REVERT_ROWS, Document, Ref
from accord.targets.terraform.document import address_name as _address_name

#: the newest tag of snowflakedb/terraform-provider-snowflake (v2.20.0) at the time of writing; every argument
#: accord writes was checked against docs/resources/<resource>.md at those tags (and the tests
#: list them: tests/test_terraform.py ALLOWED). v2.20.0's pkg/resources/tag.go still unsets a
#: tag's removed masking policies before setting new ones: targets/terraform/guard.py refuses that.
PROVIDER = {"source": "snowflakedb/snowflake", "version": "2.20.0"}
#: preview resources of the Snowflake provider, enabled in its provider block when used
PREVIEW = {
    "snowflake_table": "snowflake_table_resource",
    "snowflake_function_sql": "snowflake_function_sql_resource",
    "snowflake_table_column_masking_policy_application": (
        "snowflake_table_column_masking_policy_application_resource"
    ),
}


def _sf_parts(name: str) -> list[str]:
    # model identifiers are unquoted: Snowflake resolves them upper case, and the provider
    # quotes what it is given
    return name.upper().split(".")


def _sf_fqn(name: str) -> str:
    return ".".join(f'"{p}"' for p in _sf_parts(name))


def _sf_located(name: str) -> dict[str, str]:
    database, schema, local = _sf_parts(name)
    return {"database": database, "schema": schema, "name": local}


class SnowflakeResources:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        doc.use("snowflake", PROVIDER, PREVIEW)
        self.address: dict[str, str] = {}  # object name -> resource address

    def sql(self, node: exp.Expression) -> str:
        return sql.render(node, SNOWFLAKE.name)

    def add_all(self, catalog: Catalog) -> None:
        salts = {f.mask: f for f in catalog.of(SaltFunction)}
        grants = {t.dimension: t for t in catalog.of(MappingTable)}
        for t in catalog.of(MappingTable):
            self.mapping_table(t)
        for f in catalog.of(SaltFunction):
            self.salt_function(f)
        for p in catalog.of(RowFilterPolicy):
            dims = p.dimensions or ((p.dimension,) if p.dimension else ())
            depends = [self.address[grants[d].name] for d in dims if d in grants]
            self.row_access_policy(p, depends)
        for m in catalog.of(MaskPolicy):
            salt = salts.get(m.mask)
            self.masking_policy(m, [self.address[salt.name]] if salt else [])
        for tag in catalog.of(Tag):
            self.tag(tag)
        for a in catalog.of(RowFilterAttachment):
            self.row_access_attachment(a)
        for a in catalog.of(MaskAttachment):
            self.mask_attachment(a)
        by_tag: dict[tuple[str, str], list[TagAssignment]] = defaultdict(list)
        for ta in catalog.of(TagAssignment):
            by_tag[(ta.tag, ta.value)].append(ta)
        for (tag_name, value), assignments in sorted(by_tag.items()):
            self.tag_association(tag_name, value, assignments)
        for c in (
            *catalog.of(ProjectionPolicy),
            *catalog.of(AggregationPolicy),
            *catalog.of(JoinPolicy),
        ):
            self.constraint_policy(c)
        for a in (
            *catalog.of(ProjectionAttachment),
            *catalog.of(AggregationAttachment),
            *catalog.of(JoinAttachment),
        ):
            self.constraint_attachment(a)

    def _statement(self, text: str) -> str:
        """One statement of accord's SQL for ``snowflake_execute``: without its ``;``."""
        return text.strip().removesuffix(";")

    def constraint_policy(self, p: ProjectionPolicy | AggregationPolicy | JoinPolicy) -> None:
        target = SnowflakeTarget()
        rendered = target.render_object(p)
        assert rendered is not None
        self.address[p.name] = self.doc.add(
            "snowflake_execute",
            _address_name(p.name),
            {
                "execute": self._statement(rendered[1]),
                "revert": self._statement(SnowflakeMigrationSQL(target).drop(p)),
            },
        )

    def constraint_attachment(
        self, a: ProjectionAttachment | AggregationAttachment | JoinAttachment
    ) -> None:
        target = SnowflakeTarget()
        rendered = target.render_object(a)
        assert rendered is not None
        column = getattr(a, "column", None)
        what = type(a).__name__.removesuffix("Attachment").lower()
        self.doc.add(
            "snowflake_execute",
            _address_name(a.table, *((column,) if column else ()), f"{what}_policy"),
            {
                "execute": self._statement(rendered[1]),
                "revert": self._statement(SnowflakeMigrationSQL(target).detach(a)),
                "depends_on": [self.address[a.policy]],
            },
        )

    def mapping_table(self, t: MappingTable) -> None:
        name = _address_name(t.name)
        self.address[t.name] = self.doc.add(
            "snowflake_table",
            name,
            {
                **_sf_located(t.name),
                "comment": f"accord: grants of entitlement dimension {t.dimension}",
                "column": [
                    {"name": c.upper(), "type": "VARCHAR", "nullable": False}
                    for c in (t.key_column, t.principal_column)
                ]
                + (
                    [{"name": t.expiry_column.upper(), "type": "DATE", "nullable": True}]
                    if t.expiry_column
                    else []
                ),
            },
        )
        table = sql.table(t.name, SNOWFLAKE.name)
        names = (t.key_column, t.principal_column, *([t.expiry_column] if t.expiry_column else []))
        columns = [sql.ident(c, SNOWFLAKE.name) for c in names]
        if t.rows:
            values = (
                exp.values(row_values(t))
                if t.expiry_column
                else exp.values([tuple(r) for r in t.rows])
            )
            insert = exp.insert(values, table, columns=columns)
            insert.set("overwrite", True)
            execute = self.sql(insert)
        else:  # no grants: the table holds no rows (the resource exists whatever the rows)
            execute = self.sql(exp.delete(table.copy()))
        # A grants change replaces this resource (the provider forces a new one when `execute`
        # changes: pkg/resources/execute.go). With create_before_destroy the new INSERT
        # OVERWRITE runs first and replaces every row in one transactional statement ("INSERT
        # statements with OVERWRITE can be processed within the scope of the current
        # transaction", sql-reference/sql/insert); the old resource's revert then runs, so it
        # must not touch the rows: it is a read. Policies never see an empty or partial table.
        self.doc.add(
            "snowflake_execute",
            name + "__rows",
            {
                "execute": execute,
                "revert": REVERT_ROWS,
                "lifecycle": {"create_before_destroy": True},
                "depends_on": [self.address[t.name]],
            },
        )

    def salt_function(self, f: SaltFunction) -> None:
        var = f"snowflake_salt_{f.mask}"
        self.doc.variables[var] = {
            "type": "string",
            "sensitive": True,
            "nullable": False,
            "description": (
                f"Salt of mask {f.mask} on Snowflake (the model's reference: {f.salt_ref}). Set "
                f"TF_VAR_{var}. Sensitive: kept out of plan output, but Terraform state holds "
                "it in clear."
            ),
            "validation": [
                {
                    "condition": Ref(
                        f'${{length(var.{var}) > 0 && !strcontains(var.{var}, "$$")}}'
                    ),
                    "error_message": "A salt must be non-empty and must not contain $$.",
                }
            ],
        }
        # the definition is a SQL string literal: backslashes and quotes escaped for Snowflake
        literal = Ref(f'\'${{replace(replace(var.{var}, "\\\\", "\\\\\\\\"), "\'", "\\\\\'")}}\'')
        self.address[f.name] = self.doc.add(
            "snowflake_function_sql",
            _address_name(f.name),
            {
                **_sf_located(f.name),
                "is_secure": "true",
                "return_type": "VARCHAR",
                "function_definition": literal,
                "comment": f"accord: salt of mask {f.mask}",
            },
        )

    def _arguments(self, params: tuple[Any, ...]) -> list[dict[str, str]]:
        return [{"name": p.name.upper(), "type": p.type} for p in params]

    def row_access_policy(self, p: RowFilterPolicy, depends: list[str]) -> None:
        body: dict[str, Any] = {
            **_sf_located(p.name),
            "argument": self._arguments(p.params),
            "body": self.sql(p.body),
            "comment": p.comment,
        }
        if depends:
            body["depends_on"] = depends
        self.address[p.name] = self.doc.add(
            "snowflake_row_access_policy", _address_name(p.name), body
        )

    def masking_policy(self, m: MaskPolicy, depends: list[str]) -> None:
        body: dict[str, Any] = {
            **_sf_located(m.name),
            "argument": self._arguments(m.params),
            "return_data_type": m.returns,
            "body": self.sql(m.body),
            "comment": m.comment,
        }
        if depends:
            body["depends_on"] = depends
        self.address[m.name] = self.doc.add("snowflake_masking_policy", _address_name(m.name), body)

    def tag(self, t: Tag) -> None:
        self.address[t.name] = self.doc.add(
            "snowflake_tag",
            _address_name(t.name),
            {
                **_sf_located(t.name),
                "allowed_values": list(t.allowed_values),
                "masking_policies": [
                    Ref(f"${{{self.address[p]}.fully_qualified_name}}") for p in t.masking_policies
                ],
                "comment": t.comment,
            },
        )

    def row_access_attachment(self, a: RowFilterAttachment) -> None:
        table, policy = (
            sql.name_sql(a.table, SNOWFLAKE.name),
            sql.name_sql(a.policy, SNOWFLAKE.name),
        )
        cols = ", ".join(sql.name_sql(c, SNOWFLAKE.name) for c in a.columns)
        self.doc.add(
            "snowflake_execute",
            _address_name(a.table, "row_access_policy"),
            {
                "execute": f"ALTER TABLE {table} ADD ROW ACCESS POLICY {policy} ON ({cols})",
                "revert": f"ALTER TABLE {table} DROP ROW ACCESS POLICY {policy}",
                "depends_on": [self.address[a.policy]],
            },
        )

    def mask_attachment(self, a: MaskAttachment) -> None:
        self.doc.add(
            "snowflake_table_column_masking_policy_application",
            _address_name(a.table, a.column),
            {
                "table": _sf_fqn(a.table),
                "column": a.column.upper(),
                "masking_policy": Ref(f"${{{self.address[a.policy]}.fully_qualified_name}}"),
            },
        )

    def tag_association(self, tag: str, value: str, assignments: list[TagAssignment]) -> None:
        # the provider identifies an association by (tag, value, object type): one resource
        # carries every column tagged with the same value
        objects = sorted(
            _sf_fqn(a.table) + (f'."{a.column.upper()}"' if a.column else "") for a in assignments
        )
        self.doc.add(
            "snowflake_tag_association",
            _address_name(tag, value),
            {
                "object_identifiers": objects,
                "object_type": "COLUMN" if assignments[0].column else "TABLE",
                "tag_id": Ref(f"${{{self.address[tag]}.fully_qualified_name}}"),
                "tag_value": value,
            },
        )
