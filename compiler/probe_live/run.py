"""``accord probe --live``: every probe on every surface it names, asked of the live mesh.

* a surface that declares ``a2a: {url: ...}`` is asked over A2A (:mod:`.a2a`) — whatever its
  platform, since the agent's own answer is the one that matters;
* a catalog surface that enforces the catalog per caller is asked on its platform, as the
  persona (:mod:`.catalog`);
* any other surface (no catalog, a service identity, a runtime that returns nothing, and no
  A2A endpoint) cannot be asked as the persona: the model answers, and the outcome says so
  (``depth: model``).

A row filter answers with no rows, never an error: an ``empty`` live answer where the model
says the rows are withheld counts as ``denied`` (a deny-expecting probe's positive control
proves the session could read the table, :mod:`.catalog`). A probe that did not run (its
session, warehouse, roles, table or control failed; an A2A exchange that broke) is a *fault*
(the outcome's ``fault``), never an answer. The local probe config (``--config``, else
``$ACCORD_PROBE_CONFIG``, else ``.accord/probe.yaml``; never in the model) holds what only
the machine running the probes should know. It is local configuration: a file git tracks is
refused (a pull request could commit one), and a persona's bearer token is sent only to the
origins its entry lists, whatever URL the model names::

    snowflake:
      connection: accord_probe        # connections.toml entry of the probe user
      simulator_connection: accord_simulator   # --simulate: the simulator role's own entry
    databricks:
      warehouse_id: 1234567890abcdef
      probe_profiles:                 # one SDK profile per persona (~/.databrickscfg)
        cro_collaborator: probe-cro
    a2a_tokens:                       # per persona: the token (env:NAME) and where it may go
      cro_collaborator:
        token: env:A2A_TOKEN_CRO
        origins: [https://agents.example.com]
    timeout_seconds: 30
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from accord.compiler.connect.config import databricks_profile_clients
from accord.compiler.connect.executor import SnowflakeExecutor
from accord.compiler.core import secrets
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import decode, deepest_bracket, read_bytes
from accord.compiler.core.platforms import DATABRICKS, PLATFORMS, SNOWFLAKE
from accord.compiler.core.progress import counting, finished
from accord.compiler.meaning.probes import Answer, ProbeOutcome, loosest, questions
from accord.compiler.probe_live.a2a import A2AError, classify_error, classify_task, send_message
from accord.compiler.probe_live.canary import Canary, canary_for
from accord.compiler.probe_live.catalog import (
    DatabricksRunner,
    Runner,
    SnowflakeRunner,
    ask_catalog,
    probe_options,
)
from accord.compiler.probe_live.result import ProbeRun, describe
from accord.compiler.probe_live.simulate import CANNOT_SIMULATE, SimulatorRunner
from accord.targets.render import render_files

DEFAULT_CONFIG = Path(".accord/probe.yaml")
DEFAULT_TIMEOUT = 30.0
_CONFIG_KEYS = {"snowflake", "databricks", "a2a_tokens", "timeout_seconds"}
#: (section, key, type) of the settings read from the probe config's sections
_CONFIG_SHAPES = (
    ("snowflake", "connection", str),
    ("snowflake", "simulator_connection", str),
    ("databricks", "warehouse_id", str),
    ("databricks", "probe_profiles", dict),
)
_KIND_NAMES = {str: "string", dict: "mapping"}
#: the largest probe config read (a few connection settings and token names)
_MAX_CONFIG_BYTES = 1024 * 1024


@dataclass
class LiveOptions:
    platform: str = "all"
    config: str | None = None
    compiled: str | None = None
    connection: str | None = None
    warehouse_id: str | None = None
    #: platform -> Runner, used instead of the real clients (tests, other callers)
    runners: dict[str, Runner] = field(default_factory=dict)
    #: Snowflake personas simulated with POLICY_CONTEXT by the simulator role
    #: (:mod:`.simulate`), not logged in as
    simulate: bool = False
    #: what is shown as the probes are asked (``compiler.core.progress``), on standard error
    progress: Callable[[str], None] = field(default=lambda _: None)


class NotAllowed(UsageError):
    """A token asked for a URL whose origin its config entry does not list."""


@dataclass
class ProbeConfig:
    data: dict[str, Any] = field(default_factory=dict)
    path: str = ""

    @property
    def timeout(self) -> float:
        value = self.data.get("timeout_seconds", DEFAULT_TIMEOUT)
        return float(value)

    def token(self, persona: str, url: str) -> str | None:
        """The persona's bearer token for ``url``: None without an entry; a UsageError when
        ``url``'s origin is not one the entry allows (:class:`NotAllowed`: the token is never
        sent there)."""
        entry = (self.data.get("a2a_tokens") or {}).get(persona)
        if not entry:
            return None
        ref, origins = entry["token"], entry["origins"]
        target = origin_of(url)
        if target not in origins:
            raise NotAllowed(
                f"{self.path}: a2a_tokens.{persona}.origins does not list {target or url!r}: "
                f"the token is not sent there (allowed: {', '.join(origins)})"
            )
        value = os.environ.get(ref[4:])
        if value is None:
            raise UsageError(f"{self.path}: a2a_tokens.{persona}: ${ref[4:]} is not set")
        secrets.register(value)
        return value


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL, lower-case, the port always written; None
    for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host or parts.username or parts.password:
        return None
    port = port or (443 if scheme == "https" else 80)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}"


class _Places:
    """Where each key and value of a probe config is written (its YAML nodes' marks), so that
    a wrong setting is reported at its line and column, not at the file's start."""

    def __init__(self, text: str, name: str) -> None:
        self.name = name
        self.keys: dict[tuple[Any, ...], tuple[int, int]] = {}
        self.values: dict[tuple[Any, ...], tuple[int, int]] = {}
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            root = yaml.compose(text, Loader=loader)
        except (yaml.YAMLError, RecursionError):  # read already: safe_load took it
            return
        if root is not None:
            self._walk(root, ())

    def _walk(self, node: yaml.Node, path: tuple[Any, ...]) -> None:
        self.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            construct = yaml.constructor.SafeConstructor()
            for k, v in node.value:
                try:
                    key = construct.construct_object(k, deep=True)
                    hash(key)
                except (yaml.YAMLError, TypeError):
                    continue
                self.keys.setdefault((*path, key), (k.start_mark.line + 1, k.start_mark.column + 1))
                self._walk(v, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, (*path, i))

    def at(self, path: tuple[Any, ...], key: bool = False) -> Location:
        """Where ``path`` is written: its key (``key``) or its value, else the nearest
        enclosing value that is written, else the file's start."""
        found = self.keys.get(path) if key else None
        while found is None and path:
            found = self.values.get(path)
            path = path[:-1]
        line, column = found or self.values.get((), (1, 1))
        return Location(self.name, line, column)

    def error(self, path: tuple[Any, ...], message: str, key: bool = False) -> InputError:
        return InputError(Diagnostic(self.at(path, key), message))


def _tokens(raw: Any, at: _Places) -> dict[str, dict[str, Any]]:
    """``a2a_tokens`` checked: per persona ``{token: env:NAME, origins: [scheme://host]}``,
    each mistake located at the value it is about."""

    def bad(message: str, *path: Any) -> InputError:
        return at.error(("a2a_tokens", *path), f"a2a_tokens: {message}")

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise bad("a mapping of persona to {token: env:NAME, origins: [...]}")
    out: dict[str, dict[str, Any]] = {}
    for persona, entry in raw.items():
        if isinstance(entry, str):
            # the value is never quoted: it may be the token itself
            raise bad(
                f"{persona}: name the origins the token may be sent to, and the token by its "
                "environment variable: {token: env:NAME, origins: [https://agent.example.com]} "
                "(a token without origins would go wherever the model's a2a.url points); the "
                "value written here is not shown: if it is a token, rotate it",
                persona,
            )
        if not isinstance(entry, dict) or set(entry) != {"token", "origins"}:
            raise bad(f"{persona}: exactly the keys token and origins", persona)
        ref, origins = entry["token"], entry["origins"]
        if not isinstance(ref, str) or not ref.startswith("env:") or len(ref) < 5:
            raise bad(f"{persona}.token must be env:NAME", persona, "token")
        if not isinstance(origins, list) or not origins:
            raise bad(
                f"{persona}.origins: a non-empty list of scheme://host[:port]", persona, "origins"
            )
        allowed = []
        for i, o in enumerate(origins):
            norm = origin_of(o) if isinstance(o, str) else None
            if norm is None or urlsplit(o.strip()).path not in ("", "/"):
                raise bad(
                    f"{persona}.origins: {o!r} is not an origin (scheme://host[:port])",
                    persona,
                    "origins",
                    i,
                )
            allowed.append(norm)
        out[str(persona)] = {"token": ref, "origins": allowed}
    return out


def tracked_by_git(path: Path) -> bool:
    """Whether git tracks ``path`` in the repository around it (no git, no repository:
    not tracked)."""
    folder = path.resolve().parent
    try:
        proc = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "--error-unmatch", "--", path.name],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def load_config(path: str | None) -> ProbeConfig:
    """The local probe config; an absent default file is an empty config."""
    given = path or os.environ.get("ACCORD_PROBE_CONFIG")
    target = Path(given) if given else DEFAULT_CONFIG
    if not target.exists():
        if given:
            raise UsageError(f"probe config {target} does not exist")
        return ProbeConfig(path=str(target))
    if tracked_by_git(target):
        raise UsageError(
            f"probe config {target} is tracked by git: it names credentials and where they "
            "are sent, so it must be local (git rm --cached it and keep it in .gitignore, "
            "or name a file outside the checkout with --config or $ACCORD_PROBE_CONFIG)"
        )
    # a regular file of bounded size, UTF-8 text (a symlink to /dev/zero is refused unread)
    text = decode(
        read_bytes(target, "probe config", _MAX_CONFIG_BYTES), str(target), "probe config"
    )
    try:
        data = yaml.safe_load(text)
        data = {} if data is None else data
    except RecursionError:
        where = Location(str(target), *deepest_bracket(text))
        raise InputError(Diagnostic(where, "probe config: nested too deeply")) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = Location(str(target), mark.line + 1, mark.column + 1) if mark else None
        # the parser's problem only: its full text quotes the line, which may hold a token
        problem = getattr(err, "problem", None) or getattr(err, "context", None) or "invalid"
        raise InputError(
            Diagnostic(where or Location(str(target), 1, 1), f"not valid YAML: {problem}")
        ) from None
    at = _Places(text, str(target))
    if not isinstance(data, dict):
        raise at.error(
            (), f"probe config: a mapping of settings expected, not {type(data).__name__}"
        )
    unknown = [k for k in data if k not in _CONFIG_KEYS]
    if unknown:
        raise at.error(
            (unknown[0],),  # the first written, the message names them all
            f"probe config: unknown key(s) {', '.join(sorted(map(str, unknown)))} (expected "
            f"{', '.join(sorted(_CONFIG_KEYS))})",
            key=True,
        )
    for key in PLATFORMS:
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise at.error(
                (key,), f"probe config: {key} must be a mapping, not {type(data[key]).__name__}"
            )
    for section, key, kind in _CONFIG_SHAPES:
        found = (data.get(section) or {}).get(key)
        if found is not None and not isinstance(found, kind):
            raise at.error(
                (section, key),
                f"probe config: {section}.{key} must be a {_KIND_NAMES[kind]}, "
                f"not {type(found).__name__}",
            )
    for persona, profile in ((data.get("databricks") or {}).get("probe_profiles") or {}).items():
        if not isinstance(profile, str):
            raise at.error(
                ("databricks", "probe_profiles", persona),
                f"probe config: databricks.probe_profiles.{persona} must be a profile "
                f"name, not {type(profile).__name__}",
            )
    value = data.get("timeout_seconds", DEFAULT_TIMEOUT)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= 600:
        raise at.error(("timeout_seconds",), "timeout_seconds: a number in (0, 600]")
    data["a2a_tokens"] = _tokens(data.get("a2a_tokens"), at)
    return ProbeConfig(data, str(target))


