"""The seeded defects of ``tests/test_verify_spark_defects.py``: compiled or hand-edited
Databricks SQL with one defect each, and the estate they are seeded in.

A defect is one edit of one compiled file (``old`` replaced by ``new``, or ``new`` appended
when ``old`` is empty). ``stand_in`` marks a defect that lives in a function both engines stand
in for (``is_member``, the case of a group name): both answer it from the same membership
table, so it is not checked independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.estates import DIFF_BASE, edited

#: DIFF_BASE (a warehouse table and its lakehouse replica: a programme filter with a steward
#: exception, a salted pseudonym, a redacted note, a partial phone) and a Databricks-only table
#: of doses: the same programme filter without the exception, a number nullified.
ESTATE = edited(
    DIFF_BASE,
    {
        "masks": {"dose": {"strategy": "nullify", "unmasked_for": ["clinician"]}},
        "datasets": {
            "doses": {
                "platform": "databricks",
                "table": "cat.s.doses",
                "row_filter": {"entitlement": "programme", "column": "programme"},
                "columns": {
                    "dose_mg": {"type": "INT", "mask": "dose"},
                    "subject_id": {"type": "STRING", "mask": "subject", "identifier": "subject"},
                },
            }
        },
    },
)

GRANTS = "databricks/010_mapping_tables.sql"
SALT = "databricks/020_salt_functions.sql"
FILTERS = "databricks/030_row_filters.sql"
MASKS = "databricks/040_masks.sql"
ATTACH = "databricks/050_attachments.sql"

EXISTS = "g.programme_code = programme_value AND is_account_group_member(g.group_name)"
HASH = "sha2(concat(val, gov.pol.subject_salt()), 256)"
PHONE = "concat(repeat('*', greatest(length(val) - 4, 0)), right(val, 4))"
NOTES = "CASE WHEN is_account_group_member('clinicians') THEN val ELSE '***' END"


@dataclass(frozen=True)
class Defect:
    name: str
    what: str
    file: str
    old: str
    new: str
    stand_in: bool = False
    #: further edits of the same defect: (file, old, new)
    also: tuple[tuple[str, str, str], ...] = ()


DEFECTS: list[Defect] = [
    # ---- row filters: the comparison, NULLs, the membership check, the table ------------------
    Defect(
        "shadowed-parameter",
        "the parameter named like the grants table's column: inside the subquery the name is "
        "the column, and every granted value admits every row",
        FILTERS,
        "(programme_value STRING)",
        "(programme_code STRING)",
        also=((FILTERS, "= programme_value AND", "= programme_code AND"),),
    ),
    Defect(
        "column-compared-with-itself",
        "the subquery compares the grants table's column with itself",
        FILTERS,
        "g.programme_code = programme_value",
        "g.programme_code = g.programme_code",
    ),
    Defect("not-equal", "<> for =", FILTERS, EXISTS, EXISTS.replace(" = ", " <> ")),
    Defect("less-equal", "<= for =", FILTERS, EXISTS, EXISTS.replace(" = ", " <= ")),
    Defect(
        "no-membership-check",
        "the grant's group is never checked",
        FILTERS,
        " AND is_account_group_member(g.group_name)",
        "",
    ),
    Defect(
        "exception-wrong-group",
        "every row for the clinicians instead of the stewards",
        FILTERS,
        "is_account_group_member('stewards')",
        "is_account_group_member('clinicians')",
    ),
    Defect(
        "and-for-or",
        "the steward exception joined with AND",
        FILTERS,
        "  OR is_account_group_member('stewards')",
        "  AND is_account_group_member('stewards')",
    ),
    Defect("not-exists", "NOT EXISTS", FILTERS, "RETURN\n  EXISTS(", "RETURN\n  NOT EXISTS("),
    Defect(
        "null-admitted",
        "a row with no programme admitted",
        FILTERS,
        "  OR is_account_group_member('stewards')",
        "  OR programme_value IS NULL OR is_account_group_member('stewards')",
    ),
    Defect(
        "null-safe-mismatch",
        "NULL-safe equality against a NULL literal",
        FILTERS,
        "g.programme_code = programme_value",
        "(g.programme_code = programme_value OR programme_value <=> NULL)",
    ),
    Defect(
        "case-folded-value",
        "the grant's value lower-cased: 'p1' never equals 'P1'",
        FILTERS,
        "g.programme_code = programme_value",
        "lower(g.programme_code) = programme_value",
    ),
    Defect(
        "number-coercion",
        "the programme compared as a number: 'P1' is no number",
        FILTERS,
        "g.programme_code = programme_value",
        "try_cast(g.programme_code AS INT) = try_cast(programme_value AS INT)",
    ),
    Defect(
        "prefix-match",
        "a LIKE prefix: a value granted to nobody that starts like a granted one is admitted",
        FILTERS,
        "g.programme_code = programme_value",
        "programme_value LIKE concat(substr(g.programme_code, 1, 1), '%')",
    ),
    Defect(
        "exists-wrong-table",
        "the EXISTS reads a stale copy of the grants",
        GRANTS,
        "",
        "\nCREATE TABLE IF NOT EXISTS gov.pol.programme_grants_2024 (\n"
        "  programme_code STRING NOT NULL,\n  group_name STRING NOT NULL\n);\n"
        "INSERT INTO gov.pol.programme_grants_2024 VALUES ('P1', 'chemists'), "
        "('P2', 'chemists');\n",
        also=(
            (
                FILTERS,
                "FROM gov.pol.programme_grants AS g",
                "FROM gov.pol.programme_grants_2024 AS g",
            ),
        ),
    ),
    Defect(
        "workspace-group",
        "is_member (workspace-local groups) for is_account_group_member",
        FILTERS,
        "is_account_group_member(g.group_name)",
        "is_member(g.group_name)",
        stand_in=True,
    ),
    Defect(
        "group-case",
        "the steward group written 'Stewards'",
        FILTERS,
        "is_account_group_member('stewards')",
        "is_account_group_member('Stewards')",
        stand_in=True,
    ),
    # ---- the mapping rows -----------------------------------------------------------------------
    Defect(
        "grant-to-wrong-group",
        "P2 granted to the chemists in the MERGE",
        GRANTS,
        "('P2', 'clinicians')",
        "('P2', 'chemists')",
    ),
    Defect(
        "grants-deleted",
        "a DELETE after the MERGE removes P2's grants",
        GRANTS,
        "",
        "\nDELETE FROM gov.pol.programme_grants WHERE programme_code = 'P2';\n",
    ),
    Defect(
        "grants-updated",
        "an UPDATE moves every P1 grant to the chemists",
        GRANTS,
        "",
        "\nUPDATE gov.pol.programme_grants SET group_name = 'chemists' "
        "WHERE programme_code = 'P1';\n",
    ),
    Defect(
        "merge-matches-nothing",
        "the MERGE's ON compares the wrong columns: every source row is inserted, and a "
        "second MERGE of the same rows would duplicate nothing visible, so a wrong INSERT "
        "list is what shows",
        GRANTS,
        "VALUES (s.programme_code, s.group_name)",
        "VALUES (s.group_name, s.programme_code)",
    ),
    # ---- masks: CASE, groups, hashing and salts, NULLs, partial -----------------------------------
    Defect(
        "inverted-case",
        "the redaction's CASE inverted",
        MASKS,
        NOTES,
        "CASE WHEN is_account_group_member('clinicians') THEN '***' ELSE val END",
    ),
    Defect(
        "mask-wrong-group",
        "the notes clear for the chemists",
        MASKS,
        NOTES,
        NOTES.replace("clinicians", "chemists"),
    ),
    Defect(
        "negated-membership",
        "NOT before the membership check of the pseudonym",
        MASKS,
        "    WHEN is_account_group_member('clinicians')\n    THEN val",
        "    WHEN NOT is_account_group_member('clinicians')\n    THEN val",
    ),
    Defect("unsalted-hash", "the salt left out", MASKS, HASH, "sha2(val, 256)"),
    Defect(
        "salt-first",
        "the salt mixed in before the value",
        MASKS,
        HASH,
        "sha2(concat(gov.pol.subject_salt(), val), 256)",
    ),
    Defect(
        "salt-twice",
        "the salt on both sides",
        MASKS,
        HASH,
        "sha2(concat(gov.pol.subject_salt(), val, gov.pol.subject_salt()), 256)",
    ),
    Defect(
        "known-salt",
        "the salt function returns a constant written in the SQL",
        SALT,
        "RETURN {{ accord_salt('env:S_DBX') }}",
        "RETURN 'salt'",
    ),
    Defect("sha512", "SHA-512 for SHA-256", MASKS, HASH, HASH.replace("256)", "512)")),
    Defect("md5", "MD5 for SHA-256", MASKS, HASH, "md5(concat(val, gov.pol.subject_salt()))"),
    Defect(
        "hash-of-null",
        "NULL hashed as the empty string",
        MASKS,
        HASH,
        "sha2(concat(coalesce(val, ''), gov.pol.subject_salt()), 256)",
    ),
    Defect(
        "upper-before-hash",
        "the value upper-cased before hashing",
        MASKS,
        HASH,
        "sha2(concat(upper(val), gov.pol.subject_salt()), 256)",
    ),
    Defect(
        "partial-left",
        "the first four characters kept instead of the last",
        MASKS,
        PHONE,
        PHONE.replace("right(val, 4)", "left(val, 4)"),
    ),
    Defect(
        "partial-count",
        "one star too few",
        MASKS,
        PHONE,
        PHONE.replace("length(val) - 4", "length(val) - 5"),
    ),
    Defect(
        "partial-null",
        "concat_ws: a NULL phone shown as the empty string",
        MASKS,
        PHONE,
        "concat_ws('', repeat('*', greatest(length(val) - 4, 0)), right(val, 4))",
    ),
    Defect(
        "substr-from-zero",
        "the last four written as a substring from position 0: Spark (and now DuckDB, whose "
        "translation this defect corrected) start it at the first character",
        MASKS,
        PHONE,
        "concat(repeat('*', greatest(length(val) - 4, 0)), substr(val, 0, 4))",
    ),
    Defect(
        "platform-hash",
        "hash() for sha2: Spark's Murmur3, which DuckDB's hash() is not",
        MASKS,
        HASH,
        "cast(hash(concat(val, gov.pol.subject_salt())) AS STRING)",
    ),
    Defect(
        "nullify-number",
        "the dose nullified as 0",
        MASKS,
        "ELSE NULL",
        "ELSE 0",
    ),
    # ---- attachments ------------------------------------------------------------------------------
    Defect(
        "filter-wrong-column",
        "the row filter given the subject column",
        ATTACH,
        "programme_row_filter_except_steward ON (programme);",
        "programme_row_filter_except_steward ON (subject_id);",
    ),
    Defect(
        "mask-wrong-function",
        "the notes masked with the phone mask",
        ATTACH,
        "ALTER COLUMN notes SET MASK gov.pol.notes_mask",
        "ALTER COLUMN notes SET MASK gov.pol.phone_mask",
    ),
    Defect(
        "mask-dropped",
        "the phone mask dropped after it was set",
        ATTACH,
        "",
        "\nALTER TABLE cat.s.results ALTER COLUMN phone DROP MASK;\n",
    ),
]


def seeded(files: dict[str, str], defect: Defect) -> dict[str, str]:
    """``files`` (relative path -> text) with ``defect`` applied; the edit must apply."""
    out = dict(files)
    for file, old, new in ((defect.file, defect.old, defect.new), *defect.also):
        text = out[file]
        if not old:
            out[file] = text + new
            continue
        assert old in text, f"{defect.name}: {old!r} not in {file}"
        out[file] = text.replace(old, new, 1)
    return out
