-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 06_databricks_cutover_subject
-- Platform databricks. Requires: 04_databricks_apply.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: tag accord_mask on omics.variants.calls.subject_id: removed
ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET TAGS ('accord_mask' = 'subject_pseudonym');

-- undo: tag accord_row_key on omics.variants.calls.programme_code: removed
ALTER TABLE omics.variants.calls ALTER COLUMN programme_code SET TAGS ('accord_row_key' = 'programme');

-- undo: tag accord_mask on discovery_lake.assays.results.subject_id: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN subject_id SET TAGS ('accord_mask' = 'subject_pseudonym');

-- undo: tag accord_row_key on discovery_lake.assays.results.programme_code: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN programme_code SET TAGS ('accord_row_key' = 'programme');

-- undo: tag accord_mask on discovery_lake.assays.results.notes: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes SET TAGS ('accord_mask' = 'free_text');

-- undo: ABAC policy accord_subject_pseudonym_mask on schema omics.variants: removed
CREATE OR REPLACE POLICY accord_subject_pseudonym_mask
ON SCHEMA omics.variants
COMMENT 'accord: mask subject_pseudonym (hash); clear for clinical_unblinded'
COLUMN MASK governance.policies.subject_pseudonym_mask
TO `account users`
EXCEPT `clinical-unblinded`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_mask', 'subject_pseudonym') AS c
ON COLUMN c;

-- undo: mask of omics.variants.calls.subject_id: added
ALTER TABLE omics.variants.calls ALTER COLUMN subject_id DROP MASK;

-- undo: ABAC policy accord_subject_pseudonym_mask on schema discovery_lake.assays: removed
CREATE OR REPLACE POLICY accord_subject_pseudonym_mask
ON SCHEMA discovery_lake.assays
COMMENT 'accord: mask subject_pseudonym (hash); clear for clinical_unblinded'
COLUMN MASK governance.policies.subject_pseudonym_mask
TO `account users`
EXCEPT `clinical-unblinded`
FOR TABLES
MATCH COLUMNS has_tag_value('accord_mask', 'subject_pseudonym') AS c
ON COLUMN c;

-- undo: mask of discovery_lake.assays.results.subject_id: added
ALTER TABLE discovery_lake.assays.results ALTER COLUMN subject_id DROP MASK;

-- accord: ignore ACC201, ACC203 rollback restores the base model's statement exactly as it was; fix it in the model, not in the rollback
-- undo: mask function governance.policies.subject_pseudonym_mask: body changed (salt introduced:
-- governance.policies.subject_pseudonym_salt)
-- Transforms the value only: who sees the clear value is named in the ABAC policy's EXCEPT
-- (050_policies.sql), as the ABAC guidance asks.
CREATE OR REPLACE FUNCTION governance.policies.subject_pseudonym_mask(val STRING)
  RETURNS STRING
  COMMENT 'accord: mask subject_pseudonym (hash); clear for clinical_unblinded (named in the policy, not here)'
  RETURN
  sha2(val, 256);
