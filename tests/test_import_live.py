"""``accord import --platform P`` on the stand-ins (issue 43's done-when), from the reference
estate deployed once for this file (``shared_platforms``): it imports with no unmanaged entry,
and ``accord plan DIR --base live:P`` right after plans no change; what a console adds that the
model cannot say (a literal salt, a weak hash, ``is_member()``, a policy outside the governance
schema) is kept, left alone by plan and drift, and linted; a scope narrows the read; a
least-privilege reader (the README's grants, as tests/test_snowflake_reader.py and
tests/test_databricks_truth.py set them up) imports the same, and one that cannot see everything
is said to, never passed. The as-found estate is tests/test_import_as_found.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.model.validate import load_project
from accord.targets import lower_all
from accord.targets.objects import Tag
from tests.cli import run_cli
from tests.live_helpers import ROOT, Platforms, SharedPlatforms, seed
from tests.test_databricks_truth import GOVERNED
from tests.test_databricks_truth import least_privilege as dbx_least_privilege
from tests.test_several_dimensions import bank
from tests.test_snowflake_reader import least_privilege as sf_least_privilege
from tests.test_snowflake_reader import tag_estate

POLICIES = ROOT / "policies"


def deploy(estate: Path, platform: str, plans: Path) -> None:
    """Plan from the empty live estate and apply, as the deploying role."""
    code, _, err = run_cli(["plan", str(estate), "--base", f"live:{platform}", "--out", str(plans)])
    assert code == 0, err
    code, out, err = run_cli(
        [
            "migrate",
            "apply",
            "--platform",
            platform,
            "--plans",
            str(plans),
            "--policies",
            str(estate),
        ]
    )
    assert code == 0, out + err


@pytest.fixture(scope="module")
def deployed_once(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp):
        for platform in ("snowflake", "databricks"):
            deploy(POLICIES, platform, tmp / platform)
    return shared_platforms


@pytest.fixture
def deployed(deployed_once: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> Platforms:
    return deployed_once.reset(monkeypatch)


def import_live(platform: str, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["import", "--platform", platform, "--out", str(out), *extra])


def plans_no_change(directory: Path, platform: str, tmp: Path) -> str:
    """``accord plan DIR --base live:P``: exit 0 and nothing to plan; its notes."""
    plans = tmp / f"plans-{platform}"
    code, out, err = run_cli(
        ["plan", str(directory), "--base", f"live:{platform}", "--out", str(plans)]
    )
    assert code == 0, out + err
    assert "do not differ: nothing written" in out, out
    assert not plans.exists()
    return out


def model(directory: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in sorted(directory.glob("*.yaml")):
        out.update(yaml.safe_load(p.read_text()))
    return out


def lint(directory: Path) -> set[tuple[str, str]]:
    code, out, err = run_cli(["lint", str(directory), "--format", "json"])
    assert code in (0, 1), err
    return {(f["rule"], f["object"]) for f in json.loads(out)["findings"]}


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_the_reference_estate_imports_whole_and_plans_no_change(
    deployed: Platforms, tmp_path: Path, platform: str
) -> None:
    """Everything accord compiles it recognises: no unmanaged entry, exit 0, the salt a
    reference to fill; the plan from the live estate right after the import plans no change,
    and the imported model lints clean, as the reference does."""
    out = tmp_path / "imported"
    code, stdout, err = import_live(platform, out)
    assert code == 0, stdout + err
    assert not (out / "unmanaged.yaml").exists()
    found = model(out)
    assert found["masks"]["subject_pseudonym"]["salt"] == {
        platform: f"env:SUBJECT_PSEUDONYM_SALT_{platform.upper()}"
    }
    assert f"coverage {platform}" in stdout and "complete" in stdout
    if platform == "snowflake":  # its aggregation, join and projection policies (issue 40)
        assert found["datasets"]["trial_outcomes"] == {
            "platform": "snowflake",
            "table": "CLINICAL.OUTCOMES.TRIAL_OUTCOMES",
            "aggregation": {"min_group_size": 10, "unrestricted_for": ["data_steward"]},
            "join": {"allowed_join_keys": ["PROGRAMME_CODE"], "unrestricted_for": ["data_steward"]},
            "columns": {
                "SUBJECT_ID": {
                    "type": "VARCHAR",
                    "projection": {"allowed_for": ["clinical_unblinded"]},
                }
            },
        }
    assert lint(out) == set()
    plans_no_change(out, platform, tmp_path)


@pytest.mark.slow
def test_console_objects_on_snowflake_are_kept_left_alone_and_linted(
    deployed: Platforms, tmp_path: Path
) -> None:
    """A masking policy salted with a literal (outside the governance schema) on a governed
    table's other column, and an MD5 mask in the governance schema: the model cannot say them,
    so they are kept (exit 1), the literal withheld; plan right after plans no change and says
    it leaves them alone, drift passes and lists them, and lint reports ACC205, ACC204 and
    ACC201 where their SQL is kept."""
    sf = deployed.snowflake
    sf.seed_table("OPS.ADHOC.UNUSED", {"X": "VARCHAR"})
    sf.execute(
        "CREATE MASKING POLICY OPS.ADHOC.CONSOLE_MASK AS (VAL VARCHAR) RETURNS VARCHAR -> CASE "
        "WHEN IS_ROLE_IN_SESSION('AUDITOR') THEN VAL ELSE SHA2(VAL || 'pepper-4f1e', 256) END"
    )
    sf.execute(
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN RESULT_VALUE SET MASKING POLICY "
        "OPS.ADHOC.CONSOLE_MASK"
    )
    sf.execute(
        "CREATE MASKING POLICY GOVERNANCE.POLICIES.WEAK_MASK AS (VAL VARCHAR) RETURNS VARCHAR -> "
        "MD5(VAL)"
    )
    out = tmp_path / "imported"
    code, stdout, err = import_live("snowflake", out)
    assert code == 1, stdout + err
    kept = {e["name"]: e for e in model(out)["unmanaged"].values()}
    assert set(kept) == {
        "OPS.ADHOC.CONSOLE_MASK",
        "DISCOVERY.ASSAYS.RESULTS.RESULT_VALUE",
        "GOVERNANCE.POLICIES.WEAK_MASK",
    }
    assert "outside the governance schema" in kept["OPS.ADHOC.CONSOLE_MASK"]["why"]
    assert "MD5" in kept["GOVERNANCE.POLICIES.WEAK_MASK"]["why"]
    for p in out.rglob("*"):
        assert "pepper-4f1e" not in p.read_text()
    assert "pepper-4f1e" not in stdout + err
    said = plans_no_change(out, "snowflake", tmp_path)
    assert "GOVERNANCE.POLICIES.WEAK_MASK (unmanaged entry" in said and "left alone" in said
    code, drift, err = run_cli(["drift", str(out), "--platform", "snowflake", "--format", "json"])
    assert code == 0, drift + err
    (coverage,) = json.loads(drift)["coverage"]
    assert len(coverage["left_alone"]) == 2  # the policy outside the schema is never read
    assert {rule for rule, _ in lint(out)} == {"ACC201", "ACC204", "ACC205"}


@pytest.mark.slow
def test_console_objects_on_databricks_are_kept_left_alone_and_linted(
    deployed: Platforms, tmp_path: Path
) -> None:
    """An is_member() filter function outside the governance schema and an md5 mask in it, on
    a table the model does not govern: kept (exit 1); plan right after plans no change; lint
    reports ACC102, ACC204 and ACC201."""
    dbx = deployed.databricks
    dbx.seed_table("ops.adhoc.events", {"programme_code": "STRING", "email": "STRING"})
    dbx.execute(
        "CREATE FUNCTION ops.adhoc.ws_filter(programme_code STRING) RETURNS BOOLEAN "
        "RETURN is_member('admins')"
    )
    dbx.execute(
        "ALTER TABLE ops.adhoc.events SET ROW FILTER ops.adhoc.ws_filter ON (programme_code)"
    )
    dbx.execute(
        "CREATE FUNCTION governance.policies.weak_mask(val STRING) RETURNS STRING RETURN md5(val)"
    )
    dbx.execute(
        "ALTER TABLE ops.adhoc.events ALTER COLUMN email SET MASK governance.policies.weak_mask"
    )
    out = tmp_path / "imported"
    code, stdout, err = import_live("databricks", out)
    assert code == 1, stdout + err
    kept = {e["name"] for e in model(out)["unmanaged"].values()}
    assert kept == {
        "ops.adhoc.ws_filter",
        "ops.adhoc.events",
        "governance.policies.weak_mask",
        "ops.adhoc.events.email",
    }
    plans_no_change(out, "databricks", tmp_path)
    assert {rule for rule, _ in lint(out)} == {"ACC102", "ACC201", "ACC204"}


@pytest.mark.slow
def test_a_scope_reads_its_tables_only(deployed: Platforms, tmp_path: Path) -> None:
    """``--scope omics.variants``: the dataset of that schema only, and still no change to plan.
    The governance schema's mask that only tables outside the scope use is read all the same
    (the plan reads the whole governance schema): it is kept, so that the plan leaves it alone
    rather than drop a mask in force elsewhere (exit 1)."""
    out = tmp_path / "imported"
    code, stdout, err = import_live("databricks", out, "--scope", "omics.variants")
    assert code == 1, stdout + err
    found = model(out)
    assert [d["table"] for d in found["datasets"].values()] == ["omics.variants.calls"]
    (kept,) = found["unmanaged"].values()
    assert kept["name"] == "governance.policies.free_text_mask"
    assert kept["why"] == "a mask no column the model governs is masked by"
    said = plans_no_change(out, "databricks", tmp_path)
    assert "mask function governance.policies.free_text_mask" in said


@pytest.mark.slow
def test_a_least_privilege_snowflake_reader_imports_the_same(
    deployed: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's reader grants (the global APPLY privileges through a role, USAGE, SELECT
    on the governed and mapping tables; nothing on the salt) import what the deploying role
    does; without the global APPLY MASKING POLICY the import says what it could not see and
    exits 1, never a clean import of half an estate."""
    sf_least_privilege(deployed.snowflake, POLICIES, monkeypatch)
    full = tmp_path / "full"
    code, stdout, err = import_live("snowflake", full)
    assert code == 0, stdout + err
    assert "coverage snowflake as ACCORD_READER" in stdout and "; complete" in stdout
    plans_no_change(full, "snowflake", tmp_path)
    deployed.snowflake.role_grants["GOVERNANCE_READ"].discard(
        ("APPLY MASKING POLICY", "ACCOUNT", "")
    )
    part = tmp_path / "part"
    code, stdout, err = import_live("snowflake", part)
    assert code == 1, stdout + err
    assert "global APPLY MASKING POLICY" in stdout
    assert "could not see everything" in stdout
    assert "could not see everything" in (part / "IMPORT.md").read_text()


