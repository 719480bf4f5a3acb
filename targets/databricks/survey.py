"""Databricks' reader, asked what a scope holds without a model (``accord import``).

The ordinary read (:class:`~targets.databricks.inspect.DatabricksReader`) is told by the model
where to look. A survey finds the places, in each catalog of the scope (the catalogs named, or
every catalog the reading principal may use: ``catalogs.list``, which lists "only catalogs owned
by the caller (or for which the caller has the USE_CATALOG privilege)", databricks-sdk
service/catalog.py): the row filters, column masks and column tags of its tables
(``information_schema.row_filters`` / ``column_masks`` / ``column_tags``, one statement each, as
the reader reads them), the ABAC policies on the catalog, its schemas and the tables that carry
one (``policies.list_policies``: row filters and column masks as what they place, GRANT and
DENY policies as read, :attr:`~DatabricksSurvey.surveyed_access`), and the definition of every
function those apply (``functions.get``: parameters, return type, body, comment). The
metastore's own policies (Beta) are listed by the ordinary read that follows, as drift lists
them. A function of no parameters is
never asked for: a filter or a mask takes the column it reads, and a salt function's body is
its secret.

What the principal cannot see is said, never passed: information_schema lists only the tables
the caller may see, so each catalog and schema of the scope is checked as the reader checks
the model's (``check_catalog``, ``check_schema``), and a survey of every catalog by a principal
that is not a metastore admin records the catalogs it may not use as unseen.
"""

from __future__ import annotations

from typing import Any

from accord.compiler.connect.executor import require_databricks_apis
from accord.targets.databricks.inspect import (
    DatabricksReader,
    _columns,
    _first,
    _function_of,
    _table_of,
)
from accord.targets.identity import parse_body, unparsed
from accord.targets.inspect import AccessPolicy, LiveCatalog, norm_type
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    CatalogObject,
    MaskAttachment,
    MaskPolicy,
    Param,
    RowFilterAttachment,
    RowFilterPolicy,
    TagAssignment,
)