# --------------------------------------------------------------------------------------------
# runners on the real clients


def _snowflake_runner(config: ProbeConfig, options: LiveOptions) -> Runner:
    section = config.data.get("snowflake") or {}
    connection = options.connection or section.get("connection")
    try:
        connect = SnowflakeExecutor.opener(probe_options(config.timeout, connection))
    except ImportError:
        raise UsageError("pip install 'accord[snowflake]' to probe Snowflake") from None
    return SnowflakeRunner(connect)


def _simulator_runner(config: ProbeConfig, options: LiveOptions, model: Any) -> Runner:
    """The simulator's runner: its connection is its own entry of the probe config, never the
    drift reader's (its connection, environment or the connector's default)."""
    connection = (config.data.get("snowflake") or {}).get("simulator_connection")
    if not connection:
        raise UsageError(
            f"probe --live --simulate needs snowflake.simulator_connection in {config.path}: "
            "the simulator role's own connections.toml entry (it owns the governed tables and "
            "holds APPLY on their policies: never the drift reader's connection)"
        )
    try:
        connect = SnowflakeExecutor.opener(probe_options(config.timeout, str(connection)))
    except ImportError:
        raise UsageError("pip install 'accord[snowflake]' to probe Snowflake") from None
    return SimulatorRunner(connect, model)


