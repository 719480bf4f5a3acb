"""Which files are Databricks notebook exports: light (no scanner, no sqlglot), so that
classifying a repository's files imports nothing that a warm, cached lint does not need."""

from __future__ import annotations

import os
import stat

#: the first line of a Python notebook exported by Databricks (File > Export > Source file)
PY_NOTEBOOK = "# Databricks notebook source"


def is_python_notebook(path: str) -> bool:
    """A ``.py`` file that is a Databricks notebook export (its ``%sql`` cells are SQL)."""
    if not path.lower().endswith(".py"):
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().lstrip("\ufeff").startswith(PY_NOTEBOOK)
    except OSError:
        return False
