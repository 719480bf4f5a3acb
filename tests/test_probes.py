"""Probes: the format, its validation, ACC404 against the model, and `accord probe init`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from accord.compiler.core.errors import InputError
from accord.compiler.lint.engine import lint_project
from accord.compiler.meaning.probes import evaluate, probe_init
from accord.compiler.model.validate import load_project
from tests.cli import run_cli
from tests.conftest import ROOT

POLICIES = ROOT / "policies"
AS_FOUND = ROOT / "examples" / "as-found"


def estate(tmp_path: Path, probes: str, base: Path = POLICIES, **replace: str) -> Path:
    """A copy of ``base`` whose probes.yaml is ``probes``; ``replace`` rewrites other files
    (``masks="old->new"`` replaces text in masks.yaml)."""
    root = tmp_path / "estate"
    shutil.copytree(base, root)
    (root / "probes.yaml").write_text(probes, encoding="utf-8")
    for stem, change in replace.items():
        old, new = change.split("->")
        path = root / f"{stem}.yaml"
        text = path.read_text(encoding="utf-8")
        assert old in text, (stem, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
    return root


def probe(body: str) -> str:
    return "probes:\n  p:\n" + "".join(f"    {line}\n" for line in body.strip().splitlines())


CRO_CNS = """
owner: data-governance
persona: cro_collaborator
dataset: assay_results
where: {programme: CNS-204}
column: SUBJECT_ID
expect:
  warehouse_agent: masked
  lakehouse_agent: masked
"""

# --------------------------------------------------------------------------------------------
# validation: every mistake located

#: (probe body, line in probes.yaml, column, message fragment)
INVALID = [
    (CRO_CNS.replace("persona: cro_collaborator", "persona: cro"), 4, 14, "unknown persona 'cro'"),
    (
        CRO_CNS.replace("dataset: assay_results", "dataset: assays"),
        5,
        14,
        "unknown dataset 'assays' (did you mean 'assay_results'?)",
    ),
    (
        CRO_CNS.replace("{programme: CNS-204}", "{programm: CNS-204}"),
        6,
        13,
        "unknown entitlement dimension 'programm' (did you mean 'programme'?)",
    ),
    (
        CRO_CNS.replace("{programme: CNS-204}", "{programme: CNS-205}"),
        6,
        24,
        "unknown programme value 'CNS-205' (did you mean 'CNS-204'?)",
    ),
    (
        CRO_CNS.replace("column: SUBJECT_ID", "column: SUBJECT"),
        7,
        13,
        "unknown column 'SUBJECT' of assay_results (did you mean 'SUBJECT_ID'? declare it",
    ),
    (
        CRO_CNS.replace("warehouse_agent: masked", "warehouse_agnt: masked"),
        9,
        7,
        "unknown surface 'warehouse_agnt' (did you mean 'warehouse_agent'?)",
    ),
    (
        CRO_CNS + "  variant_annotation: denied\n",
        11,
        7,
        "surface variant_annotation does not reach assay_results.SUBJECT_ID (it reads "
        "gene_annotations): remove the entry",
    ),
    (
        CRO_CNS.replace("owner: data-governance\n", ""),
        3,
        5,
        "probes.p: missing required key 'owner'",
    ),
    (
        CRO_CNS.replace("warehouse_agent: masked", "warehouse_agent: secret"),
        9,
        24,
        "probes.p.expect.warehouse_agent: Input should be 'clear', 'masked'",
    ),
    (
        "owner: x\npersona: bench_chemist\ndataset: gene_annotations\n"
        "expect: {variant_annotation: ungoverned, lakehouse_agent: clear}\n",
        6,
        46,
        "surface lakehouse_agent does not reach gene_annotations (it reads variant_calls, "
        "assay_results_lake)",
    ),
]


@pytest.mark.parametrize(("body", "line", "column", "message"), INVALID)
def test_invalid_probes_are_located(
    tmp_path: Path, body: str, line: int, column: int, message: str
) -> None:
    root = estate(tmp_path, probe(body))
    with pytest.raises(InputError) as err:
        load_project(root)
    found = [d for d in err.value.diagnostics if message in d.message]
    assert found, [str(d) for d in err.value.diagnostics]
    where = found[0].location
    assert (Path(where.file).name, where.line, where.column) == ("probes.yaml", line, column)


#: a second entitlement dimension beside programme (the estate filters by programme only)
BUSINESS_LINE = "entitlements:\n->entitlements:\n  business_line:\n    '100': [bench_chemist]\n"

#: issue 21 item 8: (probe body, line, column, message fragment) of a ``where`` naming a
#: dimension the dataset's rows are not filtered by
UNFILTERED_WHERE = [
    (
        CRO_CNS.replace("{programme: CNS-204}", "{business_line: '100'}"),
        6,
        13,
        "assay_results is not filtered by 'business_line'; its rows are filtered by 'programme'",
    ),
    (
        "owner: x\npersona: bench_chemist\ndataset: gene_annotations\n"
        "where: {business_line: '100'}\nexpect: {variant_annotation: ungoverned}\n",
        6,
        13,
        "gene_annotations has no row filter, so no business_line value selects rows of it",
    ),
]


@pytest.mark.parametrize(("body", "line", "column", "message"), UNFILTERED_WHERE)
def test_a_where_on_a_dimension_the_dataset_is_not_filtered_by_is_located(
    tmp_path: Path, body: str, line: int, column: int, message: str
) -> None:
    root = estate(tmp_path, probe(body), entitlements=BUSINESS_LINE)
    with pytest.raises(InputError) as err:
        load_project(root)
    found = [d for d in err.value.diagnostics if message in d.message]
    assert found, [str(d) for d in err.value.diagnostics]
    where = found[0].location
    assert (Path(where.file).name, where.line, where.column) == ("probes.yaml", line, column)
    run = run_cli(["validate", str(root)])
    assert run.returncode == 2
    assert f"probes.yaml:{line}:{column}: " in run.stderr + run.stdout
    assert "Traceback" not in run.stderr


def test_a_where_on_a_hand_written_predicate_is_left_to_verify() -> None:
    """The as-found estate's assay_results is filtered by a hand-written predicate that reads
    PROGRAMME_CODE: its probes' ``where: {programme: ...}`` stay valid (verify executes it)."""
    model = load_project(AS_FOUND).model
    assert model.datasets["assay_results"].row_filter.expression is not None
    assert any(p.where and p.dataset == "assay_results" for p in model.probes.values())


