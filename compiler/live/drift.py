"""Compare the model's lowered catalogs with what the platforms hold: findings ACC701-ACC708 (and
ACC701 for a replica's `omits` the live table contradicts; ACC708, the role hierarchy, in
:mod:`compiler.live.hierarchy`).

Each difference is a lint-style :class:`~compiler.lint.finding.Finding` located at the place
in the model's YAML that asks for the object (the dataset column that names a mask, the
dataset's row filter, the mask, the entitlement dimension, the platform). ``accord drift``
finalises them as lint's own findings (:func:`compiler.lint.engine.finalize`: suppressions,
sorting); their rule pages are the entries of :mod:`compiler.lint.rules.drift`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from accord.compiler.connect.executor import ExecutionError, as_reader
from accord.compiler.core.errors import Location
from accord.compiler.core.platforms import facts
from accord.compiler.lint.finding import Finding
from accord.compiler.live.hierarchy import hierarchy_findings
from accord.compiler.model.grants import principal_of, until_of
from accord.compiler.model.replicas import column_path
from accord.compiler.model.salts import SaltBox, SaltError
from accord.compiler.model.schema import Grant
from accord.compiler.model.validate import Project, dimension_path
from accord.targets import sql as tsql
from accord.targets.identity import (
    ConstraintAttachment,
    ConstraintPolicy,
    describe_object,
    fingerprint,
    identity,
    is_definition,
    same_body,
)
from accord.targets.inspect import LiveCatalog, table_columns
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
    TagAssignment,
)
from accord.targets.platform import platform as platform_named

CANARY = "accord-canary"


class Locator:
    """Where in the YAML the model asks for a catalog object."""

    def __init__(self, project: Project, expected: dict[str, Catalog]) -> None:
        self.project = project
        self.model = project.model
        self.policy_uses: dict[str, CatalogObject] = {}
        for catalog in expected.values():
            for o in catalog:
                if isinstance(o, MaskAttachment | RowFilterAttachment | ConstraintAttachment):
                    self.policy_uses.setdefault(o.policy.upper(), o)

    def dataset_of(self, table: str, platform: str) -> str | None:
        """The dataset of ``table`` on ``platform`` (a Snowflake and a Databricks table may
        share a name: BANK.CRM.CUSTOMERS and bank.crm.customers)."""
        for name, ds in self.model.datasets.items():
            if ds.platform == platform and ds.table.upper() == table.upper():
                return name
        return None

    def column_key(self, dataset: str, column: str) -> str | None:
        ds = self.model.datasets[dataset]
        return next((c for c in ds.columns if c.upper() == column.upper()), None)

    def at(self, obj: CatalogObject, platform: str) -> tuple[Location, str]:
        """The model entry that made ``obj`` (its provenance, recorded by the lowering and
        kept on the live object of the same identity); for what the model did not make, the
        entry of the dataset whose table it is on, or of the policy's first user, else the
        platform."""
        p = self.project
        if obj.source:
            return p.loc(*obj.source), f"{obj.source[0]}.{obj.source[1]}"
        if isinstance(
            obj, MaskAttachment | RowFilterAttachment | TagAssignment | ConstraintAttachment
        ):
            ds = self.dataset_of(obj.table, platform)
            if ds is not None:
                column = getattr(obj, "column", None)
                if isinstance(obj, RowFilterAttachment):
                    if self.model.datasets[ds].row_filter is not None:
                        return p.loc("datasets", ds, "row_filter"), f"datasets.{ds}"
                    return p.loc("datasets", ds), f"datasets.{ds}"
                key = self.column_key(ds, column) if column else None
                if key is not None:
                    # an inherited column is declared on the source
                    path = column_path(self.model, ds, key)
                    return p.loc(*path), f"datasets.{path[1]}"
                return p.loc("datasets", ds), f"datasets.{ds}"
        use = self.policy_uses.get(getattr(obj, "name", "").upper())
        if use is not None:
            return self.at(use, platform)
        return p.loc("platforms", platform), f"platforms.{platform}"


def _changed_what(old: CatalogObject, new: CatalogObject, platform: str) -> str:
    if isinstance(old, ConstraintPolicy) and isinstance(new, ConstraintPolicy):
        parts = [] if same_body(old.body, new.body, platform) else ["body"]
        parts += ["comment"] if old.comment != new.comment else []
        return ", ".join(parts) or "definition"
    if isinstance(old, ConstraintAttachment) and isinstance(new, ConstraintAttachment):
        if old.policy.upper() != new.policy.upper():
            return f"points at {old.policy}, the model attaches {new.policy}"
        keys = getattr(old, "allowed_join_keys", ()), getattr(new, "allowed_join_keys", ())
        if keys[0] != keys[1]:
            shown = [", ".join(k) or "any column" for k in keys]
            return f"allows joins on {shown[0]}, the model on {shown[1]}"
        return "its definition differs"
    if isinstance(old, RowFilterPolicy | MaskPolicy) and isinstance(
        new, RowFilterPolicy | MaskPolicy
    ):
        parts = []
        if old.params != new.params or getattr(old, "returns", None) != getattr(
            new, "returns", None
        ):
            parts.append("signature")
        if not same_body(old.body, new.body, platform):
            parts.append("body")
        if old.comment != new.comment:
            parts.append("comment")
        return ", ".join(parts) or "definition"
    if isinstance(old, MaskAttachment | RowFilterAttachment):
        if old.policy.upper() != new.policy.upper():  # type: ignore[union-attr]
            return f"points at {old.policy}, the model attaches {new.policy}"  # type: ignore[union-attr]
        if isinstance(old, RowFilterAttachment) and isinstance(new, RowFilterAttachment):
            return _columns_changed(old.columns, new.columns)
        return "its arguments differ"
    if (
        isinstance(old, AbacPolicy)
        and isinstance(new, AbacPolicy)
        and (old.match_columns, old.using) != (new.match_columns, new.using)
    ):
        return f"matches {_matched(old)}, the model {_matched(new)}" + (
            ": the columns are in another order, so each dimension reads another's column"
            if sorted(_pairs(old)) == sorted(_pairs(new)) and _pairs(old) != _pairs(new)
            else ""
        )
    return "its definition differs"


def _pairs(p: AbacPolicy) -> list[str]:
    """The conditions of an ABAC policy's USING COLUMNS, in the function's parameter order."""
    by_alias = {alias: cond for cond, alias in p.match_columns}
    return [by_alias.get(a, a) for a in p.using]


def _matched(p: AbacPolicy) -> str:
    return f"USING COLUMNS ({', '.join(_pairs(p))})"


def dimension_at(
    project: Project, locator: Locator, want: CatalogObject, have: CatalogObject, platform: str
) -> Location | None:
    """Where a several-dimension row filter's attachment differs: the entry of the first
    dimension whose column is gone, else of the first whose column is not in its place
    (None: the finding stays at the dataset's ``row_filter``)."""

    if not (isinstance(want, RowFilterAttachment) and isinstance(have, RowFilterAttachment)):
        return None
    ds = locator.dataset_of(want.table, platform)
    if ds is None:
        return None
    spec = project.model.datasets[ds]
    if spec.row_filter is None or spec.row_filter.dimensions is None:
        return None
    keys = [c.upper() for _, c, _ in spec.filter_dimensions]
    live = [c.upper() for c in have.columns]
    gone = [i for i, c in enumerate(keys) if c not in live]
    moved = [i for i, c in enumerate(keys) if i >= len(live) or live[i] != c]
    first = (gone or moved or [None])[0]
    return None if first is None else project.loc(*dimension_path(project, ds, first))


def _columns_changed(live: tuple[str, ...], model: tuple[str, ...]) -> str:
    """How a row filter's live columns differ from the model's: each is a policy parameter,
    one a dimension, so an order that differs makes one dimension's check read another's
    column, and a column that is gone is a dimension no longer checked."""
    said = f"attached on ({', '.join(live)}), the model attaches it on ({', '.join(model)})"
    up = [c.upper() for c in live]
    if sorted(up) == sorted(c.upper() for c in model):
        return f"{said}: the columns are in another order, so each dimension reads another's column"
    dropped = [c for c in model if c.upper() not in up]
    if dropped:
        return f"{said}: the dimension of {', '.join(dropped)} is not checked"
    return said


def drift_platform(
    project: Project, expected: Catalog, live: LiveCatalog, locator: Locator
) -> list[Finding]:
    platform = expected.platform
    findings: list[Finding] = []
    model_objs = {identity(o): o for o in expected}
    live_objs = {identity(o): o for o in live.catalog}
    model_policies = {
        o.name.upper()
        for o in expected
        if isinstance(o, RowFilterPolicy | MaskPolicy | ConstraintPolicy)
    }
    model_policies |= {o.function.upper() for o in expected if isinstance(o, AbacPolicy)}

    def add(
        rule: str, obj: CatalogObject, message: str, fix: str, at: Location | None = None
    ) -> None:
        loc, owner = locator.at(obj, platform)
        findings.append(Finding(at or loc, rule, owner, f"{platform}: {message}", fix))

    def overrides(obj: CatalogObject) -> str:
        """A direct mask on a column a tag also masks decides what readers see."""
        if not isinstance(obj, MaskAttachment):
            return ""
        over = live.overrides.get(f"{obj.table}.{obj.column}".upper())
        if not over:
            return ""
        if not facts(platform).tag_masking:
            # Snowflake's tag-based masking lets a direct mask win over the tag's
            # (user-guide/tag-based-masking-policies); Unity Catalog lets neither mask win: at
            # most one may apply to a column (column-masks-feature-not-supported-error-class)
            if over.endswith("with the same function"):
                return (
                    f"; {over}: whether Unity Catalog then refuses the table's queries as it "
                    "does for two different masks (COLUMN_MASKS_FEATURE_NOT_SUPPORTED."
                    "MULTIPLE_MASKS) is not documented"
                )
            return (
                f"; {over}: neither takes precedence, Unity Catalog refuses every query of the "
                "table (COLUMN_MASKS_FEATURE_NOT_SUPPORTED.MULTIPLE_MASKS: at most one mask may "
                "apply to a column)"
            )
        return f"; this policy overrides the tag's ({over})"

    def inherits(obj: CatalogObject) -> str:
        """A column whose own tag is gone may still inherit the tag: not the model's tag."""
        if not isinstance(obj, TagAssignment):
            return ""
        prefix = f"{obj.table}.{obj.column}: tag {obj.tag} ".upper()
        found = [i for i in live.inherited_tags if i.upper().startswith(prefix)]
        if not found:
            return ""
        return f" (the column only inherits it: {found[0].split(': ', 1)[1]})"

    for key in sorted(model_objs.keys() | live_objs.keys()):
        want, have = model_objs.get(key), live_objs.get(key)
        if have is None:
            assert want is not None
            add(
                "ACC701",
                want,
                f"{describe_object(want, platform)} is not deployed{inherits(want)}",
                f"plan it from the live estate: accord plan --base live:{platform}",
            )
        elif want is None:
            if is_definition(have):
                add(
                    "ACC702",
                    have,
                    f"{describe_object(have, platform)} is in the governance schema and not in the model",
                    "drop it, or add it to the model",
                )
            else:
                add(
                    "ACC702",
                    have,
                    f"{describe_object(have, platform)}: {getattr(have, 'policy', getattr(have, 'function', ''))} "
                    f"is attached and the model did not put it there{overrides(have)}",
                    f"remove it, or adopt it: accord plan --base live:{platform} --adopt",
                )
        elif isinstance(want, MappingTable) and isinstance(have, MappingTable):
            findings.extend(mapping_findings(project, platform, want, have, locator))
        elif fingerprint(want) != fingerprint(have):
            what = _changed_what(have, want, platform)
            policy = getattr(have, "policy", "")
            if (
                isinstance(have, MaskAttachment | RowFilterAttachment | ConstraintAttachment)
                and policy.upper() not in model_policies
            ):
                add(
                    "ACC702",
                    want,
                    f"{describe_object(want, platform)} is {policy}, which the model did not put there "
                    f"(the model attaches {want.policy}){overrides(have)}",  # type: ignore[union-attr]
                    f"accord plan --base live:{platform} replaces it (--adopt takes it over)",
                )
            else:
                add(
                    "ACC703",
                    want,
                    f"{describe_object(want, platform)} changed on the platform: {what}",
                    f"plan it from the live estate: accord plan --base live:{platform}",
                    dimension_at(project, locator, want, have, platform),
                )
    for name in live.insecure_salts:
        salt = live.catalog.get(SaltFunction, name) or SaltFunction(name, "", "")
        add(
            "ACC703",
            model_objs.get(identity(salt), salt),
            f"salt function {name} is not SECURE: any role that can see it reads the salt",
            f"recreate it as a SECURE function: accord plan --base live:{platform}",
        )
    for g in live.salt_grants:
        salt = live.catalog.get(SaltFunction, g.function) or SaltFunction(g.function, "", "")
        owner = live.salt_owners.get(g.function, "its owner")
        through = f" through {g.via}" if g.via else ""
        spelling = platform_named(platform).migrations()
        reach = f" ({g.reach})" if g.reach else ""
        add(
            "ACC705",
            model_objs.get(identity(salt), salt),
            f"salt function {g.function} grants {g.privilege} to "
            f"{spelling.grantee(g.grantee, g.kind)}{through}"
            f"{reach}: whoever holds it can select the salt (only {owner}, the owner of the "
            "policies that call it, may)",
            spelling.revoke_hint(g.function, g.privilege, g.grantee, g.via, g.kind),
        )
    for access in live.access_policies:  # ABAC GRANT policies over governed tables
        if not access.widens:
            continue
        what = access.text
        findings.append(
            Finding(
                project.loc("platforms", platform),
                "ACC702",
                f"platforms.{platform}",
                f"{platform}: {what}: the model did not put it there, and it changes what "
                "identities can reach",
                "remove it (DROP POLICY ... ON ...), or model what it is for",
            )
        )
    for what in live.not_in_effect:
        findings.append(
            Finding(
                project.loc("platforms", platform),
                "ACC703",
                f"platforms.{platform}",
                f"{platform}: {what}: the platform does not enforce this policy reference",
                f"re-apply it: accord plan --base live:{platform}",
            )
        )
    unseen = live.coverage.unseen if live.coverage is not None else []
    for u in unseen:
        findings.append(
            Finding(
                project.loc("platforms", platform),
                "ACC707",
                f"platforms.{platform}",
                f"{platform}: {u.sentence()}",
                f"grant the reading role what `accord introspect --check-reader --platform "
                f"{platform}` says is missing, and run drift again",
            )
        )
    if live.coverage is None:  # a catalog read without a coverage record proves nothing either
        for what in live.unreadable:
            findings.append(
                Finding(
                    project.loc("platforms", platform),
                    "ACC707",
                    f"platforms.{platform}",
                    f"{platform}: the reading role cannot see {what}: drift of it is not proven",
                    "grant the reading role the privileges docs/live.md lists (Reader grants), and run drift again",
                )
            )
    return findings


def mapping_findings(
    project: Project, platform: str, want: MappingTable, have: MappingTable, locator: Locator
) -> list[Finding]:
    """A mapping table's rows against the model's: a (value, identity) pair the platform
    lacks or holds beyond the model (ACC704 at the entitlement dimension); with grants until a
    date, a pair whose expiry differs (ACC704 at the grant's ``until``, or at the grant when
    the model's is standing), said as a widening (the platform holds it longer: a later day,
    or NULL, standing, where the model has a day) or a narrowing; and a live table without
    the expiry column the model's dated grants need (ACC703 at the first such grant: the
    table's shape changed, and the policies that read the column cannot run)."""
    loc, owner = locator.at(want, platform)
    fix = f"re-apply the grants: accord plan --base live:{platform}"
    out: list[Finding] = []
    dated = want.expiry_column is not None and have.expiry_column is not None
    if want.expiry_column is not None and have.expiry_column is None:
        path = first_dated(project, want.dimension)
        out.append(
            Finding(
                project.loc(*path) if path else loc,
                "ACC703",
                owner,
                f"{platform}: {want.name} has no column {want.expiry_column}: the model's grants "
                f"of {want.dimension!r} until a date cannot expire there, and the policies that "
                "read the column cannot run",
                f"add the column: accord plan --base live:{platform}",
            )
        )
    want_days = {(r[0], r[1]): (r[2] if len(r) > 2 else None) for r in want.rows}
    have_days = {(r[0], r[1]): (r[2] if len(r) > 2 else None) for r in have.rows}
    lost = sorted(want_days.keys() - have_days.keys())
    extra = sorted(have_days.keys() - want_days.keys())
    if lost or extra:
        out.append(
            Finding(
                loc,
                "ACC704",
                owner,
                f"{platform}: {want.name} differs from the model's entitlement "
                f"{want.dimension!r}: "
                + "; ".join(
                    [f"missing {v!r} -> {p}" for v, p in lost]
                    + [f"extra {v!r} -> {p}{_held(have_days[(v, p)], dated)}" for v, p in extra]
                ),
                fix,
            )
        )
    if not dated:
        return out
    for pair in sorted(want_days.keys() & have_days.keys()):
        model_day, live_day = want_days[pair], have_days[pair]
        if model_day == live_day:
            continue
        value, who = pair
        longer = live_day is None or (model_day is not None and live_day > model_day)
        path = grant_path(project, platform, want.dimension, value, who)
        out.append(
            Finding(
                project.loc(*path) if path else loc,
                "ACC704",
                owner,
                f"{platform}: {want.name}: {value!r} -> {who} holds "
                f"{_through(live_day)} on the platform, the model's grant {_through(model_day)}: "
                + (
                    "a widening (the platform grants it longer)"
                    if longer
                    else "a narrowing (the platform ends it sooner)"
                ),
                fix,
            )
        )
    return out


def _through(day: str | None) -> str:
    return f"through {day}" if day else "standing (no end)"


def _held(day: str | None, dated: bool) -> str:
    return f" ({_through(day)})" if dated else ""


def first_dated(project: Project, dimension: str) -> tuple[str | int, ...] | None:
    """The path of the first grant of ``dimension`` with ``until``."""

    for value, entries in project.model.entitlements.get(dimension, {}).items():
        for i, e in enumerate(entries):
            if isinstance(e, Grant):
                return ("entitlements", dimension, value, i, "until")
    return None


def grant_path(
    project: Project, platform: str, dimension: str, value: str, who: str
) -> tuple[str | int, ...] | None:
    """Where the model grants ``value`` of ``dimension`` to the platform identity ``who``:
    the ``until`` of the grant that decides the row's expiry (the latest; a standing grant
    outlasts every date, and is the entry itself)."""

    entries = project.model.entitlements.get(dimension, {}).get(value, [])
    found: list[tuple[int, Any]] = []
    for i, e in enumerate(entries):
        p = project.model.principals.get(principal_of(e))
        identity_ = getattr(p, platform, None) if p is not None else None
        if identity_ and str(identity_).upper() == who.upper():
            found.append((i, until_of(e)))
    if not found:
        return (
            ("entitlements", dimension, value)
            if value in project.model.entitlements.get(dimension, {})
            else None
        )
    standing = [i for i, until in found if until is None]
    if standing:
        return ("entitlements", dimension, value, standing[0])
    i, _ = max(found, key=lambda f: f[1])
    return ("entitlements", dimension, value, i, "until")


def _principals(project: Project, platform: str) -> dict[str, str]:
    out = {}
    for name, p in project.model.principals.items():
        identity_ = getattr(p, platform, None)
        if identity_:
            out[str(identity_).upper()] = name
    return out


def drift_across(
    project: Project, lives: dict[str, LiveCatalog], locator: Locator
) -> list[Finding]:
    """Mapping rows that differ between the platforms' copies of one dimension."""
    if len(lives) < 2:
        return []
    per: dict[str, dict[str, dict[str, set[str]]]] = {}
    for platform, live in lives.items():
        who = _principals(project, platform)
        for table in live.catalog.of(MappingTable):
            grants = per.setdefault(table.dimension, {}).setdefault(platform, {})
            for row in table.rows:
                value, identity_ = row[0], row[1]
                held = f" through {row[2]}" if len(row) > 2 and row[2] else ""
                name = who.get(identity_.upper(), f"<{identity_}>")
                grants.setdefault(value, set()).add(f"{name}{held}")
    findings = []
    for dim, sides in sorted(per.items()):
        if len(sides) < 2:
            continue
        (pa, a), (pb, b) = sorted(sides.items())
        for value in sorted(a.keys() | b.keys()):
            if a.get(value, set()) != b.get(value, set()):
                findings.append(
                    Finding(
                        project.loc("entitlements", dim, value)
                        if value in project.model.entitlements.get(dim, {})
                        else project.loc("entitlements", dim),
                        "ACC704",
                        f"entitlements.{dim}",
                        f"dimension {dim!r}, value {value!r}: {pa} grants "
                        f"{', '.join(sorted(a.get(value, ()))) or 'nobody'}, {pb} grants "
                        f"{', '.join(sorted(b.get(value, ()))) or 'nobody'}",
                        "re-apply the model's grants on the platform that drifted",
                    )
                )
    return findings


def canary_query(function: str, platform: str) -> str:
    """SELECT SHA2(<canary> || salt(), 256): the digest that shows which salt is live."""

    call = tsql.call(function, platform)
    joined = platform_named(platform).target().concat(tsql.literal(CANARY), call)
    digest = exp.Anonymous(this="SHA2", expressions=[joined, exp.Literal.number(256)])
    return tsql.render(exp.select(digest.as_("canary_digest")), platform)


@dataclass(frozen=True)
class Canary:
    """One salt function's canary: the digest the platform computes and the one the referenced
    salt gives (``error`` when the query could not run)."""

    platform: str
    salt: SaltFunction
    live: str
    want: str
    error: str = ""


def canaries(lives: dict[str, LiveCatalog], executors: dict[str, Any]) -> list[Canary]:
    """Every salt function whose salt is in the environment, with its canary digests."""

    box = SaltBox()
    out = []
    for platform, live in lives.items():
        for salt in live.catalog.of(SaltFunction):
            try:
                value = box(salt.salt_ref) if salt.salt_ref else None
            except SaltError:
                value = None  # no salt in the environment: nothing to compare
            if value is None:
                continue
            want = hashlib.sha256((CANARY + value).encode()).hexdigest()
            try:
                rows = executors[platform].query(canary_query(salt.name, platform))
            except ExecutionError as err:
                out.append(Canary(platform, salt, "", want, as_reader(err)))
                continue
            digest = str(next(iter(rows[0].values()))) if rows else ""
            out.append(Canary(platform, salt, digest, want))
    return out


def canary_findings(
    project: Project, lives: dict[str, LiveCatalog], executors: dict[str, Any], locator: Locator
) -> list[Finding]:
    """ACC706: with the salts in the environment, each live salt's canary digest."""
    digests: dict[str, list[tuple[str, str, SaltFunction]]] = {}
    findings = []
    for c in canaries(lives, executors):
        loc, owner = locator.at(c.salt, c.platform)
        name, ref = c.salt.name, c.salt.salt_ref
        if c.error:
            message = (
                f"could not run the canary query of {name} ({c.error}): drift cannot say the "
                "live salt is the referenced one"
            )
            fix = "grant the reading role USAGE / EXECUTE on the salt function, or run drift as its owner"
        elif c.live != c.want:
            message = (
                f"salt function {name} does not return the salt {ref} names (canary digest "
                f"{c.live[:16]}, expected {c.want[:16]})"
            )
            fix = f"re-create it: accord plan --base live:{c.platform}"
        else:
            message = ""
        if message:
            findings.append(Finding(loc, "ACC706", owner, f"{c.platform}: {message}", fix))
        if not c.error:
            digests.setdefault(c.salt.mask, []).append((c.platform, c.live, c.salt))
    for mask, seen in sorted(digests.items()):
        if len(seen) > 1 and len({d for _, d, _ in seen}) == 1:
            platform, _, salt = seen[0]
            loc, owner = locator.at(salt, platform)
            findings.append(
                Finding(
                    loc,
                    "ACC706",
                    owner,
                    f"mask {mask}: the live salts give the same canary digest on "
                    f"{', '.join(sorted(p for p, _, _ in seen))}: masked rows join across them",
                    "give each platform its own salt",
                )
            )
    return findings


def omission_findings(project: Project, executors: dict[str, Any]) -> list[Finding]:
    """ACC701: a replica's ``omits`` says its table lacks a masked column of the source; the
    live table is asked (``information_schema.columns``). A column that is there carries none
    of the source's mask (accord compiled none for it), so platform users read it in the
    clear; columns that cannot be read are said so, never taken for absent."""
    m = project.model
    findings: list[Finding] = []
    for name in sorted(m.datasets):
        ds = m.datasets[name]
        executor = executors.get(ds.platform)
        if not ds.omits or executor is None:
            continue
        found = table_columns(ds.platform, executor, ds.table)
        if isinstance(found, str):
            findings.append(
                Finding(
                    project.loc("datasets", name, "omits"),
                    "ACC701",
                    f"datasets.{name}",
                    f"{ds.platform}: could not read {found}: drift cannot say the omitted "
                    "columns are absent",
                    "grant the reading role the privileges docs/live.md lists (Reader grants), and run drift again",
                )
            )
            continue
        live = {c.lower(): c for c in found}
        src = m.datasets.get(ds.replica_of or "")
        for i, col in enumerate(ds.omits):
            if col.lower() not in live:
                continue
            spec = None
            if src is not None:
                spec = next((s for c, s in src.columns.items() if c.lower() == col.lower()), None)
            mask = (
                f"mask {spec.mask} of {ds.replica_of}.{col}" if spec and spec.mask else "the mask"
            )
            findings.append(
                Finding(
                    project.loc("datasets", name, "omits", i),
                    "ACC701",
                    f"datasets.{name}",
                    f"{ds.platform}: {ds.table} has column {live[col.lower()]}, which "
                    f"datasets.{name}.omits says it lacks: the {mask} is not applied to it, so "
                    "platform users read it in the clear",
                    f"remove {col} from datasets.{name}.omits (the replica then inherits the "
                    f"mask), and plan it: accord plan --base live:{ds.platform}",
                )
            )
    return findings


def drift(
    project: Project,
    expected: dict[str, Catalog],
    lives: dict[str, LiveCatalog],
    executors: dict[str, Any] | None = None,
) -> list[Finding]:
    locator = Locator(project, expected)
    findings: list[Finding] = []
    for platform, live in lives.items():
        findings += drift_platform(project, expected[platform], live, locator)
    findings += drift_across(project, lives, locator)
    findings += hierarchy_findings(project, lives)  # ACC708
    if executors:
        findings += canary_findings(project, lives, executors, locator)
        findings += omission_findings(project, {p: e for p, e in executors.items() if p in lives})
    return sorted(set(findings))


def unmanaged(expected: Catalog, live: LiveCatalog) -> Iterable[CatalogObject]:
    """Placements on governed tables and columns the model did not make (plan --adopt): an
    attachment or ABAC policy of a policy that neither the model nor the governance schema
    defines, or one of the model's policy in a place the model does not put it. A placement
    of a policy the governance schema defines and the model no longer has is accord's own
    earlier one (the one-dimension filter a two-dimension filter replaces, and its ABAC
    policy): the plan swaps it out and drops the policy, as a plan from a recorded base
    does."""
    model_ids = {identity(o) for o in expected}
    policies = RowFilterPolicy | MaskPolicy | ConstraintPolicy
    model_policies = {o.name.upper() for o in expected if isinstance(o, policies)}
    retired = {o.name.upper() for o in live.catalog if isinstance(o, policies)} - model_policies
    for o in live.catalog:
        if is_definition(o):
            continue
        uses = getattr(o, "policy", None) or getattr(o, "function", None) or ""
        attached = MaskAttachment | RowFilterAttachment | ConstraintAttachment
        if isinstance(o, attached | AbacPolicy) and uses.upper() in retired:
            continue
        foreign = isinstance(o, attached) and o.policy.upper() not in model_policies
        if identity(o) not in model_ids or foreign:
            yield o
