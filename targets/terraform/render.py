"""Terraform JSON (``OUT/terraform/main.tf.json``) from the lowered catalog objects.

Like the SQL renderers, this reads the :class:`~targets.objects.Catalog` of each platform and
never the YAML. Providers are pinned exactly. What each object becomes (argument names as the
pinned providers document them; tests/test_terraform.py keeps the table):

Each platform's resources live in its folder (``targets/snowflake/terraform.py``,
``targets/databricks/terraform.py``: what each object becomes, with the provider's pinned
version); the document and its escaping are :mod:`targets.terraform.document`.

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

import json

from accord.compiler.core.platforms import PLATFORMS as PLATFORM_ORDER
from accord.targets import sql
from accord.targets.base import catalog_names
from accord.targets.objects import Catalog
from accord.targets.platform import platform
from accord.targets.terraform.document import MAIN, Document


def apply_as_sql(files: dict[str, str]) -> list[str]:
    """The SQL files the output ``accord_apply_as_sql`` of the rendered ``files`` names."""
    doc = json.loads(files[MAIN])
    value = doc.get("output", {}).get("accord_apply_as_sql", {}).get("value", {})
    return [f for names in value.values() for f in names]


def render_files(catalogs: dict[str, Catalog]) -> dict[str, str]:
    """``{"terraform/main.tf.json": text}`` for every platform's catalog objects, each added by
    its platform's resources (``targets/<platform>/terraform.py``), in accord's order.

    Everything written comes from ``catalogs`` (no file path can leak into the output)."""
    doc = Document()
    for name, catalog in catalogs.items():
        sql.prime_names(catalog_names(catalog), name)
    for name in PLATFORM_ORDER:
        if name in catalogs:
            platform(name).terraform()(doc).add_all(catalogs[name])
    return {MAIN: doc.to_json()}
