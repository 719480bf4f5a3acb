"""The Terraform JSON document (``OUT/terraform/main.tf.json``) being built, and its escaping.

Each platform's resources (``targets/<platform>/terraform.py``) add themselves to one
:class:`Document`, naming the provider they need; :mod:`targets.terraform.render` builds it
from the catalogs. Literal ``${`` and ``%{`` in any string (SQL bodies, comments) are written
``$${`` and ``%%{`` so Terraform never interpolates them; only :class:`Ref` values are
expressions. Output is ``json.dumps(..., indent=2, sort_keys=True)``: the same catalogs give
the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from typing import Any

MAIN = "terraform/main.tf.json"
REQUIRED_VERSION = ">= 1.5.0"  # strcontains() in the salt variables' validation


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


def address_name(*parts: str) -> str:
    """A resource name from object names: lower case, ``.`` as ``__``, others as ``_``."""
    text = "__".join(p.replace(".", "__") for p in parts).lower()
    return re.sub(r"[^a-z0-9_]", "_", text)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


class Document:
    """The JSON document being built: resources by type and name, variables, outputs."""

    def __init__(self) -> None:
        self.resources: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
        self.variables: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, dict[str, Any]] = {}
        #: provider name (its resources' type prefix) -> its source and version
        self.providers: dict[str, dict[str, str]] = {}
        #: resource type -> the provider's preview feature that enables it
        self.preview: dict[str, str] = {}

    def use(
        self, provider: str, spec: dict[str, str], preview: dict[str, str] | None = None
    ) -> None:
        """Name the provider (``{"source", "version"}``) of resources ``provider_*``, and the
        preview features its resources need (resource type -> feature): written only for the
        providers whose resources were added."""
        self.providers[provider] = spec
        self.preview.update(preview or {})

    def add(self, rtype: str, name: str, body: dict[str, Any]) -> str:
        """Add a resource; returns its address (``type.name``). Object names that differ only
        where a resource name cannot (``COL$1`` and ``COL_1``, case) would give two resources
        one name: the later one (objects arrive sorted, so always the same one) gets a digest
        of its body appended, and a name too long for comfort is shortened the same way."""
        if len(name) > 120:
            name = f"{name[:100]}_{digest(name)}"
        if name in self.resources[rtype]:
            name = f"{name}_{digest(json.dumps(body, sort_keys=True, default=str))}"
            if name in self.resources[rtype]:
                raise ValueError(f"two {rtype} resources would both be named {name!r}")
        self.resources[rtype][name] = body
        return f"{rtype}.{name}"

    def to_json(self) -> str:
        used = {t.split("_", 1)[0] for t in self.resources}
        doc: dict[str, Any] = {
            "terraform": {
                "required_version": REQUIRED_VERSION,
                "required_providers": {p: self.providers[p] for p in sorted(used)},
            },
            "resource": {t: dict(r) for t, r in self.resources.items()},
        }
        preview: dict[str, list[str]] = {}
        for t in self.resources:
            if t in self.preview:
                preview.setdefault(t.split("_", 1)[0], []).append(self.preview[t])
        if preview:
            doc["provider"] = {
                p: {"preview_features_enabled": sorted(f)} for p, f in sorted(preview.items())
            }
        if self.variables:
            doc["variable"] = self.variables
        if self.outputs:
            doc["output"] = self.outputs
        return json.dumps(_escaped(doc), indent=2, sort_keys=True) + "\n"
