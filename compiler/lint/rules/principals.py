"""ACC502-ACC503, ACC507: principals granted where they have no identity; declarations
nothing uses; grants whose date has passed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from accord.compiler.core.today import today, today_source
from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.usage import platforms_in, usage
from accord.compiler.model.grants import principal_of, until_of
from accord.compiler.model.validate import dimension_path

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
    used = usage(ctx)

    def missing(principal: str, platforms: list[str]) -> list[str]:
        return [p for p in platforms if m.principals[principal].identity(p) is None]

    def finding(
        path: tuple[Any, ...], obj: str, principal: str, platform: str, what: str
    ) -> Finding:
        return Finding(
            ctx.project.loc(*path),
            "ACC502",
            obj,
            f"principal {principal} has no {platform} identity, but {what} on {platform}: "
            f"the grant does not exist there",
            f"add `{platform}: <{_IDENTITY[platform]}>` to principals.{principal}, or remove "
            f"{principal} here",
        )

    for dim in sorted(m.entitlements):
        on = used.dimension_datasets.get(dim, {})
        platforms = platforms_in(on)
        for value, principals in m.entitlements[dim].items():
            for i, entry in enumerate(principals):
                p = principal_of(entry)
                for platform in missing(p, platforms):
                    yield finding(
                        ("entitlements", dim, value, i),
                        f"entitlements.{dim}",
                        p,
                        platform,
                        f"entitlement {dim} grants it {value} for {', '.join(on[platform])}",
                    )
    for name in sorted(m.masks):
        platforms = platforms_in(used.mask_columns.get(name, {}))
        for i, p in enumerate(m.masks[name].unmasked_for):
            for platform in missing(p, platforms):
                yield finding(
                    ("masks", name, "unmasked_for", i),
                    f"masks.{name}",
                    p,
                    platform,
                    f"mask {name} shows it the clear value",
                )
    for name in sorted(m.datasets):
        ds = m.datasets[name]
        if ds.row_filter is None:
            continue
        for i, p in enumerate(ds.row_filter.unfiltered_for):
            for platform in missing(p, [ds.platform]):
                yield finding(
                    ("datasets", name, "row_filter", "unfiltered_for", i),
                    f"datasets.{name}",
                    p,
                    platform,
                    f"{name}'s row filter shows it every row",
                )
        for k, d in enumerate(ds.row_filter.dimensions or []):
            for i, p in enumerate(d.unfiltered_for):
                for platform in missing(p, [ds.platform]):
                    yield finding(
                        (*dimension_path(ctx.project, name, k), "unfiltered_for", i),
                        f"datasets.{name}",
                        p,
                        platform,
                        f"{name}'s row filter shows it every row of {d.entitlement}",
                    )


@rule("ACC503")
def unused(ctx: Context) -> Iterator[Finding]:
    """A principal, mask or entitlement dimension is declared and nothing refers to it.

    ## What it does
    Flags (as a warning) a principal that no persona, entitlement, `unmasked_for` or
    `unfiltered_for` names; a mask that no column uses; an entitlement dimension that no
    `row_filter` uses.

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
            used.referenced_principals,
            "is declared but no persona, entitlement, unmasked_for or unfiltered_for refers to it",
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
