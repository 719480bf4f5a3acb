"""Read what is deployed on a platform into the catalog types the compiler lowers to.

One reader per platform, in its folder (``targets/snowflake/inspect.py``,
``targets/databricks/inspect.py``: what each platform is asked, with sources); nothing
downstream knows whether a :class:`~targets.objects.Catalog` came from YAML or from a platform.
The model says *where* to look (the governance schema, the governed tables and masked columns,
the mapping tables); everything found there is read, including what accord did not put there
(a console-added policy, a mask someone unset). This module holds what every reader shares:
the :class:`Reader` plumbing (bounded concurrency, what could not be seen, answers about
something else), the :class:`LiveCatalog` it returns, the mapping rows, and the role hierarchy
read (:func:`read_hierarchy`); drift judges all of it (``compiler/live/``).

A salt function's body is its secret: it is never kept, printed or compared. Its presence,
signature, secure flag (Snowflake) and callers are."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from sqlglot import exp

from accord.compiler.connect.executor import ExecutionError, as_reader
from accord.compiler.core.errors import UsageError, one_line
from accord.compiler.core.platforms import facts
from accord.compiler.core.progress import counted
from accord.targets import sql as tsql
from accord.targets.coverage import Coverage
from accord.targets.identity import fingerprint, identity, same_body, same_condition
from accord.targets.kinds import KINDS, ORDER, PLACEMENTS
from accord.targets.objects import (
    AbacPolicy,
    Catalog,
    CatalogObject,
    MappingTable,
    RowFilterAttachment,
    Tag,
)
from accord.targets.platform import platform as platform_named


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


@dataclass(frozen=True, order=True)
class Owned:
    """Who owns one object whose ownership drift judges (read only when the model names an
    expected owner, ``platforms.<p>.owner``)."""

    #: one of :data:`OWNED_KINDS`
    kind: str
    name: str
    #: the owning role (Snowflake) or principal (Databricks), as the platform named it
    owner: str
    #: who else holds the owner, in words ("granted to PUBLIC: every user of the account")
    reach: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"kind": self.kind, "name": self.name, "owner": self.owner}
        if self.reach:
            out["reach"] = self.reach
        return out


@dataclass(frozen=True, order=True)
class InheritedTag:
    """A governance tag a governed column carries without its own assignment: inherited from
    its table, schema or database, or propagated to it (Snowflake TAG_REFERENCES_ALL_COLUMNS:
    ``LEVEL`` is where the tag is set, ``APPLY_METHOD`` how the column got it)."""

    table: str
    column: str
    tag: str
    value: str
    #: INHERITED, PROPAGATED (or another APPLY_METHOD than MANUAL)
    method: str
    #: COLUMN, TABLE, SCHEMA, DATABASE
    level: str

    def source(self) -> str:
        """Where the tag is set, in words: ``schema D.S``, ``table D.S.T``, or ``column
        D.S.T.C`` (propagated)."""
        db, schema, _ = self.table.split(".")
        return {
            "DATABASE": f"database {db}",
            "SCHEMA": f"schema {db}.{schema}",
            "TABLE": f"table {self.table}",
        }.get(self.level, f"column {self.table}.{self.column}")

    def words(self) -> str:
        return (
            f"{self.table}.{self.column}: tag {self.tag} = {self.value!r} is "
            f"{self.method.lower()} (LEVEL {self.level}), not set on the column"
        )


#: what drift judges the owner of: accord's own objects (the expected owner must own them) and
#: the governed tables (their owner must be the expected one, or an identity the model gives
#: everything on the table)
OWNED_KINDS = (
    "salt function",
    "row access policy",
    "masking policy",
    "policy function",
    "mapping table",
    "governed table",
)


@dataclass(frozen=True)
class AccessPolicy:
    """A Databricks ABAC GRANT or DENY policy (databricks-sdk ``PolicyInfo`` of policy type
    POLICY_TYPE_GRANT / POLICY_TYPE_DENY): what it gives or takes, as the policies API answers
    it. accord deploys none; the model cannot say one (an ``unmanaged`` entry of kind
    ``abac_policy`` names it by :attr:`label`, as an ABAC row filter or column mask is named)."""

    name: str
    #: METASTORE, CATALOG, SCHEMA or TABLE
    securable_type: str
    securable: str
    #: GRANT | DENY
    verb: str
    privileges: tuple[str, ...]
    to: tuple[str, ...]
    except_: tuple[str, ...]
    #: what it does, in words (drift's message)
    text: str
    #: a GRANT over a governed table: it widens what identities reach beyond the model (drift:
    #: ACC702)
    widens: bool = False

    @property
    def label(self) -> str:
        return f"{self.name} ON {self.securable_type} {self.securable}"


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
    #: ABAC GRANT and DENY policies read: what they give or take. accord deploys none: a GRANT
    #: whose scope holds a governed table (the table, its schema or catalog, the metastore) is
    #: part of what an identity can reach that the model did not put there (``widens``; drift:
    #: ACC702)
    access_policies: list[AccessPolicy] = field(default_factory=list)
    #: answers about objects that were not asked about, in words: ignored, never planned
    #: against or taken for the object that was asked about
    ignored: list[str] = field(default_factory=list)
    #: the live role hierarchy into the modelled principals (compiler.live.hierarchy); None
    #: when it was not read (a model without ``inherits``)
    hierarchy: list[Any] | None = None
    #: the modelled roles or groups whose inheritors were read
    hierarchy_read: list[str] = field(default_factory=list)
    #: who owns accord's objects and the governed tables (read only when the model names an
    #: expected owner: ``catalog.owner`` of the model's catalog)
    owners: list[Owned] = field(default_factory=list)
    #: the governance tags of ``inherited_tags``, each with where it is set
    inherited: list[InheritedTag] = field(default_factory=list)
    #: Snowflake masking policies that are EXEMPT_OTHER_POLICIES = TRUE (SHOW MASKING POLICIES'
    #: ``options``): one may sit on a column another policy reads
    exempt: list[str] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        """A digest of everything read: a plan records it, apply compares it."""
        parts = sorted(
            (type(o).__name__, getattr(o, "name", ""), fingerprint(o)) for o in self.catalog
        )
        extra: tuple[Any, ...] = (sorted(self.salt_grants, key=repr), sorted(self.insecure_salts))
        if self.owners:  # only read when judged: a catalog read without owners digests as before
            extra += (sorted(self.owners),)
        return hashlib.sha256(repr((parts, repr(extra))).encode()).hexdigest()

    def exposures(self, owner: str | None) -> list[SaltGrant]:
        """The grants that let someone other than the owner call a salt (ACC705): every one
        but a grant to the model's expected ``owner`` (``platforms.<p>.owner``), which owns the
        policies that call the salt and may call it."""
        if owner is None:
            return list(self.salt_grants)
        fold = facts(self.catalog.platform).fold_identity
        return [g for g in self.salt_grants if fold(g.grantee) != fold(owner)]

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
            **({"owners": [o.to_json() for o in sorted(self.owners)]} if self.owners else {}),
        }

    def _hierarchy_json(self) -> dict[str, Any]:
        """``hierarchy``: the edges read (only when the model has ``inherits``)."""
        if self.hierarchy is None:
            return {}
        return {"hierarchy": [e.to_json() for e in self.hierarchy]}


def _kinds(objects: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for o in objects:
        name = KINDS[type(o)].plural if type(o) in KINDS else type(o).__name__
        counts[name] = counts.get(name, 0) + 1
    return counts


def sort_objects(objects: Any) -> list[CatalogObject]:
    return sorted(objects, key=lambda o: (ORDER[type(o)], identity(o)))


def object_json(obj: CatalogObject, platform: str) -> dict[str, Any]:
    """``obj`` as JSON: ``kind`` is its class; a field of its own named ``kind`` (an ABAC
    policy's ``ROW FILTER`` or ``COLUMN MASK``) is written as ``policy_kind``."""
    out: dict[str, Any] = {"kind": type(obj).__name__}
    for f in dataclasses.fields(obj):
        if f.name == "source":  # provenance: the model's, never the platform's
            continue
        key = "policy_kind" if f.name == "kind" else f.name
        value = getattr(obj, f.name)
        if isinstance(value, exp.Expression):
            value = value.sql(dialect=platform)
        elif isinstance(value, tuple):
            value = [dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v for v in value]
        out[key] = value
    return out


def annotate(live: CatalogObject, model: CatalogObject | None, platform: str) -> CatalogObject:
    """``live`` with the model's bookkeeping fields and provenance (``source``: what the model
    made it from), and the model's body expression when the two bodies are equal as trees (so
    equal objects compare equal downstream)."""
    if model is None or type(model) is not type(live):
        return live
    changes = {name: getattr(model, name) for name in (*KINDS[type(live)].model_only, "source")}
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


def norm_type(text: str) -> str:
    """VARCHAR(16777216) -> VARCHAR; string -> STRING."""
    t = " ".join(text.split()).upper()
    if t.startswith("VARCHAR(") or t.startswith("TEXT"):
        return "VARCHAR"
    return t


class Reader:
    """Shared plumbing: the model's catalog says where to look."""

    #: an edge of the role hierarchy in words (``{parent}``, ``{child}``): ``present``,
    #: ``absent``, and the fixes ``add`` and ``remove`` (ACC708)
    EDGE_WORDS: ClassVar[dict[str, str]] = {}

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
        fold = facts(self.platform).fold
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

        with ThreadPoolExecutor(max_workers=min(self.jobs, len(items))) as pool:
            return list(pool.map(fn, items))

    def inheritors(self, name: str, live: LiveCatalog) -> Answer:
        """Who inherits the role or group ``name`` (the role hierarchy, the group nesting), or
        why that is unseen. Each platform's reader implements it."""
        raise NotImplementedError(f"{self.platform}: the hierarchy read")

    def check_reader(self) -> None:
        """Establish what the reading role can see before trusting a read: record the
        privileges that matter in ``self.coverage.privileges`` (and ``self.coverage.reader``),
        and each missing one with :meth:`cannot_see` (what, why, what is not proven). Each
        platform's reader implements it; ``read`` calls it first, and ``accord introspect
        --check-reader`` calls it alone."""
        raise NotImplementedError(f"{self.platform}: the reader check")

    def model(self, obj: CatalogObject) -> CatalogObject | None:
        return self.by_id.get(identity(obj))

    def expect(self, expected: Catalog) -> None:
        """Look where ``expected`` says from now on (a survey found the places: ``accord
        import``); what was seen and not seen so far stays in the coverage."""
        self.expected = expected
        self.by_id = {identity(o): o for o in expected}

    def keep(self, obj: CatalogObject) -> CatalogObject:
        return annotate(obj, self.model(obj), self.platform)

    def judges_owners(self) -> bool:
        """Whether ownership is judged (the model names ``platforms.<p>.owner``); when it is
        not, the coverage says so, never that ownership is fine."""
        if self.expected.owner:
            return True
        self.coverage.note(
            f"ownership was not judged: the model names no platforms.{self.platform}.owner"
        )
        return False

    def owned(self, live: LiveCatalog, kind: str, name: str, owner: str, reach: str = "") -> None:
        """Record who owns ``name`` (``kind``: one of :data:`OWNED_KINDS`)."""
        live.owners.append(Owned(kind, name, owner, reach))

    def mapping_policy(self, obj: CatalogObject) -> None:
        """A row filter or mask found on a mapping table: what the read of its rows cannot
        prove (ACC707), beside the attachment itself (ACC702, drift)."""
        policy = getattr(obj, "policy", "")
        kind = "row filter" if isinstance(obj, RowFilterAttachment) else "mask"
        table = getattr(obj, "table", "")
        self.cannot_see(
            f"every row of mapping table {table}",
            f"the {kind} {policy} is on it: the reader reads only the rows it lets through, and "
            "accord's policies, which read the table as their owner, only those it lets their "
            "owner see",
            f"that {table} holds the model's grants and no others",
        )

    def owned_tables(self, objects: Sequence[CatalogObject] | None = None) -> list[tuple[str, str]]:
        """(kind, table) of every table whose owner is judged: the mapping tables (those the
        read found, when ``objects`` is given: a table not deployed yet has no owner) and the
        governed tables, in name order."""
        found = {o.name.upper() for o in objects or () if isinstance(o, MappingTable)}
        out = {
            m.name: "mapping table"
            for m in self.expected.of(MappingTable)
            if objects is None or m.name.upper() in found
        }
        for t in self.governed_tables():
            out.setdefault(t, "governed table")
        return sorted(((k, t) for t, k in out.items()), key=lambda e: e[1])

    def governed_tables(self) -> list[str]:
        """The tables the model places something on (every kind of placement: the kinds
        table's ``table``; an ABAC policy on a table, not on a catalog or schema)."""
        tables = {
            t
            for o in self.expected
            if isinstance(o, PLACEMENTS)
            and not (isinstance(o, AbacPolicy) and o.securable_type != "TABLE")
            and (t := KINDS[type(o)].table(o))
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


def columns_query(table: str, platform: str) -> str:
    """The query that lists ``table``'s columns: ``<catalog>.information_schema.columns`` on
    both platforms (Snowflake's INFORMATION_SCHEMA.COLUMNS, Unity Catalog's
    information_schema.columns), names compared as each platform stores unquoted ones."""
    db, schema, name = table.split(".")
    fold = facts(platform).fold

    def lit(value: str) -> str:
        return tsql.literal_sql(fold(value), platform)

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
    """The live reader of ``platform`` (its folder's ``inspect.py``)."""
    return platform_named(platform).reader()(executor, expected, progress, jobs)


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
        raise unreadable(platform, "", err) from None


def unreadable(platform: str, what: str, err: Exception) -> UnreadableAnswer:
    """A row without a column accord reads, a JSON column that is not JSON, a value of another
    type: the platform's answer (to ``what``, when it is not the whole read) is not what accord
    asked for, never a crash."""
    said = f"no column {err}" if isinstance(err, KeyError) and not what else one_line(err)[:300]
    to = f" the {what} read" if what else ""
    return UnreadableAnswer(
        f"{platform} answered{to} in a shape accord cannot read ({type(err).__name__}: "
        f"{said}); nothing was compared"
    )


class UnreadableAnswer(UsageError):
    """A platform's answer accord cannot read (compiler.live.session locates it in the model,
    at the platform's ``governance_schema``: what was being read)."""


# --------------------------------------------------------------------------------------------
# the role hierarchy


@dataclass(frozen=True, order=True)
class Edge:
    """``child`` inherits ``parent``: on Snowflake role ``parent`` is granted to role
    ``child``; on Databricks group ``child`` is a member of group ``parent``. Names as the
    platform answered them."""

    parent: str
    child: str

    def to_json(self) -> dict[str, str]:
        return {"parent": self.parent, "child": self.child}


class Answer(NamedTuple):
    """One principal's read: who inherits it, or why that is unseen (what, why, what is
    not proven), and answers about something else (ignored, in words)."""

    children: list[str]
    failed: tuple[str, str, str] | None
    ignored: tuple[str, ...] = ()


def read_hierarchy(
    platform: str,
    identities: list[str],
    executor: Any,
    expected: Catalog,
    live: LiveCatalog,
    jobs: int = 1,
) -> None:
    """Read the edges into each of ``identities`` (the modelled principals' roles or groups)
    into ``live.hierarchy``, and what could not be read into its coverage. Each platform's
    reader answers who inherits one identity (:meth:`Reader.inheritors`)."""
    try:
        _read_hierarchy(platform, identities, executor, expected, live, jobs)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        raise unreadable(platform, "role hierarchy", err) from None


def _read_hierarchy(
    platform: str,
    identities: list[str],
    executor: Any,
    expected: Catalog,
    live: LiveCatalog,
    jobs: int,
) -> None:
    reader = reader_for(platform, executor, expected, jobs=jobs)
    fold = facts(platform).fold_identity
    found = {fold(i): i for i in identities}
    names = [found[k] for k in sorted(found)]
    answers = reader.each(lambda n: reader.inheritors(n, live), names)
    edges: list[Edge] = []
    parents_read: list[str] = []
    for name, (children, failed, ignored) in zip(names, answers, strict=True):
        live.ignored.extend(ignored)
        if failed is not None:
            reader.cannot_see(*failed)
            continue
        parents_read.append(name)
        edges += [Edge(name, c) for c in children]
    live.hierarchy = sorted(set(edges))
    live.hierarchy_read = sorted(parents_read)
    coverage = live.coverage
    if coverage is not None:
        coverage.saw(f"hierarchy {facts(platform).principal_kind}s", len(parents_read))
        coverage.saw("hierarchy edges", len(live.hierarchy))
        for u in reader.coverage.unseen:
            coverage.cannot_see(u.what, u.why, u.unproven)
    live.unreadable += reader.unreadable
