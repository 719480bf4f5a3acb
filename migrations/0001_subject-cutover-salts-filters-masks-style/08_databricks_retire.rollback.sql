-- accord migration 0001_subject-cutover-salts-filters-masks-style: rollback of stage 08_databricks_retire
-- Platform databricks. Requires: 06_databricks_cutover_subject.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: unused: row filter function governance.policies.programme_row_filter: removed
CREATE OR REPLACE FUNCTION governance.policies.programme_row_filter(programme_value STRING)
  RETURNS BOOLEAN
  COMMENT 'accord: rows by entitlement programme'
  RETURN
  EXISTS(
    SELECT
      1
    FROM governance.policies.programme_grants AS g
    WHERE
      g.programme_code = programme_value AND is_account_group_member(g.group_name)
  );
