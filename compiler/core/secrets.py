"""The values accord knows to be secrets, and the one function that removes them from text.

A platform or an agent may quote back what it was sent: a login error that repeats the
password, a proxy page that echoes the ``Authorization`` header, a JSON-RPC error holding the
bearer token. Whatever it sends, no secret accord knows reaches a message, a log line, a
result file or a report. :func:`redact` is the one scrubber, and every output passes it:

* every byte accord writes to standard output and standard error, in every format (text,
  json, sarif, github, markdown, junit, yaml), at the one place all of it goes through
  (:class:`compiler.core.visible.Guard`, installed by ``accord``'s entry point);
* every report file it writes (:func:`compiler.core.outdir.write_report`: the probe result,
  the mesh manifest, proposed probes; and each line of the migration ledger);
* and, earlier, where outside text is captured (the executors' errors, a denial's quote of
  the platform, :func:`compiler.core.errors.one_line`), so that no object accord keeps holds
  one either.

Known secrets are the values of the variables that hold them (:data:`SECRET_ENV`), and every
value registered with :func:`register` where accord reads one (an A2A bearer token, a salt,
the password, token or private-key passphrase of a Snowflake connection, a Databricks
profile's token or client secret). Each is removed as sent and in the forms it comes back
in, and in the forms each output format writes it: JSON- and Python-escaped, SQL-quoted,
HTML- and XML-escaped (text and attribute), URL-encoded (either case of the hexadecimal
digits, ``+`` or ``%20`` for a space), as a GitHub annotation's message and property, and as
Markdown text and code. Values shorter than :data:`MIN_LENGTH` are not redacted (they would
erase ordinary words); no real credential is that short.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from accord.compiler.core import markdown
from accord.compiler.core.annotations import escape_data, escape_property

#: what replaces a secret
MASK = "[secret]"
#: shorter values are not redacted
MIN_LENGTH = 4
#: the variables whose values are secrets (the clients' own names)
SECRET_ENV = (
    "SNOWFLAKE_PASSWORD",
    "SNOWFLAKE_PASSCODE",
    "SNOWFLAKE_TOKEN",
    "SNOWFLAKE_PRIVATE_KEY_FILE_PWD",
    "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE",
    "PRIVATE_KEY_PASSPHRASE",
    "DATABRICKS_TOKEN",
    "DATABRICKS_PASSWORD",
    "DATABRICKS_CLIENT_SECRET",
    "ARM_CLIENT_SECRET",
    "GOOGLE_CREDENTIALS",
)
#: keys of a connection (connections.toml, .databrickscfg, the SDK's Config) that hold secrets
SECRET_KEYS = frozenset(
    {
        "password",
        "passcode",
        "token",
        "private_key_file_pwd",
        "private_key_passphrase",
        "oauth_client_secret",
        "client_secret",
        "azure_client_secret",
    }
)

_registered: set[str] = set()
_cache: tuple[frozenset[str], re.Pattern[str] | None] = (frozenset(), None)


def register(*values: Any) -> None:
    """Remember ``values`` (those that are strings) as secrets for the rest of the process."""
    for value in values:
        if isinstance(value, str) and len(value.strip()) >= MIN_LENGTH:
            _registered.add(value)
            if value.strip() != value:
                _registered.add(value.strip())


def register_keys(mapping: Any) -> None:
    """Register the values of a connection's secret keys (:data:`SECRET_KEYS`)."""
    if isinstance(mapping, dict):
        register(*(v for k, v in mapping.items() if str(k).lower() in SECRET_KEYS))


def known() -> frozenset[str]:
    """Every secret known now: registered values and those of :data:`SECRET_ENV`."""
    env = (os.environ.get(name) for name in SECRET_ENV)
    found = {v for v in env if v and len(v.strip()) >= MIN_LENGTH}
    found |= {v.strip() for v in found}
    return frozenset(_registered | found)


def _percent(form: str) -> str:
    """A URL-encoded form as a pattern: the hexadecimal digits of each escape in either case."""
    out = []
    i = 0
    while i < len(form):
        if form[i] == "%" and i + 2 < len(form):
            hi, lo = form[i + 1], form[i + 2]
            out.append("%" + f"[{hi.lower()}{hi.upper()}][{lo.lower()}{lo.upper()}]")
            i += 3
        else:
            out.append(re.escape(form[i]))
            i += 1
    return "".join(out)


def forms(value: str) -> set[str]:
    """The patterns of ``value`` as sent and as it may come back quoted or encoded."""
    import html  # noqa: PLC0415 - html.entities is a cost of every command's start otherwise

    plain = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        value.replace("'", "''"),
        value.replace('"', '\\"'),
        html.escape(value),
        html.escape(value, quote=False),
        # an XML attribute as ElementTree writes it (JUnit): `"` escaped, `'` not
        html.escape(value, quote=False).replace('"', "&quot;"),
        escape_data(value),
        escape_property(value),
        markdown.text(value),
        value.replace("|", "\\|"),  # inside a Markdown code span in a table
    }
    patterns = {re.escape(f) for f in plain if f}
    for encoded in {
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        quote_plus(value, safe=""),
    }:
        if encoded != value:
            patterns.add(_percent(encoded))
    return patterns


def _pattern(secrets: Iterable[str]) -> re.Pattern[str] | None:
    found = {p for s in secrets for p in forms(s)}
    if not found:
        return None
    return re.compile("|".join(sorted(found, key=lambda p: (-len(p), p))))


def redact(text: str) -> str:
    """``text`` with every known secret, in every form of :func:`forms`, replaced by
    :data:`MASK`."""
    global _cache
    if not isinstance(text, str) or not text:
        return text
    secrets = known()
    if secrets != _cache[0]:
        _cache = (secrets, _pattern(secrets))
    pattern = _cache[1]
    return pattern.sub(MASK, text) if pattern is not None else text


def redact_tree(value: Any) -> Any:
    """A JSON-like value with :func:`redact` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_tree(k): redact_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_tree(v) for v in value)
    return value


def forget() -> None:
    """Forget every registered value (for tests)."""
    global _cache
    _registered.clear()
    _cache = (frozenset(), None)
