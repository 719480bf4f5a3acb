"""Statement readers both dialects share: signatures (``(name type, ...)``), ``CREATE
FUNCTION`` (Snowflake's ``AS '...'`` and Databricks' ``RETURN expr`` bodies) and ``ALTER
TABLE``, whose policy actions of both dialects are read by one loop (a statement may hold
several, and a tag list stops before the next column action).

Also the shape of a reader and of a keyword table entry, which :mod:`.snowflake` and
:mod:`.databricks` use for their own readers.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot.tokens import Token, TokenType

from accord.compiler.sqlscan.bodies import Context, body_fields, string_body_fields
from accord.compiler.sqlscan.statements import Fields, Param
from accord.compiler.sqlscan.tokens import (
    BODY_STRING_TYPES,
    CLOSE,
    OPEN,
    STRING_TYPES,
    Cursor,
    angle_delta,
    is_ident,
    is_kw,
    type_text,
)

#: a statement reader: the cursor stands just after the statement's keywords; the flag says
#: whether ``OR REPLACE`` (or ``OR ALTER``) followed ``CREATE``. It returns the fields of
#: the statement(s) read, or ``[{"kind": "other"}]`` for a form that is not a policy statement.
Reader = Callable[[Context, Cursor, bool], list[Fields]]

#: one row of a keyword table: the verb (CREATE, ALTER, DROP), the words after it (after
#: CREATE's ``OR REPLACE``) and the reader of what follows them
Entry = tuple[str, tuple[str, ...], Reader]


def other() -> list[Fields]:
    """The fields of a statement that is not a policy statement."""
    return [{"kind": "other"}]


def read_params(c: Cursor, what: str) -> tuple[Param, ...]:
    """``(name type [DEFAULT expr] [COMMENT '...'] [NOT NULL], ...)``."""
    c.expect_type(TokenType.L_PAREN, f"'(' to open {what}")
    params: list[Param] = []
    if c.accept_type(TokenType.R_PAREN):
        return ()
    while True:
        name = c.ident(f"a parameter name in {what}")
        type_tokens: list[Token] = []
        depth = 0
        while (tok := c.peek()) is not None:
            if depth == 0 and (
                tok.token_type in (TokenType.COMMA, TokenType.R_PAREN)
                or is_kw(tok, "DEFAULT")
                or is_kw(tok, "COMMENT")
                or is_kw(tok, "NOT")
                or is_kw(tok, "NULL")
            ):
                break
            if tok.token_type in OPEN:
                depth += 1
            elif tok.token_type in CLOSE:
                depth -= 1
            else:
                depth += angle_delta(tok)
            type_tokens.append(tok)
            c.i += 1
        if not type_tokens:
            raise c.fail(f"the type of parameter {name}")
        params.append(Param(name, type_text(type_tokens, c.text)))
        # DEFAULT expression / COMMENT '...' / NOT NULL: skip to the next top-level ',' or ')'.
        c.until(lambda cur: cur.peek().token_type is TokenType.COMMA)  # type: ignore[union-attr]
        if c.accept_type(TokenType.COMMA):
            continue
        c.expect_type(TokenType.R_PAREN, f"',' or ')' in {what}")
        return tuple(params)


# CREATE FUNCTION ---------------------------------------------------------------


def read_create_function(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """``CREATE [OR REPLACE] [SECURE] [TEMPORARY|TEMP] FUNCTION ...`` in either dialect: what
    ``CREATE`` reads when none of the dialects' keywords follows it."""
    secure = False
    while True:
        if c.accept("SECURE"):
            secure = True
        elif not (c.accept("TEMPORARY") or c.accept("TEMP")):
            break
    if c.accept("FUNCTION"):
        return _read_function(ctx, c, or_replace, secure)
    return other()


# Words that end a function's RETURNS type (characteristics of CREATE FUNCTION).
_FUNCTION_CLAUSES = frozenset(
    {
        "NOT",
        "NULL",
        "LANGUAGE",
        "COMMENT",
        "RETURN",
        "RETURNS",
        "AS",
        "DETERMINISTIC",
        "CONTAINS",
        "READS",
        "MODIFIES",
        "SQL",
        "IMMUTABLE",
        "VOLATILE",
        "CALLED",
        "STRICT",
        "MEMOIZABLE",
        "RUNTIME_VERSION",
        "PACKAGES",
        "IMPORTS",
        "HANDLER",
        "EXTERNAL_ACCESS_INTEGRATIONS",
        "SECRETS",
        "COPY",
        "DEFAULT",
        "ENVIRONMENT",
        "TARGET_PATH",
        "WITH",
    }
)


