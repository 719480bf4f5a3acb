"""Load a policy directory into a validated :class:`Project`.

Two passes: pydantic checks the shape of every entry (``compiler.model.schema``); then references
between entries are resolved here (principals, masks, entitlements, datasets, replicas) and
per-platform rules are checked (types allowed per mask strategy, hand-written expressions
parse in their dialect). Every failure becomes a ``file:line:column: message`` diagnostic and
all of them are raised together as :class:`~compiler.core.errors.InputError`.
"""

from __future__ import annotations

import hashlib
import os
import types
import typing
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.platforms import FACTS, facts
from accord.compiler.model.grants import grants_tables, principal_of
from accord.compiler.model.hierarchy import cycles
from accord.compiler.model.loader import RawProject, load_directory
from accord.compiler.model.probe_places import probe_columns, reaching, where_problem
from accord.compiler.model.replicas import inherit_masks, replica_problems
from accord.compiler.model.scalars import quote_hint, scalar_problems
from accord.compiler.model.schema import PLATFORMS, Grant, PolicyModel
from accord.compiler.model.source import Positions
from accord.compiler.model.types import (
    foreign_type,
    is_string,
    is_type,
    parse_type,
    type_limit,
)
from accord.compiler.model.unmanaged import unmanaged_problems


@dataclass
class Project:
    """A validated policy model together with where every part of it was written."""

    model: PolicyModel
    source: Positions
    files: list[str]
    origin: Location
    #: the catalog objects lowered from this model, by platform: filled once by
    #: :func:`targets.lower_all` (catalog objects are frozen, so every reader shares them)
    lowered: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def loc(self, *path: Any) -> Location:
        """Location of the YAML node at ``path`` (e.g. ``("masks", "phone", "salt")``)."""
        return self.source.at(path, self.origin)

    def key_loc(self, *path: Any) -> Location:
        return self.source.key(path) or self.origin

    @cached_property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.model.model_dump_json().encode()).hexdigest()


def dimension_path(project: Project, dataset: str, i: int) -> tuple[Any, ...]:
    """Where the ``i``-th dimension of a dataset's row filter is written: an item of the
    list form (``row_filter[i]``) or of the mapping form's ``dimensions``."""
    listed = ("datasets", dataset, "row_filter", i)
    if project.source.values.get(listed) is not None:
        return listed
    return ("datasets", dataset, "row_filter", "dimensions", i)


def load_project(directory: str | os.PathLike[str]) -> Project:
    """Load, validate and resolve a policy directory. Raises InputError or UsageError."""
    raw = load_directory(directory)
    return validate_raw(raw)


def validate_raw(raw: RawProject) -> Project:
    if "version" not in raw.data:
        raise InputError(
            Diagnostic(raw.origin, "no file declares 'version: 1' (required in at least one file)")
        )
    misread = scalar_problems(raw)
    if misread:
        raise InputError(misread)
    try:
        model = PolicyModel.model_validate(raw.data)
    except ValidationError as err:
        raise InputError(_translate(err, raw)) from None
    project = Project(model=model, source=raw.source, files=raw.files, origin=raw.origin)
    problems = _resolve(project)
    if problems:
        raise InputError(problems)
    # replicas inherit their source's masks by column name (compiler.model.replicas)
    project.model = inherit_masks(model)
    problems = [
        Diagnostic(project.loc(*path), msg)
        for path, msg in [*replica_problems(project.model), *_replaced_problems(project.model)]
    ]
    if problems:
        raise InputError(problems)
    return project


def _replaced_problems(model: PolicyModel) -> list[tuple[tuple[str, ...], str]]:
    """A ``replaces.table`` the model still declares is not dropped: the dataset's own table,
    or the table of another dataset on the same platform."""
    out = []
    tables = {(d.platform, d.table.casefold()): n for n, d in model.datasets.items()}
    for name, ds in model.datasets.items():
        if ds.replaces is None:
            continue
        where = ("datasets", name, "replaces", "table")
        old = ds.replaces.table
        other = tables.get((ds.platform, old.casefold()))
        if other == name:
            out.append((where, f"replaces.table: {old} is this dataset's own table"))
        elif other is not None:
            out.append(
                (
                    where,
                    f"replaces.table: {old} is the table of dataset {other}: a table the "
                    "model declares is not dropped",
                )
            )
    return out


