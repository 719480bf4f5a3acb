"""The kinds of catalog object, one row each: everything accord knows of a kind in one place.

As sqlglot keeps per-expression behaviour in tables keyed by class (``TRANSFORMS``), every
question whose answer depends on an object's kind is answered by :data:`KINDS`, keyed by the
class of :mod:`targets.objects`: whether it is a *definition* (a named object: mapping table,
salt function, policy, tag) or a *placement* (what binds one to data: an attachment, a tag
assignment, an ABAC policy); what a placement occupies and which function it applies; what a
definition needs to exist; how it is described; the plan phases its changes take; what a
change of it is called and how the plan notes it; which stage check proves it; which of its
fields are accord's bookkeeping (never deployed, so never read back); and how a live read
counts it. They are read by :mod:`targets.identity`, the live readers, the planner
(``compiler/plan/``: units, diff, stage checks) and drift.

Every object also carries :attr:`source`, the model path that made it (``("datasets", NAME,
"row_filter")``), recorded by the lowering: provenance, never part of its identity, its
fingerprint or its rendering, so renaming a model entry changes nothing deployed.

Adding a kind is adding its class to :mod:`targets.objects` and its row here;
tests/test_platform_conformance.py fails while a kind lacks a row, or a platform cannot render
it and read it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from sqlglot import exp

from accord.compiler.core.memo import IdentityMemo
from accord.compiler.model.replicas import column_path
from accord.compiler.model.schema import PolicyModel
from accord.targets.objects import (
    AbacPolicy,
    AggregationAttachment,
    AggregationPolicy,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)

# ---- plan phases: the order of units inside a stage ------------------------------------------
# < APPLY_PHASES go to the prepare stage, >= RETIRE to the retire stage (compiler/plan/model.py)
CREATE_TABLE, CREATE_SALT, CREATE_POLICY, CREATE_TAG = 0, 1, 2, 3
APPLY_PHASES = 10
ROWS, SALT, BODY, TAG_DEF, ATTACH, TAG_SET, ABAC_SET = 10, 11, 12, 13, 14, 15, 16
DETACH, TAG_UNSET, ABAC_UNSET = 20, 21, 22
#: a body change that must wait until the table-level attachments of the function are gone
BODY_LATE = 23
FLOW_IN, FLOW_OUT = 30, 31
RETIRE = 40
DROP_TAG, DROP_POLICY, DROP_REST = 40, 41, 42


@dataclass(frozen=True)
class Phases:
    """The plan phase of each change of a kind: a definition added, changed in place, removed;
    a placement attached (or swapped: ``changed``) and detached."""

    added: int
    changed: int
    removed: int


def _nothing(obj: Any) -> frozenset[str]:
    return frozenset()


def _no_place(obj: Any) -> tuple[str, ...]:
    raise TypeError(f"{type(obj).__name__} is a definition: it occupies no place")


def _none(obj: Any) -> None:
    return None


@dataclass(frozen=True)
class Kind:
    """One kind of catalog object."""

    cls: type
    role: Literal["definition", "placement"]
    #: how a live read counts it (coverage: "3 mapping tables")
    plural: str
    #: the object in words, as plan headers, plan.json and command output name it
    describe: Callable[[Any, str], str]
    phases: Phases
    #: the stage check that proves a step on it (``compiler/plan/verify.py``), or None
    check: str | None
    #: what a placement occupies: a table's filter, a column's mask, a tag on a table or
    #: column, a named ABAC policy on a securable
    place: Callable[[Any], tuple[str, ...]] = _no_place
    #: names (upper-cased) of the definitions a definition needs to exist
    references: Callable[[Any], frozenset[str]] = _nothing
    #: the function (upper-cased) a placement applies
    applies: Callable[[Any], str | None] = _none
    #: the table a placement is on (an ABAC policy: its securable)
    table: Callable[[Any], str | None] = _none
    #: fields that are accord's bookkeeping, never deployed: a live object takes them from the
    #: model's object of the same identity (they cannot be read back)
    model_only: tuple[str, ...] = ()
    #: no sqlglot body: equal fields, equal fingerprints (the planner compares them by field)
    plain: bool = True
    #: what a change of it is (plan diff's ``detail``): "rows", "salt", "definition",
    #: "placement", or for a policy "body" / "signature"
    changed: Callable[[Any, Any], str] = lambda old, new: "definition"
    #: the model path that made an object of this kind (lowering records it as ``source``); ()
    #: when it is where its first user is (:func:`with_sources`), or nowhere in particular
    source: Callable[[Any, PolicyModel], Path] = lambda obj, model: ()
    #: how an ``unmanaged`` entry of the model names the kind (its ``kind``) and an object of it
    #: (its ``name``: compiler/model/unmanaged.py)
    keyword: str = ""
    label: Callable[[Any], str] = lambda obj: str(obj.name)

    @property
    def definition(self) -> bool:
        return self.role == "definition"


Path = tuple[str | int, ...]


def _dataset_path(dataset: str, model: PolicyModel, row_filter: bool = False) -> Path:
    ds = model.datasets.get(dataset)
    if ds is None:
        return ()
    if row_filter and ds.row_filter is not None:
        return ("datasets", dataset, "row_filter")
    return ("datasets", dataset)


def _column_path(dataset: str, column: str | None, model: PolicyModel) -> Path:
    """The ``columns`` entry that declares ``dataset.column`` (an inherited column is declared
    on the replica's source), else the dataset."""
    ds = model.datasets.get(dataset)
    if ds is None:
        return ()
    key = next((c for c in ds.columns if c.upper() == column.upper()), None) if column else None
    return column_path(model, dataset, key) if key is not None else ("datasets", dataset)


def _in(section: str, name: str | None, model: PolicyModel) -> Path:
    return (section, name) if name and name in getattr(model, section) else ()


def body_references(body: exp.Expression) -> frozenset[str]:
    """Qualified names a policy body reads: tables (mapping tables) and called functions (salt
    functions), upper-cased (walked once per body: bodies are never changed once lowered)."""
    return _body_references(body)


def _body_references_of(body: exp.Expression) -> frozenset[str]:
    found = {".".join(p.name for p in t.parts).upper() for t in body.find_all(exp.Table) if t.db}
    for dot in body.find_all(exp.Dot):
        if isinstance(dot.expression, exp.Anonymous):
            found.add(".".join(_dotted(dot)).upper())
    return frozenset(found)


_body_references: IdentityMemo[exp.Expression, frozenset[str]] = IdentityMemo(_body_references_of)


def _dotted(node: exp.Expression) -> list[str]:
    if isinstance(node, exp.Dot):
        return _dotted(node.this) + _dotted(node.expression)
    if isinstance(node, exp.Column):
        return [p.name for p in node.parts]
    return [node.name]


#: what a platform calls each kind of policy
_POLICY_NAMES = {
    ("snowflake", RowFilterPolicy): "row access policy",
    ("snowflake", MaskPolicy): "masking policy",
    ("databricks", RowFilterPolicy): "row filter function",
    ("databricks", MaskPolicy): "mask function",
}


def _policy_change(old: RowFilterPolicy | MaskPolicy, new: RowFilterPolicy | MaskPolicy) -> str:
    same = old.params == new.params and getattr(old, "returns", None) == getattr(
        new, "returns", None
    )
    return "body" if same else "signature"


def _policy(cls: type, plural: str) -> Kind:
    return Kind(
        cls,
        "definition",
        plural,
        lambda o, p: f"{_POLICY_NAMES[(p, cls)]} {o.name}",
        Phases(CREATE_POLICY, BODY, DROP_POLICY),
        "policy",
        references=lambda o: body_references(o.body),
        model_only=(
            ("dimension", "note", "dimensions")
            if cls is RowFilterPolicy
            else ("mask", "strategy", "note")
        ),
        plain=False,
        changed=_policy_change,
        source=(lambda o, m: _in("entitlements", o.dimension, m))
        if cls is RowFilterPolicy
        else (lambda o, m: _in("masks", o.mask, m)),
        keyword="row_filter_policy" if cls is RowFilterPolicy else "masking_policy",
    )


#: Snowflake's projection, aggregation and join policies (sql-reference/sql/create-projection-
#: policy, create-aggregation-policy, create-join-policy): a body of context functions only, no
#: signature (``AS ()``), changed in place with ``ALTER <kind> POLICY ... SET BODY``; the model
#: path of the first one that applies it is where each comes from (:func:`with_sources`)
_CONSTRAINTS: dict[type, tuple[str, str, tuple[str, ...]]] = {
    ProjectionPolicy: ("projection policy", "projection policies", ("allowed_for", "enforcement")),
    AggregationPolicy: (
        "aggregation policy",
        "aggregation policies",
        ("min_group_size", "unrestricted_for"),
    ),
    JoinPolicy: ("join policy", "join policies", ("unrestricted_for",)),
}


def _constraint(cls: type) -> Kind:
    what, plural, bookkeeping = _CONSTRAINTS[cls]
    return Kind(
        cls,
        "definition",
        plural,
        lambda o, p: f"{what} {o.name}",
        Phases(CREATE_POLICY, BODY, DROP_POLICY),
        "policy",
        references=lambda o: body_references(o.body),
        model_only=bookkeeping,
        plain=False,
        changed=lambda old, new: "body",
        keyword=what.replace(" ", "_"),
    )


def _constraint_attachment(cls: type, what: str, plural: str) -> Kind:
    def place(o: Any) -> tuple[str, ...]:
        column = getattr(o, "column", None)
        return (what, o.table.upper(), *((column.upper(),) if column else ()))

    def describe(o: Any, p: str) -> str:
        column = getattr(o, "column", None)
        return f"{what} policy of {o.table}" + (f".{column}" if column else "")

    return Kind(
        cls,
        "placement",
        plural,
        describe,
        Phases(ATTACH, ATTACH, DETACH),
        "place",
        place=place,
        applies=lambda o: o.policy.upper(),
        table=lambda o: o.table,
        model_only=("dataset",),
        changed=lambda old, new: "placement",
        source=lambda o, m: _constraint_path(o, what, m),
        keyword=f"{what}_attachment",
        label=lambda o: o.table + (f".{o.column}" if getattr(o, "column", None) else ""),
    )


def _constraint_path(obj: Any, what: str, model: PolicyModel) -> Path:
    """Where the model says a projection (``columns.C.projection``), aggregation or join
    (``aggregation``, ``join``) policy applies."""
    ds = model.datasets.get(obj.dataset)
    if ds is None:
        return ()
    column = getattr(obj, "column", None)
    if column is None:
        return ("datasets", obj.dataset, what)
    key = next((c for c in ds.columns if c.upper() == column.upper()), None)
    return ("datasets", obj.dataset, "columns", key, what) if key else ("datasets", obj.dataset)


def _attachment(cls: type, plural: str, place: Callable[[Any], tuple[str, ...]]) -> Kind:
    return Kind(
        cls,
        "placement",
        plural,
        (lambda o, p: f"row filter of {o.table}")
        if cls is RowFilterAttachment
        else (lambda o, p: f"mask of {o.table}.{o.column}"),
        Phases(ATTACH, ATTACH, DETACH),
        "place",
        place=place,
        applies=lambda o: o.policy.upper(),
        table=lambda o: o.table,
        model_only=("dataset",),
        changed=lambda old, new: "placement",
        source=(lambda o, m: _dataset_path(o.dataset, m, row_filter=True))
        if cls is RowFilterAttachment
        else (lambda o, m: _column_path(o.dataset, o.column, m)),
        keyword="row_filter_attachment" if cls is RowFilterAttachment else "mask_attachment",
        label=(lambda o: o.table)
        if cls is RowFilterAttachment
        else (lambda o: f"{o.table}.{o.column}"),
    )


#: every kind, in apply order (the order of a catalog's objects within each kind, of
#: introspection's output and of the plan's diff)
KINDS: dict[type, Kind] = {
    k.cls: k
    for k in (
        Kind(
            MappingTable,
            "definition",
            "mapping tables",
            lambda o, p: f"mapping table {o.name}",
            Phases(CREATE_TABLE, ROWS, DROP_REST),
            "rows",
            model_only=("dimension",),
            changed=lambda old, new: "rows",
            source=lambda o, m: _in("entitlements", o.dimension, m),
            keyword="mapping_table",
        ),
        Kind(
            SaltFunction,
            "definition",
            "salt functions",
            lambda o, p: f"salt function {o.name}",
            Phases(CREATE_SALT, SALT, DROP_REST),
            "canary",
            model_only=("mask", "salt_ref"),
            changed=lambda old, new: "salt",
            source=lambda o, m: _in("masks", o.mask, m),
            keyword="salt_function",
        ),
        _policy(RowFilterPolicy, "row filter policies"),
        _policy(MaskPolicy, "masking policies"),
        _constraint(ProjectionPolicy),
        _constraint(AggregationPolicy),
        _constraint(JoinPolicy),
        Kind(
            Tag,
            "definition",
            "tags",
            lambda o, p: f"tag {o.name}",
            Phases(CREATE_TAG, TAG_DEF, DROP_TAG),
            "governed_tag",
            references=lambda o: frozenset(m.upper() for m in o.masking_policies),
            keyword="tag",
        ),
        _attachment(
            RowFilterAttachment, "row filter attachments", lambda o: ("filter", o.table.upper())
        ),
        _attachment(
            MaskAttachment,
            "mask attachments",
            lambda o: ("mask", o.table.upper(), o.column.upper()),
        ),
        _constraint_attachment(ProjectionAttachment, "projection", "projection attachments"),
        _constraint_attachment(AggregationAttachment, "aggregation", "aggregation attachments"),
        _constraint_attachment(JoinAttachment, "join", "join attachments"),
        Kind(
            TagAssignment,
            "placement",
            "tag assignments",
            lambda o, p: f"tag {o.tag} on {o.table}" + (f".{o.column}" if o.column else ""),
            Phases(TAG_SET, TAG_SET, TAG_UNSET),
            "tag",
            place=lambda o: ("tag", o.table.upper(), (o.column or "").upper(), o.tag.upper()),
            table=lambda o: o.table,
            model_only=("dataset",),
            changed=lambda old, new: "placement",
            source=lambda o, m: _column_path(o.dataset, o.column, m),
            keyword="tag_assignment",
            label=lambda o: f"{o.table}{'.' + o.column if o.column else ''} TAG {o.tag}",
        ),
        Kind(
            AbacPolicy,
            "placement",
            "abac policies",
            lambda o, p: f"ABAC policy {o.name} on {o.securable_type.lower()} {o.securable}",
            Phases(ABAC_SET, ABAC_SET, ABAC_UNSET),
            "abac",
            place=lambda o: ("abac", o.securable_type, o.securable.upper(), o.name.upper()),
            applies=lambda o: o.function.upper(),
            table=lambda o: o.securable,
            model_only=("mask", "dimension", "datasets"),
            changed=lambda old, new: "placement",
            source=lambda o, m: (
                _dataset_path(o.datasets[0], m, o.kind == "ROW FILTER") if o.datasets else ()
            ),
            keyword="abac_policy",
            # a metastore-level policy read from SQL names no metastore (ON METASTORE)
            label=lambda o: f"{o.name} ON {o.securable_type} {o.securable}".rstrip(),
        ),
    )
}

#: the definition kinds' classes, as a tuple (``isinstance`` on a tuple is twice as fast as
#: on a union, and the planner asks it of every object of both catalogs)
DEFINITIONS: tuple[type, ...] = tuple(c for c, k in KINDS.items() if k.definition)
#: the placement kinds' classes
PLACEMENTS: tuple[type, ...] = tuple(c for c, k in KINDS.items() if not k.definition)
#: kind class -> its place in apply order
ORDER: dict[type, int] = {c: i for i, c in enumerate(KINDS)}


#: placements whose model path a definition they apply without a path of its own takes
_APPLYING = (
    RowFilterAttachment,
    MaskAttachment,
    ProjectionAttachment,
    AggregationAttachment,
    JoinAttachment,
)


def kind(obj: CatalogObject | type) -> Kind:
    """The row of ``obj``'s kind (or of the class ``obj``)."""
    return KINDS[obj if isinstance(obj, type) else type(obj)]


def with_sources(objects: list[CatalogObject], model: PolicyModel) -> list[CatalogObject]:
    """``objects`` (one platform's lowering) with their provenance recorded: each kind's own
    path (:attr:`Kind.source`), else where its first user is: a tag where its first masking
    policy is, a policy without a path of its own (a hand-written or several-dimension row
    filter) where the first attachment that applies it is."""
    out = [replace(o, source=KINDS[type(o)].source(o, model)) for o in objects]
    sourced = {o.name.upper(): o.source for o in out if isinstance(o, DEFINITIONS) and o.source}
    used: dict[str, Path] = {}
    for o in out:
        applied = KINDS[type(o)].applies(o)
        if applied and o.source and isinstance(o, _APPLYING):
            used.setdefault(applied, o.source)
    for i, o in enumerate(out):
        if o.source:
            continue
        if isinstance(o, Tag) and o.masking_policies:
            found = sourced.get(o.masking_policies[0].upper(), ())
        elif isinstance(o, DEFINITIONS):
            found = used.get(o.name.upper(), ())
        else:
            continue
        if found:
            out[i] = replace(o, source=found)
    return out
