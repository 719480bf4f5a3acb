"""SQL written as a Jinja template (dbt models and macros, hand-written Jinja), made SQL that
:mod:`compiler.sqlscan` can read, with every offset unchanged.

The template syntax is read by jinja2's own lexer (``Environment.lexer.tokeniter``) and
checked by its parser (``Environment.parse``); nothing here tokenizes Jinja by hand. The
environment is the one dbt builds (``get_environment`` in dbt-labs/dbt-common,
``dbt_common/clients/jinja.py``): the ``jinja2.ext.do`` and ``jinja2.ext.loopcontrols``
extensions (``{% do %}``, ``{% break %}``, ``{% continue %}``) and dbt's block tags
(``materialization``, ``docs``, ``test``, and the ``snapshot`` / ``data_test`` blocks dbt's
own block reader takes out of a file). Each
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
  every branch is linted; past ``_MAX_VARIANTS`` branches a branch is not read, and one
  holding a policy-looking statement is in :attr:`Template.unread` (reported as ACC001);
* an expression made of string literals (``{{ "CURRENT_ROLE()" }}``) is template text: its
  value is written in its place (one value per variant for ``{{ "a" if x else "b" }}``), and
  a statement keyword after any expression begins a statement (``{{ header }}`` on the line
  before a ``CREATE``);
* a ``{{ expression }}`` standing for an object kind (``alter {{ materialization }} t ...``,
  as GitLab's and dbt packages' masking macros write it) has a small set of values: the
  string constants its ``{% set %}`` assigns when they all are object kinds, else ``table``
  and ``view`` where it follows ``ALTER`` and precedes a name. Variant k writes value k (the
  last one where there are fewer), so the statement is linted for each kind.

jinja2 is imported only when a file holds template syntax: linting plain YAML or SQL never
pays for it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

#: dbt calls inside ``{{ }}`` that render to nothing
_SILENT_CALLS = frozenset({"config", "log", "return", "do", "print"})
#: tags that always end a statement
_BOUNDARY_TAGS = frozenset({"macro", "endmacro", "call", "endcall", "endset", "materialization"})
#: dbt's own block tags, which plain Jinja does not know
_DBT_BLOCKS = ("materialization", "test", "docs", "snapshot", "data_test")
#: most branches followed: a branch past it is not read, and a policy-looking statement in
#: one is reported (ACC001), never skipped silently
_MAX_VARIANTS = 32
#: words that make a branch's text look like a policy statement
_POLICY_LOOKING = re.compile(
    r"\b(?:CREATE|ALTER)\b[^;]*?\b(?:POLICY|MASK|FILTER|FUNCTION)\b", re.IGNORECASE | re.DOTALL
)
#: the extensions dbt enables (dbt_common/clients/jinja.py, ``get_environment``)
_DBT_EXTENSIONS = ("jinja2.ext.do", "jinja2.ext.loopcontrols")
#: object kinds an expression may stand for, in the order variants take them
_OBJECT_KINDS = ("table", "view", "materialized view", "dynamic table", "external table")
#: the kinds an ``alter {{ x }} <name>`` stands for when the template does not say
_ALTER_KINDS = ("table", "view")
#: an expression that is one bare name (``{{ materialization }}``)
_BARE_NAME = re.compile(r"\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}")
#: ALTER just before an expression
_ALTER_BEFORE = re.compile(r"(?:^|[^A-Za-z0-9_$])alter\s+$", re.IGNORECASE)
#: words after ``alter {{ x }}`` that show it is not an object kind (``alter {{ x }} policy``)
_NOT_A_NAME_AFTER = frozenset(
    {"masking", "row", "access", "policy", "function", "tag", "if", "set", "unset"}
)


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
    #: (offset, branch number, branches, most followed) of each ``{% if %}`` branch past the most variants
    #: followed that holds a policy-looking statement: not read, so reported
    unread: list[tuple[int, int, int, int]] = field(default_factory=list)

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

    return jinja2.Environment(extensions=[*_DBT_EXTENSIONS, DbtBlocks])


def _constants(node: Any) -> list[str] | None:
    """The string constants an assigned expression can take (``"view" if x else "table"``),
    or None when it can take another value."""
    from jinja2 import nodes

    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, nodes.CondExpr) and node.expr2 is not None:
        first, second = _constants(node.expr1), _constants(node.expr2)
        return None if first is None or second is None else first + second
    return None


def _literal_values(env: Any, c: Construct) -> tuple[str, ...]:
    """The strings an expression made of string literals renders (``{{ "CURRENT_ROLE()" }}``,
    ``{{ "a" if x else "b" }}``): template text that is read as SQL, never a name. ()
    when the expression is anything else."""
    if "'" not in c.source and '"' not in c.source:
        return ()
    from jinja2 import TemplateSyntaxError, nodes

    try:
        body = env.parse(c.source).body
    except (TemplateSyntaxError, RecursionError):
        return ()
    if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
        return ()
    values = _constants(body[0].nodes[0])
    if not values:
        return ()
    # a line break in a value would move every later line: read it as a space
    return tuple(re.sub(r"[\r\n\t\f\v]", " ", v) for v in dict.fromkeys(values))


def _assigned_kinds(ast: Any) -> dict[str, tuple[str, ...]]:
    """Names every ``{% set %}`` of which assigns object kinds only, with those kinds."""
    from jinja2 import nodes

    found: dict[str, list[str] | None] = {}
    for node in ast.find_all(nodes.Assign):
        if not isinstance(node.target, nodes.Name):
            continue
        name = node.target.name
        values = _constants(node.node)
        before = found.get(name, [])
        found[name] = None if values is None or before is None else before + values
    out: dict[str, tuple[str, ...]] = {}
    for name, values in found.items():
        kinds = {v.strip().lower() for v in values or ()}
        if kinds and kinds <= set(_OBJECT_KINDS):
            out[name] = tuple(k for k in _OBJECT_KINDS if k in kinds)
    return out


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
    """Read ``text`` as a Jinja template (see the module documentation). A template nested
    deeper than jinja2's parser can follow (it recurses once per level of ``{% if %}`` or
    parenthesis) is a template error, as a syntax error is."""
    try:
        return _read_template(text)
    except RecursionError:
        return Template(
            [],
            [],
            [],
            (
                _deepest(text),
                "it nests too deeply (tags or parentheses inside one another) for accord's "
                "template reader, which follows Python's recursion limit "
                f"({sys.getrecursionlimit()} nested calls); flatten it or split it into macros",
            ),
        )


def _deepest(text: str) -> int:
    """The offset where ``text`` first nests deepest in block tags and brackets, counted
    roughly (an opening tag or bracket in, a closing one out): where to point at a template
    too deep to read."""
    depth = deepest = at = 0
    for m in re.finditer(
        r"\{%-?\s*(end)?(if|for|macro|call|filter|set|block)\b|[([{]|[)\]}]", text
    ):
        token = m.group(0)
        if token in "([{":
            depth += 1
        elif token in ")]}" or m.group(1):
            depth -= 1
        elif m.group(2) != "set":
            depth += 1
        if depth > deepest:
            deepest, at = depth, m.start()
    return at


def _read_template(text: str) -> Template:
    from jinja2 import TemplateSyntaxError

    # jinja2 turns \r\n into \n in the data it returns; a space keeps every offset.
    source = text.replace("\r", " ")
    env = _environment()
    try:
        ast = env.parse(source)
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
    literals = {
        c.start: values
        for c in constructs
        if c.kind == "expression" and (values := _literal_values(env, c))
    }
    return _render(source, constructs, _assigned_kinds(ast), literals)


def _kinds_of(
    c: Construct, source: str, chars: list[str], assigned: dict[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """The object kinds the expression ``c`` stands for, or () when it is not a kind."""
    bare = _BARE_NAME.fullmatch(c.source)
    if bare is not None and bare.group(1) in assigned:
        return assigned[bare.group(1)]
    if not _ALTER_BEFORE.search("".join(chars[max(0, c.start - 40) : c.start])):
        return ()
    after = re.match(r"\s+([A-Za-z_]+|\"|\{\{)", source[c.end :])
    if after is None or after.group(1).lower() in _NOT_A_NAME_AFTER:
        return ()
    return _ALTER_KINDS


def _render(
    source: str,
    constructs: list[Construct],
    assigned: dict[str, tuple[str, ...]],
    literals: dict[int, tuple[str, ...]],
) -> Template:
    chars = list(source)
    breaks: list[tuple[int, bool]] = []
    placeholders: dict[str, str] = {}
    calls: dict[str, str] = {}
    numbers: dict[str, int] = {}
    #: (offset, width, values) of each expression that stands for an object kind
    choices: list[tuple[int, int, tuple[str, ...]]] = []
    for c in constructs:
        kinds = _kinds_of(c, source, chars, assigned) if c.kind == "expression" else ()
        kinds = literals.get(c.start, kinds)
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
            if kinds and max(len(k) for k in kinds) <= width:
                choices.append((c.start, width, kinds))
            # what an expression renders may start a statement (`{{ header }}` on the line
            # before a CREATE): a statement keyword after it begins one
            breaks.append((c.end, False))
        elif c.kind == "tag":
            always = c.tag in _BOUNDARY_TAGS or (c.tag == "set" and "=" not in c.source)
            breaks.append((c.start, always))
            breaks.append((c.end, always))
    base = "".join(chars)
    variants = [base]
    blocks = _if_blocks(constructs)
    widest = max([len(b) for b in blocks] + [len(v) for _, _, v in choices], default=1)
    width = min(widest, _MAX_VARIANTS)
    unread = [
        (
            start + len(source[start:end]) - len(source[start:end].lstrip()),
            i + 1,
            len(branches),
            _MAX_VARIANTS,
        )
        for branches in blocks
        for i, (start, end) in enumerate(branches)
        if i >= _MAX_VARIANTS and _POLICY_LOOKING.search(source, start, end)
    ]
    if width > 1 or choices:
        variants = []
        for k in range(width):
            variant = list(base)
            for branches in blocks:
                keep = min(k, len(branches) - 1)
                for i, (start, end) in enumerate(branches):
                    if i != keep:
                        _blank(variant, start, end)
            for start, room, values in choices:
                variant[start : start + room] = list(values[min(k, len(values) - 1)].ljust(room))
            variants.append("".join(variant))
    return Template(variants, sorted(breaks), constructs, None, placeholders, calls, unread)


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
