"""Identifiers and literals through sqlglot: the only way accord spells a name or a value."""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

DIALECTS = {"snowflake": "snowflake", "databricks": "databricks"}


@lru_cache(maxsize=4)
def _keywords(platform: str) -> frozenset[str]:
    tokenizer = Dialect.get_or_raise(DIALECTS[platform]).tokenizer_class
    return frozenset(k.upper() for k in tokenizer.KEYWORDS if k.replace("_", "").isalpha())


def ident(name: str, platform: str) -> exp.Identifier:
    """An identifier, quoted only when it must be (a keyword, or unusual characters).

    Snowflake resolves unquoted names in upper case, so a quoted Snowflake name is upper-cased
    to keep meaning the same object."""
    needs_quote = name.upper() in _keywords(platform) or not _plain(name)
    if needs_quote and platform == "snowflake" and _plain(name):
        name = name.upper()
    return exp.to_identifier(name, quoted=needs_quote)


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


def render(node: exp.Expression, platform: str, pretty: bool = False) -> str:
    lower = platform == "databricks"
    return node.sql(
        DIALECTS[platform],
        pretty=pretty,
        normalize_functions="lower" if lower else "upper",
    )


def name_sql(name: str, platform: str) -> str:
    """A dotted object name, each part quoted as needed."""
    return ".".join(render(ident(p, platform), platform) for p in name.split("."))


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
