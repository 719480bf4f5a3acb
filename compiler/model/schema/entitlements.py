"""``entitlements``: dimension -> value -> the principals granted it, standing or until a
date (:class:`Grant`)."""

from __future__ import annotations

from datetime import date
from datetime import datetime as datetime_type
from typing import Annotated, Any

from pydantic import BeforeValidator, Discriminator, Field, PlainSerializer, Tag

from accord.compiler.core.today import parse_day
from accord.compiler.model.schema.base import Name, Strict, Text


def _code(value: Any) -> Any:
    # entitlement values are codes: a YAML integer key such as 2024 is the code "2024"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


EntitlementValue = Annotated[Text, BeforeValidator(_code), Field(min_length=1, max_length=256)]


def _day(value: Any) -> Any:
    # a day is written YYYY-MM-DD (the loader keeps an unquoted 2027-03-31 as its text); a
    # datetime, a number or any other spelling is refused rather than guessed at
    if isinstance(value, date) and not isinstance(value, datetime_type):
        return value
    day = parse_day(value) if isinstance(value, str) else None
    if day is None:
        raise ValueError(f"{value!r} is not a date written YYYY-MM-DD")
    return day


Day = Annotated[
    date,
    BeforeValidator(_day),
    PlainSerializer(lambda d: d.isoformat(), return_type=str),
]


class Grant(Strict):
    """A time-bound grant of an entitlement value: the principal holds the value through
    ``until`` (inclusive) and not after. The compiled policies enforce it: the mapping table
    carries the date in an expiry column and a row is admitted only while ``CURRENT_DATE()``
    is on or before it. ``accord lint`` warns once the date has passed (ACC507
    ``expired-grant``)."""

    principal: Name = Field(description="the principal granted the value")
    until: Day = Field(
        description="the last day the grant holds (YYYY-MM-DD, inclusive; the platform "
        "session's CURRENT_DATE() decides)"
    )


def _grant_kind(value: Any) -> str:
    return "grant" if isinstance(value, dict | Grant) else "name"


#: one entry of an entitlement value's grant list: a principal's name (a standing grant) or
#: ``{principal: NAME, until: YYYY-MM-DD}`` (a grant that holds through that date)
GrantEntry = Annotated[
    Annotated[Name, Tag("name")] | Annotated[Grant, Tag("grant")],
    Discriminator(_grant_kind),
]
