"""ACC502-ACC503, ACC507-ACC509: principals granted where they have no identity;
declarations nothing uses; grants whose date has passed; grants to an identity every user
holds; two principals of one identity given different grants."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.core.today import today, today_source
from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.usage import describe, grant_sites, referenced_principals, usage
from accord.compiler.model.grants import principal_of, until_of
from accord.compiler.model.hierarchy import effective

if TYPE_CHECKING:
    from accord.compiler.model.schema import PolicyModel

_IDENTITY = {"snowflake": "role", "databricks": "account group"}


@rule("ACC502")
def missing_identity(ctx: Context) -> Iterator[Finding]:
    """A principal is granted something on a platform where it has no identity.

    ## What it does
    Flags a principal listed, for a platform it has no identity on, in:
    - an entitlement value, when a dataset on that platform is filtered by the dimension;
    - a mask's `unmasked_for`, when a column on that platform uses the mask;
    - a row filter's `unfiltered_for`, on the dataset's platform.

    A persona holding such a principal is not flagged by itself: personas are not compiled,
    and a principal with no identity on a platform grants nothing there, which matters
    exactly where it is granted something on that platform, the places above.

    ## Why is this bad?
    accord writes a principal's platform identity (a Snowflake role, a Databricks account
    group) into mapping tables and policies; with none, the grant is silently missing on that
    platform. The principal then sees fewer rows or more masked values on one platform than
    on the other, which is a divergence nobody declared (and, read from the other side, an
    entitlement that only half exists).

    ## Example
    ```yaml
    principals:
      cro_external: {snowflake: CRO_EXTERNAL}        # no databricks group
    entitlements:
      programme:
        CNS-204: [cro_external]                       # variant_calls (databricks) filters by it
    ```

    ## How to fix
    Give the principal its identity on that platform (`databricks: cro-external`), or stop
    granting it there.
    """
    m = ctx.model
    for site in grant_sites(ctx):
        if m.principals[site.principal].identity(site.platform) is not None:
            continue
        p, platform = site.principal, site.platform
        yield Finding(
            ctx.project.loc(*site.path),
            "ACC502",
            site.obj,
            f"principal {p} has no {platform} identity, but {site.what} on {platform}: "
            f"the grant does not exist there",
            f"add `{platform}: <{_IDENTITY[platform]}>` to principals.{p}, or remove {p} here",
        )


@rule("ACC503")
def unused(ctx: Context) -> Iterator[Finding]:
    """A principal, mask or entitlement dimension is declared and nothing refers to it.

    ## What it does
    Flags (as a warning) a principal that no persona, entitlement, `unmasked_for`,
    `unfiltered_for`, `allowed_for` (projection) or `unrestricted_for` (aggregation, join)
    names; a mask that no column uses; an entitlement dimension that no `row_filter` uses.

    ## Why is this bad?
    An unused declaration is usually a mistake elsewhere: a column that was meant to carry
    the mask, a dataset whose filter names another dimension, a principal whose grants were
    lost in an edit. Unused dimensions still compile to mapping tables on every platform.

    ## Example
    ```yaml
    masks:
      phone: {strategy: partial, keep_last: 4}   # no column has `mask: phone`
    ```

    ## How to fix
    Use it where it was meant to be used, or delete it.
    """
    m = ctx.model
    used = usage(ctx)
    # (section, what an entry is, the names used, what is wrong, the fix)
    declared = (
        (
            "principals",
            "principal {}",
            referenced_principals(ctx),
            "is declared but no persona, entitlement, unmasked_for, unfiltered_for, allowed_for "
            "or unrestricted_for refers to it",
            "refer to {} where it was meant to be granted, or delete it",
        ),
        (
            "masks",
            "mask {}",
            used.mask_columns,
            "is declared but no column uses it",
            "add `mask: {}` to the columns it should protect, or delete it",
        ),
        (
            "entitlements",
            "entitlement dimension {}",
            used.dimension_datasets,
            "is declared but no row_filter uses it (it still compiles to a mapping table on "
            "every platform)",
            "add `row_filter: {{entitlement: {}, column: ...}}` to the datasets it should "
            "filter, or delete it",
        ),
    )
    for section, what, uses, message, fix in declared:
        for name in sorted(getattr(m, section)):
            if name not in uses:
                yield Finding(
                    ctx.project.key_loc(section, name),
                    "ACC503",
                    f"{section}.{name}",
                    f"{what.format(name)} {message}",
                    fix.format(name),
                )


@rule("ACC507")
def expired_grant(ctx: Context) -> Iterator[Finding]:
    """An entitlement grant's `until` date has passed.

    ## What it does
    Flags (as a warning) every `{principal: NAME, until: YYYY-MM-DD}` entry of an
    entitlement value whose date is before the date lint judges at, and states that date
    and where it comes from: `ACCORD_TODAY` (YYYY-MM-DD) when set, else today in UTC. Set
    `ACCORD_TODAY` to make a run, or a rerun of an old commit, judge at a fixed date.

    ## Why is this bad?
    The compiled policies already deny the grant (its mapping row carries the date and a row
    is admitted only while `CURRENT_DATE()` is on or before it), so nothing leaks. But the
    entry still says the principal holds the value: an access review reads a grant that no
    longer exists, and a later edit that drops `until` (or extends it by mistake) would
    grant it again silently.

    ## Example
    ```yaml
    entitlements:
      programme:
        ONC-101: [bench_chemist, {principal: cro_external, until: 2026-03-31}]
    ```

    ## How to fix
    Delete the entry once the access review confirms the grant ended, or extend `until`
    through a reviewed change (`accord diff` reports an extended expiry as a widening).
    """
    m = ctx.model
    dates = [
        until_of(e) for values in m.entitlements.values() for es in values.values() for e in es
    ]
    if not any(dates):
        return
    now = today()
    for dim in sorted(m.entitlements):
        for value, entries in m.entitlements[dim].items():
            for i, entry in enumerate(entries):
                until = until_of(entry)
                if until is None or until >= now:
                    continue
                p = principal_of(entry)
                yield Finding(
                    ctx.project.loc("entitlements", dim, value, i, "until"),
                    "ACC507",
                    f"entitlements.{dim}",
                    f"the grant of {dim} {value} to {p} ended on {until.isoformat()} (lint "
                    f"judges at {now.isoformat()}, {today_source()}): the policies deny it, "
                    "the model still lists it",
                    "delete the entry, or extend `until` in a reviewed change",
                )


def _everyone(ctx: Context, principal: str, platform: str) -> str | None:
    """The principal's identity on ``platform`` when every user of the platform holds it."""
    identity = ctx.model.principals[principal].identity(platform)
    return identity if identity is not None and facts(platform).is_everyone(identity) else None