def test_probe_init_refuses_a_where_the_dataset_is_not_filtered_by(tmp_path: Path) -> None:
    root = estate(tmp_path, (POLICIES / "probes.yaml").read_text(), entitlements=BUSINESS_LINE)
    run = run_cli(
        [
            "probe",
            "init",
            "bench_chemist",
            "assay_results",
            str(root),
            "--where",
            "business_line=100",
        ]
    )
    assert run.returncode == 2
    assert "assay_results is not filtered by 'business_line'" in run.stderr


def test_a_probe_that_reaches_nothing_is_an_error(tmp_path: Path) -> None:
    root = estate(
        tmp_path,
        probe("owner: x\npersona: bench_chemist\ndataset: gene_annotations\nexpect: {}"),
        surfaces="reads: [gene_annotations]->reads: []",
    )
    with pytest.raises(InputError) as err:
        load_project(root)
    (only,) = err.value.diagnostics
    assert "no surface reaches gene_annotations, so the probe checks nothing" in only.message


# --------------------------------------------------------------------------------------------
# ACC404 against the model


#: (the model change, probe, surface, expected, actual, a model entry the finding names)
WIDENINGS = [
    (
        {
            "masks": "unmasked_for: [clinical_unblinded]->unmasked_for: [clinical_unblinded, "
            "cro_external]"
        },
        "cro_cannot_unmask_cns_subjects",
        "warehouse_agent",
        "masked",
        "clear",
        "masks.subject_pseudonym.unmasked_for (",
    ),
    (  # a change no probe covers: nothing fires
        {"entitlements": "IMM-310: [bench_chemist]->IMM-310: [bench_chemist, cro_external]"},
        None,
        None,
        None,
        None,
        None,
    ),
    (
        {
            "entitlements": "ONC-101: [bench_chemist, clinical_unblinded]->ONC-101: "
            "[bench_chemist, clinical_unblinded, cro_external]"
        },
        "cro_sees_no_oncology_variants",
        "lakehouse_agent",
        "denied",
        "clear",
        "entitlements.programme.ONC-101 (",
    ),
    (
        {
            "masks": 'free_text:\n    strategy: redact\n    replacement: "[redacted]"\n    '
            "unmasked_for: [clinical_unblinded]->free_text:\n    strategy: redact\n    "
            'replacement: "[redacted]"\n    unmasked_for: [clinical_unblinded, bench_chemist]'
        },
        "bench_chemist_reads_redacted_oncology_notes",
        "lakehouse_agent",
        "masked",
        "clear",
        "masks.free_text.unmasked_for (",
    ),
    (
        {"surfaces": 'runtime: "15.4"->runtime: "11.3"'},
        "pharmacologist_sees_cns_subjects",
        "lakehouse_agent",
        "clear",
        "empty",
        "surfaces.lakehouse_agent.runtime (",
    ),
]


