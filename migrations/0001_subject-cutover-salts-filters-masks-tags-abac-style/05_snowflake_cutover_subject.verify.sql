-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 05_snowflake_cutover_subject
-- Platform snowflake. Requires: 03_snowflake_apply.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.

-- GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK reads GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT
SELECT CONTAINS(GET_DDL('POLICY', 'GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK'), 'SUBJECT_PSEUDONYM_SALT') AS ok;

-- mask of DISCOVERY.ASSAYS.RESULTS.SUBJECT_ID is GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK
SELECT COUNT(*) = 1 AS ok
FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.POLICY_REFERENCES(
  REF_ENTITY_NAME => 'DISCOVERY.ASSAYS.RESULTS', REF_ENTITY_DOMAIN => 'table'))
WHERE POLICY_KIND = 'MASKING_POLICY' AND REF_COLUMN_NAME = 'SUBJECT_ID' AND TAG_NAME IS NULL AND POLICY_DB || '.' || POLICY_SCHEMA || '.' || POLICY_NAME = 'GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK';

-- salt env:SUBJECT_SALT_SNOWFLAKE is in effect: the canary's salted digest differs from its
-- unsalted digest (compare canary_digest with the other platforms': it must differ)
SELECT SHA2('accord-canary' || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256) <> SHA2('accord-canary', 256) AS ok, SHA2('accord-canary' || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256) AS canary_digest;
