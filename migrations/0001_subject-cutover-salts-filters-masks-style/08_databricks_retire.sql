-- accord migration 0001_subject-cutover-salts-filters-masks-style: stage 08_databricks_retire
-- Platform databricks. Requires: 06_databricks_cutover_subject.
--
-- What this stage does:
--   - row filter function governance.policies.programme_row_filter: removed
--
-- Why this stage: it removes what the head model no longer uses. Everything was detached from it
-- in the earlier stages: an attached policy is never dropped.
--
-- Checks: 08_databricks_retire.verify.sql. Undo: 08_databricks_retire.rollback.sql.

-- unused: row filter function governance.policies.programme_row_filter: removed
DROP FUNCTION governance.policies.programme_row_filter;