def _databricks_runner(config: ProbeConfig, options: LiveOptions) -> Runner:
    try:
        client_of = databricks_profile_clients(probe_options(config.timeout).timeouts)
    except ImportError:
        raise UsageError("pip install 'accord[databricks]' to probe Databricks") from None
    section = config.data.get("databricks") or {}
    warehouse = (
        options.warehouse_id
        or section.get("warehouse_id")
        or os.environ.get("DATABRICKS_WAREHOUSE_ID")
    )
    if not warehouse:
        raise UsageError("Databricks probes need a SQL warehouse: --warehouse-id or config")
    profiles = section.get("probe_profiles") or {}

    def client_for(persona: str) -> Any:
        profile = profiles.get(persona)
        if not profile:
            raise UsageError(
                f"{config.path}: databricks.probe_profiles has no profile for {persona} (group "
                "membership cannot be switched per session: one profile per persona)"
            )
        return client_of(profile)

    return DatabricksRunner(client_for, str(warehouse), config.timeout)


# --------------------------------------------------------------------------------------------
# the run


def _wanted(options: LiveOptions, kind: str) -> bool:
    return options.platform in ("all", kind)


def _canary(model: Any, probe: Any, dataset: str, column: str | None) -> Canary | None:
    return canary_for(model, dataset, column, probe.canary) if probe.canary else None


