"""`accord probe sample`: probes sampled from the platforms' access history (issue 24).

End to end per platform: three personas query through two surfaces of a copy of the reference
estate, with the real snowflake-connector-python and databricks-sdk clients, against the
stand-ins (sandbox/standins/), which record every answered query and serve it back through the
history views in their documented shapes (sandbox/standins/history.py). One persona reads a
column no probe covers; `probe sample` reports the coverage, lists that fact first, and its
proposed probe validates and passes `accord probe`. Reads that cannot be mapped (an unknown
table, a role or group in no persona, an unrecognised client, a table the surface is not
said to read) are listed with their reason and lower the coverage figure. The same history
gives byte-identical output. Also: the `traffic` key's validation, and the mapping rules on
hand-made history rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.model.validate import load_project
from accord.compiler.probe_sample.filters import restricted_values
from accord.compiler.probe_sample.history import Read, secondary_roles
from accord.compiler.probe_sample.mapping import Fact, Mapper, Unmappable
from accord.compiler.probe_sample.report import covers
from accord.sandbox.standins.history import history_of
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms

POLICIES = ROOT / "policies"
RESULTS = "DISCOVERY.ASSAYS.RESULTS"

#: the surfaces the test estate adds beside the reference ones, and how traffic names them
TRAFFIC = {
    "warehouse_agent": {"client": "warehouse-agent"},
    "lakehouse_agent": {"client": "lakehouse-agent"},
}
EXTRA = {
    "assay_dashboard": {
        "platform": "snowflake",
        "reads": ["assay_results"],
        "identity": "caller",
        "traffic": {"query_tag": "assay-dashboard"},
    },
    "lake_notebook": {
        "platform": "databricks",
        "reads": ["variant_calls", "assay_results_lake"],
        "identity": "caller",
        "runtime": "15.4",
        "access_mode": "standard",
        "traffic": {"query_tag": "tool:notebook"},
    },
}
TWIN = {"assay_dashboard": "warehouse_agent", "lake_notebook": "lakehouse_agent"}


def estate(tmp_path: Path) -> Path:
    """policies/ with traffic keys and two more surfaces (each answering as its twin)."""
    root = tmp_path / "estate"
    shutil.copytree(POLICIES, root)
    surfaces = yaml.safe_load((root / "surfaces.yaml").read_text())
    for name, traffic in TRAFFIC.items():
        surfaces["surfaces"][name]["traffic"] = traffic
    surfaces["surfaces"].update(EXTRA)
    (root / "surfaces.yaml").write_text(yaml.safe_dump(surfaces, sort_keys=False))
    probes = yaml.safe_load((root / "probes.yaml").read_text())
    for p in probes["probes"].values():
        for extra, twin in TWIN.items():
            if twin in p["expect"]:
                p["expect"][extra] = p["expect"][twin]
    (root / "probes.yaml").write_text(yaml.safe_dump(probes, sort_keys=False))
    return root


def sample(root: Path, platform: str, *more: str) -> tuple[int, str, str]:
    return run_cli(["probe", "sample", str(root), "--platform", platform, "--since", "7", *more])


def check_sample(root: Path, platform: str, tmp_path: Path, uncovered: dict[str, Any]) -> dict:
    out = tmp_path / "proposed.yaml"
    code, text, err = sample(root, platform, "--format", "json", "--out", str(out))
    assert code == 0, err
    doc = json.loads(text)
    (source,) = doc["coverage"]  # what was read, the shape of every live command's coverage
    assert source["complete"] and source["read"]["queries"] >= 8 and not source["unseen"], source
    first = doc["uncovered"][0]
    assert {k: first[k] for k in uncovered} == uncovered
    assert first["covered_by"] == []
    # the proposal: most read first, validated and passing `accord probe`
    assert doc["proposed"][0].startswith("sampled_bench_chemist_")
    proposed = out.read_text()
    assert "seen 3 times" in proposed and "REVIEW: the owning team" in proposed
    shutil.copy(out, root / "sampled.yaml")
    code, _, err = run_cli(["validate", str(root)])
    assert code == 0, err
    code, probed, err = run_cli(["probe", str(root)])
    assert code == 0, probed + err
    assert doc["proposed"][0] in probed
    (root / "sampled.yaml").unlink()
    # the same history, the same bytes
    assert sample(root, platform, "--format", "json")[1] == text
    again = sample(root, platform, "--format", "yaml")[1]
    assert yaml.safe_load(again) == doc
    return doc


# --------------------------------------------------------------------------------------------
# Snowflake


def _snowflake_session(user: str, application: str, tag: str | None, roles: list[str]) -> Any:
    import os

    import snowflake.connector

    params: dict[str, Any] = {
        "account": os.environ["SNOWFLAKE_ACCOUNT"],
        "user": user,
        "password": "local-test",
        "host": "127.0.0.1",
        "port": int(os.environ["SNOWFLAKE_PORT"]),
        "protocol": "http",
        "application": application,
        "login_timeout": 10,
    }
    if hasattr(snowflake.connector, "ConnectionConfig"):  # the 4.x/5.x core, as accord's own
        params["enable_server_session_keep_alive_auto_detection"] = False
    if tag:
        params["session_parameters"] = {"QUERY_TAG": tag}
    conn = snowflake.connector.connect(**params)
    cur = conn.cursor()
    cur.execute(f"USE ROLE {roles[0]}")
    cur.execute(f"USE SECONDARY ROLES {', '.join(roles[1:]) or 'NONE'}")
    return conn


def test_snowflake_traffic_is_sampled_end_to_end(platforms: Platforms, tmp_path: Path) -> None:
    from tests.test_probe_live_snowflake import ROWS, deploy_snowflake

    root = estate(tmp_path)
    deploy_snowflake(tmp_path / "migrations")
    sf = platforms.snowflake
    sf.seed_rows(RESULTS, ROWS)
    sf.seed_table("DISCOVERY.ASSAYS.SCRATCH", {"NOTE": "VARCHAR"})  # in no dataset
    grants = {
        "PHARMA": ["BENCH_CHEMIST", "CLINICAL_UNBLINDED"],
        "PHARMA2": ["BENCH_CHEMIST", "CLINICAL_UNBLINDED"],
        "CRO": ["CRO_EXTERNAL"],
        "CHEMIST": ["BENCH_CHEMIST"],
        "ANALYST": ["ANALYST"],
    }
    for user, roles in grants.items():
        sf.grant_roles(user, roles)
    cns = f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204'"
    traffic = [
        ("PHARMA", "warehouse-agent", None, grants["PHARMA"], [cns]),
        # every granted role as a secondary role: told apart through GRANTS_TO_USERS
        ("PHARMA2", "warehouse-agent", None, ["BENCH_CHEMIST", "ALL"], [cns]),
        ("CRO", "warehouse-agent", None, grants["CRO"], [cns]),
        ("CHEMIST", "assay-dash", "assay-dashboard", grants["CHEMIST"], [
            f"SELECT NOTES FROM {RESULTS} WHERE PROGRAMME_CODE = 'ONC-101'",
            *[f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE = 'IMM-310'"] * 3,
            "SELECT NOTE FROM DISCOVERY.ASSAYS.SCRATCH",
        ]),
        ("CHEMIST", "adhoc-tool", None, grants["CHEMIST"], [f"SELECT NOTES FROM {RESULTS}"]),
        ("ANALYST", "warehouse-agent", None, grants["ANALYST"], [cns]),
    ]  # fmt: skip
    for user, app, tag, roles, queries in traffic:
        conn = _snowflake_session(user, app, tag, roles)
        for q in queries:
            conn.cursor().execute(q).fetchall()
        conn.close()
    doc = check_sample(
        root,
        "snowflake",
        tmp_path,
        {
            "persona": "bench_chemist",
            "surface": "assay_dashboard",
            "dataset": "assay_results",
            "column": "SUBJECT_ID",
            "where": {"programme": "IMM-310"},
            "reads": 3,
        },
    )
    covered = {(f["persona"], f["surface"], f["column"]): f["covered_by"] for f in doc["facts"]}
    assert covered[("clinical_pharmacologist", "warehouse_agent", "SUBJECT_ID")] == [
        "pharmacologist_sees_cns_subjects"
    ]
    assert covered[("cro_collaborator", "warehouse_agent", "SUBJECT_ID")] == [
        "cro_cannot_unmask_cns_subjects"
    ]
    assert covered[("bench_chemist", "assay_dashboard", "NOTES")] == [
        "bench_chemist_reads_redacted_oncology_notes"
    ]
    reasons = {u["reason"].split(" (")[0].split(":")[0] for u in doc["unmappable"]}
    assert any("no dataset's table" in r for r in reasons), doc["unmappable"]
    assert any("no surface's traffic matches" in r for r in reasons), doc["unmappable"]
    assert any("roles ANALYST" in r for r in reasons), doc["unmappable"]
    # the pharmacologist was told apart from the chemist by her secondary role, named or ALL
    pharma = next(f for f in doc["facts"] if f["persona"] == "clinical_pharmacologist")
    assert (pharma["reads"], pharma["queries"]) == (2, 2)
    c = doc["probe_coverage"]
    assert (c["reads"], c["covered_reads"], c["unmappable_reads"]) == (10, 4, 3)
    assert (c["facts"], c["covered_facts"]) == (4, 3)
    # the policies Snowflake applied ride with the facts
    cro = next(f for f in doc["facts"] if f["persona"] == "cro_collaborator")
    assert any("SUBJECT" in p.upper() for p in cro["policies"]), cro
    text = sample(root, "snowflake")[1]
    assert "coverage: 4 of 10 reads covered by a probe (40.0%; 3 unmappable)" in text
    assert text.index("uncovered") < text.index(
        "bench_chemist via assay_dashboard: assay_results.SUBJECT_ID"
    )


def test_snowflake_history_views_have_the_documented_columns(platforms: Platforms) -> None:
    """Each view answers the columns its documentation page names, through the connector."""
    from accord.compiler.connect.executor import SnowflakeExecutor

    executor = SnowflakeExecutor.from_env()
    executor.query(f"SELECT PROGRAMME_CODE FROM {RESULTS}")  # one recorded query
    try:
        for view, columns in (
            ("ACCESS_HISTORY", ["query_id", "query_start_time", "user_name",
                                "direct_objects_accessed", "base_objects_accessed",
                                "policies_referenced"]),
            ("QUERY_HISTORY", ["query_id", "query_text", "session_id", "user_name", "role_name",
                               "secondary_role_stats", "query_tag"]),
            ("SESSIONS", ["session_id", "user_name", "client_application_id",
                          "client_environment"]),
        ):  # fmt: skip
            rows = executor.query(f"SELECT * FROM SNOWFLAKE.ACCOUNT_USAGE.{view}")
            assert rows and set(columns) <= set(rows[0]), (view, rows)
    finally:
        executor.close()
    (access,) = executor_rows = [
        r
        for r in history_of(platforms.snowflake).access
        if "PROGRAMME" in r["BASE_OBJECTS_ACCESSED"]
    ]
    objects = json.loads(access["BASE_OBJECTS_ACCESSED"])
    assert objects[0]["objectDomain"] == "Table" and objects[0]["objectName"] == RESULTS
    assert objects[0]["columns"][0]["columnName"] == "PROGRAMME_CODE" and executor_rows


# --------------------------------------------------------------------------------------------
# Databricks


def sampler_reads_the_system_tables(dbx: Any, who: str) -> None:
    """docs/probes.md's grants for the Databricks history, and nothing else."""
    dbx.grant("CATALOG", "system", "USE_CATALOG", who)
    for schema in ("system.query", "system.access"):
        for privilege in ("USE_SCHEMA", "SELECT"):
            dbx.grant("SCHEMA", schema, privilege, who)


