"""``ALTER TABLE`` statements of a plain file answered without their tokens
(compiler/sqlscan/fused.py) give exactly what reading them from their tokens gives.

Every file is scanned with the fused path and without it (and without the reader's shapes
at all), and the statements (every field, the ones equality leaves out included, with their
types) and errors (message, place, span) compared: the compiled SQL of a generated estate, of
``policies/`` and of each example project, and files of random plain ``ALTER TABLE``
statements (names equal to the reader's keywords in either case, names that are no keyword,
lower-case keywords, odd whitespace, several actions, statements that fail or are no policy
action), each shape repeated with other names so that the fused path answers most of them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import accord.compiler.sqlscan.readers as readers
import accord.compiler.sqlscan.scanner as scanner
from accord.compiler.sqlscan import fused, scan
from tests.conftest import ROOT, fast_sample
from tests.test_sqlscan_read_shapes import (
    KEYWORDS,
    PROJECTS,
    _actions,
    _dialect_of,
    _estate_sql,
    _pieces,
    _rendered,
)


def _scan(text: str, path: str, dialect: str | None, mode: str) -> tuple:
    scanner.FUSED = mode == "fused"
    readers.SHAPES = mode != "tokens"
    try:
        result = scan(text, path, dialect)
    finally:
        scanner.FUSED = True
        readers.SHAPES = True
    errors = [(e, e.span) for e in result.errors]
    return result.statements, errors, result.dialect


def assert_same(text: str, path: str, dialect: str | None) -> None:
    fast = _scan(text, path, dialect, "fused")
    for mode in ("shapes", "tokens"):
        slow = _scan(text, path, dialect, mode)
        assert fast == slow
        for a, b in zip(fast[0], slow[0], strict=True):
            assert _fields(a) == _fields(b)
            assert [type(v) for v in vars(a).values()] == [type(v) for v in vars(b).values()]


def _fields(stmt: object) -> dict:
    """Every field; the line index (one per scan) by its line starts."""
    out = dict(vars(stmt))
    lines = out.pop("_lines")
    out["_lines"] = None if lines is None else lines.starts
    return out


def _answered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the statements the fused path answered (not its checks)."""
    count = [0]
    real = fused.Fused.answer

    def answer(self, chunk):  # type: ignore[no-untyped-def]
        used = chunk[2] in self.checked
        found = real(self, chunk)
        if found is not None and used:
            count[0] += 1
        return found

    monkeypatch.setattr(fused.Fused, "answer", answer)
    return count


def test_the_dispatch_it_relies_on_holds() -> None:
    assert fused.USABLE


def test_generated_estate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answered = _answered(monkeypatch)
    files = _estate_sql(tmp_path / "estate")
    for path, text in sorted(files.items()):
        assert_same(text, path, _dialect_of(path))
    assert answered[0] > 1000  # the attachments were answered without their tokens


@pytest.mark.parametrize("project", PROJECTS)
def test_projects(project: str) -> None:
    files = _rendered(ROOT / project)
    for path, text in sorted(files.items()):
        assert_same(text, path, _dialect_of(path))


#: plain names only (no quote can start): keywords the reader asks about, in either case,
#: and names that are no keyword (holes of the shape)
PLAIN_NAMES = ["C", "c1", "t_0", "Sub", "x9", "_u", "MASKINGX", "Pol", "Accessor"]


def _plain_name(rng: random.Random) -> str:
    if rng.random() < 0.35:
        word = rng.choice(KEYWORDS)
        return word.lower() if rng.random() < 0.3 else word
    return rng.choice(PLAIN_NAMES)


def _plain_action(rng: random.Random, n: int) -> list[str]:
    """An action of a plain file: every action of the reader's shapes test but tags."""
    return rng.choice([a for a in _actions(n) if "SET TAG" not in a])


def _plain_template(rng: random.Random) -> tuple[str, int]:
    pieces, holes = _pieces(rng, _plain_action)
    out = [rng.choice(["\n", "\n\n", "\n  "])]
    for piece in pieces:
        out.append(piece + rng.choice([" ", " ", " ", "  ", "\n  "]))
    return "".join(out).rstrip(" ").rstrip("\n"), holes


def _holes(dialect: str) -> list[str]:
    """The plain names and reader keywords that are holes of a shape in ``dialect`` (a word
    that is no sqlglot keyword nor the prefix of one): statements of one shape differ there,
    keywords the reader asks about among them."""
    from accord.compiler.sqlscan.shapes import _dialect
    from accord.compiler.sqlscan.tokens import tokenizer_class

    shapes = _dialect(tokenizer_class(dialect))
    assert shapes is not None
    words = [*PLAIN_NAMES, *KEYWORDS, *(k.lower() for k in KEYWORDS)]
    return [w for w in words if shapes.hole(w)]


@pytest.mark.parametrize("seed", fast_sample(range(6), keep={0}))
@pytest.mark.parametrize("dialect", ["snowflake", "databricks"])
def test_random_plain_statements(seed: int, dialect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    answered = _answered(monkeypatch)
    holes = _holes(dialect)
    assert {"MODIFY", "MASKING"} <= set(holes)
    templates = []
    for _ in range(30):
        template, count = _plain_template(rng)
        # each name either a fixed word (a keyword, or not) or a hole drawn per statement
        fixed = [_plain_name(rng) if rng.random() < 0.3 else None for _ in range(count)]
        templates.append((template, fixed))
    chunks = ["-- a header; with a semicolon\nCREATE TABLE x (a INT);"]
    for _ in range(1500):
        template, fixed = rng.choice(templates)
        names = [rng.choice(holes) if f is None else f for f in fixed]
        chunks.append(template.format(*names) + ";")
    text = "".join(chunks) + "\n"
    assert_same(text, f"{dialect}/050_attachments.sql", dialect)
    assert answered[0] > 300


def test_a_shape_whose_answer_differs_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check before a shape is used: an answer that differs from the statements read
    from the tokens (here every line one too far) is never given."""
    real = fused.Fused.answer

    def wrong(self, chunk):  # type: ignore[no-untyped-def]
        found = real(self, chunk)
        if found is None:
            return None
        from dataclasses import replace

        return [replace(s, line=s.line + 1) for s in found]

    lines = ["CREATE TABLE x (a INT);"]
    lines += [
        f"ALTER TABLE d.s.t_{i} MODIFY COLUMN c_{i} SET MASKING POLICY g.p.m;" for i in range(300)
    ]
    text = "\n".join(lines) + "\n"
    expected = _scan(text, "snowflake/050_attachments.sql", "snowflake", "tokens")
    monkeypatch.setattr(fused.Fused, "answer", wrong)
    assert _scan(text, "snowflake/050_attachments.sql", "snowflake", "fused") == expected