@rule("ACC508")
def everyone_identity(ctx: Context) -> Iterator[Finding]:
    """A principal whose identity every user holds is granted rows, a clear value or every row.

    ## What it does
    Flags a principal whose identity on a platform is one every user of the platform holds
    (Snowflake `PUBLIC`; Databricks `account users` and the workspace `users` group, compared
    without case) wherever the model gives it something on that platform, the places ACC502
    reads:
    - an entitlement value, when a dataset on that platform is filtered by the dimension;
    - a mask's `unmasked_for`, when a column on that platform uses the mask;
    - a row filter's `unfiltered_for`, on the dataset's platform.

    It also flags such a principal's `inherits` entry when the principal inherited is given
    something on that platform: its role is then granted to `PUBLIC` (its group has every
    user nested in it), so every user holds it too. A principal that merely inherits `PUBLIC`
    is not flagged: every role holds `PUBLIC` anyway, and granting to it is what matters.

    ## Why is this bad?
    A policy that lets `PUBLIC` (or `account users`) see rows or clear values lets everyone
    see them: the model then governs nobody, however carefully the other principals are
    written. Every report of the model (`accord analyze`, probes) still names the principal as
    if it were one group of people.

    ## Example
    ```yaml
    principals:
      everyone: {snowflake: PUBLIC, databricks: account users}
    masks:
      subject_pseudonym:
        strategy: hash
        unmasked_for: [clinical_unblinded, everyone]   # every user sees subject ids
    ```

    ## How to fix
    Grant it to a role or group that only the intended users hold, or remove the principal
    from the grant.
    """
    m = ctx.model
    sites = grant_sites(ctx)
    for site in sites:
        identity = _everyone(ctx, site.principal, site.platform)
        if identity is None:
            continue
        yield Finding(
            ctx.project.loc(*site.path),
            "ACC508",
            site.obj,
            f"principal {site.principal} is '{identity}' on {site.platform}, which every user "
            f"holds, and {site.what} there: every user of {facts(site.platform).title} is "
            "given it, so the model governs nobody",
            f"grant it to a {facts(site.platform).principal_kind} only the intended users hold, "
            f"or remove {site.principal} here",
        )
    for name in sorted(m.principals):
        for platform in PLATFORMS:
            identity = _everyone(ctx, name, platform)
            if identity is None:
                continue
            for i, parent in enumerate(m.principals[name].inherits):
                held = effective(m, [parent], platform)
                given = [s for s in sites if s.platform == platform and s.principal in held]
                if not given:
                    continue
                first = given[0]
                through = "" if first.principal == parent else f" (through {first.principal})"
                more = f" and {len(given) - 1} more" if len(given) > 1 else ""
                yield Finding(
                    ctx.project.loc("principals", name, "inherits", i),
                    "ACC508",
                    f"principals.{name}",
                    f"principal {name} is '{identity}' on {platform}, which every user holds, "
                    f"and inherits {parent}, which is given {describe(first.given)}{through}"
                    f"{more} there: every user of {facts(platform).title} holds {parent}, so "
                    "the model governs nobody",
                    f"remove {parent} from principals.{name}.inherits",
                )


