"""The files ``accord import`` writes: a policy directory in accord's section layout, and
``IMPORT.md``, what was read, what became of it and what to review.

The layout is the one ``accord init`` and ``policies/`` use: ``platforms.yaml`` (with
``version``), ``principals.yaml``, ``entitlements.yaml``, ``masks.yaml``, ``datasets.yaml``,
and ``unmanaged.yaml`` for what the model keeps verbatim (a section left out when empty).
Everything is sorted and nothing depends on the time or the machine: the same input writes the
same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from accord.compiler.core import markdown
from accord.compiler.importer.found import Found, Item, Kept, Lifted
from accord.compiler.importer.principals import snake
from accord.compiler.lint.finding import Finding
from accord.targets.kinds import KINDS

#: file -> the sections it holds, in order
LAYOUT = {
    "platforms.yaml": ("version", "platforms"),
    "principals.yaml": ("principals",),
    "entitlements.yaml": ("entitlements",),
    "masks.yaml": ("masks",),
    "datasets.yaml": ("datasets",),
    "unmanaged.yaml": ("unmanaged",),
}

HEADER = {
    "platforms.yaml": "The catalogs read, and where and how their policies are written.",
    "principals.yaml": (
        "Every role and group a policy names. A Snowflake role and a Databricks group are one\n"
        "principal where their names or the grants they hold say so: review the pairs."
    ),
    "entitlements.yaml": "Entitlement dimensions: the rows of the mapping tables read.",
    "masks.yaml": "Column masks. A salt is a reference to fill (IMPORT.md, salts): never read.",
    "datasets.yaml": (
        "Governed tables, named from their tables. No SQL or catalog says which surfaces read\n"
        "them, which columns hold one identifier domain, or which table is a replica of\n"
        "which: add surfaces, personas, `identifier` and `replica_of` (IMPORT.md, review)."
    ),
    "unmanaged.yaml": (
        "What the model does not express, kept verbatim with why: lint reads its SQL, drift and\n"
        "plan leave it alone, analyze counts what it reaches as unknown."
    ),
}


class _Dumper(yaml.SafeDumper):
    """Block mappings and lists; a string of several lines as a literal block."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: dict[str, Any]) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=4096,
    )


def unmanaged_entries(kept: list[Kept]) -> dict[str, dict[str, str]]:
    """The ``unmanaged`` section: one entry a kept item, named from its platform and name."""
    out: dict[str, dict[str, str]] = {}
    for k in sorted(kept, key=lambda k: (k.item.platform, k.item.kind, k.item.label)):
        item = k.item
        base = _entry_name(item)
        name, n = base, 2
        while name in out:
            name, n = f"{base}_{n}", n + 1
        why = k.why + (f" ({item.withheld} is withheld here)" if item.withheld else "")
        out[name] = {
            "platform": item.platform,
            "kind": item.kind,
            "name": item.label,
            "sql": _sql(item),
            "why": why,
        }
    return out


#: the keywords of the definition kinds (named by their last name part)
_DEFINITIONS = frozenset(k.keyword for k in KINDS.values() if k.definition)


def _entry_name(item: Item) -> str:
    """``<platform>_<name>``: a definition's last name part, a placement's whole place."""
    definition = item.kind in _DEFINITIONS
    name = item.label.rsplit(".", 1)[-1] if definition else item.label
    kind = "" if definition else f"{item.kind.split('_')[0]}_"
    return snake(f"{item.platform}_{kind}{name}", "u")


def _sql(item: Item) -> str:
    text = item.sql.strip() or f"-- {item.kind} {item.label}: read from {item.origin}"
    return text if text.endswith((";", "\n")) or text.startswith("--") else text + ";"


def policy_files(lifted: Lifted, source: str) -> dict[str, str]:
    """File name -> YAML text of the imported model."""
    data = dict(lifted.data)
    entries = unmanaged_entries(lifted.kept)
    if entries:
        data["unmanaged"] = entries
    files: dict[str, str] = {}
    for name, sections in LAYOUT.items():
        part = {s: data[s] for s in sections if s in data}
        if not part:
            continue
        header = "".join(f"# {line}\n" for line in HEADER[name].split("\n"))
        files[name] = (
            f"# Written by `accord import` from {source}: review IMPORT.md.\n#\n{header}\n"
            + dump(part)
        )
    return files


