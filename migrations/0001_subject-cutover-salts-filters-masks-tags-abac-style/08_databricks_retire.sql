-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 08_databricks_retire
-- Platform databricks. Requires: 06_databricks_cutover_subject.
--
-- What this stage does:
--   - tag accord_mask: removed
--   - tag accord_row_key: removed
--   - row filter function governance.policies.programme_row_filter: removed
--
-- Why this stage: it removes what the head model no longer uses. Everything was detached from it
-- in the earlier stages: an attached policy is never dropped.
--
-- Checks: 08_databricks_retire.verify.sql. Undo: 08_databricks_retire.rollback.sql.

-- unused: tag accord_mask: removed
-- governed tag accord_mask is no longer used by this model. It is an account-level tag
-- policy: remove it in the account console or with Terraform once nothing else uses it.

-- unused: tag accord_row_key: removed
-- governed tag accord_row_key is no longer used by this model. It is an account-level tag
-- policy: remove it in the account console or with Terraform once nothing else uses it.

-- unused: row filter function governance.policies.programme_row_filter: removed
DROP FUNCTION governance.policies.programme_row_filter;
