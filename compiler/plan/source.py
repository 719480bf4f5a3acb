"""Where the two versions of a plan come from: the head directory, and the base ``--base``
names (docs/cli.md), one of

* a git revision (``origin/main``): the same policy directory as it was at that revision, read
  with ``git ls-tree`` / ``git cat-file``, never checked out;
* ``dir:PATH``: a policy directory;
* ``live:P``: what is deployed (``accord plan`` only: compiler/live/plan.py).

A bare value is only ever a git revision. A pull request can commit any directory, so a base
read as a directory whenever one of that name exists would be a base the pull request picks
for its own check (a copy of its widened policies under ``origin/main/``). For the same
reason the revision is read at the path the user named, never where a symbolic link leads: a
policy directory that is a link, or lies under one inside the repository, is refused (a link
to a directory widened earlier would compare that directory with itself). Every command
that reads a base says which one it read (:meth:`Base.describe`, :meth:`Base.to_json`)."""

from __future__ import annotations

import dataclasses
import os
import posixpath
import subprocess
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.git import GitMissing, run_git
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode
from accord.compiler.lint.config import (
    CONFIG_FILES,
    LintConfig,
    config_from_text,
    holds_config,
    load_config,
)
from accord.compiler.model.loader import load_documents, outside_link, within
from accord.compiler.model.renames import dataset_renames
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import Project, load_project, validate_raw
from accord.compiler.plan.model import Domains, Plan
from accord.compiler.plan.order import build_plan
from accord.targets import lower_all

#: the prefixes of a base that is not a git revision
DIR, LIVE = "dir:", "live:"
#: what ``--base`` takes, for messages
FORMS = "a git revision (origin/main), dir:PATH for a policy directory, or live:PLATFORM"
#: seconds one git command may take: a slow disk, never a hang
GIT_TIMEOUT = 60.0
#: symbolic links followed, one to the next, inside a tree read at a revision
MAX_LINKS = 40


@dataclasses.dataclass(frozen=True)
class Base:
    """The base a command compares with, as it was read: ``name`` as given (after the
    ``dir:`` or ``live:`` prefix); for a git revision, the ``commit`` it named and the policy
    directory ``path`` read in it (relative to the repository, ``.`` for its root)."""

    kind: Literal["git", "directory", "live"]
    name: str
    commit: str | None = None
    path: str | None = None

    def describe(self) -> str:
        """One line for people: ``git revision origin/main (commit 1a2b...), policies/``."""
        if self.kind == "git":
            read = f" (commit {self.commit}), {self.path}/" if self.commit else ""
            return f"git revision {self.name}{read}"
        if self.kind == "directory":
            return f"directory {self.name}"
        return f"what is deployed ({LIVE}{self.name})"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "commit": self.commit, "path": self.path}


def parse_base(value: str) -> Base:
    """What ``--base`` names, read from the value alone (nothing on disk is consulted, so a
    directory a pull request commits cannot change it)."""
    if not value.strip():
        raise UsageError(f"--base is empty: give {FORMS}")
    if value.startswith("-"):
        raise UsageError(f"--base {value}: starts with '-', as an option does: give {FORMS}")
    if value.startswith(DIR):
        return Base("directory", _after(value, DIR))
    if value.startswith(LIVE):
        return Base("live", _after(value, LIVE))
    return Base("git", value)


def _after(value: str, prefix: str) -> str:
    rest = value[len(prefix) :]
    if not rest.strip():
        raise UsageError(f"--base {value}: names nothing after {prefix!r}: give {FORMS}")
    return rest


def load_base(base: Base, head_dir: str) -> tuple[Project, Base]:
    """The base project and the base as read (for a git revision, with its commit): ``dir:``
    a policy directory, else the policy directory ``head_dir`` at a git revision."""
    if base.kind == "directory":
        return load_project(base.name), base
    if base.kind == "git":
        return load_revision(base.name, head_dir)
    raise UsageError(f"--base {LIVE}{base.name}: what is deployed is not a policy model")


