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

from accord.compiler.core.errors import Location
from accord.compiler.lint.finding import Finding
from accord.compiler.live.hierarchy import hierarchy_findings
from accord.compiler.live.introspect import LiveCatalog, same_body, sf_revoke, table_columns
from accord.compiler.model.replicas import column_path
from accord.compiler.model.validate import Project
from accord.targets.identity import describe_object, fingerprint, identity, is_definition
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

CANARY = "accord-canary"


class Locator:
    """Where in the YAML the model asks for a catalog object."""

    def __init__(self, project: Project, expected: dict[str, Catalog]) -> None:
        self.project = project
        self.model = project.model
        self.policy_uses: dict[str, CatalogObject] = {}
        self.policies: dict[str, CatalogObject] = {}
        for catalog in expected.values():
            for o in catalog:
                if isinstance(o, MaskPolicy | RowFilterPolicy):
                    self.policies[o.name.upper()] = o
                if isinstance(o, MaskAttachment | RowFilterAttachment):
                    self.policy_uses.setdefault(o.policy.upper(), o)

    def dataset_of(self, table: str) -> str | None:
        for name, ds in self.model.datasets.items():
            if ds.table.upper() == table.upper():
                return name
        return None

    def column_key(self, dataset: str, column: str) -> str | None:
        ds = self.model.datasets[dataset]
        return next((c for c in ds.columns if c.upper() == column.upper()), None)

    def at(self, obj: CatalogObject, platform: str) -> tuple[Location, str]:
        p = self.project
        if isinstance(obj, MaskAttachment | RowFilterAttachment | TagAssignment):
            ds = self.dataset_of(obj.table)
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
        if (
            isinstance(obj, MaskPolicy | SaltFunction)
            and getattr(obj, "mask", "") in self.model.masks
        ):
            return p.loc("masks", obj.mask), f"masks.{obj.mask}"
        if (
            isinstance(obj, MappingTable | RowFilterPolicy)
            and obj.dimension in self.model.entitlements
        ):
            return p.loc("entitlements", obj.dimension), f"entitlements.{obj.dimension}"
        if isinstance(obj, Tag) and obj.masking_policies:
            policy = self.policies.get(obj.masking_policies[0].upper())
            if policy is not None:
                return self.at(policy, platform)
        if isinstance(obj, AbacPolicy) and obj.datasets:
            return p.loc("datasets", obj.datasets[0]), f"datasets.{obj.datasets[0]}"
        use = self.policy_uses.get(getattr(obj, "name", "").upper())
        if use is not None:
            return self.at(use, platform)
        return p.loc("platforms", platform), f"platforms.{platform}"


def _changed_what(old: CatalogObject, new: CatalogObject, platform: str) -> str:
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
        return "its arguments differ"
    return "its definition differs"


