"""Local stand-ins of Snowflake and Databricks (``accord sandbox``, and the live tests)."""
