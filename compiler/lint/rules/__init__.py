"""The lint rules, one module per family; a rule's policy check and SQL check side by side.

:func:`load` imports the rule modules of :data:`NAMES` (all of them by default), and importing
a module registers its checks (``@rule`` / ``@sql_rule`` / ``@post_rule``,
:mod:`compiler.lint.checks`). The list is explicit, as ruff's ``codes.rs`` and SQLFluff's
``get_rules``: a new family is added here (tests/test_lint_docs.py fails for a module of this
package that is not listed). The engine loads the rules only when a lint runs
(:func:`compiler.lint.engine.load_rules`); an incremental lint (:mod:`compiler.lint.deps`)
loads only the families of the rules it re-runs. ``FAMILIES`` (the modules) loads them all.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from types import ModuleType

#: every rule module, by the rule ids it holds
NAMES = (
    "coverage",  # ACC001
    "suppressions",  # ACC002
    "identity",  # ACC101-ACC103
    "parameters",  # ACC104
    "hashing",  # ACC201-ACC205
    "surfaces",  # ACC301, ACC401-ACC403
    "probes",  # ACC404
    "principals",  # ACC502-ACC503, ACC507
    "abac",  # ACC504-ACC506
    "migrations",  # ACC601
    "drift",  # ACC701-ACC708 (documentation entries: `accord drift` raises them)
)


def load(names: Iterable[str] = NAMES) -> None:
    """Import the rule modules ``names`` (each registers its checks once)."""
    for name in names:
        importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str) -> tuple[ModuleType, ...]:
    if name == "FAMILIES":
        load()
        return tuple(sys.modules[f"{__name__}.{n}"] for n in NAMES)
    raise AttributeError(name)
