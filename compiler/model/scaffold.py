"""``accord init``: the files of a new policy repository, as text.

:func:`scaffold` returns every file by its path relative to the repository: the policy
directory (``platforms.yaml`` with the governance schemas given, and one commented skeleton per
other section), a pre-commit configuration, a GitHub Actions workflow, ``.gitignore`` lines and
the editor's schema association. It writes nothing: ``compiler/commands/init.py`` checks that
no file exists and writes them.

Each skeleton is comments only (so the scaffold lints clean as written): what the section is
for, its keys with their descriptions (read from the pydantic classes, as
``docs/policy-format.md`` is), and an example after the line :data:`EXAMPLE_MARK`. The
examples of all files, uncommented, form one small estate on the chosen platforms that lints
clean (tests/test_init.py uncomments and lints it).
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from accord.compiler.core.platforms import PLATFORMS
from accord.compiler.model.schema import (
    ColumnSpec,
    DatabricksPlatform,
    Dataset,
    Index,
    Mask,
    Mesh,
    Principal,
    Probe,
    RowFilter,
    SnowflakePlatform,
    Surface,
    Unmanaged,
)

#: the line after which a skeleton's example starts (each line commented with ``# ``)
EXAMPLE_MARK = "# Example (uncomment and edit):"
#: the lines accord needs in a repository's .gitignore
GITIGNORE = (".accord_cache/", ".accord/")
#: where the editor association writes the schema (``accord schema``)
SCHEMA_FILE = ".vscode/accord.schema.json"
WORKFLOW = ".github/workflows/accord.yml"
PRE_COMMIT = ".pre-commit-config.yaml"
#: what CI runs ``pip install`` on, one line of the workflow (``accord init --install`` on an
#: existing scaffold rewrites this line and nothing else)
INSTALL_KEY = "ACCORD_INSTALL"
#: the line as :func:`install_line` writes it (``--install`` holds no quote or backslash)
INSTALL_LINE = re.compile(rf'  {INSTALL_KEY}: "[^"\\]*"')
#: what CI installs when accord cannot tell where it came from: no requirement pip can
#: resolve (never a name on a public index, which anyone may publish), so the step fails
#: until it is filled in
PLACEHOLDER = "<fill in: a git URL or a path of accord>"


@dataclass(frozen=True)
class Choices:
    """What ``accord init`` was told: the governance schemas (one at least), the styles, the
    policy directory (relative to the repository), the default branch, what CI installs."""

    snowflake: str | None
    databricks: str | None
    snowflake_style: str = "column"
    databricks_style: str = "table"
    policies: str = "policies"
    branch: str = "main"
    install: str = PLACEHOLDER
    editor: bool = True

    @property
    def platforms(self) -> list[str]:
        return [p for p in PLATFORMS if getattr(self, p)]


def check_choices(choices: Choices) -> list[str]:
    """What is wrong with ``choices``, one message each (nothing: they can be written)."""
    problems = []
    if not choices.platforms:
        problems.append("give a governance schema for at least one platform")
    for platform, cls, style in (
        ("snowflake", SnowflakePlatform, choices.snowflake_style),
        ("databricks", DatabricksPlatform, choices.databricks_style),
    ):
        value = getattr(choices, platform)
        if value is None:
            continue
        try:
            cls(governance_schema=value, style=style)
        except ValidationError as err:
            for e in err.errors():
                where = ".".join(str(p) for p in e["loc"])
                problems.append(f"{platform} {where}: {e['msg'].removeprefix('Value error, ')}")
    policies = choices.policies.replace("\\", "/")
    parts = policies.split("/")
    # every value below is written into command lines (`accord lint DIR`, `pip install ...`,
    # `--base origin/BRANCH`): one that starts with '-' is read as an option there
    for option, value in (("--policies", choices.policies), ("--branch", choices.branch)):
        if any(part.startswith("-") for part in value.replace("\\", "/").split("/")):
            problems.append(f"{option} {value!r}: starts with '-', as an option does")
    if (
        os.path.isabs(choices.policies)
        or not policies
        or any(p in ("", ".", "..") or p.startswith(".") for p in parts)
        or not all(_plain(p) for p in parts)
    ):
        problems.append(
            f"--policies {choices.policies!r}: a relative folder of the repository (letters, "
            "digits, _ - .), not hidden and not outside it"
        )
    if not plain_branch(choices.branch):
        problems.append(f"--branch {choices.branch!r} is not a plain branch name")
    problems += install_problems(choices.install)
    return problems


def plain_branch(name: str) -> bool:
    """A branch name written as it is in the workflow (letters, digits, ``_ - . /``)."""
    return _plain(name.replace("/", "_"))


def install_problems(install: str) -> list[str]:
    """What is wrong with ``install`` as the workflow's install line (nothing: it can be
    written)."""
    if any(_control(c) for c in install):
        return [
            f"--install {install!r}: a control character, which no requirement, path or URL holds"
        ]
    if not install.strip() or any(c in install for c in "\"'`$\\"):
        return [f"--install {install!r}: a pip requirement, path or URL"]
    if any(part.startswith("-") for part in install.replace("\\", "/").split("/")):
        return [f"--install {install!r}: starts with '-', as an option does"]
    return []


def _control(c: str) -> bool:
    """A control character (C0, DEL, C1), a format character (a direction override) or a
    line or paragraph separator: YAML 1.1 breaks lines at NEL (U+0085), U+2028 and U+2029."""
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


def _plain(name: str) -> bool:
    return bool(name) and all(c.isascii() and (c.isalnum() or c in "_-.") for c in name)


def scaffold(choices: Choices, schema: dict[str, Any]) -> dict[str, str]:
    """Every file ``accord init`` writes, by path relative to the repository, in write order.
    ``schema`` is the JSON Schema ``accord schema`` prints."""
    d = choices.policies.rstrip("/")
    files: dict[str, str] = {}
    for name, text in _policy_files(choices).items():
        modeline = ""
        if choices.editor:
            relative = os.path.relpath(SCHEMA_FILE, d).replace(os.sep, "/")
            modeline = f"# yaml-language-server: $schema={relative}\n"
        files[f"{d}/{name}"] = modeline + text
    files[PRE_COMMIT] = _pre_commit(choices)
    files[WORKFLOW] = _workflow(choices)
    if choices.editor:
        files[SCHEMA_FILE] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
        files[".vscode/settings.json"] = (
            json.dumps(
                {"yaml.schemas": {f"./{SCHEMA_FILE}": [f"{d}/**/*.yaml", f"{d}/**/*.yml"]}},
                indent=2,
            )
            + "\n"
        )
    return files


def gitignore_addition(current: str | None) -> str:
    """What to append to a .gitignore holding ``current`` (None: there is none) so that it
    ignores accord's cache and local configuration; empty when it already does."""
    have = set((current or "").splitlines())
    missing = [line for line in GITIGNORE if line not in have and line.rstrip("/") not in have]
    if not missing:
        return ""
    head = "" if not current or current.endswith("\n") else "\n"
    return (
        head
        + "# accord: the lint cache (.accord_cache/) and the machine's own configuration, such "
        "as probe tokens (.accord/)\n" + "".join(f"{line}\n" for line in missing)
    )