def shadowed(base: Base) -> str | None:
    """A note when a bare ``--base`` is also the name of a directory here: it was not read."""
    if base.kind != "git" or not _is_dir(base.name):
        return None
    return (
        f"note: {base.name} is also a directory here; a bare --base is a git revision, so the "
        f"directory was not read (--base {DIR}{base.name} reads it)"
    )


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def _run_git(args: list[str], cwd: Path, failure: str) -> subprocess.CompletedProcess[bytes]:
    """Run git in ``cwd`` (:func:`compiler.core.git.run_git`); what stops it raises
    ``failure`` with the reason."""
    try:
        return run_git(args, cwd, GIT_TIMEOUT)
    except GitMissing:
        raise UsageError(f"{failure} (git is not installed)") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{failure} (git did not answer within {GIT_TIMEOUT:g} s)") from None
    except OSError as err:
        raise UsageError(f"{failure} (git could not run: {err.strerror})") from None


def _git(args: list[str], cwd: Path, failure: str) -> bytes:
    """Run git; on failure raise ``failure`` with git's own first line of complaint."""
    result = _run_git(args, cwd, failure)
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"{failure}" + (f" (git: {said[0]})" if said else ""))
    return result.stdout


def load_revision(ref: str, head_dir: str) -> tuple[Project, Base]:
    """The policy directory ``head_dir`` as it was at git revision ``ref``, read at the path
    ``head_dir`` names in its repository, and the base as read."""
    where = Path(head_dir)
    if where.is_symlink():
        _refuse_link(where, head_dir, ref)
    if not where.is_dir():
        raise UsageError(f"{head_dir}: no such policy directory")
    not_here = f"--base {ref}: a git revision, and {head_dir} is not inside a git repository"
    if _is_dir(ref):
        not_here += f"; to compare with the directory {ref}, write --base {DIR}{ref}"
    said = _git(
        ["rev-parse", "--show-toplevel", "--show-superproject-working-tree"], where, not_here
    )
    top, *superproject = said.decode("utf-8", "surrogateescape").splitlines()
    if superproject:
        raise UsageError(
            f"--base {ref}: {head_dir} is inside the git submodule {top}, whose revisions "
            f"(and remote) the superproject {superproject[0]} sets: compare with a revision of "
            f"a repository that holds the policy directory itself, or with --base {DIR}PATH"
        )
    prefix = repository_path(head_dir, Path(top), ref)
    sha = resolve_revision(ref, Path(top))
    documents = revision_documents(ref, sha, prefix, Path(top))
    return validate_raw(load_documents(documents, where)), Base("git", ref, sha, str(prefix))


def _refuse_link(link: Path, head_dir: str, ref: str) -> None:
    shown = str(link) if link.is_absolute() else os.path.relpath(link)
    raise UsageError(
        f"{shown}: a symbolic link: `--base {ref}` reads the policy directory {head_dir} at "
        "the path named, and the link would compare another directory with it: refused (name "
        "the directory itself)"
    )


def repository_path(head_dir: str, top: Path, ref: str) -> PurePosixPath:
    """Where ``head_dir`` is in the repository whose root is ``top``, by the path as named:
    every folder from the root down to it must be a folder, not a symbolic link (one above
    the root, such as a link to the checkout, is the machine's, not the repository's)."""
    given = Path(os.path.abspath(head_dir))
    if os.path.realpath(given) != os.path.realpath(head_dir):  # a link before a '..'
        raise UsageError(
            f"{head_dir}: a path through a symbolic link: `--base {ref}` reads the policy "
            "directory at the path named: refused (name the directory itself)"
        )
    root = os.path.realpath(top)
    for folder in (given, *given.parents):
        if folder.is_symlink() and within(str(folder.parent), root):
            _refuse_link(folder, head_dir, ref)  # a link inside the repository
        if os.path.realpath(folder) == root:
            return PurePosixPath(given.relative_to(folder).as_posix())
        if folder.is_symlink():
            _refuse_link(folder, head_dir, ref)  # a link on the way into another tree
    raise UsageError(f"--base {ref}: {head_dir} is not inside the git repository {top}")


