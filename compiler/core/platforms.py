"""The catalog platforms accord governs, and the dialect names of their SQL: named once.

Every module that lists the platforms (the policy format, output directories, the SQL
scanner, ``accord lint --dialect``, verify's reader of compiled SQL, the targets) imports
them from here. The standard library only, so that linting policy files imports neither the
scanner nor sqlglot to know them.
"""

from __future__ import annotations

from typing import Literal

#: a catalog platform, as the policy format spells it
CatalogPlatform = Literal["snowflake", "databricks"]

#: every catalog platform, in accord's order (output directories, plan stages, messages)
PLATFORMS: tuple[CatalogPlatform, ...] = ("snowflake", "databricks")

#: the dialects SQL files are read in (the scanner, ``accord lint --dialect``): one per
#: platform, named by it
DIALECTS: tuple[str, ...] = PLATFORMS

#: platform -> the name of the sqlglot dialect its SQL is parsed and written in
SQLGLOT_DIALECTS: dict[str, str] = {"snowflake": "snowflake", "databricks": "databricks"}
