"""Column types every estate writes (``VARCHAR``, ``STRING``, ``NUMBER(10, 2)``, ...), answered
without sqlglot, so that loading and linting policy files never imports sqlglot's Snowflake and
Databricks dialects (the first ``DataType.build`` of a column type would load both).

Each entry is what :func:`compiler.model.types.parse_type` makes of the type with sqlglot (the
pinned version): how the dialect renders it (``{0}`` and ``{1}`` stand for the parameters as
written) and whether it is a string type. A type not in the table, or written any other way
(spaces inside, a leading zero, three parameters), goes to sqlglot as before.
``tests/test_typenames.py`` compares every entry with sqlglot, for several parameters and
spellings, so a sqlglot upgrade that renders one differently fails there.
"""

from __future__ import annotations

import re

#: ``NAME``, ``NAME(n)``, ``NAME(p,s)`` or ``NAME(p, s)``: digits without a leading zero
_WRITTEN = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)(?:\((0|[1-9][0-9]{0,8})(?:, ?(0|[1-9][0-9]{0,8}))?\))?"
)

#: (platform, type name in upper case, number of parameters) -> (sqlglot's rendering of the
#: type in the platform's dialect, whether sqlglot counts it among the string types)
KNOWN: dict[tuple[str, str, int], tuple[str, bool]] = {
    # snowflake
    ("snowflake", "VARCHAR", 0): ("VARCHAR", True),
    ("snowflake", "STRING", 0): ("VARCHAR", True),
    ("snowflake", "TEXT", 0): ("VARCHAR", True),
    ("snowflake", "CHAR", 0): ("CHAR", True),
    ("snowflake", "CHARACTER", 0): ("CHAR", True),
    ("snowflake", "NCHAR", 0): ("CHAR", True),
    ("snowflake", "NVARCHAR", 0): ("VARCHAR", True),
    ("snowflake", "NUMBER", 0): ("DECIMAL(38, 0)", False),
    ("snowflake", "DECIMAL", 0): ("DECIMAL(38, 0)", False),
    ("snowflake", "NUMERIC", 0): ("DECIMAL(38, 0)", False),
    ("snowflake", "INT", 0): ("INT", False),
    ("snowflake", "INTEGER", 0): ("INT", False),
    ("snowflake", "BIGINT", 0): ("BIGINT", False),
    ("snowflake", "SMALLINT", 0): ("SMALLINT", False),
    ("snowflake", "TINYINT", 0): ("TINYINT", False),
    ("snowflake", "BYTEINT", 0): ("INT", False),
    ("snowflake", "FLOAT", 0): ("DOUBLE", False),
    ("snowflake", "FLOAT4", 0): ("FLOAT", False),
    ("snowflake", "FLOAT8", 0): ("DOUBLE", False),
    ("snowflake", "DOUBLE", 0): ("DOUBLE", False),
    ("snowflake", "REAL", 0): ("FLOAT", False),
    ("snowflake", "BOOLEAN", 0): ("BOOLEAN", False),
    ("snowflake", "DATE", 0): ("DATE", False),
    ("snowflake", "TIME", 0): ("TIME", False),
    ("snowflake", "TIMESTAMP", 0): ("TIMESTAMP", False),
    ("snowflake", "TIMESTAMP_NTZ", 0): ("TIMESTAMPNTZ", False),
    ("snowflake", "TIMESTAMP_LTZ", 0): ("TIMESTAMPLTZ", False),
    ("snowflake", "TIMESTAMP_TZ", 0): ("TIMESTAMPTZ", False),
    ("snowflake", "DATETIME", 0): ("DATETIME", False),
    ("snowflake", "VARIANT", 0): ("VARIANT", False),
    ("snowflake", "OBJECT", 0): ("OBJECT", False),
    ("snowflake", "ARRAY", 0): ("ARRAY", False),
    ("snowflake", "BINARY", 0): ("BINARY", False),
    ("snowflake", "VARBINARY", 0): ("VARBINARY", False),
    ("snowflake", "GEOGRAPHY", 0): ("GEOGRAPHY", False),
    ("snowflake", "GEOMETRY", 0): ("GEOMETRY", False),
    ("snowflake", "VARCHAR", 1): ("VARCHAR({0})", True),
    ("snowflake", "STRING", 1): ("VARCHAR({0})", True),
    ("snowflake", "TEXT", 1): ("VARCHAR({0})", True),
    ("snowflake", "CHAR", 1): ("CHAR({0})", True),
    ("snowflake", "CHARACTER", 1): ("CHAR({0})", True),
    ("snowflake", "NCHAR", 1): ("CHAR({0})", True),
    ("snowflake", "NVARCHAR", 1): ("VARCHAR({0})", True),
    ("snowflake", "NUMBER", 1): ("DECIMAL({0})", False),
    ("snowflake", "DECIMAL", 1): ("DECIMAL({0})", False),
    ("snowflake", "NUMERIC", 1): ("DECIMAL({0})", False),
    ("snowflake", "BINARY", 1): ("BINARY({0})", False),
    ("snowflake", "VARBINARY", 1): ("VARBINARY({0})", False),
    ("snowflake", "TIME", 1): ("TIME({0})", False),
    ("snowflake", "TIMESTAMP", 1): ("TIMESTAMP({0})", False),
    ("snowflake", "TIMESTAMP_NTZ", 1): ("TIMESTAMPNTZ({0})", False),
    ("snowflake", "TIMESTAMP_LTZ", 1): ("TIMESTAMPLTZ({0})", False),
    ("snowflake", "TIMESTAMP_TZ", 1): ("TIMESTAMPTZ({0})", False),
    ("snowflake", "NUMBER", 2): ("DECIMAL({0}, {1})", False),
    ("snowflake", "DECIMAL", 2): ("DECIMAL({0}, {1})", False),
    ("snowflake", "NUMERIC", 2): ("DECIMAL({0}, {1})", False),
    # databricks
    ("databricks", "STRING", 0): ("STRING", True),
    ("databricks", "VARCHAR", 0): ("STRING", True),
    ("databricks", "CHAR", 0): ("STRING", True),
    ("databricks", "INT", 0): ("INT", False),
    ("databricks", "INTEGER", 0): ("INT", False),
    ("databricks", "BIGINT", 0): ("BIGINT", False),
    ("databricks", "SMALLINT", 0): ("SMALLINT", False),
    ("databricks", "TINYINT", 0): ("TINYINT", False),
    ("databricks", "LONG", 0): ("BIGINT", False),
    ("databricks", "SHORT", 0): ("SMALLINT", False),
    ("databricks", "BYTE", 0): ("TINYINT", False),
    ("databricks", "DECIMAL", 0): ("DECIMAL", False),
    ("databricks", "DEC", 0): ("DECIMAL", False),
    ("databricks", "NUMERIC", 0): ("DECIMAL", False),
    ("databricks", "NUMBER", 0): ("DECIMAL", False),
    ("databricks", "FLOAT", 0): ("FLOAT", False),
    ("databricks", "REAL", 0): ("FLOAT", False),
    ("databricks", "DOUBLE", 0): ("DOUBLE", False),
    ("databricks", "BOOLEAN", 0): ("BOOLEAN", False),
    ("databricks", "DATE", 0): ("DATE", False),
    ("databricks", "TIMESTAMP", 0): ("TIMESTAMP", False),
    ("databricks", "TIMESTAMP_NTZ", 0): ("TIMESTAMP_NTZ", False),
    ("databricks", "TIMESTAMP_LTZ", 0): ("TIMESTAMP_LTZ", False),
    ("databricks", "BINARY", 0): ("BINARY", False),
    ("databricks", "VOID", 0): ("VOID", False),
    ("databricks", "VARIANT", 0): ("VARIANT", False),
    ("databricks", "VARCHAR", 1): ("VARCHAR({0})", True),
    ("databricks", "CHAR", 1): ("CHAR({0})", True),
    ("databricks", "DECIMAL", 1): ("DECIMAL({0})", False),
    ("databricks", "DEC", 1): ("DECIMAL({0})", False),
    ("databricks", "NUMERIC", 1): ("DECIMAL({0})", False),
    ("databricks", "DECIMAL", 2): ("DECIMAL({0}, {1})", False),
    ("databricks", "DEC", 2): ("DECIMAL({0}, {1})", False),
    ("databricks", "NUMERIC", 2): ("DECIMAL({0}, {1})", False),
}


def lookup(text: str, platform: str) -> tuple[str, bool] | None:
    """(rendering, is a string type) of ``text`` on ``platform``, or None: ask sqlglot."""
    written = _WRITTEN.fullmatch(text)
    if written is None:
        return None
    name, first, second = written.groups()
    params = [p for p in (first, second) if p is not None]
    known = KNOWN.get((platform, name.upper(), len(params)))
    if known is None:
        return None
    rendering, is_string = known
    return rendering.format(*params), is_string
