"""Values in GitHub-flavoured Markdown that a pull request comment renders as written.

Everything accord interpolates into a Markdown report (entitlement values, names, file names,
notes, suppression reasons) may come from a pull request, so none of it may become markup:
no HTML (``<!--`` would hide the rest of the comment, ``<img>`` would load a picture), no
``@team`` mention or ``#123`` reference, no link or autolink, no emphasis, no break out of a
table cell or a code span, no new line. :func:`text` is for prose and table cells,
:func:`code` for a code span. Ordinary names (``cro_collaborator``, ``policies/x.yaml:3:5``)
come out as they went in.
"""

from __future__ import annotations

import re

#: characters that start markup wherever they stand, written as HTML entities (a backslash
#: escape does not stop every GitHub extension: mentions and references ignore it). ``>``
#: starts markup only at the start of a line (a value never is) or after ``<`` (escaped), and
#: ``!`` only before ``[`` (escaped)
_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    "@": "&#64;",
    "#": "&#35;",
    "|": "&#124;",
    "`": "&#96;",
    "[": "&#91;",
    "]": "&#93;",
    "*": "&#42;",
    "~": "&#126;",
    "\\": "&#92;",
    "$": "&#36;",
}
_MARKUP = re.compile("[" + re.escape("".join(_ENTITIES)) + "]")
#: an underscore that can open or close emphasis: not between two letters or digits
_EMPHASIS = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: what GitHub turns into a link by itself
_AUTOLINK = re.compile(r"(?i)(://|\bwww\.)")
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x85\x0b\x0c]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def _flat(value: object) -> str:
    return _CONTROL.sub("\ufffd", _BREAKS.sub(" ", str(value)))


def text(value: object) -> str:
    """``value`` as inert Markdown text, on one line, safe in a table cell."""
    out = _MARKUP.sub(lambda m: _ENTITIES[m.group(0)], _flat(value))
    out = _EMPHASIS.sub("&#95;", out)
    return _AUTOLINK.sub(lambda m: m.group(0).replace("/", "&#47;").replace(".", "&#46;"), out)


def code(value: object) -> str:
    """``value`` as a code span, on one line, safe in a table cell: the fence is longer than
    any run of backticks inside, and table pipes are escaped (GitHub splits cells on ``|`` even
    inside a code span)."""
    flat = _flat(value).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