def resolve_revision(ref: str, top: Path) -> str:
    """The commit ``ref`` names in the repository at ``top``: only ever a revision (``--``
    ends git's options, ``^{commit}`` refuses anything that is not a commit), and never a name
    that is ambiguous (a tag named like a remote branch would otherwise win)."""
    unknown = f"--base {ref}: not a git revision of {top}"
    result = _run_git(
        ["rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"], top, unknown
    )
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        fatal = [line for line in said if line.startswith(("fatal:", "error:"))] or said
        if fatal:
            unknown += f" (git: {fatal[-1]})"
        if _is_dir(ref):
            unknown += (
                f"; {ref} is a directory, which a bare --base never reads: to compare with "
                f"it, write --base {DIR}{ref}"
            )
        raise UsageError(unknown)
    warned = result.stderr.decode("utf-8", "replace")
    if "is ambiguous" in warned:
        raise UsageError(
            f"--base {ref}: the name is ambiguous in {top} (two refs are named so, such as a tag "
            f"and a branch): name the revision in full (refs/remotes/{ref}, refs/tags/{ref}, "
            "or a commit id)"
        )
    return result.stdout.decode().strip()


def revision_documents(
    ref: str, sha: str, prefix: PurePosixPath, top: Path
) -> list[tuple[bytes, str]]:
    """The policy files of the directory ``prefix`` at commit ``sha``, as (content, display
    name) pairs: what the loader reads from a directory (``*.yaml``, ``*.yml``, hidden names
    skipped), a symbolic link read as the file it leads to inside the directory, and one that
    leads out of it, or to no file, refused, located, before anything is read."""
    tree = sha
    if str(prefix) != ".":
        listed = _git(
            ["ls-tree", "-z", sha, "--", str(prefix)], top, f"--base {ref}: cannot list {prefix}"
        ).decode("utf-8", "surrogateescape")
        entry = next((e for e in listed.split("\0") if e.partition("\t")[2] == str(prefix)), None)
        if entry is None:
            raise UsageError(f"--base {ref}: {prefix} is not a directory at that revision")
        mode, kind, tree = entry.partition("\t")[0].split()
        if mode == "120000":
            raise UsageError(
                f"--base {ref}: {prefix} is a symbolic link at that revision (commit {sha}): "
                "not read"
            )
        if kind != "tree":
            raise UsageError(f"--base {ref}: {prefix} is not a directory at that revision")
    listing = _git(
        ["ls-tree", "-r", "-z", tree], top, f"--base {ref}: cannot list {prefix}"
    ).decode("utf-8", "surrogateescape")
    entries: dict[str, tuple[str, str]] = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob":
            entries[path] = (mode, blob)

    def read(path: str, blob: str) -> bytes:
        return _git(["cat-file", "blob", blob], top, f"--base {ref}: cannot read {path}")

    chosen: list[tuple[str, str]] = []
    refused: list[Diagnostic] = []
    for path in sorted(entries):
        rel = PurePosixPath(path)
        if rel.suffix not in (".yaml", ".yml") or any(p.startswith(".") for p in rel.parts):
            continue
        shown = f"{ref}:{(prefix / rel).as_posix()}"
        blob = _follow(path, entries, lambda p, b: read(f"{prefix / p}", b))
        if blob == OUTSIDE:
            refused.append(outside_link(shown, "the policy directory"))
        elif blob == NOWHERE:
            refused.append(
                Diagnostic(
                    Location(shown, 1, 1),
                    "a symbolic link to no file of the policy directory at that revision: not read",
                )
            )
        else:
            chosen.append((shown, blob))
    if refused:
        raise InputError(refused)
    if not chosen:
        raise UsageError(f"--base {ref}: {prefix} holds no *.yaml or *.yml files at that revision")
    return [(read(shown, blob), shown) for shown, blob in chosen]


#: what :func:`_follow` answers for a link that leads out of the tree, or to no file in it
OUTSIDE, NOWHERE = "outside", "nowhere"


def _follow(
    path: str, entries: dict[str, tuple[str, str]], read: Callable[[str, str], bytes]
) -> str:
    """The blob of the regular file ``path`` is, or leads to through symbolic links inside the
    tree ``entries`` lists (path -> mode, blob); else :data:`OUTSIDE` or :data:`NOWHERE`."""
    for _ in range(MAX_LINKS):
        mode, blob = entries[path]
        if mode != "120000":
            return blob
        target = read(path, blob).decode("utf-8", "surrogateescape")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or joined == ".." or joined.startswith("../"):
            return OUTSIDE
        if joined not in entries:
            return NOWHERE  # a folder, or nothing
        path = joined
    return NOWHERE  # a loop


