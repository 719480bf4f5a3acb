"""Credentials go where the local configuration says, never where a pull request says (issue
22, item 8). ``accord probe --live`` sends a persona's bearer token to the surface's
``a2a.url``; a pull request controls the model and anything it commits, so:

* a probe config git tracks (a committed ``.accord/probe.yaml`` mapping persona tokens to
  CI's secrets) is refused, exit 2, before anything is sent;
* a token goes only to the origins its local config entry lists: a model whose URL points
  elsewhere gets no request carrying it;
* ``accord diff`` reports a changed ``a2a.url`` and ``--fail-on widening`` fails on it.

Each attack is a committed repository, cloned afresh and run as CI runs it (``CI=true``, a
real process); the agents are stand-ins on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from accord.compiler.core.errors import InputError
from accord.compiler.probe_live.run import load_config, origin_of
from tests.a2a_standin import a2a_standin, base_url, url
from tests.cli import run_process
from tests.conftest import ROOT

SECRET = "ci-deploy-secret-4f1d"
PERSONAS = yaml.safe_load((ROOT / "policies" / "principals.yaml").read_text())["personas"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _point(repo: Path, agent_url: str) -> None:
    path = repo / "policies" / "surfaces.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["surfaces"]["warehouse_agent"]["a2a"] = {"url": agent_url, "timeout_seconds": 5}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _config(origins: list[str]) -> str:
    tokens = {p: {"token": "env:CI_DEPLOY_TOKEN", "origins": origins} for p in PERSONAS}
    return yaml.safe_dump({"a2a_tokens": tokens})


def _repository(root: Path, agent_url: str) -> Path:
    repo = root / "repo"
    shutil.copytree(ROOT / "policies", repo / "policies")
    _point(repo, agent_url)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A", "-f")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _clone(repo: Path, root: Path) -> Path:
    clone = root / "clone"
    _git(root, "clone", "-q", str(repo), str(clone))
    return clone


def _probe(clone: Path, **env: str):  # type: ignore[no-untyped-def]
    argv = ["probe", "--live", "policies", "--platform", "a2a", "--format", "json"]
    return run_process(
        argv, cwd=clone, env={"CI": "true", "CI_DEPLOY_TOKEN": SECRET, **env}, timeout=120
    )


def _sent(agent) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["headers"].get("Authorization", "") for r in agent.requests]


@pytest.mark.standin
def test_a_committed_probe_config_is_refused(tmp_path: Path) -> None:
    with a2a_standin() as attacker:
        repo = _repository(tmp_path, url(attacker, "/task/TASK_STATE_COMPLETED"))
        (repo / ".accord").mkdir()
        (repo / ".accord" / "probe.yaml").write_text(_config([base_url(attacker)]))
        # on the attacker's own (untracked) checkout the config works: the token is sent
        run = _probe(repo)
        assert f"Bearer {SECRET}" in _sent(attacker), run.stderr
        attacker.requests.clear()
        _git(repo, "add", "-A", "-f")
        _git(repo, "commit", "-q", "-m", "a pull request")
        clone = _clone(repo, tmp_path)
        run = _probe(clone)
        assert run.returncode == 2, run.stdout + run.stderr
        assert "tracked by git" in run.stderr and "Traceback" not in run.stderr
        assert attacker.requests == []
        # named explicitly, a tracked file is refused all the same
        explicit = _probe(clone, ACCORD_PROBE_CONFIG=str(clone / ".accord" / "probe.yaml"))
        assert explicit.returncode == 2 and "tracked by git" in explicit.stderr
        assert attacker.requests == []


@pytest.mark.standin
def test_a_token_goes_only_to_the_origins_the_local_config_allows(tmp_path: Path) -> None:
    with a2a_standin() as agent, a2a_standin() as attacker:
        local = tmp_path / "home" / "probe.yaml"  # outside the checkout: CI's own file
        local.parent.mkdir()
        local.write_text(_config([base_url(agent)]))
        repo = _repository(tmp_path, url(agent, "/task/TASK_STATE_COMPLETED"))
        # control: the model names the allowed agent, which receives the token
        run = _probe(_clone(repo, tmp_path), ACCORD_PROBE_CONFIG=str(local))
        assert f"Bearer {SECRET}" in _sent(agent), run.stderr
        # the pull request points the agent at its own host
        _point(repo, url(attacker, "/task/TASK_STATE_COMPLETED"))
        _git(repo, "commit", "-q", "-am", "a pull request")
        shutil.rmtree(tmp_path / "clone")
        run = _probe(_clone(repo, tmp_path), ACCORD_PROBE_CONFIG=str(local))
        assert run.returncode == 1, run.stdout + run.stderr
        assert attacker.requests == []
        assert SECRET not in run.stdout + run.stderr
        doc = json.loads(run.stdout)
        asked = [o for o in doc["outcomes"] if o["surface"] == "warehouse_agent"]
        assert asked and all("not sent there" in o["detail"] for o in asked), asked


def test_a_moved_endpoint_is_reported_by_diff(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "https://agents.example.com/warehouse")
    _point(repo, "https://collector.attacker.example/warehouse")
    _git(repo, "commit", "-q", "-am", "a pull request")
    clone = _clone(repo, tmp_path)
    argv = ["diff", "policies", "--base", "HEAD~1", "--fail-on", "widening", "--format", "json"]
    run = run_process(argv, cwd=clone, env={"CI": "true"}, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    doc = json.loads(run.stdout)
    (e,) = doc["endpoints"]
    assert (e["surface"], e["status"]) == ("warehouse_agent", "changed")
    assert e["after"] == "https://collector.attacker.example/warehouse"
    assert e["file"].endswith("surfaces.yaml") and e["line"] > 0
    assert doc["summary"]["endpoints"] == 1 and "endpoint" in doc["summary"]["verdict"]
    text = run_process(argv[:-2], cwd=clone, env={"CI": "true"}, timeout=120)
    assert text.returncode == 1 and "collector.attacker.example" in text.stdout
    assert "no change in exposure" not in text.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("env:A2A_TOKEN", "name the origins"),
        ({"token": "env:A2A_TOKEN"}, "exactly the keys"),
        ({"token": "env:A2A_TOKEN", "origins": []}, "non-empty list"),
        ({"token": "env:A2A_TOKEN", "origins": ["https://a.example/path"]}, "not an origin"),
        ({"token": "env:A2A_TOKEN", "origins": ["ftp://a.example"]}, "not an origin"),
        ({"token": "A2A_TOKEN", "origins": ["https://a.example"]}, "env:NAME"),
    ],
)
def test_a_token_entry_without_its_origins_is_an_error(
    tmp_path: Path, entry: object, message: str
) -> None:
    path = tmp_path / "probe.yaml"
    path.write_text(yaml.safe_dump({"a2a_tokens": {"cro_collaborator": entry}}))
    with pytest.raises(InputError) as err:
        load_config(str(path))
    assert message in str(err.value.diagnostics[0].message)


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://Agents.Example.com/a2a", "https://agents.example.com:443"),
        ("https://agents.example.com:443", "https://agents.example.com:443"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080"),
        (
            "https://agents.example.com.attacker.example/",
            "https://agents.example.com.attacker.example:443",
        ),
        ("https://user:pw@agents.example.com/", None),
        ("file:///etc/passwd", None),
    ],
)
def test_origins_compare_scheme_host_and_port(given: str, origin: str | None) -> None:
    assert origin_of(given) == origin
