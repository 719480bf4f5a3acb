"""Options shared by the commands (docs/cli.md): the policy DIRECTORY, ``--base``,
``--format``, ``--fail-on``, ``--compiled``, and the connection options of every live command."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from accord.compiler.connect.defaults import DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT
from accord.compiler.core.visible import visible

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class Choice(click.Choice):  # type: ignore[type-arg]
    """click's Choice, and for a mistyped value the choice it probably meant (``--format jsn``:
    did you mean 'json'?). Every command's choice options use it."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as err:
            names = [str(c) for c in self.choices]
            close = _close_matches(str(value).lower(), names, n=1, cutoff=0.5)
            if not close:
                raise
            raise click.BadParameter(
                f"{err.message.rstrip('.')}; did you mean {close[0]!r}?", ctx=ctx, param=param
            ) from None


def directory_argument(fn: Callable[..., Any]) -> Callable[..., Any]:
    """DIRECTORY: the policy directory, ``policies`` by default."""
    return click.argument("directory", default="policies", type=click.Path())(fn)


def base_option(help: str) -> Decorator:
    """``--base``: the version a command compares with (required)."""
    return click.option("--base", required=True, help=help)


def format_option(formats: Sequence[str], help: str | None = None) -> Decorator:
    """``--format`` (the ``fmt`` parameter): one of ``formats``, the first by default."""
    return click.option(
        "--format",
        "fmt",
        type=Choice(formats),
        default=formats[0],
        show_default=True,
        help=help,
    )


def fail_on_option(choices: Sequence[str], help: str, default: str | None = None) -> Decorator:
    """``--fail-on``: the findings that make the command exit 1 (``default`` shown when set)."""
    return click.option(
        "--fail-on",
        type=Choice(choices),
        default=default,
        show_default=default is not None,
        help=help,
    )


def compiled_option(help: str) -> Decorator:
    """``--compiled``: a directory of SQL written by ``accord compile``."""
    return click.option("--compiled", type=click.Path(), default=None, help=help)


def live_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.option("--connection", default=None, help="Snowflake: a named connection in connections.toml."),
            click.option("--profile", default=None, help="Databricks: a profile in ~/.databrickscfg."),
            click.option("--warehouse-id", default=None, help="Databricks SQL warehouse [default: DATABRICKS_WAREHOUSE_ID]."),
            click.option("--connect-timeout", default=DEFAULT_CONNECT_TIMEOUT, show_default=True, type=click.FloatRange(min=1), help="Seconds to reach and log in to a platform."),
            click.option("--statement-timeout", default=DEFAULT_STATEMENT_TIMEOUT, show_default=True, type=click.FloatRange(min=1), help="Seconds one statement may run."),
            click.option("--jobs", default=4, show_default=True, type=click.IntRange(min=1, max=32), help="Per-object live reads run at once; the output is the same for any value."),
        ]
    ):  # fmt: skip
        fn = option(fn)
    return fn


def options_from(kwargs: dict[str, Any]) -> Any:
    from accord.compiler.connect.config import LiveOptions, Timeouts

    return LiveOptions(
        connection=kwargs.pop("connection", None),
        profile=kwargs.pop("profile", None),
        warehouse_id=kwargs.pop("warehouse_id", None),
        timeouts=Timeouts(kwargs.pop("connect_timeout"), kwargs.pop("statement_timeout")),
        jobs=kwargs.pop("jobs", 4),
    )


def progress(fmt: str = "text") -> Callable[[str], None]:
    """What a command that can take more than a second shows as it works
    (``compiler.core.progress``): a transient rich bar on standard error (the stage,
    ``done/total``, the time) when standard error is a terminal a person watches
    (:func:`terminal`) and the output ``fmt`` is text; else nothing at all, so that a pipe, a
    CI log or a machine format holds only what the command says. Ended with the command."""
    from accord.compiler.core.progress import Bar, silent

    if fmt != "text" or not terminal():
        return silent
    # rich draws on the stream under the guard of the standard streams: what it shows is
    # rendered visibly here, and its own escape sequences and carriage returns must pass
    shown = Bar(getattr(sys.stderr, "_stream", sys.stderr))
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(shown.done)
    return shown


def say(line: object, err: bool = False) -> None:
    """Print one line of a command's text output. The guard on the streams lets line breaks
    pass (it cannot tell accord's own from a value's), so a line that interpolates a value (a
    name, a path, a reason, a platform's error) is rendered here with every control character,
    line breaks included, written visibly: it stays one line."""
    click.echo(visible(line), err=err)


def platforms_of(platform: str) -> list[str]:
    return ["snowflake", "databricks"] if platform == "all" else [platform]


def terminal() -> bool:
    """Whether standard error is a terminal a person watches: a terminal that can redraw a line
    (``TERM`` not ``dumb``), and not a CI job's (:func:`in_ci`), whose log keeps every
    redraw."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb" and not in_ci()


def in_ci() -> bool:
    """Whether this runs in CI: ``CI`` set to anything but empty, ``0`` or ``false`` (GitHub
    Actions, GitLab CI and most others set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


def _close_matches(word: str, possibilities: Any, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches``, importing difflib only when a message needs a suggestion."""
    import difflib

    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)
