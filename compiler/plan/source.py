"""Where the two versions of a plan come from: the head directory, and a base that is a
directory or a git revision (``--base origin/main``: the same policy directory as it was at
that revision, read with ``git ls-tree`` / ``git cat-file``, never checked out)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from accord.compiler.core.errors import UsageError
from accord.compiler.model.loader import load_documents
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.validate import Project, load_project, validate_raw
from accord.compiler.plan.model import Domains, Plan
from accord.compiler.plan.order import build_plan
from accord.targets import lower_all


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
