"""Staged migrations between two versions of the policy model (``accord plan``, ``accord migrate``).

``source`` reads the base (a directory or a git revision) and lowers both versions; ``diff``
compares the lowered catalogs; ``units`` turns the differences into units of change,
``stages`` groups them into stages per platform and ``order`` builds the plan (``model``: the
immutable Plan, Stage, Group and Unit), each stage proven safe by ``prove`` on the simulator in
``state`` (``index``: its placement index); ``steps`` are the statements, spelled by each
platform's target; ``verify`` and ``metadata`` write each stage's checks; ``write`` lays the
plan out on disk; ``apply`` runs stages through the platforms' Python clients, recording them
in :mod:`compiler.history.ledger`.
"""
