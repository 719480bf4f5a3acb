"""``accord probe``: the governance team's probes, at the depth asked for.

    accord probe [DIR]                               against the model (what ACC404 checks)
    accord probe --live [DIR] [--platform P] [--format text|json|junit] [--out FILE]
    accord probe init PERSONA DATASET [DIR] [--where DIM=VALUE] [--column C]
    accord probe sample [DIR] --platform snowflake|databricks|all --since DAYS [--top N]
                        [--out FILE] [--format text|json|yaml]

Exit 1 when an answer differs from ``expect`` (or, live, when two surfaces disagree);
``probe sample`` exits 0 (it reports, it does not judge).
"""

from __future__ import annotations

import click

from accord.compiler.commands.options import Choice, compiled_option, format_option, progress
from accord.compiler.connect.config import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_STATEMENT_TIMEOUT,
    Timeouts,
)
from accord.compiler.core.errors import UsageError


@click.command(
    "probe",
    context_settings={"ignore_unknown_options": False},
)
@click.argument("args", nargs=-1)
@click.option("--live", is_flag=True, help="Ask the live platforms and A2A surfaces.")
@click.option(
    "--platform",
    type=Choice(["snowflake", "databricks", "a2a", "all"]),
    default="all",
    show_default=True,
    help="Live: only the surfaces of this platform (a2a: the A2A surfaces).",
)
@format_option(("text", "json", "junit", "yaml"), help="sample: text, json or yaml")
@click.option(
    "--out",
    "out",
    type=click.Path(),
    default=None,
    help="Write the result file (fingerprints, outcomes, SHA-256) here; sample: the "
    "proposed probes (YAML, checked against the model first).",
)
@click.option(
    "--config",
    "config",
    type=click.Path(),
    default=None,
    help="Live: the local, uncommitted probe config (probe_profiles, the Snowflake probe "
    "user, A2A tokens); default $ACCORD_PROBE_CONFIG, else .accord/probe.yaml.",
)
@compiled_option("The compiled output the result file fingerprints (default: compiled afresh).")
@click.option("--connection", default=None, help="Snowflake connection name (connections.toml).")
@click.option("--warehouse-id", default=None, help="Databricks SQL warehouse id.")
@click.option("--where", "where", default=None, help="init: DIMENSION=VALUE")
@click.option("--column", default=None, help="init: one column")
@click.option("--owner", default="data-governance", show_default=True, help="init: owner")
@click.option("--name", default=None, help="init: the probe's name")
@click.option(
    "--since",
    type=click.IntRange(min=1, max=365),
    default=None,
    help="sample: the days of access history to read (required)",
)
@click.option(
    "--top",
    type=click.IntRange(min=1, max=10000),
    default=20,
    show_default=True,
    help="sample: the uncovered facts listed and the probes proposed",
)
@click.option("--profile", default=None, help="sample: Databricks profile (~/.databrickscfg)")
@click.option(
    "--connect-timeout",
    default=DEFAULT_CONNECT_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=1),
    help="sample: seconds to reach and log in to a platform",
)
@click.option(
    "--statement-timeout",
    default=DEFAULT_STATEMENT_TIMEOUT,
    show_default=True,
    type=click.FloatRange(min=1),
    help="sample: seconds one history query may run",
)
def command(
    args: tuple[str, ...],
    live: bool,
    platform: str,
    fmt: str,
    out: str | None,
    config: str | None,
    compiled: str | None,
    connection: str | None,
    warehouse_id: str | None,
    where: str | None,
    column: str | None,
    owner: str,
    name: str | None,
    since: int | None,
    top: int,
    profile: str | None,
    connect_timeout: float,
    statement_timeout: float,
) -> int:
    """Run the probes, or print a new one, or sample probes from the access history.

    \b
    accord probe [DIR]                        against the model (as ACC404)
    accord probe --live [DIR] [--platform P]  against the live platforms and A2A agents
    accord probe init PERSONA DATASET [DIR]   a probe with today's dispositions
    accord probe sample [DIR] --since DAYS    coverage of the reads the history shows

    Exit 1 when an answer differs from `expect` or two surfaces disagree."""
    from accord.compiler.model.validate import load_project

    _refuse_foreign_options(args[0] if args and args[0] in ("init", "sample") else "run", live)
    if args and args[0] == "sample":
        if live:
            raise UsageError("probe sample takes no --live: it always reads the live history")
        if len(args) > 2:
            raise UsageError("usage: accord probe sample [DIR] --since DAYS")
        if platform == "a2a":
            raise UsageError("probe sample --platform: snowflake, databricks or all")
        if since is None:
            raise UsageError("probe sample needs --since DAYS (the days of history to read)")
        if fmt == "junit":
            raise UsageError("probe sample --format: text, json or yaml")
        return _sample(
            args[1] if len(args) == 2 else "policies",
            platform,
            since,
            top,
            fmt,
            out,
            connection,
            profile,
            warehouse_id,
            Timeouts(connect_timeout, statement_timeout),
        )
    if fmt == "yaml":
        raise UsageError("--format yaml is for probe sample; probe takes text, json or junit")

    if args and args[0] == "init":
        if live:
            raise UsageError("probe init takes no --live")
        rest = args[1:]
        if len(rest) not in (2, 3):
            raise UsageError("usage: accord probe init PERSONA DATASET [DIR]")
        return _init(
            load_project(rest[2] if len(rest) == 3 else "policies"),
            rest,
            where,
            column,
            owner,
            name,
        )
    if len(args) > 1:
        raise UsageError("usage: accord probe [--live] [DIR]")
    project = load_project(args[0] if args else "policies")
    if live:
        from accord.compiler.probe_live.run import LiveOptions, run_live

        result = run_live(
            project,
            LiveOptions(
                platform=platform,
                config=config,
                compiled=compiled,
                connection=connection,
                warehouse_id=warehouse_id,
                progress=progress(fmt),
            ),
        )
        if out:
            result.write(out)
        click.echo(result.render(fmt), nl=False)
        return 0 if result.passed else 1
    from accord.compiler.meaning.probes import evaluate
    from accord.compiler.probe_live.result import ProbeRun

    run = ProbeRun.from_outcomes(project, evaluate(project.model), depth="model")
    if out:
        from accord.compiler.probe_live.run import compiled_fingerprint

        run.compiled_fingerprint = compiled_fingerprint(project, compiled)
        run.write(out)
    click.echo(run.render(fmt), nl=False)
    return 0 if run.passed else 1


