"""accord: governance-as-code compiler.

The one import name the installed distribution owns. The code lives in the repository's
top-level ``compiler/`` and ``targets/`` folders, installed as :mod:`accord.compiler` and
:mod:`accord.targets` (pyproject.toml maps them), so installing accord never shadows another
distribution's ``compiler`` or ``targets`` module. Every import in the tree spells the full
name (``from accord.compiler.lint import engine``); tests/test_layering.py checks it.
"""
