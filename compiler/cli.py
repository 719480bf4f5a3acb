"""The ``accord`` command line (docs/cli.md).

Each command lives in ``compiler/commands/<name>.py`` and is imported only when it runs, so
``accord lint`` (a pre-commit hook) never pays for duckdb or a platform client. Exit codes:
0 success, 1 the command ran and found something, 2 it could not run (never a traceback).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys

import click

from accord.compiler.core.errors import InputError, UsageError
from accord.compiler.core.secrets import redact
from accord.compiler.core.sqlglot_plugins import install as _defer_plugin_lookup
from accord.compiler.core.visible import guarded, visible

_defer_plugin_lookup()  # sqlglot's import does not import importlib.metadata (never used by lint)

#: command name -> (module under compiler.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "Load and validate a policy directory."),
    "lint": ("lint", "Lint policy files and hand-written policy SQL."),
    "rules": ("rules", "List the lint rules, or print one rule's documentation."),
    "compile": ("compile", "Compile the model to Snowflake, Databricks and Terraform."),
    "analyze": ("analyze", "What every surface answers, per persona; where surfaces diverge."),
    "schema": ("schema", "Print the JSON Schema of the policy format."),
    "terraform": ("terraform", "Plan and apply the compiled Terraform configuration."),
    "verify": ("verify", "Execute the compiled policies on DuckDB and compare with the model."),
    "plan": ("plan", "Plan the staged migration between two versions of the model."),
    "migrate": ("migrate", "Apply, roll back and report staged migration plans."),
    "diff": ("diff", "What a change of the model changes in who sees what, per persona."),
    "probe": ("probe", "Run the governance team's probes (model or --live); init prints one."),
    "introspect": ("introspect", "Read the governance objects deployed on a live platform."),
    "drift": ("drift", "Compare the model with the live platforms (ACC701-ACC708)."),
    "manifest": ("manifest", "Write the mesh manifest: every A2A agent, its card, its probes."),
    "gate": ("gate", "Evaluate the promotion policy over a mesh manifest; test a policy."),
    "init": ("init", "Scaffold a policy directory and its CI wiring; never overwrites."),
    "import": ("import_", "Write a policy directory from what is deployed and from SQL."),
    "sandbox": ("sandbox", "Serve local stand-ins of both platforms for an estate, until Ctrl-C."),
}


#: commands that write files (and so say "nothing was written" when they refuse)
WRITERS = frozenset({"compile", "plan", "migrate", "terraform", "manifest", "init", "import"})


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"accord.compiler.commands.{entry[0]}")
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
# the distribution's version, read (importlib.metadata) only when --version is given: the
# import of this module stays as cheap as accord lint's cold start needs
@click.version_option(package_name="accord", message="%(prog)s %(version)s")
def cli() -> None:
    """accord: governance as code for Snowflake and Databricks Unity Catalog."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command, map errors to exit codes, never print a traceback. Every
    byte written to stdout and stderr goes through :func:`compiler.core.visible.guarded`: no
    value a pull request controls can drive the terminal or start a CI runner's command, and
    no secret accord knows is shown (the one scrubber, :func:`compiler.core.secrets.redact`,
    in every format)."""
    _freeze_at_exit()
    with guarded(redact):
        _main(argv)


_freezing: list[bool] = []


def _freeze_at_exit() -> None:
    """At exit, before the interpreter's final collections, move every object into the cyclic
    collector's permanent generation (``gc.freeze``), so those collections do not traverse
    the objects the command leaves behind (pydantic's and sqlglot's classes, the loaded
    model). They were a fifth of a cold ``accord lint policies`` (~90 ms of CPU). Objects are
    still freed by reference counting as the modules are torn down; only garbage already in
    reference cycles is left to the operating system, which takes the whole process back
    anyway. Registered once; the process's own exit handlers still run."""
    if not _freezing:
        _freezing.append(True)
        atexit.register(gc.freeze)


def _main(argv: list[str] | None) -> None:
    # A loaded estate is a large graph of long-lived objects; at the default threshold (700
    # allocations) the cyclic collector rescans it thousands of times. Every command loads
    # one (validate was slower than lint, which alone raised it): bench/README.md.
    gc.set_threshold(100_000, 50, 100)
    args = sys.argv[1:] if argv is None else argv
    from accord.compiler.core.streams import closed_standard_streams

    closed = closed_standard_streams()
    if closed is not None:
        sys.exit(closed)
    try:
        code = cli.main(args=argv, prog_name="accord", standalone_mode=False)
    except InputError as err:
        for d in err.diagnostics:
            click.echo(f"{d}", err=True)
        n = len(err.diagnostics)
        # only a command that writes files says that it wrote none
        writes = next((a for a in args if not a.startswith("-")), None) in WRITERS
        tail = "; nothing was written" if writes else ""
        click.echo(f"accord: {n} error{'s' if n != 1 else ''}{tail}", err=True)
        sys.exit(2)
    except UsageError as err:
        text = visible(str(err))
        click.echo(text if text.startswith("accord") else f"accord: {text}", err=True)
        sys.exit(2)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("accord: aborted", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        from accord.compiler.core.streams import pipe_closed_in_click

        if pipe_closed_in_click():
            sys.exit(141)
        raise
    except OSError as err:
        from accord.compiler.core.streams import output_failure

        failed = output_failure(err)
        if failed is None:
            _internal(err)
        sys.exit(failed)
    except Exception as err:
        _internal(err)
    from accord.compiler.core.streams import flush_stdout

    failed = flush_stdout()
    if failed is not None:
        sys.exit(failed)
    sys.exit(code if isinstance(code, int) else 0)


def _internal(err: Exception) -> None:
    """An error accord did not expect: one line, never a traceback (unless asked for). Called
    while ``err`` is being handled."""
    if os.environ.get("ACCORD_DEBUG"):
        raise err
    click.echo(
        f"accord: internal error: {type(err).__name__}: {visible(str(err))} "
        "(set ACCORD_DEBUG=1 for a traceback, and please report it)",
        err=True,
    )
    sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
