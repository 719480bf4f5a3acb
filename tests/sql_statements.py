"""Take compiled SQL apart as a reader of the documented grammar would: statement boundaries
and clause keywords from sqlglot's tokenizer, every expression parsed by sqlglot itself.

Used by the tests of the ABAC and tag-style output; ``CREATE POLICY`` follows the grammar of
docs.databricks.com/aws/en/sql/language-manual/sql-ref-syntax-ddl-create-policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType


@dataclass
class Statement:
    text: str
    tokens: list[Token]
    source: str

    def starts(self, *words: str) -> bool:
        head = [t.text.upper() for t in self.tokens[: len(words)]]
        return head == list(words)

    def after(self, token: Token) -> str:
        """The source text after ``token`` to the end of the statement."""
        return self.source[token.end + 1 : self.tokens[-1].end + 1].strip()


def split(text: str, dialect: str) -> list[Statement]:
    """The statements of ``text`` (comments dropped by the tokenizer)."""
    tokens = Dialect.get_or_raise(dialect).tokenizer_class().tokenize(text)
    out: list[Statement] = []
    current: list[Token] = []
    for tok in [*tokens, None]:
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if current:
                body = text[current[0].start : current[-1].end + 1]
                out.append(Statement(body, current, text))
            current = []
        else:
            current.append(tok)
    return out


def parse_expression(text: str, dialect: str) -> exp.Expression:
    tree = sqlglot.parse_one(text, read=dialect)
    assert not isinstance(tree, exp.Command), f"did not parse as an expression: {text}"
    return tree


@dataclass
class Policy:
    name: str
    securable_type: str
    securable: str
    comment: str | None
    kind: str
    function: str
    to: list[str]
    except_: list[str]
    when: exp.Expression | None
    #: (condition, alias)
    match: list[tuple[exp.Expression, str]]
    on_column: str | None
    using: list[str]


class _Reader:
    def __init__(self, stmt: Statement) -> None:
        self.stmt = stmt
        self.toks = stmt.tokens
        self.i = 0

    def peek(self, *words: str) -> bool:
        got = [t.text.upper() for t in self.toks[self.i : self.i + len(words)]]
        return got == list(words)

    def expect(self, *words: str) -> None:
        assert self.peek(*words), f"expected {' '.join(words)} at {self.toks[self.i].text!r}"
        self.i += len(words)

    def dotted(self) -> str:
        parts = [self.toks[self.i].text]
        self.i += 1
        while self.i < len(self.toks) and self.toks[self.i].token_type == TokenType.DOT:
            parts.append(self.toks[self.i + 1].text)
            self.i += 2
        return ".".join(parts)

    def principals(self) -> list[str]:
        names = []
        while True:
            tok = self.toks[self.i]
            assert tok.token_type == TokenType.IDENTIFIER, f"principal not quoted: {tok.text}"
            names.append(tok.text)
            self.i += 1
            if self.i < len(self.toks) and self.toks[self.i].token_type == TokenType.COMMA:
                self.i += 1
                continue
            return names

    def until(self, *stops: tuple[str, ...]) -> list[Token]:
        """Tokens up to (not including) the first top-level stop sequence."""
        depth, start = 0, self.i
        while self.i < len(self.toks):
            tok = self.toks[self.i]
            if depth == 0 and any(self.peek(*s) for s in stops):
                break
            depth += tok.token_type == TokenType.L_PAREN
            depth -= tok.token_type == TokenType.R_PAREN
            self.i += 1
        return self.toks[start : self.i]

    def source(self, toks: list[Token]) -> str:
        return self.stmt.source[toks[0].start : toks[-1].end + 1]


def parse_policy(stmt: Statement) -> Policy:
    """A ``CREATE [OR REPLACE] POLICY`` statement, clause by clause."""
    r = _Reader(stmt)
    r.expect("CREATE")
    if r.peek("OR"):
        r.expect("OR", "REPLACE")
    r.expect("POLICY")
    name = r.dotted()
    r.expect("ON")
    securable_type = r.toks[r.i].text.upper()
    r.i += 1
    securable = r.dotted()
    comment = None
    if r.peek("COMMENT"):
        r.i += 1
        comment = r.toks[r.i].text
        r.i += 1
    kind = "ROW FILTER" if r.peek("ROW", "FILTER") else "COLUMN MASK"
    r.expect(*kind.split())
    function = r.dotted()
    r.expect("TO")
    to = r.principals()
    except_ = []
    if r.peek("EXCEPT"):
        r.i += 1
        except_ = r.principals()
    r.expect("FOR", "TABLES")
    stops = (("MATCH", "COLUMNS"), ("ON", "COLUMN"), ("USING", "COLUMNS"))
    when = None
    if r.peek("WHEN"):
        r.i += 1
        when = parse_expression(r.source(r.until(*stops)), "databricks")
    match = []
    if r.peek("MATCH", "COLUMNS"):
        r.i += 2
        toks = r.until(*stops[1:])
        chunk: list[Token] = []
        depth = 0
        for tok in [*toks, None]:
            if tok is None or (depth == 0 and tok.token_type == TokenType.COMMA):
                assert chunk[-2].token_type == TokenType.ALIAS, "MATCH COLUMNS entry has no AS"
                match.append((parse_expression(r.source(chunk[:-2]), "databricks"), chunk[-1].text))
                chunk = []
                continue
            depth += tok.token_type == TokenType.L_PAREN
            depth -= tok.token_type == TokenType.R_PAREN
            chunk.append(tok)
    on_column = None
    if r.peek("ON", "COLUMN"):
        r.i += 2
        on_column = r.toks[r.i].text
        r.i += 1
    using = []
    if r.peek("USING", "COLUMNS"):
        r.i += 2
        inner = r.until()
        using = [
            t.text
            for t in inner
            if t.token_type not in (TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA)
        ]
    assert r.i == len(r.toks), f"trailing tokens in {stmt.text!r}"
    return Policy(
        name,
        securable_type,
        securable,
        comment,
        kind,
        function,
        to,
        except_,
        when,
        match,
        on_column,
        using,
    )


def function_body(stmt: Statement, dialect: str) -> exp.Expression:
    """The body of a Databricks ``CREATE FUNCTION ... RETURN <expr>`` or of a Snowflake
    ``CREATE ... POLICY ... -> <expr> [COMMENT = '...']``, parsed by sqlglot."""
    if dialect == "databricks":
        ret = next(t for t in stmt.tokens if t.text.upper() == "RETURN")
        return parse_expression(stmt.after(ret), dialect)
    arrow = next(t for t in stmt.tokens if t.token_type == TokenType.ARROW)
    comment = [i for i, t in enumerate(stmt.tokens) if t.token_type == TokenType.COMMENT]
    end = stmt.tokens[comment[-1] - 1] if comment else stmt.tokens[-1]
    return parse_expression(stmt.source[arrow.end + 1 : end.end + 1], dialect)
