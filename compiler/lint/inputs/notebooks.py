"""Which files are Databricks notebook exports: light (no scanner, no sqlglot), so that
classifying a repository's files imports nothing that a warm, cached lint does not need."""

from __future__ import annotations

import os
import stat

#: the first line of a Python notebook exported by Databricks (File > Export > Source file)
PY_NOTEBOOK = "# Databricks notebook source"


#: how a notebook's first line may be encoded: UTF-8 (the export's encoding), and UTF-16 as
#: an editor may re-save it (then lint reports the file as not UTF-8, never skips it)
_ENCODINGS = ("utf-8", "utf-16", "utf-16-le", "utf-16-be")


def is_python_notebook(path: str) -> bool:
    """A ``.py`` file that is a Databricks notebook export (its ``%sql`` cells are SQL)."""
    if not path.lower().endswith(".py"):
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device
            return False
        with open(path, "rb") as handle:
            head = handle.read(2 * len(PY_NOTEBOOK) + 4)
    except OSError:
        return False
    for encoding in _ENCODINGS:
        text = head.decode(encoding, errors="replace").lstrip("\ufeff")
        if text.startswith(PY_NOTEBOOK):
            return True
    return False