def drift_platform(
    project: Project, expected: Catalog, live: LiveCatalog, locator: Locator
) -> list[Finding]:
    platform = expected.platform
    findings: list[Finding] = []
    model_objs = {identity(o): o for o in expected}
    live_objs = {identity(o): o for o in live.catalog}
    model_policies = {
        o.name.upper() for o in expected if isinstance(o, RowFilterPolicy | MaskPolicy)
    }
    model_policies |= {o.function.upper() for o in expected if isinstance(o, AbacPolicy)}

    def add(rule: str, obj: CatalogObject, message: str, fix: str) -> None:
        loc, owner = locator.at(obj, platform)
        findings.append(Finding(loc, rule, owner, f"{platform}: {message}", fix))

    def overrides(obj: CatalogObject) -> str:
        """A direct mask on a column a tag also masks decides what readers see."""
        if not isinstance(obj, MaskAttachment):
            return ""
        over = live.overrides.get(f"{obj.table}.{obj.column}".upper())
        return f"; this policy overrides the tag's ({over})" if over else ""

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
            if set(want.rows) != set(have.rows):
                extra = sorted(set(have.rows) - set(want.rows))
                lost = sorted(set(want.rows) - set(have.rows))
                add(
                    "ACC704",
                    want,
                    f"{want.name} differs from the model's entitlement {want.dimension!r}: "
                    + "; ".join(
                        [f"missing {v!r} -> {p}" for v, p in lost]
                        + [f"extra {v!r} -> {p}" for v, p in extra]
                    ),
                    f"re-apply the grants: accord plan --base live:{platform}",
                )
        elif fingerprint(want) != fingerprint(have):
            what = _changed_what(have, want, platform)
            policy = getattr(have, "policy", "")
            if (
                isinstance(have, MaskAttachment | RowFilterAttachment)
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
        kind = g.kind.replace("_", " ").lower() + " " if platform == "snowflake" else ""
        reach = f" ({g.reach})" if g.reach else ""
        add(
            "ACC705",
            model_objs.get(identity(salt), salt),
            f"salt function {g.function} grants {g.privilege} to {kind}{g.grantee}{through}"
            f"{reach}: whoever holds it can select the salt (only {owner}, the owner of the "
            "policies that call it, may)",
            sf_revoke(g.function, g.privilege, g.grantee, g.kind)
            if platform == "snowflake"
            else _revoke_hint(platform, g.function, g.privilege, g.grantee, g.via),
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
                    "grant the reading role the privileges the README lists, and run drift again",
                )
            )
    return findings


def _revoke_hint(platform: str, function: str, privilege: str, grantee: str, via: str) -> str:
    """What removes a Databricks salt grant, in words a person runs (Snowflake's is
    :func:`~compiler.live.introspect.sf_revoke`, spelled for the grantee's kind): Databricks SQL spells ``ALL
    PRIVILEGES`` in two words, revokes an inherited grant where it is made, and drops an ABAC
    GRANT policy (``accord plan --base live:`` writes the same, quoted)."""
    spelled = privilege.replace("_", " ")
    if via.startswith("policy "):
        policy, _, on = via.removeprefix("policy ").partition(" on ")
        kind, _, securable = on.partition(" ")
        return f"DROP POLICY {policy} ON {kind.upper()} {securable}, or narrow it"
    if via:
        kind, _, securable = via.partition(" ")
        return f"REVOKE {spelled} ON {kind.upper()} {securable} FROM {grantee}"
    return f"REVOKE {spelled} ON FUNCTION {function} FROM {grantee}"


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
            for value, identity_ in table.rows:
                grants.setdefault(value, set()).add(who.get(identity_.upper(), f"<{identity_}>"))
    findings = []
    for dim, sides in sorted(per.items()):
        if len(sides) < 2:
            continue
        (pa, a), (pb, b) = sorted(sides.items())
        for value in sorted(a.keys() | b.keys()):
            if a.get(value, set()) != b.get(value, set()):
                findings.append(
                    Finding(
                        project.loc("entitlements", dim),
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
    from accord.targets import sql as tsql
    from sqlglot import exp

    call = tsql.call(function, platform)
    canary = tsql.literal(CANARY)
    if platform == "snowflake":
        joined: exp.Expression = exp.DPipe(this=canary, expression=call)
    else:
        joined = exp.Anonymous(this="concat", expressions=[canary, call])
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
    from accord.compiler.connect.executor import ExecutionError
    from accord.compiler.model.salts import SaltBox, SaltError

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
                out.append(Canary(platform, salt, "", want, str(err)))
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
                    "grant the reading role the privileges the README lists, and run drift again",
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
    """Placements on governed tables and columns the model did not make (plan --adopt)."""
    model_ids = {identity(o) for o in expected}
    model_policies = {
        o.name.upper() for o in expected if isinstance(o, RowFilterPolicy | MaskPolicy)
    }
    for o in live.catalog:
        if is_definition(o):
            continue
        foreign = isinstance(o, MaskAttachment | RowFilterAttachment) and (
            o.policy.upper() not in model_policies
        )
        if identity(o) not in model_ids or foreign:
            yield o