def revision_config(base: Base, head_dir: str, start: Path | None = None) -> LintConfig:
    """The lint configuration as it was at the git revision ``base`` (as :func:`load_revision`
    read it): the one ``accord lint`` run in ``start`` (default: the working directory) would
    have used there. :func:`compiler.lint.config.find_config`'s search, from ``start`` upwards,
    with the folders of the repository read at the revision (``git ls-tree`` and ``cat-file``,
    never checked out, each file bounded) and those above it as they are (the machine's, the
    same for both sides). A configuration file that is a symbolic link at the revision is
    refused; one that does not parse is located at ``REF:PATH``."""
    assert base.kind == "git" and base.commit is not None
    ref, sha = base.name, base.commit
    said = _git(["rev-parse", "--show-toplevel"], Path(head_dir), f"--base {ref}: no repository")
    top = Path(os.path.realpath(said.decode("utf-8", "surrogateescape").strip()))
    here = Path(os.path.realpath(start or Path.cwd()))
    chain = [d for d in (here, *here.parents) if d == top or top in d.parents]
    if not chain:  # the working directory is outside the repository: none of it counts
        return load_config(here)
    paths = [
        PurePosixPath((d.relative_to(top) / name).as_posix()).as_posix()
        for d in chain
        for name in CONFIG_FILES
    ]
    listed = _git(
        ["ls-tree", "-l", "-z", sha, "--", *paths], top, f"--base {ref}: cannot list {paths[0]}"
    ).decode("utf-8", "surrogateescape")
    entries = {}
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, blob, size = meta.split()
        entries[path] = (mode, kind, blob, size)
    for path in paths:
        if path not in entries:
            continue
        mode, kind, blob, size = entries[path]
        shown = f"{ref}:{path}"
        if mode == "120000":
            raise UsageError(
                f"--base {ref}: {path} is a symbolic link at that revision (commit {sha}): the "
                "configuration there is not read"
            )
        if kind != "blob":
            continue
        if not size.isdigit() or int(size) > MAX_FILE_BYTES:
            raise InputError(
                Diagnostic(
                    Location(shown, 1, 1),
                    f"configuration file holds {size} bytes; at most {MAX_FILE_BYTES} are read",
                )
            )
        raw = _git(["cat-file", "blob", blob], top, f"--base {ref}: cannot read {path}")
        text = decode(raw, shown, "configuration file")
        name = PurePosixPath(path).name
        if holds_config(name, text):
            folder = top / PurePosixPath(path).parent
            return config_from_text(text, shown, name, str(folder))
    return load_config(top.parent) if top.parent != top else LintConfig()


def domains_of(project: Project) -> Domains:
    """(platform, TABLE, COLUMN) -> identifier domain, from the datasets' columns."""
    return {
        (ds.platform, ds.table.upper(), column.upper()): spec.identifier
        for ds in project.model.datasets.values()
        for column, spec in ds.columns.items()
        if spec.identifier
    }


def plan_projects(base: Project, head: Project) -> Plan:
    """The staged migration from ``base`` to ``head``; a stage that removes a column's mask
    says, before its statements, that it widens exposure and for whom
    (:func:`mask_removals`)."""
    domains = {**domains_of(base), **domains_of(head)}
    plan = build_plan(
        lower_all(base),
        lower_all(head),
        domains,
        base_fingerprint=base.fingerprint,
        head_fingerprint=head.fingerprint,
        outside=outside_catalogs(base.model, head.model),
    )
    return with_widening_notes(plan, mask_removals(base.model, head.model))