@pytest.mark.parametrize(("change", "name", "surface", "expected", "actual", "names"), WIDENINGS)
def test_a_change_fails_the_probe_that_covers_it(
    tmp_path: Path,
    change: dict[str, str],
    name: str | None,
    surface: str | None,
    expected: str | None,
    actual: str | None,
    names: str | None,
) -> None:
    root = estate(tmp_path, (POLICIES / "probes.yaml").read_text(), **change)
    project = load_project(root)
    found = [f for f in lint_project(project) if f.rule == "ACC404"]
    if name is None:  # a change no probe covers: nothing fires
        assert found == []
        return
    hit = [f for f in found if f.object == f"probes.{name}"]
    assert hit, [f.message for f in found]
    f = next(f for f in hit if f" on {surface} " in f.message)
    owner = project.model.probes[name].owner
    assert f"(owner {owner})" in f.message
    assert f"expected {expected}, the model gives {actual}" in f.message
    assert names in f.message
    assert f.location == project.loc("probes", name, "expect", surface)
    assert owner in f.fix


def test_reference_probes_pass_and_as_found_fail_where_it_leaks() -> None:
    ok = evaluate(load_project(POLICIES).model)
    assert len(ok) == 7 and all(o.ok for o in ok)
    got = {
        (o.probe, o.surface): o.actual for o in evaluate(load_project(AS_FOUND).model) if not o.ok
    }
    assert got == {
        # the CRO collaborator through the no-catalog pipeline
        ("cro_cannot_unmask_cns_subjects", "variant_annotation"): "ungoverned",
        ("cro_sees_no_oncology_variants", "variant_annotation"): "ungoverned",
        ("pharmacologist_sees_cns_subjects", "variant_annotation"): "ungoverned",
        # the CURRENT_ROLE predicate: the model cannot tell (verify executes it)
        ("cro_cannot_unmask_cns_subjects", "warehouse_agent"): None,
        ("pharmacologist_sees_cns_subjects", "warehouse_agent"): None,
        ("bench_chemist_reads_redacted_oncology_notes", "warehouse_agent"): None,
        # runtime 14.3 under ABAC returns nothing
        ("cro_cannot_unmask_cns_subjects", "lakehouse_agent"): "empty",
        ("cro_sees_no_oncology_variants", "lakehouse_agent"): "empty",
        ("pharmacologist_sees_cns_subjects", "lakehouse_agent"): "empty",
        ("bench_chemist_reads_redacted_oncology_notes", "lakehouse_agent"): "empty",
    }


def test_an_undecidable_answer_is_a_finding_never_a_pass() -> None:
    project = load_project(AS_FOUND)
    (f,) = [
        f
        for f in lint_project(project)
        if f.rule == "ACC404"
        and f.object == "probes.pharmacologist_sees_cns_subjects"
        and " on warehouse_agent " in f.message
    ]
    assert "expected clear, and the model cannot tell" in f.message
    assert "datasets.assay_results.row_filter.expression.snowflake (" in f.message
    assert "accord verify" in f.message


# --------------------------------------------------------------------------------------------
# accord probe init


INIT_CASES = [
    (
        "cro_collaborator",
        "assay_results",
        ["--where", "programme=CNS-204", "--column", "SUBJECT_ID"],
    ),
    ("clinical_pharmacologist", "variant_calls", ["--where", "programme=CNS-204"]),
    ("bench_chemist", "assay_results_lake", ["--column", "notes"]),
    ("data_steward", "variant_calls", []),
]


INIT_RUNS = [
    pytest.param(base, *case, id=f"{base.name}-{case[0]}-{case[1]}")
    for base in (POLICIES, AS_FOUND)
    for case in INIT_CASES
    if case[0] in load_project(base).model.personas
]


@pytest.mark.parametrize(("base", "persona", "dataset", "options"), INIT_RUNS)
def test_probe_init_output_validates_and_matches_the_model(
    tmp_path: Path, base: Path, persona: str, dataset: str, options: list[str]
) -> None:
    run = run_cli(["probe", "init", persona, dataset, str(base), *options])
    assert run.returncode == 0, run.stderr
    root = estate(tmp_path, run.stdout, base=base)
    project = load_project(root)  # validates: every reaching surface has an entry
    (name,) = project.model.probes
    outcomes = evaluate(project.model, [name])
    assert outcomes
    decidable = [o for o in outcomes if o.actual is not None]
    assert all(o.ok for o in decidable)
    assert set(project.model.probes[name].expect) == {o.surface for o in outcomes}
    assert yaml.safe_load(run.stdout)["probes"][name]["persona"] == persona


def test_probe_init_refuses_unknown_names() -> None:
    run = run_cli(["probe", "init", "nobody", "assay_results", str(POLICIES)])
    assert run.returncode == 2
    assert "unknown persona 'nobody'" in run.stderr
    assert "Traceback" not in run.stderr


