"""Rules over hand-written policy DDL, scanned by :mod:`compiler.sqlscan`.

Every check reads statement bodies as sqlglot trees (through :mod:`compiler.lint.trees`) and
locates findings with :func:`compiler.sqlscan.node_position`. Files are linted together, so
ACC203 can compare masks across platforms. Views that decide access per caller (a Databricks
dynamic view calling ``is_member`` / ``is_account_group_member`` / ``current_user``, a
Snowflake secure view calling ``CURRENT_ROLE`` / ``IS_ROLE_IN_SESSION``) are read like mask
and filter bodies for ACC101, ACC102, ACC201 and ACC204; a view that only computes, say, an
``md5`` surrogate key is not. The rule pages of ACC101, ACC102, ACC201, ACC203 and ACC204 are
the docstrings of their policy-file checks (``model_rules``); ACC205 exists in SQL only and
is documented here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from compiler.core.errors import Location
from compiler.lint import Finding, SqlContext, SqlHit, sql_rule
from compiler.lint.model_rules import current_role_message, weak_reason, workspace_group_message
from compiler.lint.trees import (
    HashCall,
    Part,
    hash_calls,
    role_calls,
    weak_hashes,
    workspace_group_calls,
)
from targets.sql import render

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from compiler.sqlscan import Statement

_WHAT = {
    "masking_policy": "masking policy",
    "row_access_policy": "row access policy",
    "alter_policy_body": "policy",
    "function": "function",
}
#: statements whose body may mask a value: the first parameter is the masked value
_MASKING = ("masking_policy", "alter_policy_body", "function")


def _bodies(ctx: SqlContext, kinds: tuple[str, ...] = tuple(_WHAT)) -> Iterator[Statement]:
    for stmt in ctx.statements:
        if stmt.kind in kinds and stmt.body is not None:
            yield stmt


#: calls that make a view decide access per caller (a dynamic view, a secure view)
_ACCESS_CALLS = frozenset(
    {
        "is_member",
        "is_account_group_member",
        "is_role_in_session",
        "current_user",
        "current_role",
        "current_available_roles",
        "invoker_role",
        "is_database_role_in_session",
    }
)


def _decides_access(tree: exp.Expression) -> bool:
    if role_calls(tree):
        return True
    for node in tree.find_all(exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        if name.lower() in _ACCESS_CALLS or isinstance(node, exp.CurrentUser):
            return True
    return False


@dataclass(frozen=True)
class _Target:
    """A body lint reads: a policy or function body, or the query of a view that decides
    access per caller (a Databricks dynamic view, a Snowflake secure view)."""

    stmt: Statement
    body: exp.Expression
    what: str
    view: bool = False


def _views(ctx: SqlContext) -> list[_Target]:
    def compute() -> list[_Target]:
        out = []
        for stmt in ctx.statements:
            create = stmt.expression
            if stmt.kind != "other" or not isinstance(create, exp.Create):
                continue
            if str(create.args.get("kind") or "").upper() != "VIEW":
                continue
            query = create.expression
            if query is None or not _decides_access(query):
                continue
            props = create.args.get("properties")
            secure = props is not None and any(
                isinstance(p, exp.SecureProperty) for p in props.expressions
            )
            if stmt.dialect == "snowflake" and not secure:
                continue
            kind = "secure view" if secure else "dynamic view"
            out.append(_Target(stmt, query, f"{kind} {create.this.sql(stmt.dialect)}", True))
        return out

    found: list[_Target] = ctx.memo("sql_rules.views", compute)
    return found


def _targets(ctx: SqlContext, dialect: str | None = None) -> Iterator[_Target]:
    """Every policy and function body, then every access-deciding view."""
    for stmt in _bodies(ctx):
        if dialect is None or stmt.dialect == dialect:
            assert stmt.body is not None
            yield _Target(stmt, stmt.body, _describe(stmt))
    for target in _views(ctx):
        if dialect is None or target.stmt.dialect == dialect:
            yield target


def _name(target: _Target) -> str:
    return target.stmt.name or target.what.split(" ", 2)[-1]


def _at(stmt: Statement, node: exp.Expression) -> Location:
    from compiler.sqlscan import node_position

    line, column = node_position(stmt, node)
    return Location(stmt.file, line, column)


def _describe(stmt: Statement) -> str:
    return f"{_WHAT[stmt.kind]} {stmt.name}"


def _fold(name: str) -> str:
    return name.lower()


def _signatures(ctx: SqlContext) -> dict[tuple[str, str], Statement]:
    """(dialect, folded name) -> the CREATE statement that defines a policy or function."""

    def compute() -> dict[tuple[str, str], Statement]:
        out: dict[tuple[str, str], Statement] = {}
        for stmt in ctx.statements:
            if stmt.kind in ("masking_policy", "row_access_policy", "function") and stmt.name:
                out.setdefault((stmt.dialect, _fold(stmt.name)), stmt)
        return out

    found: dict[tuple[str, str], Statement] = ctx.memo("sql_rules.signatures", compute)
    return found


def _created(ctx: SqlContext, stmt: Statement) -> Statement | None:
    """For ``ALTER ... SET BODY``: the CREATE statement of the same policy in the files."""
    return _signatures(ctx).get((stmt.dialect, _fold(stmt.name or "")))


def _masked_value(ctx: SqlContext, stmt: Statement) -> str | None:
    """The name of the masked value: the first parameter of the mask (for ``ALTER ... SET
    BODY``, of the CREATE statement of the same name in the files linted, if any)."""
    params = stmt.params
    if stmt.kind == "alter_policy_body":
        created = _created(ctx, stmt)
        params = created.params if created is not None else ()
    return params[0].name if params else None


def _can_mask(ctx: SqlContext, stmt: Statement) -> bool:
    """A masking policy, a function that returns a value (not a boolean filter), or a policy
    body changed in place that is not known to be a row access policy."""
    if stmt.kind == "function":
        return bool(stmt.params) and stmt.returns != "BOOLEAN"
    if stmt.kind == "alter_policy_body":
        created = _created(ctx, stmt)
        return created is None or created.kind != "row_access_policy"
    return stmt.kind == "masking_policy"


@dataclass(frozen=True)
class _MaskHash:
    stmt: Statement
    call: HashCall


def _mask_hashes(ctx: SqlContext) -> list[_MaskHash]:
    """Every hash of a masked value in a body that can mask (not a boolean filter)."""

    def compute() -> list[_MaskHash]:
        out = []
        for stmt in _bodies(ctx, _MASKING):
            if not _can_mask(ctx, stmt):
                continue
            assert stmt.body is not None
            value = _masked_value(ctx, stmt)
            for call in hash_calls(stmt.body, value, stmt.dialect):
                if call.hashes_value:
                    out.append(_MaskHash(stmt, call))
        return out

    found: list[_MaskHash] = ctx.memo("sql_rules.mask_hashes", compute)
    return found


@sql_rule("ACC101")
def current_role_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC101 in Snowflake policy bodies (see the policy-file check for the rule page)."""
    for target in _targets(ctx, "snowflake"):
        stmt = target.stmt
        for node, name in role_calls(target.body):
            finding = Finding(
                _at(stmt, node),
                "ACC101",
                _name(target),
                current_role_message(name, target.what),
                "use IS_ROLE_IN_SESSION(<role>), which sees primary and secondary roles "
                "(IS_ROLE_IN_SESSION(g.ROLE_NAME) for a mapping-table lookup)",
            )
            yield SqlHit(finding, (stmt,))


