"""How the stand-ins read a statement: their own reader of the statements they accept, built on
sqlglot's tokenizer and parser and on nothing of accord's, so that a misreading in accord's
scanner (``compiler/sqlscan``) cannot be shared by the stand-in that checks it.

It reads the fixed shapes of the platforms' governance DDL, as documented:

* Snowflake: ``CREATE [OR REPLACE|OR ALTER] {ROW ACCESS|MASKING} POLICY [IF NOT EXISTS] p AS
  (arg type, ...) RETURNS type -> body [COMMENT = '...']``, ``ALTER ... POLICY p SET BODY ->
  body``, ``DROP ... POLICY [IF EXISTS] p``, ``CREATE [OR REPLACE] [SECURE] FUNCTION f(...)
  RETURNS type ... AS '...'``, ``CREATE [OR REPLACE] TAG [IF NOT EXISTS] t [ALLOWED_VALUES
  ...] [COMMENT = '...']``, ``ALTER TAG t {SET|UNSET} MASKING POLICY p[, MASKING POLICY p2]``,
  and on ``ALTER TABLE``: ``{ADD|DROP} ROW ACCESS POLICY``, ``DROP ALL ROW ACCESS POLICIES``,
  ``SET TAG t = 'v'`` and ``MODIFY [(] [COLUMN] c {SET MASKING POLICY p [USING (...)]
  [FORCE] | UNSET MASKING POLICY | SET TAG t = 'v'} [, ...] [)]``. Projection, aggregation and
  join policies (sql-reference/sql/create-projection-policy, create-aggregation-policy,
  create-join-policy, alter-table): their ``CREATE``, ``ALTER ... SET BODY`` and ``DROP`` as
  above, ``MODIFY [COLUMN] c {SET PROJECTION POLICY p [FORCE] | UNSET PROJECTION POLICY}``,
  ``SET AGGREGATION POLICY p [ENTITY KEY (...)] [FORCE]``, ``SET JOIN POLICY p [ALLOWED JOIN
  KEYS (...)] [FORCE]`` and their ``UNSET``.
* Databricks: ``CREATE [OR REPLACE] FUNCTION f(...) RETURNS type ... RETURN expr``, ``CREATE
  [OR REPLACE] POLICY p ON {CATALOG|SCHEMA|TABLE} x [COMMENT '...'] {ROW FILTER|COLUMN MASK} f
  TO ... [EXCEPT ...] FOR TABLES [WHEN ...] [MATCH COLUMNS cond [AS] alias, ...] [ON COLUMN a]
  [USING COLUMNS (...)]``, ``DROP POLICY p ON ...``, ``{CREATE|ALTER|DROP} GOVERNED TAG``, and
  on ``ALTER TABLE``: ``{SET|DROP} ROW FILTER``, ``SET TAGS (...)`` and ``ALTER [COLUMN] c
  {SET MASK f [USING COLUMNS (...)] | DROP MASK | SET TAGS (...) | UNSET TAGS (...)}``.

Anything else is kind ``other``, with the statement parsed by sqlglot as ``expression`` (None
when sqlglot reads it only as a command). A statement of one of the shapes above that does not
read is a ReadError (the stand-in answers it as a syntax error).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType


class ReadError(Exception):
    """A statement of a known shape that does not read."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str


@dataclass(frozen=True)
class Abac:
    """A Databricks ABAC policy (for DROP POLICY, only the securable)."""

    securable_type: str
    securable: str
    kind: str | None = None  # "ROW FILTER" | "COLUMN MASK"
    function: str | None = None
    to: tuple[str, ...] = ()
    except_: tuple[str, ...] = ()
    when: exp.Expression | None = None
    match_columns: tuple[tuple[exp.Expression, str | None], ...] = ()
    on_column: str | None = None
    using: tuple[str, ...] = ()
    comment: str | None = None


