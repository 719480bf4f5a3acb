"""sqlglot's answers to the quoting question, per platform (generated: do not edit).

Written by ``python -m accord.targets.sqlwords_build`` (``make sqlwords``) from sqlglot
30.30.0, checked on 36796 words; ``targets.sql`` reads it
only while that sqlglot version is installed, and ``tests/test_sqlwords.py`` fails while
it differs from what the installed sqlglot answers. See ``targets/sqlwords_build.py``.
"""

# fmt: off
SQLGLOT_VERSION = "30.30.0"

#: every word of the dialect tokenizer's keywords
KEYWORDS = {
    "snowflake": frozenset(
        {
            "ALL", "ALTER", "ANALYZE", "AND", "ANTI", "ANY", "APPLY", "ARRAY", "AS", "ASC",
            "ASOF", "AUTOINCREMENT", "BEGIN", "BETWEEN", "BIGDECIMAL", "BIGINT", "BIGNUM",
            "BIGNUMERIC", "BINARY", "BIT", "BLOB", "BOOL", "BOOLEAN", "BPCHAR", "BY", "BYTE",
            "BYTEA", "BYTEINT", "CACHE", "CALL", "CASE", "CHAR", "CHARACTER", "CLOB", "CLUSTER",
            "COLLATE", "COLUMN", "COMMENT", "COMMIT", "CONNECT", "CONSTRAINT", "COPY", "CREATE",
            "CROSS", "CUBE", "DATABASE", "DATE", "DATEMULTIRANGE", "DATERANGE", "DATETIME", "DEC",
            "DECFLOAT", "DECIMAL", "DEFAULT", "DELETE", "DESC", "DESCRIBE", "DISTINCT",
            "DISTRIBUTE", "DIV", "DOUBLE", "DROP", "ELSE", "END", "ENUM", "ESCAPE", "EXCEPT",
            "EXECUTE", "EXISTS", "EXPLAIN", "FALSE", "FETCH", "FILE", "FILTER", "FIRST", "FIXED",
            "FLOAT", "FOR", "FOREIGN", "FORMAT", "FROM", "FULL", "FUNCTION", "GEOGRAPHY",
            "GEOMETRY", "GET", "GRANT", "GROUP", "GROUPING", "HAVING", "HUGEINT", "ILIKE", "IN",
            "INDEX", "INET", "INNER", "INSERT", "INT", "INTEGER", "INTEGRATION", "INTERSECT",
            "INTERVAL", "INTO", "IS", "ISNULL", "JOIN", "JSON", "JSONB", "KEEP", "KEY", "KILL",
            "LATERAL", "LEFT", "LIKE", "LIMIT", "LIST", "LOAD", "LOCALTIME", "LOCALTIMESTAMP",
            "LOCK", "LONG", "LONGBLOB", "LONGTEXT", "LONGVARCHAR", "LS", "MAP", "MEDIUMBLOB",
            "MEDIUMINT", "MEDIUMTEXT", "MERGE", "MINUS", "NAMESPACE", "NATURAL", "NCHAR", "NEXT",
            "NOT", "NOTNULL", "NULL", "NULLABLE", "NUMBER", "NUMERIC", "NUMMULTIRANGE",
            "NUMRANGE", "NVARCHAR", "OBJECT", "OFFSET", "ON", "OPERATOR", "OPTIMIZE", "OR",
            "ORDER", "ORDINALITY", "OUT", "OUTER", "OVER", "OVERLAPS", "OVERWRITE", "PACKAGE",
            "PARTITION", "PARTITIONED", "PERCENT", "PIVOT", "POLICY", "POOL", "PRAGMA",
            "PRECISION", "PREPARE", "PRIMARY", "PROCEDURE", "PUT", "QUALIFY", "RANGE", "REAL",
            "RECURSIVE", "REF", "REFERENCES", "REGEXP", "REMOVE", "RENAME", "REPLACE", "REVOKE",
            "RIGHT", "RLIKE", "RM", "ROLE", "ROLLBACK", "ROLLUP", "ROW", "ROWS", "RULE", "SAMPLE",
            "SCHEMA", "SECURITY", "SELECT", "SEMANTIC", "SEMI", "SEQUENCE", "SESSION", "SET",
            "SETS", "SETTINGS", "SHORT", "SHOW", "SIMILAR", "SMALLINT", "SOME", "SORT", "SQL",
            "STAGE", "STORAGE", "STR", "STREAMLIT", "STRING", "STRUCT", "TABLE", "TABLESAMPLE",
            "TAG", "TEMP", "TEMPORARY", "TEXT", "THEN", "TIME", "TIMESTAMP", "TIMESTAMPLTZ",
            "TIMESTAMPNTZ", "TIMESTAMPTZ", "TIMETZ", "TINYBLOB", "TINYINT", "TINYTEXT", "TO",
            "TOP", "TRIGGER", "TRUE", "TRUNCATE", "TSMULTIRANGE", "TSRANGE", "TSTZMULTIRANGE",
            "TSTZRANGE", "UHUGEINT", "UINT", "UNCACHE", "UNDROP", "UNION", "UNIQUE", "UNKNOWN",
            "UNNEST", "UNPIVOT", "UPDATE", "USE", "USING", "UUID", "VACUUM", "VALUES",
            "VARBINARY", "VARCHAR", "VARIANT", "VARYING", "VECTOR", "VIEW", "VOLATILE", "VOLUME",
            "WAREHOUSE", "WHEN", "WHERE", "WINDOW", "WITH", "XOR",
        }
    ),
    "databricks": frozenset(
        {
            "ADD", "ALL", "ALTER", "ANALYZE", "AND", "ANTI", "ANY", "APPLY", "ARCHIVE",
            "ARCHIVES", "ARRAY", "AS", "ASC", "ASOF", "AUTOINCREMENT", "BEGIN", "BETWEEN",
            "BIGDECIMAL", "BIGINT", "BIGNUM", "BIGNUMERIC", "BINARY", "BIT", "BLOB", "BOOL",
            "BOOLEAN", "BPCHAR", "BY", "BYTE", "BYTEA", "CACHE", "CALL", "CASE", "CHAR",
            "CHARACTER", "CLOB", "CLUSTER", "COLLATE", "COLUMN", "COMMENT", "COMMIT", "CONNECT",
            "CONSTRAINT", "COPY", "CREATE", "CROSS", "CUBE", "DATABASE", "DATE", "DATEMULTIRANGE",
            "DATERANGE", "DATETIME", "DEC", "DECFLOAT", "DECIMAL", "DECLARE", "DEFAULT", "DELETE",
            "DESC", "DESCRIBE", "DISTINCT", "DISTRIBUTE", "DIV", "DOUBLE", "DROP", "ELSE", "END",
            "ENUM", "ESCAPE", "EXCEPT", "EXECUTE", "EXISTS", "EXPLAIN", "FALSE", "FETCH", "FILE",
            "FILES", "FILTER", "FIRST", "FIXED", "FLOAT", "FOR", "FOREIGN", "FORMAT", "FROM",
            "FULL", "FUNCTION", "GEOGRAPHY", "GEOMETRY", "GLOB", "GRANT", "GROUP", "GROUPING",
            "HAVING", "HUGEINT", "ILIKE", "IN", "INDEX", "INET", "INNER", "INSERT", "INT",
            "INTEGER", "INTERSECT", "INTERVAL", "INTO", "IS", "ISNULL", "JAR", "JARS", "JOIN",
            "JSON", "JSONB", "KEEP", "KEY", "KILL", "LATERAL", "LEFT", "LIKE", "LIMIT", "LIST",
            "LOAD", "LOCALTIME", "LOCALTIMESTAMP", "LOCK", "LONG", "LONGBLOB", "LONGTEXT",
            "LONGVARCHAR", "MAP", "MEDIUMBLOB", "MEDIUMINT", "MEDIUMTEXT", "MERGE", "MINUS",
            "MSCK", "NAMESPACE", "NATURAL", "NCHAR", "NEXT", "NOT", "NOTNULL", "NULL", "NULLABLE",
            "NUMBER", "NUMERIC", "NUMMULTIRANGE", "NUMRANGE", "NVARCHAR", "OBJECT", "OFFSET",
            "ON", "OPERATOR", "OPTIMIZE", "OR", "ORDER", "ORDINALITY", "OUT", "OUTER", "OVER",
            "OVERLAPS", "OVERWRITE", "PARTITION", "PARTITIONED", "PERCENT", "PIVOT", "PRAGMA",
            "PRECISION", "PREPARE", "PRIMARY", "PROCEDURE", "QUALIFY", "RANGE", "REAL",
            "RECURSIVE", "REF", "REFERENCES", "REFRESH", "REGEXP", "RENAME", "REPAIR", "REPLACE",
            "RETURNING", "REVOKE", "RIGHT", "RLIKE", "ROLLBACK", "ROLLUP", "ROW", "ROWS",
            "SCHEMA", "SECURITY", "SELECT", "SEMI", "SEQUENCE", "SERDEPROPERTIES", "SESSION",
            "SET", "SETS", "SETTINGS", "SHORT", "SHOW", "SIMILAR", "SMALLINT", "SOME", "SORT",
            "SQL", "STR", "STREAM", "STRING", "STRUCT", "TABLE", "TABLESAMPLE", "TEMP",
            "TEMPORARY", "TEXT", "THEN", "TIME", "TIMESTAMP", "TIMESTAMPLTZ", "TIMESTAMPNTZ",
            "TIMESTAMPTZ", "TIMETZ", "TINYBLOB", "TINYINT", "TINYTEXT", "TO", "TRIGGER", "TRUE",
            "TRUNCATE", "TSMULTIRANGE", "TSRANGE", "TSTZMULTIRANGE", "TSTZRANGE", "UHUGEINT",
            "UINT", "UNCACHE", "UNION", "UNIQUE", "UNKNOWN", "UNNEST", "UNPIVOT", "UPDATE", "USE",
            "USING", "UUID", "VACUUM", "VALUES", "VARBINARY", "VARCHAR", "VARIANT", "VARYING",
            "VECTOR", "VIEW", "VOID", "VOLATILE", "WHEN", "WHERE", "WINDOW", "WITH", "XOR",
        }
    ),
}

#: plain words, neither keyword nor reserved, that do not read back as a plain column
SPECIAL = {
    "snowflake": frozenset(
        {
            "CONNECT_BY_ROOT", "Connect_By_Root", "Connect_by_root", "MATCH_RECOGNIZE",
            "Match_Recognize", "Match_recognize", "PARTITIONED_BY", "Partitioned_by",
            "connect_by_root", "match_recognize", "partitioned_by",
        }
    ),
    "databricks": frozenset(
        {
            "CONNECT_BY_ROOT", "CURDATE", "Connect_By_Root", "Connect_by_root", "Curdate",
            "MATCH_RECOGNIZE", "Match_Recognize", "Match_recognize", "PARTITIONED_BY",
            "Partitioned_by", "connect_by_root", "curdate", "match_recognize", "partitioned_by",
        }
    ),
}
# fmt: on
