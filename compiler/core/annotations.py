"""GitHub workflow annotations (``::warning file=...,line=...,col=...,title=...::message``),
escaped as GitHub's runner reads them: shared by ``accord lint --format github`` and ``accord
diff --format github``."""

from __future__ import annotations

from compiler.core.errors import Location


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, carriage return and newline escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as :func:`escape_data`, and ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(command: str, loc: Location, title: str, text: str) -> str:
    """One workflow command (``error``, ``warning``, ``notice``) at ``loc``."""
    props = ",".join(
        [
            f"file={escape_property(loc.file)}",
            f"line={loc.line}",
            f"col={loc.column}",
            f"title={escape_property(title)}",
        ]
    )
    return f"::{command} {props}::{escape_data(text)}"
