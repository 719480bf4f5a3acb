"""Governance tags a governed column carries without the model setting them there (issue 41,
item 2): inherited from its table, schema or database, or propagated to it through lineage.

On Snowflake a tag set on a database or schema is inherited by every table and column under
it, one on a table by its columns (docs.snowflake.com/en/user-guide/object-tagging/inheritance),
and one may reach a column by automatic propagation (user-guide/object-tagging/propagation);
whichever way a column carries a governance tag, the tag's masking policy masks it
(user-guide/tag-based-masking-policies). The live read reports each such tag with where it is
set (:class:`targets.inspect.InheritedTag`). A tag the model does not put on the column, or puts
there with another value, is a console's governance that the model does not hold: ACC702, one
finding per place the tag is set (a schema's tag reaches many columns), naming the columns it
reaches. A tag the model sets on the column itself and that the column only inherits (its own is
gone) is drift's ACC701 ("the column only inherits it"); it is not counted again here.
"""

from __future__ import annotations

from collections.abc import Callable

from accord.compiler.core.errors import Location
from accord.compiler.lint.finding import Finding
from accord.targets.inspect import InheritedTag, LiveCatalog
from accord.targets.objects import Catalog, CatalogObject, TagAssignment

#: how many of the columns a tag reaches a message names
_SHOWN = 5


def inherited_findings(
    expected: Catalog,
    live: LiveCatalog,
    at: Callable[[CatalogObject], tuple[Location, str]],
) -> list[Finding]:
    """ACC702 for each place a governance tag is set that reaches governed columns the model
    does not tag so; ``at`` locates an object in the model (drift's :class:`Locator`)."""
    platform = expected.platform
    model = {
        (o.table.upper(), (o.column or "").upper(), o.tag.upper()): o.value
        for o in expected.of(TagAssignment)
    }
    sources: dict[tuple[str, str, str, str], list[InheritedTag]] = {}
    for got in sorted(live.inherited):
        column = (got.table.upper(), got.column.upper(), got.tag.upper())
        table_level = (got.table.upper(), "", got.tag.upper())
        if model.get(column) == got.value:
            continue  # the model's own tag: a lost assignment is ACC701 ("only inherits it")
        if got.level == "TABLE" and model.get(table_level) == got.value:
            continue  # the model sets it on the table
        key = (got.source(), got.tag, got.value, got.method)
        sources.setdefault(key, []).append(got)
    out = []
    for (where, tag, value, method), reached in sorted(sources.items()):
        first = reached[0]
        loc, owner = at(TagAssignment(first.table, first.column, tag, value, ""))
        columns = [f"{g.table}.{g.column}" for g in reached]
        named = ", ".join(columns[:_SHOWN]) + (
            f" and {len(columns) - _SHOWN} more" if len(columns) > _SHOWN else ""
        )
        how = "propagated to it" if method == "PROPAGATED" else f"set on {where} and inherited"
        if method == "PROPAGATED":
            message = (
                f"tag {tag} = {value!r} reaches {named} by propagation (APPLY_METHOD PROPAGATED)"
            )
        else:
            message = (
                f"tag {tag} = {value!r} is {how} (LEVEL {first.level}) by "
                f"{len(columns)} governed column{'s' if len(columns) != 1 else ''}: {named}"
            )
        out.append(
            Finding(
                loc,
                "ACC702",
                owner,
                f"{platform}: {message}; the model does not put it there, and its masking "
                "policies mask whatever carries it",
                f"unset it where it is set ({where}), or tag the columns in the model",
            )
        )
    return out
