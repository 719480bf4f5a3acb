"""Scan policy DDL files written in the Snowflake or Databricks dialect.

sqlglot does not parse policy DDL (``CREATE MASKING POLICY``, ``SET ROW FILTER``,
``CREATE POLICY`` fall back to ``exp.Command``), so this module works in three steps:

1. tokenize the whole file once with the dialect's sqlglot tokenizer (strings, quoted
   identifiers, comments and ``$$ ... $$`` bodies are single tokens, so a ``;`` inside them
   is never a statement boundary) and split it at top-level ``;`` tokens;
2. recognise each statement's header from its tokens (a small recursive-descent reader over
   the token list, never a regular expression over the SQL text);
3. parse the body expressions (after ``->`` in Snowflake policies, after ``RETURN`` in
   Databricks functions, ABAC ``WHEN`` / ``MATCH COLUMNS`` conditions) with sqlglot's parser,
   fed the very tokens of step 1, so every node's ``meta["start"]`` is an offset in the file.

Problems in the input never raise: they come back as located :class:`ScanError` values.

The package, bottom up: :mod:`.statements` (the result types), :mod:`.tokens` (tokenizers,
the token cursor, statement splitting), :mod:`.bodies` (body parsing with offsets, error
wording), :mod:`.notebooks` (notebook cells, ``EXECUTE IMMEDIATE`` strings),
:mod:`.suppressions` (``-- accord: ignore`` comments), :mod:`.dialect` (dialect detection),
:mod:`.readers` (the statement readers: a keyword table per dialect), :mod:`.fused` (a plain
file's ``ALTER TABLE`` statements of a known shape answered without their tokens) and
:mod:`.scanner`, which scans a file with them; this package's face names what the rest of accord
uses. :mod:`.template` reads Jinja/dbt templates into SQL this module scans.

Statement kinds and the fields they fill (besides kind/dialect/file/line/column/text and
suppressions; names are dotted and unquoted, ``text`` keeps the quotes):

Snowflake
- ``row_access_policy`` / ``masking_policy``: CREATE [OR REPLACE] ... POLICY [IF NOT EXISTS]
  name AS (params) RETURNS type -> body [COMMENT = ...] [EXEMPT_OTHER_POLICIES = ...]:
  name, params, returns, body*, or_replace, if_not_exists, comment.
- ``alter_policy_body``: ALTER {MASKING|ROW ACCESS} POLICY p SET BODY -> expr: name, body*.
- ``drop_masking_policy`` / ``drop_row_access_policy``: DROP ... POLICY [IF EXISTS] p: name.
- ``add_row_access``: ALTER TABLE t ADD ROW ACCESS POLICY p ON (cols): table, policy, columns;
  with ``DROP ROW ACCESS POLICY p0,`` first (or after) also dropped_policy.
- ``drop_row_access``: ALTER TABLE t DROP ROW ACCESS POLICY p (policy None for DROP ALL).
- ``set_masking_policy``: ALTER TABLE t {MODIFY|ALTER} [COLUMN] c SET MASKING POLICY p
  [USING (c, ...)] [FORCE]: table, column_name, policy, columns, force.
- ``unset_masking_policy``: ... [COLUMN] c UNSET MASKING POLICY: table, column_name.
- ``set_column_tag`` / ``set_table_tag``: ... [COLUMN] c SET TAG tg = 'v', ... / ALTER TABLE t
  SET TAG ...: table, column_name (column only), tags.
- ``snowflake_tag``: CREATE [OR REPLACE] TAG [IF NOT EXISTS] tg ...: name, comment.
- ``alter_tag_set_masking`` / ``alter_tag_unset_masking``: ALTER TAG tg {SET|UNSET} MASKING
  POLICY p [, MASKING POLICY p2] [FORCE]: name, policy (the first), policies, force.
- ``function``: CREATE [OR REPLACE] [SECURE] FUNCTION f(params) RETURNS type ... AS '...' or
  AS $$...$$: name, params, returns, language, secure, comment, body_text; body* only when
  the language is SQL (a string body is tokenized and parsed on its own).

Databricks
- ``function``: CREATE [OR REPLACE] [TEMPORARY] FUNCTION f(params) [RETURNS type] [...]
  RETURN expr (body*), or LANGUAGE PYTHON AS $$...$$ (body_text only).
- ``set_row_filter`` (table, policy, columns), ``drop_row_filter`` (table).
- ``set_mask``: ALTER TABLE t ALTER COLUMN c SET MASK f [USING COLUMNS (...)]: table,
  column_name, policy, columns; ``drop_mask``: table, column_name.
- ``set_tags``: ALTER TABLE t [ALTER COLUMN c] SET TAGS ('k' = 'v', 'k2'): table,
  column_name (None at table level), tags (a key without value gets "").
- ``abac_policy``: CREATE [OR REPLACE] POLICY: name, abac (see :class:`AbacPolicy`), policy
  (the function), table (ON TABLE only), column_name (ON COLUMN), columns (USING COLUMNS).
- ``drop_abac_policy``: DROP POLICY [IF EXISTS] name ON ...: name, table, abac (securable).
- ``governed_tag``: CREATE GOVERNED TAG k [DESCRIPTION 'd'] [VALUES (...)]: name, comment;
  ``alter_governed_tag`` (ALTER GOVERNED TAG k SET ...) and ``drop_governed_tag``: name
  (Runtime 18.1+: sql-ref-syntax-ddl-create-governed-tag and its ALTER / DROP pages).

Both
- ``other``: anything else; ``expression`` is sqlglot's parse, None when sqlglot cannot
  parse it or only falls back to ``exp.Command``.

body* = body, body_text, body_line, body_column. In USING / ON column lists identifiers are
unquoted and literals kept as written (``'literal'``). An ALTER TABLE with several column
actions gives one Statement per action, all with the same position and text.
"""

from __future__ import annotations

from accord.compiler.sqlscan.dialect import detect_dialect
from accord.compiler.sqlscan.scanner import node_position, scan
from accord.compiler.sqlscan.statements import (
    DIALECTS,
    KINDS,
    AbacPolicy,
    Dialect,
    Param,
    ScanError,
    ScanResult,
    Statement,
    Suppression,
)

__all__ = [
    "DIALECTS",
    "KINDS",
    "AbacPolicy",
    "Dialect",
    "Param",
    "ScanError",
    "ScanResult",
    "Statement",
    "Suppression",
    "detect_dialect",
    "node_position",
    "scan",
]
