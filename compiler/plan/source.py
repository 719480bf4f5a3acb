"""Where the two versions of a plan come from: the head directory, and a base that is a
directory or a git revision (``--base origin/main``: the same policy directory as it was at
that revision, read with ``git ls-tree`` / ``git cat-file``, never checked out)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from compiler.core.errors import UsageError
from compiler.model.loader import load_documents
from compiler.model.schema import PolicyModel
from compiler.model.validate import Project, load_project, validate_raw
from compiler.plan.order import Domains, Plan, build_plan
from targets import lower_all


def load_base(base: str, head_dir: str) -> Project:
    """The base project: ``base`` as a policy directory if it is one, else as a git revision of
    ``head_dir``."""
    if Path(base).is_dir():
        return load_project(base)
    return load_revision(base, head_dir)


def _git(args: list[str], cwd: Path, failure: str) -> bytes:
    """Run git; on failure raise ``failure`` with git's own first line of complaint."""
    git = shutil.which("git")
    if git is None:
        raise UsageError(f"{failure} (git is not installed)")
    result = subprocess.run([git, *args], cwd=cwd, capture_output=True, check=False)
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"{failure}" + (f" (git: {said[0]})" if said else ""))
    return result.stdout


def load_revision(ref: str, head_dir: str) -> Project:
    """The policy directory ``head_dir`` as it was at git revision ``ref``."""
    where = Path(head_dir)
    if not where.is_dir():
        raise UsageError(f"{head_dir}: no such policy directory")
    not_here = f"--base {ref}: not a directory, and {head_dir} is not inside a git repository"
    top = Path(_git(["rev-parse", "--show-toplevel"], where, not_here).decode().strip())
    prefix = PurePosixPath(where.resolve().relative_to(top.resolve()).as_posix())
    unknown = f"--base {ref}: neither a policy directory nor a git revision of {top}"
    sha = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top, unknown)
    listing = _git(
        ["ls-tree", "-r", "-z", sha.decode().strip(), "--", str(prefix)],
        top,
        f"--base {ref}: cannot list {prefix}",
    ).decode()
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        kind, blob = meta.split()[1:3]
        rel = PurePosixPath(path).relative_to(prefix)
        hidden = any(part.startswith(".") for part in rel.parts)
        if kind == "blob" and rel.suffix in (".yaml", ".yml") and not hidden:
            blobs.append((path, blob))
    if not blobs:
        raise UsageError(f"--base {ref}: {prefix} holds no *.yaml or *.yml files at that revision")
    documents = [
        (
            _git(["cat-file", "blob", blob], top, f"--base {ref}: cannot read {path}"),
            f"{ref}:{path}",
        )
        for path, blob in sorted(blobs)
    ]
    return validate_raw(load_documents(documents, where))


def domains_of(project: Project) -> Domains:
    """(platform, TABLE, COLUMN) -> identifier domain, from the datasets' columns."""
    return {
        (ds.platform, ds.table.upper(), column.upper()): spec.identifier
        for ds in project.model.datasets.values()
        for column, spec in ds.columns.items()
        if spec.identifier
    }


def plan_projects(base: Project, head: Project) -> Plan:
    """The staged migration from ``base`` to ``head``."""
    domains = {**domains_of(base), **domains_of(head)}
    plan = build_plan(lower_all(base), lower_all(head), domains)
    plan.base_fingerprint = base.fingerprint
    plan.head_fingerprint = head.fingerprint
    plan.outside = outside_catalogs(base.model, head.model)
    return plan


def outside_catalogs(base: PolicyModel, head: PolicyModel) -> list[str]:
    """Changes of indexes and surfaces: they lower to no catalog object, so the plan cannot
    carry them; it lists them for whoever rebuilds the index or redeploys the surface."""
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
                new = after[name].model_dump(exclude={"ignore"})
                notes += [
                    f"{section}.{name}.{key}: {old[key]!r} -> {new[key]!r}"
                    for key in sorted(old)
                    if old[key] != new[key]
                ]
    return notes
