"""`accord diff`: each kind of one-line change gives exactly its widening or narrowing, a pure
refactor gives none, the repository's own repair (examples/as-found -> policies) lists what
it narrowed and widened, and the command's formats and exit codes follow docs/cli.md."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.exposure import ExposureDiff, exposure_diff, places_of, to_markdown, verdict
from accord.compiler.model.validate import Project, load_project
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.estates import DIFF_BASE, Estate, edited, write_files


def diff_of(tmp_path: Path, edit: Callable[[Estate], None]) -> ExposureDiff:
    base = write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)})
    head_data = edited(DIFF_BASE)
    edit(head_data)
    head = write_files(tmp_path / "head", {"policy.yaml": head_data})
    return exposure_diff(load_project(base), load_project(head))


Row = tuple[str, str, str, str | None, str | None, str, str, tuple[str, ...]]


def held_by(c: Any) -> str:
    """Whose view changed: the persona, or the personas that hold the identity (by name)."""
    if not c.of_identity:
        return c.persona
    return ",".join(c.personas) or str(c.identity)


def rows(d: ExposureDiff) -> set[Row]:
    return {
        (c.kind, held_by(c), c.dataset, c.column, c.surface, c.before.disposition,
         c.after.disposition, c.values)
        for c in d.changes
    }  # fmt: skip


def everywhere(
    kind: str,
    persona: str,
    col: tuple[str | None, str | None],
    before: str,
    after: str,
    values: tuple[str, ...] = (),
) -> set[Row]:
    """The change on both replicas, directly and through their agent."""
    sf, dbx = col
    out: set[Row] = set()
    for dataset, column, surface in (
        ("results", sf, "wh_agent"),
        ("results_lake", dbx, "lake_agent"),
    ):
        for place in (None, surface):
            out.add((kind, persona, dataset, column, place, before, after, values))
    return out  # fmt: skip


def _append(path: list[str], value: Any) -> Callable[[Estate], None]:
    def edit(e: Estate) -> None:
        node: Any = e
        for step in path:
            node = node[step]
        node.append(value)

    return edit


def _set(path: list[str], value: Any) -> Callable[[Estate], None]:
    def edit(e: Estate) -> None:
        node: Any = e
        for step in path[:-1]:
            node = node[step]
        if value is None:
            del node[path[-1]]
        else:
            node[path[-1]] = value

    return edit


ROWS = (None, None)
NOTES = ("NOTES", "notes")
SUBJECT = ("SUBJECT_ID", "subject_id")
PHONE = ("PHONE", "phone")

#: (id, one-line edit, exactly the changes expected, the cause's object)
CASES: list[tuple[str, Callable[[Estate], None], set[Row], str]] = [
    (
        "principal-added-to-programme",
        _append(["entitlements", "programme", "P2"], "chemist"),
        everywhere("widening", "chemist", ROWS, "filtered", "filtered", ("P2",)),
        "entitlements.programme.P2[1]",
    ),
    (
        "programme-added-for-a-principal",
        _set(["entitlements", "programme", "P3"], ["chemist"]),
        everywhere("widening", "chemist", ROWS, "filtered", "filtered", ("P3",)),
        "entitlements.programme.P3[0]",
    ),
    (
        "principal-removed-from-programme",
        _set(["entitlements", "programme", "P1"], ["clinician"]),
        everywhere("narrowing", "chemist", ROWS, "filtered", "denied", ("P1",))
        | everywhere("narrowing", "chemist", NOTES, "masked", "denied")
        | everywhere("narrowing", "chemist", SUBJECT, "masked", "denied")
        | everywhere("narrowing", "chemist", PHONE, "masked", "denied"),
        "entitlements.programme.P1",
    ),
    (
        "unmasked-for-grown",
        _append(["masks", "subject", "unmasked_for"], "chemist"),
        everywhere("widening", "chemist", SUBJECT, "masked", "clear"),
        "masks.subject.unmasked_for[1]",
    ),
    (
        "mask-strategy-changed",
        _set(["masks", "notes", "strategy"], "hash"),
        everywhere("widening", "chemist", NOTES, "masked", "masked")
        | everywhere("widening", "steward", NOTES, "masked", "masked"),
        "masks.notes.strategy",
    ),
    (
        "partial-mask-keeps-fewer",
        _set(["masks", "phone", "keep_last"], 2),
        everywhere("narrowing", "chemist", PHONE, "masked", "masked")
        | everywhere("narrowing", "clinician", PHONE, "masked", "masked")
        | everywhere("narrowing", "steward", PHONE, "masked", "masked"),
        "masks.phone.keep_last",
    ),
    (
        "persona-gains-principal",
        _append(["personas", "chemist"], "clinician"),
        everywhere("widening", "chemist", ROWS, "filtered", "filtered", ("P2",))
        | everywhere("widening", "chemist", NOTES, "masked", "clear")
        | everywhere("widening", "chemist", SUBJECT, "masked", "clear"),
        "personas.chemist[1]",
    ),
    (
        "new-surface-reads-governed-table",
        _set(
            ["surfaces", "search_agent"],
            {"platform": "snowflake", "reads": ["results"], "identity": "caller"},
        ),
        {
            ("widening", "chemist", "results", None, "search_agent", "empty", "filtered", ("P1",)),
            ("widening", "clinician", "results", None, "search_agent", "empty", "filtered",
             ("P1", "P2")),
            ("widening", "steward", "results", None, "search_agent", "empty", "clear",
             ("P1", "P2")),
        }
        | {
            ("widening", p, "results", c, "search_agent", "empty", disposition, ())
            for p in ("chemist", "clinician", "steward")
            for c in ("NOTES", "SUBJECT_ID", "PHONE")
            for disposition in ["clear" if p == "clinician" and c != "PHONE" else "masked"]
        },
        "surfaces.search_agent.reads[0]",
    ),
    (
        "replica-lost-a-mask",
        _set(["datasets", "results_lake", "columns", "notes", "mask"], None),
        {
            ("widening", p, "results_lake", "notes", place, "masked", "clear", ())
            for p in ("chemist", "steward")
            for place in (None, "lake_agent")
        },
        "datasets.results_lake.columns.notes",
    ),
    (
        "row-filter-removed",
        _set(["datasets", "results", "row_filter"], None),
        {
            ("widening", "chemist", "results", None, place, "filtered", "clear", ("P2",))
            for place in (None, "wh_agent")
        }
        | {
            ("widening", "clinician", "results", None, place, "filtered", "clear", ())
            for place in (None, "wh_agent")
        },
        "datasets.results",
    ),
    (
        "agent-runs-as-service",
        _set(["surfaces", "wh_agent", "identity"], "service"),
        {
            ("widening", p, "results", c, "wh_agent", before, "ungoverned", values)
            for p, c, before, values in [
                ("chemist", None, "filtered", ("P2",)),
                ("clinician", None, "filtered", ()),
                ("steward", None, "clear", ()),
                *[(p, c, "masked", ()) for p in ("chemist", "steward")
                  for c in ("NOTES", "SUBJECT_ID")],
                ("clinician", "NOTES", "clear", ()),
                ("clinician", "SUBJECT_ID", "clear", ()),
                *[(p, "PHONE", "masked", ()) for p in ("chemist", "clinician", "steward")],
            ]
        },
        "surfaces.wh_agent.identity",
    ),
    (
        "surface-stops-reading",
        _set(["surfaces", "lake_agent", "reads"], []),
        {
            ("narrowing", p, "results_lake", c, "lake_agent", before, "empty", values)
            for p, c, before, values in [
                ("chemist", None, "filtered", ("P1",)),
                ("clinician", None, "filtered", ("P1", "P2")),
                ("steward", None, "clear", ("P1", "P2")),
                *[(p, c, "masked", ()) for p in ("chemist", "steward")
                  for c in ("notes", "subject_id")],
                ("clinician", "notes", "clear", ()),
                ("clinician", "subject_id", "clear", ()),
                *[(p, "phone", "masked", ()) for p in ("chemist", "clinician", "steward")],
            ]
        },
        "surfaces.lake_agent.reads",
    ),
    (
        "redact-to-nullify-reveals-no-more",
        _set(["masks", "notes", "strategy"], "nullify"),
        set(),
        "",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "expected", "cause"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_one_line_change(
    tmp_path: Path, edit: Callable[[Estate], None], expected: set[Row], cause: str
) -> None:
    d = diff_of(tmp_path, edit)
    assert rows(d) == expected
    assert len(d.changes) == len(expected)
    assert {c.cause.object for c in d.changes} <= {cause}
    for c in d.changes:
        assert c.cause.location.file.endswith("head/policy.yaml")
        assert c.cause.location.line > 1
    w = sum(1 for r in expected if r[0] == "widening")
    n = len(expected) - w
    assert verdict(d) == ("no change in exposure" if not expected else f"{w} widening{'s' * (w != 1)}, {n} narrowing{'s' * (n != 1)}")  # fmt: skip


def test_cause_line_is_the_edited_line(tmp_path: Path) -> None:
    d = diff_of(tmp_path, _append(["masks", "subject", "unmasked_for"], "chemist"))
    text = (tmp_path / "head" / "policy.yaml").read_text().splitlines()
    loc = d.changes[0].cause.location
    assert text[loc.line - 1][loc.column - 1 :] == "chemist"
    assert text[loc.line - 1].strip() == "- chemist"
    assert text[loc.line - 2].strip() == "- clinician"


def test_replica_that_lost_a_mask_is_a_new_divergence(tmp_path: Path) -> None:
    d = diff_of(tmp_path, _set(["datasets", "results_lake", "columns", "notes", "mask"], None))
    new = [x for x in d.divergences if x.status == "new"]
    assert new and all(x.loose.dataset == "results_lake" for x in new)
    assert {p for x in new for p in x.personas} == {"chemist", "steward"}
    assert not [x for x in d.divergences if x.status == "resolved"]
    undo = diff_of(tmp_path / "undo", lambda e: None)
    assert undo.divergences == []


def test_a_pure_refactor_is_no_change(tmp_path: Path) -> None:
    """Entries moved between files, keys reordered, comments added: no change in exposure."""
    data = edited(DIFF_BASE)
    base = write_files(tmp_path / "base", {"policy.yaml": data})
    moved = {k: data[k] for k in ("version", "platforms", "principals", "personas")}
    rest = {k: v for k, v in data.items() if k not in moved}
    reordered = {
        k: dict(reversed(list(v.items()))) if isinstance(v, dict) else v
        for k, v in reversed(list(rest.items()))
    }
    datasets = reordered.pop("datasets")
    lake = datasets.pop("results_lake")
    head = write_files(
        tmp_path / "head",
        {
            "a.yaml": "# who\n" + yaml.safe_dump(moved, sort_keys=True),
            "b.yaml": "# what\n" + yaml.safe_dump({**reordered, "datasets": datasets}),
            "sub/c.yaml": "# the replica, moved here\n"
            + yaml.safe_dump({"datasets": {"results_lake": lake}}, sort_keys=True),
        },
    )
    d = exposure_diff(load_project(base), load_project(head))
    assert d.changes == [] and d.divergences == []
    assert verdict(d) == "no change in exposure"
    md = to_markdown(d, places_of(load_project(base).model, load_project(head).model))
    assert "**no change in exposure**" in md


# --------------------------------------------------------------------------------------------
# the repository's own history


@pytest.fixture(scope="module")
def repair() -> tuple[Project, Project, ExposureDiff]:
    base, head = load_project(ROOT / "examples/as-found"), load_project(ROOT / "policies")
    return base, head, exposure_diff(base, head)


def test_repair_narrowed_the_cro_collaborator_through_the_pipeline(
    repair: tuple[Project, Project, ExposureDiff],
) -> None:
    _, _, d = repair
    found = [
        c
        for c in d.narrowings
        if c.persona == "cro_collaborator" and c.surface == "variant_annotation"
    ]
    assert {(c.dataset, c.column, c.before.disposition, c.after.disposition) for c in found} == {
        ("variant_calls", None, "ungoverned", "empty"),
        ("variant_calls", "subject_id", "ungoverned", "empty"),
    }
    rows_change = next(c for c in found if c.column is None)
    assert rows_change.values == ("CNS-204", "IMM-310", "ONC-101")
    assert rows_change.cause.object == "surfaces.variant_annotation.reads"
    resolved = [x for x in d.divergences if x.status == "resolved"]
    assert any(
        x.loose.surface == "variant_annotation" and "cro_collaborator" in x.personas
        for x in resolved
    )


def test_repair_widened_the_pharmacologist_the_current_role_policy_ignored(
    repair: tuple[Project, Project, ExposureDiff],
) -> None:
    """The as-found predicate compared CURRENT_ROLE() (the primary role only): executed, it
    admitted ONC-101 and IMM-310 to the clinical pharmacologist, whose CNS-204 grant sits on
    a secondary role. The repair gives her CNS-204 on the warehouse and changes nothing for
    the personas whose grants sit on their primary role."""
    _, _, d = repair
    on_warehouse = [c for c in d.changes if c.dataset == "assay_results" and c.column is None]
    assert {(c.kind, held_by(c), c.surface, c.values) for c in on_warehouse} == {
        ("widening", "clinical_pharmacologist", None, ("CNS-204",)),
        ("widening", "clinical_pharmacologist", "warehouse_agent", ("CNS-204",)),
        ("widening", "data_steward", None, ("CNS-204", "IMM-310", "ONC-101")),
        ("widening", "data_steward", "warehouse_agent", ("CNS-204", "IMM-310", "ONC-101")),
    }
    pharmacologist = next(c for c in on_warehouse if c.persona == "clinical_pharmacologist")
    assert pharmacologist.before.values == frozenset({"ONC-101", "IMM-310"})
    assert pharmacologist.cause.location.file == str(ROOT / "policies/datasets.yaml")
    assert pharmacologist.cause.object.startswith("datasets.assay_results.row_filter")


def test_repair_cli_text_and_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(["diff", "policies", "--base", "dir:examples/as-found"])
    assert code == 0, err
    assert (
        "clinical_pharmacologist gains programme CNS-204 on every surface reading "
        "assay_results (warehouse_agent) and directly on snowflake" in out
    )
    assert (
        "cro_collaborator: rows of variant_calls on variant_annotation ungoverned -> empty" in out
    )
    assert "caused by policies/surfaces.yaml:" in out
    code, md, _ = run_cli(
        ["diff", "policies", "--base", "dir:examples/as-found", "--format", "markdown"]
    )
    again = run_cli(
        ["diff", "policies", "--base", "dir:examples/as-found", "--format", "markdown"]
    )[1]
    assert code == 0 and md == again
    assert md.index("#### Widenings") < md.index("#### Narrowings")
    assert "#### Resolved divergences (ACC403): 5" in md
    assert "widenings, " in md  # counted as the rows printed: tests/test_first_use.py
    assert "`policies/datasets.yaml:" in md


# --------------------------------------------------------------------------------------------
# formats and exit codes


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    base = write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)})
    data = edited(DIFF_BASE)
    data["masks"]["notes"]["unmasked_for"].append("steward")  # widens
    data["entitlements"]["programme"]["P1"] = ["clinician"]  # narrows
    return base, write_files(tmp_path / "head", {"policy.yaml": data})


def test_json_matches_the_contract(pair: tuple[Path, Path]) -> None:
    base, head = pair
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["widenings"] == sum(c["kind"] == "widening" for c in doc["changes"])
    assert doc["summary"]["narrowings"] == sum(c["kind"] == "narrowing" for c in doc["changes"])
    first = doc["changes"][0]
    assert first["kind"] == "widening"  # widenings first
    for key in ("kind", "persona", "dataset", "column", "surface", "before", "after", "values"):
        assert key in first
    assert set(first["cause"]) >= {"file", "line", "column"}
    rows_change = next(c for c in doc["changes"] if c["column"] is None)
    assert rows_change["values"] == ["P1"] and rows_change["before"] == "filtered"
    assert rows_change["after"] == "denied" and rows_change["kind"] == "narrowing"
    assert "errors" not in doc


def test_fail_on_widening(pair: tuple[Path, Path], tmp_path: Path) -> None:
    base, head = pair
    assert run_cli(["diff", str(head), "--base", f"dir:{base}"])[0] == 0
    assert run_cli(["diff", str(head), "--base", f"dir:{base}", "--fail-on", "widening"])[0] == 1
    assert run_cli(["diff", str(head), "--base", f"dir:{base}", "--fail-on", "never"])[0] == 0
    narrower = write_files(tmp_path / "narrow", {"policy.yaml": edited(DIFF_BASE)})
    data = edited(DIFF_BASE)
    data["entitlements"]["programme"]["P1"] = ["clinician"]
    (narrower / "policy.yaml").write_text(yaml.safe_dump(data))
    code, out, _ = run_cli(
        ["diff", str(narrower), "--base", f"dir:{base}", "--fail-on", "widening"]
    )
    assert code == 0 and "0 widenings" in out


def test_github_annotations_on_the_causing_lines(pair: tuple[Path, Path]) -> None:
    base, head = pair
    code, out, _ = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "github"])
    assert code == 0
    lines = out.splitlines()
    assert lines and all(line.startswith(("::warning ", "::notice ")) for line in lines)
    assert any(f"file={head}/policy.yaml" in line and "title=accord diff%3A widening" in line
               for line in lines)  # fmt: skip


@pytest.mark.parametrize("fmt", ["text", "json", "github", "markdown"])
def test_invalid_head_exits_2_with_a_location(pair: tuple[Path, Path], fmt: str) -> None:
    base, head = pair
    (head / "broken.yaml").write_text("masks:\n  bad: {strategy: hashed}\n")
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", fmt])
    assert code == 2
    assert f"{head}/broken.yaml:2:" in err
    assert "Traceback" not in err
    if fmt == "json":
        doc = json.loads(out)
        assert doc["changes"] == [] and doc["errors"][0]["file"] == f"{head}/broken.yaml"
    elif fmt == "github":
        assert out.startswith("::error file=")


def test_unknown_base_exits_2(pair: tuple[Path, Path]) -> None:
    _, head = pair
    code, out, err = run_cli(["diff", str(head), "--base", "no-such-ref", "--format", "json"])
    assert code == 2 and json.loads(out)["errors"]
    assert "--base no-such-ref" in err


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


def test_base_from_a_git_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The base read as `accord plan --base` reads it: the same directory at a revision."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples/as-found", root / "policies")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "as found")
    shutil.rmtree(root / "policies")
    shutil.copytree(ROOT / "policies", root / "policies")
    monkeypatch.chdir(root)
    from_git = run_cli(["diff", "policies", "--base", "HEAD", "--format", "json"])
    shutil.copytree(ROOT / "examples/as-found", tmp_path / "as-found")
    from_dir = run_cli(
        ["diff", "policies", "--base", f"dir:{tmp_path / 'as-found'}", "--format", "json"]
    )
    assert from_git[0] == 0 and from_dir[0] == 0
    git_doc, dir_doc = json.loads(from_git[1]), json.loads(from_dir[1])
    # the same changes; each document names the base it read
    assert git_doc.pop("base")["kind"] == "git" and dir_doc.pop("base")["kind"] == "directory"
    assert git_doc == dir_doc


def test_diff_is_deterministic_and_symmetric(tmp_path: Path) -> None:
    """Swapping base and head swaps widenings and narrowings, change for change."""
    edit = _append(["personas", "chemist"], "clinician")
    forward = diff_of(tmp_path / "f", edit)
    base = write_files(tmp_path / "b" / "base", {"policy.yaml": copy.deepcopy(edited(DIFF_BASE))})
    data = edited(DIFF_BASE)
    edit(data)
    head = write_files(tmp_path / "b" / "head", {"policy.yaml": data})
    backward = exposure_diff(load_project(head), load_project(base))
    assert len(forward.widenings) == len(backward.narrowings) > 0
    assert not forward.narrowings and not backward.widenings


def _predicate(text: str) -> Callable[[Estate], None]:
    def edit(e: Estate) -> None:
        e["datasets"]["results"]["row_filter"] = {
            "expression": {"snowflake": text},
            "arguments": {"REGION": "VARCHAR"},
        }

    return edit


def test_a_predicate_accord_cannot_compare_is_listed_as_a_widening(tmp_path: Path) -> None:
    """A hand-written predicate over a column no entitlement filters: executed, but its rows
    are not entitlement values. Changing it is listed as a widening, never as no change."""
    base = write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)})
    _predicate("REGION = 'EU'")(data := edited(DIFF_BASE))
    before = write_files(tmp_path / "b", {"policy.yaml": data})
    _predicate("REGION IN ('EU', 'US')")(data := edited(DIFF_BASE))
    after = write_files(tmp_path / "a", {"policy.yaml": data})
    d = exposure_diff(load_project(before), load_project(after))
    found = {(c.kind, held_by(c), c.surface, c.note != "") for c in d.changes if c.column is None}
    assert found == {
        ("widening", p, place, True)
        for p in ("chemist", "clinician", "steward")
        for place in (None, "wh_agent")
    }
    assert {c.cause.object for c in d.changes} == {"datasets.results.row_filter.expression"}
    same = exposure_diff(load_project(before), load_project(before))
    assert same.changes == []
    # from the entitlement filter to the predicate: not comparable either
    assert exposure_diff(load_project(base), load_project(before)).widenings


def test_a_grant_read_by_a_predicate_is_a_change(tmp_path: Path) -> None:
    """The as-found predicate reads the mapping table: a grant added to the entitlements
    changes what it admits, although the dataset names no entitlement."""
    as_found = ROOT / "examples/as-found"
    head = tmp_path / "head"
    shutil.copytree(as_found, head)
    text = (head / "entitlements.yaml").read_text()
    (head / "entitlements.yaml").write_text(
        text.replace("IMM-310: [bench_chemist]", "IMM-310: [bench_chemist, cro_external]")
    )
    d = exposure_diff(load_project(as_found), load_project(head))
    gained = {
        (c.dataset, c.surface)
        for c in d.widenings
        if "cro_collaborator" in (c.persona, *c.personas)
    }
    assert ("assay_results", "warehouse_agent") in gained  # the predicate, executed
    assert ("variant_calls", "lakehouse_agent") not in gained  # the ABAC runtime: no rows
    assert all(c.values == ("IMM-310",) for c in d.changes if c.column is None)
    warehouse = next(c for c in d.widenings if c.surface == "warehouse_agent")
    assert warehouse.cause.object == "entitlements.programme.IMM-310[1]"


@pytest.mark.skipif(
    importlib.util.find_spec("accord.compiler.meaning.probes") is None,
    reason="probe evaluation (compiler.meaning.probes, ACC404) is not part of this accord yet",
)
def test_repair_resolves_probes(repair: tuple[Project, Project, ExposureDiff]) -> None:
    """With probes: the probe outcomes the repair changes, located at the head's expect."""
    d = repair[2]
    assert d.probes is not None
    resolved = [p for p in d.probes if p["status"] == "resolved"]
    assert resolved and all(p["file"].endswith("probes.yaml") for p in resolved)
    assert not [p for p in d.probes if p["status"] == "introduced"]


