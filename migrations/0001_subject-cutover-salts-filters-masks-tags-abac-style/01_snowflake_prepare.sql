-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: stage 01_snowflake_prepare
-- Platform snowflake. Requires: nothing.
--
-- What this stage does:
--   - salt function GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT: added
--   - aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD: added
--   - join policy GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD: added
--   - row access policy GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD: added
--
-- Why this stage: it creates objects that nothing uses yet: no query answers differently
-- afterwards.
--
-- Salt placeholders below are filled with the secret only in memory by `accord migrate apply`,
-- never in a file: run this stage through it, not by hand.
--
-- Checks: 01_snowflake_prepare.verify.sql. Undo: 01_snowflake_prepare.rollback.sql.

-- new: salt function GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT: added
-- Salt of mask 'subject_pseudonym', from env:SUBJECT_SALT_SNOWFLAKE. A secure function hides its body
-- from every role but its owner, but any role with USAGE on it can call it and read
-- the salt: grant USAGE to the owner of the masking policies only (the querying
-- roles need none). The placeholder below is filled with the secret
-- only when accord applies the SQL (accord migrate apply); as written it is a syntax
-- error, so the function can never be created with a known salt.
CREATE OR REPLACE SECURE FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT()
  COPY GRANTS
  RETURNS VARCHAR
  AS $$ {{ accord_salt('env:SUBJECT_SALT_SNOWFLAKE') }} $$;

-- new: aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD: added
CREATE OR REPLACE AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD
  AS () RETURNS AGGREGATION_CONSTRAINT ->
  CASE
    WHEN IS_ROLE_IN_SESSION('DATA_STEWARD')
    THEN NO_AGGREGATION_CONSTRAINT()
    ELSE AGGREGATION_CONSTRAINT(MIN_GROUP_SIZE => 10)
  END
  COMMENT = 'accord: aggregates over groups of at least 10 rows; every row for data_steward';

-- new: join policy GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD: added
CREATE OR REPLACE JOIN POLICY GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD
  AS () RETURNS JOIN_CONSTRAINT ->
  CASE
    WHEN IS_ROLE_IN_SESSION('DATA_STEWARD')
    THEN JOIN_CONSTRAINT(JOIN_REQUIRED => FALSE)
    ELSE JOIN_CONSTRAINT(JOIN_REQUIRED => TRUE)
  END
  COMMENT = 'accord: read only joined to another table; unjoined for data_steward';

-- new: row access policy GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD: added
CREATE OR ALTER ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD
  AS (PROGRAMME_VALUE VARCHAR) RETURNS BOOLEAN ->
  EXISTS(
    SELECT
      1
    FROM GOVERNANCE.POLICIES.PROGRAMME_GRANTS AS g
    WHERE
      g.PROGRAMME_CODE = PROGRAMME_VALUE AND IS_ROLE_IN_SESSION(g.ROLE_NAME)
  )
  OR IS_ROLE_IN_SESSION('DATA_STEWARD')
  COMMENT = 'accord: rows by entitlement programme; every row for data_steward';
