from __future__ import annotations

import contextlib
from typing import Any

import click

from compiler.commands.options import live_options, options_from, platforms_of, progress
from compiler.core.errors import InputError, UsageError
from compiler.model.validate import load_project


@click.command("drift")
@click.argument("directory", default="policies", type=click.Path())
@click.option("--platform", required=True, type=click.Choice(["snowflake", "databricks", "all"]))
@click.option("--format", "fmt", default="text", type=click.Choice(["text", "json", "sarif"]))
@live_options
def command(directory: str, platform: str, fmt: str, **kwargs: Any) -> int:
    """Compare the model with what the platforms hold: findings ACC701-ACC706, located at the
    model's file:line:column. Exit 1 when anything differs. Reads only; changes nothing."""
    from compiler.lint import lint_project
    from compiler.lint.report import render_json, render_sarif, render_text
    from compiler.live.drift import drift
    from compiler.live.session import session

    options = options_from(kwargs)
    with contextlib.ExitStack() as connections:
        try:
            project = load_project(directory)
            live = connections.enter_context(
                session(project, platforms_of(platform), options, progress())
            )
        except (InputError, UsageError) as err:
            if fmt == "text":
                raise
            return _could_not_run(err, directory, fmt)
        found = drift(project, live.expected, live.catalogs, live.executors)
    findings = [
        f for f in lint_project(project, extra={"drift": found}) if f.rule.startswith("ACC7")
    ]
    if fmt == "json":
        click.echo(render_json(findings))
    elif fmt == "sarif":
        click.echo(render_sarif(findings))
    else:
        click.echo(
            render_text(findings, len(project.files)).replace("accord lint:", "accord drift:")
        )
    return 1 if any(not f.suppressed for f in findings) else 0


def _could_not_run(err: InputError | UsageError, directory: str, fmt: str) -> int:
    """Exit 2 with one valid machine document (shared/spec/cli.md): JSON ``errors`` beside
    ``findings``; SARIF ``toolExecutionNotifications`` with ``executionSuccessful: false``."""
    import json

    from compiler.lint.report import sarif_document

    if isinstance(err, InputError):
        errors = [
            {"file": d.location.file, "line": d.location.line, "column": d.location.column,
             "message": d.message}
            for d in err.diagnostics
        ]  # fmt: skip
    else:
        errors = [{"file": directory, "line": 1, "column": 1, "message": str(err)}]
    for e in errors:
        click.echo(f"accord: {e['message']}", err=True)
    if fmt == "json":
        summary = {"error": 0, "warning": 0, "suppressed": 0}
        click.echo(json.dumps({"findings": [], "summary": summary, "errors": errors}, indent=2))
        return 2
    doc = sarif_document([])
    doc["runs"][0]["invocations"] = [  # type: ignore[index]
        {
            "executionSuccessful": False,
            "toolExecutionNotifications": [
                {
                    "level": "error",
                    "message": {"text": e["message"]},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": e["file"]},
                                "region": {"startLine": e["line"], "startColumn": e["column"]},
                            }
                        }
                    ],
                }
                for e in errors
            ],
        }
    ]
    click.echo(json.dumps(doc, indent=2))
    return 2
