-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 07_snowflake_retire
-- Platform snowflake. Requires: 05_snowflake_cutover_subject.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- accord: ignore ACC101 rollback restores the base model's statement exactly as it was; fix it in the model, not in the rollback
-- undo: unused: row access policy GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER: removed
CREATE OR ALTER ROW ACCESS POLICY GOVERNANCE.POLICIES.ASSAY_RESULTS_ROW_FILTER
  AS (PROGRAMME_CODE VARCHAR) RETURNS BOOLEAN ->
  PROGRAMME_CODE IN (
    SELECT
      g.PROGRAMME_CODE
    FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS AS g
    WHERE
      g.ROLE_NAME = CURRENT_ROLE()
  )
  COMMENT = 'accord: hand-written row filter of dataset assay_results';

-- undo: unused: aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_5: removed
CREATE OR REPLACE AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_5
  AS () RETURNS AGGREGATION_CONSTRAINT ->
  AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 5)
  COMMENT = 'accord: aggregates over groups of at least 5 rows';
