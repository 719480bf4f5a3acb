-- accord migration 0001_subject-cutover-salts-filters-masks-style: stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
--
-- What this stage does:
--   - row filter of discovery_lake.assays.results: moved from
--     governance.policies.programme_row_filter to
--     governance.policies.programme_row_filter_except_data_steward
--   - row filter of omics.variants.calls: moved from governance.policies.programme_row_filter to
--     governance.policies.programme_row_filter_except_data_steward
--
-- Why this stage: it changes what queries return, on this platform only. Bodies change in place
-- and attachments are swapped in single statements, so every governed table and column stays
-- protected between any two statements.
--
-- Checks: 04_databricks_apply.verify.sql. Undo: 04_databricks_apply.rollback.sql.

-- row filter of discovery_lake.assays.results: moved from
-- governance.policies.programme_row_filter to
-- governance.policies.programme_row_filter_except_data_steward
ALTER TABLE discovery_lake.assays.results SET ROW FILTER governance.policies.programme_row_filter_except_data_steward ON (programme_code);

-- row filter of omics.variants.calls: moved from governance.policies.programme_row_filter to
-- governance.policies.programme_row_filter_except_data_steward
ALTER TABLE omics.variants.calls SET ROW FILTER governance.policies.programme_row_filter_except_data_steward ON (programme_code);