@rule("ACC509")
def identity_collision(ctx: Context) -> Iterator[Finding]:
    """Two principals of one identity on a platform are given different grants there.

    ## What it does
    Groups the principals by their identity on each platform (Snowflake role names as stored,
    Databricks group names without case) and compares, within a group, what the model gives
    each on that platform, with what it inherits: the entitlement values whose datasets are on
    the platform (with their `until`), the masks whose `unmasked_for` shows it the clear value
    of a column there, the row filters whose `unfiltered_for` shows it every row. A principal
    given something the first principal of its identity (in file order) is not, or not given
    something it is, is reported at its identity.

    ## Why is this bad?
    The platform checks the identity, not the principal's name: a session holding the role
    holds both principals' grants at once. The model claims a distinction the platform cannot
    make, and every judgment made per principal (`accord analyze`, probes, `accord diff`)
    describes access nobody has: the smaller grant is in fact the larger.

    ## Example
    ```yaml
    principals:
      cro_external: {snowflake: CRO_EXTERNAL, databricks: cro-external}
      cro_audit: {snowflake: CRO_EXTERNAL, databricks: cro-external}   # the CRO's own role
    entitlements:
      programme:
        CNS-204: [cro_external]
        ONC-101: [cro_audit]              # the CRO now sees ONC-101 as well
    ```

    ## How to fix
    Give the new principal its own role or group, or give both principals the same grants (or
    keep only one of them).
    """
    m = ctx.model
    sites = grant_sites(ctx)
    for platform in PLATFORMS:
        fold = facts(platform).fold_identity
        groups: dict[str, list[str]] = defaultdict(list)
        for name, principal in m.principals.items():
            identity = principal.identity(platform)
            if identity is not None:
                groups[fold(identity)].append(name)
        direct: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for site in sites:
            if site.platform == platform:
                direct[site.principal].add(site.given)

        for members in groups.values():
            if len(members) < 2:
                continue
            first, *others = sorted(
                members, key=lambda p: ctx.project.loc("principals", p, platform)
            )
            theirs = _given(m, first, platform, direct)
            for name in others:
                mine = _given(m, name, platform, direct)
                if mine == theirs:
                    continue
                only = [
                    f"only {who}: {_listed(extra)}"
                    for who, extra in ((name, mine - theirs), (first, theirs - mine))
                    if extra
                ]
                identity = m.principals[name].identity(platform)
                yield Finding(
                    ctx.project.loc("principals", name, platform),
                    "ACC509",
                    f"principals.{name}",
                    f"principals {first} and {name} are both '{identity}' on {platform}, but the "
                    f"model gives them different grants there ({'; '.join(only)}): "
                    f"{facts(platform).title} cannot tell them apart, so each is given what "
                    "either is",
                    f"give {name} its own {facts(platform).principal_kind} on {platform}, or the "
                    f"same grants as {first}",
                )


def _given(
    model: PolicyModel, name: str, platform: str, direct: dict[str, set[tuple[str, ...]]]
) -> set[tuple[str, ...]]:
    """What ``name`` is given on ``platform``: its own grants and those of every principal it
    inherits there (``direct``: each principal's own)."""
    held: set[tuple[str, ...]] = set()
    for p in effective(model, [name], platform):
        held |= direct.get(p, set())
    return held


def _listed(given: set[tuple[str, ...]]) -> str:
    """At most three of ``given``, described, in order, and how many more."""
    said = sorted(describe(g) for g in given)
    more = f" and {len(said) - 3} more" if len(said) > 3 else ""
    return ", ".join(said[:3]) + more
