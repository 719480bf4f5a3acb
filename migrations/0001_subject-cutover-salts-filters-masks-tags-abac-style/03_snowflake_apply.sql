-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 03_snowflake_apply
-- Platform snowflake. Requires: 01_snowflake_prepare.
--
-- What this stage does:
--   - aggregation policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: changed
--   - row filter of DISCOVERY.ASSAYS.RESULTS: moved from
--     GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER to
--     GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD
--   - join policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: added
--
-- Why this stage: it changes what queries return, on this platform only. Bodies change in place
-- and attachments are swapped in single statements, so every governed table and column stays
-- protected between any two statements.
--
-- Checks: 03_snowflake_apply.verify.sql. Undo: 03_snowflake_apply.rollback.sql.

-- aggregation policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: changed
ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES SET AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD FORCE;

-- row filter of DISCOVERY.ASSAYS.RESULTS: moved from
-- GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER to
-- GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD
ALTER TABLE DISCOVERY.ASSAYS.RESULTS DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER,
  ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD ON (PROGRAMME_CODE);

-- join policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: added
ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES SET JOIN POLICY GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD ALLOWED JOIN KEYS (PROGRAMME_CODE);
