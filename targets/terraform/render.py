"""Terraform JSON (``OUT/terraform/main.tf.json``) from the lowered catalog objects.

Like the SQL renderers, this reads the :class:`~targets.objects.Catalog` of each platform and
never the YAML. Providers are pinned exactly. What each object becomes (argument names as the
pinned providers document them; tests/test_terraform.py keeps the table):

Snowflake (``snowflakedb/snowflake``)
    mapping table: ``snowflake_table`` and, for its rows, a ``snowflake_execute`` running one
    ``INSERT OVERWRITE`` (``create_before_destroy``, revert a read: a grants change never
    empties the table); salt function: ``snowflake_function_sql``
    (secure) whose definition comes from a sensitive variable; row access policy:
    ``snowflake_row_access_policy``; masking policy: ``snowflake_masking_policy``; row access
    attachment: ``snowflake_execute`` (the provider has no attachment resource for tables and
    documents this workaround); mask attachment:
    ``snowflake_table_column_masking_policy_application``; tag-based masking: ``snowflake_tag``
    with ``masking_policies`` and one ``snowflake_tag_association`` per tag and value.

Databricks (``databricks/databricks``)
    ABAC: ``databricks_tag_policy`` (governed tags), ``databricks_entity_tag_assignment``,
    ``databricks_policy_info``. The provider has no resource that runs SQL, none for
    table-level row filters and masks, and its function resource is not documented
    consistently: mapping tables, functions and table-level attachments stay in the SQL target,
    and the output ``accord_apply_as_sql`` names the files to apply before ``terraform apply``.

Salts arrive through variables marked ``sensitive`` with no default (set ``TF_VAR_<name>``).
Terraform keeps them out of plan output, but its state records the function definition in
clear: keep the state encrypted and readable only by whoever may read the salt.

Changing which policy a table or column carries replaces the attachment resource: Terraform
runs the old one's revert, then the new one's statement, and the object is unprotected in
between. Such changes are migrations: plan them with ``accord plan``, which swaps in one
statement.

Literal ``${`` and ``%{`` in any string (SQL bodies, comments) are written ``$${`` and ``%%{``
so Terraform never interpolates them; only :class:`Ref` values are expressions. Output is
``json.dumps(..., indent=2, sort_keys=True)``: the same catalogs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from typing import Any

from sqlglot import exp

from accord.targets import get_target, sql
from accord.targets.base import catalog_names, row_values
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

MAIN = "terraform/main.tf.json"
REQUIRED_VERSION = ">= 1.5.0"  # strcontains() in the salt variables' validation
#: the newest tags of snowflakedb/terraform-provider-snowflake (v2.20.0) and
#: databricks/terraform-provider-databricks (v1.128.0) at the time of writing; every argument
#: accord writes was checked against docs/resources/<resource>.md at those tags (and the tests
#: list them: tests/test_terraform.py ALLOWED). v2.20.0's pkg/resources/tag.go still unsets a
#: tag's removed masking policies before setting new ones: targets/terraform/guard.py refuses that.
PROVIDERS = {
    "snowflake": {"source": "snowflakedb/snowflake", "version": "2.20.0"},
    "databricks": {"source": "databricks/databricks", "version": "1.128.0"},
}
#: preview resources of the Snowflake provider, enabled in its provider block when used
PREVIEW = {
    "snowflake_table": "snowflake_table_resource",
    "snowflake_function_sql": "snowflake_function_sql_resource",
    "snowflake_table_column_masking_policy_application": (
        "snowflake_table_column_masking_policy_application_resource"
    ),
}
OUTSIDE_TERRAFORM = (
    "The databricks/databricks provider has no resource that runs SQL, none for table-level "
    "row filters and column masks, and no consistently documented function resource. Apply "
    "these files of the compiled output (accord's SQL target) before terraform apply; "
    "Terraform manages the rest."
)


class Ref(str):
    """A Terraform expression (``${...}``), written as is; every other string is escaped."""


def escape(text: str) -> str:
    """A literal string as Terraform reads it: ``${`` and ``%{`` do not start a template."""
    return text.replace("${", "$${").replace("%{", "%%{")


def _escaped(node: Any) -> Any:
    if isinstance(node, Ref):
        return str(node)
    if isinstance(node, str):
        return escape(node)
    if isinstance(node, dict):
        return {k: _escaped(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_escaped(v) for v in node]
    return node


#: the revert of a mapping table's rows: a harmless read, since it runs after the replacing
#: resource has written the new rows (create_before_destroy), and dropping the table removes
#: the rows anyway
REVERT_ROWS = "SELECT 1"


def _address_name(*parts: str) -> str:
    """A resource name from object names: lower case, ``.`` as ``__``, others as ``_``."""
    text = "__".join(p.replace(".", "__") for p in parts).lower()
    return re.sub(r"[^a-z0-9_]", "_", text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


class Document:
    """The JSON document being built: resources by type and name, variables, outputs."""

    def __init__(self) -> None:
        self.resources: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.variables: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, dict[str, Any]] = {}

    def add(self, rtype: str, name: str, body: dict[str, Any]) -> str:
        """Add a resource; returns its address (``type.name``). Object names that differ only
        where a resource name cannot (``COL$1`` and ``COL_1``, case) would give two resources
        one name: the later one (objects arrive sorted, so always the same one) gets a digest
        of its body appended, and a name too long for comfort is shortened the same way."""
        if len(name) > 120:
            name = f"{name[:100]}_{_digest(name)}"
        if name in self.resources[rtype]:
            name = f"{name}_{_digest(json.dumps(body, sort_keys=True, default=str))}"
            if name in self.resources[rtype]:
                raise ValueError(f"two {rtype} resources would both be named {name!r}")
        self.resources[rtype][name] = body
        return f"{rtype}.{name}"

    def to_json(self) -> str:
        used = {t.split("_", 1)[0] for t in self.resources}
        doc: dict[str, Any] = {
            "terraform": {
                "required_version": REQUIRED_VERSION,
                "required_providers": {p: PROVIDERS[p] for p in sorted(used)},
            },
            "resource": {t: dict(r) for t, r in self.resources.items()},
        }
        preview = sorted(PREVIEW[t] for t in self.resources if t in PREVIEW)
        if preview:
            doc["provider"] = {"snowflake": {"preview_features_enabled": preview}}
        if self.variables:
            doc["variable"] = self.variables
        if self.outputs:
            doc["output"] = self.outputs
        return json.dumps(_escaped(doc), indent=2, sort_keys=True) + "\n"


def apply_as_sql(files: dict[str, str]) -> list[str]:
    """The SQL files the output ``accord_apply_as_sql`` of the rendered ``files`` names."""
    doc = json.loads(files[MAIN])
    value = doc.get("output", {}).get("accord_apply_as_sql", {}).get("value", {})
    return [f for names in value.values() for f in names]


def render_files(catalogs: dict[str, Catalog]) -> dict[str, str]:
    """``{"terraform/main.tf.json": text}`` for every platform's catalog objects.

    Everything written comes from ``catalogs`` (no file path can leak into the output)."""
    doc = Document()
    for platform, catalog in catalogs.items():
        sql.prime_names(catalog_names(catalog), platform)
    if "snowflake" in catalogs:
        SnowflakeResources(doc).add_all(catalogs["snowflake"])
    if "databricks" in catalogs:
        DatabricksResources(doc).add_all(catalogs["databricks"])
    return {MAIN: doc.to_json()}


# --------------------------------------------------------------------------------------------
# Snowflake


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
        self.address: dict[str, str] = {}  # object name -> resource address

    def sql(self, node: exp.Expression) -> str:
        return sql.render(node, "snowflake")

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
        table = sql.table(t.name, "snowflake")
        names = (t.key_column, t.principal_column, *([t.expiry_column] if t.expiry_column else []))
        columns = [sql.ident(c, "snowflake") for c in names]
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
        table, policy = sql.name_sql(a.table, "snowflake"), sql.name_sql(a.policy, "snowflake")
        cols = ", ".join(sql.name_sql(c, "snowflake") for c in a.columns)
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


# --------------------------------------------------------------------------------------------
# Databricks


class DatabricksResources:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.tag_policies: dict[str, str] = {}  # tag key -> resource address

    def add_all(self, catalog: Catalog) -> None:
        outside: list[CatalogObject] = []
        for obj in catalog:
            if isinstance(obj, Tag):
                self.tag_policy(obj)
            elif isinstance(obj, TagAssignment):
                self.tag_assignment(obj)
            elif isinstance(obj, AbacPolicy):
                self.policy(obj)
            else:
                outside.append(obj)
        if outside:
            target = get_target("databricks")
            files = set()
            for obj in outside:
                rendered = target.rendered_file(obj)
                assert rendered is not None
                files.add(f"databricks/{rendered}")
            self.doc.outputs["accord_apply_as_sql"] = {
                "description": OUTSIDE_TERRAFORM,
                "value": {"databricks": sorted(files)},
            }

    def tag_policy(self, t: Tag) -> None:
        self.tag_policies[t.name] = self.doc.add(
            "databricks_tag_policy",
            _address_name(t.name),
            {
                "tag_key": t.name,
                "description": t.comment,
                "values": [{"name": v} for v in t.allowed_values],
            },
        )

    def tag_assignment(self, a: TagAssignment) -> None:
        entity = a.table if a.column is None else f"{a.table}.{a.column}"
        self.doc.add(
            "databricks_entity_tag_assignment",
            _address_name(entity, a.tag),
            {
                "entity_type": "tables" if a.column is None else "columns",
                "entity_name": entity.lower(),
                "tag_key": a.tag,
                "tag_value": a.value,
                "depends_on": [self.tag_policies[a.tag]],
            },
        )

    def policy(self, p: AbacPolicy) -> None:
        body: dict[str, Any] = {
            "name": p.name,
            "on_securable_type": p.securable_type,
            "on_securable_fullname": p.securable.lower(),
            "for_securable_type": "TABLE",
            "to_principals": list(p.to),
            "comment": p.comment,
            "match_columns": [{"condition": c, "alias": a} for c, a in p.match_columns],
            "depends_on": sorted(self.tag_policies.values()),
        }
        if p.except_:
            body["except_principals"] = list(p.except_)
        if p.when:
            body["when_condition"] = p.when
        using = [{"alias": u} for u in p.using]
        if p.kind == "ROW FILTER":
            body["policy_type"] = "POLICY_TYPE_ROW_FILTER"
            body["row_filter"] = {
                "function_name": p.function,
                **({"using": using} if using else {}),
            }
        else:
            body["policy_type"] = "POLICY_TYPE_COLUMN_MASK"
            body["column_mask"] = {
                "function_name": p.function,
                "on_column": p.on_column,
                **({"using": using} if using else {}),
            }
        self.doc.add("databricks_policy_info", _address_name(p.securable, p.name), body)
