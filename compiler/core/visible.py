"""Text that can neither steer a terminal nor start a line of its own.

A file name, a SQL line, a YAML reason, a platform's error or an agent's answer may come
from a pull request. Printed as it is, an escape sequence in it (``ESC ]8;;`` links, ``ESC [2J``,
a title change) is obeyed by the terminal, a carriage return overwrites what came before, a
line break starts a line the GitHub Actions runner reads as a workflow command
(``::add-mask::``), and a byte that is not UTF-8 is a crash or a document that is not UTF-8.

:func:`visible` writes each such character as an escape that shows it: a control character,
a line or paragraph separator or a bidirectional control as ``\\u001b``, and a byte of a
file name that is not UTF-8 (which Python reads as a lone surrogate) as ``\\xff``; ordinary
text (accents, CJK, emoji) is unchanged. The ``\\uXXXX`` form is also a JSON escape of the
same character, so rendering a JSON document keeps it valid and its meaning unchanged.

:func:`guarded` puts every write to standard output and standard error through it (``accord``
does it for every command): accord's own line breaks and tabs pass, nothing else does. It
also takes the one scrubber of secrets (``accord`` passes :func:`compiler.core.secrets.redact`):
every write, in every format, is scrubbed before it is shown. The
few places that print their own colours or terminal control (lint's colours, a progress
line, rich tables) render their values with :func:`visible` and write inside
:func:`own_styles`. :func:`plain` gives a document's strings valid Unicode (for JSON) and
:func:`xml_text` the characters XML 1.0 allows.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

#: every character that is rendered visibly: C0 controls, DEL and C1 controls (U+009B is a
#: CSI, U+0085 a line break), the line and paragraph separators, the bidirectional controls
#: (text shown in another order than it is read), and surrogates (bytes that are not UTF-8)
_UNSAFE = [
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0x061C, 0x061C),
    (0x200E, 0x200F),
    (0x2028, 0x202E),
    (0x2066, 0x2069),
    (0xD800, 0xDFFF),
]


@functools.lru_cache(maxsize=8)
def _pattern(keep: str) -> re.Pattern[str]:
    """The characters to render, but for those of ``keep`` (one character class: a search
    runs at the regex engine's speed)."""
    kept = {ord(c) for c in keep}
    ranges = []
    for lo, hi in _UNSAFE:
        start = None
        for code in range(lo, hi + 2):
            inside = code <= hi and code not in kept
            if inside and start is None:
                start = code
            elif not inside and start is not None:
                ranges.append(f"\\U{start:08x}-\\U{code - 1:08x}")
                start = None
    return re.compile("[" + "".join(ranges) + "]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def visible(value: object, keep: str = "") -> str:
    """``value`` as text with every control character (but those in ``keep``, say ``"\\t"``)
    written visibly: a value rendered with no ``keep`` is one line."""
    text = value if isinstance(value, str) else str(value)
    return _pattern(keep).sub(_escape, text)


def has_unsafe(text: str, keep: str = "") -> bool:
    """Whether :func:`visible` would change ``text``."""
    return _pattern(keep).search(text) is not None


#: what accord's own output may hold: its line breaks and indentation
LAYOUT = "\n\t"


def _surrogates(text: str) -> str:
    return re.sub("[\ud800-\udfff]", _escape, text)


def plain(doc: Any) -> Any:
    """``doc`` (dicts, lists, strings, scalars) with every string valid Unicode: a byte that is
    not UTF-8 (a file name's, read as a lone surrogate) is written ``\\xff``. JSON holds every
    other character, so nothing else changes."""
    if isinstance(doc, str):
        return _surrogates(doc) if not doc.isascii() else doc
    if isinstance(doc, dict):
        return {plain(k): plain(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [plain(v) for v in doc]
    return doc


def xml_text(value: object) -> str:
    """``value`` as XML 1.0 character data or attribute value can hold it (no C0 control but
    tab and line break, no surrogate), control characters shown as :func:`visible` shows
    them. U+FFFE and U+FFFF, not characters in XML, become U+FFFD."""
    return visible(value, keep=LAYOUT).replace("\ufffe", "\ufffd").replace("\uffff", "\ufffd")


# --------------------------------------------------------------------------------------------
# the standard streams

#: what a CI runner obeys in a line of a step's output, stdout or stderr alike: a GitHub
#: workflow command is a line that starts with ``::`` after white space; the runner's legacy
#: form ``##[command]`` and Azure Pipelines' ``##vso[`` are obeyed anywhere in a line
_LINE_COMMAND = re.compile(r"\n([^\S\n]*):(?=:)")  # a literal first: a fast search
_FIRST_COMMAND = re.compile(r"([^\S\n]*):(?=:)")
_LEGACY_COMMAND = re.compile(r"(?i)(##(?:vso)?)\[")


class Guard:
    """A text stream that writes ``stream`` with every control character but accord's layout
    rendered visibly (:func:`visible`), and no line a CI runner would take for a command: a
    ``::`` that starts a line is written ``\\u003a:``, the ``[`` of ``##[`` (and ``##vso[``)
    ``\\u005b`` (both JSON escapes of the same character). Inside :func:`own_styles` escape
    sequences and carriage returns pass, inside :func:`own_commands` lines that start with
    ``::`` (their writer made them from escaped values). ``scrub`` (the secrets' scrubber)
    rewrites each write first. Everything else is ``stream``'s, but its binary buffer, which
    would let a write pass unguarded."""

    def __init__(self, stream: TextIO, scrub: Callable[[str], str] | None = None) -> None:
        self._stream = stream
        self._scrub = scrub
        self.styles = 0
        self.commands = 0
        #: whether the next write starts a line
        self._line_start = True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        shown = self._scrub(text) if self._scrub is not None else text
        out = visible(shown, LAYOUT + "\x1b\r" if self.styles else LAYOUT)
        if "##" in out:
            out = _LEGACY_COMMAND.sub(r"\1\\u005b", out)
        if not self.commands and "::" in out:
            out = _LINE_COMMAND.sub("\n\\1\\\\u003a", out)
            first = _FIRST_COMMAND.match(out) if self._line_start else None
            if first:  # the write starts a line, and that line with ``::``
                out = first.group(1) + "\\u003a" + out[first.end() :]
        self._line_start = text.endswith("\n")
        self._stream.write(out)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded(scrub: Callable[[str], str] | None = None) -> Iterator[None]:
    """Standard output and standard error guarded for the duration (a stream that is absent,
    or already guarded, is left as it is), each write scrubbed by ``scrub``; the streams are
    restored after."""
    saved = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, Guard):
        sys.stdout = Guard(sys.stdout, scrub)  # type: ignore[assignment]
    if sys.stderr is not None and not isinstance(sys.stderr, Guard):
        sys.stderr = Guard(sys.stderr, scrub)  # type: ignore[assignment]
    installed = sys.stdout, sys.stderr
    try:
        yield
    finally:
        # a stream replaced meanwhile (click's wrapper after a closed pipe) stays replaced
        if sys.stdout is installed[0]:
            sys.stdout = saved[0]
        if sys.stderr is installed[1]:
            sys.stderr = saved[1]


@contextlib.contextmanager
def _own(flag: str) -> Iterator[None]:
    streams = [s for s in (sys.stdout, sys.stderr) if isinstance(s, Guard)]
    for s in streams:
        setattr(s, flag, getattr(s, flag) + 1)
    try:
        yield
    finally:
        for s in streams:
            setattr(s, flag, getattr(s, flag) - 1)


def own_styles() -> contextlib.AbstractContextManager[None]:
    """Writes of accord's own colours and terminal control, their values rendered with
    :func:`visible` by the writer: escape sequences and carriage returns pass the guard."""
    return _own("styles")


def own_commands() -> contextlib.AbstractContextManager[None]:
    """Writes of accord's own workflow commands (:mod:`compiler.core.annotations`, every value
    escaped): lines that start with ``::`` pass the guard."""
    return _own("commands")
