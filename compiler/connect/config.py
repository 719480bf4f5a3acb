"""How accord connects to a live platform: the clients' own configuration, plus timeouts.

Snowflake: ``--connection NAME`` (a named connection in the connector's ``connections.toml``,
passed as the connector's own ``connection_name``), else the connector's default connection when
``connections.toml`` has one, else the ``SNOWFLAKE_*`` variables accord has always read.
Whatever the connector supports for authentication (password, key pair, external browser, OAuth)
passes through.

Databricks: ``databricks.sdk.WorkspaceClient`` with unified authentication: ``--profile NAME``
(``~/.databrickscfg``), else the SDK's environment variables and defaults. The SQL warehouse is
``--warehouse-id``, else ``DATABRICKS_WAREHOUSE_ID``.

Every live command has a connect timeout and a statement timeout; the defaults are below.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from accord.compiler.connect.defaults import DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT
from accord.compiler.core import secrets
from accord.compiler.core.errors import UsageError, one_line

#: connector parameter -> environment variable (the variables accord read before connections)
SNOWFLAKE_ENV = {
    "account": "SNOWFLAKE_ACCOUNT",
    "user": "SNOWFLAKE_USER",
    "password": "SNOWFLAKE_PASSWORD",
    "role": "SNOWFLAKE_ROLE",
    "warehouse": "SNOWFLAKE_WAREHOUSE",
    "database": "SNOWFLAKE_DATABASE",
    "schema": "SNOWFLAKE_SCHEMA",
    "authenticator": "SNOWFLAKE_AUTHENTICATOR",
    "private_key_file": "SNOWFLAKE_PRIVATE_KEY_FILE",
    "private_key_file_pwd": "SNOWFLAKE_PRIVATE_KEY_FILE_PWD",
    # for a proxy, a private link or a local stand-in
    "host": "SNOWFLAKE_HOST",
    "port": "SNOWFLAKE_PORT",
    "protocol": "SNOWFLAKE_PROTOCOL",
}

EXTRAS = {
    "snowflake": ("snowflake.connector", "snowflake"),
    "databricks": ("databricks.sdk", "databricks"),
}


def require_extra(platform: str) -> None:
    """Exit 2 with the pip command when the platform's client is not installed."""
    module, extra = EXTRAS[platform]
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise UsageError(f"the {platform} client is not installed: pip install 'accord[{extra}]'")


@dataclass(frozen=True)
class Timeouts:
    #: seconds to reach the platform and log in (an unreachable host fails within it)
    connect: float = DEFAULT_CONNECT_TIMEOUT
    #: seconds one statement may run, polling included
    statement: float = DEFAULT_STATEMENT_TIMEOUT


@dataclass(frozen=True)
class LiveOptions:
    """Connection options of every live command (see ``compiler.commands.options``)."""

    connection: str | None = None
    profile: str | None = None
    warehouse_id: str | None = None
    timeouts: Timeouts = Timeouts()
    #: how many per-object reads run at once (``--jobs``); output is the same for any value
    jobs: int = 4


def _default_snowflake_connection() -> str | None:
    """The name of the connector's default connection, when one is configured: the
    ``SNOWFLAKE_DEFAULT_CONNECTION_NAME`` variable, else ``default_connection_name`` in
    ``config.toml``, else a ``[default]`` entry of ``connections.toml`` (the connector's own
    order). accord passes it as ``connection_name``: the connector reads the default by itself
    only when no other parameter is given, and accord always gives timeouts."""
    import tomllib

    named = os.environ.get("SNOWFLAKE_DEFAULT_CONNECTION_NAME")
    if named:
        return named
    home = os.environ.get("SNOWFLAKE_HOME") or os.path.expanduser("~/.snowflake")
    found: dict[str, Any] = {}
    for name in ("config.toml", "connections.toml"):
        path = os.path.join(home, name)
        if not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                found[name] = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise UsageError(f"{path}: cannot read it: {err}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{path}: cannot read it: it is not UTF-8 text") from None
        except RecursionError:
            raise UsageError(
                f"{path}: cannot read it: arrays or inline tables nest too deeply"
            ) from None
    config = found.get("config.toml", {})
    if config.get("default_connection_name"):
        return str(config["default_connection_name"])
    if "default" in found.get("connections.toml", {}) or "default" in config.get("connections", {}):
        return "default"
    return None


_warned: set[str] = set()


