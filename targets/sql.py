"""Identifiers and literals through sqlglot: the only way accord spells a name or a value."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from accord.compiler.core.errors import UsageError
from accord.compiler.core.platforms import SQLGLOT_DIALECTS as DIALECTS
from accord.compiler.core.platforms import facts
from accord.targets import sqlwords
from accord.targets.reserved import MAX_IDENTIFIER, RESERVED


@lru_cache(maxsize=4)
def _sqlglot_keywords(platform: str) -> frozenset[str]:
    """Every word of the dialect tokenizer's keywords ("ORDER BY" gives ORDER and BY)."""
    tokenizer = Dialect.get_or_raise(DIALECTS[platform]).tokenizer_class
    return frozenset(w.upper() for k in tokenizer.KEYWORDS for w in k.split() if w.isalpha())


def _keywords(platform: str) -> frozenset[str]:
    """:func:`_sqlglot_keywords`, from ``targets/sqlwords.py`` while the sqlglot it was
    computed from is installed (loading a dialect to read them was most of what sqlglot's
    dialects cost a lint of policy files)."""
    words = _words()
    return _sqlglot_keywords(platform) if words is None else words.KEYWORDS[platform]


_TABLE: list[bool] = [True]


@lru_cache(maxsize=1)
def _table() -> Any:
    return sqlwords if sqlglot.__version__ == sqlwords.SQLGLOT_VERSION else None


@lru_cache(maxsize=4)
def _special_upper(platform: str) -> frozenset[str]:
    return frozenset(w.upper() for w in _table().SPECIAL[platform])


def _words() -> Any:
    """``targets/sqlwords.py`` (sqlglot's answers computed once, ``targets/sqlwords_build.py``),
    or None: it was computed from another sqlglot version, or :func:`parser_only` is on."""
    return _table() if _TABLE[0] else None


@contextmanager
def parser_only() -> Iterator[None]:
    """Ask sqlglot's tokenizer and parser every question, as without ``targets/sqlwords.py``
    (what builds that file, and the tests comparing both)."""
    _TABLE[0] = False
    try:
        yield
    finally:
        _TABLE[0] = True


#: (name, platform) -> whether the name must be quoted: one entry per distinct name, filled
#: by :func:`_needs_quotes` one name at a time or by :func:`prime_names` many at a time
_QUOTED: dict[tuple[str, str], bool] = {}
_QUOTED_MAX = 1 << 18
#: names :func:`prime_names` asks the parser about in one statement
_BATCH = 256


def _needs_quotes(name: str, platform: str) -> bool:
    """Whether a name must be quoted: it is a keyword (or otherwise does not read back as a
    plain column), or has unusual characters. Asked of sqlglot's own parser."""
    found = _QUOTED.get((name, platform))
    if found is None:
        found = _remember(name, platform, _decide(name, platform))
    return found


def _remember(name: str, platform: str, quoted: bool) -> bool:
    if len(_QUOTED) >= _QUOTED_MAX:
        _QUOTED.clear()
    _QUOTED[(name, platform)] = quoted
    return quoted


def _settled(name: str, platform: str) -> bool | None:
    """The answer for ``name`` without the parser, when its characters, a keyword or
    ``targets/sqlwords.py`` decide it; None when only the parser can tell (a name with ``$`` or
    other than ASCII, a spelling of a special word the table was not checked on, or any name
    while the table is off: another sqlglot version, :func:`parser_only`)."""

    if (
        not _plain(name)
        or name.upper() in _keywords(platform)
        or name.upper() in RESERVED[platform]
    ):
        return True
    words = _words()
    if words is None or "$" in name or not name.isascii():
        return None
    if name in words.SPECIAL[platform]:
        return True
    if name.upper() in _special_upper(platform):
        return None  # a spelling of a special word the table was not checked on: the parser
    # a word sqlglot's source never spells: the parser reads it as a plain column
    return False


def _decide(name: str, platform: str) -> bool:
    settled = _settled(name, platform)
    if settled is not None:
        return settled
    return not _reads_as_columns([name], platform)


