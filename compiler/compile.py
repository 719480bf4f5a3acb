"""``accord compile``: lower the model per platform, render, and write the tree atomically.

Output layout: ``OUT/snowflake/*.sql``, ``OUT/databricks/*.sql``, ``OUT/terraform/main.tf.json``
and ``OUT/manifest.json`` (every file with its SHA-256). File names sort in apply order. The
same input gives byte-identical output: no timestamps, no absolute paths, sorted everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from compiler.errors import UsageError
from compiler.validate import Project
from targets import SQL_TARGETS, get_target
from targets.objects import Catalog

MANIFEST = "manifest.json"
TARGET_CHOICES = ("snowflake", "databricks", "terraform", "all")
#: Terraform's own files in ``OUT/terraform`` (``accord terraform`` runs there): carried into
#: a recompiled tree so that recompiling never loses state. A saved plan is not carried: it
#: belongs to the configuration it was made from.
TERRAFORM_KEPT = (
    "terraform.tfstate",
    "terraform.tfstate.backup",
    ".terraform.lock.hcl",
    ".terraform",
)


def lower_all(project: Project) -> dict[str, Catalog]:
    """The catalog objects of every declared platform: the one lowering everything reads."""
    return {p: get_target(p).lower(project.model) for p in project.model.declared_platforms()}


def selected_platforms(project: Project, target: str) -> list[str]:
    declared = project.model.declared_platforms()
    if target == "all":
        return [p for p in SQL_TARGETS if p in declared]
    if target in SQL_TARGETS:
        if target not in declared:
            raise UsageError(f"--target {target}: the model declares no {target} platform")
        return [target]
    return []


def render_files(project: Project, target: str = "all") -> dict[str, str]:
    """Relative path -> file content, for the chosen target(s)."""
    if target not in TARGET_CHOICES:
        raise UsageError(f"unknown target {target!r}")
    catalogs = lower_all(project)
    files: dict[str, str] = {}
    for platform in selected_platforms(project, target):
        for name, text in get_target(platform).render(catalogs[platform]).items():
            files[f"{platform}/{name}"] = text
    if target in ("terraform", "all"):
        from targets import terraform

        tf_files = terraform.render_files(project, catalogs)
        files.update(tf_files)
        # the output accord_apply_as_sql names the Databricks SQL files Terraform cannot
        # apply: write them with --target terraform too, so it names only files that exist
        needed = terraform.apply_as_sql(tf_files)
        if needed and target == "terraform":
            sql = get_target("databricks").render(catalogs["databricks"])
            files.update({f: sql[f.split("/", 1)[1]] for f in needed})
        assert all(f in files for f in needed), "accord_apply_as_sql names an unwritten file"
    return dict(sorted(files.items()))


def manifest(files: dict[str, str]) -> str:
    entries = [
        {"path": path, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
        for path, text in sorted(files.items())
    ]
    return json.dumps({"version": 1, "files": entries}, indent=2, sort_keys=True) + "\n"


def _refuse_symlinks(target: Path) -> None:
    """accord never follows a symbolic link in a directory it manages: recompiling would
    otherwise copy Terraform state from, or write through it to, wherever it points. Inside
    Terraform's own ``.terraform/`` (where a plugin cache puts links) links are carried over as
    links, never followed, so only ``.terraform`` itself is checked there."""
    for root, dirs, names in os.walk(target, followlinks=False):
        here = Path(root)
        for name in dirs + names:
            path = here / name
            if path.is_symlink():
                raise UsageError(
                    f"{path}: is a symbolic link inside an output directory accord manages; "
                    "accord never writes or copies through one (replace it with the real file "
                    "or directory)"
                )
        if here.name == "terraform":
            dirs[:] = [d for d in dirs if d != ".terraform"]


def write_tree(out: str | os.PathLike[str], files: dict[str, str]) -> list[str]:
    """Write ``files`` plus the manifest under ``out`` atomically: everything is written to a
    temporary sibling directory and moved into place, so a failed run leaves no half tree.
    An existing ``out`` is replaced only if accord wrote it (it holds a manifest) or it is
    empty; Terraform's state and working files in it are kept (``TERRAFORM_KEPT``)."""
    target = Path(out)
    if target.is_symlink():
        raise UsageError(f"{out}: is a symbolic link; give the real directory as --out")
    if target.exists():
        _refuse_symlinks(target)
        if not target.is_dir():
            raise UsageError(f"{out}: exists and is not a directory")
        if any(target.iterdir()) and not (target / MANIFEST).is_file():
            raise UsageError(
                f"{out}: exists, is not empty and was not written by accord (no {MANIFEST}); "
                "refusing to replace it"
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    all_files = {**files, MANIFEST: manifest(files)}
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for rel, text in all_files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for name in TERRAFORM_KEPT:
            kept = target / "terraform" / name
            if kept.exists():
                (staging / "terraform").mkdir(exist_ok=True)
                if kept.is_dir():
                    shutil.copytree(kept, staging / "terraform" / name, symlinks=True)
                else:
                    shutil.copy2(kept, staging / "terraform" / name, follow_symlinks=False)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            old.rmdir()
            target.rename(old)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(all_files)