def _databricks(host: str, token: str, product: str | None) -> Any:
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.config import Config

    extra = {"product": product, "product_version": "1.0"} if product else {}
    return WorkspaceClient(config=Config(host=host, token=token, **extra))


def test_databricks_traffic_is_sampled_end_to_end(
    platforms: Platforms, tmp_path: Path, monkeypatch
) -> None:
    import os

    from databricks.sdk.service.sql import QueryTag

    root = estate(tmp_path)
    dbx = platforms.databricks
    dbx.seed_table("reference.genes.scratch", {"note": "STRING"})  # in no dataset
    history = history_of(dbx)
    people = {
        "tok-pharma": ("pharma@example.com", ["bench-chemists", "clinical-unblinded"]),
        "tok-cro": ("cro@example.com", ["cro-external"]),
        "tok-chem": ("chem@example.com", ["bench-chemists"]),
        "tok-temp": ("temp@example.com", ["contractors"]),
    }
    dbx.tokens = {tok: user for tok, (user, _) in people.items()}
    dbx.tokens[os.environ["DATABRICKS_TOKEN"]] = "accord-sampler"  # the reading principal
    sampler_reads_the_system_tables(dbx, "accord-sampler")
    for tok, (user, groups) in people.items():
        history.users_of_tokens[tok] = user
        history.users[user] = groups
    host = os.environ["DATABRICKS_HOST"]
    calls = "omics.variants.calls"
    lake = "discovery_lake.assays.results"
    traffic = [
        ("tok-pharma", "lakehouse-agent", None,
         [f"SELECT subject_id FROM {lake} WHERE programme_code = 'CNS-204'"]),
        ("tok-cro", "lakehouse-agent", None,
         [f"SELECT programme_code FROM {calls} WHERE programme_code = 'ONC-101'"]),
        ("tok-chem", None, "notebook", [
            f"SELECT notes FROM {lake} WHERE programme_code = 'ONC-101'",
            *[f"SELECT subject_id FROM {calls} WHERE programme_code = 'IMM-310'"] * 3,
            "SELECT note FROM reference.genes.scratch",
        ]),
        ("tok-temp", "lakehouse-agent", None, [f"SELECT subject_id FROM {calls}"]),
        ("tok-chem", "lakehouse-agent", None,
         ["SELECT gene_symbol FROM reference.genes.annotations"]),
    ]  # fmt: skip
    for token, product, tool, queries in traffic:
        client = _databricks(host, token, product)
        tags = [QueryTag(key="tool", value=tool)] if tool else None
        for q in queries:
            r = client.statement_execution.execute_statement(
                statement=q, warehouse_id="wh-standin", query_tags=tags
            )
            assert r.status.state.value == "SUCCEEDED", r.status
    doc = check_sample(
        root,
        "databricks",
        tmp_path,
        {
            "persona": "bench_chemist",
            "surface": "lake_notebook",
            "dataset": "variant_calls",
            "column": "subject_id",
            "where": {"programme": "IMM-310"},
            "reads": 3,
        },
    )
    covered = {(f["persona"], f["surface"], f["dataset"]): f["covered_by"] for f in doc["facts"]}
    assert covered[("clinical_pharmacologist", "lakehouse_agent", "assay_results_lake")] == [
        "pharmacologist_sees_cns_subjects"
    ]
    assert covered[("cro_collaborator", "lakehouse_agent", "variant_calls")] == [
        "cro_sees_no_oncology_variants"
    ]
    assert covered[("bench_chemist", "lake_notebook", "assay_results_lake")] == [
        "bench_chemist_reads_redacted_oncology_notes"
    ]
    reasons = " | ".join(u["reason"] for u in doc["unmappable"])
    assert "no dataset's table" in reasons
    assert "temp@example.com (groups contractors): no principal of the model" in reasons
    assert "lakehouse_agent read gene_annotations, which the model does not say it reads" in reasons
    c = doc["probe_coverage"]
    assert (c["reads"], c["covered_reads"], c["unmappable_reads"]) == (9, 3, 3)


