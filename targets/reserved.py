"""The platforms' documented reserved words, copied here with their sources, so that a name
is quoted because the platform says it must be, not only because sqlglot's parser happens to
reject it. A name in these lists is always written quoted (Snowflake: upper-cased inside the
quotes, which names the same object as the unquoted name).

Snowflake: "Reserved & limited keywords",
https://docs.snowflake.com/en/sql-reference/reserved-keywords (every keyword in its table,
reserved by ANSI or limited by Snowflake: a limited keyword such as ACCOUNT or CAST fails in
some position, so accord quotes it everywhere).

Databricks: "Reserved words and schemas",
https://docs.databricks.com/aws/en/sql/language-manual/sql-ref-reserved-words (the words that
must be back-ticked as a table alias, and the special words NULL, DEFAULT, TRUE, FALSE,
LATERAL), and the ANSI-mode reserved keywords of Spark SQL, which Databricks SQL follows when
ANSI mode is on ("SQL Keywords", apache/spark docs/sql-ref-ansi-compliance.md: every keyword
marked reserved or strict-non-reserved).
"""

from __future__ import annotations

_SNOWFLAKE = """
    ACCOUNT ALL ALTER AND ANY AS BETWEEN BY CASE CAST CHECK COLUMN CONNECT CONNECTION
    CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER
    DATABASE DELETE DISTINCT DROP ELSE EXISTS FALSE FOLLOWING FOR FROM FULL GRANT GROUP
    GSCLUSTER HAVING ILIKE IN INCREMENT INNER INSERT INTERSECT INTO IS ISSUE JOIN LATERAL LEFT
    LIKE LOCALTIME LOCALTIMESTAMP MINUS NATURAL NOT NULL OF ON OR ORDER ORGANIZATION QUALIFY
    REGEXP REVOKE RIGHT RLIKE ROW ROWS SAMPLE SCHEMA SELECT SET SOME START TABLE TABLESAMPLE
    THEN TO TRIGGER TRUE TRY_CAST UNION UNIQUE UPDATE USING VALUES VIEW WHEN WHENEVER WHERE
    WITH
"""

_DATABRICKS = """
    ANTI CROSS EXCEPT FULL INNER INTERSECT JOIN LATERAL LEFT MASK MINUS NATURAL ON RIGHT SEMI
    UNION USING
    NULL DEFAULT TRUE FALSE
    ALL AND ANY AS AUTHORIZATION BOTH CASE CAST CHECK COLLATE COLUMN CONSTRAINT CREATE
    CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER DISTINCT ELSE END ESCAPE FETCH
    FILTER FOR FOREIGN FROM GRANT GROUP HAVING IN INTO IS LEADING NOT ONLY OR ORDER OUTER
    OVERLAPS PRIMARY REFERENCES SELECT SESSION_USER SOME TABLE THEN TIME TO TRAILING UNIQUE
    UNKNOWN USER WHEN WHERE WITH
"""

SNOWFLAKE = frozenset(_SNOWFLAKE.split())
DATABRICKS = frozenset(_DATABRICKS.split())
RESERVED = {"snowflake": SNOWFLAKE, "databricks": DATABRICKS}

#: the longest identifier either platform accepts: Snowflake, 255 characters ("Identifier
#: requirements", https://docs.snowflake.com/en/sql-reference/identifiers-syntax); Unity
#: Catalog, "Object names cannot exceed 255 characters" ("Names",
#: https://docs.databricks.com/sql/language-manual/sql-ref-names.html)
MAX_IDENTIFIER = 255
