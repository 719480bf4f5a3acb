"""`accord verify` on the SQL the compiler really writes in its other styles: Unity Catalog
ABAC and Snowflake tag-based masking. The unmutated output passes; a group removed from an
EXCEPT list, a tag value changed, or a tag assignment dropped is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.compiler.core.outdir import write_tree
from accord.compiler.verify.run import verify
from accord.targets.render import render_files
from tests.golden_cases import reference, with_styles

STYLES = {
    "abac": {"databricks": "abac"},
    "tag": {"snowflake": "tag"},
}


def compile_style(style: str, out: Path):
    project = with_styles(reference(), **STYLES[style])
    write_tree(out, render_files(project, "all"))
    return project


@pytest.mark.parametrize("style", sorted(STYLES))
def test_compiled_style_verifies(style: str, tmp_path: Path) -> None:
    project = compile_style(style, tmp_path / "out")
    report = verify(project, str(tmp_path / "out"))
    # the reference probes see what the style switch does to the surfaces: under ABAC the
    # lakehouse agent's runtime 15.4 returns nothing (ACC401), so its probes answer `empty`
    probes = [m for m in report.mismatches if m.kind == "probe"]
    assert [m for m in report.mismatches if m.kind != "probe"] == []
    if style == "abac":
        assert probes and all("on lakehouse_agent:" in m.message for m in probes)
        assert {m.actual for m in probes} == {"empty"}
    else:
        assert probes == []
    assert report.checks >= 50


# (id, style, file, old, new, expected (kind, persona, dataset, platform, column))
MUTATIONS = [
    (
        "abac-group-removed-from-except",
        "abac",
        "databricks/050_policies.sql",
        "TO `account users`\nEXCEPT `data-stewards`",
        "TO `account users`",
        ("rows", "data_steward", "assay_results_lake", "databricks"),
    ),
    (
        "abac-mask-tag-value-changed",
        "abac",
        "databricks/045_tags.sql",
        "ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET TAGS "
        "('accord_mask' = 'subject_pseudonym');",
        "ALTER TABLE omics.variants.calls ALTER COLUMN subject_id SET TAGS "
        "('accord_mask' = 'free_text');",
        ("column", "bench_chemist", "variant_calls", "databricks"),
    ),
    (
        "abac-row-key-tag-value-changed",
        "abac",
        "databricks/045_tags.sql",
        "ALTER TABLE omics.variants.calls ALTER COLUMN programme_code SET TAGS "
        "('accord_row_key' = 'programme');",
        "ALTER TABLE omics.variants.calls ALTER COLUMN programme_code SET TAGS "
        "('accord_row_key' = 'programmes');",
        ("rows", "cro_collaborator", "variant_calls", "databricks"),
    ),
    (
        "snowflake-tag-assignment-dropped",
        "tag",
        "snowflake/050_attachments.sql",
        "ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN NOTES SET TAG "
        "GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT = 'free_text';",
        "",
        ("column", "cro_collaborator", "assay_results", "snowflake"),
    ),
]


@pytest.mark.parametrize(
    ("case", "style", "file", "old", "new", "expect"), MUTATIONS, ids=[m[0] for m in MUTATIONS]
)
def test_mutation_of_compiled_style_is_caught(case, style, file, old, new, expect, tmp_path):
    out = tmp_path / "out"
    project = compile_style(style, out)
    path = out / file
    text = path.read_text()
    assert old in text, f"{old!r} not in {file}"
    path.write_text(text.replace(old, new, 1))
    report = verify(project, str(out))
    found = {(m.kind, m.persona, m.dataset, m.platform) for m in report.mismatches}
    assert expect in found, sorted(found)
