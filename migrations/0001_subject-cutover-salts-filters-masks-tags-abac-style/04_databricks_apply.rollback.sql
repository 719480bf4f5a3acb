-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: ABAC policy accord_programme_row_filter on schema omics.variants: removed
CREATE OR REPLACE POLICY accord_programme_row_filter
ON SCHEMA omics.variants
COMMENT 'accord: rows by entitlement programme'
ROW FILTER governance.policies.programme_row_filter
TO `account users`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_row_key', 'programme') AS k
USING COLUMNS (k);

-- undo: row filter of omics.variants.calls: added
ALTER TABLE omics.variants.calls DROP ROW FILTER;

-- undo: ABAC policy accord_programme_row_filter on schema discovery_lake.assays: removed
CREATE OR REPLACE POLICY accord_programme_row_filter
ON SCHEMA discovery_lake.assays
COMMENT 'accord: rows by entitlement programme'
ROW FILTER governance.policies.programme_row_filter
TO `account users`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_row_key', 'programme') AS k
USING COLUMNS (k);

-- undo: ABAC policy accord_free_text_mask on schema discovery_lake.assays: removed
CREATE OR REPLACE POLICY accord_free_text_mask
ON SCHEMA discovery_lake.assays
COMMENT 'accord: mask free_text (redact); clear for clinical_unblinded'
COLUMN MASK governance.policies.free_text_mask
TO `account users`
EXCEPT `clinical-unblinded`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_mask', 'free_text') AS c
ON COLUMN c;

-- undo: mask of discovery_lake.assays.results.notes: added
ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes DROP MASK;

-- undo: row filter of discovery_lake.assays.results: added
ALTER TABLE discovery_lake.assays.results DROP ROW FILTER;

-- undo: mask function governance.policies.free_text_mask: body changed
-- Transforms the value only: who sees the clear value is named in the ABAC policy's EXCEPT
-- (050_policies.sql), as the ABAC guidance asks.
CREATE OR REPLACE FUNCTION governance.policies.free_text_mask(val STRING)
  RETURNS STRING
  COMMENT 'accord: mask free_text (redact); clear for clinical_unblinded (named in the policy, not here)'
  RETURN
  '[redacted]';
