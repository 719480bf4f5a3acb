-- accord migration 0001_subject-cutover-salts-filters-masks-tags-abac-style: checks after stage 06_databricks_cutover_subject
-- Platform databricks. Requires: 04_databricks_apply.
-- Every query returns a first column `ok` that must be true on every row; `accord migrate apply`
-- runs them after the stage and records it as failed otherwise.
-- Lines starting `-- accord-check:` are checks written as data: `accord migrate apply` reads
-- each table's row filter and column masks with the SDK's tables.get (information_schema column
-- names differ between the reference pages and live workspaces).

-- governance.policies.subject_pseudonym_mask reads governance.policies.subject_pseudonym_salt
SELECT COUNT(*) = 1 AS ok FROM governance.information_schema.routines WHERE routine_schema = 'policies' AND routine_name = 'subject_pseudonym_mask' AND instr(routine_definition, 'subject_pseudonym_salt') > 0;

-- mask of discovery_lake.assays.results.subject_id is governance.policies.subject_pseudonym_mask
-- (read with tables.get)
-- accord-check: {"column": "subject_id", "function": "governance.policies.subject_pseudonym_mask", "kind": "mask", "table": "discovery_lake.assays.results"}

-- ABAC policy accord_subject_pseudonym_mask is no longer on schema discovery_lake.assays
-- accord-check: {"column": null, "function": null, "kind": "abac_policy", "policy": "accord_subject_pseudonym_mask", "securable_type": "SCHEMA", "table": "discovery_lake.assays"}

-- mask of omics.variants.calls.subject_id is governance.policies.subject_pseudonym_mask (read
-- with tables.get)
-- accord-check: {"column": "subject_id", "function": "governance.policies.subject_pseudonym_mask", "kind": "mask", "table": "omics.variants.calls"}

-- ABAC policy accord_subject_pseudonym_mask is no longer on schema omics.variants
-- accord-check: {"column": null, "function": null, "kind": "abac_policy", "policy": "accord_subject_pseudonym_mask", "securable_type": "SCHEMA", "table": "omics.variants"}

-- discovery_lake.assays.results.notes no longer carries tag accord_mask
-- accord-check: {"column": "notes", "function": null, "kind": "tag", "table": "discovery_lake.assays.results", "tag": "accord_mask", "value": null}

-- discovery_lake.assays.results.programme_code no longer carries tag accord_row_key
-- accord-check: {"column": "programme_code", "function": null, "kind": "tag", "table": "discovery_lake.assays.results", "tag": "accord_row_key", "value": null}

-- discovery_lake.assays.results.subject_id no longer carries tag accord_mask
-- accord-check: {"column": "subject_id", "function": null, "kind": "tag", "table": "discovery_lake.assays.results", "tag": "accord_mask", "value": null}

-- omics.variants.calls.programme_code no longer carries tag accord_row_key
-- accord-check: {"column": "programme_code", "function": null, "kind": "tag", "table": "omics.variants.calls", "tag": "accord_row_key", "value": null}

-- omics.variants.calls.subject_id no longer carries tag accord_mask
-- accord-check: {"column": "subject_id", "function": null, "kind": "tag", "table": "omics.variants.calls", "tag": "accord_mask", "value": null}

-- salt env:SUBJECT_SALT_DATABRICKS is in effect: the canary's salted digest differs from its
-- unsalted digest (compare canary_digest with the other platforms': it must differ)
SELECT sha2(concat('accord-canary', governance.policies.subject_pseudonym_salt()), 256) <> sha2('accord-canary', 256) AS ok, sha2(concat('accord-canary', governance.policies.subject_pseudonym_salt()), 256) AS canary_digest;
