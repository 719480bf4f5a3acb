"""Live platforms: the session that connects, reads and closes, introspection, drift, plans
from a live base (the connections themselves are :mod:`compiler.connect`'s).

Nothing here is imported by ``accord lint``: the platform clients (snowflake-connector-python,
databricks-sdk) are imported inside the functions that connect, so a command that never
connects never pays for them.
"""
