"""Agent cards: fetched from where an agent serves it, and digested.

An A2A agent serves its card at the well-known URI of its origin (RFC 8615):
``https://{host}/.well-known/agent-card.json`` (A2A 1.0 and 0.3). Agents written for A2A
before 0.3 served ``/.well-known/agent.json``; that path is asked only when the first answers
404. A card is fetched with a timeout (the surface's ``a2a.timeout_seconds``, at most the
probe's), without following redirects or proxies from the environment, and read up to
:data:`MAX_CARD_BYTES`; anything else is a :class:`CardError` whose text the manifest records.

The digest is SHA-256 of the card's canonical JSON: keys sorted, no whitespace, UTF-8
(:func:`compiler.core.canonical.sha256_of`), so a card served with other spacing or key order
has the same digest and any change of a value has another.

The A2A version a card declares: A2A 1.0 lists ``supportedInterfaces`` (each with ``url``,
``protocolBinding`` and ``protocolVersion``): the entry whose URL is the model's endpoint,
else the first JSON-RPC one; an A2A 0.3 card has a top-level ``protocolVersion`` ("0.3.0").
Either is written MAJOR.MINOR.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from accord.compiler.core.canonical import sha256_of
from accord.compiler.core.deadline import DeadlinePassed, read_by
from accord.compiler.core.jsonfile import depth_problem

WELL_KNOWN = "/.well-known/agent-card.json"
#: the path agents written for A2A before 0.3 serve
LEGACY_WELL_KNOWN = "/.well-known/agent.json"
#: an agent card is a few kilobytes; a bigger answer is refused unread past this
MAX_CARD_BYTES = 1024 * 1024

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


class CardError(Exception):
    """The card could not be fetched or is not a card."""


@dataclass(frozen=True)
class Card:
    url: str
    document: dict[str, Any]
    digest: str

    @property
    def version(self) -> str | None:
        value = self.document.get("version")
        return value if isinstance(value, str) else None

    def a2a_version(self, endpoint: str) -> str | None:
        return declared_a2a_version(self.document, endpoint)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A card is read where the endpoint's origin serves it, never elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect, urllib.request.ProxyHandler({}))


def card_url(endpoint: str, path: str = WELL_KNOWN) -> str:
    """The well-known card URL of an endpoint's origin."""
    parts = urlsplit(endpoint)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def fetch_card(endpoint: str, timeout: float) -> Card:
    """The card served for ``endpoint`` (its origin's well-known path; the pre-0.3 path only
    when that answers 404). Raises CardError."""
    url = card_url(endpoint)
    try:
        return _fetch(url, timeout)
    except _NotFound:
        legacy = card_url(endpoint, LEGACY_WELL_KNOWN)
        try:
            return _fetch(legacy, timeout)
        except _NotFound:
            raise CardError(f"no agent card at {url} (nor at {legacy}): HTTP 404") from None


class _NotFound(CardError):
    pass


def _fetch(url: str, timeout: float) -> Card:
    req = urllib.request.Request(url, headers={"Accept": "application/json"}, method="GET")
    deadline = time.monotonic() + timeout
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            raw = _read_by(resp, deadline, url)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise _NotFound(url) from None
        where = f" to {err.headers.get('Location')}" if 300 <= err.code < 400 else ""
        raise CardError(f"HTTP {err.code} from {url}{where} (redirects are not followed)") from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError, HTTPException) as err:
        reason = getattr(err, "reason", err)
        raise CardError(f"no answer from {url}: {reason}") from None
    if len(raw) > MAX_CARD_BYTES:
        raise CardError(f"the card at {url} is larger than {MAX_CARD_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CardError(f"the card at {url} is not UTF-8") from None
    deep = depth_problem(text)
    if deep is not None:
        raise CardError(f"the card at {url} is not an agent card: it is {deep[1]}")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as err:
        raise CardError(f"the card at {url} is not JSON: {err}") from None
    if not isinstance(doc, dict):
        raise CardError(f"the card at {url} is not a JSON object")
    return Card(url, doc, sha256_of(doc))


def _read_by(resp: Any, deadline: float, url: str) -> bytes:
    """At most ``MAX_CARD_BYTES + 1`` bytes, all of them by ``deadline`` (a server that drips
    the card byte by byte is cut off)."""
    try:
        return read_by(resp, deadline, MAX_CARD_BYTES)
    except DeadlinePassed:
        raise CardError(
            f"no answer from {url}: the card did not arrive within the timeout"
        ) from None


def normal_version(value: Any) -> str | None:
    """``"1.0"``, ``"0.3.0"``, ``"v1.0"`` -> MAJOR.MINOR; None for anything else."""
    if not isinstance(value, str):
        return None
    m = _VERSION.match(value.strip())
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _same_endpoint(a: Any, b: str) -> bool:
    return isinstance(a, str) and a.rstrip("/") == b.rstrip("/")


def declared_a2a_version(card: dict[str, Any], endpoint: str) -> str | None:
    """The A2A version the card declares for ``endpoint`` (see the module docstring)."""
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list):
        entries = [i for i in interfaces if isinstance(i, dict)]
        chosen = next((i for i in entries if _same_endpoint(i.get("url"), endpoint)), None)
        if chosen is None:
            chosen = next(
                (i for i in entries if str(i.get("protocolBinding", "")).upper() == "JSONRPC"),
                None,
            )
        if chosen is not None and "protocolVersion" in chosen:
            return normal_version(chosen.get("protocolVersion"))
    if "protocolVersion" in card:
        return normal_version(card.get("protocolVersion"))
    return None
