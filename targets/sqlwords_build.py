"""Writes ``targets/sqlwords.py``: sqlglot's answers to the quoting question, computed once.

``python -m accord.targets.sqlwords_build`` (``make sqlwords``) after sqlglot's pin changes;
``tests/test_sqlwords.py`` fails while the file differs from what this computes with the
installed sqlglot. Never imported by a command.

What it computes, per platform (sqlglot's Snowflake and Databricks dialects):

* ``KEYWORDS``: every word of the dialect tokenizer's keywords (what
  ``targets.sql._keywords`` reads from the tokenizer class);
* ``SPECIAL``: the plain words (letters, digits and ``_``, not starting with a digit) that are
  neither such a keyword nor a documented reserved word (``targets/reserved.py``) and still do
  not read back as a plain column in ``SELECT word FROM t`` (the parser takes them for a
  function without parentheses, or refuses them). They are found by asking sqlglot's parser
  (``targets.sql.prime_names``, the question a name is asked at run time) about every word in
  :func:`vocabulary`: every string and name in sqlglot's own source, its tokenizers' keywords,
  its parsers' tables and expression classes, each in upper, lower, capitalised and written
  case. A word the parser treats by its text must be spelled somewhere in that source.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PLATFORMS = ("snowflake", "databricks")
OUT = Path(__file__).with_name("sqlwords.py")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _source_words() -> set[str]:
    """Every word of a string constant and every name in sqlglot's Python source."""
    import sqlglot

    words: set[str] = set()
    for path in sorted(Path(sqlglot.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words.update(_WORD.findall(node.value))
            elif isinstance(node, ast.Name):
                words.add(node.id)
            elif isinstance(node, ast.Attribute):
                words.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                words.add(node.name)
            elif (isinstance(node, ast.keyword) and node.arg) or isinstance(node, ast.arg):
                words.add(node.arg)
    return words


def _table_words() -> set[str]:
    """The words sqlglot's tables hold: tokenizer keywords, the parsers', tokenizers' and
    dialects' tables, token types, expression classes and their SQL names."""
    from sqlglot import exp
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import TokenType

    words: set[str] = set()
    for name in ("snowflake", "databricks", "spark", "spark2", "hive"):
        dialect = Dialect.get_or_raise(name)
        words |= {w for k in dialect.tokenizer_class.KEYWORDS for w in k.split()}
        for owner in (dialect.parser_class, dialect.tokenizer_class, type(dialect)):
            for attr in dir(owner):
                table = getattr(owner, attr, None)
                if isinstance(table, dict | set | frozenset | list | tuple):
                    words |= {w for k in table if isinstance(k, str) for w in _WORD.findall(k)}
    words |= {t.name for t in TokenType}
    for value in vars(exp).values():
        if isinstance(value, type) and issubclass(value, exp.Expression):
            words.add(value.__name__)
            words.add(_CAMEL.sub("_", value.__name__))
            if issubclass(value, exp.Func):
                words |= {w for n in value.sql_names() for w in _WORD.findall(n)}
    return words


def vocabulary() -> list[str]:
    """Every word the generated table was checked on, each in four cases."""
    base = _source_words() | _table_words()
    words = set()
    for w in base:
        words |= {w, w.upper(), w.lower(), w.capitalize()}
    return sorted(w for w in words if _WORD.fullmatch(w))


def compute() -> dict[str, object]:
    """The table's contents with the installed sqlglot."""
    import sqlglot

    from accord.targets import sql

    words = vocabulary()
    keywords = {p: sorted(sql._sqlglot_keywords(p)) for p in PLATFORMS}
    special: dict[str, list[str]] = {}
    with sql.parser_only():
        for platform in PLATFORMS:
            sql._QUOTED.clear()
            sql.prime_names(words, platform)
            special[platform] = sorted(
                w
                for w in words
                if sql._QUOTED[(w, platform)]
                and w.upper() not in keywords[platform]
                and sql._settled(w, platform) is None
            )
            sql._QUOTED.clear()
    return {
        "version": sqlglot.__version__,
        "vocabulary": len(words),
        "keywords": keywords,
        "special": special,
    }


def _words_literal(words: list[str], indent: str) -> str:
    lines, line = [], indent
    for w in words:
        item = f'"{w}",'
        if len(line) + len(item) + 1 > 99 and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += item + " "
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)


def render(table: dict[str, object]) -> str:
    """The text of ``targets/sqlwords.py`` for ``table``."""
    keywords: dict[str, list[str]] = table["keywords"]  # type: ignore[assignment]
    special: dict[str, list[str]] = table["special"]  # type: ignore[assignment]
    out = [
        '"""sqlglot\'s answers to the quoting question, per platform (generated: do not edit).',
        "",
        "Written by ``python -m accord.targets.sqlwords_build`` (``make sqlwords``) from sqlglot",
        f"{table['version']}, checked on {table['vocabulary']} words; ``targets.sql`` reads it",
        "only while that sqlglot version is installed, and ``tests/test_sqlwords.py`` fails while",
        "it differs from what the installed sqlglot answers. See ``targets/sqlwords_build.py``.",
        '"""',
        "",
        "# fmt: off",
        f'SQLGLOT_VERSION = "{table["version"]}"',
        "",
        "#: every word of the dialect tokenizer's keywords",
        "KEYWORDS = {",
    ]
    for p in PLATFORMS:
        out += [f'    "{p}": frozenset(', "        {", _words_literal(keywords[p], " " * 12)]
        out += ["        }", "    ),"]
    out += [
        "}",
        "",
        "#: plain words, neither keyword nor reserved, that do not read back as a plain column",
        "SPECIAL = {",
    ]
    for p in PLATFORMS:
        out += [f'    "{p}": frozenset(', "        {", _words_literal(special[p], " " * 12)]
        out += ["        }", "    ),"]
    out += ["}", "# fmt: on", ""]
    return "\n".join(out)


def main() -> None:
    OUT.write_text(render(compute()), encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
