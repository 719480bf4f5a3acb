"""``accord probe --live``: the probes asked of the live mesh (depth 3).

:mod:`~compiler.probe_live.result` holds a run's outcomes and renders them (text, JSON, JUnit,
the result file a promotion gate requires); :mod:`~compiler.probe_live.a2a` asks agent surfaces
over A2A and classifies the returned task; a denial code in an answer is found with
:func:`compiler.connect.denials.find_denial`; :mod:`~compiler.probe_live.catalog` runs a probe's
query on Snowflake and Databricks as the persona, in the executor's persona sessions; :mod:`~compiler.probe_live.run` puts them together.
Platform clients are imported only when a live run needs them.
"""
