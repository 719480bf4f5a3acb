"""GitHub workflow annotations (``::warning file=...,line=...,col=...,title=...::message``),
escaped as GitHub's runner reads them: shared by ``accord lint --format github`` and ``accord
diff --format github``. Line breaks are escaped (``%0A``, ``%0D``: the runner reads them back
into the message, or the file name), and every other control character, and a byte of a file
name that is not UTF-8, is shown visibly (:func:`compiler.core.visible.visible`): one
annotation is one line and nothing in it drives a terminal or the log viewer. The commands
write them inside :func:`compiler.core.visible.own_commands`."""

from __future__ import annotations

from typing import Protocol

from accord.compiler.core.visible import visible


class Place(Protocol):
    """Where an annotation points (a :class:`compiler.core.errors.Location`; named by its
    fields, as the secrets' scrubber spells a secret as an annotation writes it and
    ``errors`` imports the scrubber)."""

    file: str
    line: int
    column: int


#: what the escaping writes as the runner reads it back (line breaks) and tabs
_KEEP = "\n\r\t"


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, carriage return and newline escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as :func:`escape_data`, and ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(command: str, loc: Place | None, title: str, text: str) -> str:
    """One workflow command (``error``, ``warning``, ``notice``) at ``loc`` (None: of the run,
    on no file, as ``::notice title=Heads up::...`` in GitHub's workflow-commands reference):
    one line."""
    where = (
        [
            f"file={escape_property(visible(loc.file, _KEEP))}",
            f"line={loc.line}",
            f"col={loc.column}",
        ]
        if loc is not None
        else []
    )
    props = ",".join([*where, f"title={escape_property(visible(title, _KEEP))}"])
    return f"::{command} {props}::{escape_data(visible(text, _KEEP))}"
