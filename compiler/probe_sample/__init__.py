"""``accord probe sample``: probes sampled from what the platforms' access history says people
read — the coverage of observed reads by probes, the reads accord cannot map (with why), and
proposed probes for the uncovered ones.

:mod:`.history` reads the history views through the live connections; :mod:`.mapping` maps
each read to (persona, surface, dataset, column, entitlement value); :mod:`.report`
aggregates, computes coverage, renders and proposes; :mod:`.run` orchestrates.
"""
