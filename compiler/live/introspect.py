"""Read what is deployed on a platform into the catalog types the compiler lowers to.

One reader per platform; nothing downstream knows whether a :class:`~targets.objects.Catalog`
came from YAML or from a platform. The model says *where* to look (the governance schema, the
governed tables and masked columns, the mapping tables); everything found there is read,
including what accord did not put there (a console-added policy, a mask someone unset).

Snowflake (docs.snowflake.com/en/sql-reference): ``SHOW ROW ACCESS POLICIES IN SCHEMA`` /
``SHOW MASKING POLICIES IN SCHEMA`` (columns ``name``, ``database_name``, ``schema_name``,
``owner``, ``comment``), ``DESCRIBE ... POLICY`` (``name``, ``signature``, ``return_type``,
``body``), ``SHOW USER FUNCTIONS IN SCHEMA`` (``name``, ``arguments``, ``is_secure``),
``SHOW GRANTS ON FUNCTION`` (``privilege``, ``granted_to``, ``grantee_name``), and per governed
table ``TABLE(<db>.INFORMATION_SCHEMA.POLICY_REFERENCES(REF_ENTITY_NAME => ..., REF_ENTITY_DOMAIN
=> 'table'))`` (``POLICY_DB``, ``POLICY_SCHEMA``, ``POLICY_NAME``, ``POLICY_KIND``,
``REF_COLUMN_NAME``, ``REF_ARG_COLUMN_NAMES``, ``TAG_NAME``): the information-schema function
answers at once, where ``ACCOUNT_USAGE`` lags by hours.

Databricks (the SDK's dataclasses, databricks/sdk/service/catalog.py): ``functions.list``
(``FunctionInfo.input_params``, ``full_data_type``, ``routine_definition``, ``comment``,
``owner``), ``grants.get("function", ...)`` (``privilege_assignments``), ``tables.get``
(``TableInfo.row_filter``: ``function_name``, ``input_column_names``; ``ColumnInfo.mask``:
``function_name``, ``using_column_names``), ``policies.list_policies`` (``PolicyInfo``) on
the securables ``information_schema.abac_policy_definitions`` says carry a policy,
``entity_tag_assignments.list``; mapping rows through statement execution.

A salt function's body is its secret: it is never kept, printed or compared. Its presence,
signature, secure flag (Snowflake) and callers are.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.errors import UsageError, one_line
from accord.compiler.core.progress import counted
from accord.compiler.live.coverage import Coverage
from accord.targets.identity import fingerprint, identity
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    Param,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

#: fields of catalog objects that are accord's bookkeeping, never deployed: a live object takes
#: them from the model's object of the same identity (they cannot be read back)
MODEL_ONLY: dict[type, tuple[str, ...]] = {
    MappingTable: ("dimension",),
    SaltFunction: ("mask", "salt_ref"),
    RowFilterPolicy: ("dimension", "note", "dimensions"),
    MaskPolicy: ("mask", "strategy", "note"),
    RowFilterAttachment: ("dataset",),
    MaskAttachment: ("dataset",),
    TagAssignment: ("dataset",),
    AbacPolicy: ("mask", "dimension", "datasets"),
    Tag: (),
}


@dataclass(frozen=True)
class SaltGrant:
    """Someone other than the owner may call a salt function."""

    function: str
    privilege: str
    grantee: str
    #: where the grant is made when not on the function itself (Databricks): ``schema
    #: c.s`` / ``catalog c`` (an inherited grant, read with grants.get_effective), or ``policy
    #: P on schema c.s`` (an ABAC GRANT policy)
    via: str = ""
    #: the grantee's kind as the platform says it (Snowflake ``granted_to``: ROLE,
    #: DATABASE_ROLE, SHARE, APPLICATION_ROLE): a revoke is spelled for it
    kind: str = "ROLE"
    #: who else holds the grant through the role hierarchy, in words ("granted to PUBLIC:
    #: every user of the account"), when the platform says so
    reach: str = ""

    def __repr__(self) -> str:  # as before the optional fields existed when they are unset
        extra = "".join(
            f", {name}={value!r}"
            for name, value, unset in (
                ("via", self.via, ""),
                ("kind", self.kind, "ROLE"),
                ("reach", self.reach, ""),
            )
            if value != unset
        )
        return (
            f"SaltGrant(function={self.function!r}, privilege={self.privilege!r}, "
            f"grantee={self.grantee!r}{extra})"
        )

    def to_json(self) -> dict[str, str]:
        out = {"function": self.function, "privilege": self.privilege, "grantee": self.grantee}
        if self.via:
            out["via"] = self.via
        if self.kind != "ROLE" or self.reach:
            out["kind"] = self.kind
        if self.reach:
            out["reach"] = self.reach
        return out


@dataclass
class LiveCatalog:
    """What a platform holds, as catalog objects, plus what only a live platform has."""

    catalog: Catalog
    #: salt function -> its owner (the role or principal that owns it)
    salt_owners: dict[str, str] = field(default_factory=dict)
    #: who else may call each salt function
    salt_grants: list[SaltGrant] = field(default_factory=list)
    #: Snowflake salt functions that are not SECURE (their body, the salt, is readable)
    insecure_salts: list[str] = field(default_factory=list)
    #: what could not be read, in words (never a false all-clear): ``what: why`` of each of
    #: ``coverage.unseen``
    unreadable: list[str] = field(default_factory=list)
    #: what was read, by which reader, and what it could not see
    coverage: Coverage | None = None
    #: governed column (``TABLE.COLUMN``, upper case) -> the tag mask its direct mask overrides
    #: (Snowflake), or the ABAC column-mask policy that masks it too (Databricks: neither wins)
    #: (a direct masking policy takes precedence over a tag's: Snowflake)
    overrides: dict[str, str] = field(default_factory=dict)
    #: policy references whose POLICY_STATUS says the policy is not in effect, in words
    not_in_effect: list[str] = field(default_factory=list)
    #: tags a governed column inherits (from its table) or gets by propagation, in words: not
    #: the column's own, so never taken for an assignment the model makes
    inherited_tags: list[str] = field(default_factory=list)
    #: answers about objects that were not asked about, in words: ignored, never planned
    #: against or taken for the object that was asked about
    ignored: list[str] = field(default_factory=list)
    #: the live role hierarchy into the modelled principals (compiler.live.hierarchy); None
    #: when it was not read (a model without ``inherits``)
    hierarchy: list[Any] | None = None
    #: the modelled roles or groups whose inheritors were read
    hierarchy_read: list[str] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        """A digest of everything read: a plan records it, apply compares it."""
        parts = sorted(
            (type(o).__name__, getattr(o, "name", ""), fingerprint(o)) for o in self.catalog
        )
        extra = (sorted(self.salt_grants, key=repr), sorted(self.insecure_salts))
        return hashlib.sha256(repr((parts, repr(extra))).encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.catalog.platform,
            "governance_schema": self.catalog.governance_schema,
            "fingerprint": self.fingerprint,
            "objects": [
                object_json(o, self.catalog.platform) for o in sort_objects(self.catalog.objects)
            ],
            "salt_grants": [g.to_json() for g in self.salt_grants],
            "insecure_salts": self.insecure_salts,
            "unreadable": self.unreadable,
            "ignored": self.ignored,
            "overrides": dict(sorted(self.overrides.items())),
            "not_in_effect": sorted(self.not_in_effect),
            "inherited_tags": sorted(self.inherited_tags),
            "coverage": (self.coverage or Coverage(self.catalog.platform)).to_json(),
            **self._hierarchy_json(),
        }

    def _hierarchy_json(self) -> dict[str, Any]:
        """``hierarchy``: the edges read (only when the model has ``inherits``)."""
        if self.hierarchy is None:
            return {}
        return {"hierarchy": [e.to_json() for e in self.hierarchy]}


_ORDER = (MappingTable, SaltFunction, RowFilterPolicy, MaskPolicy, Tag, RowFilterAttachment)
_ORDER += (MaskAttachment, TagAssignment, AbacPolicy)


#: the coverage's name of each kind of object read
_KIND_NAMES = {
    MappingTable: "mapping tables",
    SaltFunction: "salt functions",
    RowFilterPolicy: "row filter policies",
    MaskPolicy: "masking policies",
    Tag: "tags",
    RowFilterAttachment: "row filter attachments",
    MaskAttachment: "mask attachments",
    TagAssignment: "tag assignments",
    AbacPolicy: "abac policies",
}


def _kinds(objects: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in objects:
        kind = _KIND_NAMES.get(type(o), type(o).__name__)
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def sort_objects(objects: Any) -> list[CatalogObject]:
    return sorted(objects, key=lambda o: (_ORDER.index(type(o)), identity(o)))


def object_json(obj: CatalogObject, platform: str) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": type(obj).__name__}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, exp.Expression):
            value = value.sql(dialect=platform)
        elif isinstance(value, tuple):
            value = [dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for v in value]
        out[f.name] = value
    return out


def parse_body(text: str, platform: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(text, read=platform)
    except (ParseError, TokenError, RecursionError):  # sqlglot recurses once per level
        return None


def unparsed(text: str) -> str:
    """Why a live body :func:`parse_body` could not read is not read: too deep, or not SQL."""
    depth = deepest = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    if deepest > _DEEP_BODY:
        return (
            f"its body nests {deepest} parentheses deep, deeper than accord's SQL parser "
            "follows; it is not compared"
        )
    return "its body does not parse"


#: parentheses deeper than this make a body that does not parse one too deep to parse
_DEEP_BODY = 200


def same_body(a: exp.Expression, b: exp.Expression, platform: str) -> bool:
    """Equal as trees: both rendered and parsed back in the platform's dialect."""

    def norm(e: exp.Expression) -> str:
        again = parse_body(e.sql(dialect=platform), platform)
        return (again or e).sql(dialect=platform, normalize=True)

    return norm(a) == norm(b)


