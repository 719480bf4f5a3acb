"""``accord init [DIR]``: scaffold a policy directory and its CI wiring in the repository DIR.

Never overwrites: when any file it would write exists, it names every one and writes nothing
(exit 2). ``.gitignore`` is the one file it extends rather than refuses: the lines it lacks
are appended, and what it holds is kept byte for byte. The files are
:func:`compiler.model.scaffold.scaffold`'s.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from accord.compiler.commands.options import Choice
from accord.compiler.commands.schema import policy_schema
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.model.loader import within
from accord.compiler.model.scaffold import Choices, check_choices, gitignore_addition, scaffold


@click.command("init")
@click.argument("repository", metavar="[DIR]", default=".", type=click.Path(file_okay=False))
@click.option(
    "--snowflake-schema",
    default=None,
    metavar="DATABASE.SCHEMA",
    help="The Snowflake governance schema (policies, mapping tables, salt functions).",
)
@click.option(
    "--databricks-schema",
    default=None,
    metavar="CATALOG.SCHEMA",
    help="The Databricks governance schema (functions, mapping tables, salt functions).",
)
@click.option(
    "--snowflake-style", type=Choice(["column", "tag"]), default="column", show_default=True,
    help="How Snowflake masks are attached.",
)  # fmt: skip
@click.option(
    "--databricks-style", type=Choice(["table", "abac"]), default="table", show_default=True,
    help="How Databricks policies are written.",
)  # fmt: skip
@click.option(
    "--policies", default="policies", show_default=True,
    help="The policy directory, relative to the repository.",
)  # fmt: skip
@click.option(
    "--branch", default="main", show_default=True,
    help="The default branch: pull requests are compared with origin/BRANCH.",
)  # fmt: skip
@click.option(
    "--install", default=None,
    help="What CI runs `pip install` on: a requirement, a path or a git URL [default: the git "
    "commit this accord was installed from, else accord[snowflake,databricks]==VERSION].",
)  # fmt: skip
@click.option(
    "--no-editor", is_flag=True,
    help="Write no editor schema association (.vscode/, yaml-language-server lines).",
)  # fmt: skip
def command(
    repository: str,
    snowflake_schema: str | None,
    databricks_schema: str | None,
    snowflake_style: str,
    databricks_style: str,
    policies: str,
    branch: str,
    install: str | None,
    no_editor: bool,
) -> int:
    """Scaffold a policy directory in the repository DIR (default: the current directory): platforms.yaml with the governance schemas, a commented skeleton of every
    other section, a pre-commit hook, a GitHub Actions workflow, .gitignore lines and the
    editor's schema association. The governance schemas come from the options, or, when
    neither is given, from prompts on a terminal (never in CI). Nothing is overwritten: when
    a file exists, every such file is named and nothing is written (exit 2)."""
    if snowflake_schema is None and databricks_schema is None:
        snowflake_schema, databricks_schema = _ask()
    note = None
    if install is None:
        install, note = installed_from()
    choices = Choices(
        snowflake=snowflake_schema or None,
        databricks=databricks_schema or None,
        snowflake_style=snowflake_style,
        databricks_style=databricks_style,
        policies=policies,
        branch=branch,
        install=install,
        editor=not no_editor,
    )
    problems = check_choices(choices)
    if problems:
        raise UsageError("accord init: " + "; ".join(problems))
    root = Path(repository)
    files = scaffold(choices, policy_schema())
    _refuse_links_out(root, list(files))
    clashes = [rel for rel in files if _taken(root / rel)]
    ignore = root / ".gitignore"
    if ignore.is_symlink() or (ignore.exists() and not ignore.is_file()):
        clashes.append(".gitignore")
    problems = [
        Diagnostic(
            Location(str(root / rel), 1, 1),
            "exists: accord init never overwrites a file (move it away, or init another directory)",
        )
        for rel in clashes
    ]
    problems += [
        Diagnostic(
            Location(str(folder), 1, 1),
            f"exists and is not a directory: accord init writes {root / rel} inside it "
            "(move it away, or init another directory)",
        )
        for folder, rel in _blocked_folders(root, files)
    ]
    if problems:
        raise InputError(problems)
    current = _read_gitignore(ignore) if ignore.is_file() else None
    addition = gitignore_addition(current)
    written: list[Path] = []
    made: list[Path] = []
    try:
        for rel, text in files.items():
            path = root / rel
            _make_folders(path.parent, made)
            # "x": created here, or the write fails (a file that appeared since the check)
            with open(path, "x", encoding="utf-8", newline="\n") as handle:
                written.append(path)
                handle.write(text)
        if addition:
            with open(ignore, "a", encoding="utf-8", newline="\n") as handle:
                handle.write(addition)
    except OSError as err:
        for path in written:
            path.unlink(missing_ok=True)
        for folder in reversed(made):  # the folders it made, deepest first: now empty
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise UsageError(
            f"accord init: {err.filename}: {err.strerror}; nothing was written"
        ) from None
    for rel in files:
        click.echo(f"wrote {root / rel}")
    if addition:
        click.echo(f"{'extended' if current is not None else 'wrote'} {ignore}")
    if note:
        click.echo(f"note: {note}")
    policies_dir = root / choices.policies
    click.echo(
        f"next: edit {policies_dir}/ (each file's example shows its section), then "
        f"`accord lint {policies_dir}`, and commit"
    )
    return 0


EXTRAS = "accord[snowflake,databricks]"


def installed_from() -> tuple[str, str | None]:
    """What CI should install: the git URL and commit this accord was installed from (PEP 610
    ``direct_url.json``), so CI runs the same code; else this version from a package index,
    with a note to say so (pass --install when accord is not published there)."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("accord")
    except PackageNotFoundError:  # pragma: no cover - a source tree without metadata
        return EXTRAS, None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    vcs = direct.get("vcs_info") or {}
    url, commit = str(direct.get("url", "")), str(vcs.get("commit_id", ""))
    if vcs.get("vcs") == "git" and url.startswith("https://") and commit.isalnum():
        return f"{EXTRAS} @ git+{url}@{commit}", None
    pinned = f"{EXTRAS}=={dist.version}"
    return pinned, (
        f"CI installs {pinned} from the package index; if accord is not published there, "
        "run accord init again with --install set to a git URL (git+https://...@TAG) or a path"
    )


