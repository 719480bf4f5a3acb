"""The lint rules, one module per family; a rule's policy check and SQL check side by side.

Importing this package imports every rule module of :data:`FAMILIES`, and importing a module
registers its checks (``@rule`` / ``@sql_rule`` / ``@post_rule``, :mod:`compiler.lint.checks`).
The list is explicit, as ruff's ``codes.rs`` and SQLFluff's ``get_rules``: a new family is
added here (tests/test_lint_docs.py fails for a module of this package that is not listed).
The engine imports this package only when a lint runs (:func:`compiler.lint.engine.load_rules`).
"""

from __future__ import annotations

from accord.compiler.lint.rules import (
    abac,
    coverage,
    drift,
    hashing,
    identity,
    migrations,
    parameters,
    principals,
    probes,
    suppressions,
    surfaces,
)

#: every rule module, by the rule ids it holds
FAMILIES = (
    coverage,  # ACC001
    suppressions,  # ACC002
    identity,  # ACC101-ACC103
    parameters,  # ACC104
    hashing,  # ACC201-ACC205
    surfaces,  # ACC301, ACC401-ACC403
    probes,  # ACC404
    principals,  # ACC502-ACC503
    abac,  # ACC504-ACC506
    migrations,  # ACC601
    drift,  # ACC701-ACC708 (documentation entries: `accord drift` raises them)
)