def test_without_probe_evaluation_the_reports_say_so(
    repair: tuple[Project, Project, ExposureDiff],
) -> None:
    base, head, d = repair
    if importlib.util.find_spec("accord.compiler.meaning.probes") is not None:
        assert d.probes is not None
        return
    assert d.probes is None
    md = to_markdown(d, places_of(base.model, head.model))
    assert "_not evaluated: this accord has no probe evaluation_" in md


@pytest.mark.parametrize("edit", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_divergences_of_unchanged_personas_are_not_missed(
    tmp_path: Path, edit: Callable[[Estate], None]
) -> None:
    """The diff recomputes ACC403 only for personas whose views changed: the same result as
    recomputing it for everyone."""
    from accord.compiler.exposure.divergence import divergence_changes

    base = load_project(write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)}))
    data = edited(DIFF_BASE)
    edit(data)
    head = load_project(write_files(tmp_path / "head", {"policy.yaml": data}))
    assert exposure_diff(base, head).divergences == divergence_changes(base, head)


def test_a_replica_declared_is_a_new_divergence_for_every_persona(tmp_path: Path) -> None:
    """`replica_of` changes no view, only what ACC403 compares."""

    def unlink(e: Estate) -> None:
        del e["datasets"]["results_lake"]["replica_of"]
        e["datasets"]["results_lake"]["columns"]["notes"].pop("mask")

    def link(e: Estate) -> None:
        e["datasets"]["results_lake"]["columns"]["notes"].pop("mask")

    unlink(before := edited(DIFF_BASE))
    link(after := edited(DIFF_BASE))
    base = load_project(write_files(tmp_path / "base", {"policy.yaml": before}))
    head = load_project(write_files(tmp_path / "head", {"policy.yaml": after}))
    d = exposure_diff(base, head)
    assert d.changes == []
    new = [x for x in d.divergences if x.status == "new"]
    assert {p for x in new for p in x.personas} == {"chemist", "steward"}


