"""Compiled output equals the reviewed golden files (regenerate with ``make golden``)."""

from __future__ import annotations

import pytest

from tests.golden_cases import CASES, GOLDEN, render_case


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_matches_golden(case: str) -> None:
    rendered = render_case(case)
    on_disk = {
        p.relative_to(GOLDEN / case).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted((GOLDEN / case).rglob("*"))
        if p.is_file()
    }
    assert sorted(rendered) == sorted(on_disk), "file set differs: run `make golden` and review"
    for rel, text in rendered.items():
        assert text == on_disk[rel], f"{case}/{rel} differs from golden: run `make golden`"