@dataclass(frozen=True)
class Stmt:
    kind: str
    text: str
    name: str | None = None
    params: tuple[Param, ...] = ()
    returns: str | None = None
    body_text: str | None = None
    table: str | None = None
    column_name: str | None = None
    columns: tuple[str, ...] = ()
    policy: str | None = None
    dropped_policy: str | None = None
    policies: tuple[str, ...] = ()
    force: bool = False
    or_replace: bool = False
    if_not_exists: bool = False
    secure: bool = False
    comment: str | None = None
    abac: Abac | None = None
    tags: tuple[tuple[str, str], ...] = ()
    expression: exp.Expression | None = None
    #: a masking policy's EXEMPT_OTHER_POLICIES = TRUE
    exempt: bool = False


_STRINGS = {TokenType.STRING, TokenType.RAW_STRING, TokenType.HEREDOC_STRING}
_OPEN = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE}
_CLOSE = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE}


def _word(tok: Token | None) -> str:
    """The upper-cased text of an unquoted word, else ''."""
    if tok is None or tok.token_type is TokenType.IDENTIFIER or tok.token_type in _STRINGS:
        return ""
    return tok.text.upper() if (tok.text[:1].isalpha() or tok.text[:1] == "_") else ""


def _is_name(tok: Token | None) -> bool:
    return tok is not None and (tok.token_type is TokenType.IDENTIFIER or bool(_word(tok)))


class _Tokens:
    """A cursor over one statement's tokens."""

    def __init__(self, toks: list[Token], sql: str) -> None:
        self.toks, self.sql, self.i = toks, sql, 0

    def at(self, k: int = 0) -> Token | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def words(self, *words: str, k: int = 0) -> bool:
        return all(_word(self.at(k + n)) == w for n, w in enumerate(words))

    def take(self, *words: str) -> bool:
        if self.words(*words):
            self.i += len(words)
            return True
        return False

    def need(self, *words: str) -> None:
        if not self.take(*words):
            raise self.error(" ".join(words))

    def kind(self, token_type: TokenType) -> Token | None:
        tok = self.at()
        if tok is not None and tok.token_type is token_type:
            self.i += 1
            return tok
        return None

    def need_kind(self, token_type: TokenType, what: str) -> Token:
        tok = self.kind(token_type)
        if tok is None:
            raise self.error(what)
        return tok

    def error(self, wanted: str) -> ReadError:
        tok = self.at()
        found = "the end of the statement" if tok is None else repr(tok.text)
        return ReadError(f"expected {wanted}, found {found}")

    def end(self) -> None:
        if not self.done():
            raise ReadError(f"unexpected {self.at().text!r}")  # type: ignore[union-attr]

    def name(self) -> str:
        if not _is_name(self.at()):
            raise self.error("a name")
        parts = [self.toks[self.i].text]
        self.i += 1
        while self.kind(TokenType.DOT):
            if not _is_name(self.at()):
                raise self.error("a name after '.'")
            parts.append(self.toks[self.i].text)
            self.i += 1
        return ".".join(parts)

    def string(self) -> str:
        tok = self.at()
        if tok is None or tok.token_type not in _STRINGS:
            raise self.error("a string")
        self.i += 1
        return tok.text

    def source(self, toks: list[Token]) -> str:
        return self.sql[toks[0].start : toks[-1].end + 1]

    def upto(self, stop) -> list[Token]:  # type: ignore[no-untyped-def]
        """Tokens to the first top-level place where ``stop(self)`` holds (or a closing
        bracket of the enclosing group)."""
        start, depth = self.i, 0
        while (tok := self.at()) is not None:
            if depth == 0 and stop(self):
                break
            if tok.token_type in _OPEN:
                depth += 1
            elif tok.token_type in _CLOSE:
                if depth == 0:
                    break
                depth -= 1
            self.i += 1
        return self.toks[start : self.i]

    def skip_group(self) -> None:
        """Past one balanced bracketed group starting here."""
        depth = 0
        while (tok := self.at()) is not None:
            self.i += 1
            depth += tok.token_type in _OPEN
            depth -= tok.token_type in _CLOSE
            if depth == 0:
                return
        raise ReadError("no closing bracket")

    def group(self) -> list[list[Token]]:
        """``( a, b, ... )`` as the tokens of each item."""
        self.need_kind(TokenType.L_PAREN, "'('")
        items: list[list[Token]] = []
        if self.kind(TokenType.R_PAREN):
            return items
        while True:
            item = self.upto(lambda c: c.at().token_type is TokenType.COMMA)
            if not item:
                raise self.error("an item")
            items.append(item)
            if not self.kind(TokenType.COMMA):
                self.need_kind(TokenType.R_PAREN, "')'")
                return items

    def columns(self) -> tuple[str, ...]:
        """``(a, b.c, 'x')``: names as their parts joined by '.', anything else as written."""
        out = []
        for item in self.group():
            plain = all(_is_name(t) or t.token_type is TokenType.DOT for t in item)
            out.append("".join(t.text for t in item) if plain else self.source(item))
        return tuple(out)


