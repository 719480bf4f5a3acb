"""The SQL a Databricks Python notebook passes to ``spark.sql(...)``, at its own positions.

Notebooks that set up row filters and masks often do it from Python cells:

    spark.sql(f\"\"\"
      CREATE OR REPLACE FUNCTION {catalog}.sec.ssn_mask(ssn STRING)
      RETURN CASE WHEN is_account_group_member('hr') THEN ssn ELSE '***' END
    \"\"\")

Each Python cell is parsed with :mod:`ast` (never by hand); every call ``<x>.sql(<arg>)``
(``spark.sql``, ``sqlContext.sql``, ``session.sql``, ``sqlQuery=`` too) is read. A string
literal or an f-string argument is written into the notebook's SQL view at the same line and
column, so findings point into the ``.py`` file. An f-string's ``{expression}`` becomes a name
of the same length (``{catalog}`` reads ``_catalog_``), as a template's unresolved construct
does.

What a reader resolves without running code is resolved too (:class:`Resolved`): a name
assigned a string at the top level of a cell (the assignment before the call, across the
notebook's cells in order; a name also bound in a loop, a function or by ``+=`` is not
followed), ``+`` of strings, implicit concatenation, ``.format(...)`` and ``%`` of a string, an
f-string whose holes are such names, ``.strip()`` and ``textwrap.dedent``. A hole whose value
is not a string constant becomes a name (``_catalog_``), as an f-string's does. The result is
scanned at the position of the first string it came from.

What cannot be read is reported (ACC001) when its text holds a policy statement, never
skipped in silence: a literal whose text differs from its value (backslash escapes), a cell
that is not valid Python, an argument computed at run time (a name bound in a loop, a
function's result) whose source names a policy statement.
"""

from __future__ import annotations

import ast
import io
import re
import string
import textwrap
import tokenize
from collections import Counter
from dataclasses import dataclass, field

#: words that make an unreadable string worth reporting (a policy statement may be in it)
_POLICY = re.compile(r"\b(POLICY|MASK|ROW\s+FILTER|FUNCTION)\b", re.IGNORECASE)
_PREFIX = re.compile(r"^([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")


@dataclass(frozen=True)
class SqlString:
    """The SQL of one ``.sql(...)`` call: ``start``/``end`` offsets of its text in the file."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Resolved:
    """SQL built from strings of the notebook (a name, ``+``, ``.format``): its text, scanned
    at ``start``, the offset of the first string it came from."""

    start: int
    text: str


@dataclass(frozen=True)
class Unreadable:
    """A call (or a cell) whose SQL cannot be read at its positions."""

    offset: int
    reason: str


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _offset(text: str, starts: list[int], lineno: int, col_bytes: int) -> int:
    """The character offset of ``ast``'s (1-based line, UTF-8 byte column)."""
    start = starts[lineno - 1]
    end = starts[lineno] if lineno < len(starts) else len(text)
    line = text[start:end]
    return start + len(line.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))


def _placeholders(body: str) -> str | None:
    """An f-string's body with each ``{expression}`` replaced by a name of its length and
    ``{{``/``}}`` by a brace and a space; None when the braces do not balance."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if body.startswith("{{", i) or body.startswith("}}", i):
            out.append(ch + " ")
            i += 2
        elif ch == "{":
            depth, j = 1, i + 1
            while j < len(body) and depth:
                depth += {"{": 1, "}": -1}.get(body[j], 0)
                j += 1
            if depth:
                return None
            inner = re.sub(r"\W", "_", body[i + 1 : j - 1])
            out.append("_" + inner + "_")
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _string_sql(text: str, start: int, end: int) -> str | None:
    """The SQL of the string literal at ``text[start:end]``, of the same length as its body
    (the text between the quotes), or None when its value is not its text."""
    source = text[start:end]
    m = _PREFIX.match(source)
    if m is None or not source.endswith(m.group(2)):
        return None
    prefix, quote = m.group(1).lower(), m.group(2)
    body = source[len(m.group(0)) : len(source) - len(quote)]
    if "b" in prefix or ("\\" in body and "r" not in prefix):
        return None
    if "f" in prefix:
        return _placeholders(body)
    return body


def _cells(python: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each cell: the text between ``# COMMAND ----------`` lines."""
    bounds = [0]
    for m in re.finditer(r"^# COMMAND -{4,}[ \t]*$", python, re.MULTILINE):
        bounds += [m.start(), m.end()]
    bounds.append(len(python))
    return [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]