# --------------------------------------------------------------------------------------------
# the policy directory


def _keys(cls: type[BaseModel], indent: str = "#   ") -> list[str]:
    """One comment line per key of ``cls``: its name, whether required, its description."""
    width = max(len(k) for k in cls.model_fields)
    out = []
    for key, field in cls.model_fields.items():
        need = "required" if field.is_required() else "optional"
        text = " ".join((field.description or "").split())
        out.append(f"{indent}{key.ljust(width)}  ({need}) {text}".rstrip())
    return out


def _doc(cls: type[BaseModel]) -> list[str]:
    """The first paragraph of ``cls``'s docstring, as comment lines."""
    first = (cls.__doc__ or "").strip().split("\n\n")[0]
    return [f"# {line.strip()}" for line in first.splitlines()]


def _example(lines: list[str]) -> list[str]:
    return ["#", EXAMPLE_MARK, "#", *[f"# {line}".rstrip() for line in lines]]


@dataclass(frozen=True)
class Skeleton:
    """What the skeletons ``accord init`` writes say of one platform: its row of
    :data:`SKELETONS` (a new platform is a row there, its facts in compiler/core/platforms.py
    and its parts in targets/). ``{dataset}`` in a line is the platform's example dataset (the
    first chosen platform's is ``orders``, another's ``orders`` + :attr:`replica_suffix`, a
    replica of it); ``{schema}`` its governance schema."""

    #: what the governance schema holds, said beside it
    holds: str
    #: the example principals' identities: the analyst's, the steward's
    principals: tuple[str, str]
    #: the example salt's secret reference
    salt: str
    #: the example dataset's table, and its lines after the table (and ``replica_of``)
    table: str
    dataset: tuple[str, ...]
    replica_suffix: str
    #: the example masked column's name (the probe names the first chosen platform's)
    column: str
    #: an example retrieval index over the dataset (none: no lines)
    index: tuple[str, ...]
    #: the example surface's name and its lines
    surface: str
    surface_lines: tuple[str, ...]
    #: an example console object kept unmanaged (the first chosen platform's is written):
    #: kind, name, SQL
    console: tuple[str, str, str]
    #: the CI secrets the live checks read
    secrets: tuple[str, ...]


