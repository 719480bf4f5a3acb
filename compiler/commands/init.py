"""``accord init [DIR]``: scaffold a policy directory and its CI wiring in the repository DIR.

Never overwrites: when any file it would write exists, it names every one and writes nothing
(exit 2). ``.gitignore`` is the one file it extends rather than refuses: the lines it lacks
are appended, and what it holds is kept byte for byte. ``--install`` on a repository that has
the workflow rewrites the workflow's install line and nothing else. The files are
:func:`compiler.model.scaffold.scaffold`'s.

What it reads of the repository, with git and without the network: the branch pull requests
are compared with (:func:`default_branch`), and where CI installs accord from
(:func:`installed_from`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path

import click

from accord.compiler.commands.options import Choice, in_ci
from accord.compiler.commands.schema import policy_schema
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.git import git_line
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.core.visible import visible
from accord.compiler.model.loader import within
from accord.compiler.model.scaffold import (
    INSTALL_KEY,
    INSTALL_LINE,
    PLACEHOLDER,
    WORKFLOW,
    Choices,
    check_choices,
    gitignore_addition,
    install_line,
    install_problems,
    plain_branch,
    scaffold,
)


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
    "--branch", default=None,
    help="The branch CI runs on and compares pull requests with (origin/BRANCH) [default: the "
    "remote's default branch (origin/HEAD), else the current branch, else git's "
    "init.defaultBranch].",
)  # fmt: skip
@click.option(
    "--install", default=None,
    help="What CI runs `pip install` on: a git URL or a path [default: the git commit this "
    "accord was installed from, else a placeholder to fill in]. On a repository that has the "
    "workflow: rewrite its install line, and nothing else.",
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
    branch: str | None,
    install: str | None,
    no_editor: bool,
) -> int:
    """Scaffold a policy directory in the repository DIR (default: the current directory): platforms.yaml with the governance schemas, a commented skeleton of every
    other section, a pre-commit hook, a GitHub Actions workflow, .gitignore lines and the
    editor's schema association. The governance schemas come from the options, or, when
    neither is given, from prompts on a terminal (never in CI). Nothing is overwritten: when
    a file exists, every such file is named and nothing is written (exit 2); but --install on a
    repository that has the workflow rewrites the workflow's install line, and nothing else."""
    root = Path(repository)
    if install is not None and _taken(root / WORKFLOW):
        _not_applied()
        return _rewrite_install(root, install)
    branch, branch_why = default_branch(root, branch)
    install_why = "given with --install"
    if install is None:
        install, install_why = installed_from(root)
    if snowflake_schema is None and databricks_schema is None:
        snowflake_schema, databricks_schema = _ask()
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
    click.echo(
        f"branch: {branch} ({branch_why}): CI runs on pushes to it and on pull requests into "
        f"it, comparing them with origin/{branch}"
    )
    click.echo(f"install: CI installs accord from {visible(install)} ({install_why})")
    if install == PLACEHOLDER:
        line = files[WORKFLOW].splitlines().index(install_line(install)) + 1
        click.echo(
            f"note: fill it in: edit {INSTALL_KEY} on line {line} of {root / WORKFLOW} to a git "
            "URL of accord (git+https://HOST/PATH@TAG) or a path, or run `accord init "
            f"{shlex.quote(str(root))} --install SPEC`, which rewrites that line and nothing "
            "else; until then CI's install step fails"
        )
    policies_dir = root / choices.policies
    click.echo(
        f"next: edit {policies_dir}/ (each file's example shows its section), then "
        f"`accord lint {policies_dir}`, and commit"
    )
    return 0


# --------------------------------------------------------------------------------------------
# what init reads of the repository and of this accord: with git, never the network

#: the remote GitHub Actions' checkout names ``origin``, whose branches the workflow compares with
REMOTE = "origin"