@sql_rule("ACC102")
def workspace_group_check_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC102 in Databricks function bodies (see the policy-file check for the rule page)."""
    for target in _targets(ctx, "databricks"):
        stmt = target.stmt
        for node in workspace_group_calls(target.body):
            finding = Finding(
                _at(stmt, node),
                "ACC102",
                _name(target),
                workspace_group_message(target.what),
                "call is_account_group_member(<group>) instead of is_member(<group>)",
            )
            yield SqlHit(finding, (stmt,))


@sql_rule("ACC204")
def weak_hash_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC204 in policy and function bodies (see the policy-file check for the rule page)."""
    for target in _targets(ctx):
        stmt = target.stmt
        for node, name in weak_hashes(target.body, stmt.dialect):
            finding = Finding(
                _at(stmt, node),
                "ACC204",
                _name(target),
                f"{target.what} calls {name}(), {weak_reason(name)}",
                "use SHA2(<value> || <secret salt function>(), 256)",
            )
            yield SqlHit(finding, (stmt,))


def _quote(node: exp.Expression, dialect: str) -> str:
    """An expression as a message quotes it: without the SQL comments sqlglot keeps on it."""
    bare = node.copy()
    for n in bare.walk():
        n.comments = None
    return render(bare, dialect)


def _strong(call: HashCall) -> str:
    """The hash a fix names: the call's own when it is SHA-2, never one ACC204 flags."""
    return call.function if call.function.startswith("SHA2") and not call.weak else "SHA2"


