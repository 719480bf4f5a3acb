"""``accord sandbox``: local stand-ins of both platforms for an estate, and the settings that
point accord's live commands at them.

The stand-ins (``accord.sandbox``: the ones the live tests run against) never read the model:
:func:`seed_of` hands them a neutral seed made from it, the one seed the tests plant too
(tests/live_helpers.py):

* per dataset, its table with the columns the model declares, the key column of each
  entitlement dimension and each join key, and ``RESULT_VALUE`` (a column nobody governs);
  and rows: one per value of the row filter's entitlement dimension (per combination of
  values, for several), and for each probe with a ``canary`` and a ``where``, rows of its
  ``where`` values holding the canary in the probe's column (so ``accord probe --live`` tells
  clear from masked);
* on Snowflake, the probe user :data:`PROBE_USER`, granted every principal's role (the
  persona sessions of ``accord probe --live`` switch roles: docs/probes.md);
* on Databricks, one principal per persona, in exactly the persona's account groups (group
  membership cannot be switched per session: one SDK profile per persona);
* the principals' roles and account groups, and their hierarchy (``inherits``), as an
  administrator keeps them (accord reads it, never changes it).

The settings are files (:func:`settings`), written into the sandbox's own directory and
printed: a ``connections.toml`` with the deployer's connection and the probe user's, a
Databricks config file with the deployer's profile and one per persona, the probe config of
``accord probe --live``, and ``env``, the variables that point accord at all of them. The
credentials are the stand-ins' fixed placeholders; salts are never written: the estate's salt
references are named, for the user to set where ``accord migrate apply`` runs.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from accord.compiler.core.errors import UsageError
from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import Project
from accord.sandbox.seed import PlatformSeed, Seed, Table
from accord.sandbox.serve import (
    ACCOUNT,
    DEPLOYER_TOKEN,
    PASSWORD,
    WAREHOUSE,
    Serving,
    serving,
)

#: the Snowflake users: the deployer (who also reads, as the account's administrator) and the
#: probe user of ``accord probe --live``, who holds every persona's roles
DEPLOYER = "ACCORD"
PROBE_USER = "ACCORD_PROBE"
#: the names the settings give the connections and profiles
CONNECTION = "sandbox"
PROBE_CONNECTION = "sandbox_probe"
PROFILE = "sandbox"
#: a column of every table that no policy governs (where a console policy can land)
UNGOVERNED = "RESULT_VALUE"
#: the variables the ``env`` file unsets: each would win over the sandbox's settings
SHADOWING = (
    "SNOWFLAKE_ACCOUNT",
    "SNOWFLAKE_USER",
    "SNOWFLAKE_PASSWORD",
    "SNOWFLAKE_ROLE",
    "SNOWFLAKE_AUTHENTICATOR",
    "SNOWFLAKE_PRIVATE_KEY_FILE",
    "SNOWFLAKE_HOST",
    "SNOWFLAKE_PORT",
    "SNOWFLAKE_PROTOCOL",
    "DATABRICKS_HOST",
    "DATABRICKS_TOKEN",
    "DATABRICKS_CLIENT_ID",
    "DATABRICKS_CLIENT_SECRET",
    "DATABRICKS_AUTH_TYPE",
)
#: the most rows seeded for one table's values, or one probe's canary
MAX_ROWS = 256
#: the files of the sandbox's directory, in the order they are printed
FILES = ("connections.toml", "databrickscfg", "probe.yaml", "env")


# --------------------------------------------------------------------------------------------
# the seed


def seed_of(model: PolicyModel) -> Seed:
    """The neutral seed of ``model``'s estate (module docstring)."""

    def identity(name: str, platform: str) -> str | None:
        principal = model.principals.get(name)
        return principal.identity(platform) if principal is not None else None

    def platform_seed(platform: str, members: dict[str, tuple[str, ...]]) -> PlatformSeed:
        names = sorted({i for n in model.principals if (i := identity(n, platform))})
        edges = {
            (holder, held)
            for name, principal in model.principals.items()
            for parent in principal.inherits
            if (holder := identity(name, platform)) and (held := identity(parent, platform))
        }
        return PlatformSeed(_tables(model, platform), members, tuple(names), tuple(sorted(edges)))

    snowflake = platform_seed("snowflake", {})
    groups = {
        persona: tuple(sorted({g for p in held if (g := identity(p, "databricks"))}))
        for persona, held in sorted(model.personas.items())
    }
    return Seed(
        snowflake=replace(snowflake, members={PROBE_USER: snowflake.identities}),
        databricks=platform_seed("databricks", groups),
    )


def _tables(model: PolicyModel, platform: str) -> tuple[Table, ...]:
    string, fold = facts(platform).string_type, facts(platform).fold
    out = []
    for ds in model.datasets.values():
        if ds.platform != platform:
            continue
        columns = {c: spec.type for c, spec in ds.columns.items()}
        for _, key, _ in ds.filter_dimensions:  # every dimension's key column
            columns.setdefault(key, string)
        for key in ds.join.allowed_join_keys if ds.join is not None else ():  # join keys
            columns.setdefault(key, string)
        columns[fold(UNGOVERNED)] = string
        out.append(Table(ds.table, columns, _rows(model, ds, columns)))
    return tuple(out)


