"""What Unity Catalog answers a reader that is not an administrator, and what accord does with
it (issue 20, Databricks facts 9-15; issue 22 item 17's Databricks deadline).

Each test runs accord's real commands against the Databricks stand-in (sandbox/standins/
databricks.py, 127.0.0.1 only), whose privilege model answers as the platform documents, and
names the fact and the page it stands for. Each fails if accord ignores the behaviour: a
reader that took ``grants.get`` for the whole truth, read only the first result chunk, took a
filtered function list for the deployed set, read a GRANT policy as a mask, or waited on a
server that never finishes would pass a drift it should fail.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import load_project
from accord.sandbox.standins.databricks import DatabricksEstate
from accord.targets import lower_all
from accord.targets.objects import Tag
from tests.cli import run_cli
from tests.live_helpers import DATABRICKS_READER, ROOT, Platforms, databricks_reader

POLICIES = str(ROOT / "policies")
DBX = ["--platform", "databricks"]
READER = DATABRICKS_READER


def deploy(policies: str, plans: Path) -> None:
    code, out, err = run_cli(["plan", policies, "--base", "live:databricks", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        ["migrate", "apply", *DBX, "--plans", str(plans), "--policies", policies]
    )
    assert code == 0, out + err


def drift(policies: str = POLICIES, *extra: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(["drift", policies, *DBX, "--format", "json", *extra])
    assert code in (0, 1), err
    return code, json.loads(out)


def rules(doc: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


def messages(doc: dict[str, Any], rule: str | None = None) -> str:
    return "\n".join(f["message"] for f in doc["findings"] if rule in (None, f["rule"]))


def least_privilege(dbx: DatabricksEstate, governed: tuple[str, ...], who: str = READER) -> None:
    """The reader grants of docs/live.md, and nothing else (tests/live_helpers.databricks_reader)."""
    databricks_reader(dbx, governed, who=who)


GOVERNED = ("omics.variants", "discovery_lake.assays")


def abac_policies(dbx: DatabricksEstate, tmp_path: Path) -> str:
    """policies/ with `style: abac` on Databricks, its governed tags created by the admin."""
    d = tmp_path / "abac"
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    p.write_text(p.read_text().replace("style: table", "style: abac"))
    for tag in lower_all(load_project(d))["databricks"].of(Tag):
        dbx.govern_tag(tag.name, tag.allowed_values, tag.comment)
    return str(d)


# ------------------------------------------------------------------ the Done-when estate


def test_least_privilege_drift_sees_the_override_the_inherited_grant_and_the_late_row(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Issue 20, Done when (Databricks): a least-privilege reader (docs/live.md's grants) runs
    drift on an ABAC estate where a console-made column mask meets the tag-based one
    (abac/abac-vs-rls-cm: different functions on one column block access), a salt is callable
    through a schema-level grant (fact 9: only grants.get_effective shows it), and the mapping
    table holds a row past the first result chunk (fact 10): all three are reported. A reader
    that cannot see the override's schema gets ACC707 and exit 1, never 0."""
    dbx = platforms.databricks
    policies = abac_policies(dbx, tmp_path)
    deploy(policies, tmp_path / "m1")
    least_privilege(dbx, GOVERNED)
    dbx.chunk_rows = 2  # every multi-row read crosses a chunk
    assert drift(policies) == (0, drift(policies)[1])  # clean, proven
    assert drift(policies)[1]["coverage"][0]["reader"] == READER
    dbx.execute(
        "ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes "
        "SET MASK governance.policies.subject_pseudonym_mask"
    )
    dbx.execute("GRANT EXECUTE ON SCHEMA governance.policies TO `analysts`")
    dbx.execute(
        "INSERT INTO governance.policies.programme_grants VALUES ('ZZZ-999', 'late-row-group')"
    )
    code, doc = drift(policies)
    assert code == 1
    assert "mask of discovery_lake.assays.results.notes" in messages(doc, "ACC702")
    assert "neither takes precedence" in messages(doc, "ACC702")
    assert "grants EXECUTE to analysts through schema governance.policies" in messages(
        doc, "ACC705"
    )
    assert "extra 'ZZZ-999' -> late-row-group" in messages(doc, "ACC704")
    assert "ACC707" not in rules(doc)
    # a reader that may no longer see the schema the override is in
    dbx.privileges -= {g for g in dbx.privileges if g[1].startswith("discovery_lake")}
    code, doc = drift(policies)
    assert code == 1 and "ACC707" in rules(doc)
    assert "mask of discovery_lake.assays.results.notes" not in messages(doc)
    assert "the reading role cannot see everything in the governed tables' schema " in messages(
        doc, "ACC707"
    )


