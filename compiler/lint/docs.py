"""Generate ``docs/rules.md``, and the lint guide's rule table, from the registered rules.

    python -m accord.compiler.lint.docs            # write docs/rules.md and docs/lint.md's rule table
    python -m accord.compiler.lint.docs --check    # exit 1 if either is stale

The lint guide's table (``docs/lint.md``) stands between the lines :data:`TABLE_START` and
:data:`TABLE_END`; its links are relative to ``docs/``, beside ``rules.md``.

Every registered rule is included (rules added by other ``*_rules.py`` modules too), in id
order, with its severity, where it applies (policy files, SQL files) and its page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from accord.compiler.lint.engine import registered_rules, rule_doc, rule_sources

DEFAULT_OUT = Path("docs/rules.md")
TABLE_PAGE = Path("docs/lint.md")
#: the lines that enclose the lint guide's rule table
TABLE_START = "<!-- rule table: generated from the rules by `make docs` -->"
TABLE_END = "<!-- end of rule table -->"
#: the sections every rule page has, in order
SECTIONS = ("What it does", "Why is this bad?", "Example", "How to fix")
_WHERE = {"policy": "policy files", "sql": "SQL files"}


def doc_sections(doc: str) -> tuple[str, dict[str, str]]:
    """A rule page's summary (its first paragraph) and its ``## `` sections by title."""
    head, *chunks = doc.split("\n## ")
    sections = {}
    for chunk in chunks:
        title, _, body = chunk.partition("\n")
        sections[title.strip()] = body.strip()
    return " ".join(head.split()), sections


def render_docs() -> str:
    rules = registered_rules()
    lines = [
        "# accord lint rules",
        "",
        "<!-- Generated from the rules' docstrings by `python -m accord.compiler.lint.docs`",
        "     (`make docs`). Do not edit by hand: a test fails when this file is stale. -->",
        "",
        "`accord lint` checks policy directories (YAML) and hand-written policy SQL. Errors fail",
        "the lint (and `accord compile`) by default; warnings fail it with `--fail-on warning`.",
        'Suppress a finding with a reason: `ignore: {ACC301: "why"}` on a `masks`, `datasets`,',
        "`indexes` or `surfaces` entry, or `-- accord: ignore ACC201 why` on the line before a",
        "SQL statement. `accord rules ID` (or `accord rules NAME`) prints one page.",
        "",
        "A policy statement accord could not analyse is never passed over: it is an ACC001",
        "finding. Select rules with `--select` / `--ignore` or `[tool.accord]` in",
        "`pyproject.toml` (or `accord.toml`): `select`, `ignore`, `per-file-ignores`, `fail-on`,",
        "`policies` (the default path), `exclude` and `force-exclude`; see [Lint](lint.md#configuration). A",
        "suppression that suppresses nothing is ACC002.",
        "",
        "| id | name | severity | applies to | summary |",
        "|---|---|---|---|---|",
    ]
    for r in rules:
        summary, _ = doc_sections(rule_doc(r.id))
        where = ", ".join(_WHERE[s] for s in rule_sources(r.id))
        lines.append(
            f"| [{r.id}](#{r.id.lower()}-{r.name}) | `{r.name}` | {r.severity} | {where} | "
            f"{summary} |"
        )
    for r in rules:
        summary, sections = doc_sections(rule_doc(r.id))
        where = ", ".join(_WHERE[s] for s in rule_sources(r.id))
        lines += ["", f"## {r.id} {r.name}", "", f"**{r.severity}** · applies to {where}", ""]
        lines += [summary, ""]
        for title, body in sections.items():
            lines += [f"### {title}", "", body, ""]
        while lines[-1] == "":
            lines.pop()
    return "\n".join(lines) + "\n"


def rule_table() -> str:
    """The lint guide's table of rules: id (linked to its page), name, severity, summary."""
    lines = ["| rule | name | severity | what it finds |", "|---|---|---|---|"]
    for r in registered_rules():
        summary, _ = doc_sections(rule_doc(r.id))
        anchor = f"rules.md#{r.id.lower()}-{r.name}"
        lines.append(f"| [{r.id}]({anchor}) | `{r.name}` | {r.severity} | {summary} |")
    return "\n".join(lines) + "\n"


def with_rule_table(page: str) -> str:
    """``page`` with the text between its table markers replaced by :func:`rule_table`."""
    head, start, rest = page.partition(TABLE_START + "\n")
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise ValueError(f"the page has no {TABLE_START!r} ... {TABLE_END!r} lines")
    return head + start + rule_table() + end + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accord.compiler.lint.docs", description=__doc__
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="default: docs/rules.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument(
        "--table-page",
        type=Path,
        default=TABLE_PAGE,
        help="the page holding the rule table (default: docs/lint.md)",
    )
    args = parser.parse_args(argv)
    wanted = {args.out: render_docs()}
    if args.table_page.exists():
        wanted[args.table_page] = with_rule_table(args.table_page.read_text(encoding="utf-8"))
    if args.check:
        stale = False
        for path, text in wanted.items():
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                print(f"{path} is stale: run `make docs`", file=sys.stderr)
                stale = True
        return 1 if stale else 0
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(registered_rules())} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