def _masked_columns(model: PolicyModel) -> dict[tuple[str, str, str], tuple[str, str, str]]:
    """(platform, TABLE, COLUMN) -> (dataset, column, mask) of every masked column, a replica's
    inherited masks included."""
    out = {}
    for name, ds in model.datasets.items():
        for column, spec in ds.columns.items():
            if spec.mask:
                out[(ds.platform, ds.table.upper(), column.upper())] = (name, column, spec.mask)
        for column, (source, source_column) in ds.inherited.items():
            mask = model.datasets[source].columns[source_column].mask
            key = (ds.platform, ds.table.upper(), column.upper())
            if mask and key not in out:
                out[key] = (name, column, mask)
    return out


def mask_removals(base: PolicyModel, head: PolicyModel) -> dict[tuple[str, str, str], str]:
    """(platform, TABLE, COLUMN) -> a plain statement of the widening, for every column masked
    in ``base`` and not in ``head``: who saw it in the clear before (the mask's
    ``unmasked_for``), and who sees it in the clear after (everyone who can query the table,
    naming the personas of ``base`` that gain it)."""
    after = _masked_columns(head)
    out = {}
    for key, (dataset, column, mask) in sorted(_masked_columns(base).items()):
        if key in after:
            continue
        platform, table, _ = key
        spec = base.masks[mask]
        unmasked = set(spec.unmasked_for)
        before = (
            f"the principals of its unmasked_for ({', '.join(sorted(unmasked))})"
            if unmasked
            else "no one"
        )
        gaining = sorted(p for p, held in base.personas.items() if not unmasked & set(held))
        personas = f"the personas {', '.join(gaining)}" if gaining else "no declared persona"
        out[key] = (
            f"this stage WIDENS EXPOSURE: it removes the {spec.strategy} mask {mask} from "
            f"column {column} of {table} (dataset {dataset}, {platform}). After it, everyone "
            f"who can query that table reads {column} in the clear, where until now only "
            f"{before} did: {personas}, and every other role or group with access to the "
            "table, gain the clear value. Approve it only if that is intended."
        )
    return out


def with_widening_notes(plan: Plan, removals: dict[tuple[str, str, str], str]) -> Plan:
    """``plan`` with each removal's note on the stage that detaches the mask (its change
    ``mask of TABLE.COLUMN: removed``), else on its platform's first stage that changes
    what queries return (a tag-attached mask is detached by its tag)."""
    if not removals:
        return plan
    stages = list(plan.stages)
    for (platform, table, column), note in removals.items():
        wanted = f"mask of {table}.{column}: removed".lower()
        on_platform = [i for i, st in enumerate(stages) if st.platform == platform]
        exact = [i for i in on_platform if any(c.lower() == wanted for c in stages[i].changes)]
        fallback = [i for i in on_platform if stages[i].kind in ("apply", "handover")]
        target = (exact or fallback or on_platform or [None])[0]
        if target is None:
            continue
        stage = stages[target]
        stages[target] = dataclasses.replace(stage, notes=(*stage.notes, note))
    return dataclasses.replace(plan, stages=tuple(stages))


def outside_catalogs(base: PolicyModel, head: PolicyModel) -> list[str]:
    """Changes of indexes and surfaces: they lower to no catalog object, so the plan cannot
    carry them; it lists them for whoever rebuilds the index or redeploys the surface. A
    dataset renamed with its table (:func:`compiler.model.renames.dataset_renames`) is read
    by its new name: no change."""
    moved = dataset_renames(base, head)

    def renamed(value: Any) -> Any:
        if isinstance(value, str):
            return moved.get(value, value)
        if isinstance(value, list):
            return [renamed(v) for v in value]
        return value

    notes = []
    for section in ("indexes", "surfaces"):
        before: dict[str, Any] = getattr(base, section)
        after: dict[str, Any] = getattr(head, section)
        for name in sorted(before.keys() | after.keys()):
            if name not in after:
                notes.append(f"{section}.{name}: removed")
            elif name not in before:
                notes.append(f"{section}.{name}: added")
            else:
                old = before[name].model_dump(exclude={"ignore"})
                old = {k: renamed(v) if k in ("source", "reads") else v for k, v in old.items()}
                new = after[name].model_dump(exclude={"ignore"})
                notes += [
                    f"{section}.{name}.{key}: {old[key]!r} -> {new[key]!r}"
                    for key in sorted(old)
                    if old[key] != new[key]
                ]
    return notes
