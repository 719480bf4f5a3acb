"""The files ``accord compile`` writes, as text: every platform's SQL and the Terraform
configuration, rendered from the one lowering (:func:`targets.lower_all`).

File names sort in apply order. The same input gives byte-identical output: no timestamps, no
absolute paths, sorted everything. Writing them is :mod:`compiler.core.outdir`'s business.
"""

from __future__ import annotations

from accord.compiler.core.errors import UsageError
from accord.compiler.model.validate import Project
from accord.targets import SQL_TARGETS, get_target, lower_all
from accord.targets.terraform import render as terraform

TARGET_CHOICES = ("snowflake", "databricks", "terraform", "all")


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
        tf_files = terraform.render_files(catalogs)
        files.update(tf_files)
        # the output accord_apply_as_sql names the Databricks SQL files Terraform cannot
        # apply: write them with --target terraform too, so it names only files that exist
        needed = terraform.apply_as_sql(tf_files)
        if needed and target == "terraform":
            sql = get_target("databricks").render(catalogs["databricks"])
            files.update({f: sql[f.split("/", 1)[1]] for f in needed})
        assert all(f in files for f in needed), "accord_apply_as_sql names an unwritten file"
    return dict(sorted(files.items()))
