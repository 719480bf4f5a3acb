"""Generate the reference pages ``docs/policy-format.md`` and ``docs/cli.md``.

    python -m accord.compiler.reference            # write both
    python -m accord.compiler.reference --check    # exit 1 if either is stale

``docs/policy-format.md`` is read off the JSON Schema of the pydantic model
(:func:`compiler.commands.schema.policy_schema`, what ``accord schema`` prints): every section,
every key with its type, default and description, and each section's class docstring as its
prose. ``docs/cli.md`` is read off the click command definitions behind the lazy command table
of :mod:`compiler.cli`: every command and subcommand, its usage, help, arguments and options,
and its exit codes (:data:`EXIT_ONE` says, per command, what exit 1 means; a command missing
from it fails the tests). ``make docs`` runs this with :mod:`compiler.lint.docs`.

This module is on the entry layer: it reads the command table, and nothing imports it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import click

from accord.compiler.cli import COMMANDS, cli
from accord.compiler.commands.schema import policy_schema

POLICY_FORMAT = Path("docs/policy-format.md")
CLI = Path("docs/cli.md")

#: what exit 1 means, per command path; None: the command never exits 1
EXIT_ONE: dict[str, str | None] = {
    "analyze": "surfaces diverge (ACC403) and the looser surface does not `ignore` it",
    "compile": "an error-level lint finding remains unsuppressed (nothing is written)",
    "diff": "with `--fail-on widening`, when anything widens",
    "drift": "the live platforms differ from the model in anything (ACC701-ACC706, ACC708)",
    "gate": "the promotion policy denies (`gate test`: the policy fails open for an omitted "
    "or falsified key)",
    "import": "something read could not be expressed in the model (kept as an `unmanaged` "
    "entry, listed on stdout and in `DIR/IMPORT.md`), or the reading role could not see "
    "everything",
    "init": None,
    "introspect": None,
    "lint": "findings at or above `--fail-on` (a policy statement that could not be analysed "
    "is one: ACC001)",
    "manifest": None,
    "migrate apply": "a stage failed or its checks did not pass, or a file changed since the "
    "plan was written",
    "migrate rollback": "the rollback of the stage failed",
    "migrate status": "a cutover group is applied on some of its platforms and not all",
    "plan": "no safe plan exists (nothing is written)",
    "probe": "an answer differs from `expect`, or two surfaces disagree",
    "rules": None,
    "sandbox": None,
    "schema": None,
    "terraform apply": "the saved plan's digest does not match, or Terraform failed",
    "terraform plan": "the plan holds a change accord refuses (nothing is saved), or Terraform "
    "failed",
    "validate": None,
    "verify": "the compiled SQL's answers differ from the model's for some persona",
}

#: what an argument is (click arguments carry no help), and the help of the options that are
#: given none where they are declared, by parameter name
PARAMETER_HELP = {
    "directory": "The policy directory.",
    "paths": "Policy directories, YAML files of one model, SQL files or a repository.",
    "sources": "SQL files or directories to read (plain SQL, dbt/Jinja templates, notebooks).",
    "args": "`[init PERSONA DATASET] [DIRECTORY]`: `init` prints a new probe.",
    "rule_id": "A rule id (ACC101) or name (current-role); none: every rule.",
    "out": "The directory `accord compile` wrote.",
    "repository": "The repository to scaffold (created if missing).",
    "fmt": "The output format.",
    "platform": "The platform to read.",
}

#: prose of the sections that have no class of their own
SECTION_TEXT = {
    "entitlements": """\
```yaml
entitlements:
  programme:                       # dimension name (lower_snake_case)
    ONC-101: [bench_chemist, clinical_unblinded]
    CNS-204: [clinical_unblinded, cro_external]
```

Each dimension compiles to one mapping table per platform, named
`<governance_schema>.<DIMENSION>_GRANTS` (Snowflake: upper case; Databricks: lower case),
with columns (`<dimension>_code`, `role_name`) on Snowflake and (`<dimension>_code`,
`group_name`) on Databricks, and rows generated from this one source, so both catalogs hold
the same grants. A YAML integer value (`2024:`) is the code `"2024"`.""",
    "personas": """\
