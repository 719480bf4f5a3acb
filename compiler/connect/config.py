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
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from accord.compiler.connect.defaults import DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT
from accord.compiler.connect.reach import Target, preflight, proxy_of, url_target
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
    """The name of the connector's default connection (see :func:`default_snowflake_connection`)."""
    found = default_snowflake_connection()
    return found[0] if found else None


def default_snowflake_connection() -> tuple[str, str] | None:
    """The name of the connector's default connection and the setting that named it, when one
    is configured: the
    ``SNOWFLAKE_DEFAULT_CONNECTION_NAME`` variable, else ``default_connection_name`` in
    ``config.toml``, else a ``[default]`` entry of ``connections.toml`` (the connector's own
    order). accord passes it as ``connection_name``: the connector reads the default by itself
    only when no other parameter is given, and accord always gives timeouts."""
    import tomllib

    named = os.environ.get("SNOWFLAKE_DEFAULT_CONNECTION_NAME")
    if named:
        return named, "SNOWFLAKE_DEFAULT_CONNECTION_NAME"
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
        where = os.path.join(home, "config.toml")
        return str(config["default_connection_name"]), f"default_connection_name in {where}"
    if "default" in found.get("connections.toml", {}) or "default" in config.get("connections", {}):
        return "default", "the connector's default connection"
    return None