def default_branch(root: Path, given: str | None) -> tuple[str, str]:
    """The branch CI runs on and compares pull requests with, and where it came from:
    ``given`` (``--branch``); else the remote's default branch (``origin/HEAD``, which a clone
    records); else the current branch (an unborn one too); else git's ``init.defaultBranch``.
    A usage error (exit 2) says so when none tells, or when git's is not a plain name."""
    if given is not None:
        return given, "given with --branch"
    where = _existing(root)
    prefix = f"refs/remotes/{REMOTE}/"
    remote = git_line(["symbolic-ref", "--quiet", f"{prefix}HEAD"], where)
    found = [
        (remote.removeprefix(prefix), f"the remote's default branch, {REMOTE}/HEAD")
        if remote and remote.startswith(prefix)
        else None,
        _named(git_line(["symbolic-ref", "--quiet", "--short", "HEAD"], where), "the current branch"),
        _named(git_line(["config", "--get", "init.defaultBranch"], where), "git's init.defaultBranch"),
    ]  # fmt: skip
    for branch, why in filter(None, found):
        if not plain_branch(branch) or branch.startswith("-"):
            raise UsageError(
                f"accord init: {why} is {visible(branch)!r}, which the workflow cannot name as "
                "written (letters, digits, _ - . /): pass --branch NAME"
            )
        return branch, why
    raise UsageError(
        f"accord init: could not tell the branch pull requests are compared with ({root} has "
        f"no {REMOTE}/HEAD, no current branch, and git has no init.defaultBranch): pass "
        "--branch NAME (the branch CI runs on, main or master)"
    )


def _named(value: str | None, why: str) -> tuple[str, str] | None:
    return (value, why) if value else None


def _existing(root: Path) -> Path:
    """``root``, or the nearest folder above it that exists (init makes the rest)."""
    here = Path(os.path.abspath(root))
    while not here.is_dir() and here.parent != here:
        here = here.parent
    return here


EXTRAS = "[snowflake,databricks]"


def installed_from(root: Path) -> tuple[str, str]:
    """What CI should install, and why: never a name a public package index resolves (this
    project is not published there, and anyone may publish its name). From the PEP 610 record
    of how this accord was installed (``direct_url.json``): a git URL and commit, that commit;
    a path inside the repository ``root``, that path; a path that is a git checkout whose
    commit is on its remote ``origin`` (an https URL), that URL and commit. Else
    :data:`PLACEHOLDER`, which the command's output says to fill in."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution
    from urllib.parse import unquote, urlsplit

    placeholder = (PLACEHOLDER, "accord cannot tell where this accord came from")
    try:
        direct = json.loads(distribution("accord").read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, ValueError):
        return placeholder
    if not isinstance(direct, dict) or not isinstance(direct.get("url"), str):
        return (PLACEHOLDER, "this accord was installed from a package index")
    url = direct["url"]
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        spec = _git_spec(url, str(vcs.get("commit_id", "")), _subdirectory(direct))
        if spec:
            return spec, "the git commit this accord was installed from"
        return (PLACEHOLDER, "this accord was installed from a git URL CI cannot reach as written")
    parts = urlsplit(url)
    if parts.scheme != "file":
        return (PLACEHOLDER, "this accord was installed from an archive")
    path = Path(unquote(parts.path))
    inside = _relative(path, root)
    if inside is not None:
        return (
            f"./{inside}{EXTRAS}",
            "the path inside the repository this accord was installed from",
        )
    remote = git_line(["config", "--get", f"remote.{REMOTE}.url"], path) if path.is_dir() else None
    commit = git_line(["rev-parse", "--verify", "--quiet", "HEAD"], path) if remote else None
    pushed = commit and git_line(
        ["for-each-ref", "--count=1", "--contains", commit, f"refs/remotes/{REMOTE}/"], path
    )
    top = git_line(["rev-parse", "--show-prefix"], path) if pushed else None
    spec = _git_spec(remote or "", commit or "", (top or "").rstrip("/")) if pushed else None
    if spec:
        return spec, f"the commit of the checkout this accord was installed from, on {REMOTE}"
    return (
        PLACEHOLDER,
        f"this accord was installed from {visible(str(path))}, a path outside the repository "
        f"with no commit on an https remote {REMOTE}",
    )


def _git_spec(url: str, commit: str, subdirectory: str) -> str | None:
    """``accord[...] @ git+https://HOST/PATH@COMMIT``: only an https URL CI can fetch, and
    only a full commit; any user name or password in the URL is left out (accord never writes
    a secret)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
        return None
    if len(commit) not in (40, 64) or any(c not in "0123456789abcdef" for c in commit):
        return None
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    bare = urlunsplit(("https", host, parts.path, "", ""))
    if "@" in parts.path or any(c.isspace() or c in "\"'`$\\" for c in bare):
        return None
    tail = f"#subdirectory={subdirectory}" if subdirectory else ""
    if tail and not all(c.isalnum() or c in "_-./" for c in subdirectory):
        return None
    return f"accord{EXTRAS} @ git+{bare}@{commit}{tail}"


