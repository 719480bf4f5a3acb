"""``ALTER TABLE`` statements read once per shape (compiler/sqlscan/readers/shapes.py) give
exactly what reading each statement gives.

Every file is scanned twice, with the shape path and without it, and the statements (every
field) and errors (message, place, span) compared: the compiled SQL of ``policies/``, of each
example project, of a generated estate, every ``.sql`` file under ``tests/``, and files of
random ``ALTER TABLE`` statements in odd shapes (quoted names, names equal to the keywords the
reader asks about, lower-case keywords, comments, different whitespace, several actions,
statements that fail), each shape repeated with other names so that the shapes are used.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import accord.compiler.sqlscan.readers as readers
from accord.compiler.sqlscan import scan
from tests.conftest import ROOT, fast_sample


def _scan(text: str, path: str, dialect: str | None, shapes: bool) -> tuple:
    readers.SHAPES = shapes
    try:
        result = scan(text, path, dialect)
    finally:
        readers.SHAPES = True
    errors = [(e, e.span) for e in result.errors]
    return result.statements, errors, result.dialect


def assert_same(text: str, path: str, dialect: str | None) -> None:
    fast = _scan(text, path, dialect, True)
    slow = _scan(text, path, dialect, False)
    assert fast == slow
    # field by field, the ones equality leaves out included
    for a, b in zip(fast[0], slow[0], strict=True):
        assert vars(a).keys() == vars(b).keys()
        assert [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]


def _used(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the fields answered from a shape's recipes: filled by the reader
    (``shapes._fill``) or by the functions the fused reading makes of them (``shapes.filler``)."""
    from accord.compiler.sqlscan.readers import shapes

    filled = [0]
    real_fill = shapes._fill
    real_filler = shapes.filler

    def fill(recipe, texts):  # type: ignore[no-untyped-def]
        filled[0] += 1
        return real_fill(recipe, texts)

    def filler(recipe):  # type: ignore[no-untyped-def]
        made = real_filler(recipe)

        def counted(texts):  # type: ignore[no-untyped-def]
            filled[0] += 1
            return made(texts)

        return counted

    monkeypatch.setattr(shapes, "_fill", fill)
    monkeypatch.setattr(shapes, "filler", filler)
    return filled


def _dialect_of(path: str) -> str:
    return "databricks" if "databricks" in Path(path).parts else "snowflake"


def _rendered(root: Path) -> dict[str, str]:
    from accord.compiler.model.validate import load_project
    from accord.targets.render import render_files, selected_platforms

    project = load_project(root)
    files: dict[str, str] = {}
    for platform in selected_platforms(project, "all"):
        files.update(render_files(project, platform))
    return {p: t for p, t in files.items() if p.endswith(".sql")}