def _reads_as_columns(names: list[str], platform: str) -> bool:
    """Whether ``SELECT n1, n2, ... FROM t`` reads back as exactly these names, each a plain
    unqualified column."""
    try:
        tree = sqlglot.parse_one(f"SELECT {', '.join(names)} FROM t", read=_dialect(platform))
    except sqlglot.errors.SqlglotError:
        return False
    projections = tree.expressions if isinstance(tree, exp.Select) else []
    return len(projections) == len(names) and all(
        isinstance(p, exp.Column) and p.name == n and not p.table
        for p, n in zip(projections, names, strict=False)
    )


def prime_names(names: Iterable[str], platform: str) -> None:
    """Decide at once, for every part of the dotted ``names`` not decided yet, whether it must
    be quoted (what :func:`_needs_quotes` answers then comes from here).

    Parsing ``SELECT name FROM t`` once per name was half of rendering a big estate; here the
    names the parser must decide are asked in statements of up to ``_BATCH`` projections.
    Only names of letters, digits and ``_`` that are no keyword reach the parser, so each is
    one token of its own whatever surrounds it. A statement that reads back as exactly its
    names, each a plain column, says no name in it needs quotes; any other answer (a name read
    as a function, a keyword, a parse error) sends every name of that statement to the one-name
    question instead, so a batch can only confirm what asking one name at a time would say
    (``tests/test_render_perf.py`` compares both on every word sqlglot knows)."""
    pending = []
    for name in sorted({part for dotted in set(names) for part in dotted.split(".")}):
        if (name, platform) in _QUOTED:
            continue
        if _settled(name, platform) is not None or "$" in name:
            _remember(name, platform, _decide(name, platform))
        else:
            pending.append(name)
    for start in range(0, len(pending), _BATCH):
        chunk = pending[start : start + _BATCH]
        if _reads_as_columns(chunk, platform):
            for name in chunk:
                _remember(name, platform, False)
        else:
            for name in chunk:
                _remember(name, platform, _decide(name, platform))


def ident(name: str, platform: str) -> exp.Identifier:
    """An identifier, quoted only when it must be (a keyword, or unusual characters).

    Snowflake resolves unquoted names in upper case, so a quoted Snowflake name is upper-cased
    to keep meaning the same object."""

    if len(name) > MAX_IDENTIFIER:
        raise UsageError(
            f"the {platform} name {name[:40]}... is {len(name)} characters long; {platform} "
            f"accepts at most {MAX_IDENTIFIER} (shorten the names it is made of)"
        )
    needs_quote = _needs_quotes(name, platform)
    if needs_quote and facts(platform).folds_upper and _plain(name):
        name = name.upper()
    return exp.to_identifier(name, quoted=needs_quote)


def exact_ident(name: str, platform: str) -> exp.Identifier:
    """A name exactly as the platform answered it (a role ``CURRENT_ROLE()`` or ``SHOW
    GRANTS`` gave, a principal): quoted unless it reads back as itself unquoted. Where the
    platform resolves an unquoted name in upper case (Snowflake), a name holding a lower-case
    letter is quoted as it is (a role created as ``"drift_reader"``), never upper-cased as
    :func:`ident` does for the model's own names: that would name another role."""
    folded = facts(platform).folds_upper and name != name.upper()
    return exp.to_identifier(name, quoted=folded or _needs_quotes(name, platform))


def principal_sql(name: str, platform: str) -> str:
    """A principal (a Databricks user, service principal or group) as a statement names it:
    always quoted (backticks), as the platform asks for names with special characters."""
    return render(exp.Identifier(this=name, quoted=True), platform)


def _plain(name: str) -> bool:
    return (
        bool(name)
        and (name[0].isalpha() or name[0] == "_")
        and all(c.isalnum() or c in "_$" for c in name)
    )


def table(name: str, platform: str) -> exp.Table:
    parts = name.split(".")
    ids = [ident(p, platform) for p in parts]
    while len(ids) < 3:
        ids.insert(0, None)  # type: ignore[arg-type]
    catalog, db, this = ids
    return exp.Table(this=this, db=db, catalog=catalog)


def column(name: str, platform: str, qualifier: str | None = None) -> exp.Column:
    return exp.Column(
        this=ident(name, platform),
        table=exp.to_identifier(qualifier) if qualifier else None,
    )


def literal(value: str) -> exp.Literal:
    return exp.Literal.string(value)


