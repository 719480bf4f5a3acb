"""Databricks' policy statements: ABAC ``CREATE POLICY`` / ``DROP POLICY``, ``{CREATE|ALTER|
DROP} GOVERNED TAG``, and the datasets of a pipeline whose definition is a query (``LIVE VIEW``,
``LIVE TABLE``, ``MATERIALIZED VIEW``, ``STREAMING TABLE``): read as what they are, so a
definition that checks group membership is linted like a view's (ACC102), never skipped whole.

:data:`READERS` is the keyword table :mod:`compiler.sqlscan.readers` dispatches on. Databricks'
``ALTER TABLE`` actions (row filters, masks, tags) and ``CREATE FUNCTION`` are read in
:mod:`.shared`.
"""

from __future__ import annotations

from functools import partial

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.readers.shared import Entry, other
from accord.compiler.sqlscan.statements import AbacPolicy, Fields
from accord.compiler.sqlscan.tokens import (
    STRING_TYPES,
    Cursor,
    Fail,
    is_ident,
    is_kw,
    is_word,
)


def _governed_tag(ctx: Context, c: Cursor, or_replace: bool, *, kind: str) -> list[Fields]:
    """Databricks ``{CREATE|ALTER|DROP} GOVERNED TAG tag_key ...``: the key, and for CREATE the
    ``DESCRIPTION`` literal. ``CREATE OR REPLACE GOVERNED TAG`` is kind "other"."""
    if or_replace:
        return other()
    name = c.name("the governed tag's key")
    comment = None
    while kind == "governed_tag" and not c.at_end():
        if c.accept("DESCRIPTION"):
            comment = c.string("a string after DESCRIPTION")
        else:
            c.i += 1
    return [{"kind": kind, "name": name, "comment": comment}]


