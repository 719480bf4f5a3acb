"""The stand-ins hold state the way the platforms do (the vendor pages cited beside each behaviour),
through the real clients: what accord's SQL does to them, and what they refuse."""

from __future__ import annotations

import pytest

from accord.compiler.connect.config import LiveOptions
from accord.compiler.connect.executor import DatabricksExecutor, ExecutionError, SnowflakeExecutor
from tests.live_helpers import Platforms

RAP = (
    "CREATE OR REPLACE ROW ACCESS POLICY GOVERNANCE.POLICIES.P AS (V VARCHAR) RETURNS BOOLEAN -> "
    "IS_ROLE_IN_SESSION('ANALYST')"
)
MASK = (
    "CREATE OR REPLACE MASKING POLICY GOVERNANCE.POLICIES.M{n} AS (VAL VARCHAR) RETURNS VARCHAR -> "
    "'***'"
)
SALT = "CREATE OR REPLACE SECURE FUNCTION GOVERNANCE.POLICIES.S() RETURNS VARCHAR AS $$ 'x' $$"
T = "DISCOVERY.ASSAYS.RESULTS"

# (setup statements, statement, the error it must raise or None, a query, what it must return)
SNOWFLAKE = [
    ([RAP, f"ALTER TABLE {T} ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.P ON (PROGRAMME_CODE)"],
     RAP, "not supported if the policy is attached", None, None),
    ([RAP, f"ALTER TABLE {T} ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.P ON (PROGRAMME_CODE)"],
     "DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.P", "cannot be dropped because it is attached", None, None),
    ([RAP, f"ALTER TABLE {T} ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.P ON (PROGRAMME_CODE)"],
     f"ALTER TABLE {T} ADD ROW ACCESS POLICY GOVERNANCE.POLICIES.P ON (PROGRAMME_CODE)",
     "already has a row access policy", None, None),
    ([MASK.format(n=1), MASK.format(n=2), f"ALTER TABLE {T} MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.M1"],
     f"ALTER TABLE {T} MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.M2",
     "cannot be attached to multiple masking policies", None, None),
    ([MASK.format(n=1), MASK.format(n=2), f"ALTER TABLE {T} MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.M1"],
     f"ALTER TABLE {T} MODIFY COLUMN NOTES SET MASKING POLICY GOVERNANCE.POLICIES.M2 FORCE", None,
     f"SELECT POLICY_NAME FROM TABLE(DISCOVERY.INFORMATION_SCHEMA.POLICY_REFERENCES(REF_ENTITY_NAME => '{T}', REF_ENTITY_DOMAIN => 'table'))",
     [{"policy_name": "M2"}]),
    ([SALT, "GRANT USAGE ON FUNCTION GOVERNANCE.POLICIES.S() TO ROLE ANALYST"], SALT, None,
     "SHOW GRANTS ON FUNCTION GOVERNANCE.POLICIES.S()", ["OWNERSHIP"]),  # no COPY GRANTS: grants dropped
    ([SALT, "GRANT USAGE ON FUNCTION GOVERNANCE.POLICIES.S() TO ROLE ANALYST"],
     SALT.replace("FUNCTION GOVERNANCE.POLICIES.S()", "FUNCTION GOVERNANCE.POLICIES.S() COPY GRANTS"), None,
     "SHOW GRANTS ON FUNCTION GOVERNANCE.POLICIES.S()", ["OWNERSHIP", "USAGE"]),
    ([], "DESCRIBE MASKING POLICY GOVERNANCE.POLICIES.NOPE", "002003 (42S02)", None, None),
]  # fmt: skip


@pytest.mark.parametrize(("setup", "statement", "error", "query", "expect"), SNOWFLAKE)
def test_snowflake_semantics(
    platforms: Platforms,
    setup: list[str],
    statement: str,
    error: str | None,
    query: str | None,
    expect: object,
) -> None:
    run = SnowflakeExecutor.connect(LiveOptions())
    try:
        for s in setup:
            run.run(s)
        if error is not None:
            with pytest.raises(ExecutionError, match=error.replace("(", r"\(").replace(")", r"\)")):
                run.run(statement)
        else:
            run.run(statement)
        if query is not None:
            rows = run.query(query)
            if query.startswith("SHOW GRANTS"):
                assert sorted(r["privilege"] for r in rows) == expect
            else:
                assert rows == expect
    finally:
        run.close()


def test_databricks_set_mask_replaces_and_tables_get_shows_it(platforms: Platforms) -> None:
    run = DatabricksExecutor.connect(LiveOptions())
    for n in (1, 2):
        run.run(
            f"CREATE OR REPLACE FUNCTION governance.policies.m{n}(val STRING) RETURNS STRING "
            "RETURN '***'"
        )
    for n in (1, 2):
        run.run(
            f"ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET MASK governance.policies.m{n}"
        )
    info = run.client.tables.get("omics.variants.calls")
    masks = {c.name: c.mask.function_name for c in info.columns if c.mask}
    assert masks == {"subject_id": "governance.policies.m2"}
    rows = run.query(
        "SELECT mask_name FROM omics.information_schema.column_masks WHERE column_name = 'subject_id'"
    )
    assert rows == [{"mask_name": "m2"}]