def same_condition(a: str, b: str, platform: str) -> bool:
    left, right = parse_body(a, platform), parse_body(b, platform)
    if left is None or right is None:
        return a == b
    return same_body(left, right, platform)


def annotate(live: CatalogObject, model: CatalogObject | None, platform: str) -> CatalogObject:
    """``live`` with the model's bookkeeping fields, and the model's body expression when the
    two bodies are equal as trees (so equal objects compare equal downstream)."""
    if model is None or type(model) is not type(live):
        return live
    changes = {name: getattr(model, name) for name in MODEL_ONLY[type(live)]}
    if isinstance(live, AbacPolicy) and isinstance(model, AbacPolicy):
        # conditions are SQL: equal as trees, whatever the spelling the platform returns
        if len(live.match_columns) == len(model.match_columns) and all(
            a[1] == b[1] and same_condition(a[0], b[0], platform)
            for a, b in zip(live.match_columns, model.match_columns, strict=True)
        ):
            changes["match_columns"] = model.match_columns
        if live.when and model.when and same_condition(live.when, model.when, platform):
            changes["when"] = model.when
    if isinstance(live, Tag) and isinstance(model, Tag):
        if set(live.allowed_values) == set(model.allowed_values):
            changes["allowed_values"] = model.allowed_values
        if set(live.masking_policies) == set(model.masking_policies):
            changes["masking_policies"] = model.masking_policies
    body = getattr(live, "body", None)
    if isinstance(body, exp.Expression) and same_body(body, model.body, platform):  # type: ignore[union-attr]
        changes["body"] = model.body  # type: ignore[union-attr]
    return dataclasses.replace(live, **changes)  # type: ignore[type-var]


def _norm_type(text: str) -> str:
    """VARCHAR(16777216) -> VARCHAR; string -> STRING."""
    t = " ".join(text.split()).upper()
    if t.startswith("VARCHAR(") or t.startswith("TEXT"):
        return "VARCHAR"
    return t


def _params(signature: str) -> tuple[Param, ...]:
    """``(A VARCHAR, B NUMBER(38,0))`` as returned by DESCRIBE ... POLICY."""
    inner = signature.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    out, depth, current = [], 0, ""
    for ch in inner:  # commas inside NUMBER(38,0) do not split
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current)
    params = []
    for item in out:
        name, _, typ = item.strip().partition(" ")
        params.append(Param(name.strip('"'), _norm_type(typ)))
    return tuple(params)


