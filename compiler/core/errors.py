"""Located diagnostics: every error accord reports names ``file:line:column``."""

from __future__ import annotations

from dataclasses import dataclass

from accord.compiler.core.secrets import redact
from accord.compiler.core.visible import visible


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based position in a source file; shown with its file name's control characters
    (and bytes that are not UTF-8) written visibly, so a name cannot start a line."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{visible(self.file)}:{self.line}:{self.column}"


@dataclass(frozen=True, order=True)
class Diagnostic:
    location: Location
    message: str

    def __str__(self) -> str:
        """One line: the location and the message, control characters written visibly."""
        return f"{self.location}: {visible(self.message)}"


class InputError(Exception):
    """The input cannot be used: one or more located diagnostics. Exit code 2."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = sorted(set(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class UsageError(Exception):
    """Bad usage that has no file position (a missing directory, a bad option). Exit code 2."""


def one_line(err: BaseException, *, first: bool = False) -> str:
    """An error's text in one line, for a message: every run of whitespace (line breaks
    included) made one space, or with ``first`` only its first line (a parser's or a client's
    message whose further lines repeat the statement); its class name when it says nothing."""

    if first:
        text = redact(str(err)).strip()
        return text.splitlines()[0] if text else type(err).__name__
    return " ".join(redact(str(err)).split()) or type(err).__name__
