-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 02_databricks_prepare
-- Platform databricks. Requires: nothing.
--
-- What this stage does:
--   - salt function governance.policies.subject_pseudonym_salt: added
--   - row filter function governance.policies.programme_row_filter_except_data_steward: added
--
-- Why this stage: it creates objects that nothing uses yet: no query answers differently
-- afterwards.
--
-- Salt placeholders below are filled with the secret only in memory by `accord migrate apply`,
-- never in a file: run this stage through it, not by hand.
--
-- Checks: 02_databricks_prepare.verify.sql. Undo: 02_databricks_prepare.rollback.sql.

-- new: salt function governance.policies.subject_pseudonym_salt: added
-- Salt of mask 'subject_pseudonym', from env:SUBJECT_SALT_DATABRICKS. Anyone with EXECUTE on this function
-- can call it and read the salt: grant EXECUTE to the owner of the mask functions
-- only. The placeholder below is filled with the secret only when accord applies the
-- SQL (accord migrate apply); as written it is a syntax error, so the function can
-- never be created with a known salt.
CREATE OR REPLACE FUNCTION governance.policies.subject_pseudonym_salt()
  RETURNS STRING
  RETURN {{ accord_salt('env:SUBJECT_SALT_DATABRICKS') }};

-- new: row filter function governance.policies.programme_row_filter_except_data_steward: added
CREATE OR REPLACE FUNCTION governance.policies.programme_row_filter_except_data_steward(programme_value STRING)
  RETURNS BOOLEAN
  COMMENT 'accord: rows by entitlement programme; every row for data_steward'
  RETURN
  EXISTS(
    SELECT
      1
    FROM governance.policies.programme_grants AS g
    WHERE
      g.programme_code = programme_value AND is_account_group_member(g.group_name)
  )
  OR is_account_group_member('data-stewards');
