-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: rollback of stage 01_snowflake_prepare
-- Platform snowflake. Requires: nothing.
-- Undoes the stage statement by statement, in reverse order, keeping every governed table and
-- column protected. Run it only over a stage that was applied in full; after a partial failure,
-- run the statements that match what was applied.

-- undo: new: row access policy GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD:
-- added
DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD;

-- undo: new: join policy GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD: added
DROP JOIN POLICY GOVERNANCE.POLICIES.JOIN_REQUIRED_EXCEPT_DATA_STEWARD;

-- undo: new: aggregation policy GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD:
-- added
DROP AGGREGATION POLICY GOVERNANCE.POLICIES.AGGREGATION_MIN_10_EXCEPT_DATA_STEWARD;

-- undo: new: salt function GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT: added
DROP FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT();
