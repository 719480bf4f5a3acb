-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 01_snowflake_prepare
-- Platform snowflake. Requires: nothing.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.

-- salt env:SUBJECT_SALT_SNOWFLAKE is in effect: the canary's salted digest differs from its
-- unsalted digest (compare canary_digest with the other platforms': it must differ)
SELECT SHA2('accord-canary' || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256) <> SHA2('accord-canary', 256) AS ok, SHA2('accord-canary' || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256) AS canary_digest;

-- GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD exists
SELECT GET_DDL('POLICY', 'GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD') IS NOT NULL AS ok;

-- GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD exists
SELECT GET_DDL('POLICY', 'GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD') IS NOT NULL AS ok;

-- GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD exists
SELECT GET_DDL('POLICY', 'GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD') IS NOT NULL AS ok;
