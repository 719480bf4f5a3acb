"""Staged migrations between two versions of the policy model (``accord plan``, ``accord migrate``).

``source`` reads the base (a directory or a git revision) and lowers both versions; ``diff``
compares the lowered catalogs; ``order`` turns the differences into stages per platform and
proves them safe on the simulator in ``state``; ``verify`` writes each stage's checks; ``write``
lays the plan out on disk; ``ledger`` records what was applied and finds half-applied cutover
groups; ``apply`` runs stages through the platforms' Python clients.
"""
