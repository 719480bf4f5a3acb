"""Lint output: text for people, JSON (docs/cli.md), SARIF 2.1.0 for code scanning and
GitHub workflow annotations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from urllib.parse import quote

import click

from accord.compiler.core.annotations import annotation
from accord.compiler.core.errors import Diagnostic, Location
from accord.compiler.core.visible import has_unsafe, plain, visible
from accord.compiler.lint.config import Lowering
from accord.compiler.lint.docs import doc_sections
from accord.compiler.lint.engine import registered_rules, rule_doc, rule_sources
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.sources import source_line
from accord.compiler.model.rules import RULES_BY_ID

FORMATS = ("text", "json", "sarif", "github")
#: longest source excerpt shown in text output; longer lines are cut around the column
_EXCERPT = 100


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    """The summary of cli.md: unsuppressed errors and warnings, and suppressed findings."""
    active = [f for f in findings if not f.suppressed]
    return {
        "error": sum(f.severity == "error" for f in active),
        "warning": sum(f.severity == "warning" for f in active),
        "suppressed": sum(f.suppressed for f in findings),
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --------------------------------------------------------------------------------------------
# text


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """The source line (cut around ``column`` when long) and the column within the cut."""
    if len(line) <= _EXCERPT:
        return line, column
    start = max(0, min(column - 1 - _EXCERPT // 2, len(line) - _EXCERPT))
    cut = line[start : start + _EXCERPT]
    prefix = "..." if start else ""
    suffix = "..." if start + _EXCERPT < len(line) else ""
    return prefix + cut + suffix, column - start + len(prefix)


def format_findings(findings: Sequence[Finding], color: bool = False) -> str:
    """Findings grouped by file: position, severity, rule id and name, the message, the
    source line with a marker under the column, and the fix. Every value (file names, SQL
    lines, messages, reasons) is shown with its control characters written visibly
    (:func:`compiler.core.visible.visible`): only the colours are escape sequences."""

    def style(text: str, **kw: object) -> str:
        return click.style(text, **kw) if color else text  # type: ignore[arg-type]

    out: list[str] = []
    current: str | None = None
    for f in findings:
        loc = f.location
        if loc.file != current:
            if current is not None:
                out.append("")
            out.append(style(visible(loc.file), bold=True, underline=True))
            current = loc.file
        if f.suppressed:
            level = style(f"suppressed {f.severity}", fg="bright_black")
        else:
            level = style(f.severity, fg="red" if f.severity == "error" else "yellow", bold=True)
        about = f"  [{visible(f.object)}]" if f.object else ""  # a file-level finding names none
        out.append(
            f"  {loc.line}:{loc.column}  {level}  {style(f.rule, bold=True)} {f.name}{about}"
        )
        out.append(f"    {visible(f.message)}")
        line = source_line(loc.file, loc.line)
        if line is not None:
            shown, column = _excerpt(line.rstrip(), loc.column)
            gutter = str(loc.line)
            # the marker stays under the column: a tab as a tab, a character shown as an
            # escape as that many spaces
            before = shown[: max(column - 1, 0)]
            if has_unsafe(before, "\t"):
                pad = "".join(c if c == "\t" else " " * len(visible(c, "\t")) for c in before)
            else:
                pad = "".join(c if c == "\t" else " " for c in before)
            text = visible(shown, "\t")
            out.append(f"    {style(gutter, fg='blue')} | {text}")
            out.append(f"    {' ' * len(gutter)} | {pad}{style('^', fg='red', bold=True)}")
        for related in f.related:
            out.append(f"    see also {related}")
        if f.fix:
            out.append(f"    {style('fix:', fg='green', bold=True)} {visible(f.fix)}")
        if f.suppressed:
            out.append(f"    suppressed: {visible(f.reason)}")
    return "\n".join(out)


def summary_line(
    findings: Sequence[Finding],
    files: int,
    problems: int = 0,
    lowered: Sequence[Lowering] = (),
) -> str:
    """The summary: the counts, and each setting that lowers what fails on a line of its
    own (where it is written, what it turns off)."""
    c = counts(findings)
    checked = _plural(files, "file")
    suppressed = f" ({c['suppressed']} suppressed)" if c["suppressed"] else ""
    unusable = f"; {_plural(problems, 'input error')} (on stderr)" if problems else ""
    lowers = ""
    if lowered:
        n = len(lowered)
        lowers = f"; {_plural(n, 'setting')} lower{'s' if n == 1 else ''} what fails:"
        lowers += "".join(f"\n  {visible(x.text())}" for x in lowered)
    if not c["error"] and not c["warning"]:
        return f"accord lint: no findings in {checked}{suppressed}{unusable}{lowers}"
    return (
        f"accord lint: {_plural(c['error'], 'error')}, {_plural(c['warning'], 'warning')} in "
        f"{checked}{suppressed}{unusable}{lowers}"
    )


def render_text(
    findings: Sequence[Finding],
    files: int,
    show_suppressed: bool = False,
    color: bool = False,
    problems: Sequence[Diagnostic] = (),
    lowered: Sequence[Lowering] = (),
) -> str:
    shown = [f for f in findings if show_suppressed or not f.suppressed]
    summary = summary_line(findings, files, len(problems), lowered)
    if not shown:
        return summary
    return format_findings(shown, color) + "\n\n" + summary


def render_statistics(
    findings: Sequence[Finding],
    files: int,
    show_suppressed: bool = False,
    problems: int = 0,
    skipped: Sequence[tuple[str, str]] = (),
    lowered: Sequence[Lowering] = (),
) -> str:
    """``--statistics``: findings counted by rule, most frequent first, what a repository
    walk did not lint (and why), then the summary."""
    by_rule: dict[str, int] = {}
    for f in findings:
        if show_suppressed or not f.suppressed:
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
    lines = []
    if by_rule:
        width = len(str(max(by_rule.values())))
        for rule_id, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            info = RULES_BY_ID[rule_id]
            lines.append(f"{n:>{width}}  {rule_id}  {info.name}  ({info.severity})")
        lines.append("")
    if skipped:
        lines.append(f"not linted: {_plural(len(skipped), 'path')}")
        lines += [f"  {visible(path)}  ({visible(why)})" for path, why in skipped]
        lines.append("")
    lines.append(summary_line(findings, files, problems, lowered))
    return "\n".join(lines)


def _skipped_json(skipped: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"path": path, "reason": why} for path, why in skipped]


# --------------------------------------------------------------------------------------------
# json


def _error_json(d: Diagnostic) -> dict[str, object]:
    loc = d.location
    return {"file": loc.file, "line": loc.line, "column": loc.column, "message": d.message}


#: the fields of a finding's record (:meth:`Finding.to_record`) that the document lists
_LISTED = ("rule", "name", "severity", "file", "line", "column", "object", "message", "fix")


def render_json(
    findings: Sequence[Finding],
    show_suppressed: bool = False,
    problems: Sequence[Diagnostic] = (),
    warnings: Sequence[Diagnostic] = (),
    skipped: Sequence[tuple[str, str]] = (),
    coverage: Sequence[dict[str, object]] = (),
    lowered: Sequence[Lowering] = (),
) -> str:
    """The document of cli.md; ``coverage`` (one record a platform) beside ``findings`` for a
    live command; ``errors`` (file, line, column, message) is added beside
    ``findings`` when the input could not all be used (exit 2), ``warnings`` (the same
    fields) when the configuration turns lint off, ``skipped`` (path, reason) when a
    repository walk left folders or files out; the summary's ``lowered`` (setting, file,
    line, column, detail) names each setting that lowers what fails."""
    listed = []
    for f in findings:
        if f.suppressed and not show_suppressed:
            continue
        record = f.to_record()
        entry = {k: record[k] for k in _LISTED}
        if show_suppressed:
            entry["suppressed"] = f.suppressed
            if f.suppressed:
                entry["reason"] = f.reason
        listed.append(entry)
    summary: dict[str, object] = dict(counts(findings))
    if lowered:
        summary["lowered"] = [x.to_json() for x in lowered]
    doc: dict[str, object] = {"findings": listed, "summary": summary}
    if problems:
        doc["errors"] = [_error_json(d) for d in problems]
    if warnings:
        doc["warnings"] = [_error_json(d) for d in warnings]
    if skipped:
        doc["skipped"] = _skipped_json(skipped)
    if coverage:
        doc["coverage"] = list(coverage)
    return json.dumps(plain(doc), indent=2)


# --------------------------------------------------------------------------------------------
# sarif

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)


def _uri(path: str) -> str:
    """The path as a URI reference: its bytes percent-encoded (those of a file name that is
    not UTF-8 too, so the URI names the file)."""
    encoded = quote(os.fsencode(path))
    return "file://" + encoded if path.startswith("/") else encoded


#: the rule of the SARIF results that locate input errors (not a lint rule: the input is
#: unusable), so code scanning annotates the typo that broke the model
INPUT_ERROR_RULE = "input-error"


def sarif_document(
    findings: Sequence[Finding],
    problems: Sequence[Diagnostic] = (),
    as_results: bool = True,
    warnings: Sequence[Diagnostic] = (),
    skipped: Sequence[tuple[str, str]] = (),
    coverage: Sequence[dict[str, object]] = (),
    lowered: Sequence[Lowering] = (),
) -> dict[str, object]:
    """SARIF 2.1.0. A live command's coverage is the run's ``properties.coverage``; each
    setting that lowers what fails is in the run's ``properties.lowered`` and a ``note`` of
    the invocation's notifications. Input errors are ``invocations[0].toolExecutionNotifications`` (with
    ``executionSuccessful: false``) and, unless ``as_results`` is false, also located results
    of rule ``input-error`` (``accord drift`` reports a run that could not read the platforms
    as notifications only: its input is not wrong)."""
    rules = registered_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    driver_rules = []
    for r in rules:
        doc = rule_doc(r.id)
        summary, sections = doc_sections(doc)
        full = "\n\n".join(
            sections[k] for k in ("What it does", "Why is this bad?") if k in sections
        )
        driver_rules.append(
            {
                "id": r.id,
                "name": r.name,
                "shortDescription": {"text": summary},
                "fullDescription": {"text": full or summary},
                "help": {"text": doc, "markdown": doc},
                "defaultConfiguration": {"level": r.severity},
                "properties": {"tags": ["governance", *rule_sources(r.id)]},
            }
        )
    results = []
    for f in findings:
        result: dict[str, object] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": f.severity,
            "message": {"text": f"{f.message}. Fix: {f.fix}" if f.fix else f.message},
            "locations": [_physical(f.location)],
        }
        if f.related:
            result["relatedLocations"] = [
                {"id": i, **_physical(loc)} for i, loc in enumerate(f.related, start=1)
            ]
        if f.suppressed:
            result["suppressions"] = [{"kind": "inSource", "justification": f.reason}]
        results.append(result)
    if problems and as_results:
        driver_rules.append(
            {
                "id": INPUT_ERROR_RULE,
                "name": "invalid-input",
                "shortDescription": {"text": "accord could not use this input."},
                "fullDescription": {
                    "text": "The file could not be read or the policy model is invalid; "
                    "nothing of it was linted until it is corrected."
                },
                "defaultConfiguration": {"level": "error"},
                "properties": {"tags": ["governance", "input"]},
            }
        )
        for d in problems:
            results.append(
                {
                    "ruleId": INPUT_ERROR_RULE,
                    "ruleIndex": len(driver_rules) - 1,
                    "level": "error",
                    "message": {"text": d.message},
                    "locations": [_physical(d.location)],
                }
            )
    invocation: dict[str, object] = {
        "executionSuccessful": not problems,
        "toolExecutionNotifications": [
            {"level": level, "message": {"text": d.message}, "locations": [_physical(d.location)]}
            for level, group in (("error", problems), ("warning", warnings))
            for d in group
        ]
        + [
            {
                "level": "note",
                "message": {"text": f"accord configuration: {x.setting} {x.detail}"},
                "locations": [_physical(x.location)],
            }
            for x in _unwarned(lowered, warnings)
        ],
    }
    if skipped:  # what a repository walk did not lint
        invocation["properties"] = {"skipped": _skipped_json(skipped)}
    from importlib import metadata  # noqa: PLC0415 - SARIF only: the text path does not pay for it

    try:
        version = metadata.version("accord")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        version = "0"
    run: dict[str, object] = {
        "tool": {"driver": {"name": "accord", "version": version, "rules": driver_rules}},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    properties: dict[str, object] = {}
    if coverage:
        properties["coverage"] = list(coverage)
    if lowered:
        properties["lowered"] = [x.to_json() for x in lowered]
    if properties:
        run["properties"] = properties
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _physical(loc: Location) -> dict[str, object]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(loc.file)},
            "region": {"startLine": loc.line, "startColumn": loc.column},
        }
    }


def render_sarif(
    findings: Sequence[Finding],
    problems: Sequence[Diagnostic] = (),
    as_results: bool = True,
    warnings: Sequence[Diagnostic] = (),
    skipped: Sequence[tuple[str, str]] = (),
    coverage: Sequence[dict[str, object]] = (),
    lowered: Sequence[Lowering] = (),
) -> str:
    doc = sarif_document(findings, problems, as_results, warnings, skipped, coverage, lowered)
    return json.dumps(plain(doc), indent=2)


# --------------------------------------------------------------------------------------------
# github


#: how a configuration warning's message begins (an annotation's command says it instead)
_WARN = "warning: "


def _unwarned(lowered: Sequence[Lowering], warnings: Sequence[Diagnostic]) -> list[Lowering]:
    """The settings that lower what fails but for those a warning at the same place already
    names (``select = ["ACC0"]``: every error rule off): one annotation or notification a
    setting."""
    warned = {w.location for w in warnings}
    return [x for x in lowered if x.location not in warned]


def render_github(
    findings: Sequence[Finding],
    show_suppressed: bool = False,
    problems: Sequence[Diagnostic] = (),
    warnings: Sequence[Diagnostic] = (),
    lowered: Sequence[Lowering] = (),
) -> str:
    """Workflow commands: ``::error file=...,line=...,col=...,title=ACC201 unsalted-hash::...``
    (suppressed findings as ``::notice`` with --show-suppressed; input errors as ``::error``
    lines titled ``accord input error``; what the configuration turns off as ``::warning``
    lines titled ``accord configuration``, and each setting that lowers what fails as a
    ``::notice`` line so titled, at the setting)."""
    lines = [annotation("error", d.location, "accord input error", d.message) for d in problems]
    lines += [
        annotation("warning", d.location, "accord configuration", d.message.removeprefix(_WARN))
        for d in warnings
    ]
    lines += [
        annotation("notice", x.location, "accord configuration", f"{x.setting} {x.detail}")
        for x in _unwarned(lowered, warnings)
    ]
    for f in findings:
        if f.suppressed and not show_suppressed:
            continue
        command = "notice" if f.suppressed else f.severity
        text = f.message + (f"\nFix: {f.fix}" if f.fix else "")
        if f.suppressed:
            text += f"\nSuppressed: {f.reason}"
        lines.append(annotation(command, f.location, f"{f.rule} {f.name}", text))
    return "\n".join(lines)
