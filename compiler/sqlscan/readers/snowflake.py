"""Snowflake's policy statements: ``CREATE`` / ``ALTER ... SET BODY`` / ``DROP`` of row access
and masking policies, ``CREATE TAG`` and ``ALTER TAG ... {SET|UNSET} MASKING POLICY``.

:data:`READERS` is the keyword table :mod:`compiler.sqlscan.readers` dispatches on. Snowflake's
``ALTER TABLE`` actions and ``CREATE [SECURE] FUNCTION`` are read in :mod:`.shared`.
"""

from __future__ import annotations

from functools import partial

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context, body_fields
from accord.compiler.sqlscan.readers.shared import Entry, other, read_params
from accord.compiler.sqlscan.statements import Fields
from accord.compiler.sqlscan.tokens import Cursor, is_kw, type_text

_POLICY_PROPERTIES = ("COMMENT", "EXEMPT_OTHER_POLICIES")


def _create_policy(ctx: Context, c: Cursor, or_replace: bool, *, kind: str) -> list[Fields]:
    """Snowflake ``CREATE [OR REPLACE] {ROW ACCESS|MASKING} POLICY [IF NOT EXISTS] name
    AS (arg type, ...) RETURNS type -> body [COMMENT = '...'] [EXEMPT_OTHER_POLICIES = b]``."""
    what = "row access policy" if kind == "row_access_policy" else "masking policy"
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name(f"the {what} name")
    c.expect("AS")
    params = read_params(c, f"the {what} signature")
    c.expect("RETURNS")
    returns = _read_simple_type(c, "the return type after RETURNS")
    c.expect_type(TokenType.ARROW, "'->' before the policy body")
    body_tokens = list(c.toks[c.i :])
    comment = None
    while (
        len(body_tokens) >= 3
        and body_tokens[-2].token_type is TokenType.EQ
        and any(is_kw(body_tokens[-3], p) for p in _POLICY_PROPERTIES)
    ):
        if is_kw(body_tokens[-3], "COMMENT"):
            comment = body_tokens[-1].text
        body_tokens = body_tokens[:-3]
    fields = body_fields(ctx, body_tokens, f"the {what} body", c.toks[c.i - 1])
    return [
        {
            "kind": kind,
            "name": name,
            "params": params,
            "returns": type_text(returns, ctx.text),
            "or_replace": or_replace,
            "if_not_exists": if_not_exists,
            "comment": comment,
            **fields,
        }
    ]


_TYPE_CONTINUATIONS = frozenset(
    {"PRECISION", "VARYING", "WITH", "WITHOUT", "LOCAL", "TIME", "ZONE"}
)


def _read_simple_type(c: Cursor, what: str) -> list[Token]:
    """A Snowflake policy type: a word or two and an optional ``( ... )``: ``NUMBER(10, 2)``."""
    start = c.i
    c.ident(what)
    while any(c.is_kw(w) for w in _TYPE_CONTINUATIONS):
        c.i += 1
    if (tok := c.peek()) is not None and tok.token_type is TokenType.L_PAREN:
        c.balanced()
    return list(c.toks[start : c.i])


def _alter_policy(ctx: Context, c: Cursor, or_replace: bool, *, what: str) -> list[Fields]:
    """Snowflake ``ALTER {MASKING|ROW ACCESS} POLICY [IF EXISTS] p SET BODY -> expr``; other
    ALTER POLICY forms (RENAME, SET COMMENT, SET TAG ...) are kind "other"."""
    c.accept("IF", "EXISTS")
    name = c.name(f"the {what} name")
    if not c.accept("SET", "BODY"):
        return other()
    arrow = c.expect_type(TokenType.ARROW, "'->' after SET BODY")
    fields = body_fields(ctx, c.toks[c.i :], f"the {what} body", arrow)
    return [{"kind": "alter_policy_body", "name": name, **fields}]


def _drop_policy(ctx: Context, c: Cursor, or_replace: bool, *, kind: str) -> list[Fields]:
    """Snowflake ``DROP {MASKING|ROW ACCESS} POLICY [IF EXISTS] p``."""
    c.accept("IF", "EXISTS")
    name = c.name("the policy name")
    c.expect_end("the policy name")
    return [{"kind": kind, "name": name}]


def _create_tag(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """Snowflake ``CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [ALLOWED_VALUES ...]
    [COMMENT = '...']``."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name("the tag name")
    comment = None
    while not c.at_end():
        if c.accept("COMMENT"):
            c.accept_type(TokenType.EQ)
            comment = c.string("a string after COMMENT =")
        else:
            c.i += 1
    return [
        {
            "kind": "snowflake_tag",
            "name": name,
            "or_replace": or_replace,
            "if_not_exists": if_not_exists,
            "comment": comment,
        }
    ]


def _alter_tag(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """Snowflake ``ALTER TAG [IF EXISTS] tg {SET|UNSET} MASKING POLICY p [, MASKING POLICY p2]
    [FORCE]``; other ALTER TAG forms are kind "other"."""
    c.accept("IF", "EXISTS")
    name = c.name("the tag name")
    if c.accept("SET", "MASKING", "POLICY"):
        kind = "alter_tag_set_masking"
    elif c.accept("UNSET", "MASKING", "POLICY"):
        kind = "alter_tag_unset_masking"
    else:
        return other()
    policies = [c.name("a masking policy name")]
    while c.accept_type(TokenType.COMMA):
        c.expect("MASKING", "POLICY")
        policies.append(c.name("a masking policy name"))
    force = kind == "alter_tag_set_masking" and c.accept("FORCE")
    c.expect_end("the masking policy list")
    return [
        {
            "kind": kind,
            "name": name,
            "policy": policies[0],
            "policies": tuple(policies),
            "force": force,
        }
    ]


#: Snowflake's statements: (verb, the words after it, the reader)
READERS: tuple[Entry, ...] = (
    ("CREATE", ("ROW", "ACCESS", "POLICY"), partial(_create_policy, kind="row_access_policy")),
    ("CREATE", ("MASKING", "POLICY"), partial(_create_policy, kind="masking_policy")),
    ("CREATE", ("TAG",), _create_tag),
    ("ALTER", ("MASKING", "POLICY"), partial(_alter_policy, what="masking policy")),
    ("ALTER", ("ROW", "ACCESS", "POLICY"), partial(_alter_policy, what="row access policy")),
    ("ALTER", ("TAG",), _alter_tag),
    ("DROP", ("MASKING", "POLICY"), partial(_drop_policy, kind="drop_masking_policy")),
    ("DROP", ("ROW", "ACCESS", "POLICY"), partial(_drop_policy, kind="drop_row_access_policy")),
)