def _rows(model: PolicyModel, ds: Any, columns: dict[str, str]) -> tuple[dict[str, str], ...]:
    """A row of each value of the row filter's entitlement dimension (of each combination of
    values, for a filter over several dimensions; at most :data:`MAX_ROWS`), and for each probe
    with a ``canary`` and a ``where`` naming dimensions of this table, rows of the ``where``
    values (with each value of the dimensions it does not name) holding the canary in the
    probe's column. Every other cell holds ``<column>-<values>``."""
    by_upper = {c.upper(): c for c in columns}
    keys = {dim: by_upper[col.upper()] for dim, col, _ in ds.filter_dimensions}

    def rows_of(fixed: dict[str, str]) -> list[dict[str, str]]:
        free = [(keys[d], sorted(model.entitlements[d])) for d in keys if d not in fixed]
        out = []
        for chosen in itertools.islice(itertools.product(*(v for _, v in free)), MAX_ROWS):
            values = {keys[d]: v for d, v in fixed.items()}
            values |= {column: v for (column, _), v in zip(free, chosen, strict=True)}
            label = "-".join(values[keys[d]] for d in keys)
            out.append({name: f"{name.lower()}-{label}" for name in columns} | values)
        return out

    rows = rows_of({})
    for probe in model.probes.values():
        if not (probe.canary and probe.column and probe.where and keys):
            continue
        if not set(probe.where) <= set(keys) or probe.column.upper() not in by_upper:
            continue
        for canary in rows_of(dict(probe.where)):
            rows.append(canary | {by_upper[probe.column.upper()]: probe.canary})
    return tuple(rows)


# --------------------------------------------------------------------------------------------
# the settings


@dataclass(frozen=True)
class Settings:
    """The sandbox's files (name -> text), where they are written, and the salt references
    the estate's masks read when SQL is applied."""

    directory: Path
    files: dict[str, str]
    salts: tuple[str, ...]


def settings(model: PolicyModel, served: Serving, directory: Path) -> Settings:
    """The settings that point accord at ``served``, for files in ``directory`` (absolute)."""
    sf = {"account": ACCOUNT, "password": PASSWORD, "host": "127.0.0.1"}
    sf |= {"port": served.snowflake_port, "protocol": "http"}
    connections = "".join(
        _toml(name, {"account": ACCOUNT, "user": user} | sf)
        for name, user in ((CONNECTION, DEPLOYER), (PROBE_CONNECTION, PROBE_USER))
    )
    personas = sorted(model.personas)
    profiles = [(PROFILE, DEPLOYER_TOKEN)] + [
        (f"{PROFILE}-{p}", served.tokens[p]) for p in personas if p in served.tokens
    ]
    databrickscfg = "".join(
        f"[{name}]\nhost = {served.databricks_url}\ntoken = {token}\n\n" for name, token in profiles
    )
    probe = (
        f"snowflake:\n  connection: {PROBE_CONNECTION}\n"
        f"databricks:\n  warehouse_id: {WAREHOUSE}\n"
        + ("  probe_profiles:\n" if personas else "")
        + "".join(f"    {p}: {PROFILE}-{p}\n" for p in personas)
        + "timeout_seconds: 30\n"
    )
    exports = {
        "SNOWFLAKE_HOME": str(directory),
        "SNOWFLAKE_DEFAULT_CONNECTION_NAME": CONNECTION,
        # the connector asks cloud metadata endpoints which platform it runs on: not here
        "SNOWFLAKE_DISABLE_PLATFORM_DETECTION": "true",
        "DATABRICKS_CONFIG_FILE": str(directory / "databrickscfg"),
        "DATABRICKS_CONFIG_PROFILE": PROFILE,
        "DATABRICKS_WAREHOUSE_ID": WAREHOUSE,
        "ACCORD_PROBE_CONFIG": str(directory / "probe.yaml"),
    }
    env = f"unset {' '.join(SHADOWING)}\n" + "".join(
        f"export {k}={shlex.quote(v)}\n" for k, v in exports.items()
    )
    files = {
        "connections.toml": connections.rstrip("\n") + "\n",
        "databrickscfg": databrickscfg.rstrip("\n") + "\n",
        "probe.yaml": probe,
        "env": env,
    }
    return Settings(directory, files, salt_references(model))


def _toml(name: str, entry: dict[str, Any]) -> str:
    lines = [f"{k} = {v}" if isinstance(v, int) else f'{k} = "{v}"' for k, v in entry.items()]
    return f"[{name}]\n" + "\n".join(lines) + "\n\n"


def salt_references(model: PolicyModel) -> tuple[str, ...]:
    """Every salt reference of the model's masks, once, in order."""
    refs = {ref for m in model.masks.values() for ref in (m.salt or {}).values()}
    return tuple(sorted(refs))


# --------------------------------------------------------------------------------------------
# the files


