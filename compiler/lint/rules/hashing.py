"""ACC201-ACC205: masks whose digests can be reversed, joined across platforms or read.

ACC201, ACC203 and ACC204 have a check over policy files (the model, the mask policies it
lowers to, hand-written predicates) and one over SQL files, side by side; the policy check's
docstring is the rule's page. ACC202 exists in policy files only, ACC205 in SQL files only.
SQL files are linted together, so ACC203 can compare masks across platforms and files.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from accord.compiler.core.errors import Location
from accord.compiler.lint.bodies import (
    MaskHash,
    access_views,
    at,
    describe,
    expressions,
    fold,
    mask_hashes,
    name_of,
    read_bodies,
    signatures,
    within,
)
from accord.compiler.lint.checks import Context, SqlContext, rule, sql_rule
from accord.compiler.lint.finding import Finding, SqlHit
from accord.compiler.lint.trees import (
    HashCall,
    Part,
    hash_calls,
    weak_hashes,
)
from accord.compiler.lint.usage import has_key, platforms_in, usage
from accord.targets.objects import MaskPolicy
from accord.targets.sql import render

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from accord.compiler.sqlscan import Statement


def _mask_loc(ctx: Context, mask: str, platform: str | None = None) -> Location:
    """The salt entry of ``platform`` if written, else the salt mapping, else the mask."""
    if platform is not None and has_key(ctx, "masks", mask, "salt", platform):
        return ctx.project.loc("masks", mask, "salt", platform)
    if has_key(ctx, "masks", mask, "salt"):
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
    nothing secret concatenated to it: alone, or mixed only with what anyone who may query the
    platform can compute. Another column of the same row, `CURRENT_ACCOUNT()`,
    `CURRENT_DATABASE()`, `current_catalog()`, `current_metastore()` and the other context and
    built-in functions are public (in a Snowflake policy body `CURRENT_DATABASE()` and
    `CURRENT_SCHEMA()` even return the protected table's database and schema: constants).
    Only a call of a function the platform does not define
    (a salt function such as `gov.pol.subject_salt()`) or Databricks' `secret(scope, key)`
    counts as a salt; a salt written as a literal is ACC205.

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
    CREATE MASKING POLICY gov.pol.email_mask AS (val VARCHAR) RETURNS VARCHAR ->
      SHA2(val || CURRENT_ACCOUNT(), 256);  -- the account name is no secret
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


def _quote(node: exp.Expression, dialect: str) -> str:
    """An expression as a message quotes it: without the SQL comments sqlglot keeps on it."""
    bare = node.copy()
    for n in bare.walk():
        n.comments = None
    return render(bare, dialect)


def _mixed(call: HashCall) -> str:
    """What a message says is mixed into the value: nothing, or only public pieces."""
    public = list(dict.fromkeys(call.public))
    if not public:
        return "with nothing mixed in"
    return (
        f"with only public values mixed in, {' and '.join(public)}, which anyone who may query "
        "the platform knows (no salt)"
    )


def _strong(call: HashCall) -> str:
    """The hash a fix names: the call's own when it is SHA-2, never one ACC204 flags."""
    return call.function if call.function.startswith("SHA2") and not call.weak else "SHA2"