SKELETONS: dict[str, Skeleton] = {
    "snowflake": Skeleton(
        holds="policies, mapping tables, salt functions",
        principals=("ANALYST", "DATA_STEWARD"),
        salt="env:CUSTOMER_SALT_SNOWFLAKE",
        table="SALES.CORE.ORDERS",
        dataset=(
            "    row_filter: {entitlement: region, column: REGION}",
            "    columns:",
            "      CUSTOMER_ID: {type: VARCHAR, mask: customer_pseudonym, identifier: customer}",
            "      NOTES: {type: VARCHAR, mask: free_text}",
        ),
        replica_suffix="_warehouse",
        column="CUSTOMER_ID",
        index=(
            "  order_search:",
            "    platform: snowflake",
            "    kind: cortex_search",
            "    source: {dataset}",
            "    columns: [NOTES, CUSTOMER_ID]",
            "    inherit_governance: true",
        ),
        surface="sales_agent",
        surface_lines=("    reads: [{dataset}]", "    identity: caller"),
        console=(
            "masking_policy",
            "{schema}.CONSOLE_NOTES_MASK",
            "CREATE MASKING POLICY {schema}.CONSOLE_NOTES_MASK AS (val VARCHAR) RETURNS "
            "VARCHAR -> CASE WHEN IS_ROLE_IN_SESSION('ANALYST') THEN val ELSE '***' END;",
        ),
        secrets=("SNOWFLAKE_ACCOUNT", "SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD", "SNOWFLAKE_ROLE"),
    ),
    "databricks": Skeleton(
        holds="functions, mapping tables, salt functions",
        principals=("analysts", "data-stewards"),
        salt="env:CUSTOMER_SALT_DATABRICKS",
        table="sales.core.orders",
        dataset=(
            "    row_filter: {entitlement: region, column: region}",
            "    columns:",
            "      customer_id: {type: STRING, mask: customer_pseudonym, identifier: customer}",
            "      notes: {type: STRING, mask: free_text}",
        ),
        replica_suffix="_lake",
        column="customer_id",
        index=(),
        surface="lakehouse_agent",
        surface_lines=(
            "    reads: [{dataset}]",
            "    identity: caller",
            '    runtime: "16.4"',
            "    access_mode: standard",
        ),
        console=(
            "masking_policy",
            "{schema}.console_notes_mask",
            "CREATE FUNCTION {schema}.console_notes_mask(val STRING) RETURNS STRING "
            "RETURN CASE WHEN is_account_group_member('analysts') THEN val ELSE '***' END;",
        ),
        secrets=("DATABRICKS_HOST", "DATABRICKS_TOKEN", "DATABRICKS_WAREHOUSE_ID"),
    ),
}


def _chosen(c: Choices) -> list[tuple[str, Skeleton, str]]:
    """(platform, its skeleton row, its example dataset's name) of each chosen platform."""
    return [
        (p, SKELETONS[p], "orders" if i == 0 else "orders" + SKELETONS[p].replica_suffix)
        for i, p in enumerate(c.platforms)
    ]


