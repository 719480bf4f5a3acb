"""Rules over policy files: the validated model, its lowered catalogs and its semantics.

Each check's docstring is the rule's documentation page (``docs/rules.md``). Findings name the
YAML node that causes them (``project.loc`` / ``project.key_loc``) and the entry they belong to
(``object``), whose ``ignore:`` may suppress them.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from compiler.core.errors import Location
from compiler.lint import Context, Finding, rule
from compiler.lint.sources import source_line
from compiler.lint.trees import (
    hash_calls,
    role_calls,
    start_offset,
    weak_hashes,
    workspace_group_calls,
)
from compiler.meaning import semantics as sem
from compiler.meaning.divergence import Divergence, divergences
from compiler.model.expressions import ExpressionError, parse_predicate
from compiler.model.schema import PLATFORMS
from targets.objects import MaskPolicy
from targets.sql import render

_IDENTITY = {"snowflake": "role", "databricks": "account group"}


# --------------------------------------------------------------------------------------------
# what the model uses where (computed once per run)


@dataclass(frozen=True)
class Usage:
    #: mask -> platform -> [(dataset, column)] of the columns it masks there
    mask_columns: dict[str, dict[str, list[tuple[str, str]]]]
    #: entitlement dimension -> platform -> datasets filtered by it there
    dimension_datasets: dict[str, dict[str, list[str]]]
    #: every principal something refers to
    referenced_principals: frozenset[str]


def usage(ctx: Context) -> Usage:
    def compute() -> Usage:
        m = ctx.model
        masks: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
        dims: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        referenced: set[str] = set()
        for name in sorted(m.datasets):
            ds = m.datasets[name]
            for col, spec in ds.columns.items():
                if spec.mask:
                    masks[spec.mask][ds.platform].append((name, col))
            if ds.row_filter is not None:
                if ds.row_filter.entitlement:
                    dims[ds.row_filter.entitlement][ds.platform].append(name)
                referenced.update(ds.row_filter.unfiltered_for)
        for principals in m.personas.values():
            referenced.update(principals)
        for values in m.entitlements.values():
            for principals in values.values():
                referenced.update(principals)
        for mask in m.masks.values():
            referenced.update(mask.unmasked_for)
        return Usage(
            {k: dict(v) for k, v in masks.items()},
            {k: dict(v) for k, v in dims.items()},
            frozenset(referenced),
        )

    result: Usage = ctx.memo("model_rules.usage", compute)
    return result


def _on(platforms: dict[str, Any]) -> list[str]:
    """The platforms among the keys, in the canonical order."""
    return [p for p in PLATFORMS if p in platforms]


def _has_key(ctx: Context, *path: Any) -> bool:
    return tuple(path) in ctx.project.source.keys


# --------------------------------------------------------------------------------------------
# hand-written row-filter predicates


@dataclass(frozen=True)
class _Expression:
    dataset: str
    platform: str
    text: str
    tree: exp.Expression
    path: tuple[Any, ...]


def _expressions(ctx: Context) -> Iterator[_Expression]:
    for name in sorted(ctx.model.datasets):
        rf = ctx.model.datasets[name].row_filter
        if rf is None or rf.expression is None:
            continue
        for platform in _on(rf.expression):
            text = rf.expression[platform]  # type: ignore[index]
            try:
                tree = parse_predicate(text, platform)
            except ExpressionError:  # validation reports it; nothing to lint
                continue
            path = ("datasets", name, "row_filter", "expression", platform)
            yield _Expression(name, platform, text, tree, path)


def _within(ctx: Context, e: _Expression, node: exp.Expression) -> Location:
    """The position of ``node`` inside the YAML scalar holding the expression, when the scalar
    is written on one line exactly as parsed (plain or quoted without escapes); else the
    scalar's own position."""
    where = ctx.project.loc(*e.path)
    offset = start_offset(node)
    line = source_line(where.file, where.line)
    if offset is None or line is None or "\n" in e.text:
        return where
    begin = where.column - 1
    if line[begin : begin + 1] in ("'", '"'):
        begin += 1
    if line[begin : begin + len(e.text)] != e.text:
        return where
    return Location(where.file, where.line, begin + offset + 1)