@sql_rule("ACC201")
def unsalted_hash_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC201 in mask bodies (see the policy-file check for the rule page)."""
    for found in mask_hashes(ctx):
        if not found.call.unsalted:
            continue
        stmt, call = found.stmt, found.call
        value = next(text for kind, text in call.parts if kind == "value")
        finding = Finding(
            at(stmt, call.node),
            "ACC201",
            stmt.name or "",
            f"{describe(stmt)} hashes the masked value {value} {_mixed(call)} "
            f"({_quote(call.node, stmt.dialect)}): anyone can hash candidate values and match the "
            "digests, and the same value gets the same digest on every platform",
            f"mix in a secret salt read from a secure function: "
            f"{_strong(call)}({value} || <governance schema>.<mask>_salt(), 256), "
            "a different secret on each platform",
        )
        yield SqlHit(finding, (stmt,))
    for target in access_views(ctx):
        stmt = target.stmt
        for call in hash_calls(target.body, None, stmt.dialect):
            if not call.unsalted:
                continue
            value = next(text for kind, text in call.parts if kind == "value")
            finding = Finding(
                at(stmt, call.node),
                "ACC201",
                name_of(target),
                f"{target.what} hashes {value} {_mixed(call)} "
                f"({_quote(call.node, stmt.dialect)}): anyone can hash candidate values and "
                "match the digests, and the same value gets the same digest on every platform",
                f"mix in a secret salt read from a secure function: "
                f"{_strong(call)}({value} || <governance schema>.<mask>_salt(), 256), "
                "a different secret on each platform",
            )
            yield SqlHit(finding, (stmt,))


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
        for platform in platforms_in(salt):
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
            platforms = platforms_in(by_platform)
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


@dataclass(frozen=True)
class _Place:
    mask: MaskHash
    attachment: Statement

    @property
    def dialect(self) -> str:
        return self.mask.stmt.dialect

    @property
    def location(self) -> Location:
        return at(self.mask.stmt, self.mask.call.node)


def _salt_literals(ctx: SqlContext) -> dict[tuple[str, str], str]:
    """(dialect, folded name) -> the value of a salt function whose body is one literal."""
    out: dict[tuple[str, str], str] = {}
    for (dialect, name), stmt in signatures(ctx).items():
        if stmt.kind == "function" and not stmt.params and isinstance(stmt.body, exp.Literal):
            out[(dialect, name)] = stmt.body.this
            out.setdefault((dialect, name.rsplit(".", 1)[-1]), stmt.body.this)
    return out


def _digest_signature(ctx: SqlContext, found: MaskHash) -> tuple[tuple[str, ...], tuple[Part, ...]]:
    """What decides the digest: the hash and its bit length, and the input's pieces in order,
    with salt functions resolved to their literal value when the files define them so. Any
    other piece (an opaque function, a column) is unique to its statement."""
    literals = _salt_literals(ctx)
    parts: list[Part] = []
    for kind, text in found.call.parts:
        if kind == "value":
            parts.append(("value", ""))
        elif kind == "literal":
            parts.append(("literal", text))
        elif kind == "call" and (found.stmt.dialect, text) in literals:
            parts.append(("literal", literals[(found.stmt.dialect, text)]))
        else:
            parts.append(("opaque", f"{found.stmt.file}:{found.stmt.line}:{kind}:{text}"))
    return found.call.algorithm, tuple(parts)


@sql_rule("ACC203")
def joinable_digest_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC203 across SQL files (see the policy-file check for the rule page)."""
    masks: dict[tuple[str, str], list[MaskHash]] = defaultdict(list)
    by_last: dict[tuple[str, str], list[MaskHash]] = defaultdict(list)
    for found in mask_hashes(ctx):
        name = fold(found.stmt.name or "")
        masks[(found.stmt.dialect, name)].append(found)
        by_last[(found.stmt.dialect, name.rsplit(".", 1)[-1])].append(found)
    groups: dict[tuple[str, object], list[_Place]] = defaultdict(list)
    for stmt in ctx.statements:
        if stmt.kind not in ("set_masking_policy", "set_mask") or not stmt.policy:
            continue
        if not stmt.column_name:
            continue
        policy = fold(stmt.policy)
        hashes = masks.get((stmt.dialect, policy))
        if hashes is None:
            candidates = by_last.get((stmt.dialect, policy.rsplit(".", 1)[-1]), [])
            if len({id(h.stmt) for h in candidates}) != 1:
                continue
            hashes = candidates
        for found in hashes:
            key = (fold(stmt.column_name), _digest_signature(ctx, found))
            groups[key].append(_Place(found, stmt))
    for (column, _), places in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len({p.dialect for p in places}) < 2:
            continue
        places = sorted(places, key=lambda p: (p.location, p.attachment.line))
        # one place per mask position and attached column (a body may hash twice)
        unique = {(p.location, p.attachment.table, p.attachment.column_name): p for p in places}
        places = list(unique.values())
        first = places[0]
        listed = "; ".join(
            f"{p.location} ({p.dialect} {describe(p.mask.stmt)} on "
            f"{p.attachment.table}.{p.attachment.column_name})"
            for p in places
        )
        finding = Finding(
            first.location,
            "ACC203",
            first.mask.stmt.name or "",
            f"column {column} gets identical digests on "
            f"{' and '.join(sorted({p.dialect for p in places}))}: the same "
            f"{first.mask.call.function} with the same (or no) salt in {listed}; masked rows "
            "join across the platforms on the digest",
            "mix a different secret salt into the hash on each platform, read from a secure "
            "salt function",
            related=tuple(
                dict.fromkeys(p.location for p in places[1:] if p.location != first.location)
            ),
        )
        statements = tuple(s for p in places for s in (p.mask.stmt, p.attachment))
        yield SqlHit(finding, statements)


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
    for e in expressions(ctx):
        for node, name in weak_hashes(e.tree, e.platform):
            yield Finding(
                within(ctx, e, node),
                "ACC204",
                f"datasets.{e.dataset}",
                f"the {e.platform} row filter of {e.dataset} calls {name}(), {weak_reason(name)}",
                "use SHA2(<value> || <secret salt>, 256)",
            )