#: characters that end a line for some reader: a ``--`` comment must hold none of them
_LINE_BREAKS = str.maketrans({c: " " for c in "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


def comment_text(text: str) -> str:
    """``text`` made safe for one ``--`` comment line: every line break becomes a space, so
    nothing after it can become SQL."""
    return text.translate(_LINE_BREAKS)


def statement_count(text: str, platform: str) -> int:
    """How many statements ``text`` holds, as the platform's tokenizer (sqlglot's) splits them:
    comments and strings (Snowflake ``$$`` bodies included) never split."""
    if _PLAIN_SQL.issuperset(text):
        # no quote, comment, escape or dollar can occur: every ';' is a statement end as the
        # tokenizer sees it, and a statement is a stretch between them that holds a token
        return sum(1 for part in text.split(";") if part.strip(" \n"))
    return _tokenized_count(text, platform)


def _tokenized_count(text: str, platform: str) -> int:
    """:func:`statement_count` through the tokenizer, for any text."""

    tokens = _tokenizer(platform).tokenize(text)
    count, open_ = 0, False
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            count += open_
            open_ = False
        else:
            open_ = True
    return count + open_


#: characters of SQL text in which no string, quoted name, comment or escape can begin
#: (``-`` and ``/`` are left out: they start comments); most attachment statements are these
_PLAIN_SQL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ \n.,()=;")


@lru_cache(maxsize=4)
def _tokenizer(platform: str) -> Any:
    """One tokenizer per platform (``tokenize`` resets it): building one per call was a tenth
    of compile time."""
    return Dialect.get_or_raise(DIALECTS[platform]).tokenizer_class()


def render(node: exp.Expression, platform: str, pretty: bool = False) -> str:
    return node.sql(_dialect(platform), **_generator_options(platform, pretty))


def _generator_options(platform: str, pretty: bool) -> dict[str, Any]:
    """How accord writes SQL for ``platform``: function names in the platform's own case."""
    return {
        "pretty": pretty,
        "normalize_functions": facts(platform).function_case,
    }


@lru_cache(maxsize=4)
def _dialect(platform: str) -> Dialect:
    """One dialect instance per platform: ``Expression.sql("snowflake")`` builds a new one per
    call (a fifth of rendering an attachment). A dialect holds only its settings; each call
    still gets a generator of its own."""
    return Dialect.get_or_raise(DIALECTS[platform])


@lru_cache(maxsize=1 << 16)
def name_sql(name: str, platform: str) -> str:
    """A dotted object name, each part quoted as needed (a string of strings: cached, since
    every attachment names its table, column and policy again)."""
    return ".".join(_part_sql(p, platform) for p in name.split("."))


@lru_cache(maxsize=1 << 16)
def _part_sql(part: str, platform: str) -> str:
    """One part of a dotted name, quoted as needed (cached per part: a schema or a database is
    a part of thousands of names)."""
    return _name_generator(platform).generate(ident(part, platform), copy=False)


class _NameGenerators(threading.local):
    """Per thread and platform, one sqlglot generator with :func:`render`'s settings, reused
    for every lone identifier: :func:`render` builds a generator and copies the tree on each
    call, six times the work of writing one identifier (a cold compile writes thousands). The
    identifier is the caller's own fresh node, so the generator may work on it uncopied; a
    generator holds per-call state, so threads do not share one."""

    def __init__(self) -> None:
        self.by_platform: dict[str, Any] = {}


_NAME_GENERATORS = _NameGenerators()


def _name_generator(platform: str) -> Any:
    found = _NAME_GENERATORS.by_platform.get(platform)
    if found is None:
        found = _NAME_GENERATORS.by_platform[platform] = _dialect(platform).generator(
            **_generator_options(platform, pretty=False)
        )
    return found


@lru_cache(maxsize=1 << 16)
def literal_sql(value: str, platform: str) -> str:
    """A string literal as the platform's SQL (cached: plans and attachments spell the same
    table, column and policy names as literals again and again)."""
    return render(literal(value), platform)


def call(name: str, platform: str, *args: exp.Expression) -> exp.Expression:
    """A call of a (possibly qualified) function."""
    parts = name.split(".")
    fn = exp.Anonymous(this=parts[-1], expressions=list(args))
    if len(parts) == 1:
        return fn
    node: exp.Expression = ident(parts[0], platform)
    for p in parts[1:-1]:
        node = exp.Dot(this=node, expression=ident(p, platform))
    return exp.Dot(this=node, expression=fn)
