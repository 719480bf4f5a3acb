"""The value checks of names and texts the schema applies (``compiler.model.schema``), free of
pydantic: the schema wraps them as validators, and an incremental lint
(``compiler.lint.incremental.verdict``) calls the same functions on the plain columns an edit added
without importing the schema. Each check depends on the value alone."""

from __future__ import annotations

import re
from collections.abc import Callable

#: the platforms' limit on one identifier (targets/reserved.py has the sources)
MAX_IDENTIFIER = 255

_SF_IDENT = r"[A-Za-z_][A-Za-z0-9_$]*"
_COLUMN = re.compile(rf"^{_SF_IDENT}$")


def checker(pattern: re.Pattern[str], what: str) -> Callable[[str], str]:
    """A check of a name: ``pattern`` matched, no surrounding space, no part (between dots)
    longer than :data:`MAX_IDENTIFIER`; raises ValueError with the schema's message."""
    #: values already accepted: an estate repeats its names (columns, masks, domains) thousands
    #: of times, and a check depends on the value alone
    accepted: set[str] = set()

    def check(value: str) -> str:
        if value in accepted:
            return value
        # no part is longer than the whole: the parts are measured only when it is long
        longest = (
            max((len(part) for part in value.split(".")), default=0)
            if len(value) > MAX_IDENTIFIER
            else 0
        )
        if longest > MAX_IDENTIFIER:
            raise ValueError(
                f"{value[:40]!r}... has a name of {longest} characters; Snowflake and "
                f"Databricks accept at most {MAX_IDENTIFIER}"
            )
        if not pattern.match(value) or value != value.strip():
            raise ValueError(f"{value!r} is not a valid {what}")
        accepted.add(value)
        return value

    return check


#: a column's name (the schema's ``ColumnName``)
COLUMN_NAME = checker(_COLUMN, "column name (letters, digits, _; no quotes)")

#: the control characters: below 32, and DEL
_CONTROL = re.compile("[\x00-\x1f\x7f]")

#: texts already accepted (column types repeat thousands of times)
_CLEAN: set[str] = set()


def no_control(value: str) -> str:
    """A text (the schema's ``Text``): no control character."""
    if value in _CLEAN:
        return value
    if _CONTROL.search(value):
        raise ValueError("control characters are not allowed")
    _CLEAN.add(value)
    return value
