"""The bodies the rules read: hand-written row-filter predicates of the model, and in SQL
files the policy and function bodies, the views that decide access per caller, and the hashes
of masked values.

Policies of every Snowflake kind (row access, masking, projection, aggregation, join, and a
kind accord does not model that is written with a body) and functions are read for ACC101,
ACC103, ACC104 and the hashing rules. Views that decide access per caller (a Databricks dynamic
view calling ``is_member`` / ``is_account_group_member`` / ``current_user``, a Snowflake secure
view calling ``CURRENT_ROLE`` / ``IS_ROLE_IN_SESSION``, a pipeline's live view, materialized
view or streaming table whose query does) are read like mask and filter bodies for ACC101,
ACC102, ACC103, ACC201 and ACC204; a view that only computes, say, an ``md5`` surrogate key is not.
SQL findings are located with :func:`compiler.sqlscan.node_position`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from accord.compiler.core.errors import Location
from accord.compiler.core.platforms import catalog_facts
from accord.compiler.lint.checks import Context, SqlContext
from accord.compiler.lint.sources import source_line
from accord.compiler.lint.trees import HashCall, hash_calls, role_calls, start_offset
from accord.compiler.lint.usage import platforms_in
from accord.compiler.model.expressions import ExpressionError, parse_predicate

if TYPE_CHECKING:  # linting policy files imports neither sqlscan nor its sqlglot dialects
    from accord.compiler.sqlscan import Statement

# --------------------------------------------------------------------------------------------
# hand-written row-filter predicates (policy files)


@dataclass(frozen=True)
class Expression:
    dataset: str
    platform: str
    text: str
    tree: exp.Expression
    path: tuple[Any, ...]


def expressions(ctx: Context) -> Iterator[Expression]:
    for name in sorted(ctx.model.datasets):
        rf = ctx.model.datasets[name].row_filter
        if rf is None or rf.expression is None:
            continue
        for platform in platforms_in(rf.expression):
            text = rf.expression[platform]  # type: ignore[index]
            try:
                tree = parse_predicate(text, platform)
            except ExpressionError:  # validation reports it; nothing to lint
                continue
            path = ("datasets", name, "row_filter", "expression", platform)
            yield Expression(name, platform, text, tree, path)


def within(ctx: Context, e: Expression, node: exp.Expression) -> Location:
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


# --------------------------------------------------------------------------------------------
# policy and function bodies, access-deciding views (SQL files)


_WHAT = {
    "masking_policy": "masking policy",
    "row_access_policy": "row access policy",
    "projection_policy": "projection policy",
    "aggregation_policy": "aggregation policy",
    "join_policy": "join policy",
    "policy": "policy",
    "alter_policy_body": "policy",
    "function": "function",
}
#: statements that define a policy or function (what ``ALTER ... SET BODY`` refers to)
_DEFINES = tuple(k for k in _WHAT if k != "alter_policy_body")

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
        "is_granted_to_invoker_role",
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
class Body:
    """A body lint reads: a policy or function body, or the query of a view that decides
    access per caller (a Databricks dynamic view, a Snowflake secure view)."""

    stmt: Statement
    body: exp.Expression
    what: str
    view: bool = False


def access_views(ctx: SqlContext) -> list[Body]:
    def compute() -> list[Body]:
        out = []
        for stmt in ctx.statements:
            if stmt.kind == "pipeline_view":  # a pipeline's dataset: its query, as a view's
                if stmt.body is not None and _decides_access(stmt.body):
                    what = f"{(stmt.dataset_kind or 'view').lower()} {stmt.name}"
                    out.append(Body(stmt, stmt.body, what, True))
                continue
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
            platform = catalog_facts(stmt.dialect or "")
            if platform is not None and platform.secure_views and not secure:
                continue
            kind = "secure view" if secure else "dynamic view"
            out.append(Body(stmt, query, f"{kind} {create.this.sql(stmt.dialect)}", True))
        return out

    found: list[Body] = ctx.memo("bodies.views", compute)
    return found


def read_bodies(ctx: SqlContext, dialect: str | None = None) -> Iterator[Body]:
    """Every policy and function body, then every access-deciding view."""
    for stmt in _bodies(ctx):
        if dialect is None or stmt.dialect == dialect:
            assert stmt.body is not None
            yield Body(stmt, stmt.body, describe(stmt))
    for target in access_views(ctx):
        if dialect is None or target.stmt.dialect == dialect:
            yield target


def name_of(target: Body) -> str:
    return target.stmt.name or target.what.split(" ", 2)[-1]


def at(stmt: Statement, node: exp.Expression) -> Location:
    from accord.compiler.sqlscan import node_position  # noqa: PLC0415 - SQL files only

    line, column = node_position(stmt, node)
    return Location(stmt.file, line, column)


def describe(stmt: Statement) -> str:
    if stmt.kind in ("policy", "alter_policy_body") and stmt.policy_kind:
        return f"{stmt.policy_kind.lower()} policy {stmt.name}"
    return f"{_WHAT[stmt.kind]} {stmt.name}"


def fold(name: str) -> str:
    return name.lower()


def signatures(ctx: SqlContext) -> dict[tuple[str, str], Statement]:
    """(dialect, folded name) -> the CREATE statement that defines a policy or function."""

    def compute() -> dict[tuple[str, str], Statement]:
        out: dict[tuple[str, str], Statement] = {}
        for stmt in ctx.statements:
            if stmt.kind in _DEFINES and stmt.name:
                out.setdefault((stmt.dialect, fold(stmt.name)), stmt)
        return out

    found: dict[tuple[str, str], Statement] = ctx.memo("bodies.signatures", compute)
    return found


def _created(ctx: SqlContext, stmt: Statement) -> Statement | None:
    """For ``ALTER ... SET BODY``: the CREATE statement of the same policy in the files."""
    return signatures(ctx).get((stmt.dialect, fold(stmt.name or "")))


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
        if stmt.policy_kind not in (None, "MASKING"):  # ALTER <kind> POLICY names its kind
            return False
        created = _created(ctx, stmt)
        return created is None or created.kind == "masking_policy"
    return stmt.kind == "masking_policy"


@dataclass(frozen=True)
class MaskHash:
    stmt: Statement
    call: HashCall


def mask_hashes(ctx: SqlContext) -> list[MaskHash]:
    """Every hash of a masked value in a body that can mask (not a boolean filter)."""

    def compute() -> list[MaskHash]:
        out = []
        for stmt in _bodies(ctx, _MASKING):
            if not _can_mask(ctx, stmt):
                continue
            assert stmt.body is not None
            value = _masked_value(ctx, stmt)
            for call in hash_calls(stmt.body, value, stmt.dialect):
                if call.hashes_value:
                    out.append(MaskHash(stmt, call))
        return out

    found: list[MaskHash] = ctx.memo("bodies.mask_hashes", compute)
    return found
