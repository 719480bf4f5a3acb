"""SQL written as a Jinja template (dbt models and macros, hand-written Jinja), made SQL that
:mod:`compiler.sqlscan` can read, with every offset unchanged.

The template syntax is read by jinja2's own lexer (``Environment.lexer.tokeniter``) and
checked by its parser (``Environment.parse``); nothing here tokenizes Jinja by hand. Each
construct is then replaced, in place and by text of the same length (newlines kept), so a
position in the SQL is the same line and column in the template file:

* ``{# comments #}`` and ``{% tags %}`` become spaces (a one-line ``{# accord: ignore ACC101
  why #}`` becomes the SQL comment ``-- accord: ignore ACC101 why``); ``{% raw %}`` keeps its
  content;
* ``{{ expression }}`` becomes an identifier (``__j1_``...) no longer than the expression: it
  stands for whatever the expression renders (a name, a literal inside quotes, an
  expression), and :meth:`Template.restore` puts the original text back in messages. The same
  expression (whatever its spacing) is the same identifier everywhere in the file, so
  ``{{masked_column}}`` in a signature names the parameter ``{{ masked_column }}`` reads in
  the body; an expression that is a whole token ends its identifier with spaces, one glued
  to a name or a quote (``{{ prefix }}_raw``) keeps its width with underscores. dbt calls that render
  nothing (``config()``, ``log()``, ``return()``, ``do``) become spaces;
* ``{% macro %}``, ``{% endmacro %}``, ``{% call %}`` and block ``{% set %}`` end a statement
  (dbt_snow_mask and dbt-tags macros hold one ``CREATE MASKING POLICY`` without a ``;``);
  other tags (``{% if %}``, ``{% for %}``...) end one when a statement keyword follows;
* an ``{% if %}`` with several branches gives several *variants* of the SQL, variant k
  keeping branch k of every ``if`` (the last one where an ``if`` has fewer), so the SQL of
  every branch is linted.

jinja2 is imported only when a file holds template syntax: linting plain YAML or SQL never
pays for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

#: dbt calls inside ``{{ }}`` that render to nothing
_SILENT_CALLS = frozenset({"config", "log", "return", "do", "print"})
#: tags that always end a statement
_BOUNDARY_TAGS = frozenset({"macro", "endmacro", "call", "endcall", "endset", "materialization"})
#: dbt's own block tags, which plain Jinja does not know
_DBT_BLOCKS = ("materialization", "test", "docs", "snapshot", "data_test")
#: most branches followed: a template with more gets the last branch for the rest
_MAX_VARIANTS = 8


def has_template_syntax(text: str) -> bool:
    """Whether ``text`` holds Jinja syntax (``{{``, ``{%`` or ``{#``)."""
    return "{{" in text or "{%" in text or "{#" in text


@dataclass(frozen=True)
class Construct:
    """One template construct: its span in the file, kind and source text."""

    start: int
    end: int  # exclusive
    kind: str  # "expression" | "tag" | "comment"
    source: str
    tag: str = ""  # the tag name of a {% tag %}, or the called function of {{ f(...) }}

    @property
    def described(self) -> str:
        text = " ".join(self.source.split())
        if len(text) > 60:
            text = text[:57] + "..."
        if self.kind == "tag":
            return f"the {{% {self.tag} %}} tag `{text}`" if self.tag else f"the tag `{text}`"
        return f"the template expression `{text}`"


@dataclass
class Template:
    """The SQL variants of a template, its statement breaks and constructs, or its error."""

    variants: list[str]
    breaks: list[tuple[int, bool]]
    constructs: list[Construct]
    #: (offset, message) of a template syntax error; the variants are then empty
    error: tuple[int, str] | None = None
    placeholders: dict[str, str] = field(default_factory=dict)
    #: placeholder -> the function its expression calls ("" when it calls none)
    calls: dict[str, str] = field(default_factory=dict)

    def restore(self, text: str) -> str:
        """``text`` (a message, a name) with every placeholder back to its template source."""
        for placeholder in sorted(self.placeholders, key=len, reverse=True):
            if placeholder in text:
                text = text.replace(placeholder, self.placeholders[placeholder])
        return text

    def constructs_in(self, start: int, end: int) -> list[Construct]:
        return [c for c in self.constructs if c.start < end and c.end > start]


def _environment() -> Any:
    import jinja2
    from jinja2.ext import Extension

    class DbtBlocks(Extension):  # type: ignore[misc]
        """dbt's block tags (``{% test %}``, ``{% materialization %}``, ...) parsed as blocks
        whose content is kept, so a dbt file is a valid template."""

        tags: ClassVar[set[str]] = set(_DBT_BLOCKS)

        def parse(self, parser: Any) -> Any:
            token = next(parser.stream)
            while parser.stream.current.type != "block_end":
                next(parser.stream)
            body = parser.parse_statements((f"name:end{token.value}",), drop_needle=True)
            return jinja2.nodes.Scope(body, lineno=token.lineno)

    return jinja2.Environment(extensions=[DbtBlocks])


def _located(source: str, tokens: Iterator[tuple[int, str, str]]) -> Iterator[tuple[int, str, str]]:
    """jinja2's tokens with their offsets: each token's value is found where the previous one
    ended, past the whitespace the lexer strips (``{%-``)."""
    pos = 0
    for _lineno, kind, value in tokens:
        if not value:
            yield pos, kind, value
            continue
        while not source.startswith(value, pos) and pos < len(source) and source[pos].isspace():
            pos += 1
        if not source.startswith(value, pos):  # not expected: fall back to a search
            found = source.find(value, pos)
            pos = found if found >= 0 else pos
        yield pos, kind, value
        pos += len(value)


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def _error_offset(source: str, lineno: int | None) -> int:
    if not lineno or lineno <= 1:
        return 0
    offset = 0
    for _ in range(lineno - 1):
        found = source.find("\n", offset)
        if found < 0:
            return offset
        offset = found + 1
    return offset


def read_template(text: str) -> Template:
    """Read ``text`` as a Jinja template (see the module documentation)."""
    from jinja2 import TemplateSyntaxError

    # jinja2 turns \r\n into \n in the data it returns; a space keeps every offset.
    source = text.replace("\r", " ")
    env = _environment()
    try:
        env.parse(source)
        raw_tokens = list(env.lexer.tokeniter(source, None))
    except TemplateSyntaxError as err:
        return Template([], [], [], (_error_offset(source, err.lineno), err.message or str(err)))
    constructs: list[Construct] = []
    # (start, end, kind, inner name tokens) per construct, from the token stream
    opened: tuple[int, str] | None = None
    names: list[tuple[str, str]] = []
    for offset, kind, value in _located(source, iter(raw_tokens)):
        if kind in ("variable_begin", "block_begin", "comment_begin"):
            opened, names = (offset, kind), []
        elif kind in ("variable_end", "block_end", "comment_end") and opened is not None:
            start, begin = opened
            end = offset + len(value.rstrip())
            what = {"variable_begin": "expression", "block_begin": "tag"}.get(begin, "comment")
            called = len(names) >= 2 and names[1] == ("operator", "(")
            tag = names[0][1] if names and (what == "tag" or called) else ""
            constructs.append(Construct(start, end, what, source[start:end], tag))
            opened = None
        elif kind in ("raw_begin", "raw_end"):
            constructs.append(Construct(offset, offset + len(value), "tag", value, "raw"))
        elif opened is not None and kind in ("name", "operator"):
            names.append((kind, value))
    return _render(source, constructs)


def _render(source: str, constructs: list[Construct]) -> Template:
    chars = list(source)
    breaks: list[tuple[int, bool]] = []
    placeholders: dict[str, str] = {}
    calls: dict[str, str] = {}
    numbers: dict[str, int] = {}
    for c in constructs:
        _blank(chars, c.start, c.end)
        if c.kind == "comment" and "accord:" in c.source and "\n" not in c.source:
            # {# accord: ignore ACC101 why #} is a suppression, as -- accord: ignore is
            inner = c.source[2:-2].strip("-")
            chars[c.start : c.end] = list(("--" + inner).ljust(c.end - c.start))
        if c.kind == "expression" and c.tag not in _SILENT_CALLS:
            # one expression, one name: `{{masked_column}}` in a signature and
            # `{{ masked_column }}` in the body are the same identifier
            written = " ".join(c.source.split())
            n = numbers.setdefault(_normalised(c.source), len(numbers) + 1)
            first_line = source[c.start : c.end].split("\n", 1)[0]
            width = len(first_line)
            name = f"__j{n}_"
            if len(name) <= width:
                alone = _stands_alone(source, c.start, c.end)
                name = name.ljust(width, " " if alone else "_")
                key = name.rstrip(" ")
                placeholders.setdefault(key, written)
                calls.setdefault(key, c.tag)
            else:
                name = "_" * width
            chars[c.start : c.start + width] = list(name)
        elif c.kind == "tag":
            always = c.tag in _BOUNDARY_TAGS or (c.tag == "set" and "=" not in c.source)
            breaks.append((c.start, always))
            breaks.append((c.end, always))
    base = "".join(chars)
    variants = [base]
    blocks = _if_blocks(constructs)
    width = min(max((len(b) for b in blocks), default=1), _MAX_VARIANTS)
    if width > 1:
        variants = []
        for k in range(width):
            variant = list(base)
            for branches in blocks:
                keep = min(k, len(branches) - 1)
                for i, (start, end) in enumerate(branches):
                    if i != keep:
                        _blank(variant, start, end)
            variants.append("".join(variant))
    return Template(variants, sorted(breaks), constructs, None, placeholders, calls)


def _normalised(expression: str) -> str:
    """An expression's text without its delimiters' whitespace control and spacing."""
    inner = expression[2:-2].strip("-+").strip()
    return " ".join(inner.split())


#: characters that, next to an expression, make its rendering part of a longer name or literal
_GLUED = frozenset("_.$@\"'`")


def _stands_alone(source: str, start: int, end: int) -> bool:
    """Whether the expression at ``source[start:end]`` is a whole token (not glued to a name,
    a quote or a dot), so its placeholder may end before the expression's own width."""
    before = source[start - 1] if start > 0 else " "
    after = source[end] if end < len(source) else " "
    return not any(ch.isalnum() or ch in _GLUED for ch in (before, after))


def _if_blocks(constructs: list[Construct]) -> list[list[tuple[int, int]]]:
    """Every ``{% if %}`` block with two or more branches, as the spans of their content."""
    out: list[list[tuple[int, int]]] = []
    # (opening tag, branches so far, start of the current branch)
    stack: list[tuple[str, list[tuple[int, int]], int]] = []
    for c in constructs:
        if c.kind != "tag":
            continue
        if c.tag in ("if", "for"):
            stack.append((c.tag, [], c.end))
        elif c.tag in ("elif", "else") and stack and stack[-1][0] == "if":
            tag, branches, start = stack[-1]
            branches.append((start, c.start))
            stack[-1] = (tag, branches, c.end)
        elif c.tag in ("endif", "endfor") and stack:
            tag, branches, start = stack.pop()
            branches.append((start, c.start))
            if tag == "if" and len(branches) > 1:
                out.append(branches)
    return out
