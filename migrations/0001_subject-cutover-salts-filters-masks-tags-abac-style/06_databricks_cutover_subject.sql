-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 06_databricks_cutover_subject
-- Platform databricks. Requires: 04_databricks_apply.
-- Cutover group 'subject' (identifier domain subject): stages 05_snowflake_cutover_subject,
-- 06_databricks_cutover_subject. The group is done only when every one of them is applied.
--
-- What this stage does:
--   - mask function governance.policies.subject_pseudonym_mask: body changed (salt introduced:
--     governance.policies.subject_pseudonym_salt)
--   - mask of discovery_lake.assays.results.subject_id: added
--   - ABAC policy accord_subject_pseudonym_mask on schema discovery_lake.assays: removed
--   - mask of omics.variants.calls.subject_id: added
--   - ABAC policy accord_subject_pseudonym_mask on schema omics.variants: removed
--   - tag accord_mask on discovery_lake.assays.results.notes: removed
--   - tag accord_row_key on discovery_lake.assays.results.programme_code: removed
--   - tag accord_mask on discovery_lake.assays.results.subject_id: removed
--   - tag accord_row_key on omics.variants.calls.programme_code: removed
--   - tag accord_mask on omics.variants.calls.subject_id: removed
--
-- Why this stage: it changes what a masked identifier looks like on this platform. The same
-- identifier domain is held on other platforms, and they change in the same group: until every
-- platform has applied its stage, digests on one side no longer match the plan for the other (or
-- still join with it). `accord migrate status` and lint rule ACC601 report the group until it is
-- done everywhere.
--
-- Checks: 06_databricks_cutover_subject.verify.sql. Undo:
-- 06_databricks_cutover_subject.rollback.sql.

-- mask function governance.policies.subject_pseudonym_mask: body changed (salt introduced:
-- governance.policies.subject_pseudonym_salt)
CREATE OR REPLACE FUNCTION governance.policies.subject_pseudonym_mask(val STRING)
  RETURNS STRING
  COMMENT 'accord: mask subject_pseudonym (hash); clear for clinical_unblinded'
  RETURN
  CASE
    WHEN is_account_group_member('clinical-unblinded')
    THEN val
    ELSE sha2(concat(val, governance.policies.subject_pseudonym_salt()), 256)
  END;

-- mask of discovery_lake.assays.results.subject_id: added
ALTER TABLE discovery_lake.assays.results ALTER COLUMN subject_id SET MASK governance.policies.subject_pseudonym_mask;

-- ABAC policy accord_subject_pseudonym_mask on schema discovery_lake.assays: removed
DROP POLICY accord_subject_pseudonym_mask ON SCHEMA discovery_lake.assays;

-- mask of omics.variants.calls.subject_id: added
ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET MASK governance.policies.subject_pseudonym_mask;

-- ABAC policy accord_subject_pseudonym_mask on schema omics.variants: removed
DROP POLICY accord_subject_pseudonym_mask ON SCHEMA omics.variants;

-- tag accord_mask on discovery_lake.assays.results.notes: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes UNSET TAGS ('accord_mask');

-- tag accord_row_key on discovery_lake.assays.results.programme_code: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN programme_code UNSET TAGS ('accord_row_key');

-- tag accord_mask on discovery_lake.assays.results.subject_id: removed
ALTER TABLE discovery_lake.assays.results ALTER COLUMN subject_id UNSET TAGS ('accord_mask');

-- tag accord_row_key on omics.variants.calls.programme_code: removed
ALTER TABLE omics.variants.calls ALTER COLUMN programme_code UNSET TAGS ('accord_row_key');

-- tag accord_mask on omics.variants.calls.subject_id: removed
ALTER TABLE omics.variants.calls ALTER COLUMN subject_id UNSET TAGS ('accord_mask');