def _subdirectory(direct: dict[str, object]) -> str:
    sub = direct.get("subdirectory")
    return sub if isinstance(sub, str) else ""


def _relative(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` when it lies inside it (a folder of plain names)."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return None
    text = rel.as_posix()
    if text == "." or not all(p and (p[0].isalnum() or p[0] == "_") for p in rel.parts):
        return None
    if not all(c.isalnum() or c in "_-./" for c in text):
        return None
    return text


def _not_applied() -> None:
    """Name the options given beside ``--install`` on an existing scaffold: init never
    overwrites what they would change."""
    context = click.get_current_context()
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("snowflake_schema", "databricks_schema", "snowflake_style",
                     "databricks_style", "policies", "branch", "no_editor")
        if context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    ]  # fmt: skip
    if given:
        click.echo(
            f"note: {', '.join(given)} not applied: on a repository that has the workflow, "
            "accord init --install rewrites its install line only (it never overwrites a file)",
            err=True,
        )


def _rewrite_install(root: Path, install: str) -> int:
    """``--install`` on a repository that has the workflow: its install line rewritten, in
    place, and nothing else read or written. A workflow without that line as init writes it
    is left alone, the message saying what to edit."""
    problems = install_problems(install)
    if problems:
        raise UsageError("accord init: " + "; ".join(problems))
    path = root / WORKFLOW
    _refuse_links_out(root, [WORKFLOW])
    if path.is_symlink() or not path.is_file():
        raise InputError(
            Diagnostic(
                Location(str(path), 1, 1),
                "not a regular file: accord init --install rewrites the install line of the "
                "workflow it wrote, and writes through no link",
            )
        )
    text = decode(read_bytes(path, "the workflow", MAX_FILE_BYTES), str(path), "the workflow")
    lines = text.splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if INSTALL_LINE.fullmatch(line.rstrip("\r\n"))]
    if len(at) != 1:
        found = "no line" if not at else f"{len(at)} lines"
        raise InputError(
            Diagnostic(
                Location(str(path), at[1] + 1 if at else 1, 1),
                f'{found} `{INSTALL_KEY}: "..."` as accord init writes it: edit what the '
                f"workflow runs `pip install` on yourself, to {visible(install)}; accord init "
                "never overwrites anything else",
            )
        )
    i = at[0]
    ending = lines[i][len(lines[i].rstrip("\r\n")) :]
    new = install_line(install) + ending
    if lines[i] == new:
        click.echo(f"{path}:{i + 1}: {INSTALL_KEY} is already {visible(install)}: nothing written")
        return 0
    lines[i] = new
    _replace(path, "".join(lines))
    click.echo(
        f"rewrote {path}:{i + 1}: {INSTALL_KEY}: {visible(install)} (the install line only; "
        "nothing else was written)"
    )
    return 0


def _replace(path: Path, text: str) -> None:
    """``path`` holding ``text``, replaced at once (a file beside it, renamed over it), with
    its mode kept."""
    import tempfile

    mode = path.stat().st_mode & 0o7777
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise UsageError(f"accord init: {path}: {err.strerror}; nothing was written") from None


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
    if in_ci() or not _terminal():
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
