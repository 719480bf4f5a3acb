"""The floor: what every layer above uses and nothing of accord's domain.

Located diagnostics and their errors (``errors``), the platform and dialect names
(``platforms``), bounded JSON and file reads (``jsonfile``), deterministic JSON (``jsonindent``),
the content-addressed cache store (``store``), output directories written atomically
(``outdir``), file locks, GitHub annotation escaping, memos and stream handling. Imports nothing
of accord.
"""
