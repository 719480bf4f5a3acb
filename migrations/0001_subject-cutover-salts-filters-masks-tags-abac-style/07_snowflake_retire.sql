-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 07_snowflake_retire
-- Platform snowflake. Requires: 05_snowflake_cutover_subject.
--
-- What this stage does:
--   - aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_5: removed
--   - row access policy GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER: removed
--
-- Why this stage: it removes what the head model no longer uses. Everything was detached from it
-- in the earlier stages: an attached policy is never dropped.
--
-- Checks: 07_snowflake_retire.verify.sql. Undo: 07_snowflake_retire.rollback.sql.

-- unused: aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_5: removed
DROP AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_5;

-- unused: row access policy GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER: removed
DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER;
