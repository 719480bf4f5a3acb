"""Incremental lint: answer ``accord lint`` from the cache, and after an edit re-run only what
the edit can affect. An optimisation only: every answer is the one a lint without the cache
gives (``tests/test_lint_incremental.py``, ``tests/test_lint_pieces.py``).

* :mod:`compiler.lint.incremental.cache`: whole lint results, keyed by what lint reads of each
  file (``lint/`` entries);
* :mod:`compiler.lint.incremental.deps`: the inputs every rule reads (declared on its row of
  the rule table, :mod:`compiler.model.rules`), their digests, and the dependency index that
  keeps each rule's findings with them (``lintdeps/``);
* :mod:`compiler.lint.incremental.pieces`: the same digests merged from what each file
  contributes (``lintpieces/``);
* :mod:`compiler.lint.incremental.verdict`: validation skipped when only plain columns changed
  (``lintvalid/``).

:mod:`compiler.lint.run` drives them. Nothing is imported here.
"""
