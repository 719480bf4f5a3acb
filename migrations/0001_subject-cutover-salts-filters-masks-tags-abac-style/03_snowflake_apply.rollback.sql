-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 03_snowflake_apply
-- Platform snowflake. Requires: 01_snowflake_prepare.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: join policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: added
ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES UNSET JOIN POLICY;

-- undo: row filter of DISCOVERY.ASSAYS.RESULTS: moved from
-- GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER to
-- GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD
ALTER TABLE DISCOVERY.ASSAYS.RESULTS DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD,
  ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER ON (PROGRAMME_CODE);

-- undo: aggregation policy of CLINICAL.OUTCOMES.TRIAL_OUTCOMES: changed
ALTER TABLE CLINICAL.OUTCOMES.TRIAL_OUTCOMES SET AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_5 FORCE;
