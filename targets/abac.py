"""Unity Catalog ABAC (``platforms.databricks.style: abac``): governed tags and CREATE POLICY.

The model lowers to the same mapping tables, salt functions and filter / mask functions as the
table style, except that no function body asks who the caller is about ``unfiltered_for`` or
``unmasked_for``: ABAC names those principals in the policy (TO / EXCEPT), as the ABAC
guidance asks. What differs is how the functions reach the tables:

* **Governed tags on columns.** Each masked column is tagged ``accord_mask = '<mask>'``
  (``'<mask>_<type>'`` for a non-string column, so that a policy, whose function has one
  signature, matches columns of one type only). Each entitlement row-filter column is tagged
  ``accord_row_key = '<dimension>'``; the argument columns of a hand-written predicate
  ``accord_row_key = '<dataset>__<argument>'``. Column tags do not inherit from the table, so
  every column is tagged itself.
* **One policy per securable.** One COLUMN MASK policy per (schema, mask, type) and one ROW
  FILTER policy per (schema, dimension), ``ON SCHEMA`` for each schema that holds governed
  tables, ``TO `account users` EXCEPT <unmasked_for / unfiltered_for>``, matching columns by
  ``has_tag_value``. Names are ``accord_<function name>``, deterministic and local to the
  securable.
* **One row filter per table per user** (``UC_ABAC_MULTIPLE_ROW_FILTERS`` otherwise). A table
  carries one tagged row-key column, so it matches one row-filter policy of its schema. Tables of
  one schema that filter on the same dimension with *different* ``unfiltered_for`` sets cannot
  share a policy (the EXCEPT lists differ), and two schema policies on one tag would both match
  every such table: accord then writes those row-filter policies ``ON TABLE``, one per table,
  so each table still matches exactly one. A hand-written predicate is always ``ON TABLE``.

Quotas (docs.databricks.com/aws/en/data-governance/unity-catalog/abac/requirements) are checked
by rule ACC504 (``compiler/lint/rules/abac.py``) from the objects built here.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Literal

from sqlglot import exp

from accord.compiler.model.schema import ColumnSpec, Dataset, PolicyModel
from accord.compiler.model.types import policy_type
from accord.targets import sql
from accord.targets.base import type_suffix
from accord.targets.objects import AbacPolicy, CatalogObject, Tag, TagAssignment

if TYPE_CHECKING:
    from accord.targets.base import Target

MASK_TAG = "accord_mask"
ROW_KEY_TAG = "accord_row_key"
#: every user of the account: the TO clause of every accord policy
ALL_USERS = "account users"

#: Principals named in one TO or one EXCEPT clause of a policy.
MAX_PRINCIPALS = 20
#: Policies that may apply to one table.
MAX_POLICIES_PER_TABLE = 50
#: Column conditions in one MATCH COLUMNS clause.
MAX_MATCH_COLUMNS = 3

TAG_NOTE = (
    "Governed tags are account-level: an account admin creates each one (Catalog Explorer >\n"
    "Governed tags, CREATE GOVERNED TAG on Runtime 18.1+, or databricks_tag_policy in\n"
    "terraform/main.tf.json) before columns can carry it.\n"
    "Column tags do not inherit from the table: every column is tagged itself."
)


def schema_of(table: str) -> str:
    return table.rsplit(".", 1)[0]


def has_tag_value(tag: str, value: str) -> str:
    """The MATCH COLUMNS condition for a column tagged ``tag = value``."""
    call = exp.Anonymous(this="has_tag_value", expressions=[sql.literal(tag), sql.literal(value)])
    return sql.render(call, "databricks")


def mask_tag_value(target: Target, mask: str, ptype: str) -> str:
    return mask if ptype == target.string_type else target.case(f"{mask}_{type_suffix(ptype)}")


def argument_tag_value(dataset: str, argument: str) -> str:
    return f"{dataset}__{argument.lower()}"


def row_filter_tags(dname: str, ds: Dataset) -> list[TagAssignment]:
    rf = ds.row_filter
    assert rf is not None
    if rf.dimensions is not None:
        # the key columns of a filter over several dimensions are tagged for this table
        # alone, as a predicate's arguments are: a column tagged with the bare dimension
        # would also match that dimension's schema policy (two row filters for one user)
        return [
            TagAssignment(ds.table, column, ROW_KEY_TAG, argument_tag_value(dname, column), dname)
            for _, column, _ in ds.filter_dimensions
        ]
    if rf.entitlement is not None:
        assert rf.column is not None
        return [TagAssignment(ds.table, rf.column, ROW_KEY_TAG, rf.entitlement, dname)]
    return [
        TagAssignment(ds.table, arg, ROW_KEY_TAG, argument_tag_value(dname, arg), dname)
        for arg in rf.arguments or {}
    ]


def mask_tag(
    target: Target, dname: str, ds: Dataset, column: str, spec: ColumnSpec
) -> TagAssignment:
    assert spec.mask is not None
    ptype = policy_type(spec.type, target.platform)
    return TagAssignment(
        ds.table, column, MASK_TAG, mask_tag_value(target, spec.mask, ptype), dname
    )


def governed_tags(target: Target, model: PolicyModel) -> list[Tag]:
    """The governed tags the assignments need, with every value they use."""
    values: dict[str, set[str]] = defaultdict(set)
    for dname, ds in target.datasets(model):
        if ds.row_filter is not None:
            for t in row_filter_tags(dname, ds):
                values[t.tag].add(t.value)
        for col, spec in ds.columns.items():
            if spec.mask:
                t = mask_tag(target, dname, ds, col, spec)
                values[t.tag].add(t.value)
    comments = {
        MASK_TAG: "accord: the mask a column's values go through",
        ROW_KEY_TAG: "accord: the entitlement a column's rows are filtered by",
    }
    return [
        Tag(name, tuple(sorted(values[name])), comment=comments[name])
        for name in (MASK_TAG, ROW_KEY_TAG)
        if values[name]
    ]


def _unfiltered(ds: Dataset) -> list[str]:
    assert ds.row_filter is not None
    return ds.row_filter.unfiltered_for


def _local(name: str) -> str:
    return "accord_" + name.rsplit(".", 1)[-1]


def row_filter_policies(target: Target, model: PolicyModel) -> list[AbacPolicy]:
    out: list[AbacPolicy] = []
    by_dimension: dict[tuple[str, str], list[tuple[str, Dataset]]] = defaultdict(list)
    for dname, ds in target.datasets(model):
        rf = ds.row_filter
        if rf is None:
            continue
        if rf.entitlement is not None:
            by_dimension[(schema_of(ds.table), rf.entitlement)].append((dname, ds))
            continue
        if rf.dimensions is not None:
            out.append(_several_dimensions(target, model, dname, ds))
            continue
        args = tuple(rf.arguments or {})
        aliases = tuple(f"a{i}" for i in range(1, len(args) + 1))
        function = target.row_policy_name(model, dname, ds)
        out.append(
            AbacPolicy(
                name=_local(function),
                securable_type="TABLE",
                securable=ds.table,
                kind="ROW FILTER",
                function=function,
                to=(ALL_USERS,),
                except_=(),
                match_columns=tuple(
                    (has_tag_value(ROW_KEY_TAG, argument_tag_value(dname, a)), alias)
                    for a, alias in zip(args, aliases, strict=True)
                ),
                on_column=None,
                using=aliases,
                comment=f"accord: hand-written row filter of dataset {dname}",
                datasets=(dname,),
            )
        )
    for (schema, dimension), members in sorted(by_dimension.items()):
        excepts = {target.identities(model, _unfiltered(ds)) for _, ds in members}
        # one schema policy when every table shares its EXCEPT list; else one per table
        scopes: list[tuple[Literal["SCHEMA", "TABLE"], str, list[tuple[str, Dataset]]]] = (
            [("SCHEMA", schema, members)]
            if len(excepts) == 1
            else [("TABLE", ds.table, [(dname, ds)]) for dname, ds in members]
        )
        for securable_type, securable, governed in scopes:
            dname, ds = governed[0]
            unfiltered = _unfiltered(ds)
            function = target.row_policy_name(model, dname, ds)
            comment = f"accord: rows by entitlement {dimension}"
            if unfiltered:
                comment += "; every row for " + ", ".join(sorted(unfiltered))
            out.append(
                AbacPolicy(
                    name=_local(function),
                    securable_type=securable_type,
                    securable=securable,
                    kind="ROW FILTER",
                    function=function,
                    to=(ALL_USERS,),
                    except_=target.identities(model, unfiltered),
                    match_columns=((has_tag_value(ROW_KEY_TAG, dimension), "k"),),
                    on_column=None,
                    using=("k",),
                    comment=comment,
                    dimension=dimension,
                    datasets=tuple(sorted(d for d, _ in governed)),
                )
            )
    return out


def _several_dimensions(target: Target, model: PolicyModel, dname: str, ds: Dataset) -> AbacPolicy:
    """A filter over several dimensions: one policy ON TABLE matching each key column by its
    own tag (``has_tag_value`` per dimension, ``USING COLUMNS`` in the function's parameter
    order), ``EXCEPT`` the filter-wide ``unfiltered_for`` (per-dimension exemptions cannot be
    named in a policy: validation refuses them under ABAC)."""
    rf = ds.row_filter
    assert rf is not None and rf.dimensions is not None
    dims = ds.filter_dimensions
    aliases = tuple(f"k{i}" for i in range(1, len(dims) + 1))
    function = target.row_policy_name(model, dname, ds)
    comment = "accord: rows by entitlements " + " and ".join(d for d, _, _ in dims)
    if rf.unfiltered_for:
        comment += "; every row for " + ", ".join(sorted(rf.unfiltered_for))
    return AbacPolicy(
        name=_local(function),
        securable_type="TABLE",
        securable=ds.table,
        kind="ROW FILTER",
        function=function,
        to=(ALL_USERS,),
        except_=target.identities(model, rf.unfiltered_for),
        match_columns=tuple(
            (has_tag_value(ROW_KEY_TAG, argument_tag_value(dname, column)), alias)
            for (_, column, _), alias in zip(dims, aliases, strict=True)
        ),
        on_column=None,
        using=aliases,
        comment=comment,
        datasets=(dname,),
    )


def mask_policies(target: Target, model: PolicyModel) -> list[AbacPolicy]:
    users: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for dname, ds in target.datasets(model):
        for spec in ds.columns.values():
            if spec.mask:
                ptype = policy_type(spec.type, target.platform)
                users[(schema_of(ds.table), spec.mask, ptype)].add(dname)
    out = []
    for (schema, mask_name, ptype), datasets in sorted(users.items()):
        mask = model.masks[mask_name]
        function = target.mask_policy_name(model, mask_name, ptype)
        comment = f"accord: mask {mask_name} ({mask.strategy})"
        if mask.unmasked_for:
            comment += "; clear for " + ", ".join(sorted(mask.unmasked_for))
        out.append(
            AbacPolicy(
                name=_local(function),
                securable_type="SCHEMA",
                securable=schema,
                kind="COLUMN MASK",
                function=function,
                to=(ALL_USERS,),
                except_=target.identities(model, mask.unmasked_for),
                match_columns=(
                    (has_tag_value(MASK_TAG, mask_tag_value(target, mask_name, ptype)), "c"),
                ),
                on_column="c",
                using=(),
                comment=comment,
                mask=mask_name,
                datasets=tuple(sorted(datasets)),
            )
        )
    return out


def policies(target: Target, model: PolicyModel) -> list[CatalogObject]:
    """Every ABAC policy, ordered by securable, then row filters before masks, then name."""
    found = row_filter_policies(target, model) + mask_policies(target, model)
    return sorted(
        found, key=lambda p: (p.securable, p.securable_type, p.kind != "ROW FILTER", p.name)
    )
