-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
--
-- What this stage does:
--   - mask function governance.policies.free_text_mask: body changed
--   - row filter of discovery_lake.assays.results: added
--   - mask of discovery_lake.assays.results.notes: added
--   - ABAC policy accord_free_text_mask on schema discovery_lake.assays: removed
--   - ABAC policy accord_programme_row_filter on schema discovery_lake.assays: removed
--   - row filter of omics.variants.calls: added
--   - ABAC policy accord_programme_row_filter on schema omics.variants: removed
--
-- Why this stage: it changes what queries return, on this platform only. Bodies change in place
-- and attachments are swapped in single statements, so every governed table and column stays
-- protected between any two statements.
--
-- Before you run it: until the next stage of this platform has run, queries may be refused (fail
-- closed) on: table DISCOVERY_LAKE.ASSAYS.RESULTS has row filter
-- governance.policies.programme_row_filter_except_data_steward and ABAC policy
-- accord_programme_row_filter (governance.policies.programme_row_filter); table
-- OMICS.VARIANTS.CALLS has row filter
-- governance.policies.programme_row_filter_except_data_steward and ABAC policy
-- accord_programme_row_filter (governance.policies.programme_row_filter). A governed-tag change
-- can take minutes to take effect (unity-catalog/abac/requirements; whether an ABAC policy's
-- creation or removal lags too is not documented), and while both mechanisms apply with
-- different functions Databricks blocks access (unity-catalog/abac/abac-vs-rls-cm). Nothing
-- leaks either way: run the next stage as soon as this stage's checks pass.
--
-- Checks: 04_databricks_apply.verify.sql. Undo: 04_databricks_apply.rollback.sql.

-- mask function governance.policies.free_text_mask: body changed
CREATE OR REPLACE FUNCTION governance.policies.free_text_mask(val STRING)
  RETURNS STRING
  COMMENT 'accord: mask free_text (redact); clear for clinical_unblinded'
  RETURN
  CASE
    WHEN is_account_group_member('clinical-unblinded')
    THEN val
    ELSE '[redacted]'
  END;

-- row filter of discovery_lake.assays.results: added
ALTER TABLE discovery_lake.assays.results SET ROW FILTER governance.policies.programme_row_filter_except_data_steward ON (programme_code);

-- mask of discovery_lake.assays.results.notes: added
ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes SET MASK governance.policies.free_text_mask;

-- ABAC policy accord_free_text_mask on schema discovery_lake.assays: removed
DROP POLICY accord_free_text_mask ON SCHEMA discovery_lake.assays;

-- ABAC policy accord_programme_row_filter on schema discovery_lake.assays: removed
DROP POLICY accord_programme_row_filter ON SCHEMA discovery_lake.assays;

-- row filter of omics.variants.calls: added
ALTER TABLE omics.variants.calls SET ROW FILTER governance.policies.programme_row_filter_except_data_steward ON (programme_code);

-- ABAC policy accord_programme_row_filter on schema omics.variants: removed
DROP POLICY accord_programme_row_filter ON SCHEMA omics.variants;