# --------------------------------------------------------------------------------------------
# pydantic errors -> located messages


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """Keep the steps of a pydantic location that exist in the data (pydantic inserts the
    names of union alternatives and validators, which do not)."""
    path: list[Any] = []
    node = data
    for i, step in enumerate(loc):
        if (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        ):
            node = node[step]
            path.append(step)
        elif i == len(loc) - 1 and isinstance(node, dict):
            path.append(step)  # a missing or unknown key: keep its name
    return tuple(path)


def _translate(err: ValidationError, raw: RawProject) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    errors = err.errors(include_url=False)
    # a missing key that an unknown key in the same mapping probably meant is one mistake,
    # reported once (as the unknown key, with its "did you mean")
    meant: set[tuple[Any, ...]] = set()
    for e in errors:
        if e["type"] == "extra_forbidden":
            path = _data_path(tuple(e["loc"]), raw.data)
            close = _close_matches(str(path[-1]), _fields_at(path[:-1]), n=1)
            if close:
                meant.add((*path[:-1], close[0]))
    for e in errors:
        if e["type"] == "missing" and _data_path(tuple(e["loc"]), raw.data) in meant:
            continue
        loc = tuple(e["loc"])
        kind = e["type"]
        # pydantic reports a bad dict key as (..., key, "[key]")
        if loc and loc[-1] == "[key]":
            path = loc[:-1]
            where = raw.source.key(path) or raw.origin
            out.append(Diagnostic(where, f"{_dotted(path)}: {_message(e)}"))
            continue
        path = _data_path(loc, raw.data)
        if kind == "extra_forbidden":
            where = raw.source.key(path) or raw.origin
            allowed = _fields_at(path[:-1])
            hint = ""
            if allowed:
                close = _close_matches(str(path[-1]), allowed, n=1)
                hint = (
                    f" (did you mean {close[0]!r}?)"
                    if close
                    else f" (expected one of: {', '.join(allowed)})"
                )
            comma = _flow_comma(raw.data, path)
            if comma:
                hint = f": {comma}"
            out.append(
                Diagnostic(
                    where, f"{_dotted(path[:-1]) or 'top level'}: unknown key {path[-1]!r}{hint}"
                )
            )
            continue
        if kind == "missing":
            where = raw.source.value(path[:-1]) or raw.origin
            out.append(
                Diagnostic(
                    where, f"{_dotted(path[:-1]) or 'top level'}: missing required key {path[-1]!r}"
                )
            )
            continue
        where = raw.source.value(path) or raw.origin
        if kind in ("model_type", "model_attributes_type", "dict_type") and path:
            out.append(Diagnostic(where, _mapping_expected(raw.data, path, e)))
            continue
        if kind == "literal_error" and path == ("version",):
            out.append(Diagnostic(where, _version_message(e.get("input"))))
            continue
        hint = ""
        if kind == "string_type" or (kind == "literal_error" and _strings_expected(e)):
            hint = quote_hint(raw, path)
        out.append(Diagnostic(where, f"{_dotted(path) or 'top level'}: {_message(e)}{hint}"))
    return out


def _version_message(value: Any) -> str:
    """``version: 2``: the versions that exist, not advice to quote the number."""
    known = typing.get_args(PolicyModel.model_fields["version"].annotation)
    listed = ", ".join(str(v) for v in known)
    return (
        f"version: {value!r} is not a version of the policy format; the versions that exist "
        f"are: {listed} (write version: {known[-1]})"
    )


def _strings_expected(e: Any) -> bool:
    """Whether a literal error's accepted values are strings (``'hash' or 'redact'``), so a
    YAML number or boolean there is fixed by quoting it."""
    return "'" in str((e.get("ctx") or {}).get("expected", ""))


def _words(class_name: str) -> str:
    """``RowFilter`` -> ``row filter``."""
    out = "".join(f" {c.lower()}" if c.isupper() else c for c in class_name).strip()
    return out or "mapping"


