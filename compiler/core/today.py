"""The date accord judges time-bound grants at: ``ACCORD_TODAY`` when set, else today (UTC).

A grant ``until`` a date holds through that date (``compiler.model.grants``). Lint (rule
ACC507 ``expired-grant``), analyze, diff and probes evaluate grants at :func:`today`; ``accord
verify --as-of`` names its own date. Setting ``ACCORD_TODAY=YYYY-MM-DD`` makes every one of
them deterministic, for tests and reruns; a value that is no such date is a usage error
(exit 2), never a silent fallback to the clock.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime

from accord.compiler.core.errors import UsageError

#: the one spelling of a day the policy format and the options accept
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ENV = "ACCORD_TODAY"


def parse_day(text: str) -> date | None:
    """``YYYY-MM-DD`` as a date; None when ``text`` is not exactly such a valid day."""
    if not isinstance(text, str) or not DAY.match(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def today() -> date:
    """``ACCORD_TODAY`` when set, else the current date in UTC."""
    value = os.environ.get(ENV)
    if value is None or value == "":
        return datetime.now(UTC).date()
    day = parse_day(value.strip())
    if day is None:
        raise UsageError(f"{ENV}={value!r} is not a date written YYYY-MM-DD")
    return day


def today_source() -> str:
    """Where :func:`today` comes from, for messages that state the date they judged at."""
    return f"from {ENV}" if os.environ.get(ENV) else "today, UTC"
