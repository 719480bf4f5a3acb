-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 03_snowflake_apply
-- Platform snowflake. Requires: 01_snowflake_prepare.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.

-- row filter of DISCOVERY.ASSAYS.RESULTS is
-- GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD
SELECT COUNT(*) = 1 AS ok
FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.POLICY_REFERENCES(
  REF_ENTITY_NAME => 'DISCOVERY.ASSAYS.RESULTS', REF_ENTITY_DOMAIN => 'table'))
WHERE POLICY_KIND = 'ROW_ACCESS_POLICY' AND POLICY_DB || '.' || POLICY_SCHEMA || '.' || POLICY_NAME = 'GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD';