def _estate_sql(root: Path) -> dict[str, str]:
    """The compiled SQL of a generated estate of 300 datasets written at ``root``."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from lint_bench import estate, write_estate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    write_estate(root, estate(300, principals=30, programmes=20, defects=False))
    return _rendered(root)


def test_generated_estate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    used = _used(monkeypatch)
    files = _estate_sql(tmp_path / "estate")
    for path, text in sorted(files.items()):
        assert_same(text, path, _dialect_of(path))
    assert used[0] > 1000  # the attachments were read by shape


#: the policy projects of the repository (``examples/sql`` holds hand-written SQL, no model)
PROJECTS = [
    "policies",
    *sorted({f"examples/{p.parent.name}" for p in ROOT.glob("examples/*/*.yaml")}),
]


@pytest.mark.parametrize("project", PROJECTS)
def test_projects(project: str) -> None:
    files = _rendered(ROOT / project)
    for path, text in sorted(files.items()):
        assert_same(text, path, _dialect_of(path))


def test_sql_files_under_tests_and_examples() -> None:
    paths = sorted([*(ROOT / "tests").rglob("*.sql"), *(ROOT / "examples").rglob("*.sql")])
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert_same(text, str(path.relative_to(ROOT)), None)
        assert_same(text, str(path.relative_to(ROOT)), "snowflake")


#: words the ALTER TABLE reader asks about; names are drawn from them too
KEYWORDS = [
    "MODIFY", "ALTER", "CHANGE", "COLUMN", "SET", "UNSET", "MASKING", "POLICY", "USING",
    "FORCE", "ADD", "DROP", "ROW", "ACCESS", "ALL", "POLICIES", "ON", "FILTER", "MASK",
    "COLUMNS", "TAGS", "TAG", "IF", "EXISTS", "TABLE", "VIEW",
]  # fmt: skip
NAMES = ["C", "c1", "t_0", "Sub", '"Quoted Name"', '"set"', '"a""b"', "x9"]


def _name(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.35:
        word = rng.choice(KEYWORDS)
        return word.lower() if rng.random() < 0.3 else word
    return rng.choice(NAMES)


def _dotted(rng: random.Random, parts: int) -> str:
    return ".".join(_name(rng) for _ in range(parts))


def _kw(rng: random.Random, words: str) -> str:
    return " ".join(w.lower() if rng.random() < 0.2 else w for w in words.split())


def _actions(n: int) -> list[list[str]]:
    """The actions a random statement draws from, each a list of pieces, names as ``{k}``
    holes (k counts up from ``n``)."""
    c, d = f"{{{n}}}", f"{{{n + 3}}}"
    p = f"{{{n + 1}}}.{{{n + 2}}}"
    choices = [
        ["ADD ROW ACCESS POLICY", p, "ON (", c, ")"],
        ["ADD ROW ACCESS POLICY", p, "ON (", c, ",", d, ")"],
        ["DROP ROW ACCESS POLICY", p],
        ["DROP ALL ROW ACCESS POLICIES"],
        ["SET ROW FILTER", p, "ON (", c, ")"],
        ["DROP ROW FILTER"],
        ["MODIFY COLUMN", c, "SET MASKING POLICY", p],
        ["MODIFY", c, "SET MASKING POLICY", p, "USING (", c, ",", d, ")"],
        ["ALTER COLUMN", c, "SET MASKING POLICY", p, "FORCE"],
        ["MODIFY COLUMN", c, "UNSET MASKING POLICY"],
        ["ALTER COLUMN", c, "SET MASK", p],
        ["ALTER COLUMN", c, "SET MASK", p, "USING COLUMNS (", c, ")"],
        ["ALTER", c, "DROP MASK"],
        ["MODIFY COLUMN", c, "SET TAG", p, "= 'v'"],
        ["CHANGE COLUMN", c, "SET MASKING POLICY", p],
        ["MODIFY (", c, "SET MASKING POLICY", p, ")"],
        ["MODIFY COLUMN", c, "SET MASKING POLICY"],  # fails: no policy
        ["MODIFY COLUMN", c, "SET MASKING POLICY", p, "USING"],  # fails
        ["ADD COLUMN", c, "INT"],  # not a policy action: kind other
        ["SET MASKING POLICY", p],  # not an action the reader knows
    ]
    return choices


def _action(rng: random.Random, n: int) -> list[str]:
    return rng.choice(_actions(n))


def _pieces(
    rng: random.Random, action: Callable[[random.Random, int], list[str]]
) -> tuple[list[str], int]:
    """An ``ALTER TABLE`` statement of one to three actions drawn by ``action``, as pieces,
    keywords in random case; and its number of holes."""
    pieces = [_kw(rng, "ALTER TABLE")]
    if rng.random() < 0.15:
        pieces.append(_kw(rng, "IF EXISTS"))
    pieces.append("{0}.{1}.{2}")
    holes = 3
    for k in range(rng.choice([1, 1, 1, 2, 3])):
        if k:
            pieces.append(",")
        drawn = action(rng, holes)
        holes += 4
        pieces.extend(p if p.startswith("{") or "'" in p else _kw(rng, p) for p in drawn)
    return pieces, holes


def _statement_template(rng: random.Random) -> tuple[str, int]:
    pieces, holes = _pieces(rng, _action)
    out = []
    for piece in pieces:
        gap = rng.choice([" ", " ", " ", "  ", "\n  ", " /* c */ ", "\n-- note\n"])
        out.append(gap + piece)
    return "".join(out).lstrip(), holes


@pytest.mark.parametrize("seed", fast_sample(range(6), keep={0}))
@pytest.mark.parametrize("dialect", ["snowflake", "databricks"])
def test_random_statements(seed: int, dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    used = _used(monkeypatch)
    templates = [_statement_template(rng) for _ in range(40)]
    lines = ["CREATE TABLE x (a INT);"]
    for _ in range(600):
        template, holes = rng.choice(templates)
        names = [_name(rng) for _ in range(holes)]
        lines.append(template.format(*names) + ";")
    text = "\n".join(lines) + "\n"
    assert_same(text, f"{dialect}/050_attachments.sql", dialect)
    # the plain files (no comments) go through the shape tokenizer too
    plain = "\n".join(line for line in lines if "--" not in line and "/*" not in line) + "\n"
    assert_same(plain, f"{dialect}/050_attachments.sql", dialect)
    assert used[0] > 100


def test_cursor_words_are_upper_word_of_each_token() -> None:
    """The cursor's words, asked once per text, are :func:`_upper_word` of every token: every
    token type with texts that start with an ASCII or other letter, ``_``, a digit, ``$``, or
    are empty, and the tokens of the compiled attachments."""
    from sqlglot.tokens import Token, TokenType

    from accord.compiler.sqlscan.tokens import Cursor, _upper_word, tokenize

    texts = ["", "_", "_x", "é", "ébc", "1a", "$x", "Ab", "ß", "\u0660", "a b", "Ab"]
    toks = [Token(tt, text) for text in texts for tt in TokenType]
    toks += tokenize(
        "ALTER TABLE a.b MODIFY COLUMN \"c\" SET MASKING POLICY 'p';", "snowflake"
    ).tokens
    assert Cursor(toks, "").words == [_upper_word(t) for t in toks]


def test_a_recipe_made_a_function_fills_as_the_recipe_does() -> None:
    """``shapes.filler(r)(texts) == shapes._fill(r, texts)`` for every kind of recipe: a token's
    text, a constant, a joined text and a tuple of them, nested."""
    from accord.compiler.sqlscan.readers import shapes

    texts = ["ALTER", "TABLE", "db.s.t", "col", "p"]
    recipes = [
        ("t", 2),
        ("c", "SET MASKING POLICY"),
        ("c", None),
        ("c", True),
        ("j", ((False, "x."), (True, 3), (False, "."), (True, 4))),
        ("j", ((True, 0), (True, 1))),
        ("u", (("t", 3), ("c", 7), ("j", ((True, 4), (False, "!"))))),
        ("u", (("u", (("t", 0),)), ("u", ()))),
    ]
    for recipe in recipes:
        assert shapes.filler(recipe)(texts) == shapes._fill(recipe, texts), recipe
        assert type(shapes.filler(recipe)(texts)) is type(shapes._fill(recipe, texts))
