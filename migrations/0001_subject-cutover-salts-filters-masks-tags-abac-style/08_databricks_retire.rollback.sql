-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 08_databricks_retire
-- Platform databricks. Requires: 06_databricks_cutover_subject.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: unused: row filter function governance.policies.programme_row_filter: removed
-- ABAC evaluates this function as the session user; who sees every row is named in the
-- policy's EXCEPT, not here. The grants themselves live in the mapping table, so the lookup
-- must still ask which of a value's granted groups the caller belongs to:
-- is_account_group_member(g.group_name) inside the EXISTS, once per grant row of the value.
-- The ABAC guidance advises against per-row membership checks in policy functions; this one
-- is the price of keeping grants as data (one table generated from the YAML) instead of one
-- policy per value, whose TO lists would soon pass the quota of 20 principals per policy.
CREATE OR REPLACE FUNCTION governance.policies.programme_row_filter(programme_value STRING)
  RETURNS BOOLEAN
  COMMENT 'accord: rows by entitlement programme'
  RETURN
  EXISTS(
    SELECT
      1
    FROM governance.policies.programme_grants AS g
    WHERE
      g.programme_code = programme_value AND is_account_group_member(g.group_name)
  );

-- undo: unused: tag accord_row_key: removed
-- Governed tag 'accord_row_key', allowed values 'programme'.
-- Governed tags are account-level: an account admin creates each one (Catalog Explorer >
-- Governed tags, CREATE GOVERNED TAG on Runtime 18.1+, or databricks_tag_policy in
-- terraform/main.tf.json) before columns can carry it.
-- Column tags do not inherit from the table: every column is tagged itself.
-- Runtime 18.1+: CREATE GOVERNED TAG accord_row_key VALUES ('programme');

-- undo: unused: tag accord_mask: removed
-- Governed tag 'accord_mask', allowed values 'free_text', 'subject_pseudonym'.
-- Governed tags are account-level: an account admin creates each one (Catalog Explorer >
-- Governed tags, CREATE GOVERNED TAG on Runtime 18.1+, or databricks_tag_policy in
-- terraform/main.tf.json) before columns can carry it.
-- Column tags do not inherit from the table: every column is tagged itself.
-- Runtime 18.1+: CREATE GOVERNED TAG accord_mask VALUES ('free_text', 'subject_pseudonym');