def watch_snowflake_files() -> None:
    """Register the secrets of every connection in ``connections.toml`` and ``config.toml``
    (the connector reads them itself; accord must know them to redact what the platform
    echoes), and warn once per file when one holding a secret is readable by group or others,
    as the connector's own permission check does."""
    import tomllib

    home = os.environ.get("SNOWFLAKE_HOME") or os.path.expanduser("~/.snowflake")
    for name in ("connections.toml", "config.toml"):
        path = os.path.join(home, name)
        try:
            with open(path, "rb") as fh:
                mode = os.fstat(fh.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    continue
                data = tomllib.loads(fh.read(1 << 20).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # the connector reports what it cannot read
        entries = data.get("connections", {}) if name == "config.toml" else data
        held = False
        for entry in entries.values() if isinstance(entries, dict) else ():
            if isinstance(entry, dict):
                found = [k for k in entry if str(k).lower() in secrets.SECRET_KEYS]
                held = held or bool(found)
                secrets.register_keys(entry)
        if held and mode & (stat.S_IRGRP | stat.S_IROTH) and path not in _warned:
            _warned.add(path)
            sys.stderr.write(
                f"accord: warning: {path} holds a password or token and is readable by group "
                f"or others (mode {stat.S_IMODE(mode):o}): chmod 600 {path}\n"
            )


def register_databricks(client: Any) -> None:
    """Register the secrets of a Databricks client's configuration (token, password, client
    secret), whichever source the SDK found them in."""
    config = getattr(client, "config", None)
    secrets.register_keys(
        {
            k: getattr(config, k, None)
            for k in ("token", "password", "client_secret", "azure_client_secret")
        }
    )


def snowflake_params(options: LiveOptions) -> dict[str, Any]:
    """The keyword arguments for ``snowflake.connector.connect`` (timeouts included)."""
    import snowflake.connector

    t = options.timeouts
    params: dict[str, Any] = {"login_timeout": max(1, int(t.connect))}
    if hasattr(snowflake.connector, "ConnectionConfig"):  # the 4.x/5.x core
        params.update(
            connect_timeout=max(1, int(t.connect)),
            query_timeout=max(1, int(t.statement)),
            request_timeout=max(1, int(t.connect)),
            # accord runs no asynchronous queries: always log out on close
            enable_server_session_keep_alive_auto_detection=False,
        )
    else:  # the 3.x connector
        params.update(network_timeout=max(1, int(t.statement)), socket_timeout=int(t.connect))
    params["session_parameters"] = {"STATEMENT_TIMEOUT_IN_SECONDS": max(1, int(t.statement))}
    watch_snowflake_files()
    if options.connection:
        return {**params, "connection_name": options.connection}
    env = {k: os.environ[v] for k, v in SNOWFLAKE_ENV.items() if os.environ.get(v)}
    secrets.register_keys(env)
    default = None if env.get("account") else _default_snowflake_connection()
    if default:
        return {**params, "connection_name": default}
    missing = [SNOWFLAKE_ENV[k] for k in ("account", "user") if not env.get(k)]
    if missing:
        raise UsageError(
            f"set {' and '.join(missing)} (or pass --connection NAME, or name a default "
            "connection in connections.toml) to connect to Snowflake"
        )
    if "port" in env:
        try:
            env["port"] = int(env["port"])
        except ValueError:
            raise UsageError(f"SNOWFLAKE_PORT={env['port']!r} is not a port number") from None
    return {**params, **env}


class _NoHostMetadataNotice(logging.Filter):
    """The SDK warns on every client it builds when the workspace serves no
    ``/.well-known/databricks-config`` (it then uses the configuration it was given, as
    accord wants): said on every command, it buries what accord says. Every other SDK warning
    still reaches the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(
            "Failed to automatically resolve config from host metadata"
        )


_HOST_METADATA = _NoHostMetadataNotice()


def quiet_host_metadata() -> None:
    """Drop the SDK's host-metadata notice (once; idempotent)."""
    for name in ("databricks.sdk", "databricks.sdk.config"):
        log = logging.getLogger(name)
        if _HOST_METADATA not in log.filters:
            log.addFilter(_HOST_METADATA)


def databricks_client(options: LiveOptions) -> Any:
    """A ``WorkspaceClient`` with unified authentication and accord's timeouts."""
    quiet_host_metadata()
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.config import Config
    from databricks.sdk.errors import DatabricksError

    t = options.timeouts
    kwargs: dict[str, Any] = {
        "http_timeout_seconds": max(1, int(t.connect)),
        # the SDK retries a refused or silent host until retry_timeout_seconds (default 300)
        "retry_timeout_seconds": max(1, int(t.connect)),
    }
    if options.profile:
        kwargs["profile"] = options.profile
    try:
        client = WorkspaceClient(config=Config(**kwargs))
        register_databricks(client)
        return client
    except (DatabricksError, ValueError) as err:
        raise UsageError(
            f"cannot configure the Databricks client: {one_line(err, first=True)}"
        ) from None


def databricks_profile_clients(timeouts: Timeouts) -> Callable[[str], Any]:
    """What builds the ``WorkspaceClient`` of one SDK profile (a persona's own principal, for
    a persona session), ``timeouts.connect`` on every request and on the SDK's retries. Its
    configuration errors are the caller's (a persona session's, not a usage error); ImportError
    when the SDK is not installed."""
    quiet_host_metadata()
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.config import Config

    seconds = int(timeouts.connect)

    def client(profile: str) -> Any:
        made = WorkspaceClient(
            config=Config(
                profile=profile, http_timeout_seconds=seconds, retry_timeout_seconds=seconds
            )
        )
        register_databricks(made)
        return made

    return client


def warehouse_id(options: LiveOptions) -> str:
    found = options.warehouse_id or os.environ.get("DATABRICKS_WAREHOUSE_ID")
    if not found:
        raise UsageError(
            "pass --warehouse-id ID or set DATABRICKS_WAREHOUSE_ID (the SQL warehouse accord "
            "runs statements on)"
        )
    return found
