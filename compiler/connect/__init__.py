"""Every connection accord makes to a live platform, below everything that uses one.

:mod:`~compiler.connect.config` holds the connection options and timeouts,
:mod:`~compiler.connect.executor` the one executor per platform (persona sessions included),
the only place statements run; :mod:`~compiler.connect.denials` reads the one table of the
platforms' privilege denials (``compiler/data/denial_codes.json``). The platform clients
(snowflake-connector-python, databricks-sdk) are imported inside the functions that connect.
"""
