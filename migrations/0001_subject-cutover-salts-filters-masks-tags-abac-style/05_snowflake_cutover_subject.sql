-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 05_snowflake_cutover_subject
-- Platform snowflake. Requires: 03_snowflake_apply.
-- Cutover group 'subject' (identifier domain subject): stages 05_snowflake_cutover_subject,
-- 06_databricks_cutover_subject. The group is done only when every one of them is applied.
--
-- What this stage does:
--   - masking policy GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK: body changed (salt introduced:
--     GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT)
--
-- Why this stage: it changes what a masked identifier looks like on this platform. The same
-- identifier domain is held on other platforms, and they change in the same group: until every
-- platform has applied its stage, digests on one side no longer match the plan for the other (or
-- still join with it). `accord migrate status` and lint rule ACC601 report the group until it is
-- done everywhere.
--
-- Checks: 05_snowflake_cutover_subject.verify.sql. Undo:
-- 05_snowflake_cutover_subject.rollback.sql.

-- masking policy GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK: body changed (salt introduced:
-- GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT)
ALTER MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK SET BODY ->
  CASE
    WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED')
    THEN VAL
    ELSE SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)
  END;
