"""Databricks' Terraform resources (``databricks/databricks``): see :mod:`targets.terraform.render`.

ABAC: ``databricks_tag_policy`` (governed tags), ``databricks_entity_tag_assignment``,
``databricks_policy_info``. The provider has no resource that runs SQL, none for table-level row
filters and masks, and its function resource is not documented consistently: mapping tables,
functions and table-level attachments stay in the SQL target, and the output
``accord_apply_as_sql`` names the files to apply before ``terraform apply``.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.platforms import DATABRICKS
from accord.targets.objects import AbacPolicy, Catalog, CatalogObject, Tag, TagAssignment
from accord.targets.platform import platform
from accord.targets.terraform.document import Document
from accord.targets.terraform.document import address_name as _address_name

#: the newest tag of databricks/terraform-provider-databricks (v1.128.0) at the time of
#: writing; every argument accord writes was checked against docs/resources/<resource>.md at
#: that tag (and the tests list them: tests/test_terraform.py ALLOWED)
PROVIDER = {"source": "databricks/databricks", "version": "1.128.0"}
OUTSIDE_TERRAFORM = (
    "The databricks/databricks provider has no resource that runs SQL, none for table-level "
    "row filters and column masks, and no consistently documented function resource. Apply "
    "these files of the compiled output (accord's SQL target) before terraform apply; "
    "Terraform manages the rest."
)


class DatabricksResources:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        doc.use("databricks", PROVIDER)
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
            target = platform(DATABRICKS.name).target()
            files = set()
            for obj in outside:
                rendered = target.rendered_file(obj)
                assert rendered is not None
                files.add(f"{DATABRICKS.name}/{rendered}")
            self.doc.outputs["accord_apply_as_sql"] = {
                "description": OUTSIDE_TERRAFORM,
                "value": {DATABRICKS.name: sorted(files)},
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