def test_a_persona_session_binds_the_context_functions(platforms: Platforms) -> None:
    """The hook probes need: the stand-in evaluates IS_ROLE_IN_SESSION for the session set."""
    run = SnowflakeExecutor.connect(LiveOptions())
    try:
        platforms.snowflake.session = {"CLINICAL_UNBLINDED"}
        query = "SELECT IS_ROLE_IN_SESSION('CLINICAL_UNBLINDED') AS ok"
        assert run.query(query) == [{"ok": True}]
        platforms.snowflake.session = {"CRO_EXTERNAL"}
        assert run.query(query) == [{"ok": False}]
    finally:
        run.close()


@pytest.mark.standin
def test_a_client_that_went_away_prints_nothing_into_a_later_test() -> None:
    """A handler writing to a client that gave up (a timeout test) is no error of the stand-in:
    socketserver would print its traceback from the handler's thread, seconds later, into
    whatever test runs then (sandbox/standins/http.py). Any other exception is still printed."""
    import contextlib
    import io
    from http.server import ThreadingHTTPServer

    from accord.sandbox.standins.http import Handler, running

    with running(ThreadingHTTPServer(("127.0.0.1", 0), Handler)) as server:
        for error in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(), ValueError("x")):
            printed = io.StringIO()
            with contextlib.redirect_stderr(printed):
                try:
                    raise error
                except Exception:
                    server.handle_error(None, ("127.0.0.1", 1))
            if isinstance(error, ConnectionError):
                assert printed.getvalue() == "", printed.getvalue()
            else:
                assert "ValueError: x" in printed.getvalue()


def test_a_restored_estate_is_its_snapshot() -> None:
    """What a test of a file sharing one deploy may change (tests/live_helpers.py: snapshot,
    restore): rows, a dropped or created table, a new catalog, policies, grants, a session
    policy, the statements seen; restored, the estate is the snapshot's."""
    from accord.sandbox.standins.snowflake import SnowflakeEstate
    from tests.live_helpers import restore, seed, snapshot

    sf = SnowflakeEstate()
    seed(sf)
    sf.seed_rows(T, [{"PROGRAMME_CODE": "CNS-204", "NOTES": "a"}])
    sf.execute(RAP)
    sf.grant_roles("ACCORD_CI", ["ANALYST"])
    taken = snapshot(sf)

    def state() -> tuple[object, ...]:
        rows = sf.db.execute(f"SELECT * FROM {sf._quoted(T)} ORDER BY ALL").fetchall()
        return rows, sorted(sf.policies), sf.user_roles, sf.session_policies, len(sf.executed)

    before = state()
    sf.db.execute(f"DELETE FROM {sf._quoted(T)}")
    sf.execute("DROP ROW ACCESS POLICY GOVERNANCE.POLICIES.P")
    sf.grant_roles("ACCORD_CI", ["CRO_EXTERNAL"])
    sf.set_session_policy("ACCORD_CI", [])
    sf.seed_table("NEWCAT.S.T", {"A": "VARCHAR"})
    assert state() != before
    restore(sf, taken)
    assert state() == before
    sf.db.execute(f"DROP TABLE {sf._quoted(T)}")
    restore(sf, taken)
    assert state() == before
    sf.seed_table("NEWCAT.S.T", {"A": "VARCHAR"})  # the new catalog was let go: attached again


# ------------------------------------------------------------------ nothing of accord's (issue 41, item 9)


def test_the_stand_ins_split_a_script_themselves() -> None:
    """A script is cut at each semicolon outside strings, quoted names and comments, by the
    stand-ins' own reader (tests/live_helpers.deploy_compiled deploys with it, never with
    accord's splitter)."""
    from accord.sandbox.standins.reader import split

    script = (
        "-- a comment; not a statement\n"
        "CREATE MASKING POLICY G.P.M AS (V VARCHAR) RETURNS VARCHAR -> 'a;b';\n"
        '/* ; */ SELECT 1 AS "x;y"  ;;\n'
        "SELECT 2"
    )
    assert split(script, "snowflake") == [
        "CREATE MASKING POLICY G.P.M AS (V VARCHAR) RETURNS VARCHAR -> 'a;b'",
        'SELECT 1 AS "x;y"',
        "SELECT 2",
    ]


@pytest.mark.standin
def test_a_refusal_in_a_persona_session_comes_back_as_a_failed_statement() -> None:
    """A persona session on a stand-in refuses with the platform's own error: the Databricks
    workspace answers it as a FAILED statement carrying its SQLSTATE (the SDK raises nothing
    for it), never as a dropped connection (accord's own error type, raised inside the
    server's handler, used to end the request without an answer)."""
    from databricks.sdk import WorkspaceClient

    from accord.sandbox.standins.databricks import DatabricksEstate, workspace
    from accord.sandbox.standins.probe_runner import StandinRunner

    lake = DatabricksEstate()
    lake.seed_table("omics.variants.calls", {"programme_code": "STRING"})
    runner = StandinRunner(lake, {"someone": {"analysts"}})
    front = DatabricksEstate()
    front.tokens = {"tok": "someone"}
    front.answer = lambda who, sql: runner.run(who, [sql])
    with workspace(front) as host:
        client = WorkspaceClient(host=host, token="tok")
        answer = client.statement_execution.execute_statement(
            statement="SELECT 1 FROM omics.variants.nope", warehouse_id="wh", wait_timeout="5s"
        )
    assert answer.status is not None and answer.status.state is not None
    assert answer.status.state.value == "FAILED"
    assert answer.status.error is not None and "42P01" in str(answer.status.sql_state)
    assert runner.seen == [("someone", ["SELECT 1 FROM omics.variants.nope"])]