#: the options each form of the command reads; any other given on the command line is refused,
#: never silently ignored
_FORM_OPTIONS = {
    "sample": {
        "platform",
        "fmt",
        "out",
        "connection",
        "warehouse_id",
        "since",
        "top",
        "profile",
        "connect_timeout",
        "statement_timeout",
    },
    "init": {"where", "column", "owner", "name"},
    "run": {"fmt", "out", "compiled"},
    "live": {"platform", "fmt", "out", "config", "compiled", "connection", "warehouse_id"},
}


def _refuse_foreign_options(form: str, live: bool) -> None:
    ctx = click.get_current_context()
    if form == "run" and live:
        form = "live"
    allowed = _FORM_OPTIONS[form] | {"args", "live"}
    given = [
        p
        for p in ctx.command.params
        if p.name not in allowed
        and ctx.get_parameter_source(p.name or "") == click.core.ParameterSource.COMMANDLINE
    ]
    if given:
        names = ", ".join(sorted(p.opts[0] for p in given))
        what = {"run": "probe", "live": "probe --live"}.get(form, f"probe {form}")
        raise UsageError(f"{what} does not take {names}")


def _init(
    project: object,
    rest: tuple[str, ...],
    where: str | None,
    column: str | None,
    owner: str,
    name: str | None,
) -> int:
    from accord.compiler.meaning.probes import probe_init

    model = project.model  # type: ignore[attr-defined]
    persona, dataset = rest[0], rest[1]
    filt = None
    if where is not None:
        dim, sep, value = where.partition("=")
        if not sep or not dim or not value:
            raise UsageError("--where takes DIMENSION=VALUE, e.g. programme=CNS-204")
        if dim not in model.entitlements or value not in model.entitlements[dim]:
            raise UsageError(f"--where: unknown {dim} value {value!r}")
        filt = {dim: value}
    for kind, value, table in (
        ("persona", persona, model.personas),
        ("dataset", dataset, model.datasets),
    ):
        if value not in table:
            raise UsageError(f"unknown {kind} {value!r} (known: {', '.join(sorted(table))})")
    if filt is not None:
        from accord.compiler.model.probe_places import where_problem

        problem = where_problem(model, dataset, next(iter(filt)))
        if problem:
            raise UsageError(f"--where: {problem}")
    if column is not None:
        from accord.compiler.model.probe_places import probe_columns

        known = {c.lower(): c for c in probe_columns(model, dataset)}
        if column.lower() not in known:
            raise UsageError(
                f"--column: {column} is not declared in datasets.{dataset}.columns "
                f"(known: {', '.join(sorted(known.values()))})"
            )
        column = known[column.lower()]
    click.echo(
        probe_init(model, persona, dataset, name=name, owner=owner, where=filt, column=column),
        nl=False,
    )
    return 0


def _sample(
    directory: str,
    platform: str,
    since: int,
    top: int,
    fmt: str,
    out: str | None,
    connection: str | None,
    profile: str | None,
    warehouse_id: str | None,
    timeouts: Timeouts,
) -> int:
    from accord.compiler.connect.config import LiveOptions
    from accord.compiler.model.validate import load_project
    from accord.compiler.probe_sample.run import SampleOptions, sample, write_proposals

    project = load_project(directory)
    live = LiveOptions(
        connection=connection, profile=profile, warehouse_id=warehouse_id, timeouts=timeouts
    )
    result = sample(
        project,
        SampleOptions(platform=platform, since=since, top=top, live=live, progress=progress(fmt)),
    )
    if out:
        write_proposals(directory, result, out)
    click.echo(result.render(fmt), nl=False)
    return 0
