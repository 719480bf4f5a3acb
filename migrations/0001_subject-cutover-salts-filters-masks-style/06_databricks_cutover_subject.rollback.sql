-- accord migration 0001_subject-cutover-salts-filters-masks-style: rollback of stage 06_databricks_cutover_subject
-- Platform databricks. Requires: 04_databricks_apply.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: mask function governance.policies.subject_pseudonym_mask: body changed (salt introduced:
-- governance.policies.subject_pseudonym_salt)
CREATE OR REPLACE FUNCTION governance.policies.subject_pseudonym_mask(val STRING)
  RETURNS STRING
  COMMENT 'accord: mask subject_pseudonym (hash); clear for clinical_unblinded'
  RETURN
  CASE
    WHEN is_account_group_member('clinical-unblinded')
    THEN val
    ELSE sha2(val, 256)
  END;
