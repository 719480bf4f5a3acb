"""``accord import``: a policy directory written from what is deployed and from hand-written SQL.

One pipeline with two front ends. Each front end reads one platform into :class:`~compiler.
importer.found.Found`: the catalog objects the compiler lowers to (:mod:`targets.objects`),
each with its SQL and where it was read.

* :mod:`~compiler.importer.live` reads a live platform through accord's own readers
  (:mod:`targets.inspect`), least-privilege, coverage reported: a survey of the scope first
  (``targets/<platform>/survey.py``: what is there, without a model), then the ordinary read
  of what the survey found, as ``accord drift`` and ``accord plan --base live:P`` read it;
* :mod:`~compiler.importer.sqlfiles` reads SQL files as ``accord lint`` reads them (plain SQL,
  dbt/Jinja templates, notebooks), and replays the statements into the same objects.

Then one *raise* step (:mod:`~compiler.importer.lift`, with the body shapes of
:mod:`~compiler.importer.shapes`, the placements of :mod:`~compiler.importer.places`, Snowflake's
projection, aggregation and join policies of :mod:`~compiler.importer.constraints` and the
principals of :mod:`~compiler.importer.principals`)
recognises what the model expresses and keeps the rest, verbatim, as ``unmanaged`` entries
with the reason. What was read live must come back exactly: :mod:`~compiler.importer.exact`
lowers the imported model and compares it with what was read, and whatever it does not
reproduce is kept unmanaged too, so ``accord plan DIR --base live:P`` right after an import
plans no change. :mod:`~compiler.importer.write` writes the directory and ``IMPORT.md``;
:mod:`~compiler.importer.run` holds it together.

Salts are never read: a salt function becomes a reference (``env:NAME``) to fill, and a salt
written as a literal in a policy body is withheld from the SQL kept (its finding stays).
"""
