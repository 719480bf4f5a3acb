-- The heart of the problem, lakehouse side (Databricks Unity Catalog)
-- ===================================================================
--
-- Hand-written filter and mask UDFs as the lakehouse team wrote them. Read it alone
-- and it is sound:
--
--   * the row filter looks the programme up in the mapping table with
--     is_account_group_member(), which checks ACCOUNT groups, not is_member(), which
--     only sees workspace-local groups (no ACC102);
--   * the mask checks the clinical-unblinded account group the same way;
--   * sha2(.., 256) is a cryptographic hash (no ACC204).
--
-- Its twin, warehouse.snowflake.sql, is just as sound on its own. The defect lives in
-- the pair, and `accord lint` finds it when given both files:
--
--   accord lint examples/sql/heart-of-problem/*.sql
--
--   ACC201 unsalted-hash     subject_mask below hashes the masked value with nothing
--                            else mixed in (and its Snowflake twin does too).
--   ACC203 joinable-digest   one finding naming BOTH files: this mask is attached to
--                            subject_id, the Snowflake one to SUBJECT_ID (the same
--                            column name, case-insensitively), and both compute the
--                            same sha2(value, 256), so a subject's masked rows join
--                            across the two catalogs on its digest.
--
-- The fix, as accord compiles it from policies/masks.yaml: a secret salt per platform,
-- different on each, mixed into the hash.
--
-- The mapping table governance.policies.programme_grants (programme_code, group_name)
-- was this team's own hand-maintained copy of the entitlements.
--
-- The filter's parameter is named `programme`, not `programme_code`: Databricks resolves
-- an unqualified name to the closest column first, so inside the subquery it would
-- mean g.programme_code and the comparison would be true for every programme.

CREATE OR REPLACE FUNCTION governance.policies.programme_filter(programme STRING)
  RETURN EXISTS (
    SELECT 1
    FROM governance.policies.programme_grants g
    WHERE g.programme_code = programme
      AND is_account_group_member(g.group_name)
  );

-- Unblinded clinical staff see the subject id; everybody else sees sha2 of it.
-- ACC201: nothing but the value goes into the hash. ACC203: see the header.
CREATE OR REPLACE FUNCTION governance.policies.subject_mask(v STRING)
  RETURN CASE
    WHEN is_account_group_member('clinical-unblinded') THEN v
    ELSE sha2(v, 256)
  END;

ALTER TABLE omics.variants.calls
  SET ROW FILTER governance.policies.programme_filter ON (programme_code);

ALTER TABLE omics.variants.calls
  ALTER COLUMN subject_id SET MASK governance.policies.subject_mask;
