"""Lint SQL files the way `accord lint FILE ...` reads them, for the rule tests: one helper."""

from __future__ import annotations

import os
from pathlib import Path

from accord.compiler.lint.engine import lint_sql_batch
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.inputs.sqlfiles import read_sql_files


def lint_sql_files(root: Path, names: list[str]) -> list[Finding]:
    """The findings of ``names`` (paths relative to ``root``, linted together as from
    ``root``); every file must read without an input problem."""
    cwd = os.getcwd()
    os.chdir(root)
    try:
        results, problems = read_sql_files(names, None)
        findings, bad = lint_sql_batch(results)
        assert problems == bad == []
        return findings
    finally:
        os.chdir(cwd)
