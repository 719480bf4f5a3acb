"""``-- accord: ignore ACC101 <reason>`` comments: the suppressions of the statement they sit
directly above.

The tokenizer drops comments; they are found again in the gap between two statements'
tokens, with the dialect tokenizer's own comment delimiters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot.tokens import Token

from accord.compiler.sqlscan.bodies import Context
from accord.compiler.sqlscan.statements import ScanError, Suppression
from accord.compiler.sqlscan.tokens import tokenizer_class

_SUPPRESSION = re.compile(r"accord\s*:\s*ignore\b(.*)", re.IGNORECASE)
_FIRST_RULE = re.compile(r"\s*([A-Za-z]+[0-9]+)\b")
_MORE_RULES = re.compile(r"\s*,\s*([A-Za-z]+[0-9]+)\b")


@dataclass
class _Comment:
    start: int
    end: int  # exclusive
    body: str


@functools.cache
def _comment_syntax(dialect: str) -> tuple[tuple[tuple[str, str | None], ...], bool]:
    """The dialect tokenizer's comment delimiters, longest opener first, and nesting."""
    tokenizer = tokenizer_class(dialect)
    delimiters = sorted(tokenizer._COMMENTS.items(), key=lambda kv: -len(kv[0]))
    return tuple(delimiters), bool(tokenizer.NESTED_COMMENTS)


def _gap_comments(text: str, start: int, end: int, dialect: str) -> Iterator[_Comment]:
    """The comments between two tokens. The tokenizer has already decided that this span
    holds only whitespace and comments; it does not record where the comments are."""
    delimiters, nested = _comment_syntax(dialect)
    i = start
    while i < end:
        if text[i].isspace():
            i += 1
            continue
        found = next(((o, e) for o, e in delimiters if text.startswith(o, i)), None)
        if found is None:
            i += 1
            continue
        opener, closer = found
        body_start = i + len(opener)
        if closer is None:
            stop = body_start
            while stop < end and text[stop] not in "\r\n":
                stop += 1
            yield _Comment(i, stop, text[body_start:stop])
            i = stop
            continue
        depth, j = 1, body_start
        while j < end:
            if text.startswith(closer, j):
                depth -= 1
                if depth == 0:
                    break
                j += len(closer)
            elif nested and text.startswith(opener, j):
                depth += 1
                j += len(opener)
            else:
                j += 1
        yield _Comment(i, min(j + len(closer), end), text[body_start:j])
        i = j + len(closer)


def read_suppressions(
    ctx: Context, gap_start: int, first: Token, prev_end_line: int, errors: list[ScanError]
) -> tuple[Suppression, ...]:
    """Suppression comments in the run of comment lines directly above ``first``."""
    comments = list(_gap_comments(ctx.text, gap_start, first.start, ctx.dialect))
    lines = ctx.lines
    top_line, _ = lines.position(first.start)
    attached: list[_Comment] = []
    for comment in reversed(comments):
        start_line, _ = lines.position(comment.start)
        end_line, _ = lines.position(max(comment.start, comment.end - 1))
        if end_line < top_line - 1 or start_line == prev_end_line:
            break
        attached.append(comment)
        top_line = start_line
    out: list[Suppression] = []
    for comment in reversed(attached):
        for index, raw_line in enumerate(comment.body.splitlines() or [""]):
            found = _SUPPRESSION.search(raw_line)
            if not found:
                continue
            if index == 0:
                line, column = lines.position(comment.start)
            else:
                line_start = lines.position(comment.start)[0] + index
                line, column = line_start, 1 + raw_line.index(found.group(0))
            rest = found.group(1)
            rules = []
            pattern = _FIRST_RULE
            while (rule := pattern.match(rest)) is not None:
                rules.append(rule.group(1).upper())
                rest = rest[rule.end() :]
                pattern = _MORE_RULES
            if not rules:
                errors.append(
                    ScanError(
                        ctx.file,
                        line,
                        column,
                        "suppression comment names no rule: write `-- accord: ignore ACC101 <reason>`",
                        "suppression",
                    )
                )
                continue
            reason = rest.strip().lstrip(":-—– ").strip()
            out.extend(Suppression(rule, reason, line, column) for rule in rules)
    return tuple(out)
