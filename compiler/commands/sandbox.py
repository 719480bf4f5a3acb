from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from accord.compiler.commands.options import directory_argument

#: the signals that stop the sandbox: Ctrl-C, kill's default, a closed terminal
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@click.command("sandbox")
@directory_argument
@click.option(
    "--out",
    default=".accord/sandbox",
    show_default=True,
    help="Where the settings are written (connections.toml, databrickscfg, probe.yaml, env); "
    "removed when the sandbox stops.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65534),
    default=None,
    help="Snowflake on PORT, Databricks on PORT+1 (default: two free ports).",
)
def command(directory: str, out: str, port: int | None) -> int:
    """Start local stand-ins of Snowflake and Databricks on 127.0.0.1 for the estate in
    DIRECTORY (default: policies): its tables with sample rows, a probe user holding every
    persona's roles, a Databricks principal per persona. Print the settings that point accord
    at them (a connections.toml, Databricks profiles, the probe config and the variables, also
    written under --out), and serve until Ctrl-C (or SIGTERM), then stop every server and
    remove the settings. For trying the live loop (plan --base live:all, migrate apply, drift,
    probe --live) without an account: docs/getting-started.md."""
    from accord.compiler.live.sandbox import run
    from accord.compiler.model.validate import load_project

    with stopped_by_signals() as stop:
        project = load_project(directory)
        return run(project, directory, out, port or 0, stop, click.echo)


@contextmanager
def stopped_by_signals() -> Iterator[threading.Event]:
    """An event the stopping signals set, for the duration of the block. Handlers are installed
    even where a signal was ignored: a background job of a non-interactive shell starts with
    SIGINT ignored, and ``kill -INT`` must stop it all the same."""
    stop = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        stop.set()

    before = {s: signal.signal(s, handler) for s in STOPPING}
    try:
        yield stop
    finally:
        for s, previous in before.items():
            signal.signal(s, previous)
