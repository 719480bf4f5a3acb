"""The bodies of the governance schema's functions that ``functions.list`` shows only the
metadata of (issue 41, item 5).

``functions.list`` with ``include_browse`` lists, beside the functions the reader owns or may
EXECUTE, those it "can only access selective metadata for" (FunctionsAPI.list;
``FunctionInfo.browse_only``): their names and owners, not their bodies. The bodies and
parameters of those are read from the catalog's ``information_schema.routines`` and
``information_schema.parameters`` (one statement each, only when needed), which list "the
routines the user is privileged to interact with" (sql/language-manual/information-schema/
routines, parameters). A salt's body is never asked for. A function whose body neither answers
gives none: the reader marks its body unseen (ACC707), never compared.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.errors import one_line
from accord.targets import sql as tsql


def routine_bodies(reader: Any, functions: list[Any], salts: set[str]) -> list[Any]:
    """``functions`` with the body, parameters and return type of each browse-only one that
    is not a salt filled from information_schema; one that cannot be filled carries
    ``unseen`` (why, in words)."""
    wanted = [
        f
        for f in functions
        if getattr(f, "browse_only", False)
        and not f.routine_definition
        and (f.full_name or "").lower() not in salts
    ]
    if not wanted:
        return functions
    catalog, schema = reader.expected.governance_schema.lower().split(".")
    platform = reader.platform
    where = f"WHERE {{}} = {tsql.literal_sql(schema, platform)}"
    base = f"{tsql.name_sql(catalog, platform)}.information_schema"
    try:
        routines = reader.run.query(
            "SELECT routine_name, routine_definition, full_data_type, comment FROM "
            f"{base}.routines {where.format('routine_schema')}"
        )
        parameters = reader.run.query(
            "SELECT specific_name, ordinal_position, parameter_name, full_data_type FROM "
            f"{base}.parameters {where.format('specific_schema')} ORDER BY 1, 2"
        )
    except ExecutionError as err:
        routines, parameters, failed = [], [], one_line(err)[:300]
    else:
        failed = ""
    bodies = {str(r.get("routine_name") or "").lower(): r for r in routines}
    params: dict[str, list[Any]] = {}
    for r in parameters:
        params.setdefault(str(r.get("specific_name") or "").lower(), []).append(
            SimpleNamespace(
                name=str(r.get("parameter_name") or ""),
                type_text=str(r.get("full_data_type") or ""),
                position=int(r.get("ordinal_position") or 0),
            )
        )
    out = []
    for f in functions:
        if f not in wanted:
            out.append(f)
            continue
        leaf = (f.full_name or "").rsplit(".", 1)[-1].lower()
        row = bodies.get(leaf)
        if row is None or not row.get("routine_definition"):
            why = (
                f"information_schema.routines could not be read ({failed})"
                if failed
                else "the reader sees only its metadata (BROWSE), and information_schema."
                "routines does not show its body"
            )
            out.append(SimpleNamespace(**vars_of(f), unseen=why))
            continue
        filled = vars_of(f) | {
            "routine_definition": str(row["routine_definition"]),
            "full_data_type": str(row.get("full_data_type") or ""),
            "comment": row.get("comment"),
            "input_params": SimpleNamespace(parameters=params.get(leaf, [])),
        }
        out.append(SimpleNamespace(**filled))
    return out


def vars_of(f: Any) -> dict[str, Any]:
    """The fields the reader reads of a FunctionInfo (or of one filled here)."""
    names = ("full_name", "owner", "comment", "routine_definition", "full_data_type")
    out = {n: getattr(f, n, None) for n in names}
    out["input_params"] = getattr(f, "input_params", None)
    out["data_type"] = getattr(f, "data_type", None)
    out["browse_only"] = getattr(f, "browse_only", False)
    return out
