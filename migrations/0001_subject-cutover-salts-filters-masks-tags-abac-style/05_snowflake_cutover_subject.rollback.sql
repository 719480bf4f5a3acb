-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 05_snowflake_cutover_subject
-- Platform snowflake. Requires: 03_snowflake_apply.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- accord: ignore ACC201, ACC203 rollback restores the base model's statement exactly as it was; fix it in the model, not in the rollback
-- undo: masking policy GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK: body changed (salt
-- introduced: GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT)
ALTER MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_MASK SET BODY ->
  CASE WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') THEN VAL ELSE SHA2(VAL, 256) END;
