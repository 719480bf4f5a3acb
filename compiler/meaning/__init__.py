"""What each persona sees, from the model alone (no SQL, no platform).

``semantics`` gives a persona's view of a dataset on a surface; ``divergence`` finds the
surfaces that answer the same facts more loosely than others (ACC403, ``accord analyze``);
``probes`` checks the governance team's probes against the model; ``analyze`` is
``accord analyze``. Lint, verify and ``accord diff`` all read the model's meaning from here.
"""