def _mapping_expected(data: Any, path: tuple[Any, ...], e: Any) -> str:
    """A mapping was expected at ``path`` and something else is there: what was expected under
    which key, and, for the usual cause (the lines below a key not indented under it), the
    indentation that fixes it."""
    ctx = e.get("ctx") or {}
    what = _words(str(ctx.get("class_name", "")))
    key = str(path[-1])
    fields = _fields_at(path, declared=True)
    keys = f" (with keys such as {', '.join(fields[:3])})" if fields else ""
    dotted = _dotted(path)
    value = e.get("input")
    if value is None:
        return (
            f"{dotted}: a {what}{keys} is expected under {key!r}, and nothing is indented "
            f"under it; if the lines below are its keys, indent them under {key!r}"
        )
    if key in fields:
        parent = _parent_mapping(data, path)
        above = [k for k, v in parent.items() if v is None and k != key] if parent else []
        owner = f" {above[-1]!r}" if above else " above"
        return (
            f"{dotted}: {key!r} is a key of a {what}, but here it stands where a {what} is "
            f"expected; indent it under the {what}{owner}"
        )
    shown = value if isinstance(value, str | int | float | bool) else type(value).__name__
    return f"{dotted}: a {what}{keys} is expected under {key!r}, got {shown!r}"


