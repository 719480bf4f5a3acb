"""Snowflake's policy statements: ``CREATE`` / ``ALTER ... SET BODY`` / ``DROP`` of the five
kinds of Snowflake policy (row access, masking, projection, aggregation, join), ``CREATE`` of a
policy kind accord does not model (read the same way, so its body is linted and a statement
that cannot be read is reported, never passed), ``CREATE TAG`` and ``ALTER TAG ... {SET|UNSET}
MASKING POLICY``.

:data:`READERS` is the keyword table :mod:`compiler.sqlscan.readers` dispatches on. Snowflake's
``ALTER TABLE`` actions and ``CREATE [SECURE] FUNCTION`` are read in :mod:`.shared`.

Sources (docs.snowflake.com/en/sql-reference/sql/...): create-row-access-policy,
create-masking-policy, create-projection-policy, create-aggregation-policy and create-join-policy
all document ``CREATE [OR REPLACE] <kind> POLICY [IF NOT EXISTS] <name> AS (<signature>)
RETURNS <type> -> <body> [COMMENT = '<string_literal>']``; projection, aggregation and join
policies take no argument (``AS ()``) and return ``PROJECTION_CONSTRAINT``,
``AGGREGATION_CONSTRAINT``, ``JOIN_CONSTRAINT``. alter-projection-policy,
alter-aggregation-policy and alter-join-policy document ``ALTER <kind> POLICY [IF EXISTS]
<name> SET BODY -> <expression>`` as for masking and row access policies.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context, body_fields
from accord.compiler.sqlscan.readers.shared import Entry, other, read_params
from accord.compiler.sqlscan.statements import Fields
from accord.compiler.sqlscan.tokens import Cursor, Fail, is_kw, type_text

_POLICY_PROPERTIES = ("COMMENT", "EXEMPT_OTHER_POLICIES")


@dataclass(frozen=True)
class PolicyKind:
    """One kind of Snowflake policy as its statements spell it."""

    #: the words before POLICY: ``("ROW", "ACCESS")``
    words: tuple[str, ...]
    #: the statement kind of its CREATE (:data:`compiler.sqlscan.statements.KINDS`)
    kind: str
    #: the one return type the kind has, or None (a masking policy returns its value's type)
    returns: str | None = None
    #: the only signature the kind takes is ``()``
    no_arguments: bool = False

    @property
    def what(self) -> str:
        return " ".join(self.words).lower() + " policy"


#: the kinds of Snowflake policy accord models, as their statements spell them
POLICY_KINDS: tuple[PolicyKind, ...] = (
    PolicyKind(("ROW", "ACCESS"), "row_access_policy", "BOOLEAN"),
    PolicyKind(("MASKING",), "masking_policy"),
    PolicyKind(("PROJECTION",), "projection_policy", "PROJECTION_CONSTRAINT", True),
    PolicyKind(("AGGREGATION",), "aggregation_policy", "AGGREGATION_CONSTRAINT", True),
    PolicyKind(("JOIN",), "join_policy", "JOIN_CONSTRAINT", True),
)


def _create_policy(ctx: Context, c: Cursor, or_replace: bool, *, kind: PolicyKind) -> list[Fields]:
    """Snowflake ``CREATE [OR REPLACE] <kind> POLICY [IF NOT EXISTS] name AS (arg type, ...)
    RETURNS type -> body [COMMENT = '...'] [EXEMPT_OTHER_POLICIES = b]``."""
    return read_policy(ctx, c, or_replace, kind.kind, kind.what, kind.words, kind)


def read_policy(
    ctx: Context,
    c: Cursor,
    or_replace: bool,
    kind: str,
    what: str,
    words: tuple[str, ...],
    known: PolicyKind | None = None,
) -> list[Fields]:
    """The fields of a Snowflake ``CREATE ... POLICY`` with a body, the cursor after POLICY;
    ``known`` checks the signature and return type the kind documents."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name(f"the {what} name")
    c.expect("AS")
    signature = c.peek()
    params = read_params(c, f"the {what} signature")
    if known is not None and known.no_arguments and params and signature is not None:
        raise Fail(signature.start, f"a {what} takes no arguments: its signature is AS ()")
    c.expect("RETURNS")
    returns_at = c.peek()
    returns = type_text(_read_simple_type(c, "the return type after RETURNS"), ctx.text)
    if (
        known is not None
        and known.returns is not None
        and returns.upper() != known.returns
        and returns_at is not None
    ):
        raise Fail(returns_at.start, f"a {what} RETURNS {known.returns}, not {returns}")
    c.expect_type(TokenType.ARROW, "'->' before the policy body")
    body_tokens, comment = _body_and_comment(c)
    fields = body_fields(ctx, body_tokens, f"the {what} body", c.toks[c.i - 1])
    return [
        {
            "kind": kind,
            "name": name,
            "policy_kind": " ".join(words),
            "params": params,
            "returns": returns,
            "or_replace": or_replace,
            "if_not_exists": if_not_exists,
            "comment": comment,
            **fields,
        }
    ]

    returns = _read_simple_type(c, "the return type after RETURNS")
    c.expect_type(TokenType.ARROW, "'->' before the policy body")
    body_tokens, comment = _body_and_comment(c)
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


def _alter_policy(ctx: Context, c: Cursor, or_replace: bool, *, kind: PolicyKind) -> list[Fields]:
    """Snowflake ``ALTER <kind> POLICY [IF EXISTS] p SET BODY -> expr``; other ALTER POLICY
    forms (RENAME, SET COMMENT, SET TAG ...) are kind "other"."""
    c.accept("IF", "EXISTS")
    name = c.name(f"the {kind.what} name")
    if not c.accept("SET", "BODY"):
        return other()
    arrow = c.expect_type(TokenType.ARROW, "'->' after SET BODY")
    fields = body_fields(ctx, c.toks[c.i :], f"the {kind.what} body", arrow)
    return [
        {"kind": "alter_policy_body", "name": name, "policy_kind": " ".join(kind.words), **fields}
    ]


def _drop_policy(ctx: Context, c: Cursor, or_replace: bool, *, kind: PolicyKind) -> list[Fields]:
    """Snowflake ``DROP <kind> POLICY [IF EXISTS] p``."""
    c.accept("IF", "EXISTS")
    name = c.name("the policy name")
    c.expect_end("the policy name")
    return [{"kind": f"drop_{kind.kind}", "name": name, "policy_kind": " ".join(kind.words)}]


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
    *(
        (verb, (*kind.words, "POLICY"), partial(reader, kind=kind))
        for kind in POLICY_KINDS
        for verb, reader in (
            ("CREATE", _create_policy),
            ("ALTER", _alter_policy),
            ("DROP", _drop_policy),
        )
    ),
    ("CREATE", ("TAG",), _create_tag),
    ("ALTER", ("TAG",), _alter_tag),
)


def _body_and_comment(c: Cursor) -> tuple[list[Token], str | None]:
    """The tokens of a policy's body after ``->``, without the trailing properties
    (``COMMENT = '...'`` and the others of :data:`_POLICY_PROPERTIES`), and its comment."""
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
    return body_tokens, comment
