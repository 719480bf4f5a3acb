-- accord migration 0001_subject-cutover-salts-filters-masks-style: rollback of stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: row filter of omics.variants.calls: moved from governance.policies.programme_row_filter
-- to governance.policies.programme_row_filter_except_data_steward
ALTER TABLE omics.variants.calls SET ROW FILTER governance.policies.programme_row_filter ON (programme_code);

-- undo: row filter of discovery_lake.assays.results: moved from
-- governance.policies.programme_row_filter to
-- governance.policies.programme_row_filter_except_data_steward
ALTER TABLE discovery_lake.assays.results SET ROW FILTER governance.policies.programme_row_filter ON (programme_code);