#: a call of a ``.sql`` method, as text: which cells are worth parsing
SQL_CALL = re.compile(r"\.sql\s*\(")
#: the keyword of ``SparkSession.sql``'s first parameter
_QUERY_KEYWORD = "sqlQuery"
#: ``%`` conversions: ``%s``, ``%(name)s``, ``%d``...; ``%%`` is a percent sign
_PERCENT = re.compile(r"%(?:\((\w+)\))?[-#0 +]*\d*(?:\.\d+)?[sdifr]|%%")
#: how deep names may refer to names
_MAX_DEPTH = 32


class _Unresolved(Exception):
    """An argument accord cannot resolve without running the notebook: why, and the source
    text it comes from (to tell whether it holds a policy statement)."""

    def __init__(self, reason: str, source: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.source = source


@dataclass
class _Value:
    """A string and where it came from: its pieces, each (offset of its text in the file, or
    None for a hole or a number; text)."""

    pieces: list[tuple[int | None, str]]

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.pieces)

    @property
    def start(self) -> int | None:
        return next((o for o, _ in self.pieces if o is not None), None)

    def whole(self, text: str) -> _Value:
        """``text``, computed from this value: at its first string when it is one piece of
        the same length, else at its first string, positions beyond it approximate."""
        if len(self.pieces) == 1 and len(text) == len(self.pieces[0][1]):
            return _Value([(self.pieces[0][0], text)])
        return _Value([(self.start, text)])


#: a hole's constant that is a name (``main``, ``gov.sec``) reads as a placeholder name of the
#: hole's own length, so positions are kept; other constants (SQL text) are substituted
_NAME_LIKE = re.compile(r"[\w.`\"]*")


def _layout(python: str, pieces: list[tuple[int | None, str]]) -> str | None:
    """The pieces at their own offsets, from the first one on: gaps between strings blank
    (newlines kept), a hole filling the gap it sits in on one line; None when they do not
    fit (pieces out of order, a hole before the first string or after the last one)."""
    if not pieces or pieces[0][0] is None or pieces[-1][0] is None:
        return None
    out: list[str] = []
    cursor: int | None = None
    holes = ""
    for offset, text in pieces:
        if offset is None:
            holes += text
            continue
        if cursor is not None:
            gap = python[cursor:offset]
            if offset < cursor:
                return None
            if holes:
                if "\n" in gap or len(holes) > len(gap) or not re.fullmatch(r"\w+", holes):
                    return None
                out.append(holes.ljust(len(gap), "_"))
            else:
                out.append("".join(c if c == "\n" else " " for c in gap))
        out.append(text)
        holes = ""
        cursor = offset + len(text)
    return "".join(out)


def _hole(source: str) -> str:
    """The name a hole reads as: ``catalog`` -> ``_catalog_`` (as an f-string's ``{catalog}``)."""
    return "_" + re.sub(r"\W", "_", source) + "_"