# ------------------------------------------------------------------ fact 9: inherited grants


def test_a_schema_grant_exposes_the_salt_and_the_plan_revokes_it_there(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 9 (databricks-sdk service/catalog.py GrantsAPI.get: "Does not include inherited
    permissions"; get_effective "Includes inherited permissions from any parent securables";
    docs.databricks.com/api/workspace/grants/geteffective): EXECUTE granted on the governance
    schema reaches the salt function. accord reads get_effective, every page (max_results=0:
    the unpaginated call "will be deprecated"), revokes the grant on the schema, and the
    stage checks it is gone."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    dbx.execute("GRANT EXECUTE ON SCHEMA governance.policies TO `analysts`")
    dbx.execute("GRANT EXECUTE ON FUNCTION governance.policies.subject_pseudonym_salt TO `b`")
    dbx.grant_requests.clear()
    code, doc = drift()
    assert code == 1
    found = messages(doc, "ACC705")
    assert "grants EXECUTE to analysts through schema governance.policies" in found
    assert "grants EXECUTE to b:" in found
    asked = [(path, query) for path, query in dbx.grant_requests if "/function/" in path]
    assert asked and all("effective-permissions" in p and "max_results=0" in q for p, q in asked)
    assert any("page_token=" in q for _, q in asked)  # a page of one: the second page was read
    plans = tmp_path / "m2"
    code, out, err = run_cli(["plan", POLICIES, "--base", "live:databricks", "--out", str(plans)])
    assert code == 0, err
    written = "".join(f.read_text() for f in plans.rglob("*.sql"))
    assert "REVOKE EXECUTE ON SCHEMA governance.policies FROM `analysts`" in written
    assert "REVOKE EXECUTE ON FUNCTION governance.policies.subject_pseudonym_salt FROM `b`" in (
        written
    )
    code, out, err = run_cli(
        ["migrate", "apply", *DBX, "--plans", str(plans), "--policies", POLICIES]
    )
    assert code == 0, out + err
    assert drift() == (0, drift()[1])


def test_a_reader_without_select_on_the_mapping_table_is_refused_and_drift_unproven(
    platforms: Platforms, tmp_path: Path
) -> None:
    """A statement that reads a table needs SELECT on it (sql-ref-privileges: "SELECT: gives
    read access to a table"; inherited from the schema or catalog): without it the warehouse
    fails the statement with PERMISSION_DENIED / SQLSTATE 42501. A reader without SELECT on
    the mapping table gets ACC707 naming the principal and the grant it lacks, never ACC704
    (rows that differ) nor ACC701 (not deployed), exit 1; ``introspect --check-reader`` names
    the missing SELECT. A refusal the check did not foresee names the reading principal too,
    never the deploying role."""
    from accord.targets.objects import MappingTable

    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    least_privilege(dbx, GOVERNED)
    (mapping,) = lower_all(load_project(POLICIES))["databricks"].of(MappingTable)
    assert drift()[0] == 0
    dbx.privileges.discard(("SCHEMA", "governance.policies", "SELECT", READER))
    from databricks.sdk import WorkspaceClient

    answer = WorkspaceClient().statement_execution.execute_statement(
        statement=f"SELECT * FROM {mapping.name}", warehouse_id="wh-standin"
    )  # the platform's own answer to the reader, through the real SDK
    assert answer.status is not None and answer.status.sql_state == "42501"
    code, doc = drift()
    assert code == 1 and rules(doc) == {"ACC707"}
    said = messages(doc)
    assert f"mapping table {mapping.name}" in said and "deploying role" not in said
    assert f"GRANT SELECT ON TABLE {mapping.name} TO `{READER}`" in said
    code, out, _ = run_cli(["introspect", "--check-reader", *DBX, POLICIES])
    assert code == 1 and f"GRANT SELECT ON TABLE {mapping.name} TO `{READER}`" in out
    # SELECT held, the statement refused all the same: the reading principal and its need
    dbx.grant("SCHEMA", "governance.policies", "SELECT", READER)
    dbx.fail_on.append(f"FROM {mapping.name} ORDER BY")
    code, doc = drift()
    assert code == 1 and rules(doc) == {"ACC707"}
    said = messages(doc)
    assert f"denied: the reading role {READER} needs SELECT on {mapping.name}" in said
    assert "deploying role" not in said


def test_a_direct_mask_where_an_abac_mask_applies_is_reported_as_blocking_the_table(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Unity Catalog lets neither of two masks on one column win: a table whose "access
    control policies result in multiple column masks applying to the same column(s)" fails
    its queries with COLUMN_MASKS_FEATURE_NOT_SUPPORTED.MULTIPLE_MASKS, SQLSTATE 0A000
    (docs.databricks.com error-messages/column-masks-feature-not-supported-error-class;
    unity-catalog/abac/abac-vs-rls-cm). Where Snowflake's direct mask overrides the tag's,
    a console-made mask on a column an ABAC column-mask policy matches blocks the table: the
    stand-in refuses the query as the platform does, and drift's ACC702 says so, naming the
    ABAC policy, rather than calling it an override or saying nothing of it."""
    from databricks.sdk import WorkspaceClient

    dbx = platforms.databricks
    policies = abac_policies(dbx, tmp_path)
    deploy(policies, tmp_path / "m1")
    w = WorkspaceClient()
    query = "SELECT notes FROM discovery_lake.assays.results"
    answer = w.statement_execution.execute_statement(statement=query, warehouse_id="wh-standin")
    assert answer.status is not None and answer.status.sql_state is None  # one mask: it runs
    dbx.execute(
        "ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes "
        "SET MASK governance.policies.subject_pseudonym_mask"
    )
    answer = w.statement_execution.execute_statement(statement=query, warehouse_id="wh-standin")
    assert answer.status is not None and answer.status.sql_state == "0A000"
    assert answer.status.error is not None
    assert "MULTIPLE_MASKS" in (answer.status.error.message or "")
    code, doc = drift(policies)
    assert code == 1
    said = messages(doc, "ACC702")
    assert "mask of discovery_lake.assays.results.notes" in said
    assert (
        "ABAC policy accord_free_text_mask on schema discovery_lake.assays masks it too, with "
        "governance.policies.free_text_mask: neither takes precedence" in said
    )
    assert "MULTIPLE_MASKS" in said and "overrides the tag" not in said
    # the same function through both mechanisms: what the platform does is not documented
    dbx.execute(
        "ALTER TABLE discovery_lake.assays.results ALTER COLUMN notes "
        "SET MASK governance.policies.free_text_mask"
    )
    code, doc = drift(policies)
    said = messages(doc, "ACC702")
    assert code == 1 and "masks it too, with the same function" in said
    assert "is not documented" in said


def test_abac_policy_definitions_shows_only_the_policies_the_reader_may_describe(
    platforms: Platforms, tmp_path: Path
) -> None:
    """information_schema.abac_policy_definitions (Public Preview; sql/language-manual/
    information-schema/abac_policy_definitions): one row per ABAC policy attached in the
    catalog, in the documented columns; "You will only see policies returned when you have
    READ METADATA or MANAGE on the securable where the policy is attached, or own it". A
    reader proven to see the schema whole finds its policies there; a reader without it does
    not, so accord does not let the view stand for that schema's tables: each is listed
    itself and its refusal is unseen (ACC707), never a clean read."""
    from databricks.sdk import WorkspaceClient

    dbx = platforms.databricks
    policies = abac_policies(dbx, tmp_path)
    deploy(policies, tmp_path / "m1")
    dbx.execute(
        "CREATE POLICY console_mask ON TABLE omics.variants.calls COLUMN MASK "
        "governance.policies.subject_pseudonym_mask TO `account users` FOR TABLES "
        "MATCH COLUMNS has_tag_value('accord_mask', 'subject_pseudonym') AS c ON COLUMN c"
    )
    least_privilege(dbx, GOVERNED)
    w = WorkspaceClient()

    def names(catalog: str) -> list[list[str]]:
        answer = w.statement_execution.execute_statement(
            statement=f"SELECT * FROM {catalog}.information_schema.abac_policy_definitions "
            "ORDER BY policy_name, schema_name",
            warehouse_id="wh-standin",
        )
        assert answer.manifest is not None and answer.manifest.schema is not None
        columns = [c.name for c in answer.manifest.schema.columns or []]
        assert columns == [
            "policy_id", "policy_name", "policy_type", "catalog_name", "schema_name",
            "securable_name", "on_securable_type", "to_principals", "except_principals",
            "for_securable_type", "privileges", "when_condition", "match_columns", "created_by",
        ]  # fmt: skip
        rows = answer.result.data_array if answer.result else None
        return [[r[1], r[2], r[5], r[6]] for r in rows or []]

    assert names("omics") == [
        ["accord_programme_row_filter", "ROW_FILTER", None, "SCHEMA"],
        ["accord_subject_pseudonym_mask", "COLUMN_MASK", None, "SCHEMA"],
        ["console_mask", "COLUMN_MASK", "calls", "TABLE"],
    ]
    code, doc = drift(policies)
    assert code == 1 and "ABAC policy console_mask" in messages(doc, "ACC702")
    # without MANAGE on omics.variants the view hides its policies; the read does not trust it
    dbx.privileges -= {g for g in dbx.privileges if g[1] == "omics.variants"}
    dbx.privileges -= {g for g in dbx.privileges if g[:2] == ("CATALOG", "omics")}
    dbx.grant("CATALOG", "omics", "USE_CATALOG", READER)
    assert names("omics") == []
    code, doc = drift(policies)
    assert code == 1 and "ACC707" in rules(doc)
    assert "ABAC policies on table omics.variants.calls" in messages(doc, "ACC707")


def test_an_unpaginated_grants_answer_is_never_asked_for(platforms: Platforms) -> None:
    """Fact 9: the stand-in answers grants.get without max_results in one piece (the form the
    SDK says will be deprecated) and pages with it: accord always asks for pages."""
    dbx = platforms.databricks
    dbx.execute(
        "CREATE FUNCTION governance.policies.subject_pseudonym_salt() RETURNS STRING RETURN 'x'"
    )
    run_cli(["introspect", *DBX, POLICIES])
    assert dbx.grant_requests and all("max_results=0" in q for _, q in dbx.grant_requests)


# ------------------------------------------------------------------ fact 10: chunks


def test_every_result_chunk_is_read(platforms: Platforms) -> None:
    """Fact 10 (databricks-sdk service/sql.py ResultData.next_chunk_index; Statement
    Execution API get_statement_result_chunk_n; docs.databricks.com/api/workspace/
    statementexecution): only the first chunk arrives with the statement; the executor
    fetches the rest, and a result short of the manifest's total_row_count is an error."""
    from accord.compiler.connect.config import LiveOptions
    from accord.compiler.connect.executor import DatabricksExecutor, ExecutionError

    dbx = platforms.databricks
    dbx.chunk_rows = 2
    run = DatabricksExecutor.connect(LiveOptions())
    rows = run.query("SELECT * FROM (VALUES (1), (2), (3), (4), (5)) AS t(n) ORDER BY n")
    assert [r["n"] for r in rows] == ["1", "2", "3", "4", "5"]
    fetched = [p for _, p in dbx.requests_seen() if "/result/chunks/" in p]
    assert len(fetched) == 2
    dbx.drop_last_chunk = True
    with pytest.raises(ExecutionError, match="answered 4 of its 5 rows"):
        run.query("SELECT * FROM (VALUES (1), (2), (3), (4), (5)) AS t(n)")


# ------------------------------------------------------------------ fact 11: filtered lists


def test_a_function_the_reader_may_not_execute_is_unseen_not_undeployed(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 11 (databricks-sdk FunctionsAPI.list: "the output list contains only functions
    for which either the user has the EXECUTE privilege or the user is the owner", and with
    ``include_browse`` those it can see the metadata of: BROWSE): without BROWSE on the
    governance catalog the list is partial, so a function missing from it is ACC707 (not
    proven), never ACC701 (not deployed). A reader that may EXECUTE the salt is itself an
    exposure (ACC705)."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    least_privilege(dbx, GOVERNED)
    dbx.privileges.discard(("SCHEMA", "governance.policies", "MANAGE", READER))
    dbx.privileges.discard(("CATALOG", "governance", "BROWSE", READER))
    dbx.execute(
        f"GRANT EXECUTE ON FUNCTION governance.policies.subject_pseudonym_salt TO `{READER}`"
    )
    code, doc = drift()
    assert code == 1
    unseen = messages(doc, "ACC707")
    assert "function governance.policies.free_text_mask" in unseen
    assert "functions.list shows only the functions the reader owns or may EXECUTE" in unseen
    assert "GRANT BROWSE ON CATALOG governance" in unseen
    assert "ACC701" not in rules(doc)
    assert f"grants EXECUTE to {READER}" in messages(doc, "ACC705")
    code, out, _ = run_cli(["introspect", "--check-reader", *DBX, POLICIES])
    assert code == 1
    assert "neither MANAGE nor ownership" in out


# ------------------------------------------------------------------ fact 12: GRANT/DENY


def test_grant_and_deny_policies_are_read_by_their_type(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 12 (databricks-sdk catalog.py PolicyType: POLICY_TYPE_GRANT, POLICY_TYPE_DENY
    beside ROW_FILTER and COLUMN_MASK; unity-catalog/abac GRANT and DENY policies): a GRANT
    policy of EXECUTE on the governance schema exposes the salt (ACC705, the plan drops it); a
    DENY policy is neither a filter nor a mask (never an unmanaged column mask)."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    dbx.add_grant_policy(
        "console_grant", "SCHEMA", "governance.policies", ["EXECUTE"], ["analysts"]
    )
    dbx.add_grant_policy(
        "console_deny", "SCHEMA", "omics.variants", ["SELECT"], ["contractors"], deny=True
    )
    code, doc = drift()
    assert code == 1 and rules(doc) == {"ACC705"}, messages(doc)
    assert "through policy console_grant on schema governance.policies" in messages(doc)
    code, out, _ = run_cli(["introspect", *DBX, POLICIES, "--format", "json"])
    ignored = json.loads(out)["ignored"]
    assert any("console_deny" in w and "DENY policy of SELECT" in w for w in ignored)
    plans = tmp_path / "m2"
    assert run_cli(["plan", POLICIES, "--base", "live:databricks", "--out", str(plans)])[0] == 0
    written = "".join(f.read_text() for f in plans.rglob("*.sql"))
    assert "DROP POLICY `console_grant` ON SCHEMA governance.policies" in written
    code, out, err = run_cli(
        ["migrate", "apply", *DBX, "--plans", str(plans), "--policies", POLICIES]
    )
    assert code == 0, out + err
    assert drift()[0] == 0


# ------------------------------------------------------------------ fact 13: the SDK floor


def test_an_sdk_without_an_api_accord_calls_is_a_one_line_error(
    platforms: Platforms, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fact 13 (the databricks-sdk CHANGELOG: w.policies in 0.63.0, entity_tag_assignments and
    tag_policies in 0.64.0): an SDK without them is a usage error naming the version, exit 2,
    never a traceback; pyproject's floor is the release with every API accord reads."""
    import tomllib

    from databricks.sdk import WorkspaceClient

    from accord.compiler.connect.executor import DATABRICKS_SDK_FLOOR

    monkeypatch.delattr(WorkspaceClient, "policies")
    code, _, err = run_cli(["drift", POLICIES, *DBX])
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "has no w.policies (added in 0.63.0)" in err
    assert f"databricks-sdk>={DATABRICKS_SDK_FLOOR}" in err
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floor = DATABRICKS_SDK_FLOOR.removesuffix(".0")
    assert extras["optional-dependencies"]["databricks"] == [f"databricks-sdk>={floor}"]


# ------------------------------------------------------------------ fact 14: sql_state


def test_a_denial_is_known_by_its_sql_state_whatever_the_message(platforms: Platforms) -> None:
    """Fact 14 (databricks-sdk service/sql.py StatementStatus.sql_state, "SQLSTATE error code
    returned when the statement execution fails"; error-classes: the message is not a
    contract): a FAILED statement whose message says nothing but whose sql_state is 42501 is
    a denial."""
    from accord.compiler.connect.config import LiveOptions
    from accord.compiler.connect.executor import DatabricksExecutor, DeniedError

    dbx = platforms.databricks
    dbx.seed_table("governance.policies.secrets_of_others", {"v": "STRING"})
    dbx.admins.clear()
    dbx.terse_errors = True
    run = DatabricksExecutor.connect(LiveOptions())
    with pytest.raises(DeniedError) as caught:
        run.query("SELECT v FROM governance.policies.secrets_of_others")
    assert caught.value.codes["sqlState"] == "42501"
    assert "[INSUFFICIENT_PERMISSIONS]" not in caught.value.said


# ------------------------------------------------------------------ fact 15: ALL PRIVILEGES


def test_all_privileges_is_revoked_in_two_words(platforms: Platforms, tmp_path: Path) -> None:
    """Fact 15 (sql-ref-privileges: ALL PRIVILEGES; the REST enum Privilege.ALL_PRIVILEGES):
    a salt grant read as ALL_PRIVILEGES is revoked with `REVOKE ALL PRIVILEGES`, which the
    stand-in accepts and ALL_PRIVILEGES it refuses."""
    from accord.sandbox.standins.engine import SqlError

    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    dbx.execute(
        "GRANT ALL PRIVILEGES ON FUNCTION governance.policies.subject_pseudonym_salt TO `ops`"
    )
    with pytest.raises(SqlError, match="spells privileges with spaces"):
        dbx.execute(
            "REVOKE ALL_PRIVILEGES ON FUNCTION governance.policies.subject_pseudonym_salt FROM `ops`"
        )
    assert "grants ALL_PRIVILEGES to ops" in messages(drift()[1], "ACC705")
    plans = tmp_path / "m2"
    assert run_cli(["plan", POLICIES, "--base", "live:databricks", "--out", str(plans)])[0] == 0
    written = "".join(f.read_text() for f in plans.rglob("*.sql"))
    assert (
        "REVOKE ALL PRIVILEGES ON FUNCTION governance.policies.subject_pseudonym_salt FROM `ops`"
        in written
    )
    code, out, err = run_cli(
        ["migrate", "apply", *DBX, "--plans", str(plans), "--policies", POLICIES]
    )
    assert code == 0, out + err
    assert drift()[0] == 0


# ------------------------------------------------------------------ the reader check


def test_check_reader_states_what_the_least_privilege_reader_holds(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Issue 20 Build 2: `accord introspect --check-reader` names the principal and the
    privileges that let it see everything (MANAGE on the governance schema and each governed
    schema); with one missing it says what is not proven and exits 1."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    code, out, _ = run_cli(["introspect", "--check-reader", *DBX, POLICIES, "--format", "json"])
    assert code == 0 and "metastore admin" in out
    least_privilege(dbx, GOVERNED)
    code, out, err = run_cli(["introspect", "--check-reader", *DBX, POLICIES, "--format", "json"])
    assert code == 0, out + err
    assert "MANAGE on schema governance.policies" in out
    assert "MANAGE on schema omics.variants" in out
    dbx.privileges.discard(("SCHEMA", "omics.variants", "MANAGE", READER))
    dbx.grant("CATALOG", "omics", "MANAGE", READER)  # inherited from the catalog counts
    code, out, _ = run_cli(["introspect", "--check-reader", *DBX, POLICIES])
    assert code == 0 and "MANAGE on schema omics.variants (inherited from catalog omics)" in out
    dbx.privileges.discard(("CATALOG", "omics", "MANAGE", READER))
    code, out, _ = run_cli(["introspect", "--check-reader", *DBX, POLICIES])
    assert code == 1
    assert (
        "the reading role cannot see everything in the governed tables' schema omics.variants"
        in out
    )


# ------------------------------------------------------------------ issue 22 item 17: deadlines


# slow: each waits out the 1 s statement timeout (the least it may be; several times: every read
# it holds)
@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "path"),
    [
        ("drip_on", "/api/2.1/unity-catalog/functions"),
        # a schema's policies are listed only where the policy view names one: one is put there
        ("endless_on", "/api/2.1/unity-catalog/policies/schema/omics.variants"),
        ("drip_on", "/api/2.0/sql/statements"),
    ],
)
def test_a_server_that_drips_or_pages_forever_ends_within_the_statement_timeout(
    platforms: Platforms, mode: str, path: str
) -> None:
    """Issue 22 item 17: the SDK's timeout is per read, so a server that sends one byte at a
    time, or answers a fresh next_page_token forever, would hold drift without end. Every SDK
    call runs under the statement timeout: what it was reading is unseen (ACC707, exit 1)
    with a clear message."""
    dbx = platforms.databricks
    if "/policies/" in path:
        dbx.add_grant_policy("console_deny", "SCHEMA", "omics.variants", ["SELECT"], ["x"], True)
    getattr(dbx, mode).append(path)
    code, doc = drift(POLICIES, "--statement-timeout", "1")
    assert code == 1 and "ACC707" in rules(doc)
    assert "no complete answer within the statement timeout of 1s" in messages(doc, "ACC707")


def test_a_policy_of_a_type_accord_does_not_know_is_unseen(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Fact 12: PolicyType grows (GRANT and DENY came after ROW_FILTER and COLUMN_MASK); the
    SDK reads an unknown value as None. Such a policy is neither taken for a mask nor skipped:
    drift of the securable's policies is not proven (ACC707)."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    dbx.add_grant_policy("console_future", "SCHEMA", "omics.variants", ["SELECT"], ["x"])
    dbx.abac[("SCHEMA", "OMICS.VARIANTS", "CONSOLE_FUTURE")]["policy_type"] = "POLICY_TYPE_NEW"
    code, doc = drift()
    assert code == 1 and rules(doc) == {"ACC707"}
    assert "ABAC policy console_future on schema omics.variants" in messages(doc)
    assert "its policy type (none) is not one accord reads" in messages(doc)


def test_concurrent_reads_answer_as_a_sequential_read(platforms: Platforms, tmp_path: Path) -> None:
    """Issue 20 Build 5: per-object reads run --jobs at a time; what they could not see is
    recorded in the order of the objects, so the output is byte-identical to --jobs 1, failures
    included. (Without information_schema.abac_policy_definitions, a Public Preview, every
    governed table's policies are listed one by one, so a table's refusal is among them.)"""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    dbx.abac_definitions = False
    dbx.execute("GRANT EXECUTE ON SCHEMA governance.policies TO `analysts`")
    for securable in ("table/omics.variants.calls", "schema/omics.variants", "catalog/omics"):
        dbx.forbidden.append(f"/api/2.1/unity-catalog/policies/{securable}")
    outs = []
    for jobs in ("1", "4"):
        code, out, _ = run_cli(["drift", POLICIES, *DBX, "--format", "json", "--jobs", jobs])
        assert code == 1
        outs.append(out)
    assert outs[0] == outs[1]
    assert messages(json.loads(outs[0]), "ACC707").count("cannot see ABAC policies on") == 3


# slow: waits out the 2 s statement timeout
@pytest.mark.slow
def test_a_stage_check_on_a_dripping_server_fails_the_stage_in_time(
    platforms: Platforms, tmp_path: Path
) -> None:
    """Issue 22 item 17: a stage's metadata checks (tables.get, policies, tags) are SDK calls
    too; on a server that drips its answer they end within the statement timeout and the
    stage fails, saying so (a check that did not run never passes)."""
    dbx = platforms.databricks
    plans = tmp_path / "m1"
    assert run_cli(["plan", POLICIES, "--base", "live:databricks", "--out", str(plans)])[0] == 0
    dbx.drip_on.append("/api/2.1/unity-catalog/tables/")
    code, out, err = run_cli(
        ["migrate", "apply", *DBX, "--plans", str(plans), "--policies", POLICIES,
         "--statement-timeout", "2"]
    )  # fmt: skip
    assert code == 1
    assert "its checks did not" in out + err
    assert "no complete answer within the statement timeout of 2s" in out + err


# ------------------------------------------------------------------ issue 41, item 5


def test_manage_alone_no_longer_proves_every_function_is_listed(
    platforms: Platforms, tmp_path: Path
) -> None:
    """MANAGE on the governance schema is not documented to list its functions (FunctionsAPI.
    list lists the owned and EXECUTE-able ones; ``include_browse`` adds the BROWSE-able ones):
    a reader with MANAGE but not BROWSE gets a partial list, and a function it does not see
    is unseen (ACC707), never taken as deployed. On main MANAGE was taken to list them all and
    the stand-in listed them to it: drift was clean."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    least_privilege(dbx, GOVERNED)
    dbx.privileges.discard(("CATALOG", "governance", "BROWSE", READER))
    assert ("SCHEMA", "governance.policies", "MANAGE", READER) in dbx.privileges
    code, doc = drift()
    assert code == 1
    unseen = messages(doc, "ACC707")
    assert "every function in governance.policies" in unseen
    assert "GRANT BROWSE ON CATALOG governance" in unseen


def test_a_browse_listed_function_s_body_is_read_from_information_schema(
    platforms: Platforms, tmp_path: Path
) -> None:
    """With BROWSE, functions.list (include_browse) shows the functions the reader may not
    EXECUTE by their metadata only (FunctionInfo.browse_only); their bodies come from the
    catalog's information_schema.routines and parameters, so a changed filter body is still
    ACC703, and a clean estate is clean (the salt's body is never asked for)."""
    dbx = platforms.databricks
    deploy(POLICIES, tmp_path / "m1")
    least_privilege(dbx, GOVERNED)
    assert drift()[0] == 0
    listed = [
        r for r in dbx.statement_requests if "information_schema.routines" in r["body"]["statement"]
    ]
    assert listed  # the bodies were read there
    fn = dbx.policies["GOVERNANCE.POLICIES.PROGRAMME_ROW_FILTER_EXCEPT_DATA_STEWARD"]
    fn.body = "TRUE"  # a console replaces the filter's body
    code, doc = drift()
    assert code == 1
    assert "governance.policies.programme_row_filter_except_data_steward" in messages(doc, "ACC703")
