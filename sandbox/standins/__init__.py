"""Local stand-ins for the two platforms, driven by the real clients over their real protocols.

``engine.Estate`` holds what a platform holds (tables and their rows, policies and functions,
attachments, tags, ABAC policies, grants) and changes it the way the platform does when accord's
SQL runs on it; ``snowflake.serve`` answers snowflake-connector-python's REST protocol (login,
query, session close) and ``databricks.serve`` the Unity Catalog and statement execution REST
endpoints the Databricks SDK calls. No network: both listen on 127.0.0.1 (``http``: the one
server helper). ``reader`` reads the statements they accept, independently of accord's scanner.
"""
