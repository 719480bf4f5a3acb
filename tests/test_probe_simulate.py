"""``accord probe --live --simulate`` (issue 41, item 7): Snowflake personas simulated with
``EXECUTE USING POLICY_CONTEXT(...)`` by one simulator role, never logged in as, through the real
snowflake-connector-python against the Snowflake stand-in.

docs.snowflake.com/en/sql-reference/functions/policy_context: the simulating role needs
OWNERSHIP on the table and APPLY on its policies (or the global APPLY); ``CURRENT_ROLE`` and
``CURRENT_AVAILABLE_ROLES`` (the roles "in square brackets") are among the context it sets.
Whether ``IS_ROLE_IN_SESSION`` honours the simulated role list is not documented: a persona's
simulation proves itself with a control before its answers count. On main there was no
``--simulate`` (a usage error).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.live_helpers import Platforms, SharedPlatforms
from tests.test_probe_live_snowflake import POLICIES, RESULTS, ROWS, deploy_snowflake, outcomes

SIMULATOR = "ACCORD_SIMULATOR"
GOVERNED = (RESULTS,)


@pytest.fixture(scope="module")
def deployed_once(
    shared_platforms: SharedPlatforms, tmp_path_factory: pytest.TempPathFactory
) -> SharedPlatforms:
    """policies/ deployed once, the rows seeded; the simulator role owns the governed table and
    holds the global APPLY privileges (what POLICY_CONTEXT needs)."""
    tmp = tmp_path_factory.mktemp("deployed")
    with shared_platforms.deploying(tmp) as platforms:
        deploy_snowflake(tmp / "migrations")
        sf = platforms.snowflake
        sf.seed_rows(RESULTS, ROWS)
        for table in GOVERNED:
            sf.set_owner("TABLE", table, SIMULATOR)
        for privilege in ("APPLY MASKING POLICY", "APPLY ROW ACCESS POLICY"):
            sf.grant_to_role(SIMULATOR, privilege, "ACCOUNT")
    return shared_platforms


@pytest.fixture
def deployed(deployed_once: SharedPlatforms, monkeypatch: pytest.MonkeyPatch) -> Platforms:
    return deployed_once.reset(monkeypatch)


def simulate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: bool = True
) -> tuple[int, str, str]:
    """probe --live --simulate with the simulator's own connections.toml entry (logged in as
    the simulator role) named in the probe config."""
    home = tmp_path / "sfhome"
    home.mkdir(exist_ok=True)
    params = {
        "account": "standin",
        "user": "accord_simulator",
        "password": "local-test",
        "host": "127.0.0.1",
        "port": int(os.environ["SNOWFLAKE_PORT"]),
        "protocol": "http",
        "role": SIMULATOR,
    }
    path = home / "connections.toml"
    path.write_text(
        "[simulator]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in params.items())
    )
    os.chmod(path, 0o600)
    monkeypatch.setenv("SNOWFLAKE_HOME", str(home))
    config = tmp_path / "probe.yaml"
    section = "snowflake:\n  simulator_connection: simulator\n" if entry else ""
    config.write_text(section + "timeout_seconds: 10\n")
    code, out, err = run_cli(
        ["probe", "--live", "--simulate", POLICIES, "--platform", "snowflake", "--format",
         "json", "--config", str(config)]
    )  # fmt: skip
    return code, out, err


def test_the_reference_probes_pass_simulated_and_no_persona_session_is_opened(
    deployed: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every reference probe answers as it does with the persona's own session, each query run
    in the persona's POLICY_CONTEXT after its proof; no USE ROLE is sent (the probe user holds
    no persona's role here), and the output says what the context cannot simulate."""
    code, out, _ = simulate(tmp_path, monkeypatch)
    doc = json.loads(out)
    assert code == 0, json.dumps(doc["outcomes"], indent=1)
    got = outcomes(doc)
    assert got["pharmacologist_sees_cns_subjects"]["actual"] == "clear"
    assert got["cro_cannot_unmask_cns_subjects"]["actual"] == "masked"
    executed = deployed.snowflake.executed
    assert not any(s.startswith("USE ROLE") for s in executed)
    assert any(
        "POLICY_CONTEXT(CURRENT_ROLE => 'BENCH_CHEMIST', CURRENT_AVAILABLE_ROLES => " in s
        and "CLINICAL_UNBLINDED" in s
        for s in executed
    )
    assert any("IS_ROLE_IN_SESSION" in s and "EXECUTE USING" in s for s in executed)  # the proof
    assert any("privileges on the tables are not simulated" in n for n in doc["notes"])


def test_a_simulation_that_does_not_honour_the_role_list_is_a_fault_never_an_answer(
    deployed: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where IS_ROLE_IN_SESSION ignores the simulated roles (the policies would see the
    simulator's own), the proof fails: every simulated probe is a fault, none reads denied or
    masked."""
    deployed.snowflake.simulation_honours_roles = False
    code, out, _ = simulate(tmp_path, monkeypatch)
    doc = json.loads(out)
    assert code == 1
    for o in doc["outcomes"]:
        assert o["fault"] == "session" and o["actual"] is None, o
        assert "the simulation is not proven" in o["detail"]


def test_a_simulator_without_ownership_is_a_fault_never_denied(
    deployed: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POLICY_CONTEXT needs OWNERSHIP on the table: without it the platform refuses with an
    insufficient-privileges error, which is the simulator's, not the persona's: a fault."""
    deployed.snowflake.set_owner("TABLE", RESULTS, "SOMEONE_ELSE")
    code, out, _ = simulate(tmp_path, monkeypatch)
    doc = json.loads(out)
    assert code == 1
    for o in doc["outcomes"]:
        assert o["actual"] != "denied" and o["fault"] is not None, o
        assert "the simulation did not run" in o["detail"]


def test_the_simulator_connects_only_through_its_own_entry(
    deployed: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without snowflake.simulator_connection the run refuses (exit 2): it never falls back to
    the drift reader's connection (SNOWFLAKE_* here) or the connector's default."""
    code, _, err = simulate(tmp_path, monkeypatch, entry=False)
    assert code == 2
    assert "snowflake.simulator_connection" in err and "never the drift reader's" in err
