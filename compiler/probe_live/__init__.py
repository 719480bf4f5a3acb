"""``accord probe --live``: the probes asked of the live mesh (depth 3).

:mod:`~compiler.probe_live.result` holds a run's outcomes and renders them (text, JSON, JUnit,
the result file a promotion gate requires); :mod:`~compiler.probe_live.a2a` asks agent surfaces
over A2A and classifies the returned task; :mod:`~compiler.probe_live.denials` reads the
per-platform denial-code table; :mod:`~compiler.probe_live.catalog` runs a probe's query on
Snowflake and Databricks as the persona; :mod:`~compiler.probe_live.run` puts them together.
Platform clients are imported only when a live run needs them.
"""