def test_schema_knows_probes_and_a2a() -> None:
    import jsonschema

    from accord.compiler.commands.schema import policy_schema

    schema = policy_schema()
    good = yaml.safe_load(probe(CRO_CNS))
    jsonschema.validate(good, schema)
    bad = yaml.safe_load(probe(CRO_CNS.replace("warehouse_agent: masked", "warehouse_agent: hid")))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            yaml.safe_load(probe(CRO_CNS.replace("owner: data-governance", ""))), schema
        )
    surface = {"surfaces": {"s": {"platform": "none", "a2a": {"url": "http://127.0.0.1:1/"}}}}
    jsonschema.validate(surface, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"surfaces": {"s": {"platform": "none", "a2a": {"uri": "x"}}}}, schema)


def test_probe_init_text_matches_the_library() -> None:
    model = load_project(POLICIES).model
    text = probe_init(model, "cro_collaborator", "variant_calls", where={"programme": "ONC-101"})
    assert "      lakehouse_agent: denied  # " in text
    assert text.startswith("probes:\n  cro_collaborator_variant_calls:\n")


#: a surface added in a pull request: a dashboard tool on the lakehouse reading the replica
#: (the shape of a BI service connecting as the caller through a SQL warehouse)
NEW_SURFACE = (
    "surfaces:\n->surfaces:\n  report_builder:\n    platform: databricks\n"
    "    reads: [assay_results_lake]\n    identity: caller\n    runtime: sql-warehouse\n"
)


def test_a_new_surface_reading_a_probed_fact_is_acc404_not_an_input_error(
    tmp_path: Path,
) -> None:
    """Issue 21 item 11: a new surface reads a governed table. validate and analyze still
    run (exit 0); lint names, per probe of that fact, the surface without an expect entry,
    located at the probe, with the model's disposition as the suggested entry."""
    root = estate(tmp_path, (POLICIES / "probes.yaml").read_text(), surfaces=NEW_SURFACE)
    project = load_project(root)  # no InputError
    for command in (["validate", str(root)], ["analyze", str(root)]):
        run = run_cli(command)
        assert run.returncode == 0, (command, run.stdout, run.stderr)
    findings = [
        f for f in lint_project(project) if f.rule == "ACC404" and "report_builder" in f.message
    ]
    text = (root / "probes.yaml").read_text().splitlines()
    got = []
    for f in findings:
        assert Path(f.location.file).name == "probes.yaml"
        line = text[f.location.line - 1]
        got.append((line.strip(), f.message.split(": ")[1], f.fix.split(" under ")[0]))
    #: (the probe's key line, the message's ask, the suggested entry)
    assert sorted(got) == [
        (
            "bench_chemist_reads_redacted_oncology_notes:",
            "say what surface report_builder should answer",
            "add `report_builder: masked`",
        ),
        (
            "cro_cannot_unmask_cns_subjects:",
            "say what surface report_builder should answer",
            "add `report_builder: masked`",
        ),
        (
            "pharmacologist_sees_cns_subjects:",
            "say what surface report_builder should answer",
            "add `report_builder: clear`",
        ),
    ]
    run = run_cli(["lint", str(root)])
    assert run.returncode == 1 and "say what surface report_builder should answer" in run.stdout


def test_the_suggested_entry_is_what_the_model_gives(tmp_path: Path) -> None:
    """Adding the entry ACC404 suggests makes the probe pass: lint is clean of ACC404."""
    root = estate(tmp_path, (POLICIES / "probes.yaml").read_text(), surfaces=NEW_SURFACE)
    project = load_project(root)
    text = (root / "probes.yaml").read_text()
    for f in lint_project(project):
        if f.rule != "ACC404":
            continue
        entry = f.fix.split("`")[1]
        name = f.object.split(".", 1)[1]
        head = f"  {name}:\n"
        at = text.index(head)
        expect = text.index("    expect:\n", at) + len("    expect:\n")
        text = text[:expect] + f"      {entry}\n" + text[expect:]
    (root / "probes.yaml").write_text(text)
    after = [f for f in lint_project(load_project(root)) if f.rule == "ACC404"]
    assert after == []


def test_probe_init_works_on_an_estate_whose_probes_are_incomplete(tmp_path: Path) -> None:
    root = estate(tmp_path, (POLICIES / "probes.yaml").read_text(), surfaces=NEW_SURFACE)
    run = run_cli(["probe", "init", "cro_collaborator", "assay_results", str(root)])
    assert run.returncode == 0, run.stderr
    expect = yaml.safe_load(run.stdout)["probes"]["cro_collaborator_assay_results"]["expect"]
    assert expect["report_builder"] == "filtered"


def test_probe_at_the_model_depth_imports_no_heavy_client() -> None:
    code = (
        "import sys\n"
        "from accord.compiler.cli import main\n"
        "for args in (['probe', 'policies'], ['probe', 'init', 'bench_chemist', 'assay_results']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('duckdb', 'snowflake', 'databricks', 'python_terraform', 'terraform')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stderr