@pytest.mark.slow
def test_a_least_privilege_databricks_reader_imports_its_scope(
    deployed: Platforms, tmp_path: Path
) -> None:
    """A principal that is no metastore admin, with the README's grants on the governed
    schemas: importing them by scope is complete and plans no change; importing every catalog
    says catalogs.list shows it the catalogs it may use only (exit 1)."""
    dbx_least_privilege(deployed.databricks, GOVERNED)
    scoped = tmp_path / "scoped"
    scopes = [arg for s in GOVERNED for arg in ("--scope", s)]
    code, stdout, err = import_live("databricks", scoped, *scopes)
    assert code == 0, stdout + err
    assert "; complete" in stdout
    plans_no_change(scoped, "databricks", tmp_path)
    every = tmp_path / "every"
    code, stdout, err = import_live("databricks", every)
    assert code == 1, stdout + err
    assert "the catalogs the reading principal may not use" in stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("style", "platform"),
    [("tag", "snowflake"), ("table", "snowflake"), ("table", "databricks"), ("abac", "databricks")],
)
def test_every_style_and_several_dimensions_come_back(
    platforms: Platforms, tmp_path: Path, style: str, platform: str
) -> None:
    """Snowflake's tag-based masks (the reference estate with ``style: tag``), and the bank
    estate of tests/test_several_dimensions.py (a filter over two dimensions, a grant until a
    date) in both Databricks styles: each imports whole and plans no change."""
    if style == "tag":
        estate = tag_estate(tmp_path)
    else:
        estate = tmp_path / "bank"
        estate.mkdir()
        (estate / "bank.yaml").write_text(bank(style))
        seed(platforms.snowflake, estate)
        seed(platforms.databricks, estate)
        if style == "abac":  # governed tags are account-level: an admin creates them
            for tag in lower_all(load_project(estate))["databricks"].of(Tag):
                platforms.databricks.govern_tag(tag.name, tag.allowed_values, tag.comment)
    deploy(estate, platform, tmp_path / "plans")
    out = tmp_path / "imported"
    code, stdout, err = import_live(platform, out)
    assert code == 0, stdout + err
    assert not (out / "unmanaged.yaml").exists()
    plans_no_change(out, platform, tmp_path)