def _read_function(ctx: Context, c: Cursor, or_replace: bool, secure: bool) -> list[Fields]:
    """Databricks ``CREATE [OR REPLACE] [TEMPORARY] FUNCTION f(params) [RETURNS type]
    [characteristics] RETURN expr`` and ``... AS $$...$$``; Snowflake ``CREATE [OR REPLACE]
    [SECURE] FUNCTION f(params) RETURNS type [...] AS '...'`` / ``AS $$...$$``."""
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    name = c.name("the function name")
    tok = c.peek()
    if tok is None or tok.token_type is not TokenType.L_PAREN:
        return other()  # Hive-style CREATE FUNCTION f AS 'class' USING JAR ...
    params = read_params(c, "the function signature")
    returns: str | None = None
    language: str | None = None
    comment: str | None = None
    fields: Fields | None = None
    string_body: Token | None = None
    staged = False
    while (tok := c.peek()) is not None:
        if c.accept("RETURNS"):
            if c.accept("NULL"):  # RETURNS NULL ON NULL INPUT
                continue
            type_tokens = c.until(lambda cur: any(is_kw(cur.peek(), w) for w in _FUNCTION_CLAUSES))
            if not type_tokens:
                raise c.fail("the return type after RETURNS")
            returns = type_text(type_tokens, ctx.text)
        elif c.accept("LANGUAGE"):
            language = c.ident("a language name after LANGUAGE").upper()
        elif c.accept("COMMENT"):
            c.accept_type(TokenType.EQ)
            comment = c.string("a string after COMMENT")
        elif c.accept("RETURN"):
            fields = body_fields(ctx, c.toks[c.i :], "the function body", tok)
            c.i = len(c.toks)
            break
        elif c.accept("AS"):
            string_body = c.peek()
            if string_body is None or string_body.token_type not in BODY_STRING_TYPES:
                raise c.fail("the function body as a string ('...' or $$...$$) after AS")
            c.i += 1
        elif tok.token_type in OPEN:
            c.balanced()
        else:
            staged = staged or (is_kw(tok, "HANDLER") and c.is_kw("HANDLER") and _assigns(c))
            c.i += 1
    if string_body is not None:
        fields = string_body_fields(ctx, string_body, language)
    if fields is None and staged and language not in (None, "SQL"):
        # Snowflake: a Python, Java or Scala function whose code is in a staged file
        # (``IMPORTS = ('@stage/f.py') HANDLER = 'f.run'``, no AS body): nothing to read
        fields = {}
    if fields is None:
        raise c.fail("RETURN <expression> or AS '<body>' in CREATE FUNCTION")
    return [
        {
            "kind": "function",
            "name": name,
            "params": params,
            "returns": returns,
            "or_replace": or_replace,
            "if_not_exists": if_not_exists,
            "secure": secure,
            "language": language,
            "comment": comment,
            **fields,
        }
    ]


def _assigns(c: Cursor) -> bool:
    """Is the word at the cursor followed by ``=`` (a Snowflake property: ``HANDLER = '...'``)?"""
    nxt = c.peek(1)
    return nxt is not None and nxt.token_type is TokenType.EQ


# ALTER TABLE actions ---------------------------------------------------------


def read_alter_table(ctx: Context, c: Cursor, or_replace: bool) -> list[Fields]:
    """Snowflake and Databricks policy attachments on ``ALTER TABLE``. A statement whose
    first action is not a policy action is kind "other"; once one action is recognised, the
    rest must be too."""
    c.accept("IF", "EXISTS")
    table = c.name("the table name")
    actions: list[Fields] = []
    while True:
        found = _read_table_action(c, table)
        if found is None:
            if not actions:
                return other()
            raise c.fail("a policy action (mixing policy and other ALTER TABLE actions)")
        actions.extend(found)
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect_end("the ALTER TABLE action")
    drops = [a for a in actions if a["kind"] == "drop_row_access"]
    adds = [a for a in actions if a["kind"] == "add_row_access"]
    if len(drops) == 1 and len(adds) == 1:
        # DROP ROW ACCESS POLICY p, ADD ROW ACCESS POLICY p2 ON (...): one swap.
        adds[0]["dropped_policy"] = drops[0]["policy"]
        actions = [a for a in actions if a is not drops[0]]
    return actions


