"""A platform's parts, bound in one class and looked up by name.

In the manner of sqlglot's dialects (a ``Dialect`` binds its tokenizer, parser and generator,
and ``Dialect.get_or_raise`` loads one by name), each platform is a folder of this package
(``targets/snowflake/``, ``targets/databricks/``) whose ``__init__.py`` binds its parts in one
:class:`Platform` subclass:

=================  ==========================================================================
part               what it is
=================  ==========================================================================
``target()``       the :class:`~targets.base.Target`: lowering hooks and the SQL of every kind
``migrations()``   its :class:`~targets.migration.MigrationSQL`: change, swap, drop, detach,
                   revoke, and the stage checks' queries
``reader()``       its :class:`~targets.inspect.Reader`: what is deployed, read back into
                   catalog objects, with the role hierarchy; ``survey()`` the same reader
                   asked what a scope holds without a model (``accord import``)
``terraform()``    its Terraform resources (:mod:`targets.terraform.render`)
``run_checks()``   the stage checks written as data (:mod:`targets.checks`), run on it
=================  ==========================================================================

The facts (folding, string type, identity kind, membership function, everyone identities)
are :class:`~compiler.core.platforms.PlatformFacts`, one floor down, where the layers below
``targets`` read them too. Parts are imported when first asked for, so a command that never
reads a live platform never imports its reader.

Adding a platform is adding a folder with the same files and a ``PLATFORM`` in its
``__init__.py``; tests/test_platform_conformance.py holds every platform to the same checks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from accord.compiler.core.platforms import FACTS, PLATFORMS, PlatformFacts

if TYPE_CHECKING:  # (the reader and the stage checks import this module: typed Any here)
    from accord.targets.base import Target
    from accord.targets.migration import MigrationSQL


class Platform:
    """One platform: its facts and its parts. Subclasses live in the platform's folder."""

    facts: PlatformFacts

    @property
    def name(self) -> str:
        return self.facts.name

    def target(self) -> Target:
        raise NotImplementedError(f"{self.name}: the target")

    def migrations(self, types: dict[str, str] | None = None, live: bool = False) -> MigrationSQL:
        """The platform's migration statements (``types``: masking policy name, upper-cased ->
        the data type it masks; ``live``: the plan's base was read from the platform)."""
        return self.target().migrations(types, live)

    def reader(self) -> type[Any]:
        """The platform's :class:`~targets.inspect.Reader`."""
        raise NotImplementedError(f"{self.name}: the live reader")

    def survey(self) -> type[Any]:
        """The platform's reader that also says what a scope holds without a model
        (``<platform>/survey.py``: ``accord import``)."""
        raise NotImplementedError(f"{self.name}: the survey")

    def terraform(self) -> type[Any]:
        """The class that adds the platform's catalog objects to a Terraform document."""
        raise NotImplementedError(f"{self.name}: the Terraform resources")

    def run_checks(self, executor: Any, checks: list[Any]) -> list[list[tuple[Any, ...]]]:
        """One row ``(ok,)`` per stage check written as data (:class:`targets.checks.MetadataCheck`)."""
        raise NotImplementedError(f"{self.name}: the stage checks")

    def __repr__(self) -> str:
        return f"<platform {self.name}>"


_LOADED: dict[str, Platform] = {}


def platform(name: str) -> Platform:
    """The platform ``name`` (one the policy format allows), loaded from its folder on first
    use; KeyError for any other name."""
    found = _LOADED.get(name)
    if found is None:
        if name not in FACTS:
            raise KeyError(name)
        found = importlib.import_module(f"{__package__}.{name}").PLATFORM
        _LOADED[name] = found
    return found


def platforms() -> list[Platform]:
    """Every platform, in accord's order."""
    return [platform(p) for p in PLATFORMS]