```yaml
personas:
  bench_chemist: [bench_chemist]
  clinical_pharmacologist: [bench_chemist, clinical_unblinded]   # first = primary role
  cro_collaborator: [cro_external]
```

Used by `accord analyze`, `accord verify`, `accord diff` and the probes. On Snowflake the
first principal is the persona's primary role and the rest are secondary roles in the
session; on Databricks all are group memberships.""",
}

SUPPRESSING = """\
## Suppressing a finding

Any entry of `masks`, `datasets`, `indexes` or `surfaces` may carry

```yaml
    ignore:
      ACC301: "index holds public abstracts only; reviewed 2026-11 by data governance"
```

A suppression without a non-empty reason, or naming an unknown rule, is an error. In SQL
files the form is a comment on the line before the statement:
`-- accord: ignore ACC101 <reason>`. Every rule: [rules.md](rules.md)."""

_GENERATED = (
    "<!-- Generated by `python -m accord.compiler.reference` (`make docs`) from {what}.\n"
    "     Do not edit by hand: a test fails when this file is stale. -->"
)


# --------------------------------------------------------------------------------------------
# the policy format


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to ``-``."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


class _Format:
    """One walk of the schema: each class (``$defs`` entry) is written once, under the path
    where it is first met, and linked from everywhere else."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.schema = schema
        self.homes: dict[str, str] = {}  # def name -> the heading it is written under
        self.order: list[tuple[str, str]] = []  # (path, def name), in the order written
        self._place(schema, "")

    @staticmethod
    def anchor(path: str) -> str:
        """A class's anchor: its section's for a section or an entry of one (written under
        the section's heading), else its own heading's."""
        section, _, rest = path.partition(".")
        return slug(section if rest in ("", "NAME") else path)

    def _refs(self, node: Any) -> list[str]:
        """The classes a property's schema names, in order (through lists, maps, unions)."""
        if not isinstance(node, dict):
            return []
        if "$ref" in node:
            return [node["$ref"].rsplit("/", 1)[-1]]
        out: list[str] = []
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                out += self._refs(sub)
        for key in ("items", "additionalProperties"):
            out += self._refs(node.get(key))
        return out

    def _place(self, node: dict[str, Any], path: str) -> None:
        for key, prop in node.get("properties", {}).items():
            here = f"{path}.{key}" if path else key
            for ref in self._refs(prop):
                if ref in self.homes:
                    continue
                # an entry of a mapping is written `section.NAME`, of a list `key[]`
                entry = here + self._suffix(prop, ref)
                self.homes[ref] = entry
                self.order.append((entry, ref))
                self._place(self.defs[ref], entry)

    def _suffix(self, node: Any, ref: str) -> str:
        """How ``ref`` sits inside ``node``: ``.NAME`` per mapping, ``[]`` per list."""
        if not isinstance(node, dict) or node.get("$ref", "").endswith(f"/{ref}"):
            return ""
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                if ref in self._refs(sub):
                    return self._suffix(sub, ref)
        if ref in self._refs(node.get("additionalProperties")):
            return ".NAME" + self._suffix(node["additionalProperties"], ref)
        if ref in self._refs(node.get("items")):
            return "[]" + self._suffix(node["items"], ref)
        return ""

    def _is_map(self, prop: dict[str, Any]) -> bool:
        node = self._non_null(prop)
        return node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict)

    @staticmethod
    def _non_null(prop: dict[str, Any]) -> dict[str, Any]:
        options = [o for o in prop.get("anyOf", []) if o.get("type") != "null"]
        return options[0] if len(options) == 1 else prop

    def type_of(self, prop: dict[str, Any]) -> str:
        if "$ref" in prop:
            name = prop["$ref"].rsplit("/", 1)[-1]
            return f"[{name}](#{self.anchor(self.homes[name])})"
        if "const" in prop:
            return f"`{prop['const']}`"
        if "enum" in prop:
            return " \\| ".join(f"`{v}`" for v in prop["enum"])
        if "anyOf" in prop:
            options = [o for o in prop["anyOf"] if o.get("type") != "null"]
            return " or ".join(self.type_of(o) for o in options)
        kind = prop.get("type")
        if kind == "array":
            item = self.type_of(prop.get("items", {}))
            least = prop.get("minItems")
            return f"list of {item}" + (f" (at least {least})" if least else "")
        if kind == "object":
            keys = prop.get("propertyNames", {})
            key = " \\| ".join(f"`{v}`" for v in keys["enum"]) if "enum" in keys else "name"
            value = self.type_of(prop.get("additionalProperties", {}))
            text = f"mapping {key} → {value}"
            if prop.get("maxProperties") == 1 and prop.get("minProperties") == 1:
                text += " (one entry)"
            return text
        bounds = []
        if "minimum" in prop:
            bounds.append(f"≥ {prop['minimum']}")
        if "exclusiveMinimum" in prop:
            bounds.append(f"> {prop['exclusiveMinimum']}")
        if "maximum" in prop:
            bounds.append(f"≤ {prop['maximum']}")
        if "pattern" in prop:
            bounds.append(f"matching `{prop['pattern']}`")
        return f"{kind or 'any'}" + (f" ({', '.join(bounds)})" if bounds else "")

    def key_table(self, node: dict[str, Any]) -> list[str]:
        required = set(node.get("required", []))
        lines = ["| key | type | required / default | what it is |", "|---|---|---|---|"]
        for key, prop in node.get("properties", {}).items():
            if key in required:
                need = "required"
            elif "default" in prop and prop["default"] not in (None, [], {}):
                need = f"default `{_scalar(prop['default'])}`"
            else:
                need = "optional"
            text = _cell(prop.get("description", ""))
            lines.append(f"| `{key}` | {self.type_of(prop)} | {need} | {text} |")
        return lines