def write_settings(found: Settings, made: list[Path]) -> None:
    """The files into their directory (made if missing: each directory made is added to
    ``made``, deepest last), readable by the user alone (the connector refuses a
    ``connections.toml`` others may change). A directory or file that is a symbolic link is
    refused (UsageError), before anything is written."""
    for path in (found.directory, *(found.directory / n for n in found.files)):
        if path.is_symlink():
            raise UsageError(f"{path}: a symbolic link; accord sandbox writes no file through one")
    if found.directory.exists() and not found.directory.is_dir():
        raise UsageError(f"{found.directory}: not a directory")
    missing = [d for d in (found.directory, *found.directory.parents) if not d.exists()]
    for d in reversed(missing):
        d.mkdir()
        made.append(d)
    for name, text in found.files.items():
        path = found.directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(text)


def remove_settings(found: Settings, made: list[Path]) -> None:
    """The files, each only if it still holds what this sandbox wrote (another sandbox started
    on the same directory since keeps its own), and the directories :func:`write_settings`
    made, those that this leaves empty."""
    for name, text in found.files.items():
        path = found.directory / name
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if not path.is_symlink() and path.read_text(encoding="utf-8") == text:
                path.unlink()
    for d in reversed(made):
        with contextlib.suppress(OSError):
            d.rmdir()


# --------------------------------------------------------------------------------------------
# the run


def describe(project: Project, directory: str, served: Serving, found: Settings, shown: str) -> str:
    """What ``accord sandbox`` prints once both stand-ins answer: where they are, each file
    (under ``shown``, the directory as the user named it), what to do next."""
    model = project.model
    tables = len(served.snowflake.tables) + len(served.databricks.tables)
    lines = [
        f"accord sandbox: the estate of {directory} on local stand-ins ({tables} tables, "
        f"{len(model.personas)} personas)",
        f"  Snowflake   127.0.0.1:{served.snowflake_port}  (account {ACCOUNT}; connections "
        f"{CONNECTION}, and {PROBE_CONNECTION} for the probe user)",
        f"  Databricks  {served.databricks_url}  (profile {PROFILE}, and {PROFILE}-PERSONA "
        "for each persona)",
        "",
    ]
    what = {
        "connections.toml": "Snowflake connections (SNOWFLAKE_HOME)",
        "databrickscfg": "Databricks profiles (DATABRICKS_CONFIG_FILE)",
        "probe.yaml": "the probe config of accord probe --live (ACCORD_PROBE_CONFIG)",
        "env": "the variables that point accord at the stand-ins",
    }
    for name in FILES:
        lines.append(f"# {shown}/{name}: {what[name]}")
        lines += found.files[name].rstrip("\n").split("\n")
        lines.append("")
    dbx = model.platforms.databricks
    if dbx is not None and dbx.style == "abac":
        lines.append(
            "Note: the Databricks stand-in keeps ABAC policies (deployed, introspected, "
            "drifted) but does not apply them to queries: accord probe --live answers its "
            "surfaces as if no ABAC policy were set."
        )
    lines.append(f"Point accord at them in each shell that runs it: . {shown}/env")
    env = [r.removeprefix("env:") for r in found.salts if r.startswith("env:")]
    files = [r.removeprefix("file:") for r in found.salts if r.startswith("file:")]
    if env:
        lines.append(
            f"The masks' salts are read when SQL is applied: set {_and(env)} there (any "
            "values do on the stand-ins; nothing here holds one)."
        )
    if files:
        lines.append(
            f"The masks' salt files are read when SQL is applied: {_and(files)} (under "
            "ACCORD_SALT_ROOT, else the working directory)."
        )
    return "\n".join(lines)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def run(
    project: Project,
    directory: str,
    out: str,
    port: int,
    stop: threading.Event,
    echo: Callable[[str], None],
) -> int:
    """Serve the estate until ``stop`` is set (a signal handler sets it), then stop both
    stand-ins and remove the files: exit 0. A port that cannot be had, or a stand-in that
    does not answer in time: UsageError (exit 2), with nothing left behind."""
    # the stand-ins read SHOW statements with sqlglot, which warns that it keeps them whole
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    seed = seed_of(project.model)
    if stop.is_set():  # stopped while the model was loading
        return 0
    with contextlib.ExitStack() as stack:
        try:
            served = stack.enter_context(serving(seed, port))
        except TimeoutError as err:
            raise UsageError(f"a stand-in did not start: {err}") from None
        except OSError as err:
            where = f"127.0.0.1:{port} and {port + 1}" if port else "a free port of 127.0.0.1"
            raise UsageError(f"cannot serve on {where}: {err.strerror or err}") from None
        # absolute, but not resolved: a link is refused, never followed
        found = settings(project.model, served, Path(os.path.abspath(out)))
        made: list[Path] = []
        stack.callback(remove_settings, found, made)  # what was written, even if not all of it
        try:
            write_settings(found, made)
        except OSError as err:
            raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
        echo(describe(project, directory, served, found, out.rstrip("/") or "/"))
        echo("accord sandbox: ready; Ctrl-C stops it")
        while not stop.wait(0.2):
            pass
    echo("accord sandbox: stopped; both stand-ins are down and their settings removed")
    return 0
