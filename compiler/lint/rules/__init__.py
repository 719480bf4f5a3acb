"""The lint rules, one module per family; a rule's policy check and SQL check side by side.

:func:`load` imports the rule modules of :data:`NAMES` (all of them by default), and importing
a module registers its checks (``@rule`` / ``@sql_rule`` / ``@post_rule``) and pages
(``@rule_page``, :mod:`compiler.lint.checks`). The modules are the families of the rule table
(:mod:`compiler.model.rules`: each row names its family, as ruff's ``codes.rs`` names a rule's
module), so a new family is a row naming it and its module here (tests/test_lint_docs.py fails
for a module of this package that no row names). The engine loads the rules only when a lint
runs (:func:`compiler.lint.engine.load_rules`); an incremental lint
(:mod:`compiler.lint.incremental.deps`) loads only the families of the rules it re-runs.
``FAMILIES`` (the modules) loads them all.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from types import ModuleType

from accord.compiler.model.rules import FAMILIES as NAMES


def load(names: Iterable[str] = NAMES) -> None:
    """Import the rule modules ``names`` (each registers its checks once)."""
    for name in names:
        importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str) -> tuple[ModuleType, ...]:
    if name == "FAMILIES":
        load()
        return tuple(sys.modules[f"{__name__}.{n}"] for n in NAMES)
    raise AttributeError(name)