class DatabricksSurvey(DatabricksReader):
    """The Databricks reader with one more question: what does a scope hold?"""

    #: the principal is a metastore admin: it sees every schema whole
    admin = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the ABAC GRANT and DENY policies on the scope's securables (no catalog object: the
        #: model has none; ``accord import`` keeps each unmanaged)
        self.surveyed_access: list[AccessPolicy] = []

    def survey(self, scopes: list[str]) -> list[CatalogObject]:
        """Every filter, mask and ABAC policy on a table of ``scopes`` (``catalog`` or
        ``catalog.schema``; none: every catalog the principal may use), the functions they
        apply, and every column tag there (as tag assignments)."""
        client = self.run.client
        wanted = [s.lower() for s in scopes]

        def inside(name: str) -> bool:
            low = name.lower()
            return not wanted or any(low == s or low.startswith(s + ".") for s in wanted)

        catalogs = sorted({s.split(".")[0] for s in wanted}) or self.every_catalog()
        self.check_scope(catalogs, wanted)
        out: list[CatalogObject] = []
        tables: set[str] = set()
        for catalog in catalogs:
            self.progress(f"databricks: filters, masks and tags in {catalog}")
            for r in self.info_schema(catalog, "row_filters") or []:
                table = _table_of(r)
                if inside(table):
                    columns = _columns(_first(r, "filter_col_usage", "target_columns"))
                    out.append(RowFilterAttachment(table, _function_of(r, "filter"), columns, ""))
                    tables.add(table)
            for r in self.info_schema(catalog, "column_masks") or []:
                table = _table_of(r)
                if inside(table):
                    using = _columns(_first(r, "mask_col_usage", "using_columns"))
                    column = str(r.get("column_name") or "")
                    out.append(MaskAttachment(table, column, _function_of(r, "mask"), "", using))
                    tables.add(table)
            for r in self.info_schema(catalog, "column_tags") or []:
                table = _table_of(r)
                if inside(table):
                    column = str(r.get("column_name") or "")
                    tag, value = str(r.get("tag_name") or ""), str(r.get("tag_value") or "")
                    out.append(TagAssignment(table, column, tag, value, ""))
                    self.column_tags.setdefault((table, column.lower()), {})[tag] = value
                    tables.add(table)
        if self.admin:
            self.whole |= {t.rsplit(".", 1)[0] for t in tables}
        securables = {("CATALOG", c) for c in catalogs}
        securables |= {("SCHEMA", s) for s in wanted if s.count(".") == 1}
        securables |= {("SCHEMA", t.rsplit(".", 1)[0]) for t in tables}
        securables |= {("TABLE", t) for t in self.tables_with_policies(sorted(tables))}
        ordered = sorted(securables)
        found = self.each(
            lambda ks: self.attempt(
                f"ABAC policies on {ks[0].lower()} {ks[1]}",
                lambda: list(client.policies.list_policies(ks[0].lower(), ks[1])),
                f"the import of the ABAC policies on {ks[0].lower()} {ks[1]}",
            ),
            ordered,
        )
        live = LiveCatalog(Catalog(self.platform, "", "abac"))
        for (kind, name), attempt in zip(ordered, found, strict=True):
            for p in self.settle(attempt) or []:
                policy = self.policy(p, kind, name, live)
                if policy is not None:
                    out.append(policy)
        self.surveyed_access = list(live.access_policies)
        applied = sorted(
            {o.policy for o in out if isinstance(o, RowFilterAttachment | MaskAttachment)}
            | {o.function for o in out if isinstance(o, AbacPolicy)}
        )
        infos = self.each(
            lambda n: self.attempt(
                f"function {n}", lambda: client.functions.get(n), f"the import of {n}"
            ),
            applied,
        )
        for name, attempt in zip(applied, infos, strict=True):
            fn = self.settle(attempt)
            if fn is not None:
                defined = self.definition(name, fn)
                if defined is not None:
                    out.append(defined)
        self.coverage.saw(
            "functions surveyed", sum(isinstance(o, RowFilterPolicy | MaskPolicy) for o in out)
        )
        return sorted(set(out), key=repr)

    def definition(self, name: str, fn: Any) -> CatalogObject | None:
        params = tuple(
            Param(p.name, norm_type(p.type_text))
            for p in sorted(
                (fn.input_params.parameters if fn.input_params else None) or [],
                key=lambda p: p.position,
            )
        )
        if not params:
            return None  # no column to read: not a filter or a mask (a salt's body is a secret)
        returns = norm_type(fn.full_data_type or (fn.data_type.value if fn.data_type else ""))
        body = parse_body(fn.routine_definition or "", self.platform)
        if body is None:
            self.cannot_see(name, unparsed(fn.routine_definition or ""), f"the import of {name}")
            return None
        comment = fn.comment or ""
        full = fn.full_name or name
        if returns == "BOOLEAN":
            return RowFilterPolicy(full, params, body, None, comment)
        return MaskPolicy(full, params, returns, body, "", "", comment)

    def every_catalog(self) -> list[str]:
        """The catalogs the principal may use (all of them for a metastore admin)."""
        client = self.run.client
        found = self.sdk(
            "the catalogs of the metastore",
            lambda: list(client.catalogs.list(max_results=0)),
            "the import of every catalog",
        )
        return sorted({str(c.name or "").lower() for c in found or [] if c.name})

    def check_scope(self, catalogs: list[str], wanted: list[str]) -> None:
        """Whether the principal sees the scope whole: a metastore admin does; else each
        catalog and schema of the scope is checked as the reader checks the model's, and a
        survey of every catalog says it lists the catalogs the principal may use only."""
        client = self.run.client
        require_databricks_apis()
        me = self.sdk("the reading principal", lambda: client.current_user.me())
        name = (getattr(me, "user_name", None) or "") if me is not None else ""
        self.coverage.reader = name
        summary = self.sdk("the metastore", lambda: client.metastores.summary())
        if summary is not None and summary.owner and summary.owner == name:
            self.coverage.privileges.append(f"metastore admin (owner of metastore {summary.name})")
            self.admin = True
            return
        if not wanted:
            self.cannot_see(
                "the catalogs the reading principal may not use",
                "catalogs.list lists only the catalogs it owns or holds USE CATALOG on",
                "the import of every catalog",
            )
        for catalog in catalogs:
            self.check_catalog(name, catalog)
        for schema in sorted({s for s in wanted if s.count(".") == 1}):
            self.check_schema(name, schema)
