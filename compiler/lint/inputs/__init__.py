"""How lint reads the files that are not policy YAML: SQL files, Snowflake scripts, Databricks
notebook sources and dbt templates (``sqlfiles``), which files are Databricks notebook exports
(``notebooks``, light: no scanner), and the SQL a Python notebook passes to ``spark.sql``
(``pycells``); all of it is read by :mod:`compiler.sqlscan`.
"""