def _policy_files(c: Choices) -> dict[str, str]:
    chosen = _chosen(c)
    first = chosen[0][1]
    files: dict[str, list[str]] = {}

    platforms = [
        "# platforms: the catalogs accord writes policies to, written by `accord init`.",
        "# Every *.yaml / *.yml file under this directory is merged into one model; each entry",
        "# may be defined in one file only. The reference: docs/policy-format.md of accord, or",
        "# `accord schema` (the JSON Schema your editor reads).",
        "#",
        "# snowflake.style: column (masks attached column by column) | tag (through tags)",
        "# databricks.style: table (SET ROW FILTER / SET MASK) | abac (governed tags and",
        "#   CREATE POLICY; needs Databricks Runtime 16.4+ on every reader)",
        "version: 1",
        "platforms:",
    ]
    for p, row, _ in chosen:
        platforms += [
            f"  {p}:",
            f"    governance_schema: {getattr(c, p)}   # {row.holds}",
            f"    style: {getattr(c, f'{p}_style')}",
        ]
    files["platforms.yaml"] = platforms

    identity = [(p, *row.principals) for p, row, _ in chosen]
    files["principals.yaml"] = [
        "# principals: who is granted something, and their identity on each platform.",
        *_doc(Principal),
        "#",
        "# Keys of each entry:",
        *_keys(Principal),
        *_example(
            [
                "principals:",
                "  analyst:",
                *[f"    {p}: {a}" for p, a, _ in identity],
                "  steward:",
                *[f"    {p}: {s}" for p, _, s in identity],
            ]
        ),
    ]
    files["entitlements.yaml"] = [
        "# entitlements: row-level entitlement dimensions. Each dimension maps a value (a code",
        "# held in a column of the datasets it filters) to the principals granted it, and",
        "# compiles to one mapping table per platform in the governance schema, so both",
        "# catalogs hold the same grants.",
        *_example(
            ["entitlements:", "  region:", "    EU: [analyst, steward]", "    US: [steward]"]
        ),
    ]
    salt = [f"      {p}: {row.salt}" for p, row, _ in chosen]
    files["masks.yaml"] = [
        "# masks: column masks, applied to the columns that name them in `datasets`.",
        "# hash: salted SHA-256 (one secret reference per platform, env:NAME or file:PATH; the",
        "#   salt itself is never in any file accord writes, and each platform needs its own);",
        "# redact: a replacement string; nullify: NULL; partial: all but the last keep_last",
        "#   characters replaced by *. hash, redact and partial apply to string columns only.",
        "#",
        "# Keys of each entry:",
        *_keys(Mask),
        *_example(
            [
                "masks:",
                "  customer_pseudonym:",
                "    strategy: hash",
                "    unmasked_for: [steward]",
                "    salt:",
                *salt,
                "  free_text:",
                "    strategy: redact",
                '    replacement: "[redacted]"',
                "    unmasked_for: [steward]",
            ]
        ),
    ]
    datasets: list[str] = ["datasets:"]
    for p, row, name in chosen:
        datasets += [f"  {name}:", f"    platform: {p}", f"    table: {row.table}"]
        if name != "orders":
            datasets.append("    replica_of: orders                # the same facts as orders")
        datasets += row.dataset
    files["datasets.yaml"] = [
        "# datasets: the tables accord governs, each on one platform. A dataset is governed",
        "# when it has a row_filter or a masked column; list under `columns` the columns that",
        "# are masked or carry an identifier domain (others may be left out).",
        "#",
        "# Keys of each entry:",
        *_keys(Dataset),
        "# row_filter:",
        *_keys(RowFilter, "#     "),
        "# columns.NAME:",
        *_keys(ColumnSpec, "#     "),
        *_example(datasets),
    ]
    index = [
        "# indexes: retrieval indexes built over datasets. Snowflake Cortex Search answers with",
        "# its owner's rights unless inherit_governance is true; a Databricks vector index over",
        "# governed data enforces nothing or cannot be built (ACC301).",
        "#",
        "# Keys of each entry:",
        *_keys(Index),
    ]
    indexes = [line.format(dataset=name) for _, row, name in chosen for line in row.index]
    if indexes:
        index += _example(["indexes:", *indexes])
    files["indexes.yaml"] = index
    surfaces = ["surfaces:"]
    for p, row, name in chosen:
        surfaces += [f"  {row.surface}:", f"    platform: {p}"]
        surfaces += [line.format(dataset=name) for line in row.surface_lines]
    files["surfaces.yaml"] = [
        "# surfaces: what answers questions (agents, pipelines, MCP or tool servers) and the",
        "# datasets each reads. platform none (no catalog) or identity service over governed",
        "# data is ACC402; a Databricks runtime too old for the policies returns nothing (ACC401).",
        "#",
        "# Keys of each entry:",
        *_keys(Surface),
        *_example(surfaces),
    ]
    files["personas.yaml"] = [
        "# personas: who asks, as the principals they hold (the first is the Snowflake primary",
        "# role, the rest secondary roles; on Databricks all are group memberships). Used by",
        "# accord analyze, verify, diff and the probes.",
        *_example(["personas:", "  analyst: [analyst]", "  steward: [steward]"]),
    ]
    expect = [f"      {row.surface}: masked" for _, row, _ in chosen]
    files["probes.yaml"] = [
        "# probes: the governance team's expected answer, per surface, to one question of one",
        "# persona: clear | masked | filtered | denied | ungoverned | empty. Checked against the",
        "# model (ACC404), the compiled SQL (accord verify) and the live mesh (accord probe",
        "# --live). Every surface that reaches the fact needs an entry, and no other.",
        "#",
        "# Keys of each entry:",
        *_keys(Probe),
        *_example(
            [
                "probes:",
                "  analyst_sees_customer_pseudonyms:",
                "    owner: data-governance",
                "    persona: analyst",
                "    dataset: orders",
                f"    column: {first.column}",
                "    expect:",
                *expect,
            ]
        ),
    ]
    files["mesh.yaml"] = [
        "# mesh: the agent mesh as a whole, read by accord manifest (optional).",
        "#",
        "# Keys:",
        *_keys(Mesh),
        *_example(["mesh:", '  a2a_version: "1.0"']),
    ]
    platform = chosen[0][0]
    schema = getattr(c, platform)
    console = (platform, *(part.format(schema=schema) for part in first.console))
    files["unmanaged.yaml"] = [
        "# unmanaged: what a platform holds that the model does not express, kept verbatim",
        "# (accord import writes them): lint reads each entry's sql, drift and plan leave the",
        "# object it names alone and list it, analyze counts what it reaches as unknown.",
        "#",
        "# Keys of each entry:",
        *_keys(Unmanaged),
        *_example(
            [
                "unmanaged:",
                "  console_notes_mask:",
                f"    platform: {console[0]}",
                f"    kind: {console[1]}",
                f"    name: {console[2]}",
                f'    sql: "{console[3]}"',
                "    why: written in the console; kept until the model says it",
            ]
        ),
    ]
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}


