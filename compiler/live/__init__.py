"""Live platforms: connections, one executor per platform, introspection, drift.

Nothing here is imported by ``accord lint``: the platform clients (snowflake-connector-python,
databricks-sdk) are imported inside the functions that connect, so a command that never
connects never pays for them.
"""