@sql_rule("ACC201")
def unsalted_hash_sql(ctx: SqlContext) -> Iterator[SqlHit]:
    """ACC201 in mask bodies (see the policy-file check for the rule page)."""
    for found in _mask_hashes(ctx):
        if not found.call.unsalted:
            continue
        stmt, call = found.stmt, found.call
        value = call.parts[0][1]
        finding = Finding(
            _at(stmt, call.node),
            "ACC201",
            stmt.name or "",
            f"{_describe(stmt)} hashes the masked value {value} with nothing mixed in "
            f"({_quote(call.node, stmt.dialect)}): anyone can hash candidate values and match the "
            "digests, and the same value gets the same digest on every platform",
            f"mix in a secret salt read from a secure function: "
            f"{_strong(call)}({value} || <governance schema>.<mask>_salt(), 256), "
            "a different secret on each platform",
        )
        yield SqlHit(finding, (stmt,))
    for target in _views(ctx):
        stmt = target.stmt
        for call in hash_calls(target.body, None, stmt.dialect):
            if not call.unsalted:
                continue
            value = call.parts[0][1]
            finding = Finding(
                _at(stmt, call.node),
                "ACC201",
                _name(target),
                f"{target.what} hashes {value} with nothing mixed in "
                f"({_quote(call.node, stmt.dialect)}): anyone can hash candidate values and "
                "match the digests, and the same value gets the same digest on every platform",
                f"mix in a secret salt read from a secure function: "
                f"{_strong(call)}({value} || <governance schema>.<mask>_salt(), 256), "
                "a different secret on each platform",
            )
            yield SqlHit(finding, (stmt,))


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
    for found in _mask_hashes(ctx):
        stmt, call = found.stmt, found.call
        if not call.literal_salt or (stmt.kind == "function" and stmt.secure):
            continue
        finding = Finding(
            _at(stmt, call.node),
            "ACC205",
            stmt.name or "",
            f"{_describe(stmt)} salts its hash with a literal written in the body: every role "
            "that may describe the policy (APPLY, OWNERSHIP), and every reader of this file, "
            "can read the salt",
            "read the salt from a secure function created from a secret at deployment "
            "(what `salt:` in the policy model compiles to), and rotate the exposed one",
        )
        yield SqlHit(finding, (stmt,))


# --------------------------------------------------------------------------------------------
# ACC203 across files


@dataclass(frozen=True)
class _Place:
    mask: _MaskHash
    attachment: Statement

    @property
    def dialect(self) -> str:
        return self.mask.stmt.dialect

    @property
    def location(self) -> Location:
        return _at(self.mask.stmt, self.mask.call.node)


def _salt_literals(ctx: SqlContext) -> dict[tuple[str, str], str]:
    """(dialect, folded name) -> the value of a salt function whose body is one literal."""
    out: dict[tuple[str, str], str] = {}
    for (dialect, name), stmt in _signatures(ctx).items():
        if stmt.kind == "function" and not stmt.params and isinstance(stmt.body, exp.Literal):
            out[(dialect, name)] = stmt.body.this
            out.setdefault((dialect, name.rsplit(".", 1)[-1]), stmt.body.this)
    return out


def _digest_signature(
    ctx: SqlContext, found: _MaskHash
) -> tuple[tuple[str, ...], tuple[Part, ...]]:
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
    masks: dict[tuple[str, str], list[_MaskHash]] = defaultdict(list)
    by_last: dict[tuple[str, str], list[_MaskHash]] = defaultdict(list)
    for found in _mask_hashes(ctx):
        name = _fold(found.stmt.name or "")
        masks[(found.stmt.dialect, name)].append(found)
        by_last[(found.stmt.dialect, name.rsplit(".", 1)[-1])].append(found)
    groups: dict[tuple[str, object], list[_Place]] = defaultdict(list)
    for stmt in ctx.statements:
        if stmt.kind not in ("set_masking_policy", "set_mask") or not stmt.policy:
            continue
        if not stmt.column_name:
            continue
        policy = _fold(stmt.policy)
        hashes = masks.get((stmt.dialect, policy))
        if hashes is None:
            candidates = by_last.get((stmt.dialect, policy.rsplit(".", 1)[-1]), [])
            if len({id(h.stmt) for h in candidates}) != 1:
                continue
            hashes = candidates
        for found in hashes:
            key = (_fold(stmt.column_name), _digest_signature(ctx, found))
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
            f"{p.location} ({p.dialect} {_describe(p.mask.stmt)} on "
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
