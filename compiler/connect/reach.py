"""Where a live command connects, where that came from, and whether anything answers there.

A :class:`Target` is what a client is about to reach: the platform, its account (Snowflake) or
workspace URL (Databricks), the host and port a TCP connection goes to, and the settings it
came from (an environment variable, an option, a connection or a profile in a file). Every
connection error names it, so a user sees what was tried (``cannot reach Databricks at
https://... (host from DATABRICKS_HOST): 127.0.0.1 port 8443 refused the connection``).

:func:`preflight` opens one TCP connection to the target (or to the proxy the environment
names for it) before the client does. A refused connection and a name that does not resolve
are final: both clients would retry them until their connect timeout is spent (databricks-sdk
retries every ``requests.ConnectionError``, refused included, for ``retry_timeout_seconds``:
``databricks/sdk/_base_client.py``, ``_is_retryable``; snowflake-connector-python retries a
login's transport errors up to ``retry_max_attempts`` within ``login_timeout``), so they are
said here, at once. A host that accepts nothing and refuses nothing still gets the connect
timeout: the connection attempt is bounded by it, the name lookup included.
"""

from __future__ import annotations

import os
import socket
import urllib.parse
import urllib.request
from dataclasses import dataclass

from accord.compiler.core.deadline import StillRunning, call_within
from accord.compiler.core.errors import UsageError
from accord.compiler.core.secrets import redact


class UnreachableError(UsageError):
    """The platform cannot be reached within the connect timeout: exit 2, one line."""

    def __init__(self, message: str, said: str | None = None) -> None:
        message = redact(message)
        super().__init__(message)
        #: the first line of the client's own error, when there was one
        self.said = message if said is None else redact(said)


@dataclass(frozen=True)
class Target:
    """What a client is about to reach, and the settings that named it."""

    #: ``Snowflake`` or ``Databricks``
    platform: str
    #: the URL the client talks to (scheme, host and port)
    url: str
    host: str
    port: int
    #: where the host (and the account, the user, the credentials) came from, in words
    origin: str
    #: the Snowflake account (None for Databricks)
    account: str | None = None
    #: the proxy the client is configured with (host, port, the setting that named it)
    proxy: tuple[str, int, str] | None = None
    #: whether the client takes a proxy from the environment (``HTTPS_PROXY``, ``NO_PROXY``)
    env_proxy: bool = True

    def __str__(self) -> str:
        what = f"{self.platform} account {self.account!r}" if self.account else self.platform
        return f"{what} at {self.url} ({self.origin})"


def _port(parsed: urllib.parse.SplitResult, scheme: str) -> int:
    try:
        port = parsed.port
    except ValueError:
        port = None
    return port or (80 if scheme == "http" else 443)


def url_target(platform: str, url: str, origin: str, account: str | None = None) -> Target:
    """The target of a URL (``https://host[:port]``); a bare host name is taken as https."""
    if "://" not in url:
        url = f"https://{url}"
    parsed = urllib.parse.urlsplit(url)
    scheme = (parsed.scheme or "https").lower()
    host = parsed.hostname or ""
    return Target(platform, url.rstrip("/"), host, _port(parsed, scheme), origin, account)


def proxy_of(url: str, named: str) -> tuple[str, int, str] | None:
    """A proxy URL (``[scheme://][user:pass@]host[:port]``) as (host, port, the setting that
    named it); its credentials are never kept."""
    parsed = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    if not parsed.hostname:
        return None
    return parsed.hostname, _port(parsed, parsed.scheme or "http"), named


def _proxy(target: Target) -> tuple[str, int, str] | None:
    """The proxy the environment names for the target's URL (``HTTPS_PROXY`` and the like,
    unless ``NO_PROXY`` exempts the host): its host, port and the variable that named it."""
    if target.proxy is not None:
        return target.proxy
    if not target.env_proxy:
        return None
    scheme = urllib.parse.urlsplit(target.url).scheme or "https"
    found = urllib.request.getproxies().get(scheme)
    if not found or urllib.request.proxy_bypass(target.host):
        return None
    named = next(
        (v for v in (f"{scheme.upper()}_PROXY", f"{scheme}_proxy") if os.environ.get(v)),
        f"{scheme}_proxy",
    )
    return proxy_of(found, named)


def preflight(target: Target, seconds: float) -> None:
    """One TCP connection to ``target`` (or to the proxy the client goes through: its own,
    else the environment's), closed at once: :class:`UnreachableError` when the name does not
    resolve or the connection is refused (at once), or when nothing answers within
    ``seconds``. A target without a host is the client's to report."""
    if not target.host:
        return
    via = _proxy(target)
    host, port = (via[0], via[1]) if via else (target.host, target.port)
    through = f" (through the proxy {host}:{port}, {via[2]})" if via else ""
    try:
        call_within(
            seconds,
            lambda: socket.create_connection((host, port), timeout=seconds).close(),
            "accord-preflight",
        )
        return
    except StillRunning:
        raise UnreachableError(
            f"cannot reach {target}{through}: no answer from {host} port {port} within the "
            f"connect timeout of {seconds:g}s (--connect-timeout)"
        ) from None
    except BaseException as caught:
        err = caught
    if isinstance(err, socket.gaierror):
        why = f"{host} does not resolve ({err.strerror or err})"
    elif isinstance(err, ConnectionRefusedError):
        why = f"{host} port {port} refused the connection"
    elif isinstance(err, TimeoutError):
        why = (
            f"no answer from {host} port {port} within the connect timeout of {seconds:g}s "
            "(--connect-timeout)"
        )
    elif isinstance(err, OSError):
        why = f"{host} port {port}: {err.strerror or err}"
    else:
        raise err
    raise UnreachableError(f"cannot reach {target}{through}: {why}", why)