def _drop_abac(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """Databricks ``DROP POLICY [IF EXISTS] name ON {CATALOG|SCHEMA|TABLE} x``."""
    c.accept("IF", "EXISTS")
    name = c.name("the policy name")
    c.expect("ON")
    securable_type, securable = _securable(c)
    c.expect_end("the securable name")
    return [
        {
            "kind": "drop_abac_policy",
            "name": name,
            "table": securable if securable_type == "TABLE" else None,
            "abac": AbacPolicy(securable_type=securable_type, securable=securable),
        }
    ]


def _securable(c: Cursor) -> tuple[str, str]:
    """``CATALOG c``, ``SCHEMA s``, ``TABLE t``, or ``METASTORE`` (Beta, Runtime 19: a
    metastore-level policy names no metastore, "the policy targets the metastore you are
    operating on", data-governance/unity-catalog/abac/metastore-policies): (type, name)."""
    if c.accept("METASTORE"):
        return "METASTORE", ""
    for kind in ("CATALOG", "SCHEMA", "TABLE"):
        if c.accept(kind):
            return kind, c.name(f"the {kind.lower()} name")
    raise c.fail("CATALOG, SCHEMA, TABLE or METASTORE after ON")


def _principals(c: Cursor, what: str) -> tuple[str, ...]:
    out = []
    while True:
        tok = c.peek()
        if tok is not None and tok.token_type in STRING_TYPES:
            c.i += 1
            out.append(tok.text)
        else:
            out.append(c.ident(f"a principal {what}"))
        if not c.accept_type(TokenType.COMMA):
            return tuple(out)


def _at_abac_clause(c: Cursor) -> bool:
    return c.is_kw("MATCH", "COLUMNS") or c.is_kw("ON", "COLUMN") or c.is_kw("USING", "COLUMNS")


def _create_abac(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """Databricks ``CREATE [OR REPLACE] POLICY name ON {CATALOG|SCHEMA|TABLE} x [COMMENT '...']
    {ROW FILTER f | COLUMN MASK f} TO p[, ...] [EXCEPT p[, ...]] FOR TABLES [WHEN cond]
    [MATCH COLUMNS cond [[AS] alias][, ...]] [ON COLUMN alias] [USING COLUMNS (arg, ...)]``."""
    name = c.name("the policy name")
    c.expect("ON")
    securable_type, securable = _securable(c)
    comment = c.string("a string after COMMENT") if c.accept("COMMENT") else None
    if c.accept("ROW", "FILTER"):
        kind = "ROW FILTER"
    elif c.accept("COLUMN", "MASK"):
        kind = "COLUMN MASK"
    else:
        raise c.fail("ROW FILTER or COLUMN MASK")
    function = c.name(f"the {kind.lower()} function name")
    c.expect("TO")
    to = _principals(c, "after TO")
    except_ = _principals(c, "after EXCEPT") if c.accept("EXCEPT") else ()
    c.expect("FOR", "TABLES")
    roots: list[tuple[exp.Expression, int]] = []
    when = None
    if (when_tok := c.peek()) is not None and c.accept("WHEN"):
        cond = c.until(_at_abac_clause)
        if not cond:
            raise Fail(when_tok.start, "WHEN needs a condition")
        when = ctx.parse_tokens(cond, "the WHEN condition", ctx.text, 0)
        roots.append((when, 0))
    match_columns: list[tuple[exp.Expression, str | None]] = []
    if c.accept("MATCH", "COLUMNS"):
        while True:
            item = c.until(
                lambda cur: cur.peek().token_type is TokenType.COMMA or _at_abac_clause(cur)
            )  # type: ignore[union-attr]
            if not item:
                raise c.fail("a condition after MATCH COLUMNS")
            cond_tokens, alias = _split_alias(item)
            cond = ctx.parse_tokens(cond_tokens, "the MATCH COLUMNS condition", ctx.text, 0)
            roots.append((cond, 0))
            match_columns.append((cond, alias))
            if not c.accept_type(TokenType.COMMA):
                break
    on_column = c.ident("the alias after ON COLUMN") if c.accept("ON", "COLUMN") else None
    using: tuple[str, ...] = ()
    if c.accept("USING", "COLUMNS"):
        using = c.column_list("USING COLUMNS")
    c.expect_end("the policy")
    return [
        {
            "kind": "abac_policy",
            "name": name,
            "table": securable if securable_type == "TABLE" else None,
            "policy": function,
            "column_name": on_column,
            "columns": using,
            "or_replace": or_replace,
            "comment": comment,
            "abac": AbacPolicy(
                securable_type=securable_type,
                securable=securable,
                kind=kind,
                function=function,
                to=to,
                except_=except_,
                when=when,
                match_columns=tuple(match_columns),
                on_column=on_column,
                using=using,
                comment=comment,
            ),
            "_roots": tuple(roots),
        }
    ]


_ENDS_EXPRESSION = frozenset(
    {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.NUMBER, TokenType.IDENTIFIER} | STRING_TYPES
)


_OPERATOR_WORDS = ("AND", "OR", "NOT", "IS", "IN", "LIKE", "ILIKE", "RLIKE", "BETWEEN")


def _split_alias(item: list[Token]) -> tuple[list[Token], str | None]:
    """``cond [[AS] alias]`` -> (condition tokens, alias)."""
    if len(item) >= 3 and is_kw(item[-2], "AS") and is_ident(item[-1]):
        return item[:-2], item[-1].text
    if (
        len(item) >= 2
        and is_ident(item[-1])
        and (item[-2].token_type in _ENDS_EXPRESSION or is_word(item[-2]))
        and not any(is_kw(item[-2], w) for w in _OPERATOR_WORDS)
    ):
        return item[:-1], item[-1].text
    return item, None


#: the datasets a pipeline defines by a query, as ``CREATE`` spells them (after ``OR REPLACE`` /
#: ``OR REFRESH``, ``TEMPORARY`` or ``PRIVATE``): docs.databricks.com/aws/en/dlt-ref/dlt-sql-ref-
#: create-materialized-view, dlt-sql-ref-create-streaming-table, and the Lakeflow SQL reference's
#: ``CREATE [OR REFRESH] [TEMPORARY] {STREAMING TABLE | LIVE TABLE | MATERIALIZED VIEW}``; the
#: legacy ``LIVE VIEW`` and ``STREAMING LIVE TABLE`` forms are still read by pipelines
_DATASETS: tuple[tuple[str, ...], ...] = (
    ("STREAMING", "LIVE", "TABLE"),
    ("STREAMING", "TABLE"),
    ("LIVE", "TABLE"),
    ("LIVE", "VIEW"),
    ("MATERIALIZED", "VIEW"),
)

#: calls that make a definition decide access per caller (as compiler.lint.bodies reads views)
_ACCESS_CALLS = frozenset(
    {"IS_MEMBER", "IS_ACCOUNT_GROUP_MEMBER", "CURRENT_USER", "SESSION_USER", "IS_ROLE_IN_SESSION"}
)


def read_pipeline(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """``CREATE [OR REFRESH] [TEMPORARY|PRIVATE] {STREAMING [LIVE] TABLE | LIVE {TABLE|VIEW} |
    MATERIALIZED VIEW} [IF NOT EXISTS] name [(columns, constraints)] [clauses] [AS query]``:
    kind ``pipeline_view``, its query as ``body``. A definition sqlglot cannot parse is an
    error (ACC001) when it calls a membership or user function, else kind "other" (a dataset
    that decides nothing per caller needs no reading); one without ``AS`` (a streaming table
    fed by flows) has no body."""
    c.accept("OR", "REFRESH")
    while c.accept("TEMPORARY") or c.accept("TEMP") or c.accept("PRIVATE"):
        pass
    words = next((w for w in _DATASETS if c.accept(*w)), None)
    if words is None:
        return other()
    c.accept("IF", "NOT", "EXISTS")
    name = c.name("the dataset name")
    what = f"the {' '.join(words).lower()} {name}'s definition"
    query: list[Token] = []
    while (tok := c.peek()) is not None:
        if is_kw(tok, "AS"):
            query = list(c.toks[c.i + 1 :])
            break
        if tok.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE):
            c.balanced()
        else:
            c.i += 1
    fields: Fields = {"kind": "pipeline_view", "name": name, "dataset_kind": " ".join(words)}
    if not query:
        return [fields]
    try:
        tree = ctx.parse_tokens(query, what, ctx.text, 0)
    except Fail:
        if any(is_word(t) and t.text.upper() in _ACCESS_CALLS for t in query):
            raise
        return other()
    if not isinstance(tree, exp.Query):
        if any(is_word(t) and t.text.upper() in _ACCESS_CALLS for t in query):
            raise Fail(query[0].start, f"expected a query after AS in {what}")
        return other()
    line, column = ctx.lines.position(query[0].start)
    return [
        {
            **fields,
            "body": tree,
            "body_text": ctx.text[query[0].start : query[-1].end + 1],
            "body_line": line,
            "body_column": column,
            "_roots": ((tree, 0),),
        }
    ]


#: Databricks' statements: (verb, the words after it, the reader)
READERS: tuple[Entry, ...] = (
    ("CREATE", ("POLICY",), _create_abac),
    ("CREATE", ("GOVERNED", "TAG"), partial(_governed_tag, kind="governed_tag")),
    ("ALTER", ("GOVERNED", "TAG"), partial(_governed_tag, kind="alter_governed_tag")),
    ("DROP", ("POLICY",), _drop_abac),
    ("DROP", ("GOVERNED", "TAG"), partial(_governed_tag, kind="drop_governed_tag")),
)
