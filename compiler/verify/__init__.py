"""``accord verify``: execute the compiled policies on embedded DuckDB, per persona, and
compare what they show with what the model says (:mod:`compiler.meaning.semantics`).

The modules: :mod:`~compiler.verify.sources` reads the SQL that ships,
:mod:`~compiler.verify.bind` binds policy bodies to DuckDB, :mod:`~compiler.verify.data`
generates rows, :mod:`~compiler.verify.parts` builds what is evaluated per dataset,
:mod:`~compiler.verify.execute` executes it (it alone imports duckdb),
:mod:`~compiler.verify.results` holds the answers, :mod:`~compiler.verify.compare` compares
them with the model, :mod:`~compiler.verify.engine` runs all of it, and
:mod:`~compiler.verify.report` renders the result; :mod:`~compiler.verify.run` verifies a project
at every date that matters (``accord verify``). This package face imports nothing.
"""