@dataclass
class _Notebook:
    """The notebook's Python: where each name is bound, and the top-level assignments."""

    python: str
    starts: list[int]
    bindings: Counter[str] = field(default_factory=Counter)
    #: name -> [(offset, value)] of its top-level ``name = value`` assignments, in order
    assigned: dict[str, list[tuple[int, ast.expr]]] = field(default_factory=dict)
    #: name -> the source of every value assigned to it anywhere (a loop, a function too)
    sources: dict[str, list[str]] = field(default_factory=dict)

    def offset(self, node: ast.AST) -> int:
        return _offset(self.python, self.starts, node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def source(self, node: ast.AST) -> str:
        end = _offset(self.python, self.starts, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.python[self.offset(node) : end]

    def add(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            self.sources.setdefault(name.id, []).append(self.source(node.value))
            if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                # a loop over strings: what the loop variable holds is what it iterates
                held = [self.source(node.iter)]
                held += [
                    " ".join(self.sources.get(n.id, []))
                    for n in ast.walk(node.iter)
                    if isinstance(n, ast.Name)
                ]
                for name in ast.walk(node.target):
                    if isinstance(name, ast.Name):
                        self.sources.setdefault(name.id, []).extend(held)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                self.bindings[node.id] += 1
            elif isinstance(node, ast.arg):
                self.bindings[node.arg] += 1
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self.bindings[node.name] += 1
                self.sources.setdefault(node.name, []).append(self.source(node))
            elif isinstance(node, ast.alias):
                self.bindings[(node.asname or node.name).split(".")[0]] += 1
            elif isinstance(node, ast.Global | ast.Nonlocal):
                for name in node.names:
                    self.bindings[name] += 2  # rebound elsewhere: never followed
        for stmt in tree.body:
            target, value = None, None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                target, value = stmt.target, stmt.value
            if isinstance(target, ast.Name) and value is not None:
                self.assigned.setdefault(target.id, []).append((self.offset(stmt), value))

    # ---------------------------------------------------------------------------- values

    def lookup(self, name: ast.Name, at: int, in_function: bool, depth: int) -> _Value:
        assigned = self.assigned.get(name.id, [])
        sources = " ".join(self.sources.get(name.id, []))
        if not assigned:
            where = (
                "only in a loop, a function or a block, not at the top level of a cell"
                if sources
                else "in this notebook"
            )
            raise _Unresolved(f"`{name.id}` is assigned {where}", sources)
        if self.bindings[name.id] != len(assigned):
            raise _Unresolved(
                f"`{name.id}` is also bound in a loop, a function or by an augmented "
                "assignment, so its value is known only when the notebook runs",
                sources,
            )
        before = [(o, v) for o, v in assigned if o < at]
        if in_function:
            if len(assigned) != 1:
                raise _Unresolved(
                    f"`{name.id}` is assigned more than once and read in a function", sources
                )
            before = assigned
        if not before:
            raise _Unresolved(f"`{name.id}` is not assigned before this call", sources)
        offset, value = before[-1]
        return self.value(value, offset, in_function=False, depth=depth + 1)

    def literal(self, node: ast.Constant | ast.JoinedStr, at: int, fn: bool, depth: int) -> _Value:
        """A string literal or f-string (implicitly concatenated ones too): each literal at its
        own offset when its holes read as names of their length, else the whole at its first."""
        source = self.source(node)
        if "\\" in source:
            raise _Unresolved("a string in it has backslash escapes", source)
        parts: list[str] = []
        substituted = False
        for part in node.values if isinstance(node, ast.JoinedStr) else [node]:
            if isinstance(part, ast.FormattedValue):
                text, constant = self.hole(part.value, at, fn, depth)
                substituted = substituted or constant
                parts.append(text)
            elif isinstance(part, ast.Constant):
                parts.append(str(part.value))
        start = self.offset(node)
        m = _PREFIX.match(source)
        value = "".join(parts)
        if not substituted:
            pieces = self.tokens(start, source)
            if pieces is not None:
                return _Value(pieces)
        return _Value([(start + (len(m.group(0)) if m else 0), value)])

    def tokens(self, start: int, source: str) -> list[tuple[int | None, str]] | None:
        """The string tokens of ``source`` (at ``start``) as pieces, holes as names."""

        pieces: list[tuple[int | None, str]] = []
        wrapped = "(" + source + ")"  # its later lines are continuation lines
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(wrapped).readline))
        except (tokenize.TokenError, SyntaxError):
            return None
        local = [s - 1 for s in _line_starts(wrapped)]
        skip = (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT)
        for tok in tokens[1:]:
            if tok.type in skip or (tok.type == tokenize.OP and tok.string == ")"):
                continue
            if tok.type != tokenize.STRING:
                return None  # an f-string tokenized in parts (Python 3.12): not followed here
            a = local[tok.start[0] - 1] + tok.start[1]
            b = local[tok.end[0] - 1] + tok.end[1]
            sql = _string_sql(source, a, b)
            if sql is None:
                return None
            body = a + len(_PREFIX.match(source[a:b]).group(0))  # type: ignore[union-attr]
            pieces.append((start + body, sql))
        return pieces or None

    def value(self, node: ast.expr, at: int, in_function: bool, depth: int = 0) -> _Value:
        """The string ``node`` evaluates to, holes as names; raises _Unresolved."""
        if depth > _MAX_DEPTH:
            raise _Unresolved("its names refer to names too deeply", "")
        source = self.source(node)
        if isinstance(node, ast.Constant | ast.JoinedStr) and (
            isinstance(node, ast.JoinedStr) or isinstance(node.value, str)
        ):
            return self.literal(node, at, in_function, depth)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return _Value([(None, str(node.value))])
        if isinstance(node, ast.Name):
            return self.lookup(node, at, in_function, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.part(node.left, at, in_function, depth)
            right = self.part(node.right, at, in_function, depth)
            if left.start is None and right.start is None:
                raise _Unresolved("it is computed at run time", source)
            return _Value(left.pieces + right.pieces)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            template = self.value(node.left, at, in_function, depth)
            return template.whole(self.percent(template.text, node.right, at, in_function, depth))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method == "format":
                template = self.value(node.func.value, at, in_function, depth)
                return template.whole(self.format(template.text, node, at, in_function, depth))
            if method in ("strip", "lstrip", "rstrip") and not node.args:
                inner = self.value(node.func.value, at, in_function, depth)
                text = inner.text
                stripped = getattr(text, method)()
                lead = len(text) - len(text.lstrip()) if method != "rstrip" else 0
                if len(inner.pieces) == 1 and inner.start is not None:
                    return _Value([(inner.start + lead, stripped)])
                return _Value([(inner.start, stripped)])
            if method == "dedent" and len(node.args) == 1:
                inner = self.value(node.args[0], at, in_function, depth)
                return _Value([(inner.start, textwrap.dedent(inner.text))])
        # what it is computed from, to tell whether a policy statement is built here
        held = [source] + [
            " ".join(self.sources.get(n.id, [])) for n in ast.walk(node) if isinstance(n, ast.Name)
        ]
        raise _Unresolved("it is computed at run time", " ".join(held))

    def part(self, node: ast.expr, at: int, in_function: bool, depth: int) -> _Value:
        """One operand of ``+``: its string, or a name when it is not a string constant."""
        try:
            return self.value(node, at, in_function, depth)
        except _Unresolved as err:
            if _POLICY.search(err.source):
                raise  # a policy statement built at run time: reported, never a name
            return _Value([(None, _hole(self.source(node)))])

    def hole(self, node: ast.expr, at: int, in_function: bool, depth: int) -> tuple[str, bool]:
        """A hole of an f-string, ``.format`` or ``%``: a name of the hole's length, or the
        SQL text of a string constant it names (then True)."""
        value = self.part(node, at, in_function, depth)
        if value.start is not None and not _NAME_LIKE.fullmatch(value.text):
            return value.text, True
        return _hole(self.source(node)), False

    def format(self, template: str, call: ast.Call, at: int, fn: bool, depth: int) -> str:
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        out: list[str] = []
        auto = 0
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as err:
            raise _Unresolved(f"its .format(...) string is malformed ({err})", template) from None
        for literal, name, _spec, _conversion in fields:
            out.append(literal)
            if name is None:
                continue
            key = re.match(r"\w*", name).group(0)  # type: ignore[union-attr]
            arg: ast.expr | None = None
            if key == "":
                index = auto
                auto += 1
                arg = call.args[index] if index < len(call.args) else None
            elif key.isdigit():
                arg = call.args[int(key)] if int(key) < len(call.args) else None
            else:
                arg = keywords.get(key)
            if arg is None or key != name or isinstance(arg, ast.Starred):
                out.append(_hole(name))
            else:
                text, constant = self.hole(arg, at, fn, depth)
                out.append(text if constant else _hole(name))
        return "".join(out)

    def percent(self, template: str, right: ast.expr, at: int, fn: bool, depth: int) -> str:
        values = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        mapping: dict[str, ast.expr] = {}
        if isinstance(right, ast.Dict):
            mapping = {
                k.value: v
                for k, v in zip(right.keys, right.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
        position = iter(values)

        def sub(m: re.Match[str]) -> str:
            if m.group(0) == "%%":
                return "%"
            key = m.group(1)
            arg = mapping.get(key) if key is not None else next(position, None)
            if arg is not None:
                text, constant = self.hole(arg, at, fn, depth)
                if constant:
                    return text
            name = _hole(key) if key is not None else "_s_"
            return name.ljust(len(m.group(0)), "_")[: max(len(m.group(0)), 2)]

        return _PERCENT.sub(sub, template)


def _sql_calls(tree: ast.Module) -> list[tuple[ast.expr, bool]]:
    """The argument of every ``<x>.sql(...)`` call, and whether the call is in a function."""
    found: list[tuple[ast.expr, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "sql"
        ):
            arg = node.args[0] if node.args else None
            for k in node.keywords:
                if arg is None and k.arg == _QUERY_KEYWORD:
                    arg = k.value
            if arg is not None:
                found.append((arg, in_function))
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def _in_place(node: ast.expr, notebook: _Notebook) -> bool:
    """A single string literal or f-string whose holes are not names of strings: written
    into the SQL view at its own positions."""
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str):
            return False
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                for name in ast.walk(part.value):
                    if isinstance(name, ast.Name) and name.id in notebook.assigned:
                        return False
    else:
        return False
    source = notebook.source(node)
    m = _PREFIX.match(source)
    if m is None:
        return False
    body = source[len(m.group(0)) : len(source) - len(m.group(2))]
    return m.group(2) not in body and source.endswith(m.group(2))  # not "a" "b"


def sql_strings(python: str) -> tuple[list[SqlString], list[Resolved], list[Unreadable]]:
    """Every ``.sql(...)`` string of the Python cells of ``python`` (the notebook with its
    ``# MAGIC`` lines blanked: same length, same lines): the literals at their positions, the
    SQL resolved from the notebook's strings, and what could not be read."""
    starts = _line_starts(python)
    found: list[SqlString] = []
    resolved: list[Resolved] = []
    unreadable: list[Unreadable] = []
    notebook = _Notebook(python, starts)
    trees: list[list[tuple[ast.expr, bool]]] = []
    for cell_start, cell_end in _cells(python):
        cell = python[cell_start:cell_end]
        # the cell alone, every other line blank: ast's line numbers are the file's
        view = re.sub(r"[^\n]", " ", python[:cell_start]) + cell
        try:
            tree = ast.parse(view)
            notebook.add(tree)
            calls = _sql_calls(tree)
        except (SyntaxError, RecursionError, MemoryError) as err:
            if SQL_CALL.search(cell) and _POLICY.search(cell):
                why = err.msg if isinstance(err, SyntaxError) else "it nests too deeply"
                unreadable.append(
                    Unreadable(cell_start, f"this Python cell cannot be parsed ({why})")
                )
            continue
        trees.append(calls)
    seen: set[tuple[int, str]] = set()
    for calls in trees:
        for arg, in_function in calls:
            a = notebook.offset(arg)
            if _in_place(arg, notebook):
                b = a + len(notebook.source(arg))
                sql = _string_sql(python, a, b)
                if sql is None:
                    if _POLICY.search(python[a:b]):
                        unreadable.append(
                            Unreadable(
                                a,
                                "this .sql(...) string's value is not its text (backslash "
                                "escapes or unbalanced braces), so its statements cannot be "
                                "located",
                            )
                        )
                    continue
                body_start = a + len(_PREFIX.match(python[a:b]).group(0))  # type: ignore[union-attr]
                found.append(SqlString(body_start, body_start + len(sql), sql))
                continue
            try:
                value = notebook.value(arg, a, in_function)
            except RecursionError:
                unreadable.append(
                    Unreadable(a, "this .sql(...) argument nests too deeply to be resolved")
                )
                continue
            except _Unresolved as err:
                if _POLICY.search(err.source) or _POLICY.search(notebook.source(arg)):
                    unreadable.append(
                        Unreadable(
                            a,
                            f"this .sql(...) argument cannot be resolved without running the "
                            f"notebook: {err.reason}",
                        )
                    )
                continue
            start = value.start if value.start is not None else a
            text = _layout(python, value.pieces) or value.text
            if (start, text) not in seen:
                seen.add((start, text))
                resolved.append(Resolved(start, text))
    return found, resolved, unreadable