def test_a_history_the_reader_may_not_read_is_reported_not_passed(
    platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading role without IMPORTED PRIVILEGES on the SNOWFLAKE database: the stand-in
    refuses the ACCOUNT_USAGE views as Snowflake does."""
    root = estate(tmp_path)
    monkeypatch.setenv("SNOWFLAKE_ROLE", "SAMPLER")  # holds nothing
    code, text, err = sample(root, "snowflake")
    assert code == 0, err
    assert "snowflake: NOT READ: " in text and "not authorized" in text
    assert "coverage: 0 of 0 reads covered by a probe (n/a" in text and "NOT READ" in text
    doc = json.loads(sample(root, "snowflake", "--format", "json")[1])
    (seen,) = doc["coverage"]
    assert seen["complete"] is False
    (unseen,) = seen["unseen"]
    assert "ACCESS_HISTORY" in unseen["what"] and "not authorized" in unseen["why"]
    assert doc["probe_coverage"]["reads_share"] is None  # nothing read: no figure, not 100%


# --------------------------------------------------------------------------------------------
# the mapping rules, on hand-made rows


def _read(**kw: Any) -> Read:
    base: dict[str, Any] = {
        "platform": "snowflake",
        "query_id": "q1",
        "time": "2026-11-30 10:00:00.000",
        "user": "U",
        "table": RESULTS,
        "columns": ("SUBJECT_ID", "PROGRAMME_CODE"),
        "roles": ("BENCH_CHEMIST", "CLINICAL_UNBLINDED"),
        "clients": ("warehouse-agent",),
        "text": f"SELECT SUBJECT_ID FROM {RESULTS} WHERE PROGRAMME_CODE IN ('CNS-204')",
    }
    return Read(**{**base, **kw})


def test_the_mapping_rules(tmp_path: Path) -> None:
    mapper = Mapper(load_project(estate(tmp_path)).model)
    assert mapper.map(_read()) == [
        Fact("clinical_pharmacologist", "warehouse_agent", "assay_results", "SUBJECT_ID",
             ("programme", "CNS-204"))
    ]  # fmt: skip
    # a role in no principal beside known ones grants nothing the model governs
    (f,) = mapper.map(_read(roles=("BENCH_CHEMIST", "PUBLIC"), columns=("RESULT_VALUE",)))
    assert (f.persona, f.column) == ("bench_chemist", None)
    # two values filtered on: no single entitlement value
    (f,) = mapper.map(_read(text=f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE IN ('A', 'B')"))
    assert f.where is None
    for read, why in (
        (_read(table="X.Y.Z"), "no dataset's table"),
        (_read(clients=("other",)), "no surface's traffic matches"),
        (_read(roles=("CRO_EXTERNAL", "DATA_STEWARD")), "which are no persona's"),
        (_read(why="its SECONDARY_ROLE_STATS cannot be read"), "SECONDARY_ROLE_STATS"),
        (_read(platform="databricks", table="omics.variants.calls", groups=None,
               clients=("lakehouse-agent",)), "are not known"),
    ):  # fmt: skip
        got = mapper.map(read)
        assert isinstance(got, Unmappable) and why in got.reason, got


def test_secondary_role_stats_are_read_tolerantly() -> None:
    assert secondary_roles(None) == ()
    assert secondary_roles('{"roles": "A,B", "count": 2}') == ("A", "B")
    assert secondary_roles({"roles": ["A"]}) == ("A",)
    assert secondary_roles("not json") is None


def test_filtered_values_are_read_with_sqlglot() -> None:
    sql = "SELECT a FROM t WHERE 'X' = t.programme_code AND other = 'Y'"
    assert restricted_values(sql, "snowflake", "PROGRAMME_CODE", "DB.S.T") == {"X"}
    quoted = "SELECT 'programme_code = ''Z'''"
    assert restricted_values(quoted, "snowflake", "programme_code", "t") is None
    assert restricted_values("SELECT FROM WHERE (", "snowflake", "c", "t") is None


#: (a statement reading RESULTS, the value its filter provably restricts the read to)
RESTRICTIONS = [
    (f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204'", "CNS-204"),
    (
        f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE IN ('CNS-204') AND RESULT_VALUE > 3",
        "CNS-204",
    ),
    (
        f"SELECT * FROM {RESULTS} r WHERE r.PROGRAMME_CODE = 'CNS-204' AND (a = 1 OR b = 2)",
        "CNS-204",
    ),
    ("SELECT * FROM results WHERE programme_code = 'CNS-204'", "CNS-204"),
    (f"SELECT * FROM (SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204') x", "CNS-204"),
    # the filter does not restrict the read to the value
    (f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204' OR 1=1", None),
    (f"SELECT * FROM {RESULTS} WHERE NOT (PROGRAMME_CODE = 'CNS-204')", None),
    (f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE <> 'CNS-204'", None),
    (
        f"SELECT * FROM {RESULTS} WHERE SUBJECT_ID IN "
        "(SELECT SUBJECT_ID FROM OTHER.S.T WHERE PROGRAMME_CODE = 'CNS-204')",
        None,
    ),
    (
        f"SELECT * FROM {RESULTS} r JOIN OTHER.S.T o ON r.SUBJECT_ID = o.SUBJECT_ID "
        "WHERE o.PROGRAMME_CODE = 'CNS-204'",
        None,
    ),
    (
        f"SELECT * FROM {RESULTS} r JOIN OTHER.S.T o ON r.SUBJECT_ID = o.SUBJECT_ID "
        "WHERE PROGRAMME_CODE = 'CNS-204'",
        None,  # unqualified beside another table: which table's column is not known
    ),
    (
        f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204' "
        f"UNION ALL SELECT * FROM {RESULTS}",
        None,
    ),
    (f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE IN ('CNS-204', 'ONC-101')", None),
    ("SELECT * FROM ASSAY_VIEW WHERE PROGRAMME_CODE = 'CNS-204'", None),  # through a view
    (f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = 'CNS-204'; SELECT * FROM {RESULTS}", None),
]


@pytest.mark.parametrize(("text", "value"), RESTRICTIONS)
def test_a_filter_counts_only_when_it_restricts_the_read(
    tmp_path: Path, text: str, value: str | None
) -> None:
    """The entitlement value of a read is the one its filter provably restricts the read of
    the dataset's table to: a top-level conjunct ``column = 'V'`` (or ``IN ('V')``) on that
    table, in every place the statement reads it. ``OR 1=1``, ``NOT``, a value compared only
    in a subquery over another table, or another table's column restrict nothing: such a read
    is covered by no probe about ``V``."""
    model = load_project(estate(tmp_path)).model
    (fact,) = Mapper(model).map(_read(columns=("RESULT_VALUE",), text=text))
    assert fact.where == (("programme", value) if value else None)
    covering = [model.probes[n] for n in model.probes if covers(model, model.probes[n], fact)]
    if value is None:  # no probe about one programme covers it
        assert not any(p.where for p in covering), covering


def test_rows_whose_objects_cannot_be_read_are_listed_not_dropped(tmp_path: Path) -> None:
    """A history row whose accessed objects cannot be read is a read of an unknown table:
    unmappable (so covered by no probe), listed with why, and the platform's coverage is
    incomplete; never dropped while coverage says 100% and complete."""
    from accord.compiler.probe_sample.history import Source, snowflake_reads
    from accord.compiler.probe_sample.report import build

    good = {
        "query_id": "q1", "query_start_time": "2026-11-30 10:00:00", "user_name": "PHARMA",
        "base_objects_accessed": json.dumps(
            [{"objectDomain": "Table", "objectName": RESULTS, "columns": []}]
        ),
        "role_name": "BENCH_CHEMIST", "client_application_id": "warehouse-agent",
    }  # fmt: skip
    rows = [
        good,
        {**good, "query_id": "q2", "base_objects_accessed": "[{not json"},
        {**good, "query_id": "q3", "base_objects_accessed": '{"objectName": "X"}'},
        {**good, "query_id": "q4", "base_objects_accessed": "[7]"},
    ]
    source = Source("snowflake", ["ACCESS_HISTORY"], "")
    reads = snowflake_reads(lambda sql: rows, 7, source)
    source.read = True
    model = load_project(estate(tmp_path)).model
    sampled = build(model, reads, [source], ["snowflake"], 7, 5)
    coverage = sampled.coverage()
    assert coverage["reads"] == 4 and coverage["unmappable_reads"] == 3, coverage
    assert coverage["reads_share"] is not None and coverage["reads_share"] < 1
    doc = sampled.to_doc()
    (listed,) = doc["unmappable"]
    assert listed["reads"] == 3 and "cannot be read" in listed["reason"]
    (seen,) = doc["coverage"]
    assert seen["complete"] is False
    assert any("cannot be read" in u["why"] for u in seen["unseen"])
    assert "INCOMPLETE" in sampled.text()


# --------------------------------------------------------------------------------------------
# the traffic key


def test_traffic_is_validated_and_in_the_schema(tmp_path: Path) -> None:
    root = estate(tmp_path)
    doc = yaml.safe_load((root / "surfaces.yaml").read_text())
    doc["surfaces"]["assay_dashboard"]["traffic"] = {"client": "WAREHOUSE-AGENT"}
    (root / "surfaces.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    code, _, err = run_cli(["validate", str(root)])
    assert code == 2 and "recognised by the same traffic as" in err and "surfaces.yaml:" in err
    doc["surfaces"]["assay_dashboard"]["traffic"] = {}
    (root / "surfaces.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    code, _, err = run_cli(["validate", str(root)])
    assert code == 2 and "at least one of query_tag, client, principal" in err
    schema = json.loads(run_cli(["schema"])[1])
    assert "traffic" in json.dumps(schema)


def test_sample_usage_errors(tmp_path: Path) -> None:
    root = estate(tmp_path)
    for args, said in (
        (["probe", "sample", str(root)], "needs --since"),
        (["probe", "sample", str(root), "--since", "3", "--format", "junit"], "text, json or yaml"),
        (["probe", "sample", str(root), "--since", "3", "--platform", "a2a"], "snowflake, databricks"),
        (["probe", str(root), "--format", "yaml"], "is for probe sample"),
    ):  # fmt: skip
        code, _, err = run_cli(args)
        assert code == 2 and said in err, err


def _sampled(root: Path, reads: list[Read], top: int = 20) -> Any:
    from accord.compiler.probe_sample.history import Source
    from accord.compiler.probe_sample.report import build

    model = load_project(root).model
    source = Source("snowflake", ["view"], "lag", read=True, queries=len(reads))
    return build(model, reads, [source], ["snowflake"], 7, top)


def test_top_limits_the_uncovered_and_the_proposals(tmp_path: Path) -> None:
    from accord.compiler.probe_sample.run import write_proposals

    root = estate(tmp_path)
    text = f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = '%s'"
    reads = [
        _read(query_id=f"q{i}", roles=("BENCH_CHEMIST",), columns=("SUBJECT_ID",),
              text=text % value)
        for i, value in enumerate(["IMM-310"] * 3 + ["CNS-204"] * 2 + ["ONC-101"])
    ]  # fmt: skip
    s = _sampled(root, reads, top=2)
    assert [f.where[1] for f in s.uncovered()] == ["IMM-310", "CNS-204"]
    assert [name for name, _, _ in s.proposals] == [
        "sampled_bench_chemist_assay_results_subject_id_imm_310",
        "sampled_bench_chemist_assay_results_subject_id_cns_204",
    ]
    out = tmp_path / "p.yaml"
    write_proposals(str(root), s, str(out))
    assert yaml.safe_load(out.read_text())["probes"].keys() == {n for n, _, _ in s.proposals}
    # the same reads in another order: the same bytes
    again = _sampled(root, list(reversed(reads)), top=2)
    assert again.render("text") == s.render("text") and again.render("json") == s.render("json")


def test_nothing_uncovered_writes_an_empty_probes_section(tmp_path: Path) -> None:
    from accord.compiler.probe_sample.run import write_proposals

    root = estate(tmp_path)
    s = _sampled(root, [_read()])  # the pharmacologist's CNS-204 subjects: covered
    assert not s.uncovered() and s.coverage()["reads_share"] == 1.0
    out = tmp_path / "p.yaml"
    write_proposals(str(root), s, str(out))
    assert yaml.safe_load(out.read_text()) == {"probes": {}}


def test_ambiguous_and_service_surfaces_are_unmappable(tmp_path: Path) -> None:
    root = estate(tmp_path)
    doc = yaml.safe_load((root / "surfaces.yaml").read_text())
    doc["surfaces"]["assay_dashboard"]["traffic"] = {"client": "warehouse-agent", "principal": "U"}
    doc["surfaces"]["variant_annotation"]["traffic"] = {"principal": "svc-annotation"}
    (root / "surfaces.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    mapper = Mapper(load_project(root).model)
    got = mapper.map(_read())
    assert isinstance(got, Unmappable) and "ambiguous" in got.reason
    got = mapper.map(
        _read(platform="databricks", table="reference.genes.annotations", user="svc-annotation",
              groups=(), clients=())
    )  # fmt: skip
    assert isinstance(got, Unmappable) and "service identity" in got.reason, got


def test_secondary_roles_all_are_read_from_the_grants() -> None:
    from accord.compiler.connect.executor import ExecutionError
    from accord.compiler.probe_sample.history import Source, snowflake_reads

    row = {
        "query_id": "q", "query_start_time": "2026-11-30 10:00:00", "user_name": "PHARMA",
        "base_objects_accessed": json.dumps(
            [{"objectDomain": "Table", "objectName": RESULTS, "columns": []}]
        ),
        "role_name": "BENCH_CHEMIST", "secondary_role_stats": '{"roles": "ALL", "count": 2}',
    }  # fmt: skip

    def query(sql: str) -> list[dict[str, Any]]:
        if "GRANTS_TO_USERS" in sql:
            return [
                {"grantee_name": "PHARMA", "role": r}
                for r in ("BENCH_CHEMIST", "CLINICAL_UNBLINDED")
            ]
        return [row]

    (read,) = snowflake_reads(query, 7, Source("snowflake", [], ""))
    assert read.roles == ("BENCH_CHEMIST", "CLINICAL_UNBLINDED") and read.why is None

    def refused(sql: str) -> list[dict[str, Any]]:
        if "GRANTS_TO_USERS" in sql:
            raise ExecutionError("002003 (42S02): not authorized")
        return [row]

    (read,) = snowflake_reads(refused, 7, Source("snowflake", [], ""))
    assert read.why is not None and "GRANTS_TO_USERS" in read.why and "not authorized" in read.why


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["probe", "sample", str(POLICIES), "--since", "7", "--config", "x.yaml"], "--config"),
        (["probe", "sample", str(POLICIES), "--since", "7", "--compiled", "out"], "--compiled"),
        (["probe", str(POLICIES), "--profile", "p"], "--profile"),
        (["probe", str(POLICIES), "--since", "7"], "--since"),
        (["probe", "--live", str(POLICIES), "--top", "3"], "--top"),
        (["probe", "init", "analyst", "results", str(POLICIES), "--format", "json"], "--format"),
    ],
)
def test_an_option_the_form_does_not_read_is_refused(argv: list[str], refused: str) -> None:
    """An option given to a form of `accord probe` that does not read it is a usage error,
    never silently ignored (a `--config` that sample ignored would read the wrong file)."""
    code, out, err = run_cli(argv)
    assert code == 2 and out == ""
    assert f"does not take {refused}" in err


@pytest.mark.standin
def test_sampling_an_unreachable_workspace_ends_at_its_connect_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A workspace that never answers ends the sample within ``--connect-timeout`` with one
    line naming the option, exit 2 (every network call has a timeout; the message must not
    name an option the command does not take)."""
    from accord.sandbox.standins.http import silent_host

    with silent_host() as port:
        monkeypatch.setenv("DATABRICKS_HOST", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("DATABRICKS_TOKEN", "t")
        monkeypatch.setenv("DATABRICKS_WAREHOUSE_ID", "w")
        code, out, err = run_cli(
            ["probe", "sample", str(POLICIES), "--platform", "databricks", "--since", "7",
             "--connect-timeout", "2"]
        )  # fmt: skip
    assert code == 2 and out == ""
    assert "within the connect timeout of 2s (--connect-timeout)" in err