class Reader:
    """Shared plumbing: the model's catalog says where to look."""

    def __init__(
        self,
        executor: Any,
        expected: Catalog,
        progress: Callable[[str], None],
        jobs: int = 1,
    ) -> None:
        self.run = executor
        self.jobs = max(1, jobs)
        self.expected = expected
        self.platform = expected.platform
        self.progress = progress
        self.unreadable: list[str] = []
        self.ignored: list[str] = []
        self.coverage = Coverage(self.platform)
        self.by_id = {identity(o): o for o in expected}
        #: lower-case mapping tables the reader check found the reader lacks SELECT on
        self.no_select: set[str] = set()

    def same(self, a: str, b: str) -> bool:
        """Whether two names name one object, as the platform stores unquoted names."""
        fold = str.upper if self.platform == "snowflake" else str.lower
        return fold(a) == fold(b)

    def about(self, answered: str, asked: str, what: str) -> bool:
        """Whether an answer is about what was asked (``answered`` names the object, schema
        or table the platform's row is about); an answer about anything else is ignored and
        said so, never taken for the asked object nor planned against (a SHOW answer naming
        another schema's policy would otherwise be retired as unmanaged)."""
        if self.same(answered, asked):
            return True
        self.ignored.append(
            f"{what}: the platform answered about {answered or 'an unnamed object'}, not "
            f"{asked}; ignored"
        )
        return False

    def refused(self, err: Exception, privilege: str = "", on: str = "") -> str:
        """What a failed read says: a denial names the reading role and the grant it lacks
        (``privilege`` on ``on`` when the read knows what it needs), never the deploying
        role's; any other failure as the platform said it."""
        from accord.compiler.connect.executor import as_reader

        return as_reader(err, self.coverage.reader, privilege, on)

    def cannot_see(self, what: str, why: object, unproven: str = "") -> None:
        """Record what the reader could not see: drift reports it (ACC707), never passes it."""
        if isinstance(why, Exception):
            why = self.refused(why)
        why = str(why)
        self.unreadable.append(f"{what}: {why}")
        self.coverage.cannot_see(what, why, unproven)

    def each(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """``[fn(i) for i in items]`` with at most ``self.jobs`` running at once, results in
        the order of ``items`` whatever order they finish in (output identical to ``--jobs
        1``). ``fn`` must only return what it read: record findings (``cannot_see``,
        ``ignored``) from the results, in order, not from ``fn``."""
        fn = counted(self.progress, fn, items)  # a count for the progress bar
        if self.jobs == 1 or len(items) < 2:
            return [fn(i) for i in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(self.jobs, len(items))) as pool:
            return list(pool.map(fn, items))

    def check_reader(self) -> None:
        """Establish what the reading role can see before trusting a read: record the
        privileges that matter in ``self.coverage.privileges`` (and ``self.coverage.reader``),
        and each missing one with :meth:`cannot_see` (what, why, what is not proven). Each
        platform's reader implements it; ``read`` calls it first, and ``accord introspect
        --check-reader`` calls it alone."""
        raise NotImplementedError(f"{self.platform}: the reader check")

    def model(self, obj: CatalogObject) -> CatalogObject | None:
        return self.by_id.get(identity(obj))

    def keep(self, obj: CatalogObject) -> CatalogObject:
        return annotate(obj, self.model(obj), self.platform)

    def governed_tables(self) -> list[str]:
        tables = {
            o.table
            for o in self.expected
            if isinstance(o, RowFilterAttachment | MaskAttachment | TagAssignment)
        }
        tables |= {
            o.securable
            for o in self.expected
            if isinstance(o, AbacPolicy) and o.securable_type == "TABLE"
        }
        return sorted(tables)

    def query(self, sql: str, what: str) -> list[dict[str, Any]] | None:
        try:
            return self.run.query(sql)
        except ExecutionError as err:
            self.cannot_see(what, err)
            return None

    def start(self) -> tuple[str, list[CatalogObject], LiveCatalog]:
        """The governance schema, the objects read so far (the mapping tables) and the result."""
        gov = self.expected.governance_schema
        live = LiveCatalog(Catalog(self.platform, gov, self.expected.style))
        self.progress(f"{self.platform}: mapping tables in {gov}")
        objects: list[CatalogObject] = []
        for table in self.expected.of(MappingTable):
            found = self.mapping_rows(table)
            if found is not None:
                objects.append(self.keep(found))
        return gov, objects, live

    def finish(self, live: LiveCatalog, objects: list[CatalogObject]) -> LiveCatalog:
        unique: dict[tuple[str, ...], CatalogObject] = {}
        for o in objects:
            unique.setdefault(identity(o), o)
        live.catalog = dataclasses.replace(
            live.catalog, objects=tuple(sort_objects(unique.values()))
        )
        for kind, n in _kinds(unique.values()).items():
            self.coverage.saw(kind, n)
        live.unreadable = self.unreadable
        live.ignored = self.ignored
        live.coverage = self.coverage
        return live

    def mapping_rows(self, table: MappingTable) -> MappingTable | None:
        """The rows of a mapping table: (value, identity) pairs, and with the model's expiry
        column (a dimension with a grant ``until`` a date) (value, identity, YYYY-MM-DD or
        None) triples. A live table without that column is read without it: the catalog
        object then has no ``expiry_column``, which drift reports and the planner adds. None
        when the table is not there; the model's own table when the reader may not read it
        (unseen, said: never reported missing or changed, ACC707 says it is not proven, and a
        plan refuses the base)."""
        columns = [table.key_column, table.principal_column]
        if table.expiry_column is not None:
            read = self._rows(table, [*columns, table.expiry_column], quiet=True)
            if isinstance(read, list):
                return dataclasses.replace(table, rows=live_rows(read, dated=True))
            if isinstance(read, MappingTable):
                return read
            if read == "missing":
                return None
            if isinstance(read, ExecutionError) and (
                table.expiry_column.lower() not in str(read).lower()
            ):
                # refused for another reason than the column: said, never taken for "no column"
                return self._unseen(table, read)
        read = self._rows(table, columns)
        if isinstance(read, MappingTable):
            return read
        if not isinstance(read, list):
            return None
        return dataclasses.replace(table, rows=live_rows(read, dated=False), expiry_column=None)

    def _unseen(self, table: MappingTable, err: ExecutionError) -> MappingTable:
        self.cannot_see(
            f"mapping table {table.name}",
            self.refused(err, "SELECT", table.name),
            f"drift of {table.name}",
        )
        return table

    def _rows(
        self, table: MappingTable, columns: list[str], quiet: bool = False
    ) -> list[dict[str, Any]] | str | ExecutionError | MappingTable:
        """The rows of ``columns``; "missing" when the table does not exist; the model's table
        when the reader may not read it (said, see :meth:`mapping_rows`); with ``quiet``, any
        other error unsaid (the caller decides whether it names the expiry column, the one a
        retry then reads without)."""
        from accord.targets import sql as tsql

        names = ", ".join(tsql.name_sql(c, self.platform) for c in columns)
        sql = f"SELECT {names} FROM {tsql.name_sql(table.name, self.platform)} ORDER BY 1, 2"
        try:
            return self.run.query(sql)
        except ExecutionError as err:
            if table.name.lower() in self.no_select:
                # the reader check said it lacks SELECT (ACC707 already): a refusal, and a
                # "does not exist or not authorized" (Snowflake 002003), is that, not absence
                return table
            if (
                "does not exist" in str(err)
                or "NOT_FOUND" in str(err)
                or "cannot be found" in str(err)
            ):
                return "missing"  # the reader may read it (the check proved it): not there
            if quiet:
                return err
            return self._unseen(table, err)


def live_day(value: Any) -> str | None:
    """A DATE cell as YYYY-MM-DD (None stays None: a standing grant). The Snowflake connector
    answers ``datetime.date``, the Databricks statement API an ISO string; a timestamp keeps
    its day. Anything else is not a date: ValueError (an answer accord cannot read)."""
    import datetime as dt

    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    return dt.date.fromisoformat(text[:10]).isoformat()


def live_rows(rows: list[dict[str, Any]], dated: bool) -> tuple[tuple[Any, ...], ...]:
    """Mapping rows as the lowered catalog holds them, in its order (value, identity)."""
    out: set[tuple[Any, ...]] = set()
    for r in rows:
        cells = list(r.values())
        pair = (str(cells[0]), str(cells[1]))
        out.add((*pair, live_day(cells[2])) if dated else pair)
    return tuple(sorted(out, key=lambda t: tuple("" if c is None else c for c in t)))


# --------------------------------------------------------------------------------------------
# Snowflake


def _sf_name(name: str) -> str:
    from accord.targets import sql as tsql

    return tsql.name_sql(name, "snowflake")


def _sf_literal(value: str) -> str:
    from accord.targets import sql as tsql

    return tsql.literal(value).sql(dialect="snowflake")


#: the global privileges a complete Snowflake read needs, and what each one lets the reading
#: role see (docs.snowflake.com/en/sql-reference/functions/policy_references, usage notes;
#: sql-reference/sql/desc-masking-policy; sql-reference/sql/show-privileges: MANAGE GRANTS
#: "implicitly allows its holder to see every object in the account")
SF_GLOBAL = {
    "APPLY MASKING POLICY": (
        "every masking policy's associations and bodies",
        "SHOW MASKING POLICIES, DESCRIBE MASKING POLICY and POLICY_REFERENCES answer only "
        "for the policies it holds APPLY or OWNERSHIP on",
        "drift of the masks (direct and tag-based) of the governed tables",
    ),
    "APPLY ROW ACCESS POLICY": (
        "every row access policy's associations and bodies",
        "SHOW ROW ACCESS POLICIES, DESCRIBE ROW ACCESS POLICY and POLICY_REFERENCES answer "
        "only for the policies it holds APPLY or OWNERSHIP on",
        "drift of the row filters of the governed tables",
    ),
    "APPLY TAG": (
        "every tag of the governance schema",
        "SHOW TAGS lists only the tags it holds a privilege on",
        "drift of the tags and their masking policies",
    ),
}
#: a grantee kind of SHOW GRANTS (``granted_to``) -> how GRANT and REVOKE spell it
#: (sql-reference/sql/revoke-privilege, revoke-database-role, revoke-privilege-share)
SF_GRANTEE_KINDS = {
    "ROLE": "ROLE",
    "DATABASE_ROLE": "DATABASE ROLE",
    "SHARE": "SHARE",
    "APPLICATION_ROLE": "APPLICATION ROLE",
}


def sf_revoke(function: str, privilege: str, grantee: str, kind: str = "ROLE") -> str:
    """REVOKE of a grant on a Snowflake salt function, the grantee spelled for its kind
    (``FROM ROLE r``, ``FROM DATABASE ROLE db.r``, ``FROM SHARE s``, ``FROM APPLICATION ROLE
    app.r``: a role's revoke does not reach a database role's grant), names through sqlglot."""
    from accord.targets import sql as tsql

    spelled = SF_GRANTEE_KINDS.get(kind.upper(), "ROLE")
    if spelled in ("DATABASE ROLE", "APPLICATION ROLE") and "." in grantee:
        who = tsql.name_sql(grantee, "snowflake")
    else:
        who = tsql.render(tsql.ident(grantee, "snowflake"), "snowflake")
    return f"REVOKE {privilege} ON FUNCTION {_sf_name(function)}() FROM {spelled} {who}"


#: POLICY_STATUS of a policy reference that is in effect (a direct mask on a column that a tag
#: also masks reads MULTIPLE_...: the direct one is, user-guide/tag-based-masking-policies)
_SF_STATUS_OK = ("", "ACTIVE", "MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN")


class SnowflakeReader(Reader):
    def information_schema(self, name: str, call: str, what: str) -> list[dict[str, Any]] | None:
        """SELECT * FROM TABLE(<name's database>.INFORMATION_SCHEMA.<call>)."""
        db = _sf_name(name.split(".")[0])
        return self.query(f"SELECT * FROM TABLE({db}.INFORMATION_SCHEMA.{call})", what)

    # ------------------------------------------------------------------ the reading role

    def _grants_to(self, roles: list[tuple[str, str]]) -> list[list[dict[str, Any]] | None]:
        def show(item: tuple[str, str]) -> Any:
            kind, name = item
            try:
                return self.run.query(f"SHOW GRANTS TO {kind} {_sf_name(name)}")
            except ExecutionError as err:
                return err

        out: list[list[dict[str, Any]] | None] = []
        for (kind, name), rows in zip(roles, self.each(show, roles), strict=True):
            if isinstance(rows, ExecutionError):
                self.cannot_see(
                    f"the privileges of {kind.lower()} {name}",
                    rows,
                    "what the reading role can see",
                )
                out.append(None)
            else:
                out.append(rows)
        return out

    def reader_grants(self, role: str) -> set[tuple[str, str, str]]:
        """(privilege, granted_on, name) of ``role`` and every role and database role granted
        to it, and PUBLIC's (``SHOW GRANTS TO ROLE`` / ``TO DATABASE ROLE``, level by level:
        the role hierarchy)."""
        held: set[tuple[str, str, str]] = set()
        seen: set[tuple[str, str]] = set()
        level = [("ROLE", role.upper()), ("ROLE", "PUBLIC")]
        while level:
            level = [r for r in dict.fromkeys(level) if r not in seen]
            seen |= set(level)
            found = self._grants_to(level)
            level = []
            for rows in found:
                for g in rows or []:
                    priv = str(g.get("privilege") or "").upper()
                    on = str(g.get("granted_on") or "").upper().replace(" ", "_")
                    name = str(g.get("name") or "").upper()
                    held.add((priv, on, "" if on == "ACCOUNT" else name.replace('"', "")))
                    if priv == "USAGE" and on in ("ROLE", "DATABASE_ROLE"):
                        level.append(("ROLE" if on == "ROLE" else "DATABASE ROLE", name))
        return held

    def check_reader(self) -> None:
        """What the reading role can see: CURRENT_ROLE(), its grants and its hierarchy's, and
        for each privilege a complete read needs and the role lacks, what is not proven."""
        rows = self.query("SELECT CURRENT_ROLE() AS ROLE", "the reading role (CURRENT_ROLE())")
        role = str(next(iter(rows[0].values())) or "") if rows else ""
        if not role:
            if rows is not None:
                self.cannot_see(
                    "the reading role",
                    "CURRENT_ROLE() names no role",
                    "what the reading role can see",
                )
            return
        self.coverage.reader = role
        held: dict[tuple[str, str], set[str]] = {}
        for p, o, n in self.reader_grants(role):
            held.setdefault((o, n), set()).add(p)
        privileges: set[str] = set()

        def has(privilege: str, on: str, name: str = "", any_privilege: bool = False) -> bool:
            key = name.upper()
            on_it = held.get((on, key), set())
            found = on_it if any_privilege else on_it & {privilege, "OWNERSHIP"}
            for p in found:
                privileges.add(f"{p} on {on.replace('_', ' ')}{' ' + key if key else ''}")
            return bool(found)

        e = self.expected
        needs_global = {
            "APPLY MASKING POLICY": bool(e.of(MaskPolicy) or e.of(MaskAttachment)),
            "APPLY ROW ACCESS POLICY": bool(e.of(RowFilterPolicy) or e.of(RowFilterAttachment)),
            "APPLY TAG": bool(e.of(Tag)),
        }
        for privilege, needed in needs_global.items():
            if needed and not has(privilege, "ACCOUNT"):
                what, why, unproven = SF_GLOBAL[privilege]
                self.cannot_see(what, f"it lacks the global {privilege} privilege: {why}", unproven)
        sees_every_object = has("MANAGE GRANTS", "ACCOUNT")

        def absent(on: str, name: str) -> bool:
            """With MANAGE GRANTS, SHOW lists every object: one it does not list does not
            exist (not deployed yet), which is no gap in what the role sees. Without it a
            missing object and a hidden one answer alike (error 002003)."""
            if not sees_every_object:
                return False
            *parent, leaf = name.split(".")
            where = {"DATABASE": "ACCOUNT", "SCHEMA": "DATABASE", "TABLE": "SCHEMA"}[on]
            scope = f" IN {where} {_sf_name('.'.join(parent))}" if parent else ""
            show = {"DATABASE": "DATABASES", "SCHEMA": "SCHEMAS", "TABLE": "TABLES"}[on]
            try:
                rows = self.run.query(f"SHOW {show} LIKE {_sf_literal(leaf)}{scope}")
            except ExecutionError:
                return bool(parent) and absent(
                    ("DATABASE", "SCHEMA")[len(parent) - 1], ".".join(parent)
                )
            return not any(self.same(str(r.get("name") or ""), leaf) for r in rows)

        gov = e.governance_schema
        schemas = {gov.upper()} | {t.upper().rsplit(".", 1)[0] for t in self.governed_tables()}
        schemas |= {m.name.upper().rsplit(".", 1)[0] for m in e.of(MappingTable)}
        for schema in sorted(schemas):
            db = schema.split(".")[0]
            for on, name in (("DATABASE", db), ("SCHEMA", schema)):
                if not has("USAGE", on, name, any_privilege=True) and not absent(on, name):
                    self.cannot_see(
                        f"{on.lower()} {name}",
                        f"it holds no privilege on {on.lower()} {name}, so nothing in it resolves "
                        "(error 002003: does not exist or not authorized)",
                        f"drift of what {schema} holds",
                    )
                    break
        for m in e.of(MappingTable):
            if not has("SELECT", "TABLE", m.name) and not absent("TABLE", m.name):
                self.no_select.add(m.name.lower())
                self.cannot_see(
                    f"the rows of mapping table {m.name}",
                    f"it lacks SELECT on it: GRANT SELECT ON TABLE {m.name} TO ROLE {role}",
                    f"drift of {m.name}",
                )
        if e.of(Tag):
            for table in self.governed_tables():
                if not has("SELECT", "TABLE", table, any_privilege=True):
                    self.cannot_see(
                        f"the tags on {table}",
                        "it holds no privilege on the table: TAG_REFERENCES_ALL_COLUMNS answers "
                        "only for a role with access to it",
                        f"drift of {table}'s tags",
                    )
        if e.of(SaltFunction) and not has("MANAGE GRANTS", "ACCOUNT"):
            for salt in e.of(SaltFunction):
                self.cannot_see(
                    f"salt function {salt.name} and its grants",
                    "SHOW USER FUNCTIONS and SHOW GRANTS ON FUNCTION answer only for functions "
                    "it holds a privilege on (USAGE would let it select the salt); the global "
                    "MANAGE GRANTS privilege lets it see every object",
                    f"that {salt.name} is deployed, SECURE and callable by its owner only",
                )
        self.coverage.privileges = sorted(privileges)

    # ------------------------------------------------------------------ the read

    def _show(self, show: str, where: str) -> list[dict[str, Any]]:
        return self.query(f"SHOW {show} IN {where}", f"SHOW {show} IN {where}") or []

    def read(self) -> LiveCatalog:
        self.check_reader()
        gov, objects, live = self.start()
        self.progress(f"snowflake: policies in {gov}")
        kinds = (("ROW ACCESS", "ROW ACCESS POLICIES"), ("MASKING", "MASKING POLICIES"))
        defined: list[tuple[str, str, dict[str, Any]]] = []
        for kind, show in kinds:
            for row in self._show(show, f"SCHEMA {_sf_name(gov)}"):
                schema = f"{row.get('database_name', '')}.{row.get('schema_name', '')}"
                if self.about(schema, gov, f"SHOW {show} IN SCHEMA {gov}"):
                    defined.append((kind, f"{schema}.{row.get('name', '')}", row))
        described = self.each(
            lambda d: self.query(
                f"DESCRIBE {d[0]} POLICY {_sf_name(d[1])}", f"DESCRIBE {d[0]} POLICY {d[1]}"
            ),
            defined,
        )
        for (kind, name, row), desc in zip(defined, described, strict=True):
            if not desc:
                continue
            d = desc[0]
            body = parse_body(str(d["body"]), "snowflake")
            if body is None:
                self.cannot_see(name, unparsed(str(d["body"])), f"drift of {name}")
                continue
            comment = row.get("comment") or ""
            if kind == "ROW ACCESS":
                obj: CatalogObject = RowFilterPolicy(
                    name, _params(d["signature"]), body, None, comment
                )
            else:
                obj = MaskPolicy(
                    name,
                    _params(d["signature"]),
                    _norm_type(d["return_type"]),
                    body,
                    "",
                    "",
                    comment,
                )
            objects.append(self.keep(obj))
        self.salts(gov, objects, live)
        tag_policies = self.references(objects, live)
        if self.expected.of(Tag):
            objects += self.tags(gov, tag_policies, live)
        return self.finish(live, objects)

    def salts(self, gov: str, objects: list[CatalogObject], live: LiveCatalog) -> None:
        """Salt functions (SHOW USER FUNCTIONS IN SCHEMA, once) and who may call each (SHOW
        GRANTS ON FUNCTION, one a salt); each grantee with its kind (``granted_to``)."""
        self.progress(f"snowflake: salt functions in {gov}")
        wanted = {s.name.upper(): s for s in self.expected.of(SaltFunction)}
        found = []
        for row in self._show("USER FUNCTIONS", f"SCHEMA {_sf_name(gov)}"):
            schema = f"{row.get('catalog_name', '')}.{row.get('schema_name', '')}"
            name = f"{schema}.{row.get('name', '')}"
            if not self.about(schema, gov, f"SHOW USER FUNCTIONS IN SCHEMA {gov}"):
                continue
            if name.upper() not in wanted:
                continue
            objects.append(self.keep(SaltFunction(name, "", "")))
            if str(row.get("is_secure", "")).upper() != "Y":
                live.insecure_salts.append(name)
            found.append(name)
        grants = self.each(
            lambda n: self.query(f"SHOW GRANTS ON FUNCTION {_sf_name(n)}()", f"grants on {n}"),
            found,
        )
        exposed: list[tuple[str, str, str, str]] = []
        for name, rows in zip(found, grants, strict=True):
            for g in rows or []:
                if g["privilege"] == "OWNERSHIP":
                    live.salt_owners[name] = g["grantee_name"]
                elif g["privilege"] in ("USAGE", "ALL"):
                    kind = str(g.get("granted_to") or "ROLE").upper().replace(" ", "_")
                    exposed.append((name, g["privilege"], g["grantee_name"], kind))
        roles = sorted({who for _, _, who, kind in exposed if kind == "ROLE"})
        holders = dict(zip(roles, self.each(self._public_holds, roles), strict=True))
        for name, privilege, who, kind in exposed:
            reach = "granted to PUBLIC: every user of the account" if holders.get(who) else ""
            live.salt_grants.append(SaltGrant(name, privilege, who, kind=kind, reach=reach))

    def _public_holds(self, role: str) -> bool:
        """Whether PUBLIC holds ``role`` (``SHOW GRANTS OF ROLE``: the roles and users it is
        granted to), so that every user may use what it may."""
        if role.upper() == "PUBLIC":
            return True
        try:
            rows = self.run.query(f"SHOW GRANTS OF ROLE {_sf_name(role)}")
        except ExecutionError:
            return False
        return any(str(r.get("grantee_name") or "").upper() == "PUBLIC" for r in rows)

    def references(self, objects: list[CatalogObject], live: LiveCatalog) -> dict[str, list[str]]:
        """Every association of every policy in the account on a governed table: SHOW ... IN
        ACCOUNT once a kind, then POLICY_REFERENCES(POLICY_NAME => ...) once a policy (round
        trips grow with policies, not with tables). Returns tag -> its masking policies (the
        rows whose REF_ENTITY_DOMAIN is TAG)."""
        self.progress("snowflake: policy references")
        governed = {t.upper(): t for t in self.governed_tables()}
        policies = []
        for _, show in (("ROW ACCESS", "ROW ACCESS POLICIES"), ("MASKING", "MASKING POLICIES")):
            for row in self._show(show, "ACCOUNT"):
                policies.append(
                    f"{row.get('database_name', '')}.{row.get('schema_name', '')}."
                    f"{row.get('name', '')}"
                )
        policies = sorted(set(policies))
        answers = self.each(
            lambda p: self.information_schema(
                p, f"POLICY_REFERENCES(POLICY_NAME => {_sf_literal(p)})", f"references of {p}"
            ),
            policies,
        )
        tag_policies: dict[str, list[str]] = {}
        by_tag: dict[tuple[str, str], str] = {}
        direct: list[tuple[str, str, str, str]] = []
        for policy, rows in zip(policies, answers, strict=True):
            for r in rows or []:
                named = ".".join(
                    str(r.get(k) or "") for k in ("policy_db", "policy_schema", "policy_name")
                )
                if not self.about(named, policy, f"references of {policy}"):
                    continue
                entity = ".".join(
                    str(r.get(k) or "")
                    for k in ("ref_database_name", "ref_schema_name", "ref_entity_name")
                )
                if str(r.get("ref_entity_domain") or "TABLE").upper() == "TAG":
                    tag_policies.setdefault(entity.upper(), []).append(policy)
                    continue
                table = governed.get(entity.upper())
                if table is None:
                    continue  # a table the model does not govern
                args = (
                    json.loads(r["ref_arg_column_names"]) if r.get("ref_arg_column_names") else []
                )
                status = str(r.get("policy_status") or "").upper()
                column = str(r.get("ref_column_name") or "")
                if r["policy_kind"] == "ROW_ACCESS_POLICY":
                    objects.append(self.keep(RowFilterAttachment(table, policy, tuple(args), "")))
                elif r["policy_kind"] == "MASKING_POLICY" and r.get("tag_name"):
                    tag = ".".join(
                        str(r.get(k) or "") for k in ("tag_database", "tag_schema", "tag_name")
                    )
                    by_tag[(table.upper(), column.upper())] = f"tag {tag}'s masking policy {policy}"
                    continue
                elif r["policy_kind"] == "MASKING_POLICY":
                    objects.append(
                        self.keep(MaskAttachment(table, column, policy, "", tuple(args)))
                    )
                    direct.append((table, column, policy, status))
                if status not in _SF_STATUS_OK:
                    where = f"{table}.{column}" if column else table
                    live.not_in_effect.append(f"{policy} on {where}: POLICY_STATUS {status}")
        for table, column, _, _ in direct:
            over = by_tag.get((table.upper(), column.upper()))
            if over is not None:
                live.overrides[f"{table}.{column}".upper()] = over
        return tag_policies

    def tags(
        self, gov: str, tag_policies: dict[str, list[str]], live: LiveCatalog
    ) -> list[CatalogObject]:
        """Tags of the governance schema (SHOW TAGS), the masking policies set on them (the
        TAG rows of the policies' references), and their assignments on the governed tables'
        columns (TAG_REFERENCES_ALL_COLUMNS, one a table, bounded by ``--jobs``): a column's
        own tag (LEVEL COLUMN, set by hand) is an assignment; one it inherits from its table or
        gets by propagation is reported as inherited, never taken for its own."""
        self.progress(f"snowflake: tags in {gov}")
        found: dict[str, Tag] = {}
        for row in self.query(f"SHOW TAGS IN SCHEMA {_sf_name(gov)}", "SHOW TAGS") or []:
            schema = f"{row.get('database_name', '')}.{row.get('schema_name', '')}"
            if not self.about(schema, gov, f"SHOW TAGS IN SCHEMA {gov}"):
                continue
            name = f"{schema}.{row.get('name', '')}"
            allowed = tuple(json.loads(row["allowed_values"])) if row.get("allowed_values") else ()
            policies = tuple(sorted(tag_policies.get(name.upper(), [])))
            found[name.upper()] = Tag(name, allowed, policies, row.get("comment") or "")
        out: list[CatalogObject] = [self.keep(t) for t in found.values()]
        tables = self.governed_tables()
        answers = self.each(
            lambda t: self.information_schema(
                t, f"TAG_REFERENCES_ALL_COLUMNS({_sf_literal(t)}, 'table')", f"tags on {t}"
            ),
            tables,
        )
        for table, rows in zip(tables, answers, strict=True):
            for r in rows or []:
                entity = ".".join(
                    str(r.get(k) or "") for k in ("object_database", "object_schema", "object_name")
                )
                if not self.about(entity, table, f"tags on {table}"):
                    continue
                tag = f"{r['tag_database']}.{r['tag_schema']}.{r['tag_name']}"
                if tag.upper() not in found:  # tags of the governance schema only
                    continue
                level = str(r.get("level") or "COLUMN").upper()
                method = str(r.get("apply_method") or "MANUAL").upper()
                if level == "COLUMN" and method == "MANUAL":
                    out.append(
                        self.keep(TagAssignment(table, r["column_name"], tag, r["tag_value"], ""))
                    )
                else:
                    live.inherited_tags.append(
                        f"{table}.{r['column_name']}: tag {tag} = {r['tag_value']!r} is "
                        f"{method.lower()} (LEVEL {level}), not set on the column"
                    )
        return out


# --------------------------------------------------------------------------------------------
# Databricks


class DatabricksReader(Reader):
    """Unity Catalog through the SDK, every call bounded by the statement timeout.

    What the platform answers a caller that is not a metastore admin (fact numbers of issue
    20; databricks-sdk service/catalog.py docstrings): ``functions.list`` lists only the
    functions the caller owns or may EXECUTE (11), so a function missing from it is unseen,
    not undeployed, unless the reader sees the whole schema; ``grants.get`` "does not include
    inherited permissions" (9), so who may call a salt is read with ``grants.get_effective``,
    paged (``max_results=0``, ``next_page_token``: the unpaginated form "will be deprecated");
    ``PolicyInfo.policy_type`` is also POLICY_TYPE_GRANT / POLICY_TYPE_DENY (12), which are
    neither filters nor masks; a GRANT policy that gives EXECUTE on the governance schema
    exposes the salts. Row filters, column masks and column tags are read per catalog from
    ``information_schema.row_filters`` / ``column_masks`` / ``column_tags`` (one statement
    each; the documented column names, or the ones live workspaces have been seen to answer),
    which list the tables the caller may see only: the reader check proves it may see them.
    """

    #: privileges that let the reader see every object of a schema (or catalog)
    SEES_ALL = ("MANAGE", "ALL_PRIVILEGES")
    #: privileges that let a principal call a function
    CALLS = ("EXECUTE", "ALL_PRIVILEGES")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: schemas the reader was proven to see whole (MANAGE, ownership, metastore admin)
        self.whole: set[str] = set()
        self.checked = False
        #: the salts the reading principal itself may call (check_reader)
        self.calls: list[SaltGrant] = []
        #: (lower-case table, lower-case column) -> {tag: value}: information_schema.column_tags
        self.column_tags: dict[tuple[str, str], dict[str, str]] = {}

    def call(self, what: str, fn: Callable[[], Any]) -> Any:
        bounded_call = getattr(self.run, "call", None)
        return bounded_call(what, fn) if bounded_call is not None else fn()

    def sdk(self, what: str, call: Callable[[], Any], unproven: str = "") -> Any:
        """``call()``'s answer; None when there is none (a 404), or when it could not be read
        (recorded: :meth:`cannot_see`)."""
        return self.settle(self.attempt(what, call, unproven))

    def settle(self, attempt: tuple[Any, tuple[str, str, str] | None]) -> Any:
        """An :meth:`attempt`'s answer, its failure recorded (in the caller's order)."""
        value, failed = attempt
        if failed is not None:
            self.cannot_see(*failed)
        return value

    def attempt(
        self, what: str, call: Callable[[], Any], unproven: str = ""
    ) -> tuple[Any, tuple[str, str, str] | None]:
        """``(answer, None)``, or ``(None, (what, why, unproven))`` when it could not be read:
        what :meth:`Reader.each` may run concurrently (nothing recorded here)."""
        from databricks.sdk.errors import DatabricksError, NotFound

        from accord.compiler.connect.denials import classify
        from accord.compiler.connect.executor import DeadlineError

        try:
            return self.call(what, call), None
        except NotFound:
            return None, None
        except DeadlineError as err:
            return None, (what, str(err).removeprefix(f"{what}: "), unproven)
        except DatabricksError as err:  # before OSError: DatabricksError is an IOError
            denial = classify("databricks", err)
            if denial is not None:
                denial = denial.for_reader(self.coverage.reader)
            why = str(denial or one_line(err)[:300])
            if " Config: " in why:  # the SDK appends its configuration to what the server said
                why = why.split(" Config: ")[0].rstrip(". ") + (")" if denial else "")
            return None, (what, why, unproven)
        except (OSError, TimeoutError) as err:
            host = getattr(getattr(self.run.client, "config", None), "host", "the workspace")
            raise UsageError(f"cannot reach Databricks at {host}: {one_line(err)[:300]}") from None

    def effective(
        self, kind: str, name: str, principal: str | None = None, unproven: str = ""
    ) -> list[tuple[str, str, str]] | None:
        return self.settle(self.effective_attempt(kind, name, principal, unproven))  # type: ignore[no-any-return]

    def effective_attempt(
        self, kind: str, name: str, principal: str | None = None, unproven: str = ""
    ) -> tuple[Any, tuple[str, str, str] | None]:
        """(principal, privilege, where it is granted: "" on the securable itself, else
        ``schema c.s`` / ``catalog c``) of every effective grant on a securable, every page
        read (``grants.get_effective``, ``max_results=0``: the server's page length)."""
        client = self.run.client

        def pages() -> list[tuple[str, str, str]]:
            out: list[tuple[str, str, str]] = []
            token: str | None = None
            seen: set[str] = set()
            while True:
                page = client.grants.get_effective(
                    kind, name, max_results=0, page_token=token, principal=principal
                )
                for pa in page.privilege_assignments or []:
                    for priv in pa.privileges or []:
                        where = ""
                        if priv.inherited_from_name:
                            typ = _value(priv.inherited_from_type).lower() or "securable"
                            where = f"{typ} {priv.inherited_from_name}"
                        out.append((pa.principal or "", _value(priv.privilege), where))
                token = page.next_page_token
                if not token:
                    return out
                if token in seen:
                    raise ValueError(f"grants.get_effective named page {token!r} twice")
                seen.add(token)

        return self.attempt(f"grants on {kind} {name}", pages, unproven)

    def check_reader(self) -> None:
        """The principal (``current_user.me``), and whether it sees every object accord reads:
        a metastore admin (the metastore's owner) does; otherwise MANAGE or ownership on the
        governance schema and on each governed table's schema (inherited from the catalog
        counts): without it ``functions.list`` hides the functions it may not EXECUTE, grants
        and ABAC policies are refused, and information_schema leaves out what it may not see.
        EXECUTE on the governance schema is not a way to see: it calls every salt (ACC705)."""
        if self.checked:
            return
        self.checked = True
        from accord.compiler.connect.executor import require_databricks_apis

        client = self.run.client
        require_databricks_apis()
        me = self.sdk("the reading principal", lambda: client.current_user.me())
        name = (getattr(me, "user_name", None) or "") if me is not None else ""
        self.coverage.reader = name
        if not name:
            self.cannot_see(
                "the reading principal", "current_user.me() named none", "every privilege check"
            )
            return
        summary = self.sdk("the metastore", lambda: client.metastores.summary())
        if summary is not None and summary.owner and summary.owner == name:
            self.coverage.privileges.append(f"metastore admin (owner of metastore {summary.name})")
            self.whole |= self.schemas()
            return
        for salt in sorted(o.name for o in self.expected.of(SaltFunction)):
            # a principal may read its own privileges: EXECUTE on a salt is an exposure
            for who, privilege, where in self.effective("function", salt, name) or []:
                if who == name and privilege in self.CALLS:
                    self.calls.append(SaltGrant(salt, privilege, name, where))
        for catalog in sorted({s.split(".")[0] for s in self.schemas()}):
            self.check_catalog(name, catalog)
        for schema in sorted(self.schemas()):
            self.check_schema(name, schema)
        for table in self.expected.of(MappingTable):
            grants = self.effective("table", table.name, name, f"drift of {table.name}")
            held = {p for who, p, _ in grants or [] if who == name}
            if (
                grants is not None
                and not held & {"SELECT", "ALL_PRIVILEGES"}
                and self.owner_of("tables", table.name) != name
            ):
                self.no_select.add(table.name.lower())
                self.cannot_see(
                    f"mapping table {table.name}",
                    f"{name} holds no SELECT on it: GRANT SELECT ON TABLE {table.name} TO `{name}`",
                    f"drift of {table.name}",
                )

    def schemas(self) -> set[str]:
        tables = {t.rsplit(".", 1)[0].lower() for t in self.governed_tables()}
        return {self.expected.governance_schema.lower()} | tables

    def owner_of(self, kind: str, name: str) -> str:
        api = getattr(self.run.client, kind)
        info = self.sdk(f"{kind[:-1]} {name}", lambda: api.get(name))
        return (getattr(info, "owner", None) or "") if info is not None else ""

    def check_catalog(self, me: str, catalog: str) -> None:
        """ABAC policies on a catalog apply to every table in it: seeing them needs READ
        METADATA or MANAGE on the catalog, or its ownership (unity-catalog/abac/policies)."""
        unproven = f"drift of the ABAC policies on catalog {catalog}"
        if self.owner_of("catalogs", catalog) == me:
            self.coverage.privileges.append(f"owner of catalog {catalog}")
            return
        grants = self.effective("catalog", catalog, me, unproven)
        if grants is None:
            return
        held = {p for who, p, _ in grants if who == me}
        sees = next((p for p in ("READ_METADATA", *self.SEES_ALL) if p in held), None)
        if sees is None:
            self.cannot_see(
                f"the ABAC policies on catalog {catalog}",
                f"{me} holds neither READ METADATA nor MANAGE nor ownership on it",
                unproven,
            )
            return
        self.coverage.privileges.append(f"{sees.replace('_', ' ')} on catalog {catalog}")

    def check_schema(self, me: str, schema: str) -> None:
        gov = schema == self.expected.governance_schema.lower()
        what = "the governance schema" if gov else "the governed tables' schema"
        unproven = (
            f"drift of the functions in {schema} and of who may call its salts"
            if gov
            else f"drift of the row filters, masks, tags and ABAC policies in {schema}"
        )
        catalog = schema.split(".")[0]
        for kind, securable in (("schemas", schema), ("catalogs", catalog)):
            if self.owner_of(kind, securable) == me:
                self.coverage.privileges.append(f"owner of {kind[:-1]} {securable}")
                self.whole.add(schema)
                return
        grants = self.effective("schema", schema, me, unproven)
        if grants is None:
            return
        held = {p: where for who, p, where in grants if who == me}
        if gov and (calls := [p for p in self.CALLS if p in held]):
            where = held[calls[0]] or f"schema {schema}"
            self.coverage.privileges.append(
                f"{calls[0]} on {where}: {me} may call every salt function in {schema} "
                "(an exposure: ACC705)"
            )
        sees = next((p for p in self.SEES_ALL if p in held), None)
        if sees is None:
            self.cannot_see(
                f"everything in {what} {schema}",
                f"{me} holds neither MANAGE nor ownership on it or on catalog {catalog}",
                unproven,
            )
            return
        where = f" (inherited from {held[sees]})" if held[sees] else ""
        self.coverage.privileges.append(f"{sees} on schema {schema}{where}")
        self.whole.add(schema)

    def read(self) -> LiveCatalog:
        client = self.run.client
        self.check_reader()
        gov, objects, live = self.start()
        catalog_name, schema_name = gov.split(".")
        self.progress(f"databricks: functions in {gov}")
        functions = (
            self.sdk(
                f"functions in {gov}",
                lambda: list(
                    client.functions.list(
                        catalog_name=catalog_name, schema_name=schema_name, max_results=0
                    )
                ),
                f"drift of the functions in {gov}",
            )
            or []
        )
        salts = {s.name.lower() for s in self.expected.of(SaltFunction)}
        filters = {p.name.lower() for p in self.expected.of(RowFilterPolicy)}
        listed: set[str] = set()
        salt_infos = []
        for fn in functions:
            name = fn.full_name or ""
            if not self.about(name.rpartition(".")[0], gov, f"functions in {gov}"):
                continue
            listed.add(name.lower())
            params = tuple(
                Param(p.name, _norm_type(p.type_text))
                for p in sorted(
                    (fn.input_params.parameters if fn.input_params else None) or [],
                    key=lambda p: p.position,
                )
            )
            returns = _norm_type(fn.full_data_type or (fn.data_type.value if fn.data_type else ""))
            if name.lower() in salts:
                objects.append(self.keep(SaltFunction(name, "", "")))
                live.salt_owners[name] = fn.owner or ""
                salt_infos.append(fn)
                continue
            body = parse_body(fn.routine_definition or "", "databricks")
            if body is None:
                self.cannot_see(name, unparsed(fn.routine_definition or ""), f"drift of {name}")
                continue
            comment = fn.comment or ""
            if name.lower() in filters or (returns == "BOOLEAN" and name.lower() not in salts):
                objects.append(self.keep(RowFilterPolicy(name, params, body, None, comment)))
            else:
                objects.append(self.keep(MaskPolicy(name, params, returns, body, "", "", comment)))
        if gov.lower() not in self.whole:
            # fact 11: the list leaves out what the reader may not EXECUTE; what it lacks is
            # unseen, not undeployed: taken as the model has it (never reported missing or
            # changed), and said to be unproven (ACC707; a plan refuses an unread base)
            wanted = [*self.expected.of(SaltFunction), *self.expected.of(RowFilterPolicy)]
            for o in sorted([*wanted, *self.expected.of(MaskPolicy)], key=lambda o: o.name):
                if o.name.lower() not in listed:
                    self.cannot_see(
                        f"function {o.name}",
                        "functions.list shows only the functions the reader owns or may EXECUTE",
                        f"whether {o.name} is deployed as the model has it",
                    )
                    objects.append(o)
                    if isinstance(o, SaltFunction):
                        salt_infos.append(SimpleNamespace(full_name=o.name, owner=None))
        grants = self.each(
            lambda fn: self.effective_attempt(
                "function", fn.full_name, unproven=f"who may call {fn.full_name}"
            ),
            salt_infos,
        )
        for fn, attempt in zip(salt_infos, grants, strict=True):
            found = self.settle(attempt)
            seen: set[tuple[str, str, str]] = set()
            for principal, privilege, where in found or []:
                if (
                    privilege in self.CALLS
                    and principal != fn.owner
                    and (principal, privilege, where) not in seen
                ):
                    seen.add((principal, privilege, where))
                    live.salt_grants.append(SaltGrant(fn.full_name, privilege, principal, where))
        for g in self.calls:  # the reader's own, when the full grants were not readable
            if not any(
                (h.function, h.grantee, h.privilege) == (g.function, g.grantee, g.privilege)
                for h in live.salt_grants
            ):
                live.salt_grants.append(g)
        objects += self.attachments()
        ordered = self.policy_securables(catalog_name, gov)
        found_policies = self.each(
            lambda ks: self.attempt(
                f"ABAC policies on {ks[0].lower()} {ks[1]}",
                lambda: list(client.policies.list_policies(ks[0].lower(), ks[1])),
                f"drift of the ABAC policies on {ks[0].lower()} {ks[1]}",
            ),
            ordered,
        )
        for (kind, name), attempt in zip(ordered, found_policies, strict=True):
            for p in self.settle(attempt) or []:
                policy = self.policy(p, kind, name, live)
                if policy is not None:
                    objects.append(self.keep(policy))
        if self.expected.style == "abac":
            for tag in self.expected.of(Tag):
                found = self.sdk(
                    f"governed tag {tag.name}",
                    lambda k=tag.name: client.tag_policies.get_tag_policy(k),
                )
                if found is not None:
                    values = tuple(v.name for v in found.values or ())
                    objects.append(
                        self.keep(Tag(found.tag_key, values, (), found.description or ""))
                    )
            objects += self.tag_assignments()
            self.mask_conflicts(objects, live)
        return self.finish(live, objects)

    def mask_conflicts(self, objects: list[CatalogObject], live: LiveCatalog) -> None:
        """A column mask set directly on a column that an ABAC column-mask policy also masks:
        Unity Catalog lets neither win. A table whose "access control policies result in
        multiple column masks applying to the same column" fails its queries with
        COLUMN_MASKS_FEATURE_NOT_SUPPORTED.MULTIPLE_MASKS (SQLSTATE 0A000; docs.databricks.com
        error-messages/column-masks-feature-not-supported-error-class; table-level and ABAC
        policies with different functions on one table block access: unity-catalog/abac/
        abac-vs-rls-cm). Recorded in ``live.overrides`` (drift's ACC702 says it): the policy
        whose scope covers the table and one of whose MATCH COLUMNS conditions, the one its
        ON COLUMN names, holds on the column's tags (information_schema.column_tags). A
        condition accord cannot evaluate, or a WHEN, is not taken to match."""
        from accord.targets import abac_conditions as cond

        policies = [
            o for o in objects if isinstance(o, AbacPolicy) and o.kind == "COLUMN MASK" and o.to
        ]
        for m in objects:
            if not isinstance(m, MaskAttachment):
                continue
            tags = self.column_tags.get((m.table.lower(), m.column.lower()), {})
            for p in sorted(policies, key=lambda p: (p.securable_type, p.securable, p.name)):
                if p.when or not cond.covers(p, m.table.lower(), str.lower):
                    continue
                wanted = [c for c, alias in p.match_columns if alias == p.on_column]
                try:
                    hit = any(cond.holds(cond.parse(c), tags) for c in wanted)
                except (ValueError, ParseError, TokenError):
                    continue
                if hit:
                    same = "the same function" if self.same(p.function, m.policy) else ""
                    live.overrides[f"{m.table}.{m.column}".upper()] = (
                        f"ABAC policy {p.name} on {p.securable_type.lower()} {p.securable} "
                        f"masks it too, with {same or p.function}"
                    )
                    break

    def policy_securables(self, catalog_name: str, gov: str) -> list[tuple[str, str]]:
        """The securables whose ABAC policies are listed (``policies.list_policies`` each):
        every catalog and schema of the governed tables, the governance schema and its catalog
        (a GRANT policy there may give EXECUTE on the salts), and of the governed tables those
        that carry a policy. Which tables carry one is read per catalog from
        ``information_schema.abac_policy_definitions`` (one statement; Public Preview,
        docs.databricks.com sql/language-manual/information-schema/abac_policy_definitions),
        whose columns say where a policy is attached (``CATALOG_NAME``, ``SCHEMA_NAME``,
        ``SECURABLE_NAME``, ``ON_SECURABLE_TYPE``) but not its function, ``USING`` columns or
        comment, which ``list_policies`` answers. The view shows only the policies the caller
        may describe (MANAGE, READ METADATA or ownership where the policy is attached), so it
        stands for a table only in a schema the reader was proven to see whole; any other
        table, and every table of a catalog whose view could not be read, is listed itself
        (the fallback is said in the coverage notes). Round trips grow with catalogs, schemas
        and the tables that carry a policy, not with the governed tables."""
        containers = {("CATALOG", catalog_name), ("SCHEMA", gov)}
        tables = self.governed_tables()
        for table in tables:
            cat, sch, _ = table.split(".")
            containers |= {("CATALOG", cat), ("SCHEMA", f"{cat}.{sch}")}
        listed = self.tables_with_policies(tables)
        return sorted(containers | {("TABLE", t) for t in tables if t.lower() in listed})

    def tables_with_policies(self, tables: list[str]) -> set[str]:
        """Lower-case names of the governed tables whose policies must be listed one by one:
        those the catalog's ``abac_policy_definitions`` names, and those it cannot stand for."""
        from accord.targets import sql as tsql

        out: set[str] = set()
        by_catalog: dict[str, list[str]] = {}
        for table in tables:
            by_catalog.setdefault(table.split(".")[0].lower(), []).append(table.lower())
        for catalog, names in sorted(by_catalog.items()):
            seen = [t for t in names if t.rsplit(".", 1)[0] in self.whole]
            out |= set(names) - set(seen)
            if not seen:
                continue
            self.progress(f"databricks: ABAC policy definitions in {catalog}")
            view = (
                f"{tsql.name_sql(catalog, 'databricks')}.information_schema.abac_policy_definitions"
            )
            sql = (
                "SELECT catalog_name, schema_name, securable_name, on_securable_type "
                f"FROM {view} WHERE on_securable_type = 'TABLE'"
            )
            try:
                rows = self.run.query(sql)
            except ExecutionError as err:
                self.coverage.note(
                    f"{catalog}.information_schema.abac_policy_definitions could not be read "
                    f"({one_line(err)[:300]}): the ABAC policies of its governed tables were listed table by "
                    "table"
                )
                out |= set(seen)
                continue
            for r in rows:
                name = str(r.get("securable_name") or "")
                if name.count(".") != 2:
                    name = (
                        ".".join(str(r.get(c) or "") for c in ("catalog_name", "schema_name"))
                        + f".{name}"
                    )
                out.add(name.lower())
        return out

    def policy(self, p: Any, kind: str, securable: str, live: LiveCatalog) -> AbacPolicy | None:
        """A row filter or column mask policy as an AbacPolicy; a GRANT policy that gives
        EXECUTE where the salts are, as salt grants; a DENY policy is neither (fact 12)."""
        from databricks.sdk.service.catalog import PolicyType

        where = f"ABAC policy {p.name} on {kind.lower()} {securable}"
        if p.policy_type in (PolicyType.POLICY_TYPE_ROW_FILTER, PolicyType.POLICY_TYPE_COLUMN_MASK):
            return _abac(p, kind, securable)
        if p.policy_type == PolicyType.POLICY_TYPE_GRANT:
            privileges = {str(v).upper() for v in (p.grant.privileges if p.grant else None) or []}
            gov = self.expected.governance_schema.lower()
            covers = securable.lower() in (gov, gov.split(".")[0])
            if covers and privileges & {"EXECUTE", "ALL_PRIVILEGES", "ALL PRIVILEGES"}:
                granted = "EXECUTE" if "EXECUTE" in privileges else "ALL_PRIVILEGES"
                for salt in sorted(self.expected.of(SaltFunction), key=lambda s: s.name):
                    for principal in sorted(
                        set(p.to_principals or ()) - set(p.except_principals or ())
                    ):
                        live.salt_grants.append(
                            SaltGrant(salt.name, granted, principal, f"policy {p.name} on {kind.lower()} {securable}")
                        )  # fmt: skip
            else:
                self.ignored.append(
                    f"{where}: a GRANT policy of {', '.join(sorted(privileges))}; not compared"
                )
            return None
        if p.policy_type == PolicyType.POLICY_TYPE_DENY:
            privileges = sorted(str(v) for v in (p.deny.privileges if p.deny else None) or [])
            self.ignored.append(f"{where}: a DENY policy of {', '.join(privileges)}; not compared")
            return None
        self.cannot_see(
            where,
            f"its policy type ({_value(p.policy_type) or 'none'}) is not one accord reads",
            f"drift of the ABAC policies on {kind.lower()} {securable}",
        )
        return None

    def info_schema(self, catalog: str, view: str) -> list[dict[str, Any]] | None:
        """Every row of ``<catalog>.information_schema.<view>``, one statement (every chunk
        followed by the executor); None when it failed (recorded)."""
        from accord.targets import sql as tsql

        sql = f"SELECT * FROM {tsql.name_sql(catalog, 'databricks')}.information_schema.{view}"
        try:
            return self.run.query(sql)
        except ExecutionError as err:
            self.cannot_see(
                f"{catalog}.information_schema.{view}",
                err,
                f"drift of the {view.replace('_', ' ')} in catalog {catalog}",
            )
            return None

    def catalogs(self) -> list[str]:
        return sorted({t.split(".")[0].lower() for t in self.governed_tables()})

    def attachments(self) -> list[CatalogObject]:
        """Row filters and column masks of the governed tables: two statements per catalog."""
        governed = {t.lower(): t for t in self.governed_tables()}
        out: list[CatalogObject] = []
        for catalog in self.catalogs():
            self.progress(f"databricks: row filters and column masks in {catalog}")
            for r in self.info_schema(catalog, "row_filters") or []:
                table = governed.get(_table_of(r))
                if table is None:
                    continue
                function = _function_of(r, "filter")
                columns = _columns(_first(r, "filter_col_usage", "target_columns"))
                out.append(self.keep(RowFilterAttachment(table, function, columns, "")))
            for r in self.info_schema(catalog, "column_masks") or []:
                table = governed.get(_table_of(r))
                if table is None:
                    continue
                using = _columns(_first(r, "mask_col_usage", "using_columns"))
                column = str(r.get("column_name") or "")
                out.append(
                    self.keep(MaskAttachment(table, column, _function_of(r, "mask"), "", using))
                )
        return out

    def tag_assignments(self) -> list[CatalogObject]:
        """The model's governed-tag assignments: column tags from each catalog's
        information_schema.column_tags (one statement), table tags per table."""
        wanted = {
            (o.table.lower(), (o.column or "").lower(), o.tag): o
            for o in self.expected.of(TagAssignment)
        }
        out: list[CatalogObject] = []
        catalogs = sorted({o.table.split(".")[0].lower() for o in wanted.values() if o.column})
        for catalog in catalogs:
            self.progress(f"databricks: column tags in {catalog}")
            for r in self.info_schema(catalog, "column_tags") or []:
                key = (_table_of(r), str(r.get("column_name") or "").lower(), r.get("tag_name"))
                self.column_tags.setdefault(key[:2], {})[str(key[2])] = str(
                    r.get("tag_value") or ""
                )
                o = wanted.get(key)  # type: ignore[arg-type]
                if o is not None:
                    value = str(r.get("tag_value") or "")
                    out.append(self.keep(TagAssignment(o.table, o.column, o.tag, value, "")))
        client = self.run.client
        tables = [o for o in wanted.values() if not o.column]
        found = self.each(
            lambda o: self.attempt(
                f"tags on {o.table}",
                lambda: list(client.entity_tag_assignments.list("tables", o.table)),
            ),
            tables,
        )
        for o, attempt in zip(tables, found, strict=True):
            for t in self.settle(attempt) or []:
                if t.tag_key == o.tag:
                    out.append(
                        self.keep(
                            TagAssignment(o.table, o.column, t.tag_key, t.tag_value or "", "")
                        )
                    )
        return out


def _value(v: Any) -> str:
    return str(getattr(v, "value", v) or "")


def _first(row: dict[str, Any], *names: str) -> Any:
    return next((row[n] for n in names if row.get(n) is not None), None)


def _table_of(row: dict[str, Any]) -> str:
    """``catalog.schema.table`` of an information_schema row, whichever names it uses (the
    documentation's ``catalog_name``/``schema_name``, or ``table_catalog``/``table_schema``)."""
    parts = (
        _first(row, "catalog_name", "table_catalog"),
        _first(row, "schema_name", "table_schema"),
        row.get("table_name"),
    )
    return ".".join(str(p or "") for p in parts).lower()


def _function_of(row: dict[str, Any], kind: str) -> str:
    name = str(row.get(f"{kind}_name") or "")
    if name.count(".") == 2:
        return name
    return ".".join(str(row.get(f"{kind}_{p}") or "") for p in ("catalog", "schema")) + f".{name}"


def _columns(text: Any) -> tuple[str, ...]:
    return tuple(c.strip() for c in str(text or "").split(",") if c.strip())


def _abac(p: Any, kind: str, securable: str) -> AbacPolicy:
    is_filter = p.policy_type is not None and "ROW_FILTER" in str(p.policy_type.value)
    opts = p.row_filter if is_filter else p.column_mask
    using = tuple((u.alias or u.constant or "") for u in (opts.using if opts else None) or [])
    return AbacPolicy(
        name=p.name or "",
        securable_type=kind,  # type: ignore[arg-type]
        securable=securable,
        kind="ROW FILTER" if is_filter else "COLUMN MASK",
        function=opts.function_name if opts else "",
        to=tuple(p.to_principals or ()),
        except_=tuple(p.except_principals or ()),
        match_columns=tuple((m.condition or "", m.alias or "") for m in p.match_columns or ()),
        on_column=getattr(opts, "on_column", None),
        using=using,
        comment=p.comment or "",
        when=p.when_condition,
    )


def columns_query(table: str, platform: str) -> str:
    """The query that lists ``table``'s columns: ``<catalog>.information_schema.columns`` on
    both platforms (Snowflake's INFORMATION_SCHEMA.COLUMNS, Unity Catalog's
    information_schema.columns), names compared as each platform stores unquoted ones."""
    from accord.targets import sql as tsql

    db, schema, name = table.split(".")
    fold = str.upper if platform == "snowflake" else str.lower

    def lit(value: str) -> str:
        return tsql.literal(fold(value)).sql(
            dialect="snowflake" if platform == "snowflake" else "databricks"
        )

    return (
        f"SELECT column_name FROM {tsql.name_sql(db, platform)}.information_schema.columns "
        f"WHERE table_schema = {lit(schema)} AND table_name = {lit(name)}"
    )


def table_columns(platform: str, executor: Any, table: str) -> tuple[str, ...] | str:
    """The column names of a live table, or, when they cannot be read, why (never an empty
    answer taken for "no such column": a table the reading role cannot see has no rows
    there)."""
    try:
        rows = executor.query(columns_query(table, platform))
    except ExecutionError as err:
        return f"the columns of {table}: {err}"
    names = tuple(str(r.get("column_name", "")) for r in rows if r.get("column_name"))
    if not names:
        return f"the columns of {table}: information_schema.columns lists none (no such table, or the reading role cannot see it)"
    return names


def reader_for(
    platform: str,
    executor: Any,
    expected: Catalog,
    progress: Callable[[str], None] = lambda _: None,
    jobs: int = 1,
) -> Reader:
    kind = SnowflakeReader if platform == "snowflake" else DatabricksReader
    return kind(executor, expected, progress, jobs)


def introspect(
    platform: str,
    executor: Any,
    expected: Catalog,
    progress: Callable[[str], None],
    jobs: int = 1,
) -> LiveCatalog:
    try:
        return reader_for(platform, executor, expected, progress, jobs).read()
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError) as err:
        # a row without a column accord reads, a JSON column that is not JSON, a value of
        # another type: the platform's answer is not what accord asked for, never a crash
        what = f"no column {err}" if isinstance(err, KeyError) else one_line(err)[:300]
        raise UnreadableAnswer(
            f"{platform} answered in a shape accord cannot read ({type(err).__name__}: "
            f"{what}); nothing was compared"
        ) from None


class UnreadableAnswer(UsageError):
    """A platform's answer accord cannot read (compiler.live.session locates it in the model,
    at the platform's ``governance_schema``: what was being read)."""