def test_a_dataset_dropped_from_the_model(tmp_path: Path) -> None:
    """Its table keeps no accord policy: ungoverned on its platform (a widening); the agent
    that read it no longer does (a narrowing)."""

    def drop(e: Estate) -> None:
        del e["datasets"]["results_lake"]
        e["surfaces"]["lake_agent"]["reads"] = []

    d = diff_of(tmp_path, drop)
    direct = [c for c in d.changes if c.surface is None]
    agent = [c for c in d.changes if c.surface == "lake_agent"]
    assert direct and agent and len(direct) + len(agent) == len(d.changes)
    assert {(c.kind, c.after.disposition) for c in direct} == {("widening", "ungoverned")}
    assert {(c.kind, c.after.disposition) for c in agent} == {("narrowing", "empty")}
    assert {c.dataset for c in d.changes} == {"results_lake"}
    assert {c.cause.object for c in direct} == {"datasets"}
    assert {c.cause.object for c in agent} == {"surfaces.lake_agent.reads"}


@pytest.mark.parametrize("edit", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_reverting_a_change_swaps_widenings_and_narrowings(
    tmp_path: Path, edit: Callable[[Estate], None]
) -> None:
    base = load_project(write_files(tmp_path / "base", {"policy.yaml": edited(DIFF_BASE)}))
    data = edited(DIFF_BASE)
    edit(data)
    head = load_project(write_files(tmp_path / "head", {"policy.yaml": data}))
    swap = {"widening": "narrowing", "narrowing": "widening"}
    forward = {(c.kind, c.persona, c.dataset, c.column, c.surface, c.values)
               for c in exposure_diff(base, head).changes}  # fmt: skip
    backward = {(swap[c.kind], c.persona, c.dataset, c.column, c.surface, c.values)
                for c in exposure_diff(head, base).changes}  # fmt: skip
    assert forward == backward


def test_an_index_change_is_said_not_passed_over(tmp_path: Path) -> None:
    def index(inherit: bool) -> Callable[[Estate], None]:
        def edit(e: Estate) -> None:
            e["indexes"] = {
                "search": {
                    "platform": "snowflake",
                    "kind": "cortex_search",
                    "source": "results",
                    "columns": ["NOTES"],
                    "inherit_governance": inherit,
                }
            }

        return edit

    index(True)(before := edited(DIFF_BASE))
    index(False)(after := edited(DIFF_BASE))
    base = load_project(write_files(tmp_path / "base", {"policy.yaml": before}))
    head = load_project(write_files(tmp_path / "head", {"policy.yaml": after}))
    d = exposure_diff(base, head)
    assert d.changes == []
    assert d.notes == [
        "indexes.search.inherit_governance: True -> False: not compared per persona "
        "(an index is no surface); see `accord lint` (ACC301)"
    ]
    assert verdict(d) == "no change in exposure on any surface; 1 note to read"


def test_a_live_base_is_refused_with_a_pointer_to_drift(pair: tuple[Path, Path]) -> None:
    _, head = pair
    code, _, err = run_cli(["diff", str(head), "--base", "live:all"])
    assert code == 2 and "accord drift" in err and "Traceback" not in err


@pytest.mark.skipif(
    importlib.util.find_spec("accord.compiler.meaning.probes") is None,
    reason="probe evaluation (compiler.meaning.probes, ACC404) is not part of this accord yet",
)
def test_a_widening_that_breaks_a_probe_introduces_it(tmp_path: Path) -> None:
    head = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", head)
    masks = head / "masks.yaml"
    masks.write_text(
        masks.read_text().replace(
            "unmasked_for: [clinical_unblinded]\n    salt:",
            "unmasked_for: [clinical_unblinded, cro_external]\n    salt:",
        )
    )
    d = exposure_diff(load_project(ROOT / "policies"), load_project(head))
    assert d.probes is not None
    introduced = {(p["probe"], p["surface"], p["after"]) for p in d.probes}
    assert introduced == {
        ("cro_cannot_unmask_cns_subjects", "warehouse_agent", "clear"),
        ("cro_cannot_unmask_cns_subjects", "lakehouse_agent", "clear"),
    }
    assert {p["status"] for p in d.probes} == {"introduced"}
    assert all(p["file"] == str(head / "probes.yaml") for p in d.probes)
    code, out, _ = run_cli(
        ["diff", str(head), "--base", f"dir:{ROOT / 'policies'}", "--format", "github"]
    )
    assert code == 0 and "title=accord diff%3A ACC404 probe" in out