@rule("ACC101")
def current_role(ctx: Context) -> Iterator[Finding]:
    """A Snowflake policy expression asks for the primary role only.

    ## What it does
    Flags `CURRENT_ROLE()` and `CURRENT_AVAILABLE_ROLES()` in Snowflake policy expressions:
    hand-written `row_filter.expression.snowflake` predicates, and the bodies of row access
    policies, masking policies and functions in Snowflake SQL files.

    ## Why is this bad?
    `CURRENT_ROLE()` is the session's *primary* role only. A user whose grant sits on a
    secondary role is denied by a policy written with it, and agents and other
    platform-established sessions often run under the user's default role, so the case is
    common rather than rare. `CURRENT_AVAILABLE_ROLES()` ignores which roles are active:
    Snowflake warns that in a policy it "might inadvertently restrict access".
    `IS_ROLE_IN_SESSION(r)` is true when any active primary or secondary role inherits `r`,
    and is what Snowflake recommends for policy conditions.

    ## Example
    ```yaml
    datasets:
      assay_results:
        platform: snowflake
        table: DISCOVERY.ASSAYS.RESULTS
        row_filter:
          expression:
            snowflake: "PROGRAMME_CODE IN (SELECT g.PROGRAMME_CODE FROM GOV.POL.GRANTS g
                        WHERE g.ROLE_NAME = CURRENT_ROLE())"
          arguments: {PROGRAMME_CODE: VARCHAR}
    ```
    ```sql
    CREATE MASKING POLICY gov.pol.notes_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN CURRENT_ROLE() = 'CLINICAL_UNBLINDED' THEN val ELSE '***' END;
    ```

    ## How to fix
    Let accord write the role check: `row_filter: {entitlement: programme, column:
    PROGRAMME_CODE}` compiles to `IS_ROLE_IN_SESSION(g.ROLE_NAME)`. In hand-written SQL,
    replace `CURRENT_ROLE() = 'R'` with `IS_ROLE_IN_SESSION('R')` and a lookup on
    `CURRENT_ROLE()` with `IS_ROLE_IN_SESSION(g.ROLE_NAME)`.
    """
    for e in _expressions(ctx):
        if e.platform != "snowflake":
            continue
        for node, name in role_calls(e.tree):
            yield Finding(
                _within(ctx, e, node),
                "ACC101",
                f"datasets.{e.dataset}",
                current_role_message(name, f"the Snowflake row filter of {e.dataset}"),
                "use IS_ROLE_IN_SESSION(<role>), which sees primary and secondary roles, or "
                "replace the expression with `entitlement:` and `column:` so accord writes "
                "the role check",
            )


def current_role_message(function: str, where: str) -> str:
    if function == "CURRENT_ROLE":
        return (
            f"{where} calls CURRENT_ROLE(), the session's primary role only: a user whose "
            "grant sits on a secondary role is denied"
        )
    return (
        f"{where} calls CURRENT_AVAILABLE_ROLES(), which ignores which roles are active in "
        "the session and may restrict (or widen) access unexpectedly"
    )


@rule("ACC102")
def workspace_group_check(ctx: Context) -> Iterator[Finding]:
    """A Databricks filter or mask checks workspace-local groups.

    ## What it does
    Flags `is_member(...)` in Databricks policy expressions: hand-written
    `row_filter.expression.databricks` predicates and function bodies in Databricks SQL
    files.

    ## Why is this bad?
    `is_member()` checks *workspace-local* groups. Unity Catalog grants, and the groups
    accord's principals name, are *account* groups: a user in the account group but not in a
    same-named workspace group is denied, and a workspace admin can add anyone to a
    workspace group to pass the check. Databricks' own documentation of `is_member()` says to
    use `is_account_group_member()` in most cases.

    ## Example
    ```yaml
    row_filter:
      expression:
        databricks: "region = 'EU' OR is_member('global-readers')"
      arguments: {region: STRING}
    ```

    ## How to fix
    Call `is_account_group_member('global-readers')`, or use an entitlement row filter,
    which accord compiles with `is_account_group_member()`.
    """
    for e in _expressions(ctx):
        if e.platform != "databricks":
            continue
        for node in workspace_group_calls(e.tree):
            yield Finding(
                _within(ctx, e, node),
                "ACC102",
                f"datasets.{e.dataset}",
                workspace_group_message(f"the Databricks row filter of {e.dataset}"),
                "call is_account_group_member(<group>) instead of is_member(<group>)",
            )