def _type(toks: list[Token], sql: str) -> str:
    """A type as written, upper-cased (quoted parts as they are), spaced as ``NUMBER(10, 2)``."""
    text = ""
    for tok in toks:
        piece = sql[tok.start : tok.end + 1]
        if tok.token_type is not TokenType.IDENTIFIER:
            piece = piece.upper()
        glued = piece in (")", ">", ",", "(", "<", ":", "]", "[") or text[-1:] in ("(", "<", "[")
        text += piece if (glued or not text) else " " + piece
    return text


class _Reader:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def tokens(self, sql: str) -> list[Token]:
        try:
            return Dialect.get_or_raise(self.dialect).tokenizer_class().tokenize(sql)
        except SqlglotError as err:
            raise ReadError(str(err).splitlines()[0]) from None

    def parse(self, text: str) -> exp.Expression:
        """An expression (a body, a condition), which must parse as one."""
        try:
            tree = sqlglot.parse_one(text, read=self.dialect)
        except SqlglotError as err:
            raise ReadError(f"cannot parse {text!r}: {str(err).splitlines()[0]}") from None
        if isinstance(tree, exp.Command):
            raise ReadError(f"not an expression: {text!r}")
        return tree

    def read(self, sql: str) -> list[Stmt]:
        toks = self.tokens(sql)
        out: list[Stmt] = []
        current: list[Token] = []
        for tok in [*toks, None]:
            if tok is None or tok.token_type is TokenType.SEMICOLON:
                if current:
                    out += self.statement(_Tokens(current, sql), sql)
                current = []
            else:
                current.append(tok)
        return out

    # ---------------------------------------------------------------- statements

    def statement(self, c: _Tokens, sql: str) -> list[Stmt]:
        text = c.source(c.toks)
        if c.take("CREATE"):
            or_replace = c.take("OR", "REPLACE") or c.take("OR", "ALTER")
            if c.take("ROW", "ACCESS", "POLICY"):
                return [self.policy(c, text, "row_access_policy", or_replace)]
            if c.take("MASKING", "POLICY"):
                return [self.policy(c, text, "masking_policy", or_replace)]
            # docs.snowflake.com/en/sql-reference/sql/create-projection-policy,
            # create-aggregation-policy, create-join-policy: CREATE [OR REPLACE] <kind> POLICY
            # [IF NOT EXISTS] name AS () RETURNS <KIND>_CONSTRAINT -> body [COMMENT = '...']
            for kind in _CONSTRAINT_KINDS:
                if c.take(kind.upper(), "POLICY"):
                    return [self.policy(c, text, f"{kind}_policy", or_replace)]
            if c.take("POLICY"):
                return [self.abac(c, text, or_replace)]
            if c.take("TAG"):
                return [self.tag(c, text, or_replace)]
            if not or_replace and c.take("GOVERNED", "TAG"):
                return [self.governed_tag(c, text, "governed_tag")]
            secure = False
            while c.words("SECURE") or c.words("TEMPORARY") or c.words("TEMP"):
                secure = secure or c.words("SECURE")
                c.i += 1
            if c.take("FUNCTION"):
                found = self.function(c, text, or_replace, secure)
                if found is not None:
                    return [found]
        elif c.take("ALTER"):
            if c.take("TABLE"):
                found_actions = self.alter_table(c, text)
                if found_actions is not None:
                    return found_actions
            elif (
                c.take("MASKING", "POLICY")
                or c.take("ROW", "ACCESS", "POLICY")
                or any(c.take(k.upper(), "POLICY") for k in _CONSTRAINT_KINDS)
            ):
                c.take("IF", "EXISTS")
                name = c.name()
                if c.take("SET", "BODY"):
                    c.need_kind(TokenType.ARROW, "'->'")
                    body = c.toks[c.i :]
                    if not body:
                        raise c.error("a body")
                    self.parse(c.source(body))
                    return [Stmt("alter_policy_body", text, name=name, body_text=c.source(body))]
            elif c.take("TAG"):
                found = self.alter_tag(c, text)
                if found is not None:
                    return [found]
            elif c.take("GOVERNED", "TAG"):
                return [self.governed_tag(c, text, "alter_governed_tag")]
        elif c.take("DROP"):
            if c.take("POLICY"):
                c.take("IF", "EXISTS")
                name = c.name()
                c.need("ON")
                securable_type, securable = self.securable(c)
                c.end()
                table = securable if securable_type == "TABLE" else None
                abac = Abac(securable_type, securable)
                return [Stmt("drop_abac_policy", text, name=name, table=table, abac=abac)]
            if c.take("GOVERNED", "TAG"):
                return [self.governed_tag(c, text, "drop_governed_tag")]
            for words, kind in (
                (("MASKING", "POLICY"), "drop_masking_policy"),
                (("ROW", "ACCESS", "POLICY"), "drop_row_access_policy"),
                *(((k.upper(), "POLICY"), f"drop_{k}_policy") for k in _CONSTRAINT_KINDS),
            ):
                if c.take(*words):
                    c.take("IF", "EXISTS")
                    name = c.name()
                    c.end()
                    return [Stmt(kind, text, name=name)]
        return [Stmt("other", text, expression=self.other(text))]

    def other(self, text: str) -> exp.Expression | None:
        try:
            trees = [t for t in sqlglot.parse(text, read=self.dialect) if t is not None]
        except Exception:
            return None
        if len(trees) != 1 or isinstance(trees[0], exp.Command):
            return None
        return trees[0]

    def params(self, c: _Tokens) -> tuple[Param, ...]:
        out = []
        for item in c.group():
            if not _is_name(item[0]) or len(item) < 2:
                raise ReadError(f"not a parameter: {c.source(item)!r}")
            # name type [DEFAULT ...] [COMMENT '...'] [NOT NULL]
            typ: list[Token] = []
            depth = 0
            for tok in item[1:]:
                if depth == 0 and _word(tok) in ("DEFAULT", "COMMENT", "NOT", "NULL"):
                    break
                depth += tok.token_type in _OPEN or tok.text == "<"
                depth -= tok.token_type in _CLOSE or tok.text == ">"
                typ.append(tok)
            out.append(Param(item[0].text, _type(typ, c.sql)))
        return tuple(out)

    def policy(self, c: _Tokens, text: str, kind: str, or_replace: bool) -> Stmt:
        if_not_exists = c.take("IF", "NOT", "EXISTS")
        name = c.name()
        c.need("AS")
        params = self.params(c)
        c.need("RETURNS")
        returns = c.upto(lambda cur: cur.at().token_type is TokenType.ARROW)
        if not returns:
            raise c.error("a return type")
        c.need_kind(TokenType.ARROW, "'->'")
        body = c.toks[c.i :]
        comment = None
        exempt = False
        # trailing properties: COMMENT = '...', EXEMPT_OTHER_POLICIES = TRUE
        while (
            len(body) >= 3
            and body[-2].token_type is TokenType.EQ
            and _word(body[-3]) in ("COMMENT", "EXEMPT_OTHER_POLICIES")
        ):
            if _word(body[-3]) == "COMMENT":
                comment = body[-1].text
            else:
                exempt = _word(body[-1]) == "TRUE"
            body = body[:-3]
        if not body:
            raise c.error("a policy body")
        body_text = c.source(body)
        self.parse(body_text)
        return Stmt(
            kind,
            text,
            name=name,
            params=params,
            returns=_type(returns, c.sql),
            body_text=body_text,
            or_replace=or_replace,
            if_not_exists=if_not_exists,
            comment=comment,
            exempt=exempt,
        )

    _CLAUSES = frozenset(
        [
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
            "COPY",
            "DEFAULT",
            "WITH",
        ]
    )

    def function(self, c: _Tokens, text: str, or_replace: bool, secure: bool) -> Stmt | None:
        if_not_exists = c.take("IF", "NOT", "EXISTS")
        name = c.name()
        if c.at() is None or c.at().token_type is not TokenType.L_PAREN:  # type: ignore[union-attr]
            return None
        params = self.params(c)
        returns = language = comment = body_text = None
        while not c.done():
            if c.take("RETURNS"):
                if c.take("NULL"):
                    continue
                typ = c.upto(lambda cur: _word(cur.at()) in self._CLAUSES)
                if not typ:
                    raise c.error("a return type")
                returns = _type(typ, c.sql)
            elif c.take("LANGUAGE"):
                language = c.name().upper()
            elif c.take("COMMENT"):
                c.kind(TokenType.EQ)
                comment = c.string()
            elif c.take("RETURN"):
                rest = c.toks[c.i :]
                if not rest:
                    raise c.error("an expression after RETURN")
                body_text = c.source(rest)
                self.parse(body_text)
                c.i = len(c.toks)
            elif c.take("AS"):
                content = c.string()
                if language in (None, "SQL"):
                    body_text = content.strip()
                    self.parse(body_text)
                else:
                    body_text = content
            elif c.at().token_type in _OPEN:  # type: ignore[union-attr]
                c.skip_group()
            else:
                c.i += 1
        if body_text is None:
            raise ReadError("a function needs RETURN <expression> or AS '<body>'")
        return Stmt(
            "function",
            text,
            name=name,
            params=params,
            returns=returns,
            body_text=body_text,
            or_replace=or_replace,
            if_not_exists=if_not_exists,
            secure=secure,
            comment=comment,
        )

    def tag(self, c: _Tokens, text: str, or_replace: bool) -> Stmt:
        if_not_exists = c.take("IF", "NOT", "EXISTS")
        name = c.name()
        comment = None
        while not c.done():
            if c.take("COMMENT"):
                c.kind(TokenType.EQ)
                comment = c.string()
            else:
                c.i += 1
        return Stmt(
            "snowflake_tag",
            text,
            name=name,
            or_replace=or_replace,
            if_not_exists=if_not_exists,
            comment=comment,
        )

    def governed_tag(self, c: _Tokens, text: str, kind: str) -> Stmt:
        name = c.name()
        comment = None
        while kind == "governed_tag" and not c.done():
            if c.take("DESCRIPTION"):
                comment = c.string()
            else:
                c.i += 1
        return Stmt(kind, text, name=name, comment=comment)

    def alter_tag(self, c: _Tokens, text: str) -> Stmt | None:
        c.take("IF", "EXISTS")
        name = c.name()
        if c.take("SET", "MASKING", "POLICY"):
            kind = "alter_tag_set_masking"
        elif c.take("UNSET", "MASKING", "POLICY"):
            kind = "alter_tag_unset_masking"
        else:
            return None
        policies = [c.name()]
        while c.kind(TokenType.COMMA):
            c.need("MASKING", "POLICY")
            policies.append(c.name())
        force = kind == "alter_tag_set_masking" and c.take("FORCE")
        c.end()
        return Stmt(
            kind, text, name=name, policy=policies[0], policies=tuple(policies), force=force
        )

    def securable(self, c: _Tokens) -> tuple[str, str]:
        for kind in ("CATALOG", "SCHEMA", "TABLE"):
            if c.take(kind):
                return kind, c.name()
        raise c.error("CATALOG, SCHEMA or TABLE")

    def principals(self, c: _Tokens) -> tuple[str, ...]:
        out = []
        while True:
            tok = c.at()
            if tok is not None and tok.token_type in _STRINGS:
                out.append(tok.text)
                c.i += 1
            elif _is_name(tok):
                out.append(tok.text)  # type: ignore[union-attr]
                c.i += 1
            else:
                raise c.error("a principal")
            if not c.kind(TokenType.COMMA):
                return tuple(out)

    @staticmethod
    def _clause(c: _Tokens) -> bool:
        return c.words("MATCH", "COLUMNS") or c.words("ON", "COLUMN") or c.words("USING", "COLUMNS")

    def abac(self, c: _Tokens, text: str, or_replace: bool) -> Stmt:
        name = c.name()
        c.need("ON")
        securable_type, securable = self.securable(c)
        comment = c.string() if c.take("COMMENT") else None
        if c.take("ROW", "FILTER"):
            kind = "ROW FILTER"
        else:
            c.need("COLUMN", "MASK")
            kind = "COLUMN MASK"
        function = c.name()
        c.need("TO")
        to = self.principals(c)
        except_ = self.principals(c) if c.take("EXCEPT") else ()
        c.need("FOR", "TABLES")
        when = None
        if c.take("WHEN"):
            cond = c.upto(self._clause)
            if not cond:
                raise c.error("a condition after WHEN")
            when = self.parse(c.source(cond))
        match: list[tuple[exp.Expression, str | None]] = []
        if c.take("MATCH", "COLUMNS"):
            while True:
                item = c.upto(
                    lambda cur: cur.at().token_type is TokenType.COMMA or self._clause(cur)
                )
                if not item:
                    raise c.error("a condition after MATCH COLUMNS")
                alias = None
                if len(item) >= 3 and _word(item[-2]) == "AS" and _is_name(item[-1]):
                    item, alias = item[:-2], item[-1].text
                match.append((self.parse(c.source(item)), alias))
                if not c.kind(TokenType.COMMA):
                    break
        on_column = None
        if c.take("ON", "COLUMN"):
            if not _is_name(c.at()):
                raise c.error("an alias after ON COLUMN")
            on_column = c.toks[c.i].text
            c.i += 1
        using = c.columns() if c.take("USING", "COLUMNS") else ()
        c.end()
        return Stmt(
            "abac_policy",
            text,
            name=name,
            table=securable if securable_type == "TABLE" else None,
            policy=function,
            column_name=on_column,
            columns=using,
            or_replace=or_replace,
            comment=comment,
            abac=Abac(
                securable_type,
                securable,
                kind=kind,
                function=function,
                to=to,
                except_=except_,
                when=when,
                match_columns=tuple(match),
                on_column=on_column,
                using=using,
                comment=comment,
            ),
        )

    # ---------------------------------------------------------------- ALTER TABLE

    def alter_table(self, c: _Tokens, text: str) -> list[Stmt] | None:
        c.take("IF", "EXISTS")
        table = c.name()
        actions: list[dict] = []
        while True:
            found = self.table_action(c)
            if found is None:
                if not actions:
                    return None
                raise c.error("a policy action")
            actions += found
            if not c.kind(TokenType.COMMA):
                break
        c.end()
        drops = [a for a in actions if a["kind"] == "drop_row_access"]
        adds = [a for a in actions if a["kind"] == "add_row_access"]
        if len(drops) == 1 and len(adds) == 1:  # DROP ROW ACCESS POLICY p, ADD ... p2: a swap
            adds[0]["dropped_policy"] = drops[0]["policy"]
            actions.remove(drops[0])
        return [Stmt(text=text, table=table, **a) for a in actions]

    def table_action(self, c: _Tokens) -> list[dict] | None:
        if c.take("ADD", "ROW", "ACCESS", "POLICY"):
            policy = c.name()
            c.need("ON")
            return [{"kind": "add_row_access", "policy": policy, "columns": c.columns()}]
        if c.take("DROP", "ROW", "ACCESS", "POLICY"):
            return [{"kind": "drop_row_access", "policy": c.name()}]
        if c.take("DROP", "ALL", "ROW", "ACCESS", "POLICIES"):
            return [{"kind": "drop_row_access", "policy": None}]
        if c.take("SET", "ROW", "FILTER"):
            policy = c.name()
            c.need("ON")
            return [{"kind": "set_row_filter", "policy": policy, "columns": c.columns()}]
        if c.take("DROP", "ROW", "FILTER"):
            return [{"kind": "drop_row_filter"}]
        if c.take("SET", "TAGS"):
            return [{"kind": "set_tags", "tags": self.databricks_tags(c)}]
        if c.take("UNSET", "TAGS"):
            return [{"kind": "unset_tags", "tags": self.databricks_tags(c)}]
        if c.take("SET", "TAG"):
            return [{"kind": "set_table_tag", "tags": self.snowflake_tags(c)}]
        # alter-table: SET AGGREGATION POLICY p [ENTITY KEY (...)] [FORCE], SET JOIN POLICY p
        # [ALLOWED JOIN KEYS (...)] [FORCE] (user-guide/join-policies), UNSET ... POLICY
        for kind, keys in (
            ("aggregation", ("ENTITY", "KEY")),
            ("join", ("ALLOWED", "JOIN", "KEYS")),
        ):
            if c.take("SET", kind.upper(), "POLICY"):
                policy = c.name()
                columns = c.columns() if c.take(*keys) else ()
                force = c.take("FORCE")
                return [
                    {
                        "kind": f"set_{kind}_policy",
                        "policy": policy,
                        "columns": columns,
                        "force": force,
                    }
                ]
            if c.take("UNSET", kind.upper(), "POLICY"):
                return [{"kind": f"unset_{kind}_policy"}]
        if _word(c.at()) in ("MODIFY", "ALTER", "CHANGE"):
            mark = c.i
            c.i += 1
            found = self.column_actions(c)
            if found is None:
                c.i = mark
            return found
        return None

    _COLUMN_ACTIONS = (
        ("SET", "MASKING", "POLICY"),
        ("UNSET", "MASKING", "POLICY"),
        ("SET", "PROJECTION", "POLICY"),
        ("UNSET", "PROJECTION", "POLICY"),
        ("SET", "MASK"),
        ("DROP", "MASK"),
        ("SET", "TAGS"),
        ("UNSET", "TAGS"),
        ("SET", "TAG"),
    )

    def column_action_at(self, c: _Tokens, k: int = 0) -> bool:
        """``[COLUMN] name`` and a column action, ``k`` tokens ahead."""
        if c.words("COLUMN", k=k):
            k += 1
        if not _is_name(c.at(k)):
            return False
        k += 1
        while (dot := c.at(k)) is not None and dot.token_type is TokenType.DOT:
            k += 2
        return any(c.words(*w, k=k) for w in self._COLUMN_ACTIONS)

    def column_actions(self, c: _Tokens) -> list[dict] | None:
        paren = c.at() is not None and c.at().token_type is TokenType.L_PAREN  # type: ignore[union-attr]
        if not self.column_action_at(c, 1 if paren else 0):
            return None
        if paren:
            c.i += 1
        out: list[dict] = []
        while True:
            if not self.column_action_at(c):
                raise c.error("[COLUMN] name and a policy action")
            c.take("COLUMN")
            item: dict = {"column_name": c.name()}
            if c.take("SET", "MASKING", "POLICY"):
                item.update(kind="set_masking_policy", policy=c.name())
                if c.take("USING"):
                    item["columns"] = c.columns()
                item["force"] = c.take("FORCE")
            elif c.take("UNSET", "MASKING", "POLICY"):
                item["kind"] = "unset_masking_policy"
            elif c.take("SET", "PROJECTION", "POLICY"):  # alter-table: ... [FORCE]
                item.update(kind="set_projection_policy", policy=c.name())
                item["force"] = c.take("FORCE")
            elif c.take("UNSET", "PROJECTION", "POLICY"):
                item["kind"] = "unset_projection_policy"
            elif c.take("SET", "MASK"):
                item.update(kind="set_mask", policy=c.name())
                if c.take("USING", "COLUMNS"):
                    item["columns"] = c.columns()
            elif c.take("DROP", "MASK"):
                item["kind"] = "drop_mask"
            elif c.take("SET", "TAGS"):
                item.update(kind="set_tags", tags=self.databricks_tags(c))
            elif c.take("UNSET", "TAGS"):  # sql-ref-syntax-ddl-alter-table: UNSET TAGS (k, ...)
                item.update(kind="unset_tags", tags=self.databricks_tags(c))
            else:
                c.need("SET", "TAG")
                item.update(kind="set_column_tag", tags=self.snowflake_tags(c))
            out.append(item)
            nxt = c.at()
            if (
                nxt is not None
                and nxt.token_type is TokenType.COMMA
                and self.column_action_at(c, 1)
            ):
                c.i += 1
                continue
            break
        if paren:
            c.need_kind(TokenType.R_PAREN, "')'")
        return out

    def tag_part(self, c: _Tokens) -> str:
        tok = c.at()
        if tok is not None and tok.token_type in _STRINGS:
            c.i += 1
            return tok.text
        return c.name()

    def databricks_tags(self, c: _Tokens) -> tuple[tuple[str, str], ...]:
        """``('key' = 'value', 'key2')``: a key without a value gets ''."""
        out = []
        for item in c.group():
            sub = _Tokens(item, c.sql)
            key = self.tag_part(sub)
            value = self.tag_part(sub) if sub.kind(TokenType.EQ) else ""
            sub.end()
            out.append((key, value))
        return tuple(out)

    def snowflake_tags(self, c: _Tokens) -> tuple[tuple[str, str], ...]:
        """``t = 'v' [, t2 = 'v2']``, up to a following ``, [COLUMN] c2 <action>``."""
        out = []
        while True:
            key = c.name()
            c.need_kind(TokenType.EQ, "'='")
            out.append((key, c.string()))
            nxt = c.at()
            if nxt is None or nxt.token_type is not TokenType.COMMA or self.column_action_at(c, 1):
                return tuple(out)
            c.i += 1


#: Snowflake's projection, aggregation and join policies, as their statements name them
_CONSTRAINT_KINDS = ("projection", "aggregation", "join")


def read(sql: str, dialect: str) -> list[Stmt]:
    """The statements of ``sql`` (usually one), or ReadError."""
    return _Reader(dialect).read(sql)


def split(script: str, dialect: str) -> list[str]:
    """The statements of a script, each as its text, the way a platform's client sends a script
    one statement at a time: cut at every semicolon sqlglot's tokenizer finds (one inside a
    string, a quoted name or a comment is not a token), comments between statements dropped.
    The stand-ins' own splitter: a test deploys compiled SQL with it, never with accord's, so
    that a misreading in accord's splitter cannot be shared by what it is tested against."""
    tokens = _Reader(dialect).tokens(script)
    out: list[str] = []
    start: int | None = None
    for tok in tokens:
        if tok.token_type is TokenType.SEMICOLON:
            if start is not None:
                out.append(script[start : tok.start].strip())
            start = None
        elif start is None:
            start = tok.start
    if start is not None:
        out.append(script[start:].strip())
    return out
