-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 02_databricks_prepare
-- Platform databricks. Requires: nothing.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.
-- Lines starting `-- accord-check:` are checks written as data: `accord migrate apply` reads
-- each table's row filter and column masks with the SDK's tables.get (information_schema column
-- names differ between the reference pages and live workspaces).

-- salt env:SUBJECT_SALT_DATABRICKS is in effect: the canary's salted digest differs from its
-- unsalted digest (compare canary_digest with the other platforms': it must differ)
SELECT sha2(concat('accord-canary', governance.policies.subject_pseudonym_salt()), 256) <> sha2('accord-canary', 256) AS ok, sha2(concat('accord-canary', governance.policies.subject_pseudonym_salt()), 256) AS canary_digest;

-- governance.policies.programme_row_filter_except_data_steward exists
SELECT COUNT(*) = 1 AS ok FROM governance.information_schema.routines WHERE routine_schema = 'policies' AND routine_name = 'programme_row_filter_except_data_steward';