def workspace_group_message(where: str) -> str:
    return (
        f"{where} calls is_member(), which checks workspace-local groups, not the account "
        "groups that Unity Catalog grants name"
    )


@rule("ACC204")
def weak_hash(ctx: Context) -> Iterator[Finding]:
    """A mask or predicate uses MD5, SHA-1 or a non-cryptographic hash.

    ## What it does
    Flags `MD5` (and `MD5_HEX`, `MD5_BINARY`, `MD5_NUMBER_*`), `SHA1` (and `SHA1_HEX`,
    `SHA1_BINARY`, Databricks `sha`) and the non-cryptographic `HASH()` of Snowflake (and
    `hash`, `xxhash64`, `crc32` of Databricks) in hand-written `row_filter.expression`
    predicates and in policy and function bodies of SQL files.

    ## Why is this bad?
    Snowflake's `HASH()` is a 64-bit non-cryptographic hash that its documentation says
    "should not be used" as one; Databricks' `hash()` is a 32-bit Murmur3. MD5 and SHA-1 are
    broken: collisions are cheap, and their speed makes guessing inputs cheap. A pseudonym
    built on any of them is reversible or collides.

    ## Example
    ```sql
    CREATE MASKING POLICY gov.pol.subject_mask AS (val VARCHAR) RETURNS VARCHAR ->
      MD5(val || gov.pol.subject_salt());
    ```

    ## How to fix
    Use SHA-256 with a secret salt, as `strategy: hash` compiles to:
    `SHA2(val || gov.pol.subject_salt(), 256)`.
    """
    for e in _expressions(ctx):
        for node, name in weak_hashes(e.tree, e.platform):
            yield Finding(
                _within(ctx, e, node),
                "ACC204",
                f"datasets.{e.dataset}",
                f"the {e.platform} row filter of {e.dataset} calls {name}(), {weak_reason(name)}",
                "use SHA2(<value> || <secret salt>, 256)",
            )


def weak_reason(name: str) -> str:
    if name.startswith(("MD5", "SHA1")):
        return "a broken hash: cheap to collide and to guess inputs for"
    return "a non-cryptographic hash: its digests are reversible and collide"


# --------------------------------------------------------------------------------------------
# salts and digests


def _mask_loc(ctx: Context, mask: str, platform: str | None = None) -> Location:
    """The salt entry of ``platform`` if written, else the salt mapping, else the mask."""
    if platform is not None and _has_key(ctx, "masks", mask, "salt", platform):
        return ctx.project.loc("masks", mask, "salt", platform)
    if _has_key(ctx, "masks", mask, "salt"):
        return ctx.project.loc("masks", mask, "salt")
    return ctx.project.key_loc("masks", mask)


def _salt_example(mask: str, platform: str) -> str:
    return f"env:{mask.upper()}_SALT_{platform.upper()}"


