-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 04_databricks_apply
-- Platform databricks. Requires: 02_databricks_prepare.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.
-- Lines starting `-- accord-check:` are checks written as data: `accord migrate apply` reads
-- each table's row filter and column masks with the SDK's tables.get (information_schema column
-- names differ between the reference pages and live workspaces).

-- governance.policies.free_text_mask exists
SELECT COUNT(*) = 1 AS ok FROM governance.information_schema.routines WHERE routine_schema = 'policies' AND routine_name = 'free_text_mask';

-- row filter of discovery_lake.assays.results is
-- governance.policies.programme_row_filter_except_data_steward (read with tables.get)
-- accord-check: {"column": null, "function": "governance.policies.programme_row_filter_except_data_steward", "kind": "row_filter", "table": "discovery_lake.assays.results"}

-- mask of discovery_lake.assays.results.notes is governance.policies.free_text_mask (read with
-- tables.get)
-- accord-check: {"column": "notes", "function": "governance.policies.free_text_mask", "kind": "mask", "table": "discovery_lake.assays.results"}

-- ABAC policy accord_free_text_mask is no longer on schema discovery_lake.assays
-- accord-check: {"column": null, "function": null, "kind": "abac_policy", "policy": "accord_free_text_mask", "securable_type": "SCHEMA", "table": "discovery_lake.assays"}

-- ABAC policy accord_programme_row_filter is no longer on schema discovery_lake.assays
-- accord-check: {"column": null, "function": null, "kind": "abac_policy", "policy": "accord_programme_row_filter", "securable_type": "SCHEMA", "table": "discovery_lake.assays"}

-- row filter of omics.variants.calls is
-- governance.policies.programme_row_filter_except_data_steward (read with tables.get)
-- accord-check: {"column": null, "function": "governance.policies.programme_row_filter_except_data_steward", "kind": "row_filter", "table": "omics.variants.calls"}

-- ABAC policy accord_programme_row_filter is no longer on schema omics.variants
-- accord-check: {"column": null, "function": null, "kind": "abac_policy", "policy": "accord_programme_row_filter", "securable_type": "SCHEMA", "table": "omics.variants"}
