-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.
-- information_schema column names have differed between the reference pages and live workspaces:
-- if a query fails on a column name, check with SELECT * first.

-- governance.policies.free_text_mask exists
SELECT COUNT(*) = 1 AS ok FROM governance.information_schema.routines WHERE routine_schema = 'policies' AND routine_name = 'free_text_mask';

-- row filter of discovery_lake.assays.results is
-- governance.policies.programme_row_filter_except_data_steward
SELECT COUNT(*) = 1 AS ok
FROM discovery_lake.information_schema.row_filters
WHERE table_schema = 'assays' AND table_name = 'results' AND filter_catalog = 'governance' AND filter_schema = 'policies' AND filter_name = 'programme_row_filter_except_data_steward';

-- mask of discovery_lake.assays.results.notes is governance.policies.free_text_mask
SELECT COUNT(*) = 1 AS ok
FROM discovery_lake.information_schema.column_masks
WHERE table_schema = 'assays' AND table_name = 'results' AND column_name = 'notes' AND mask_catalog = 'governance' AND mask_schema = 'policies' AND mask_name = 'free_text_mask';

-- row filter of omics.variants.calls is
-- governance.policies.programme_row_filter_except_data_steward
SELECT COUNT(*) = 1 AS ok
FROM omics.information_schema.row_filters
WHERE table_schema = 'variants' AND table_name = 'calls' AND filter_catalog = 'governance' AND filter_schema = 'policies' AND filter_name = 'programme_row_filter_except_data_steward';
