"""Column types, parsed with sqlglot in the platform's dialect.

The types estates write (``compiler.model.typenames``) are answered from a table checked against
sqlglot, so that validating and lowering them imports neither sqlglot's dialects nor, here,
sqlglot itself; anything else is parsed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from accord.compiler.core.platforms import SQLGLOT_DIALECTS as DIALECTS
from accord.compiler.core.platforms import facts
from accord.compiler.model.typenames import lookup

if TYPE_CHECKING:
    from sqlglot import exp


#: the longest type text read (a STRUCT of many fields is long; a type of megabytes is not one)
_MAX_TYPE_CHARS = 10_000


@lru_cache(maxsize=1024)
def parse_type(text: str, platform: str) -> exp.DataType | None:
    """The sqlglot DataType for ``text`` on ``platform``, or None if it is not a type."""
    from sqlglot import exp  # noqa: PLC0415 - sqlglot: never on accord lint's YAML path
    from sqlglot.errors import ParseError, TokenError  # noqa: PLC0415 - as above

    # one type, nothing after it: `VARCHAR; DROP ...` parses as a block of statements, and a
    # comment or a second statement is no part of a type
    if ";" in text or "--" in text or "/*" in text or len(text) > _MAX_TYPE_CHARS:
        return None
    try:
        dtype = exp.DataType.build(text, dialect=DIALECTS[platform], udt=False)
    except (ParseError, TokenError, ValueError, KeyError, RecursionError):
        return None
    if not isinstance(dtype, exp.DataType) or dtype.this == exp.DataType.Type.USERDEFINED:
        return None
    return dtype


def is_string_type(dtype: exp.DataType) -> bool:
    from sqlglot import exp  # noqa: PLC0415 - sqlglot: never on accord lint's YAML path

    return dtype.is_type(*exp.DataType.TEXT_TYPES)


@lru_cache(maxsize=1024)
def is_type(text: str, platform: str) -> bool:
    """Whether ``text`` is a data type on ``platform`` (``parse_type`` is not None)."""
    return lookup(text, platform) is not None or parse_type(text, platform) is not None


@lru_cache(maxsize=1024)
def is_string(text: str, platform: str) -> bool:
    """Whether ``text`` names a string type on ``platform`` (False if it is no type)."""
    known = lookup(text, platform)
    if known is not None:
        return known[1]
    dtype = parse_type(text, platform)
    return dtype is not None and is_string_type(dtype)


def render_type(text: str, platform: str) -> str:
    """The type as the platform spells it (sqlglot's canonical form)."""
    known = lookup(text, platform)
    if known is not None:
        return known[0]
    dtype = parse_type(text, platform)
    if dtype is None:
        raise ValueError(f"not a {platform} type: {text}")
    return dtype.sql(DIALECTS[platform])


@lru_cache(maxsize=1024)
def policy_type(text: str, platform: str) -> str:
    """The type a policy signature uses for a column of type ``text``: string types are
    normalised (VARCHAR on Snowflake, STRING on Databricks) so that one policy serves every
    length; other types are kept as declared."""
    known = lookup(text, platform)
    if known is not None:
        rendering, string = known
        return facts(platform).string_type if string else rendering
    dtype = parse_type(text, platform)
    if dtype is None:
        raise ValueError(f"not a {platform} type: {text}")
    if is_string(text, platform):
        return facts(platform).string_type
    return dtype.sql(DIALECTS[platform])


@lru_cache(maxsize=1024)
def translate_type(text: str, source: str, target: str) -> str | None:
    """The type ``text`` of ``source`` as ``target`` spells it (a column a replica inherits
    from a dataset on the other platform), or None when ``target`` has no such type. String
    types become the target's string type without parsing."""
    if source == target:
        return text
    if is_string(text, source):
        return facts(target).string_type
    dtype = parse_type(text, source)
    if dtype is None:
        return None
    spelled = dtype.sql(DIALECTS[target])
    return spelled if is_type(spelled, target) else None


@lru_cache(maxsize=1024)
def shown_whole(kept: int, text: str, platform: str) -> bool:
    """Whether keeping the last ``kept`` characters of a value of the type ``text`` shows
    every value it can hold whole (a declared length ``kept`` reaches: ACC206)."""
    length = declared_length(text, platform) if kept else None
    return length is not None and kept >= length


def declared_length(text: str, platform: str) -> int | None:
    """The most characters a value of the string type ``text`` can hold, where the type is
    written with its length (``VARCHAR(34)``, ``CHAR(2)``, Snowflake's ``STRING(10)``); None
    for a type written without one (a Snowflake ``VARCHAR`` holds up to its platform maximum,
    a Databricks ``STRING`` any length) and for a type that is not a string."""
    if not is_string(text, platform):
        return None
    try:
        rendered = render_type(text, platform)
    except ValueError:
        return None
    written = _RENDERED.fullmatch(rendered)
    if written is None or written.group(1) not in ("VARCHAR", "CHAR") or written.group(3):
        return None
    return int(written.group(2))


#: type names one platform has and the other does not (docs.snowflake.com/en/sql-reference/
#: intro-summary-data-types; docs.databricks.com/sql/language-manual/sql-ref-datatypes),
#: with the type to write instead. sqlglot reads them in either dialect, the platform does not.
_FOREIGN_TYPES = {
    "databricks": {
        "NUMBER": "DECIMAL(p, s)",
        "OBJECT": "STRUCT<...> or MAP<...>",
        "TIMESTAMP_LTZ": "TIMESTAMP",
        "TIMESTAMP_TZ": "TIMESTAMP",
        "VARBINARY": "BINARY",
    },
    "snowflake": {"STRUCT": "OBJECT", "VOID": "a concrete type"},
}


@lru_cache(maxsize=4096)
def foreign_type(text: str, platform: str) -> str:
    """A message when ``text`` names a type of the other platform, else ""."""
    head = text.split("(", 1)[0].split("<", 1)[0].strip().upper()
    other = facts(platform).other.title
    instead = _FOREIGN_TYPES.get(platform, {}).get(head)
    if instead is None:
        return ""
    return f"{text!r} is a {other} type, not a {platform} one: write {instead}"


#: a type as :func:`render_type` spells it, with one or two parameters
_RENDERED = re.compile(r"([A-Z][A-Z0-9_]*)\(([0-9]+)(?:, ([0-9]+))?\)")

_DECIMAL = ("precision", 1, 38)
#: where a parameter must lie, per platform and the type's name as :func:`render_type` spells
#: it: (what the first parameter is, its least value or None where no source says one, its
#: greatest value). Snowflake: NUMBER's
#: precision is at most 38 and its scale at most 37 and the precision (docs.snowflake.com/en/
#: sql-reference/data-types-numeric), a VARCHAR holds at most 134,217,728 bytes (.../intro-
#: summary-data-types), TIME and the timestamps take 0 to 9 fractional digits (.../data-types-
#: datetime). Databricks: DECIMAL's precision is 1 to 38 and its scale 0 to the precision
#: (docs.databricks.com/sql/language-manual/data-types/decimal-type).
_LIMITS: dict[str, dict[str, tuple[str, int | None, int]]] = {
    "snowflake": {
        "DECIMAL": _DECIMAL,
        "VARCHAR": ("length", None, 134_217_728),
        "CHAR": ("length", None, 134_217_728),
        **{
            t: ("fractional-second precision", 0, 9)
            for t in (
                "TIME",
                "TIMESTAMP",
                "TIMESTAMPNTZ",
                "TIMESTAMPLTZ",
                "TIMESTAMPTZ",
                "DATETIME",
            )
        },
    },
    "databricks": {"DECIMAL": _DECIMAL},
}

#: the greatest scale, per platform (it is also never more than the precision)
_MAX_SCALE = {"snowflake": 37, "databricks": 38}


@lru_cache(maxsize=4096)
def type_limit(text: str, platform: str) -> str:
    """A message when a parameter of the type ``text`` lies outside what ``platform`` accepts
    (``NUMBER(50, 2)``, a longer VARCHAR than Snowflake stores), else "": the platform would
    refuse the compiled SQL only when it runs. For a type :func:`is_type` accepts."""
    limits = _LIMITS.get(platform, {})
    try:
        rendered = render_type(text, platform)
    except ValueError:
        return ""
    written = _RENDERED.fullmatch(rendered)
    if written is None or written.group(1) not in limits:
        return ""
    name, first, second = written.groups()
    what, least, greatest = limits[name]
    value = int(first)
    if least is None and value > greatest:
        return f"{text!r}: the {what} must be at most {greatest:,} on {platform}, not {value}"
    if least is not None and not least <= value <= greatest:
        return f"{text!r}: the {what} must be {least} to {greatest:,} on {platform}, not {value}"
    if second is not None:
        scale, most = int(second), min(value, _MAX_SCALE[platform])
        if scale > most:
            return f"{text!r}: the scale must be 0 to {most} on {platform} (precision {value}), not {scale}"
    return ""
