"""Platform targets: each lowers the policy model into catalog objects and renders them.

One folder per platform (``snowflake/``, ``databricks/``), bound by its
:class:`~targets.platform.Platform`; the catalog objects (:mod:`targets.objects`) and their
kinds (:mod:`targets.kinds`) are shared by all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.compiler.core.platforms import PLATFORMS
from accord.targets.platform import platform

if TYPE_CHECKING:
    from accord.compiler.model.validate import Project
    from accord.targets.base import Target
    from accord.targets.objects import Catalog

SQL_TARGETS = PLATFORMS


def get_target(name: str) -> Target:
    """The target of platform ``name``; KeyError for a name that is no platform."""
    return platform(name).target()


def lower_all(project: Project) -> dict[str, Catalog]:
    """The catalog objects of every declared platform: the one lowering everything reads.

    Lowered once per project and kept on it (:attr:`Project.lowered`): ``accord compile``
    lints first, and the linter's catalogs are the ones rendered (catalog objects are
    frozen)."""
    if not project.lowered:
        model = project.model
        project.lowered.update({p: get_target(p).lower(model) for p in model.declared_platforms()})
    return dict(project.lowered)