def _parent_mapping(data: Any, path: tuple[Any, ...]) -> dict[Any, Any] | None:
    node = data
    for step in path[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node if isinstance(node, dict) else None


def _flow_comma(data: Any, path: tuple[Any, ...]) -> str:
    """For an unknown key like ``2)`` beside a value like ``NUMBER(10``: the comma of a type
    split a YAML flow mapping (``{type: NUMBER(10,2)}``). The advice to quote it, or ""."""
    key = str(path[-1])
    parent: Any = data
    for step in path[:-1]:
        if not isinstance(parent, dict | list):
            return ""
        try:
            parent = parent[step]
        except (KeyError, IndexError, TypeError):
            return ""
    if not isinstance(parent, dict) or not key.rstrip().endswith(")"):
        return ""
    for name, value in parent.items():
        if isinstance(value, str) and value.count("(") > value.count(")"):
            whole = f"{value},{key}".replace(" ", "")
            return (
                f"the comma in {name}: {whole} ended the value inside a flow mapping "
                f'({{...}}): quote it, {{{name}: "{whole}"}}'
            )
    return ""


def _message(e: Any) -> str:
    msg = str(e["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    if e["type"] == "literal_error":
        msg = f"{msg}, got {e.get('input')!r}"
    return msg


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _fields_at(path: tuple[Any, ...], declared: bool = False) -> list[str]:
    """Field names of the model class found by walking ``path`` from PolicyModel, sorted (or
    in the order the class declares them)."""
    ann: Any = PolicyModel
    for step in path:
        ann = _unwrap(ann)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            field = ann.model_fields.get(str(step))
            if field is None:
                return []
            ann = field.annotation
        elif typing.get_origin(ann) in (dict, list):
            args = typing.get_args(ann)
            ann = args[-1] if args else Any
        else:
            return []
    ann = _unwrap(ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return list(ann.model_fields) if declared else sorted(ann.model_fields)
    return []


def _unwrap(ann: Any) -> Any:
    while True:
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            ann = typing.get_args(ann)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) != 1:
                return ann
            ann = args[0]
        else:
            return ann


# --------------------------------------------------------------------------------------------
# references and per-platform checks


def _resolve(project: Project) -> list[Diagnostic]:
    m = project.model
    out: list[Diagnostic] = []

    def bad(path: tuple[Any, ...], message: str) -> None:
        out.append(Diagnostic(project.loc(*path), message))

    def need(kind: str, table: dict[str, Any], name: str, path: tuple[Any, ...]) -> bool:
        if name in table:
            return True
        close = _close_matches(name, list(table), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        bad(path, f"unknown {kind} {name!r}{hint}")
        return False

    for dim, values in m.entitlements.items():
        for value, principals in values.items():
            seen_grants: dict[str, int] = {}
            for i, entry in enumerate(principals):
                p = principal_of(entry)
                path = ("entitlements", dim, value, i)
                if isinstance(entry, Grant):
                    path = (*path, "principal")
                need("principal", m.principals, p, path)
                if p in seen_grants:
                    bad(
                        path,
                        f"principal {p!r} is granted {value!r} twice (also entry "
                        f"{seen_grants[p] + 1}): give it one entry, standing or with one "
                        "'until'",
                    )
                seen_grants.setdefault(p, i)

    for name, principal in m.principals.items():
        for i, p in enumerate(principal.inherits):
            need("principal", m.principals, p, ("principals", name, "inherits", i))
    for path, message in cycles(m):
        bad(path, message)

    for name, mask in m.masks.items():
        for i, p in enumerate(mask.unmasked_for):
            need("principal", m.principals, p, ("masks", name, "unmasked_for", i))
        for platform in mask.salt or {}:
            if m.platform_config(platform) is None:
                bad(
                    ("masks", name, "salt", platform),
                    f"platform {platform!r} is not declared under platforms",
                )

    for persona, principals in m.personas.items():
        for i, p in enumerate(principals):
            need("principal", m.principals, p, ("personas", persona, i))
    for path, message in unmanaged_problems(m):
        bad(path, message)

    tables: dict[str, str] = {}
    predicates: dict[str, Any] = {}  # what the hand-written predicates' check computes once
    for name, ds in m.datasets.items():
        base = ("datasets", name)
        if m.platform_config(ds.platform) is None:
            bad((*base, "platform"), f"platform {ds.platform!r} is not declared under platforms")
        key = facts(ds.platform).fold(ds.table)
        table_key = f"{ds.platform}:{key}"
        if table_key in tables:
            bad((*base, "table"), f"table {ds.table} is also dataset {tables[table_key]!r}")
        tables[table_key] = name
        if (
            ds.replica_of is not None
            and need("dataset", m.datasets, ds.replica_of, (*base, "replica_of"))
            and _replica_cycle(m, name)
        ):
            bad((*base, "replica_of"), "replica_of forms a cycle")
        for col, spec in ds.columns.items():
            cpath = (*base, "columns", col)
            typed = is_type(spec.type, ds.platform)
            foreign = foreign_type(spec.type, ds.platform)
            if not typed:
                bad((*cpath, "type"), f"{spec.type!r} is not a {ds.platform} data type")
            elif foreign:
                bad((*cpath, "type"), foreign)
            elif limit := type_limit(spec.type, ds.platform):
                bad((*cpath, "type"), limit)
            if spec.mask is not None and need("mask", m.masks, spec.mask, (*cpath, "mask")):
                strategy = m.masks[spec.mask].strategy
                if strategy != "nullify" and typed and not is_string(spec.type, ds.platform):
                    bad(
                        (*cpath, "type"),
                        f"mask {spec.mask!r} uses strategy {strategy}, which applies to string "
                        f"columns only; {col} is {spec.type}",
                    )
        out.extend(_constraint_problems(project, name, need))
        seen_cols: dict[str, str] = {}
        for col in ds.columns:
            folded = facts(ds.platform).fold(col)
            if folded in seen_cols:
                bad((*base, "columns", col), f"column {col} is also listed as {seen_cols[folded]}")
            seen_cols[folded] = col
        rf = ds.row_filter
        if rf is None:
            continue
        fpath = (*base, "row_filter")
        if rf.dimensions is not None:
            cfg = m.platform_config(ds.platform)
            abac = cfg is not None and cfg.style == "abac"
            for i, d in enumerate(rf.dimensions):
                dpath = dimension_path(project, name, i)
                if abac and d.unfiltered_for:
                    bad(
                        (*dpath, "unfiltered_for"),
                        "under Databricks style abac, who sees every row is named in the "
                        "policy's EXCEPT, which exempts from the whole filter: give "
                        "unfiltered_for for the whole filter (the mapping form's "
                        "row_filter.unfiltered_for beside dimensions), or use style table",
                    )
                need("entitlement", m.entitlements, d.entitlement, (*dpath, "entitlement"))
                if d.column in ds.columns and ds.columns[d.column].mask:
                    bad(
                        (*dpath, "column"),
                        f"{d.column} is masked; a column may be in a row filter or a mask, "
                        "not both",
                    )
                for j, p in enumerate(d.unfiltered_for):
                    need("principal", m.principals, p, (*dpath, "unfiltered_for", j))
            for i, p in enumerate(rf.unfiltered_for):
                need("principal", m.principals, p, (*fpath, "unfiltered_for", i))
        elif rf.entitlement is not None:
            need("entitlement", m.entitlements, rf.entitlement, (*fpath, "entitlement"))
            if rf.column in ds.columns and ds.columns[rf.column].mask:
                bad(
                    (*fpath, "column"),
                    f"{rf.column} is masked; a column may be in a row filter or a mask, not both",
                )
            for i, p in enumerate(rf.unfiltered_for):
                need("principal", m.principals, p, (*fpath, "unfiltered_for", i))
        else:
            assert rf.expression is not None and rf.arguments is not None
            if ds.platform not in rf.expression:
                bad(
                    (*fpath, "expression"),
                    f"no expression for {ds.platform}, the dataset's platform",
                )
            for platform, text in rf.expression.items():
                out.extend(
                    _check_expression(project, (*fpath, "expression", platform), text, platform)
                )
            typed_arguments = True
            for arg, typ in rf.arguments.items():
                if not is_type(typ, ds.platform):
                    bad((*fpath, "arguments", arg), f"{typ!r} is not a {ds.platform} data type")
                    typed_arguments = False
            if typed_arguments:  # the predicate is typed with its arguments' types
                out.extend(
                    _check_predicate(
                        project, fpath, rf.expression, rf.arguments, ds.platform, predicates
                    )
                )

    for name, idx in m.indexes.items():
        base = ("indexes", name)
        if not need("dataset", m.datasets, idx.source, (*base, "source")):
            continue
        src = m.datasets[idx.source]
        if src.platform != idx.platform:
            bad(
                (*base, "platform"),
                f"index on {idx.platform} over {idx.source}, which lives on {src.platform}",
            )
        known = list(src.columns)
        if src.row_filter is not None:
            known += [c for _, c, _ in src.filter_dimensions]
            known += list(src.row_filter.arguments or {})
        folded = {facts(src.platform).fold(c) for c in known}
        for i, col in enumerate(idx.columns):
            # the service is built over the source's columns: one it does not have fails the
            # CREATE, and one the model does not know cannot be checked for governance
            key = facts(src.platform).fold(col)
            if key not in folded:
                close = _close_matches(col, known, n=1)
                hint = (
                    f" (did you mean {close[0]!r}?)"
                    if close
                    else f"; if the table has it, declare it under datasets.{idx.source}.columns"
                )
                bad((*base, "columns", i), f"{col} is not a column of dataset {idx.source}{hint}")
        if idx.kind not in facts(idx.platform).index_kinds:
            owner = next(f.name for f in FACTS.values() if idx.kind in f.index_kinds)
            bad((*base, "kind"), f"{idx.kind} indexes exist on {owner} only")

    for name, surface in m.surfaces.items():
        base = ("surfaces", name)
        for i, ds_name in enumerate(surface.reads):
            if not need("dataset", m.datasets, ds_name, (*base, "reads", i)):
                continue
            ds = m.datasets[ds_name]
            if surface.platform != "none" and ds.platform != surface.platform:
                bad(
                    (*base, "reads", i),
                    f"{name} runs on {surface.platform} but {ds_name} lives on {ds.platform}",
                )
    recognised: dict[tuple[str, tuple[str, str, str]], str] = {}
    for name in sorted(m.surfaces):
        traffic = m.surfaces[name].traffic
        if traffic is None:
            continue
        key = (m.surfaces[name].platform, traffic.key())
        if key in recognised:
            bad(
                ("surfaces", name, "traffic"),
                f"{name} is recognised by the same traffic as {recognised[key]}: the access "
                "history could not tell them apart (add a query_tag, client or principal)",
            )
        recognised.setdefault(key, name)
    if m.probes:  # reach is computed only when every other reference resolved
        out.extend(_check_probes(project, need, reach=not out))
    return out


def _constraint_problems(project: Project, name: str, need: Any) -> list[Diagnostic]:
    """A dataset's projection, aggregation and join policies: on a platform that has them
    (Snowflake), naming declared principals, a join's keys distinct."""
    m = project.model
    ds = m.datasets[name]
    base = ("datasets", name)
    has = facts(ds.platform).constraint_policies
    out: list[Diagnostic] = []
    places: list[tuple[str, tuple[Any, ...], list[str], str]] = [
        (
            "projection",
            (*base, "columns", col, "projection"),
            spec.projection.allowed_for,
            "allowed_for",
        )
        for col, spec in ds.columns.items()
        if spec.projection is not None
    ]
    if ds.aggregation is not None:
        rule = ds.aggregation
        places.append(
            ("aggregation", (*base, "aggregation"), rule.unrestricted_for, "unrestricted_for")
        )
    if ds.join is not None:
        places.append(("join", (*base, "join"), ds.join.unrestricted_for, "unrestricted_for"))
        seen: set[str] = set()
        for i, key in enumerate(ds.join.allowed_join_keys):
            if facts(ds.platform).fold(key) in seen:
                out.append(
                    Diagnostic(
                        project.loc(*base, "join", "allowed_join_keys", i),
                        f"join key {key} is listed twice",
                    )
                )
            seen.add(facts(ds.platform).fold(key))
    for what, path, principals, key in places:
        if what not in has:
            owners = [f.title for f in FACTS.values() if what in f.constraint_policies]
            out.append(
                Diagnostic(
                    project.loc(*path),
                    f"{what} policies exist on {' and '.join(owners)} only; {name} is on "
                    f"{facts(ds.platform).title} (say what it should answer with a row filter "
                    "or masks there)",
                )
            )
            continue
        for i, p in enumerate(principals):
            need("principal", m.principals, p, (*path, key, i))
    return out


def _check_where(
    project: Project,
    need: Any,
    out: list[Diagnostic],
    dataset: str,
    where: dict[str, str] | None,
    base: tuple[str, ...],
) -> bool:
    """A probe's (or its control's) ``where``: a known dimension and value, one the dataset
    is filtered by. False (with the diagnostics in ``out``) when not."""
    m = project.model
    ok = True
    for dim, value in (where or {}).items():
        wpath = (*base, "where", dim)
        if dim not in m.entitlements:
            close = _close_matches(dim, list(m.entitlements), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            out.append(
                Diagnostic(project.key_loc(*wpath), f"unknown entitlement dimension {dim!r}{hint}")
            )
            ok = False
        elif value not in m.entitlements[dim]:
            need(f"{dim} value", m.entitlements[dim], value, wpath)
            ok = False
        elif dataset in m.datasets and (problem := where_problem(m, dataset, dim)):
            out.append(Diagnostic(project.key_loc(*wpath), problem))
            ok = False
    return ok


def _check_probes(project: Project, need: Any, reach: bool) -> list[Diagnostic]:
    """Probes: references (persona, dataset, where, column, surfaces) and reach: no
    ``expect`` entry names a surface that does not reach the fact, and a ``where`` names a
    dimension the dataset is filtered by. A reaching surface without an entry is not an input
    error: it is lint finding ACC404 (``compiler.lint.rules.probes``), so that adding a surface
    leaves every other check running."""
    m = project.model
    out: list[Diagnostic] = []
    for name, probe in m.probes.items():
        base = ("probes", name)
        ok = need("persona", m.personas, probe.persona, (*base, "persona"))
        ok = need("dataset", m.datasets, probe.dataset, (*base, "dataset")) and ok
        ok = _check_where(project, need, out, probe.dataset, probe.where, base) and ok
        if probe.control is not None:
            cbase = (*base, "control")
            cdataset = probe.control.dataset or probe.dataset
            if probe.control.dataset is not None:
                ok = need("dataset", m.datasets, cdataset, (*cbase, "dataset")) and ok
            ok = _check_where(project, need, out, cdataset, probe.control.where, cbase) and ok
        if probe.dataset in m.datasets and probe.column is not None:
            known = probe_columns(m, probe.dataset)
            if probe.column.lower() not in {c.lower() for c in known}:
                close = _close_matches(probe.column, known, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                out.append(
                    Diagnostic(
                        project.loc(*base, "column"),
                        f"unknown column {probe.column!r} of {probe.dataset} ({hint}declare it "
                        f"under datasets.{probe.dataset}.columns to probe it)",
                    )
                )
                ok = False
        for surface in probe.expect:
            if surface not in m.surfaces:
                close = _close_matches(surface, list(m.surfaces), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                out.append(
                    Diagnostic(
                        project.key_loc(*base, "expect", surface),
                        f"unknown surface {surface!r}{hint}",
                    )
                )
                ok = False
        if not ok or not reach:
            continue
        reached = reaching(m, probe)
        fact = probe.dataset + (f".{probe.column}" if probe.column else "")
        for surface in probe.expect:
            if surface in m.surfaces and surface not in reached:
                out.append(
                    Diagnostic(
                        project.key_loc(*base, "expect", surface),
                        f"probe {name}: surface {surface} does not reach {fact} (it reads "
                        f"{', '.join(m.surfaces[surface].reads) or 'nothing'}): remove the entry",
                    )
                )
        if not reached:
            out.append(
                Diagnostic(
                    project.loc(*base, "dataset"),
                    f"probe {name}: no surface reaches {fact}, so the probe checks nothing",
                )
            )
    return out


def _replica_cycle(m: PolicyModel, start: str) -> bool:
    seen: set[str] = set()
    current: str | None = start
    while current is not None and current in m.datasets:
        if current in seen:
            return current == start
        seen.add(current)
        current = m.datasets[current].replica_of
    return False


def _check_predicate(
    project: Project,
    fpath: tuple[Any, ...],
    expressions: dict[str, str],
    arguments: dict[str, str],
    platform: str,
    memo: dict[str, Any],
) -> list[Diagnostic]:
    """A hand-written predicate reads only its arguments, returns BOOLEAN, and declares types
    the platform has (``compiler.model.exprcheck``); a subquery over one of the model's
    mapping tables reads its columns (``memo``: computed once per validation)."""
    from accord.compiler.model.exprcheck import predicate_problems, type_problem  # noqa: PLC0415 - sqlglot: only for a hand-written predicate
    from accord.compiler.model.expressions import ExpressionError, parse_predicate  # noqa: PLC0415 - as above
    from accord.compiler.model.shadowing import grants_columns  # noqa: PLC0415 - as above

    if "grants" not in memo:
        memo["grants"] = grants_columns(grants_tables(project.model))
    known = memo["grants"]

    out = []
    for arg, typ in arguments.items():
        dtype = parse_type(typ, platform)
        problem = type_problem(dtype, platform) if dtype is not None else ""
        if problem:
            out.append(Diagnostic(project.loc(*fpath, "arguments", arg), problem))
    for on, text in expressions.items():
        try:
            tree = parse_predicate(text, on)
        except ExpressionError:
            continue  # reported by _check_expression
        where = project.loc(*fpath, "expression", on)
        out += [
            Diagnostic(where, f"expression {p}")
            for p in predicate_problems(tree, arguments, on, known.get(on))
        ]
    return out


def _check_expression(
    project: Project, path: tuple[Any, ...], text: str, platform: str
) -> list[Diagnostic]:
    """A hand-written predicate must be one SQL expression in its platform's dialect."""
    from accord.compiler.model.expressions import (  # noqa: PLC0415 - sqlglot: only for a hand-written predicate
        ExpressionError,
        ExpressionTooLarge,
        parse_predicate,
    )

    assert platform in PLATFORMS
    try:
        parse_predicate(text, platform)
    except ExpressionTooLarge as err:
        return [
            Diagnostic(project.loc(*path), f"expression is too large for accord to check: {err}")
        ]
    except ExpressionError as err:
        return [
            Diagnostic(project.loc(*path), f"expression does not parse as {platform} SQL: {err}")
        ]
    return []


def _close_matches(word: str, possibilities: Any, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches``, importing difflib only when a message needs a suggestion."""
    import difflib  # noqa: PLC0415 - only when a message needs a suggestion

    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)