def _read_table_action(c: Cursor, table: str) -> list[Fields] | None:
    base: Fields = {"table": table}
    # Snowflake: row access policies
    if c.accept("ADD", "ROW", "ACCESS", "POLICY"):
        policy = c.name("the row access policy name")
        c.expect("ON")
        columns = c.column_list("the row access policy columns")
        return [{**base, "kind": "add_row_access", "policy": policy, "columns": columns}]
    if c.accept("DROP", "ROW", "ACCESS", "POLICY"):
        policy = c.name("the row access policy name")
        return [{**base, "kind": "drop_row_access", "policy": policy}]
    if c.accept("DROP", "ALL", "ROW", "ACCESS", "POLICIES"):
        return [{**base, "kind": "drop_row_access", "policy": None}]
    # Snowflake: aggregation and join policies (alter-table: ``SET AGGREGATION POLICY p [ENTITY
    # KEY (c, ...)] [FORCE]``, ``UNSET AGGREGATION POLICY``, ``SET JOIN POLICY p [ALLOWED JOIN
    # KEYS (c, ...)] [FORCE]``, ``UNSET JOIN POLICY``)
    if c.accept("SET", "AGGREGATION", "POLICY"):
        policy = c.name("the aggregation policy name")
        keys = c.column_list("ENTITY KEY") if c.accept("ENTITY", "KEY") else ()
        force = c.accept("FORCE")
        item = {"kind": "set_aggregation_policy", "policy": policy, "columns": keys}
        return [{**base, **item, "force": force}]
    if c.accept("UNSET", "AGGREGATION", "POLICY"):
        return [{**base, "kind": "unset_aggregation_policy"}]
    if c.accept("SET", "JOIN", "POLICY"):
        policy = c.name("the join policy name")
        keys = c.column_list("ALLOWED JOIN KEYS") if c.accept("ALLOWED", "JOIN", "KEYS") else ()
        force = c.accept("FORCE")
        item = {"kind": "set_join_policy", "policy": policy, "columns": keys}
        return [{**base, **item, "force": force}]
    if c.accept("UNSET", "JOIN", "POLICY"):
        return [{**base, "kind": "unset_join_policy"}]
    # Databricks: row filters, tags
    if c.accept("SET", "ROW", "FILTER"):
        policy = c.name("the row filter function name")
        c.expect("ON")
        columns = c.column_list("the row filter columns")
        return [{**base, "kind": "set_row_filter", "policy": policy, "columns": columns}]
    if c.accept("DROP", "ROW", "FILTER"):
        return [{**base, "kind": "drop_row_filter"}]
    if c.accept("SET", "TAGS"):
        return [{**base, "kind": "set_tags", "tags": _databricks_tags(c)}]
    # Snowflake: tags
    if c.accept("SET", "TAG"):
        return [{**base, "kind": "set_table_tag", "tags": _snowflake_tags(c)}]
    # Both: column actions
    if any(c.is_kw(w) for w in ("MODIFY", "ALTER", "CHANGE")):
        mark = c.i
        c.i += 1
        found = _read_column_actions(c, base)
        if found is None:
            c.i = mark
        return found
    return None


def _column_action_follows(c: Cursor, k: int = 0) -> bool:
    """Does ``[COLUMN] name <policy action>`` start k tokens ahead?"""
    if c.is_kw("COLUMN", k=k):
        k += 1
    if not is_ident(c.peek(k)):
        return False
    k += 1
    while (dot := c.peek(k)) is not None and dot.token_type is TokenType.DOT:
        k += 2
    return any(
        c.is_kw(*words, k=k)
        for words in (
            ("SET", "MASKING", "POLICY"),
            ("UNSET", "MASKING", "POLICY"),
            ("SET", "PROJECTION", "POLICY"),
            ("UNSET", "PROJECTION", "POLICY"),
            ("SET", "MASK"),
            ("DROP", "MASK"),
            ("SET", "TAGS"),
            ("SET", "TAG"),
        )
    )