@rule("ACC201")
def unsalted_hash(ctx: Context) -> Iterator[Finding]:
    """A deterministic hash mask has nothing secret mixed into its input.

    ## What it does
    In policy files: flags a `strategy: hash` mask with no `salt` for a platform on which a
    column uses it (read from the mask policies accord lowers the model to: the hash input is
    the masked value alone). In SQL files: flags a mask whose hash input is the masked value
    (the mask's first parameter, possibly through casts, trimming or case changes) with
    nothing else concatenated to it.

    ## Why is this bad?
    A deterministic hash of an identifier is a pseudonym only while nobody can compute it.
    Identifiers come from small, guessable spaces: anyone can hash every candidate subject
    id and read the digests back. Snowflake's documentation warns that hashing values used
    in joins lets them be reverse-engineered. And without a per-platform secret, the same
    value gets the same digest everywhere (ACC203).

    ## Example
    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash
        unmasked_for: [clinical_unblinded]
    ```
    ```sql
    CREATE MASKING POLICY gov.pol.subject_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') THEN val ELSE SHA2(val, 256) END;
    ```

    ## How to fix
    Give the mask a secret salt on every platform that uses it, a different one on each:
    ```yaml
        salt:
          snowflake: env:SUBJECT_SALT_SNOWFLAKE
          databricks: env:SUBJECT_SALT_DATABRICKS
    ```
    accord compiles it to `SHA2(val || <salt function>(), 256)`, the salt function's body
    being filled from the secret only when the SQL is applied. In hand-written SQL, concatenate
    the value with a call of a secure salt function (never a literal: ACC205).
    """
    columns = usage(ctx).mask_columns
    for platform, catalog in ctx.catalogs.items():
        reported: set[str] = set()
        for policy in catalog.of(MaskPolicy):
            if policy.strategy != "hash" or policy.mask in reported:
                continue
            unsalted = [
                h for h in hash_calls(policy.body, policy.params[0].name, platform) if h.unsalted
            ]
            if not unsalted:
                continue
            reported.add(policy.mask)
            where = ", ".join(f"{d}.{c}" for d, c in columns.get(policy.mask, {}).get(platform, []))
            yield Finding(
                _mask_loc(ctx, policy.mask, platform),
                "ACC201",
                f"masks.{policy.mask}",
                f"mask {policy.mask} has no salt on {platform} (used by {where}): it "
                f"compiles to {render(unsalted[0].node, platform)}, the value alone, so anyone can "
                "hash candidate values and match the digests",
                f"add a secret salt for {platform}: `salt: {{{platform}: "
                f"{_salt_example(policy.mask, platform)}}}` (a different secret on each platform)",
            )


def _normalise_salt(ref: str) -> str:
    kind, _, target = ref.partition(":")
    return f"file:{posixpath.normpath(target)}" if kind == "file" else ref


@rule("ACC202")
def shared_salt(ctx: Context) -> Iterator[Finding]:
    """One salt reference is used on two platforms, or by two masks.

    ## What it does
    Flags every use of a `salt` reference (`env:NAME`, `file:PATH`) after its first, when the
    same reference salts the same mask on two platforms or two different masks.

    ## Why is this bad?
    A salt exists to make digests differ where they must not be joinable. One salt on two
    platforms gives a value the same digest on both, so masked rows join across the catalogs
    (the very defect ACC203 describes); one salt for two masks gives the same digest in two
    kinds of column. And one leaked secret then unmasks everything it salts.

    ## Example
    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash
        salt: {snowflake: env:SUBJECT_SALT, databricks: env:SUBJECT_SALT}
    ```

    ## How to fix
    Give every (mask, platform) its own secret:
    `salt: {snowflake: env:SUBJECT_SALT_SNOWFLAKE, databricks: env:SUBJECT_SALT_DATABRICKS}`.
    """
    uses: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name in sorted(ctx.model.masks):
        salt = ctx.model.masks[name].salt or {}
        for platform in _on(salt):
            uses[_normalise_salt(salt[platform])].append((name, platform))  # type: ignore[index]
    for ref, where in sorted(uses.items()):
        if len(where) < 2:
            continue  # nothing shares it (and nothing to locate)
        first_mask, first_platform = where[0]
        first = ctx.project.loc("masks", first_mask, "salt", first_platform)
        for mask, platform in where[1:]:
            if mask == first_mask:
                what = (
                    f"mask {mask} uses salt {ref} on both {first_platform} and {platform}: a "
                    "value gets the same digest on both platforms, so masked rows join across "
                    "them"
                )
            else:
                what = (
                    f"salt {ref} of mask {mask} ({platform}) is also the salt of mask "
                    f"{first_mask} ({first_platform}, {first}): both give a value the same digest"
                )
            yield Finding(
                ctx.project.loc("masks", mask, "salt", platform),
                "ACC202",
                f"masks.{mask}",
                what,
                f"give masks.{mask}.salt.{platform} a secret of its own, e.g. "
                f"{_salt_example(mask, platform)}",
            )