# --------------------------------------------------------------------------------------------
# the repository's wiring


def _pre_commit(c: Choices) -> str:
    return (
        "# pre-commit (https://pre-commit.com), written by `accord init`. `repo: local` runs the\n"
        "# accord installed where you commit (pip, pipx or a virtual environment): nothing is\n"
        "# fetched. It lints the repository (`accord lint .`, as CI does): the policy directory,\n"
        "# every policy file outside it, and every SQL file, dbt macro and Databricks notebook.\n"
        "# A policy directory is one model merged from all its files, so the hook lints all of\n"
        "# it on any change, never only the changed files.\n"
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: accord-lint\n"
        "        name: accord lint (the repository)\n"
        f"        entry: {LINT}\n"
        "        language: system\n"
        "        types_or: [yaml, sql, python, toml]   # policy files, SQL, notebooks, settings\n"
        "        pass_filenames: false\n"
        "        require_serial: true\n"
    )


#: how the hook and the workflow lint: the repository, from its top (``accord lint``'s
#: repository mode: the policy directory, the policy files outside it, SQL files, dbt macros
#: and notebooks, whatever else the top holds)
LINT = "accord lint ."


def install_line(install: str) -> str:
    """The workflow's install line (:data:`INSTALL_LINE`), without its line break."""
    return f'  {INSTALL_KEY}: "{install}"'