def _refuse_links_out(root: Path, files: list[str]) -> None:
    """Refuse (exit 2, naming each link, before anything is written) a folder init would write
    into that leads out of ``root`` through a symbolic link (``policies`` or ``.github`` a
    link to a directory elsewhere): what init writes stays in the repository. A link that
    stays inside it is the repository's own folder."""
    found: dict[Path, str] = {}
    for rel in files:
        folder = root
        for part in Path(rel).parts[:-1]:
            folder = folder / part
            if folder in found or not folder.is_symlink():
                continue
            if not within(str(folder), str(root)):
                found[folder] = os.path.realpath(folder)
                break
    if found:
        raise InputError(
            [
                Diagnostic(
                    Location(str(link), 1, 1),
                    f"a symbolic link to {target}, outside {root}: accord init never writes "
                    "through it (make it a folder of the repository, or init another directory)",
                )
                for link, target in found.items()
            ]
        )


def _taken(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _blocked_folders(root: Path, files: dict[str, str]) -> list[tuple[Path, str]]:
    """(folder, file) for each folder a file goes in that exists as something other than a
    directory (a file ``.vscode``): found before anything is written."""
    out: dict[Path, str] = {}
    for rel in files:
        for parent in reversed(Path(rel).parents[:-1]):  # the outermost folder first
            folder = root / parent
            if folder.is_dir():
                continue
            if _taken(folder):
                out.setdefault(folder, rel)
            break
    return sorted(out.items())


def _make_folders(folder: Path, made: list[Path]) -> None:
    """``folder`` and the folders above it that are missing, each one made appended to
    ``made`` (outermost first), so that a failed run removes what it made."""
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def _read_gitignore(path: Path) -> str:
    """The text of the repository's ``.gitignore``: UTF-8, bounded, or a located error (before
    anything is written)."""
    return decode(read_bytes(path, ".gitignore", MAX_FILE_BYTES), str(path), ".gitignore")


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ask() -> tuple[str | None, str | None]:
    """The governance schemas, asked on a terminal; in CI or without a terminal, a usage
    error naming the options."""
    ci = os.environ.get("CI", "").lower() not in ("", "0", "false")
    if ci or not _terminal():
        raise UsageError(
            "accord init: give --snowflake-schema DATABASE.SCHEMA and/or --databricks-schema "
            "CATALOG.SCHEMA (accord init asks only on a terminal, never in CI)"
        )
    snowflake = click.prompt(
        "Snowflake governance schema (DATABASE.SCHEMA; empty: no Snowflake)",
        default="",
        show_default=False,
    ).strip()
    databricks = click.prompt(
        "Databricks governance schema (CATALOG.SCHEMA; empty: no Databricks)",
        default="",
        show_default=False,
    ).strip()
    return snowflake or None, databricks or None
