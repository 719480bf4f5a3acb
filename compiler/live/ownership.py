"""Who owns what: drift's judgement of the owners a live read found (issue 41, item 1).

An owner is one more who can call, read or change an object: a salt function's owner can call
it (and select the salt), a policy's or policy function's owner can change its body or drop it,
a mapping table's owner can change who is granted what, and a governed table's owner can, on
Databricks, drop its row filter and masks (docs.databricks.com sql-ref-syntax-ddl-row-filter:
"you must be the table owner or have the MANAGE privilege on the table"). The model names who
should own what accord deploys (``platforms.<p>.owner``); the readers record every owner they
read (:class:`targets.inspect.Owned`) only then, and their coverage says when ownership was not
judged. Here:

* a salt function owned by another role or principal is ACC705 (it can call the salt), with
  who else holds that owner (a role PUBLIC holds: every user);
* a policy, a policy function or a mapping table owned by another is ACC702;
* a governed table owned by neither the expected owner nor an identity the model gives
  everything on it (every row, every governed column in the clear) is ACC702, and said in the
  coverage: the verdict on the table holds only while its owner leaves its policies alone.

A plan from a live base transfers the ownership of accord's own objects back
(:func:`transfers`); it never revokes the expected owner's grants (ACC705 does not count a grant
to the expected owner, :meth:`targets.inspect.LiveCatalog.exposures`). A governed table is
the data owners', not accord's: drift reports it, the plan does not move it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accord.compiler.core.errors import Location
from accord.compiler.core.platforms import facts
from accord.compiler.lint.finding import Finding
from accord.compiler.meaning.semantics import dataset_view
from accord.compiler.model.identities import SEPARATOR
from accord.compiler.model.validate import Project
from accord.targets.inspect import LiveCatalog, Owned
from accord.targets.objects import (
    Catalog,
    CatalogObject,
    MappingTable,
    MaskPolicy,
    RowFilterPolicy,
    SaltFunction,
)
from accord.targets.platform import platform as platform_named

#: what an owner other than the expected one can do, per kind of object
_CAN = {
    "salt function": "call it and select the salt",
    "row access policy": "change its body or drop it",
    "masking policy": "change its body or drop it",
    "policy function": "replace its body or drop it",
    "mapping table": "change who is granted what",
}


def ownership_findings(
    project: Project,
    expected: Catalog,
    live: LiveCatalog,
    at: Callable[[CatalogObject], tuple[Location, str]],
) -> list[Finding]:
    """ACC705 and ACC702 for every owner that is not the one the model names; ``at`` locates
    an object in the model (drift's :class:`Locator`)."""
    platform = expected.platform
    want = expected.owner
    if not want or not live.owners:
        return []
    fold = facts(platform).fold_identity
    key = f"platforms.{platform}.owner"
    out: list[Finding] = []
    for o in sorted(live.owners):
        if fold(o.owner) == fold(want):
            continue
        reach = f" ({o.reach})" if o.reach else ""
        fix = f"{platform_named(platform).migrations().transfer(o.kind, o.name, want)}"
        fix = f"transfer it back: {fix} (accord plan --base live:{platform} does)"
        if o.kind == "governed table":
            finding = _governed_table(project, platform, o, want, at, live)
            if finding is not None:
                out.append(finding)
            continue
        loc, owner = at(_object(expected, live, o))
        rule = "ACC705" if o.kind == "salt function" else "ACC702"
        out.append(
            Finding(
                loc,
                rule,
                owner,
                f"{platform}: {o.kind} {o.name} is owned by {o.owner}{reach}, not {want} "
                f"({key}): its owner can {_CAN[o.kind]}",
                fix,
            )
        )
    return out


def _object(expected: Catalog, live: LiveCatalog, o: Owned) -> CatalogObject:
    """The catalog object an owner is of (the model's, else the live one, else a stand-in of
    the kind), for locating the finding."""
    kind: type[Any] = {
        "salt function": SaltFunction,
        "row access policy": RowFilterPolicy,
        "masking policy": MaskPolicy,
        "mapping table": MappingTable,
    }.get(o.kind, RowFilterPolicy)
    for catalog in (expected, live.catalog):
        for obj in catalog.objects:
            if getattr(obj, "name", "").upper() == o.name.upper() and (
                o.kind == "policy function" or isinstance(obj, kind)
            ):
                return obj
    return SaltFunction(o.name, "", "")  # located at the platform


def _governed_table(
    project: Project,
    platform: str,
    o: Owned,
    want: str,
    at: Callable[[CatalogObject], tuple[Location, str]],
    live: LiveCatalog,
) -> Finding | None:
    """A governed table whose owner the model gives everything on it is fine; else ACC702 at
    its dataset, and a coverage note."""
    model = project.model
    dataset = next(
        (
            n
            for n, d in model.datasets.items()
            if d.platform == platform and d.table.upper() == o.name.upper()
        ),
        None,
    )
    if dataset is not None:
        view = dataset_view(model, f"{platform}{SEPARATOR}{o.owner}", dataset)
        if view.row_disposition == "clear" and all(c.disposition == "clear" for c in view.columns):
            return None
    can = (
        "drop its row filter and masks"
        if facts(platform).principal_kind == "group"
        else "replace or swap it, and grant it to whom it likes"
    )
    said = (
        f"{platform}: governed table {o.name} is owned by {o.owner}, neither {want} "
        f"(platforms.{platform}.owner) nor an identity the model gives everything on it: its "
        f"owner can {can}"
    )
    if live.coverage is not None:
        live.coverage.note(
            f"governed table {o.name} is owned by {o.owner}: what drift says of it holds only "
            "while its owner leaves its policies in place"
        )
    loc = project.loc("datasets", dataset) if dataset is not None else at(_placeholder(o))[0]
    where = f"datasets.{dataset}" if dataset is not None else f"platforms.{platform}"
    return Finding(
        loc,
        "ACC702",
        where,
        said,
        f"make {want} (or an identity the model gives everything on the table) its owner, or "
        f"give {o.owner} what it can take anyway",
    )


def _placeholder(o: Owned) -> CatalogObject:
    return SaltFunction(o.name, "", "")


def transfers(live: LiveCatalog, expected: Catalog) -> list[tuple[Owned, str]]:
    """(owner read, the statement that transfers it back) for each of accord's own objects
    owned by someone else than the model's expected owner; governed tables are not accord's
    to move."""
    want = expected.owner
    if not want:
        return []
    fold = facts(expected.platform).fold_identity
    spelling = platform_named(expected.platform).migrations()
    return [
        (o, spelling.transfer(o.kind, o.name, want))
        for o in sorted(live.owners)
        if o.kind != "governed table" and fold(o.owner) != fold(want)
    ]