def _cell(text: str) -> str:
    """A description as one table cell: one line, ``|`` escaped, and no ``<`` or ``>`` that
    Markdown would read as HTML."""
    text = " ".join(text.split()).replace("|", "\\|")
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return (text[:1].upper() + text[1:]).rstrip(".") + "." if text else ""


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_policy_format() -> str:
    schema = policy_schema()
    fmt = _Format(schema)
    top = schema["properties"]
    lines = [
        "# The accord policy format, version 1",
        "",
        _GENERATED.format(what="the pydantic model (compiler/model/schema/)"),
        "",
        _doc(schema),
        "",
        "`accord schema` prints the same model as a JSON Schema, for editors (see",
        "[Editor support](lint.md#editor-support)). The same formats by topic, with examples:",
        "[The policy format by topic](format.md).",
        "",
        "## Top level",
        "",
        "| section | type | what it holds |",
        "|---|---|---|",
    ]
    for key, prop in top.items():
        text = _cell(prop.get("description", ""))
        # `version` has no section of its own: its row says all there is, so it links nowhere
        name = f"`{key}`" if key == "version" else f"[`{key}`](#{slug(key)})"
        lines.append(f"| {name} | {fmt.type_of(prop)} | {text} |")
    for key, prop in top.items():
        if key == "version":
            continue
        lines += ["", f"## {key}", ""]
        if fmt.anchor(fmt.homes.get(_first(fmt._refs(prop)), "")) != slug(key):
            lines += [_sentence(prop.get("description", ""))]
        if key in SECTION_TEXT:
            lines += ["", SECTION_TEXT[key]]
        for path, name in fmt.order:
            if path.partition(".")[0] != key:
                continue
            node = fmt.defs[name]
            if fmt.anchor(path) != slug(key):
                lines += ["", f"### {path}", ""]
            elif path.endswith(".NAME"):
                lines += [f"Each entry, `{path}`:", ""]
            doc = node.get("description")
            if doc:
                lines += [doc.strip(), ""]
            lines += fmt.key_table(node)
    lines += ["", SUPPRESSING]
    return "\n".join(lines) + "\n"


def _first(names: list[str]) -> str:
    return names[0] if names else ""


def _doc(node: dict[str, Any]) -> str:
    return node.get("description", "").strip()


# --------------------------------------------------------------------------------------------
# the command line


def _paragraphs(text: str) -> str:
    """click help text as Markdown: paragraphs joined into lines; a ``\\b`` block (kept as
    click prints it) becomes a code block."""
    out: list[str] = []
    for block in text.strip().split("\n\n"):
        lines = block.strip("\n").splitlines()
        if lines and lines[0].strip() == "\b":
            body = [line.strip() for line in lines[1:]]
            out.append("```\n" + "\n".join(body) + "\n```")
        else:
            out.append(" ".join(" ".join(lines).split()))
    return "\n\n".join(out)


