"""The golden-file cases: each compiles one policy directory (optionally with the platform
styles overridden) and its output is kept under tests/golden/<case>/ for review.

Regenerate after an intended change of output with ``make golden``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from accord.compiler.model.validate import Project, load_project
from accord.targets.render import render_files

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"


def with_styles(
    project: Project, snowflake: str | None = None, databricks: str | None = None
) -> Project:
    """The same project with the platforms' ``style`` overridden."""
    platforms = project.model.platforms
    updates = {}
    if snowflake is not None and platforms.snowflake is not None:
        updates["snowflake"] = platforms.snowflake.model_copy(update={"style": snowflake})
    if databricks is not None and platforms.databricks is not None:
        updates["databricks"] = platforms.databricks.model_copy(update={"style": databricks})
    model = project.model.model_copy(update={"platforms": platforms.model_copy(update=updates)})
    return Project(model=model, source=project.source, files=project.files, origin=project.origin)


def reference() -> Project:
    return load_project(ROOT / "policies")


def abac() -> Project:
    """The reference estate with Unity Catalog ABAC on Databricks."""
    return with_styles(reference(), databricks="abac")


def snowflake_tag() -> Project:
    """The reference estate with tag-based masking on Snowflake."""
    return with_styles(reference(), snowflake="tag")


#: case name -> (function giving the project, the targets kept as golden files). A style case
#: keeps only the platform the style changes (and Terraform): the other platform's files are
#: the reference case's.
CASES: dict[str, tuple[Callable[[], Project], tuple[str, ...]]] = {
    "reference": (reference, ("all",)),
    "abac": (abac, ("databricks", "terraform")),
    "snowflake_tag": (snowflake_tag, ("snowflake", "terraform")),
}


def render_case(name: str) -> dict[str, str]:
    make, targets = CASES[name]
    project = make()
    files: dict[str, str] = {}
    for target in targets:
        rendered = render_files(project, target)
        if target == "terraform":  # it writes the Databricks SQL it names too: kept per case
            rendered = {k: v for k, v in rendered.items() if k.startswith("terraform/")}
        files.update(rendered)
    return dict(sorted(files.items()))
