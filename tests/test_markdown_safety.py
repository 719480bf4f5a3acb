"""Values a pull request controls cannot become markup in accord's Markdown reports
(compiler/core/markdown.py; `accord diff --format markdown`, `accord analyze --format markdown`).

Each hostile value is rendered and then checked for what GitHub would act on: HTML, a comment
that hides the rest, mentions and references, links and autolinks, emphasis, a table cell or
code span broken out of, a new line."""

from __future__ import annotations

import re

import pytest

from accord.compiler.core import markdown
from tests.cli import run_cli
from tests.estates import DIFF_BASE, edited, write_estate

HOSTILE = [
    "<!-- the rest of the comment is hidden",
    "<img src=https://evil.example/p.png>",
    "@security-team please approve",
    "fixes #12",
    "[click](https://evil.example)",
    "https://evil.example/x",
    "www.evil.example",
    "a `code` span ` breaking",
    "cell | break | out",
    "line\nbreak\r\n# heading",
    "_emphasis_ and **bold** and ~~gone~~",
    "back\\slash",
    "$\\sqrt{x}$",
]


def _markup(rendered: str) -> list[str]:
    """What in ``rendered`` GitHub would read as markup (character references are inert)."""
    rendered = re.sub(r"&(?:#\d+|[a-z]+);", "", rendered)
    found = []
    for pattern, what in [
        (r"<", "html"),
        (r"@\w", "mention"),
        (r"#\d", "reference"),
        (r"\]\(", "link"),
        (r"://|www\.", "autolink"),
        (r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|\*|~~", "emphasis"),
        (r"\|", "cell break"),
        (r"[\r\n]", "new line"),
        (r"`", "code span"),
        (r"\$", "math"),
    ]:
        if re.search(pattern, rendered):
            found.append(what)
    return found


@pytest.mark.parametrize("value", HOSTILE)
def test_text_is_inert(value: str) -> None:
    assert _markup(markdown.text(value)) == []


@pytest.mark.parametrize("value", HOSTILE)
def test_a_code_span_cannot_be_left(value: str) -> None:
    span = markdown.code(value)
    fence = re.match("`+", span).group(0)  # type: ignore[union-attr]
    inner = span[len(fence) : -len(fence)]
    assert span.endswith(fence) and fence not in inner
    assert "\n" not in span and "\r" not in span
    assert re.search(r"(?<!\\)\|", span) is None  # a pipe would end the table cell


def test_ordinary_names_are_unchanged() -> None:
    for name in ("cro_collaborator", "policies/probes.yaml:31", "CNS-204", "masks.free_text"):
        assert markdown.text(name) == name


def test_a_hostile_entitlement_value_in_a_diff_comment(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`accord diff --format markdown`, as a pull request comment: a granted value that holds a
    comment opener, a mention and a link renders as text."""
    value = "P9 <!-- @org/admins [x](https://evil.example) |"

    def hostile(e: dict) -> None:
        grants = e["entitlements"]["programme"]
        grants[value] = grants.pop("P2")

    before = edited(DIFF_BASE, hostile)
    after = edited(before, lambda e: e["entitlements"]["programme"][value].append("chemist"))
    base = write_estate(tmp_path / "base", before)
    head = write_estate(tmp_path / "head", after)
    code, out, err = run_cli(["diff", str(head), "--base", f"dir:{base}", "--format", "markdown"])
    assert code in (0, 1), err
    assert "gains programme P9" in out
    # code spans are literal text (GitHub renders nothing inside one): what stays outside them
    prose = re.sub(r"(`+)(?:(?!\1).)+\1", "", out)
    assert prose.count("<!--") == 1 and out.startswith("<!-- accord diff -->")
    assert "@org" not in prose and "](" not in prose and "https://" not in prose
    for row in (line for line in out.splitlines() if line.startswith("| ")):
        assert len(re.findall(r"(?<!\\)\|", row)) == row.count("|") - row.count("\\|")
