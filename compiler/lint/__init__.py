"""The governance linter: rules over the model, the lowered catalog objects and policy SQL.

* :mod:`compiler.lint.finding`: what a rule reports (:class:`~compiler.lint.finding.Finding`,
  :class:`~compiler.lint.finding.SqlHit`) and its one JSON record;
* :mod:`compiler.lint.checks`: what a check reads (``Context``, ``SqlContext``) and the
  ``@rule`` / ``@sql_rule`` / ``@post_rule`` decorators that register it;
* :mod:`compiler.lint.rules`: the rules, one module per family, listed explicitly;
* :mod:`compiler.lint.engine`: running the checks, suppressions, :func:`~compiler.lint.engine.finalize`;
* :mod:`compiler.lint.run`: the session of ``accord lint`` (paths, the repository walk, the cache);
* :mod:`compiler.lint.report`: text, JSON, SARIF and GitHub output; :mod:`compiler.lint.docs`:
  ``docs/rules.md``.

Nothing is imported here, so that importing :mod:`compiler.lint.finding` (``accord drift``,
the lint cache) does not load the engine.
"""
