"""What was planned and what was applied: the plan directories read back (``records``) and the
append-only ledger of applied and failed stages (``ledger``), shared by ``accord plan``,
``accord migrate`` and lint's ACC601.
"""