def _read_column_actions(c: Cursor, base: Fields) -> list[Fields] | None:
    """``{MODIFY|ALTER|CHANGE} [(] [COLUMN] c <action> [, [COLUMN] c2 <action> ...] [)]``."""
    paren = c.peek() is not None and c.peek().token_type is TokenType.L_PAREN  # type: ignore[union-attr]
    if not _column_action_follows(c, 1 if paren else 0):
        return None
    if paren:
        c.i += 1
    out: list[Fields] = []
    while True:
        if not _column_action_follows(c):
            raise c.fail("[COLUMN] name followed by a policy action")
        c.accept("COLUMN")
        column = c.name("the column name")
        item: Fields = {**base, "column_name": column}
        if c.accept("SET", "MASKING", "POLICY"):  # Snowflake
            item.update(kind="set_masking_policy", policy=c.name("the masking policy name"))
            if c.accept("USING"):
                item["columns"] = c.column_list("USING")
            item["force"] = c.accept("FORCE")
        elif c.accept("UNSET", "MASKING", "POLICY"):  # Snowflake
            item["kind"] = "unset_masking_policy"
        elif c.accept("SET", "PROJECTION", "POLICY"):  # Snowflake (alter-table: ... [FORCE])
            item.update(kind="set_projection_policy", policy=c.name("the projection policy name"))
            item["force"] = c.accept("FORCE")
        elif c.accept("UNSET", "PROJECTION", "POLICY"):  # Snowflake
            item["kind"] = "unset_projection_policy"
        elif c.accept("SET", "MASK"):  # Databricks
            item.update(kind="set_mask", policy=c.name("the mask function name"))
            if c.accept("USING", "COLUMNS"):
                item["columns"] = c.column_list("USING COLUMNS")
        elif c.accept("DROP", "MASK"):  # Databricks
            item["kind"] = "drop_mask"
        elif c.accept("SET", "TAGS"):  # Databricks
            item.update(kind="set_tags", tags=_databricks_tags(c))
        else:  # Snowflake
            c.expect("SET", "TAG")
            item.update(kind="set_column_tag", tags=_snowflake_tags(c))
        out.append(item)
        comma = c.peek()
        if (
            comma is not None
            and comma.token_type is TokenType.COMMA
            and _column_action_follows(c, 1)
        ):
            c.i += 1
            continue
        break
    if paren:
        c.expect_type(TokenType.R_PAREN, "')' closing the column actions")
    return out


def _tag_part(c: Cursor, what: str) -> str:
    tok = c.peek()
    if tok is not None and tok.token_type in STRING_TYPES:
        c.i += 1
        return tok.text
    return c.name(what)


def _databricks_tags(c: Cursor) -> tuple[tuple[str, str], ...]:
    """``('key' = 'value', 'key2', ...)``; a key without a value gets ``""``."""
    tags = []
    for item in c.paren_items("SET TAGS"):
        sub = Cursor(item, c.text)
        key = _tag_part(sub, "a tag key")
        value = ""
        if sub.accept_type(TokenType.EQ):
            value = _tag_part(sub, "a tag value")
        sub.expect_end("the tag")
        tags.append((key, value))
    return tuple(tags)


def _snowflake_tags(c: Cursor) -> tuple[tuple[str, str], ...]:
    """``tag = 'value' [, tag2 = 'value2']``, stopping before ``, [COLUMN] c2 SET ...``."""
    tags = []
    while True:
        key = c.name("a tag name")
        c.expect_type(TokenType.EQ, "'=' after the tag name")
        tags.append((key, c.string("a string tag value")))
        comma = c.peek()
        if comma is None or comma.token_type is not TokenType.COMMA or _column_action_follows(c, 1):
            return tuple(tags)
        c.i += 1


#: the statements both dialects share (``CREATE FUNCTION`` is :func:`read_create_function`);
#: a view takes the same policy actions as a table (Snowflake's ``ALTER VIEW ... MODIFY COLUMN
#: ... SET MASKING POLICY`` and ``ADD ROW ACCESS POLICY``, Databricks' ``ALTER VIEW ... SET
#: TAGS``), which dbt macros write as ``alter {{ materialization }} ...``
READERS: tuple[Entry, ...] = (
    ("ALTER", ("TABLE",), read_alter_table),
    ("ALTER", ("VIEW",), read_alter_table),
    ("ALTER", ("MATERIALIZED", "VIEW"), read_alter_table),
)
