"""Exposure by identity (issue 38): the platforms check identities, not the personas we declared.

Each case of the issue, tried as a new user would on a copy of policies/ in a git repository
(``accord diff --base HEAD``): a new principal no persona holds, an everyone identity, an alias
of another principal's identity, a mask that shows every value, a dataset key renamed with its
table, and a widening blamed where the grant is. Then the property that holds it together:
``accord diff`` reports a widening exactly when some platform identity can see more in the
compiled SQL, checked by executing both versions on DuckDB for every identity.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.exposure import exposure_diff
from accord.compiler.model.identities import Identity, subject
from accord.compiler.model.validate import load_project
from accord.compiler.verify.engine import TestSalts, Verifier
from accord.compiler.verify.sources import load_sql, render_sql
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import DIFF_BASE, edited, write_files

FUZZ = bool(os.environ.get("ACCORD_FUZZ"))


def repo(tmp_path: Path) -> Path:
    """A git repository holding a copy of policies/, committed: the base of every case."""
    d = tmp_path / "repo"
    shutil.copytree(ROOT / "policies", d / "policies")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=d, check=True, env=env)
    return d


def edit(d: Path, file: str, old: str, new: str) -> None:
    path = d / "policies" / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def cli(d: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(list(args), cwd=d)
    return code, out, err


def diff(d: Path, fmt: str = "json") -> tuple[int, str]:
    code, out, err = cli(
        d, "diff", "policies", "--base", "HEAD", "--format", fmt, "--fail-on", "widening"
    )
    assert code in (0, 1), err
    return code, out


def lint_rules(d: Path) -> list[str]:
    _, out, _ = cli(d, "lint", "policies", "--format", "json")
    return sorted({f["rule"] for f in json.loads(out)["findings"]})


OFFSHORE = (
    "  data_steward:\n    snowflake: DATA_STEWARD\n    databricks: data-stewards\n",
    "  data_steward:\n    snowflake: DATA_STEWARD\n    databricks: data-stewards\n\n"
    "  offshore_contractors:\n    snowflake: OFFSHORE_CONTRACTORS\n"
    "    databricks: offshore-contractors\n",
)


def test_a_new_principal_no_persona_holds_widens_in_every_format(tmp_path: Path) -> None:
    d = repo(tmp_path)
    edit(d, "principals.yaml", *OFFSHORE)
    edit(
        d,
        "entitlements.yaml",
        "IMM-310: [bench_chemist]",
        "IMM-310: [bench_chemist, offshore_contractors]",
    )
    edit(d, "masks.yaml", "unmasked_for: [clinical_unblinded]", "unmasked_for: [clinical_unblinded, offshore_contractors]")  # fmt: skip
    code, out = diff(d)
    assert code == 1
    changes = json.loads(out)["changes"]
    mine = [
        c
        for c in changes
        if c["identity"]["name"] in ("OFFSHORE_CONTRACTORS", "offshore-contractors")
    ]
    assert mine and all(c["kind"] == "widening" for c in mine)
    assert all(c["personas"] == [] and c["persona"] is None for c in mine)
    assert {c["identity"]["platform"] for c in mine} == {"snowflake", "databricks"}
    rows = [c for c in mine if c["column"] is None]
    assert {tuple(c["values"]) for c in rows} == {("IMM-310",)}
    # blamed where it is granted, not on the new principal
    assert {c["cause"]["object"] for c in rows} == {"entitlements.programme.IMM-310[1]"}
    clear = [c for c in mine if c["after"] == "clear"]
    assert clear and {c["cause"]["object"] for c in clear} == {
        "masks.subject_pseudonym.unmasked_for[1]"
    }
    for fmt in ("text", "markdown", "github"):
        code, out = diff(d, fmt)
        assert code == 1, fmt
        assert "Snowflake role OFFSHORE_CONTRACTORS (held by no declared persona)" in out, fmt
        assert "Databricks group offshore-contractors (held by no declared persona)" in out, fmt
    # analyze names it too, and verify checks what it sees
    code, out, err = cli(d, "analyze", "policies")
    assert "Identity Snowflake role OFFSHORE_CONTRACTORS (held by no declared persona)" in out
    code, out, err = cli(d, "verify", "policies", "--format", "json")
    assert code == 0, out + err


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("    databricks: cro-external", "    databricks: account users", "account users"),
        ("    snowflake: CRO_EXTERNAL", "    snowflake: PUBLIC", "PUBLIC"),
    ],
)
def test_an_everyone_identity_is_acc508_and_a_widening(
    tmp_path: Path, old: str, new: str, name: str
) -> None:
    d = repo(tmp_path)
    edit(d, "principals.yaml", old, new)
    assert "ACC508" in lint_rules(d)
    code, out = diff(d)
    assert code == 1
    widened = [c for c in json.loads(out)["changes"] if c["kind"] == "widening"]
    everyone = [c for c in widened if c["identity"]["name"] == name]
    assert everyone, widened
    # every persona holds an everyone identity
    assert all(c["personas"] == sorted(c["personas"]) and len(c["personas"]) == 4 for c in everyone)
    assert {c["cause"]["object"] for c in everyone} == {
        f"principals.cro_external.{'databricks' if name != 'PUBLIC' else 'snowflake'}"
    }


def test_an_alias_of_another_identity_is_acc509_and_that_identity_widens(tmp_path: Path) -> None:
    d = repo(tmp_path)
    edit(
        d,
        "principals.yaml",
        OFFSHORE[0],
        OFFSHORE[0] + "\n  cro_alias:\n    snowflake: CRO_EXTERNAL\n    databricks: cro-external\n",
    )
    edit(d, "entitlements.yaml", "IMM-310: [bench_chemist]", "IMM-310: [bench_chemist, cro_alias]")
    assert "ACC509" in lint_rules(d)
    code, out = diff(d)
    assert code == 1
    changes = json.loads(out)["changes"]
    assert changes and all(c["kind"] == "widening" for c in changes)
    assert {(c["identity"]["platform"], c["identity"]["name"]) for c in changes} == {
        ("snowflake", "CRO_EXTERNAL"),
        ("databricks", "cro-external"),
    }
    assert all(
        c["persona"] == "cro_collaborator" and c["values"] == ["IMM-310"]
        for c in changes
        if c["column"] is None
    )
    # verify agrees: the compiled mapping row gives the CRO's identity the rows, as the model says
    code, out, err = cli(d, "verify", "policies")
    assert code == 0, out + err


def test_a_mask_that_shows_every_value_is_clear_everywhere(tmp_path: Path) -> None:
    d = repo(tmp_path)
    edit(d, "datasets.yaml", "      NOTES: {type: VARCHAR, mask: free_text}\n", "      NOTES: {type: VARCHAR, mask: free_text}\n      CARD: {type: VARCHAR(34), mask: card}\n")  # fmt: skip
    path = d / "policies" / "masks.yaml"
    path.write_text(
        path.read_text().rstrip() + "\n  card:\n    strategy: partial\n    keep_last: 4\n"
    )
    subprocess.run(["git", "commit", "-qam", "card"], cwd=d, check=True, env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})  # fmt: skip
    edit(d, "masks.yaml", "    keep_last: 4", "    keep_last: 40")
    assert "ACC206" in lint_rules(d)
    code, out = diff(d)
    card = [c for c in json.loads(out)["changes"] if c["column"] == "CARD"]
    assert code == 1 and card and {(c["before"], c["after"]) for c in card} == {("masked", "clear")}
    code, out, _ = cli(d, "analyze", "policies", "--format", "json")
    cells = [
        c
        for cells in json.loads(out)["personas"].values()
        for c in cells
        if c.get("column") == "CARD"
    ]
    assert cells and {c["disposition"] for c in cells} == {"clear"}
    code, out, _ = cli(
        d, "probe", "init", "bench_chemist", "assay_results", "policies", "--column", "CARD"
    )
    assert "warehouse_agent: clear" in out
    code, out, err = cli(d, "verify", "policies")
    assert code == 0, out + err


def test_a_dataset_key_renamed_with_its_table_changes_nothing(tmp_path: Path) -> None:
    d = repo(tmp_path)
    for file in ("datasets.yaml", "surfaces.yaml", "probes.yaml"):
        path = d / "policies" / file
        text = path.read_text()
        path.write_text(text.replace("assay_results:", "assay_results_wh:").replace("assay_results]", "assay_results_wh]").replace("[assay_results,", "[assay_results_wh,").replace("assay_results\n", "assay_results_wh\n").replace("replica_of: assay_results_wh", "replica_of: assay_results_wh"))  # fmt: skip
    code, out, err = cli(d, "lint", "policies")
    assert code == 0, out + err
    for fmt in ("json", "text"):
        code, out = diff(d, fmt)
        assert code == 0, out
    doc = json.loads(diff(d)[1])
    assert doc["changes"] == [] and doc["probe_edits"] == [] and doc["probes"] == []
    assert doc["divergences"] == []
    code, out, err = cli(d, "plan", "policies", "--base", "HEAD", "--out", str(tmp_path / "m"))
    assert code == 0, err
    assert "do not differ" in out and not (tmp_path / "m").exists()


def test_a_widening_is_blamed_on_the_grant_not_on_a_dimension_added(tmp_path: Path) -> None:
    d = repo(tmp_path)
    edit(
        d,
        "datasets.yaml",
        "    row_filter:\n      entitlement: programme\n      column: PROGRAMME_CODE\n      unfiltered_for: [data_steward]   # stewards see every programme (masks still apply)\n",
        "    row_filter:\n      - {entitlement: programme, column: PROGRAMME_CODE, unfiltered_for: [data_steward]}\n      - {entitlement: site, column: SITE_CODE}\n",
    )  # fmt: skip
    path = d / "policies" / "entitlements.yaml"
    text = path.read_text().replace(
        "IMM-310: [bench_chemist]", "IMM-310: [bench_chemist, cro_external]"
    )
    path.write_text(
        text.rstrip()
        + "\n  site:\n    S1: [bench_chemist, clinical_unblinded, cro_external, data_steward]\n"
    )
    code, out = diff(d)
    widened = [c for c in json.loads(out)["changes"] if c["kind"] == "widening"]
    assert code == 1 and widened
    assert {c["cause"]["object"] for c in widened} == {"entitlements.programme.IMM-310[1]"}
    narrowed = [c for c in json.loads(out)["changes"] if c["kind"] == "narrowing"]
    assert narrowed and all(c["cause"]["object"].startswith("datasets.") for c in narrowed)


# --------------------------------------------------------------------------------------------
# the property: a widening exactly when some identity sees more in the compiled SQL


def _seen(project: Any, names: list[str]) -> dict[tuple[str, str], dict[int, frozenset[str]]]:
    """(subject, dataset) -> visible row -> the columns shown in the clear, from the SQL
    compiled from ``project``, executed on DuckDB for each identity subject ``names``."""
    salts = TestSalts()
    sql = load_sql(render_sql(project), salts, "test")
    v = Verifier(project, sql, salts, subjects=names)
    datasets = sorted(project.model.datasets)
    v.evaluate(datasets)
    out: dict[tuple[str, str], dict[int, frozenset[str]]] = {}
    for d in datasets:
        table = v.tables[d]
        masked = [c for c, spec in project.model.datasets[d].columns.items() if spec.mask]
        for s in names:
            rows = v.results[d][s]
            out[(s, d)] = {
                r: frozenset(c for c in masked if values[c] == table.value(r, c))
                for r, (shown, values) in rows.items()
                if shown
            }
    return out


def _identity_names(*models: Any) -> list[str]:
    found: dict[tuple[str, str], str] = {}
    for m in models:
        for p in m.principals.values():
            for platform in PLATFORMS:
                ident = p.identity(platform)
                if ident:
                    found.setdefault((platform, facts(platform).fold_identity(ident)), ident)
    return [subject(Identity(p, k, n)) for (p, k), n in sorted(found.items())]


IDENTITIES = {
    "snowflake": ["CHEMIST", "CLINICIAN", "STEWARD", "NEWCOMER", "PUBLIC"],
    "databricks": ["chemists", "clinicians", "stewards", "newcomers", "account users"],
}
PRINCIPALS = ["chemist", "clinician", "steward", "newcomer"]


@st.composite
def _edits(draw: Any) -> dict[str, Any]:
    e = edited(DIFF_BASE)
    e["principals"]["newcomer"] = {"snowflake": "NEWCOMER", "databricks": "newcomers"}
    e["entitlements"]["programme"]["P1"].append("newcomer")  # used, so no ACC503 noise
    base = edited(e)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["identity", "grant", "unmasked", "unfiltered"]))
        who = draw(st.sampled_from(PRINCIPALS))
        if kind == "identity":
            platform = draw(st.sampled_from(["snowflake", "databricks"]))
            e["principals"][who][platform] = draw(st.sampled_from(IDENTITIES[platform]))
        elif kind == "grant":
            value = draw(st.sampled_from(["P1", "P2"]))
            held = e["entitlements"]["programme"][value]
            if who in held and len(held) > 1:
                held.remove(who)
            elif who not in held:
                held.append(who)
        elif kind == "unmasked":
            mask = draw(st.sampled_from(["subject", "notes"]))
            held = e["masks"][mask].setdefault("unmasked_for", [])
            held.remove(who) if who in held else held.append(who)
        else:
            for ds in ("results", "results_lake"):
                held = e["datasets"][ds]["row_filter"]["unfiltered_for"]
                held.remove(who) if who in held else held.append(who)
    return {"base": base, "head": e}


@pytest.mark.slow
@settings(
    max_examples=200 if FUZZ else 12,
    derandomize=not FUZZ,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(_edits())
def test_a_widening_exactly_when_some_identity_sees_more(
    tmp_path_factory: pytest.TempPathFactory, estates: dict[str, Any]
) -> None:
    tmp = tmp_path_factory.mktemp("identity-property")
    base = load_project(write_files(tmp / "base", {"policy.yaml": estates["base"]}))
    head = load_project(write_files(tmp / "head", {"policy.yaml": estates["head"]}))
    names = _identity_names(base.model, head.model)
    before, after = _seen(base, names), _seen(head, names)
    more = []
    for key, rows in after.items():
        was = before.get(key, {})
        for r, clear in rows.items():
            if r not in was or not clear <= was[r]:
                more.append((key, r, sorted(clear - was.get(r, frozenset()))))
    d = exposure_diff(base, head)
    assert bool(d.widenings) == bool(more), (more[:5], [c.who() for c in d.widenings][:5])


def test_probe_sample_lists_an_identity_no_persona_holds(tmp_path: Path) -> None:
    """A read in the access history by a role that a principal names but no persona holds is
    listed as that identity, held by no declared persona."""
    from accord.compiler.probe_sample.mapping import Mapper, Unmappable
    from tests.test_probe_sample import _read, estate

    root = estate(tmp_path)
    text = (root / "principals.yaml").read_text()
    (root / "principals.yaml").write_text(text.replace(OFFSHORE[0], OFFSHORE[1], 1))
    mapper = Mapper(load_project(root).model)
    got = mapper.map(_read(roles=("OFFSHORE_CONTRACTORS",)))
    assert isinstance(got, Unmappable), got
    assert "Snowflake role OFFSHORE_CONTRACTORS held by no declared persona" in got.reason