def report(
    lifted: Lifted,
    founds: list[Found],
    source: str,
    read: list[str],
    findings: Iterable[Finding],
    remaining: list[str],
) -> str:
    """IMPORT.md."""
    esc = markdown.text
    lines = [
        "# Imported by accord import",
        "",
        f"Read from {esc(source)}.",
        "",
    ]
    lines += [f"- {esc(r)}" for r in read]
    for found in founds:
        if found.coverage is not None:
            lines += [f"- {esc(line.strip())}" for line in found.coverage.lines()]
        lines += [f"- {found.platform}: {esc(n)}" for n in found.notes]
    kept = lifted.kept
    unseen = [u for f in founds if f.coverage is not None for u in f.coverage.unseen]
    if unseen:
        lines += [
            "",
            "**The reading role could not see everything** (above): what it could not see is "
            "not in the model, and the import exits 1. Grant what `accord introspect "
            "--check-reader` names and import again.",
        ]
    lines += ["", "## Result", ""]
    expressed = sum(len(v) for v in lifted.claims.values())
    if kept:
        lines.append(
            f"{len(kept)} object(s) could not be expressed in the model: they are kept in "
            "`unmanaged.yaml`, verbatim, and listed below. `accord drift` and `accord plan` "
            "leave them alone; `accord lint` reads their SQL."
        )
    else:
        lines.append("Everything read is expressed in the model.")
    lines.append("")
    lines.append(f"The model expresses {expressed} object(s) read.")
    if remaining:
        lines += ["", "The first `accord plan --base live:...` would still change:", ""]
        lines += [f"- {esc(r)}" for r in remaining]
    if lifted.salts:
        lines += [
            "",
            "## Salts to fill",
            "",
            "accord never reads a salt. Each salt function read is a salt reference in `masks.yaml`: "
            "set it to the salt the function returns (the environment variable, or a `file:` "
            "reference) before `accord migrate apply`, or `accord drift` reports the canary "
            "digest differs (ACC706).",
            "",
            "| mask | platform | reference to fill | salt function read |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {esc(m)} | {p} | `{esc(ref)}` | {esc(fn)} |"
            for m, p, ref, fn in sorted(lifted.salts)
        ]
    withheld = [k.item for k in kept if k.item.withheld]
    if withheld:
        lines += ["", "## Withheld", ""]
        lines += [
            f"- {esc(i.label)} ({i.platform}): {esc(i.withheld)}, replaced in `unmanaged.yaml` by a "
            "placeholder; lint still reports it. Rotate it: every role that may describe the "
            "policy could read it."
            for i in withheld
        ]
    lines += [
        "",
        "## Expressed",
        "",
        "| platform | object | read from | model |",
        "|---|---|---|---|",
    ]
    for part, items in sorted(lifted.claims.items()):
        for item in sorted(items, key=lambda i: i.key):
            lines.append(
                f"| {item.platform} | {item.kind} {esc(item.label)} | {esc(item.origin)} | "
                f"{esc(_part_text(part))} |"
            )
    if kept:
        entries = unmanaged_entries(kept)
        lines += [
            "",
            "## Kept unmanaged",
            "",
            "| entry | platform | kind | name | why |",
            "|---|---|---|---|---|",
        ]
        for name, e in entries.items():
            lines.append(
                f"| {name} | {e['platform']} | {e['kind']} | {esc(e['name'])} | {esc(e['why'])} |"
            )
    lines += ["", "## Review", ""]
    lines += [f"- {esc(n)}" for n in lifted.notes]
    lines += [
        "- Principals are named from accord's own comments where the policies were compiled by "
        "accord, else from their identities; a role and a group are one principal where the names "
        "or the grants they hold agree. Rename them in every file at once if you like.",
        "- Datasets are named from their tables. No catalog and no SQL says which surfaces read "
        "them (agents, pipelines, indexes), which personas ask, which columns hold one "
        "identifier domain, or which table is a replica of which: add `surfaces`, `indexes`, "
        "`personas`, `identifier` and `replica_of`, then `accord analyze` (a replica that "
        "answers row by row what an aggregation or projection policy guards on Snowflake is "
        "ACC403 only once `replica_of` or `identifier` says they hold the same facts).",
    ]
    found = sorted(findings)
    lines += ["", "## Findings", ""]
    if found:
        lines += [
            "What `accord lint` reports on the imported model: the estate's own defects, kept as "
            "they are.",
            "",
            "| rule | where | object | message |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {f.rule} {f.name} | {esc(f.location.file)}:{f.location.line}:{f.location.column} | "
            f"{esc(f.object)} | {esc(f.message)} |"
            for f in found
        ]
    else:
        lines.append("`accord lint` reports no finding on the imported model.")
    lines += [
        "",
        "## Next",
        "",
        "```sh",
        "accord lint DIR                         # the findings above",
        "accord plan DIR --base live:PLATFORM    # right after an import: no change",
        "accord drift DIR --platform PLATFORM    # unmanaged objects are listed, left alone",
        "```",
        "",
    ]
    return "\n".join(lines)


def _part_text(part: tuple[str, ...]) -> str:
    kind, *rest = part
    if kind == "dimension":
        return f"entitlements.{rest[0]}"
    if kind == "mask":
        return f"masks.{rest[0]}"
    if kind == "filter":
        return f"datasets.{rest[0]}.row_filter"
    if kind == "column":
        return f"datasets.{rest[0]}.columns.{rest[1]}"
    if kind == "projection":
        return f"datasets.{rest[0]}.columns.{rest[1]}.projection"
    if kind in ("aggregation", "join"):
        return f"datasets.{rest[0]}.{kind}"
    return ".".join(part)
