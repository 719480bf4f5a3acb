"""Every rule is documented in the ruff manner, and docs/rules.md is generated from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.compiler.lint.checks import PAGES, REGISTRY, rule_page
from accord.compiler.lint.checks import rule as policy_rule
from accord.compiler.lint.docs import SECTIONS, doc_sections, main, render_docs, with_rule_table
from accord.compiler.lint.engine import load_rules, registered_rules, rule_doc, rule_sources
from accord.compiler.model.rules import FAMILIES, RULE_TABLE
from tests.conftest import ROOT

#: every rule of the format's table, and ACC205 added by accord
EXPECTED = {r.id for r in RULE_TABLE}


def test_rules_are_registered_under_the_table_ids() -> None:
    ids = [r.id for r in registered_rules()]
    assert set(ids) == EXPECTED
    assert ids == sorted(ids)


@pytest.mark.parametrize("rule_id", sorted(EXPECTED))
def test_rule_page_has_every_section(rule_id: str) -> None:
    summary, sections = doc_sections(rule_doc(rule_id))
    assert summary.endswith(".") and len(summary) < 100
    assert list(sections)[: len(SECTIONS)] == list(SECTIONS)
    assert all(sections[s].strip() for s in SECTIONS)
    assert "```" in sections["Example"]


def test_sql_checks_of_documented_rules_point_at_the_page() -> None:
    for rule_id, checks in REGISTRY.items():
        sources = {c.source for c in checks}
        if sources == {"policy", "sql"}:
            sql_doc = next(c.doc for c in checks if c.source == "sql")
            assert "## " not in sql_doc, f"{rule_id}: the page lives on the policy check"


def test_docs_are_up_to_date() -> None:
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == render_docs(), "docs/rules.md is stale: run `make docs`"


def test_the_lint_guide_rule_table_is_up_to_date() -> None:
    current = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    assert current == with_rule_table(current), (
        "docs/lint.md's rule table is stale: run `make docs`"
    )
    for rule in ("ACC001", "ACC101", "ACC706"):
        assert f"| [{rule}](rules.md#{rule.lower()}-" in current


def test_docs_check_mode(tmp_path: Path) -> None:
    out, readme = tmp_path / "rules.md", tmp_path / "lint.md"
    readme.write_text(
        "# x\n<!-- rule table: generated from the rules by `make docs` -->\n"
        "<!-- end of rule table -->\nafter\n",
        encoding="utf-8",
    )
    args = ["--out", str(out), "--table-page", str(readme)]
    assert main(["--check", *args]) == 1
    assert main(args) == 0
    assert main(["--check", *args]) == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# x\n") and text.endswith("<!-- end of rule table -->\nafter\n")
    assert "| [ACC101](rules.md#acc101-current-role) | `current-role` | error |" in text
    readme.write_text(text.replace("| error |", "| warning |", 1), encoding="utf-8")
    assert main(["--check", *args]) == 1


def test_every_rule_module_is_a_family_of_the_table() -> None:
    """Rules are registered by importing the families the rule table names: a module of the
    package no row names would never run."""
    import pkgutil

    import accord.compiler.lint.rules as rules

    modules = {info.name for info in pkgutil.iter_modules(rules.__path__)}
    assert modules == set(FAMILIES) == {m.__name__.rsplit(".", 1)[-1] for m in rules.FAMILIES}


def test_every_rule_lives_in_its_family() -> None:
    """The family on each row is where its checks (or its page) are defined, so an incremental
    lint that imports a rule's family has its checks; every row has a check or a page, never
    both."""
    load_rules()
    for row in RULE_TABLE:
        module = f"accord.compiler.lint.rules.{row.family}"
        checks = REGISTRY.get(row.id, [])
        assert checks or row.id in PAGES, row.id
        assert not (checks and row.id in PAGES), row.id
        for c in checks:
            assert c.check.__module__ == module, row.id
        if row.id in PAGES:
            assert PAGES[row.id].source == "policy"


def test_a_check_outside_its_family_is_refused() -> None:
    """The guard behind the test above: registering ACC101 (family identity) from this module,
    or a page for it, is refused and registers nothing."""
    before = list(REGISTRY.get("ACC101", []))
    with pytest.raises(ValueError, match="family 'identity'"):

        @policy_rule("ACC101")
        def stray(ctx: object) -> list[object]:
            return []

    with pytest.raises(ValueError, match="family 'identity'"):

        @rule_page("ACC101")
        class Stray:
            """A page."""

    assert REGISTRY.get("ACC101", []) == before and "ACC101" not in PAGES
    with pytest.raises(KeyError):
        rule_page("ACC999")


def test_drift_rules_have_pages_and_no_check() -> None:
    """ACC701-ACC708 are raised by `accord drift`: lint documents them (policy files) and runs
    nothing for them."""
    load_rules()
    drift = [r.id for r in RULE_TABLE if r.family == "drift"]
    assert drift == [f"ACC70{i}" for i in range(1, 9)]
    for rule_id in drift:
        assert rule_id not in REGISTRY
        assert rule_sources(rule_id) == ["policy"]
        assert rule_doc(rule_id) == PAGES[rule_id].doc
