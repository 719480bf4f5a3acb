-- The heart of the problem, warehouse side (Snowflake)
-- ====================================================
--
-- Hand-written policy DDL as the warehouse team wrote it, after they had already fixed
-- their role checks. Read it alone and it is sound:
--
--   * the row access policy looks the programme up in the mapping table with
--     IS_ROLE_IN_SESSION(), which sees secondary roles too, so a scientist whose grant
--     sits on a secondary role is let in (no ACC101);
--   * the masking policy checks CLINICAL_UNBLINDED with IS_ROLE_IN_SESSION() as well;
--   * SHA2(.., 256) is a cryptographic hash, not MD5 / SHA1 / HASH() (no ACC204).
--
-- Its twin, lakehouse.databricks.sql, is just as sound on its own. The defect lives in
-- the pair, and `accord lint` finds it when given both files:
--
--   accord lint examples/sql/heart-of-problem/*.sql
--
--   ACC201 unsalted-hash     SUBJECT_MASK below hashes the masked value with nothing
--                            else mixed in (and its Databricks twin does too): a
--                            subject id is recovered by hashing every candidate id.
--   ACC203 joinable-digest   one finding naming BOTH files: this mask is attached to
--                            SUBJECT_ID, the Databricks one to subject_id (the same
--                            column name, case-insensitively), and both compute the
--                            same SHA2(value, 256). A subject gets the same digest in
--                            the warehouse and the lakehouse, so masked rows of the
--                            two catalogs join on it.
--
-- The fix, as accord compiles it from policies/masks.yaml: mix a secret, per-platform
-- salt into the hash (read through a secure function, never written as a literal in
-- the policy body, which every role with APPLY or OWNERSHIP on the policy can read),
-- with a different salt on each platform.
--
-- The mapping table GOVERNANCE.POLICIES.PROGRAMME_GRANTS (PROGRAMME_CODE, ROLE_NAME) was
-- maintained by hand as well, separately from the lakehouse team's copy.
--
-- The policy argument is named `programme`, not `programme_code`: inside the subquery,
-- an unqualified PROGRAMME_CODE would be resolved against the grants table's own column
-- and the comparison would be true for every programme.

CREATE OR REPLACE ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_RAP
  AS (programme VARCHAR) RETURNS BOOLEAN ->
  EXISTS (
    SELECT 1
    FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS g
    WHERE g.PROGRAMME_CODE = programme
      AND IS_ROLE_IN_SESSION(g.ROLE_NAME)
  );

-- Unblinded clinical staff see the subject id; everybody else sees SHA2 of it.
-- ACC201: nothing but the value goes into the hash. ACC203: see the header.
CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_MASK
  AS (val VARCHAR) RETURNS VARCHAR ->
  CASE
    WHEN IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') THEN val
    ELSE SHA2(val, 256)
  END;

ALTER TABLE DISCOVERY.ASSAYS.RESULTS
  ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_RAP ON (PROGRAMME_CODE);

ALTER TABLE DISCOVERY.ASSAYS.RESULTS
  MODIFY COLUMN SUBJECT_ID SET MASKING POLICY GOVERNANCE.POLICIES.SUBJECT_MASK;