def _workflow(c: Choices) -> str:
    d = c.policies.rstrip("/")
    base = f"origin/{c.branch}"
    live = "all" if len(c.platforms) == 2 else c.platforms[0]
    secrets = [s for _, row, _ in _chosen(c) for s in row.secrets]
    env = "".join(f"      {s}: ${{{{ secrets.{s} }}}}\n" for s in secrets)
    setup = (
        "      - uses: actions/setup-python@v5\n"
        '        with: {python-version: "3.11"}\n'
        '      - run: pip install "$ACCORD_INSTALL"\n'
    )
    return (
        "# accord in CI, written by `accord init`: lint with code scanning, verify, the exposure\n"
        "# a pull request changes as a comment (failing on any widening), and a scheduled check\n"
        "# of the live platforms (probes and drift).\n"
        "name: accord\n"
        "on:\n"
        "  push:\n"
        # quoted: YAML reads 1.10 as a number, null as no value, 0x1F as 31
        f'    branches: ["{c.branch}"]\n'
        "  pull_request:                       # into the branch the exposure is compared with\n"
        f'    branches: ["{c.branch}"]\n'
        "  schedule:\n"
        '    - cron: "17 5 * * *"             # the live checks, daily\n'
        "  workflow_dispatch:\n"
        "env:\n"
        "  # what CI installs accord from: a git URL (git+https://...@COMMIT) or a path; never\n"
        "  # a bare name, which a public package index would resolve to whoever published it\n"
        f"{install_line(c.install)}\n"
        "jobs:\n"
        "  lint:\n"
        "    if: github.event_name == 'push' || github.event_name == 'pull_request'\n"
        "    runs-on: ubuntu-latest\n"
        "    permissions:\n"
        "      contents: read\n"
        "      security-events: write\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        f"{setup}"
        "      # the repository: the policy directory, SQL files, dbt macros and notebooks\n"
        f"      - run: {LINT} --format sarif > accord.sarif\n"
        "      - uses: github/codeql-action/upload-sarif@v3\n"
        "        if: always()\n"
        "        with: {sarif_file: accord.sarif, category: accord}\n"
        "      - if: always()\n"
        f"        run: {LINT} --format github\n"
        "  verify:\n"
        "    if: github.event_name == 'push' || github.event_name == 'pull_request'\n"
        "    runs-on: ubuntu-latest\n"
        "    permissions:\n"
        "      contents: read\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        f"{setup}"
        f"      - run: accord verify {d}\n"
        "  exposure:\n"
        "    if: github.event_name == 'pull_request'\n"
        "    runs-on: ubuntu-latest\n"
        "    permissions:\n"
        "      contents: read\n"
        "      pull-requests: write\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with: {fetch-depth: 0}             # the base revision must be present\n"
        f"{setup}"
        "      # --base: a git revision, never a directory of that name, so a pull request cannot\n"
        "      # pick what it is compared with; the comment names the commit compared with\n"
        f"      - run: accord diff {d} --base {base} --format markdown > exposure.md\n"
        "      - name: comment on the pull request (one comment, edited in place)\n"
        '        run: gh pr comment "$PR" --edit-last --create-if-none --body-file exposure.md\n'
        "        env:\n"
        "          GH_TOKEN: ${{ github.token }}\n"
        "          PR: ${{ github.event.pull_request.number }}\n"
        f"      - run: accord diff {d} --base {base} --fail-on widening\n"
        "  live:\n"
        "    if: github.event_name == 'schedule' || github.event_name == 'workflow_dispatch'\n"
        "    runs-on: ubuntu-latest\n"
        "    permissions:\n"
        "      contents: read\n"
        "    env:\n"
        "      # read-only credentials (accord's docs/live.md#reader-grants); the probe config\n"
        "      # (tokens, probe users) is a file outside the checkout\n"
        f"{env}"
        "      ACCORD_PROBE_CONFIG: ${{ github.workspace }}/../probe.yaml\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        f"{setup}"
        '      - run: printf \'%s\\n\' "$PROBE_CONFIG" > "$ACCORD_PROBE_CONFIG"\n'
        "        env:\n"
        "          PROBE_CONFIG: ${{ secrets.ACCORD_PROBE_CONFIG }}\n"
        f"      - run: accord probe {d} --live\n"
        "      - if: success() || failure()\n"
        f"        run: accord drift {d} --platform {live}\n"
    )