def compiled_fingerprint(project: Any, compiled: str | None) -> str:
    """SHA-256 over the compiled files (path and content, in path order): of ``compiled``'s
    SQL and Terraform files when given, else of what ``accord compile`` writes now."""
    digest = hashlib.sha256()
    if compiled is not None:
        root = Path(compiled)
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".sql", ".json"))
        for p in files:
            digest.update(os.fsencode(p.relative_to(root).as_posix()) + b"\0")
            digest.update(p.read_bytes() + b"\0")
        return digest.hexdigest()

    for rel, text in sorted(render_files(project, "all").items()):
        digest.update(str(rel).encode() + b"\0" + text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def run_live(project: Any, options: LiveOptions) -> ProbeRun:
    model = project.model
    config = load_config(options.config)
    runners: dict[str, Runner] = dict(options.runners)
    outcomes: list[ProbeOutcome] = []

    def runner(platform: str) -> Runner:
        if platform not in runners:
            if options.simulate and platform == SNOWFLAKE.name:
                runners[platform] = _simulator_runner(config, options, model)
            else:
                runners[platform] = _RUNNERS[platform](config, options)
        return runners[platform]

    asked = list(questions(model))
    options.progress("probe --live: asking each probe's persona")
    for q in counting(options.progress, asked):
        name, probe, surface = q.name, q.probe, q.surface
        s = model.surfaces[surface]
        model_says = q.modelled(model)
        if s.a2a is not None:
            if not _wanted(options, "a2a"):
                continue
            got, depth = _ask_agent(model, name, probe, surface, q.places, config), "live"
        elif q.perspective.mode(surface) == "catalog":
            if not _wanted(options, s.platform):
                continue
            expects_denial = probe.expect[surface] == "denied"
            got = _ask_platform(model, probe, q.places, runner(s.platform), expects_denial)
            depth = "live"
        else:
            if options.platform != "all":
                continue
            got, depth = model_says, "model"
        # whatever a platform or agent said back, no secret reaches the result
        got = replace(got, detail=secrets.redact(got.detail))
        if _withheld(got.disposition, model_says):
            got = Answer("denied", got.place, f"{got.detail} (a row filter answers with no rows)")
        if got.fault is not None:
            got = replace(got, disposition=None)
        outcomes.append(q.outcome(got, depth))
    finished(options.progress)
    simulated = options.simulate and any(
        model.surfaces[o.surface].platform == SNOWFLAKE.name and o.depth == "live" for o in outcomes
    )
    notes = list(CANNOT_SIMULATE) if simulated else []
    return ProbeRun(
        "live",
        project.fingerprint,
        compiled_fingerprint(project, options.compiled),
        outcomes,
        {n: describe(p) for n, p in model.probes.items()},
        notes,
    )


def _withheld(got: str | None, model_says: Answer) -> bool:
    """No rows where the model says a row filter withholds them: the filter's answer."""
    return got == "empty" and model_says.disposition == "denied"


def _ask_platform(
    model: Any,
    probe: Any,
    places: tuple[tuple[int, Any], ...],
    runner: Runner,
    expects_denial: bool = False,
) -> Answer:
    """The loosest answer over the places; a place whose probe did not run makes the whole
    answer a fault (the first, in place order), since its answer is unknown."""
    answers = []
    for _, place in places:
        canary = _canary(model, probe, place.dataset, place.column)
        a = ask_catalog(model, probe, place, runner, canary, expects_denial)
        answers.append(Answer(a.disposition, place, a.detail, fault=a.fault))
    faulted = next((a for a in answers if a.fault is not None), None)
    return faulted if faulted is not None else loosest(answers)


def _ask_agent(
    model: Any,
    name: str,
    probe: Any,
    surface: str,
    places: tuple[tuple[int, Any], ...],
    config: ProbeConfig,
) -> Answer:
    s = model.surfaces[surface]
    assert s.a2a is not None
    place = places[0][1]
    question = probe.question or _question(probe)
    canary = _canary(model, probe, place.dataset, place.column)
    timeout = min(s.a2a.timeout_seconds, config.timeout)
    try:
        token = config.token(probe.persona, s.a2a.url)
    except NotAllowed as err:
        return Answer(None, place, f"A2A: not asked: {err}")
    if token is None and s.identity == "caller":
        # an agent that runs as its caller answers whoever asks: asked without the persona's
        # credentials, its answer says nothing about the persona
        return Answer(
            None,
            place,
            f"A2A: {config.path} has no a2a_tokens entry for {probe.persona}, so {surface} "
            "(identity: caller) cannot be asked as the persona",
        )
    try:
        result = send_message(
            s.a2a.url,
            question,
            timeout=timeout,
            token=token,
            metadata={"accord": {"probe": name, "persona": probe.persona}},
        )
        got = classify_task(result, canary, place.column is not None)
    except A2AError as err:
        got = classify_error(err, canary)
    detail = f"A2A {got.state}: {got.detail}"
    # an exchange that broke (or a task still pending) is a fault, not an answer
    return Answer(got.disposition, place, detail, fault="agent" if got.kind == "fault" else None)


def _question(probe: Any) -> str:
    what = f"the {probe.column} values" if probe.column else "the rows"
    text = f"List {what} of {probe.dataset}"
    if probe.where:
        text += " for " + " and ".join(f"{d} {v}" for d, v in probe.where.items())
    return text + "."


#: each platform's probe runner: Snowflake switches the session's roles, Databricks asks with
#: one SDK profile per persona
_RUNNERS = {SNOWFLAKE.name: _snowflake_runner, DATABRICKS.name: _databricks_runner}
