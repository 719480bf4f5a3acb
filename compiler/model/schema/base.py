"""What every section of the policy model is built from: the pydantic base class (strict,
frozen, built on first use), names and identifier syntax, texts, suppressions (``ignore:``).

pydantic is imported here, once its plugin lookup is answered
(:func:`_without_pydantic_plugins`); the package's face imports this module first, so no
class of the model is built before.
"""

from __future__ import annotations

import re
import sys
import types
from typing import Annotated, Any

from accord.compiler.model.names import COLUMN_NAME, checker, no_control
from accord.compiler.model.rules import is_known_rule


def _without_pydantic_plugins() -> None:
    """Build the model's classes with no pydantic plugin. pydantic looks its plugins up (the
    ``pydantic`` entry points of every installed distribution, through ``importlib.metadata``,
    which imports ``email`` and ``socket``) when the first class is built: a tenth of a cold
    ``accord lint``. accord's validation is never extended by whatever else is installed, so
    the lookup is answered before it is made: ``pydantic.plugin._schema_validator`` imports
    ``get_plugins`` from this module when it builds a validator, and no plugin is the answer
    pydantic gives with ``PYDANTIC_DISABLE_PLUGINS=__all__`` (``tests/test_model_plugins.py``
    checks that pydantic still asks only that, and that a class built here has no plugin)."""
    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        loader = types.ModuleType(
            name, "accord: no pydantic plugins (compiler/model/schema/base.py)"
        )
        loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
        sys.modules[name] = loader


_without_pydantic_plugins()

from pydantic import AfterValidator, BaseModel, ConfigDict  # noqa: E402

# --------------------------------------------------------------------------------------------
# identifier syntax

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
SF_IDENT = r"[A-Za-z_][A-Za-z0-9_$]*"
_TABLE = re.compile(rf"^{SF_IDENT}\.{SF_IDENT}\.{SF_IDENT}$")
_SCHEMA = re.compile(rf"^{SF_IDENT}\.{SF_IDENT}$")
_RULE = re.compile(r"^ACC\d{3}$")


def name_check(pattern: re.Pattern[str], what: str) -> Any:
    # the check itself is pydantic-free (compiler/model/names.py): an incremental lint checks
    # a plain column's name with it without importing this module
    return AfterValidator(checker(pattern, what))


Text = Annotated[str, AfterValidator(no_control)]


Name = Annotated[str, name_check(_NAME, "name (lower_snake_case: a-z, 0-9, _)")]
TableName = Annotated[
    str, name_check(_TABLE, "table name (three parts, database.schema.table, no quotes)")
]
SchemaName = Annotated[str, name_check(_SCHEMA, "schema name (two parts, database.schema)")]
ColumnName = Annotated[str, AfterValidator(COLUMN_NAME)]


def _reason(value: str) -> str:
    if not value.strip():
        raise ValueError("a suppression needs a non-empty reason")
    return value


def _check_rule_id(value: str) -> str:
    if not _RULE.match(value) or not is_known_rule(value):
        raise ValueError(f"unknown rule id {value!r}")
    return value


RuleId = Annotated[str, AfterValidator(_check_rule_id)]
Ignore = dict[RuleId, Annotated[str, AfterValidator(_reason)]]


#: the description of every ``ignore`` key
IGNORE_DESCRIPTION = "suppressed findings: rule id -> the reason (required, non-empty)"


def empty_list() -> list[Any]:
    """A new empty list: the default factory of the list fields. pydantic reads a default
    factory's signature when it builds the class, and ``list``'s (a builtin's text signature)
    is parsed through ``ast`` and ``tokenize``, whose first use compiles tokenize's regular
    expressions (~14 ms of a cold start for 7 fields); a Python function's is read directly."""
    return []


class Strict(BaseModel):
    # ``defer_build``: a class's validator is built when it is first used, not at import.
    # ``PolicyModel``'s validator inlines every section's schema, so a lint builds only that
    # one; a section class used on its own (``Probe(...)``) builds its own validator then.
    # ``tests/test_schema.py`` checks that the two builds give each class the same schema.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)