def _snowflake_entry(name: str) -> tuple[dict[str, Any], str] | None:
    """The named connection as the connector reads it (``connections.toml``, else the
    ``[connections]`` of ``config.toml``) and the file it is in; None when neither has it or
    neither can be read (the connector then says so itself)."""
    import tomllib

    home = os.environ.get("SNOWFLAKE_HOME") or os.path.expanduser("~/.snowflake")
    for file in ("connections.toml", "config.toml"):
        path = os.path.join(home, file)
        try:
            with open(path, "rb") as fh:
                data = tomllib.loads(fh.read(1 << 20).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            continue
        entries = data.get("connections", {}) if file == "config.toml" else data
        entry = entries.get(name) if isinstance(entries, dict) else None
        if isinstance(entry, dict):
            return entry, path
    return None


def snowflake_target(params: dict[str, Any], options: LiveOptions) -> Target | str:
    """What ``snowflake.connector.connect(**params)`` reaches: the account, its host and port
    (the connector's default host is ``<account>.snowflakecomputing.com`` on 443; ``host``,
    ``port`` and ``protocol`` override it), and the settings they came from. A named
    connection that accord cannot read is described in words (the connector reports it)."""
    name = params.get("connection_name")
    entry: dict[str, Any] = {}
    if name:
        if options.connection == name:
            how = "--connection"
        else:
            default = default_snowflake_connection()
            how = default[1] if default else "the connector's default connection"
        found = _snowflake_entry(str(name))
        if found is None:
            home = os.environ.get("SNOWFLAKE_HOME") or os.path.expanduser("~/.snowflake")
            where = os.path.join(home, "connections.toml")
            return f"Snowflake connection {name!r} (from {how}; accord finds none in {where})"
        entry, path = found
        settings = {k: entry.get(k) for k in ("account", "user", "host", "port", "protocol")}
        origin = f"connection {name!r} in {path}, from {how}"
    else:
        settings = {k: params.get(k) for k in ("account", "user", "host", "port", "protocol")}
        named = [SNOWFLAKE_ENV[k] for k in ("account", "host", "port") if params.get(k)]
        origin = "from " + ", ".join(named)
    if settings.get("user"):
        origin += f"; user {settings['user']!r}"
    account = str(settings.get("account") or "")
    protocol = str(settings.get("protocol") or "https").lower()
    host = str(settings.get("host") or f"{account}.snowflakecomputing.com")
    port = settings.get("port") or (80 if protocol == "http" else 443)
    target = url_target("Snowflake", f"{protocol}://{host}:{port}", origin, account or None)
    # the connector's own proxy settings win over the environment's, which it honours unless
    # use_proxy_env is false (connection_config.py: proxy, proxy_host/proxy_port, use_proxy_env)
    proxy = None
    if entry.get("proxy"):
        proxy = proxy_of(str(entry["proxy"]), "its proxy setting")
    elif entry.get("proxy_host"):
        where = f"{entry['proxy_host']}:{entry.get('proxy_port') or 80}"
        proxy = proxy_of(where, "its proxy_host setting")
    uses_env = entry.get("use_proxy_env") not in (False, "false", "False", 0)
    return replace(target, proxy=proxy, env_proxy=uses_env)


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


def databricks_target(config: Any, profile_from: str | None = None) -> Target:
    """The workspace a Databricks SDK configuration reaches and where its host came from: the
    SDK reads ``DATABRICKS_HOST`` before the profile (``--profile``, else
    ``DATABRICKS_CONFIG_PROFILE``, else ``[__settings__] default_profile``, else ``DEFAULT``) of
    ``~/.databrickscfg`` (or ``DATABRICKS_CONFIG_FILE``). ``profile_from`` names the setting
    that chose the profile, when accord passed one (``--profile``, a probe's profile)."""
    host = str(getattr(config, "host", None) or "")
    profile = getattr(config, "profile", None)
    file = getattr(config, "config_file", None) or "~/.databrickscfg"
    if os.environ.get("DATABRICKS_HOST"):
        origin = "host from DATABRICKS_HOST"
    else:
        origin = f"host of profile {profile or 'DEFAULT'!r} in {file}"
        if profile_from:
            origin += f", from {profile_from}"
        elif os.environ.get("DATABRICKS_CONFIG_PROFILE"):
            origin += ", from DATABRICKS_CONFIG_PROFILE"
    return url_target("Databricks", host, origin)


def databricks_credentials(config: Any) -> str:
    """Which credentials a built configuration uses, in words (never their value)."""
    kind = getattr(config, "auth_type", None) or "unknown"
    if kind == "pat" and os.environ.get("DATABRICKS_TOKEN"):
        return "a token from DATABRICKS_TOKEN"
    profile = getattr(config, "profile", None)
    return f"{kind} credentials" + (f" of profile {profile!r}" if profile else "")


def _config(
    seconds: float,
    profile: str | None,
    tried: list[Target] | None = None,
    profile_from: str = "--profile",
) -> Any:
    """The SDK's ``Config`` with accord's timeouts (``seconds`` on every request and on the
    SDK's retries: it retries a refused or silent host until ``retry_timeout_seconds``, 300 by
    default), that checks the workspace answers before it asks it anything: the SDK asks the
    host for ``/.well-known/databricks-config`` while the configuration is built, and retries a
    refused connection (``databricks/sdk/config.py``, ``_resolve_host_metadata``), so the
    check (:func:`compiler.connect.reach.preflight`) runs at that step; on a release without it,
    :func:`reach_databricks` runs the check before the first request. ``tried`` gets the
    target once the configuration names it (a host that never answers is then named)."""
    from databricks.sdk.config import Config

    kwargs: dict[str, Any] = {
        "http_timeout_seconds": max(1, int(seconds)),
        "retry_timeout_seconds": max(1, int(seconds)),
    }
    if profile:
        kwargs["profile"] = profile
    if not callable(getattr(Config, "_resolve_host_metadata", None)):
        return Config(**kwargs)

    class Checked(Config):  # type: ignore[misc]
        # the configuration attributes are the SDK's own (``attributes()`` reads a class's
        # own ``__dict__``, so a subclass names them explicitly)
        _attributes: ClassVar[list[Any]] = list(Config.attributes())
        accord_checked = False

        def _resolve_host_metadata(self) -> None:
            if self.host:
                target = databricks_target(self, profile_from if profile else None)
                if tried is not None:
                    tried.append(target)
                preflight(target, seconds)
                self.accord_checked = True
            super()._resolve_host_metadata()

    return Checked(**kwargs)


def reach_databricks(client: Any, seconds: float, profile_from: str | None = None) -> None:
    """The pre-flight check of a client whose configuration did not run it."""
    config = getattr(client, "config", None)
    if config is not None and not getattr(config, "accord_checked", False):
        preflight(databricks_target(config, profile_from), seconds)


def databricks_client(options: LiveOptions, tried: list[Target] | None = None) -> Any:
    """A ``WorkspaceClient`` with unified authentication and accord's timeouts; a workspace
    that refuses the connection or does not resolve is an :class:`UnreachableError` at once."""
    quiet_host_metadata()
    from databricks.sdk import WorkspaceClient
    from databricks.sdk.errors import DatabricksError

    try:
        client = WorkspaceClient(config=_config(options.timeouts.connect, options.profile, tried))
        register_databricks(client)
        return client
    except (DatabricksError, ValueError) as err:
        raise UsageError(
            f"cannot configure the Databricks client{_profile_said(options.profile)}: "
            f"{one_line(err, first=True)}"
        ) from None


def _profile_said(profile: str | None) -> str:
    if profile:
        return f" (profile {profile!r}, from --profile)"
    if os.environ.get("DATABRICKS_CONFIG_PROFILE"):
        named = os.environ["DATABRICKS_CONFIG_PROFILE"]
        return f" (profile {named!r}, from DATABRICKS_CONFIG_PROFILE)"
    return ""


#: where a persona's Databricks profile is named (the probe config)
PROBE_PROFILES = "the probe config's databricks.probe_profiles"


def databricks_profile_clients(timeouts: Timeouts) -> Callable[[str], Any]:
    """What builds the ``WorkspaceClient`` of one SDK profile (a persona's own principal, for
    a persona session), ``timeouts.connect`` on every request and on the SDK's retries. Its
    configuration errors are the caller's (a persona session's, not a usage error); ImportError
    when the SDK is not installed."""
    quiet_host_metadata()
    from databricks.sdk import WorkspaceClient

    def client(profile: str) -> Any:
        made = WorkspaceClient(config=_config(timeouts.connect, profile, None, PROBE_PROFILES))
        reach_databricks(made, timeouts.connect, PROBE_PROFILES)
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