@rule("ACC203")
def joinable_digest(ctx: Context) -> Iterator[Finding]:
    """The same identifiers get identical digests on two platforms.

    ## What it does
    In policy files: for every identifier domain (`identifier:` on columns), flags columns on
    two platforms whose hash masks would give identical digests there: neither has a salt on
    its platform, or both use the same salt reference. In SQL files: flags masks with the
    same hash function and the same (or no) salt attached to columns of the same name
    (case-insensitively) on two platforms; the finding names both files and lines.

    ## Why is this bad?
    A deterministic mask maps a subject to the same digest every time. If the warehouse and
    the lakehouse compute the same digest, masked rows of the two catalogs join on it: a user
    allowed to see only masked data on both sides can still link a subject's assays to their
    variant calls, which is what masking was meant to prevent. Each catalog is sound alone;
    the leak exists only across them, so neither platform can see it.

    ## Example
    ```yaml
    masks:
      subject_pseudonym: {strategy: hash}        # no salt on either platform
    datasets:
      assay_results:                              # snowflake
        columns: {SUBJECT_ID: {type: VARCHAR, mask: subject_pseudonym, identifier: subject}}
      variant_calls:                              # databricks
        columns: {subject_id: {type: STRING, mask: subject_pseudonym, identifier: subject}}
    ```

    ## How to fix
    Salt the mask with a different secret on each platform:
    `salt: {snowflake: env:SUBJECT_SALT_SNOWFLAKE, databricks: env:SUBJECT_SALT_DATABRICKS}`.
    """
    m = ctx.model
    # domain -> digest key (salt reference or None) -> platform -> [(dataset, column, mask)]
    domains: dict[str, dict[str | None, dict[str, list[tuple[str, str, str]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for name in sorted(m.datasets):
        ds = m.datasets[name]
        for col, spec in ds.columns.items():
            if not spec.identifier or not spec.mask or m.masks[spec.mask].strategy != "hash":
                continue
            ref = (m.masks[spec.mask].salt or {}).get(ds.platform)  # type: ignore[call-overload]
            key = _normalise_salt(ref) if ref else None
            domains[spec.identifier][key][ds.platform].append((name, col, spec.mask))
    for domain in sorted(domains):
        for key, by_platform in sorted(domains[domain].items(), key=lambda kv: kv[0] or ""):
            platforms = _on(by_platform)
            if len(platforms) < 2:
                continue
            listed = "; ".join(
                f"{p}: " + ", ".join(f"{d}.{c} (mask {k})" for d, c, k in by_platform[p])
                for p in platforms
            )
            salt = "no salt" if key is None else f"the same salt {key}"
            _, _, anchor_mask = by_platform[platforms[-1]][0]
            masks = sorted({k for p in platforms for _, _, k in by_platform[p]})
            yield Finding(
                _mask_loc(ctx, anchor_mask, platforms[-1]),
                "ACC203",
                f"masks.{anchor_mask}",
                f"identifier domain {domain} gets identical digests on "
                f"{' and '.join(platforms)} ({salt}): {listed}; masked rows join across the "
                "platforms on the digest",
                f"salt {', '.join(f'masks.{k}' for k in masks)} with a different secret on each "
                "platform: `salt: {"
                + ", ".join(f"{p}: {_salt_example(masks[0], p)}" for p in platforms)
                + "}`",
            )


# --------------------------------------------------------------------------------------------
# derived objects and surfaces


@rule("ACC301")
def index_over_governed_data(ctx: Context) -> Iterator[Finding]:
    """A retrieval index exposes what its source's policies withhold.

    ## What it does
    - **Cortex Search** (`kind: cortex_search`): fires when the source has a row filter or
      the index holds a masked column, unless `inherit_governance: true`.
    - **Databricks vector search** over a *table-style* governed table (`style: table`):
      fires when the source has any row filter or mask.
    - **Databricks vector search** over an *ABAC-governed* table (`style: abac`): fires when
      the source has a row filter or the index holds (`columns`) a masked column.

    ## Why is this bad?
    A Cortex Search service runs with its owner's rights: any role that may query it sees
    everything it indexed, whatever its privileges on the source table. The public-preview
    option `INHERIT_DATA_GOVERNANCE_POLICIES = TRUE` re-applies the source's policies in the
    caller's context. Databricks cannot create a vector (AI Search) index from a table that
    has table-level row filters or column masks at all; over an ABAC-governed table it builds
    one that syncs every row and enforces neither filter nor mask at query time (masked
    columns can be left out with the columns-to-sync setting).

    ## Example
    ```yaml
    indexes:
      assay_search:
        platform: snowflake
        kind: cortex_search
        source: assay_results          # row-filtered, NOTES masked
        columns: [NOTES, SUBJECT_ID]
        inherit_governance: false
    ```

    ## How to fix
    For Cortex Search, set `inherit_governance: true`. For vector search, build the index
    over an ungoverned, de-identified table; under ABAC, at least leave masked columns out of
    `columns` and index only a table without a row filter.
    """
    m = ctx.model
    style = m.platforms.databricks.style if m.platforms.databricks is not None else "table"
    for name in sorted(m.indexes):
        idx = m.indexes[name]
        src = m.datasets[idx.source]
        held = {c.lower() for c in idx.columns}
        masked_held = [c for c in src.masked_columns if c.lower() in held]
        exposed = []
        if src.row_filter is not None:
            exposed.append("every row its row filter withholds")
        if masked_held:
            exposed.append("clear values of masked " + ", ".join(masked_held))
        where = None  # located only once a finding is certain
        if idx.kind == "cortex_search":
            if idx.inherit_governance or not exposed:
                continue
            if _has_key(ctx, "indexes", name, "inherit_governance"):
                where = ctx.project.loc("indexes", name, "inherit_governance")
            message = (
                f"Cortex Search service {name} answers with its owner's rights over "
                f"{idx.source}: every caller gets {' and '.join(exposed)}"
            )
            fix = "set `inherit_governance: true` (INHERIT_DATA_GOVERNANCE_POLICIES = TRUE)"
        elif style == "abac":
            if not exposed:
                continue
            message = (
                f"vector index {name} over ABAC-governed {idx.source} syncs every row and "
                f"enforces neither filter nor mask: it answers {' and '.join(exposed)}"
            )
            fix = (
                "index an ungoverned, de-identified table instead; at least leave masked "
                "columns out of `columns` and index no row-filtered table"
            )
        else:
            if not src.governed:
                continue
            message = (
                f"vector index {name} over {idx.source}, which has table-level "
                f"{'row filter' if src.row_filter else 'masks'}: Databricks cannot build an "
                "index over a table with row filters or column masks"
            )
            fix = "index an ungoverned, de-identified copy of the data instead"
        if where is None:
            where = ctx.project.key_loc("indexes", name)
        yield Finding(where, "ACC301", f"indexes.{name}", message, fix)


@rule("ACC401")
def unsupported_runtime(ctx: Context) -> Iterator[Finding]:
    """A Databricks surface reads governed data on a runtime that returns no rows for it.

    ## What it does
    Flags a Databricks surface that reads a governed dataset on a numbered `runtime` below the
    one its policies need: 12.2 for table-level filters and masks, 15.4 in `access_mode:
    dedicated`, 16.4 when the platform's `style` is `abac`. `serverless` and `sql-warehouse`
    (always current) are fine.

    ## Why is this bad?
    Runtimes too old for the policies fail *securely but silently*: reading the table returns
    no data, with no error. An agent on such a runtime confidently answers "no variant calls"
    to everyone, entitled or not, and nothing in the logs says why.

    ## Example
    ```yaml
    platforms:
      databricks: {governance_schema: governance.policies, style: abac}
    surfaces:
      lakehouse_agent:
        platform: databricks
        reads: [variant_calls]
        runtime: "14.3"
    ```

    ## How to fix
    Run the surface on a runtime that applies the policies (the finding names the version),
    or on serverless compute or a SQL warehouse.
    """
    m = ctx.model
    for name in sorted(m.surfaces):
        surface = m.surfaces[name]
        refusal = sem.runtime_refusal(m, surface)
        governed = [d for d in surface.reads if m.datasets[d].governed]
        if refusal is None or not governed:
            continue
        needed, _ = sem.required_runtime(m, surface)
        yield Finding(
            ctx.project.loc("surfaces", name, "runtime"),
            "ACC401",
            f"surfaces.{name}",
            f"{name} reads governed {', '.join(governed)}, but {refusal}, with no error",
            f'set `runtime: "{needed[0]}.{needed[1]}"` or later (or serverless / sql-warehouse)',
        )


@rule("ACC402")
def ungoverned_surface(ctx: Context) -> Iterator[Finding]:
    """A surface with no catalog, or with a service identity, reads governed data.

    ## What it does
    Flags every governed dataset in the `reads` of a surface with `platform: none` (a
    pipeline or tool server outside any catalog) or `identity: service` (one identity
    answers for everyone).

    ## Why is this bad?
    Row filters and masks are evaluated for the identity that queries the catalog. A surface
    with no catalog has nothing between its callers and the data; a surface with a service
    identity is governed for the service, not for whoever asks it. Either way every caller
    gets what the surface itself may read: the mesh answers whatever its loosest surface
    answers (ACC403 compares it with the others).

    ## Example
    ```yaml
    surfaces:
      variant_annotation:
        platform: none
        reads: [variant_calls]          # row-filtered, subject_id masked
        identity: service
    ```

    ## How to fix
    Answer such questions through a caller-identity surface on the catalog
    (`identity: caller`), or give the surface an ungoverned, de-identified dataset to read.
    """
    m = ctx.model
    for name in sorted(m.surfaces):
        surface = m.surfaces[name]
        mode = sem.enforcement(m, name).mode
        if mode not in ("none", "service"):
            continue
        why = (
            "it has no catalog (platform none): nothing applies the row filter and masks"
            if mode == "none"
            else "it runs as one service identity: the catalog applies the row filter and "
            "masks for the service, not"
        )
        for i, dataset in enumerate(surface.reads):
            if not m.datasets[dataset].governed:
                continue
            yield Finding(
                ctx.project.loc("surfaces", name, "reads", i),
                "ACC402",
                f"surfaces.{name}",
                f"{name} reads governed dataset {dataset}, but {why} for whoever asks it: "
                "every caller gets what the surface can read",
                f"read {dataset} through a surface with `identity: caller` on "
                f"{m.datasets[dataset].platform}, or give {name} an ungoverned, de-identified "
                "dataset",
            )


@rule("ACC403")
def loosest_surface(ctx: Context) -> Iterator[Finding]:
    """The same facts are less restricted on one surface than on another.

    ## What it does
    For every persona, compares what each surface answers of the same facts (a dataset and
    its `replica_of` copies; an `identifier` domain across datasets), on every surface that
    reads them, including surfaces with no catalog. Fires for each surface that shows some
    persona more rows or clearer columns than the strictest surface reading the same facts:
    one finding per (facts, loose surface), listing the personas and what differs.

    Datasets that share an identifier domain hold the same kind of identifier, not the same
    rows: for a domain, what is compared is how the identifier value is exposed (clear or
    masked) on each surface where the persona reaches rows. Being denied every row of one
    dataset while seeing a masked identifier in another is not a divergence, nor are two
    datasets read by the same surface (a surface is not looser than itself).

    A surface whose runtime returns no rows (ACC401) is compared by what its catalog's
    policies intend: its failure is reported by ACC401 and is not a restriction.
    `accord analyze` reports the same divergences (one function computes them), and
    honours `ignore: {ACC403: "why"}` on the looser surface, listing those separately.

    ## Why is this bad?
    The mesh answers whatever its loosest surface answers. A persona denied a programme on the
    lakehouse agent gets it from a pipeline that reads the same table with no catalog; a
    subject id masked in the warehouse is clear in a replica. No platform sees the
    difference, because each enforces only its own policies. The per-persona meaning of the
    model is computed once, by `compiler.meaning.semantics` (also behind `accord analyze` and
    `accord verify`).

    ## Example
    ```yaml
    surfaces:
      lakehouse_agent: {platform: databricks, reads: [variant_calls], identity: caller}
      variant_annotation: {platform: none, reads: [variant_calls], identity: service}
    ```
    The CRO collaborator sees CNS-204 rows of `variant_calls` through the agent and every row
    through the pipeline.

    ## How to fix
    Make the loose surface enforce what the strict one does: read through a caller-identity
    surface on a catalog, give replicas the same row filter and masks as their original, and
    mask every column of an identifier domain alike; or stop reading the facts there.
    """
    m = ctx.model
    group_size = Counter(m.replica_root(d) for d in m.datasets)
    groups: dict[tuple[tuple[str, str], str], list[Divergence]] = defaultdict(list)
    for d in divergences(m, refused_as_intended=True):
        groups[(d.facts, d.loose.surface)].append(d)
    for (facts, surface), found in sorted(groups.items()):
        kind, name = facts
        what = (
            f"the facts of {name}" + (" and its replicas" if group_size[name] > 1 else "")
            if kind == "dataset"
            else f"{name} identifiers"
        )
        # one clause per (what differs, where): the personas it differs for, with the first
        # persona's detail (row sets differ per persona)
        clauses: dict[tuple[object, ...], list[Divergence]] = defaultdict(list)
        for d in found:
            clauses[(d.aspect, d.loose, d.strict)].append(d)
        parts = []
        for same in clauses.values():
            personas_here = [d.persona for d in same]
            if len({d.detail for d in same}) == 1:
                parts.append(f"{same[0].detail} (for {', '.join(personas_here)})")
            else:
                parts.append(
                    f"{same[0].detail} (for {personas_here[0]}; likewise for "
                    f"{', '.join(personas_here[1:])})"
                )
        shown = "; ".join(parts[:4]) + (f"; and {len(parts) - 4} more" if len(parts) > 4 else "")
        stricter = sorted({d.strict.surface for d in found})
        personas = sorted({d.persona for d in found})
        read = m.surfaces[surface].reads.index(found[0].loose.dataset)
        yield Finding(
            ctx.project.loc("surfaces", surface, "reads", read),
            "ACC403",
            f"surfaces.{surface}",
            f"{surface} is looser than {', '.join(stricter)} on {what} for "
            f"{', '.join(personas)}: {shown}",
            f"make {surface} enforce what {', '.join(stricter)} enforce(s) for {what} "
            "(caller identity on a catalog, the same filter and masks on every replica and "
            f"every column of the domain), or stop reading them on {surface}",
        )


# --------------------------------------------------------------------------------------------
# principals and declarations


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
        platforms = _on(on)
        for value, principals in m.entitlements[dim].items():
            for i, p in enumerate(principals):
                for platform in missing(p, platforms):
                    yield finding(
                        ("entitlements", dim, value, i),
                        f"entitlements.{dim}",
                        p,
                        platform,
                        f"entitlement {dim} grants it {value} for {', '.join(on[platform])}",
                    )
    for name in sorted(m.masks):
        platforms = _on(used.mask_columns.get(name, {}))
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
    for name in sorted(m.principals):
        if name not in used.referenced_principals:
            yield Finding(
                ctx.project.key_loc("principals", name),
                "ACC503",
                f"principals.{name}",
                f"principal {name} is declared but no persona, entitlement, unmasked_for or "
                "unfiltered_for refers to it",
                f"refer to {name} where it was meant to be granted, or delete it",
            )
    for name in sorted(m.masks):
        if name not in used.mask_columns:
            yield Finding(
                ctx.project.key_loc("masks", name),
                "ACC503",
                f"masks.{name}",
                f"mask {name} is declared but no column uses it",
                f"add `mask: {name}` to the columns it should protect, or delete it",
            )
    for name in sorted(m.entitlements):
        if name not in used.dimension_datasets:
            yield Finding(
                ctx.project.key_loc("entitlements", name),
                "ACC503",
                f"entitlements.{name}",
                f"entitlement dimension {name} is declared but no row_filter uses it (it still "
                "compiles to a mapping table on every platform)",
                f"add `row_filter: {{entitlement: {name}, column: ...}}` to the datasets it "
                "should filter, or delete it",
            )
