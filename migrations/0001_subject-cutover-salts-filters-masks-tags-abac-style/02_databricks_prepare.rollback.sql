-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 02_databricks_prepare
-- Platform databricks. Requires: nothing.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: new: row filter function governance.policies.programme_row_filter_except_data_steward:
-- added
DROP FUNCTION governance.policies.programme_row_filter_except_data_steward;

-- undo: new: salt function governance.policies.subject_pseudonym_salt: added
DROP FUNCTION governance.policies.subject_pseudonym_salt;