@sql_rule("ACC204")
def weak_hash_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC204 in policy and function bodies (see the policy-file check for the rule page)."""
    for target in read_bodies(ctx):
        stmt = target.stmt
        for node, name in weak_hashes(target.body, stmt.dialect):
            finding = Finding(
                at(stmt, node),
                "ACC204",
                name_of(target),
                f"{target.what} calls {name}(), {weak_reason(name)}",
                "use SHA2(<value> || <secret salt function>(), 256)",
            )
            yield SqlHit(finding, (stmt,))


def weak_reason(name: str) -> str:
    if name.startswith(("MD5", "SHA1")):
        return "a broken hash: cheap to collide and to guess inputs for"
    return "a non-cryptographic hash: its digests are reversible and collide"


@sql_rule("ACC205")
def literal_salt(ctx: SqlContext) -> Iterator[SqlHit]:
    """A salt is written as a literal in a policy body.

    ## What it does
    Flags a mask (a Snowflake masking policy or `ALTER ... SET BODY`, a Databricks mask
    function, a non-secure Snowflake function) whose hash input is the masked value
    concatenated with string or number literals only, such as
    `SHA2(val || 'pepper', 256)` or `sha2(concat(v, 'pepper'), 256)`. The literal's value is
    never printed in the finding. Applies to SQL files (accord itself never writes a salt
    into a policy body).

    ## Why is this bad?
    A salt is only a secret while nobody can read it. Snowflake shows a policy's body to every
    role with APPLY MASKING POLICY, APPLY on the policy or its OWNERSHIP (`DESCRIBE`,
    `GET_DDL`, `ACCOUNT_USAGE.MASKING_POLICIES.POLICY_BODY`); a Databricks function's body is
    shown to whoever may describe the function. The literal also sits in the repository and
    in every deployment log. Anyone who reads it can hash candidate identifiers with it and
    reverse the pseudonyms, as if there were no salt (ACC201); and the same literal on two
    platforms gives identical digests (ACC203).

    ## Example
    ```sql
    CREATE MASKING POLICY gov.pol.subject_mask AS (val VARCHAR) RETURNS VARCHAR ->
      CASE WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') THEN val
           ELSE SHA2(val || 'n0t-s0-s3cret', 256) END;
    ```

    ## How to fix
    Read the salt from a function whose body its callers cannot see, created from a secret at
    deployment time: a Snowflake `SECURE` function (whose body only its owner sees), a
    Databricks function with EXECUTE granted to the mask owner only. This is what
    `strategy: hash` with `salt:` compiles to:
    `SHA2(val || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)`.
    """
    for found in mask_hashes(ctx):
        stmt, call = found.stmt, found.call
        if not call.literal_salt or (stmt.kind == "function" and stmt.secure):
            continue
        finding = Finding(
            at(stmt, call.node),
            "ACC205",
            stmt.name or "",
            f"{describe(stmt)} salts its hash with a literal written in the body: every role "
            "that may describe the policy (APPLY, OWNERSHIP), and every reader of this file, "
            "can read the salt",
            "read the salt from a secure function created from a secret at deployment "
            "(what `salt:` in the policy model compiles to), and rotate the exposed one",
        )
        yield SqlHit(finding, (stmt,))
