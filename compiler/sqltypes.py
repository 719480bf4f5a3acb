"""Column types, parsed with sqlglot in the platform's dialect."""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import ParseError

DIALECTS = {"snowflake": "snowflake", "databricks": "databricks"}


@lru_cache(maxsize=1024)
def parse_type(text: str, platform: str) -> exp.DataType | None:
    """The sqlglot DataType for ``text`` on ``platform``, or None if it is not a type."""
    try:
        dtype = exp.DataType.build(text, dialect=DIALECTS[platform], udt=False)
    except (ParseError, ValueError, KeyError):
        return None
    if dtype.this == exp.DataType.Type.USERDEFINED:
        return None
    return dtype


def is_string_type(dtype: exp.DataType) -> bool:
    return dtype.is_type(*exp.DataType.TEXT_TYPES)


@lru_cache(maxsize=1024)
def is_string(text: str, platform: str) -> bool:
    """Whether ``text`` names a string type on ``platform`` (False if it is no type)."""
    dtype = parse_type(text, platform)
    return dtype is not None and is_string_type(dtype)


def render_type(text: str, platform: str) -> str:
    """The type as the platform spells it (sqlglot's canonical form)."""
    dtype = parse_type(text, platform)
    if dtype is None:
        raise ValueError(f"not a {platform} type: {text}")
    return dtype.sql(DIALECTS[platform])


@lru_cache(maxsize=1024)
def policy_type(text: str, platform: str) -> str:
    """The type a policy signature uses for a column of type ``text``: string types are
    normalised (VARCHAR on Snowflake, STRING on Databricks) so that one policy serves every
    length; other types are kept as declared."""
    dtype = parse_type(text, platform)
    if dtype is None:
        raise ValueError(f"not a {platform} type: {text}")
    if is_string(text, platform):
        return "VARCHAR" if platform == "snowflake" else "STRING"
    return dtype.sql(DIALECTS[platform])