def _commands() -> list[tuple[str, click.Command]]:
    """Every command path and its click command, subcommands after their group."""
    ctx = click.Context(cli, info_name="accord")
    found: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, prefix: str, gctx: click.Context) -> None:
        for name in group.list_commands(gctx):
            command = group.get_command(gctx, name)
            if command is None:  # pragma: no cover - the table names every command
                continue
            path = f"{prefix} {name}".strip()
            found.append((path, command))
            if isinstance(command, click.Group):
                walk(command, path, click.Context(command, info_name=name, parent=gctx))

    walk(cli, "", ctx)
    return found


def _param_row(param: click.Parameter) -> str:
    if isinstance(param, click.Argument):
        name = f"`{param.human_readable_name}`"
    else:
        names = [*param.opts, *param.secondary_opts]
        name = " / ".join(f"`{n}`" for n in names)
    kind = param.type
    if isinstance(kind, click.Choice):
        what = " \\| ".join(f"`{c}`" for c in kind.choices)
    elif getattr(param, "is_flag", False):
        what = "flag"
    else:
        what = kind.name.lower()
    if getattr(param, "multiple", False) or (isinstance(param, click.Argument) and param.nargs < 0):
        what += ", repeatable"
    default = param.default
    if type(default).__name__ == "Sentinel":  # click's UNSET: no default
        default = None
    shown = ""
    if param.required:
        shown = "required"
    elif default not in (None, False, (), []) and not callable(default):
        shown = f"`{default}`"
    help_text = getattr(param, "help", None) or PARAMETER_HELP.get(param.name or "", "")
    help_text = _cell(help_text)
    return f"| {name} | {what} | {shown} | {help_text} |"


def render_cli() -> str:
    lines = [
        "# accord command line",
        "",
        _GENERATED.format(what="the command definitions (compiler/commands/)"),
        "",
        "Exit codes for every command: `0` success; `1` the command ran and found something",
        "(what, per command, below); `2` it could not run (invalid input, unknown reference, bad",
        "usage): the message names `file:line:column`, and there is never a Python traceback.",
        "",
        "`accord --version` prints the version; `accord COMMAND --help` prints a command's help.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    commands = _commands()
    for path, command in commands:
        # a command's line of the command table, else its help's first sentence
        summary = COMMANDS[path][1] if path in COMMANDS else command.get_short_help_str(100)
        lines.append(f"| [`accord {path}`](#{slug('accord ' + path)}) | {summary} |")
    for path, command in commands:
        ctx = click.Context(command, info_name=f"accord {path}")
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += ["", f"## accord {path}", "", "```", f"accord {path} {usage}".rstrip(), "```"]
        if command.help:
            lines += ["", _paragraphs(click.unstyle(command.help))]
        params = [p for p in command.params if p.name != "help"]
        if params:
            lines += ["", "| argument / option | value | default | what it does |"]
            lines += ["|---|---|---|---|"] + [_param_row(p) for p in params]
        if isinstance(command, click.Group):
            continue
        one = EXIT_ONE[path]
        codes = "`0` success"
        codes += f"; `1` {one}" if one else " (never `1`)"
        lines += ["", f"Exit codes: {codes}; `2` it could not run."]
    return "\n".join(lines) + "\n"


def command_paths() -> list[str]:
    """Every command path that is not a group (each needs an :data:`EXIT_ONE` entry)."""
    return [p for p, c in _commands() if not isinstance(c, click.Group)]


def pages() -> dict[Path, str]:
    return {POLICY_FORMAT: render_policy_format(), CLI: render_cli()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m accord.compiler.reference", description=__doc__
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is stale")
    parser.add_argument("--root", type=Path, default=Path("."), help="default: .")
    args = parser.parse_args(argv)
    stale = False
    for path, text in pages().items():
        target = args.root / path
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else None
            if current != text:
                print(f"{path} is stale: run `make docs`", file=sys.stderr)
                stale = True
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
