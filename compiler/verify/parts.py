"""What verify evaluates per dataset: its row predicate and each column's value, as *parts*.

A part is DuckDB SQL over the generated columns it reads (by position, :class:`_Slots`) and the
persona table (``accord_p``), whose columns answer the platform's context functions (see
:mod:`compiler.verify.bind`). :class:`PartBuilder` builds a dataset's parts from the compiled
SQL read back (:mod:`compiler.verify.sources`): the row filter attached to the table, the mask
attached to each column (on Snowflake, also through a tag the column carries), and every Unity
Catalog ABAC policy whose scope and tag conditions match (evaluated by
:mod:`targets.abac_conditions`, as the planner's simulator evaluates them). Each part names
the SQL objects it comes from, which a mismatch blames, and the statements that hold its
bodies, which an execution failure is located at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlglot import exp

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.platforms import facts
from accord.compiler.model.schema import PolicyModel
from accord.compiler.sqlscan import Statement
from accord.compiler.verify.bind import PERSONA, ROWS, Binder, BindError, duck_table, row_column
from accord.compiler.verify.data import GenTable
from accord.compiler.verify.report import SqlObject
from accord.compiler.verify.sources import CompiledSQL, PlatformSQL, Routine, fold
from accord.targets import abac_conditions
from accord.targets.objects import AbacPolicy

ACCOUNT_USERS = "account users"


@dataclass
class Part:
    """One evaluated output of a dataset's query: the row predicate or a column's value."""

    sql: str
    objects: list[SqlObject] = field(default_factory=list)
    #: SQL that is true when more than one ABAC policy applies (the platform refuses)
    conflict: str | None = None
    #: the statements whose bodies ``sql`` holds (to locate an execution failure)
    statements: list[Statement] = field(default_factory=list)
    #: the generated columns ``sql`` reads, by position (:class:`_Slots`)
    inputs: tuple[str, ...] = ()


def objects_of(
    parts_of: Mapping[str, tuple[Part, dict[str, Part]]], dataset: str, column: str | None
) -> tuple[SqlObject, ...]:
    """The SQL objects ``dataset``'s row part (``column`` None) or a column's part comes
    from, in ``parts_of`` (dataset -> its parts)."""
    row, columns = parts_of[dataset]
    part = row if column is None else columns.get(column)
    return tuple(part.objects) if part is not None else ()


class PartBuilder:
    """Builds the parts of each dataset from the compiled SQL, binding each policy to the same
    inputs once (the same policy attached in many datasets is one SQL text)."""

    def __init__(
        self,
        model: PolicyModel,
        compiled: CompiledSQL,
        binders: dict[str, Binder],
        tables: dict[str, GenTable],
    ) -> None:
        self.model = model
        self.compiled = compiled
        self.binders = binders
        self.tables = tables
        self._bound: dict[tuple[Any, ...], str] = {}
        self._arguments: dict[tuple[str, str], exp.Expression] = {}
        self._objects_of: dict[tuple[str, str], list[SqlObject]] = {}
        #: alike key (:meth:`parts`) -> the parts its datasets share (None: compute in full)
        self._alike_parts: dict[tuple[Any, ...], _Shared | None] = {}

    def sql_for(self, platform: str) -> PlatformSQL:
        return self.compiled.platforms.get(platform) or PlatformSQL(platform)

    def parts(self, dataset: str, real: bool = False) -> tuple[Part, dict[str, Part]]:
        """The row predicate and every column's value of ``dataset``, as DuckDB SQL over the
        part's inputs (see :class:`_Slots`; ``real``: over the dataset's own columns).

        Datasets governed alike share the work: when no ABAC policy covers the table, what
        the parts are depends only on the platform, the row filter attached (its policy and
        columns), and per generated column its name, type and the mask that applies (its
        policy and columns); the statements that attach them only name the SQL objects a
        part comes from and locate its failures. So the parts are computed in full once per
        such *alike* key (:meth:`_computed`) and, for every other dataset of the key, made
        from the first one's with the dataset's own attaching statements (:meth:`_alike`).
        A key is used only when the first dataset's parts made that way are exactly the ones
        computed in full; ``tests/test_verify_alike.py`` compares both for every dataset."""
        ds = self.model.datasets[dataset]
        if real or not ALIKE:
            return self._computed(dataset, real)
        platform = ds.platform
        sql = self.sql_for(platform)
        key = fold(ds.table, platform)
        placed = sql.placed
        if placed.abac and any(_covers(a, key, platform) for a in placed.abac.values()):
            return self._computed(dataset, real)
        table = self.tables[dataset]
        att = _row_filter(sql, key)
        masks: list[_Attached | None] = []
        for col in table.columns:
            ckey = fold(col.name, platform)
            mask = _mask(sql, key, ckey)
            if mask is None and facts(platform).tag_masking:
                mask = _tag_mask(sql, key, ckey, col.duck_type)
            masks.append(mask)
        alike = (
            platform,
            None if att is None else (att.policy, att.columns),
            tuple(
                (c.name, c.duck_type, None if m is None else (m.policy, m.columns))
                for c, m in zip(table.columns, masks, strict=True)
            ),
        )
        shared = self._alike_parts.get(alike, False)
        if shared is False:
            computed = self._computed(dataset, real)
            shared = _Shared.of(computed, att, masks)
            if shared is not None and not same_parts(shared.make(att, masks), computed):
                shared = None
            self._alike_parts[alike] = shared
            return computed
        if shared is None:
            return self._computed(dataset, real)
        return shared.make(att, masks)

    def _computed(self, dataset: str, real: bool = False) -> tuple[Part, dict[str, Part]]:
        """:meth:`parts`, computed in full."""
        ds = self.model.datasets[dataset]
        platform = ds.platform
        sql = self.sql_for(platform)
        binder = self.binders[platform]
        table = self.tables[dataset]
        key = fold(ds.table, platform)
        placed = sql.placed
        abac = [
            (a, placed.sources[("abac", *k)])
            for k, a in placed.abac.items()
            if _covers(a, key, platform)
        ]
        # the tags ABAC policies match (none to read when no ABAC policy covers the table)
        col_tags = (
            {c.name: placed.tags.get((key, fold(c.name, platform)), {}) for c in table.columns}
            if abac
            else {}
        )
        table_tags = placed.tags.get((key, ""), {})
        scope = _AbacScope(abac, table_tags, col_tags)

        # rows
        row = Part("TRUE")
        slots = _Slots(real)
        terms = []
        att = _row_filter(sql, key)
        if att is not None:
            routine = self._routine(sql, att.policy, att.stmt)
            args = [self._argument(binder, c, routine, slots) for c in att.columns]
            terms.append(f"COALESCE(({self._call(binder, routine, args)}), FALSE)")
            row.objects += self._routine_object(routine, platform, sql)
            row.objects.append(_attachment_object(att, "attached by"))
            row.statements += [routine.stmt, att.stmt]
        applies_rf = []
        for applies, call in self._abac(sql, binder, slots, scope, row, None):
            applies_rf.append(applies)
            terms.append(f"(NOT ({applies}) OR COALESCE(({call}), FALSE))")
        if terms:
            row.sql = " AND ".join(terms)
        row.inputs = tuple(slots.names)
        if len(applies_rf) > 1:
            row.conflict = _more_than_one(applies_rf)

        # columns
        columns: dict[str, Part] = {}
        for col in table.columns:
            ckey = fold(col.name, platform)
            slots = _Slots(real)
            part = Part(slots.sql(col.name))
            mask = _mask(sql, key, ckey)
            if mask is None and facts(platform).tag_masking:
                mask = _tag_mask(sql, key, ckey, col.duck_type)
            if mask is not None:
                routine = self._routine(sql, mask.policy, mask.stmt)
                args = [slots.column(col.name)] + [
                    self._argument(binder, c, routine, slots) for c in mask.columns
                ]
                part.sql = self._call(binder, routine, args)
                part.objects += self._routine_object(routine, platform, sql)
                part.objects.append(_attachment_object(mask, "attached by"))
                part.statements += [routine.stmt, mask.stmt]
            cases = self._abac(sql, binder, slots, scope, part, col.name)
            if cases:
                whens = " ".join(f"WHEN {a} THEN ({m})" for a, m in cases)
                part.sql = f"CASE {whens} ELSE ({part.sql}) END"
                if len(cases) > 1:
                    part.conflict = _more_than_one([a for a, _ in cases])
            part.inputs = tuple(slots.names)
            columns[col.name] = part
        return row, columns

    def _abac(
        self,
        sql: PlatformSQL,
        binder: Binder,
        slots: _Slots,
        scope: _AbacScope,
        part: Part,
        column: str | None,
    ) -> list[tuple[str, str]]:
        """The ABAC row filters (``column`` None) or the masks of ``column`` that apply to the
        table, each as (SQL: it applies to the persona, SQL: the function's answer); their
        objects and statements are added to ``part``."""
        kind = "ROW FILTER" if column is None else "COLUMN MASK"
        out = []
        for a, stmt in scope.policies:
            if a.kind != kind or not _tags_match(stmt, a.when, scope.table_tags):
                continue
            matched = _match_aliases(stmt, a, scope.column_tags)
            if matched is None:
                continue
            if column is not None and (
                a.on_column not in matched or column not in matched[a.on_column]
            ):
                continue
            routine = self._routine(sql, a.function or "", stmt)
            args = [] if column is None else [slots.column(column)]
            for u in a.using:
                if column is not None and u == a.on_column:
                    args.append(slots.column(column))
                elif u in matched:
                    args.append(slots.column(matched[u][0]))
                else:
                    args.append(self._argument(binder, u, routine, slots))
            out.append((_applies(a), self._call(binder, routine, args)))
            part.objects += self._routine_object(routine, sql.platform, sql)
            part.objects.append(SqlObject("ABAC policy", stmt.name or "", stmt.file, stmt.line))
            part.statements += [routine.stmt, stmt]
        return out

    def _routine(self, sql: PlatformSQL, name: str, site: Statement) -> Routine:
        routine = sql.routine(name)
        if routine is None:
            raise InputError(
                Diagnostic(
                    Location(site.file, site.line, site.column),
                    f"{name} is not created by the compiled {sql.platform} SQL (or has no SQL "
                    "body that verification can execute)",
                )
            )
        return routine

    def _argument(
        self, binder: Binder, item: str, routine: Routine, slots: _Slots
    ) -> exp.Expression:
        key = (binder.platform, item)
        found = self._arguments.get(key)
        if found is None:
            # a literal (shared: binding copies it) or a column of the table
            found = self._arguments[key] = binder.argument(item, routine)
        if isinstance(found, exp.Column) and found.table == ROWS:
            return slots.column(item)
        return found

    def _call(self, binder: Binder, routine: Routine, args: list[exp.Expression]) -> str:
        """``binder.call_sql``, once per routine and arguments: the same policy bound to the
        same inputs is the same SQL in every dataset that attaches it."""
        key = (binder.platform, id(routine), *map(_arg_key, args))
        found = self._bound.get(key)
        if found is None:
            found = self._bound[key] = binder.call_sql(routine, args)
        return found

    def _routine_object(self, routine: Routine, platform: str, sql: PlatformSQL) -> list[SqlObject]:
        key = (platform, routine.name)
        found = self._objects_of.get(key)
        if found is None:
            found = self._objects_of[key] = _routine_object(routine, platform, sql)
        return found


def same_parts(a: tuple[Part, dict[str, Part]], b: tuple[Part, dict[str, Part]]) -> bool:
    """Whether two datasets' parts are the same: every field equal, the columns in the same
    order, and the statements the very same objects (equal statements are not enough: a
    part's statements locate its failures)."""

    def same(x: Part, y: Part) -> bool:
        return (
            x.sql == y.sql
            and x.objects == y.objects
            and x.conflict == y.conflict
            and x.inputs == y.inputs
            and len(x.statements) == len(y.statements)
            and all(s is t for s, t in zip(x.statements, y.statements, strict=True))
        )

    return (
        same(a[0], b[0]) and list(a[1]) == list(b[1]) and all(same(a[1][k], b[1][k]) for k in a[1])
    )


#: whether datasets governed alike share their parts (:meth:`PartBuilder.parts`); the tests
#: turn it off to compare with computing every dataset's in full
ALIKE = True


@dataclass(frozen=True)
class _Piece:
    """A part as the datasets of one alike key share it: everything but the statement that
    attaches its policy (None: no policy)."""

    sql: str
    #: the objects of its policy (the routine and the mapping tables it reads)
    objects: tuple[SqlObject, ...]
    routine: Statement | None
    inputs: tuple[str, ...]

    @staticmethod
    def of(part: Part, att: _Attached | None) -> _Piece | None:
        if part.conflict is not None:
            return None
        if att is None:
            if part.objects or part.statements:
                return None
            return _Piece(part.sql, (), None, part.inputs)
        if len(part.statements) != 2 or not part.objects:
            return None
        return _Piece(part.sql, tuple(part.objects[:-1]), part.statements[0], part.inputs)

    def make(self, att: _Attached | None) -> Part:
        if att is None or self.routine is None:
            return Part(self.sql, inputs=self.inputs)
        return Part(
            self.sql,
            [*self.objects, _attachment_object(att, "attached by")],
            None,
            [self.routine, att.stmt],
            self.inputs,
        )


@dataclass(frozen=True)
class _Shared:
    """The parts of the datasets of one alike key: the row part, and per column its name and
    part, in the order of the generated columns."""

    row: _Piece
    columns: tuple[tuple[str, _Piece], ...]

    @staticmethod
    def of(
        computed: tuple[Part, dict[str, Part]],
        att: _Attached | None,
        masks: list[_Attached | None],
    ) -> _Shared | None:
        row, columns = computed
        if len(columns) != len(masks):
            return None
        shared_row = _Piece.of(row, att)
        pieces = [
            (name, _Piece.of(part, m))
            for (name, part), m in zip(columns.items(), masks, strict=True)
        ]
        if shared_row is None or any(piece is None for _, piece in pieces):
            return None
        return _Shared(shared_row, tuple(pieces))  # type: ignore[arg-type]

    def make(
        self, att: _Attached | None, masks: list[_Attached | None]
    ) -> tuple[Part, dict[str, Part]]:
        return self.row.make(att), {
            name: piece.make(m) for (name, piece), m in zip(self.columns, masks, strict=True)
        }


@dataclass(frozen=True)
class _AbacScope:
    """The ABAC policies that cover one table, and the tags they match on."""

    #: each with the statement that created it
    policies: list[tuple[AbacPolicy, Statement]]
    table_tags: dict[str, str]
    #: column -> its tags (empty when no policy covers the table: nothing to match)
    column_tags: dict[str, dict[str, str]]


def _routine_object(routine: Routine, platform: str, sql: PlatformSQL) -> list[SqlObject]:
    kinds = {
        "row_access_policy": "row access policy",
        "masking_policy": "masking policy",
        "function": "function",
        "alter_policy_body": "policy body",
    }
    out = [
        SqlObject(
            kinds.get(routine.stmt.kind, routine.stmt.kind),
            routine.name,
            routine.stmt.file,
            routine.stmt.line,
        )
    ]
    # the mapping tables it reads, located where the compiled SQL fills them
    read = {
        duck_table(platform, ".".join(p.name for p in t.parts))
        for t in routine.body.find_all(exp.Table)
    }
    for stmt in sql.table_statements:
        target = stmt.expression.find(exp.Table) if stmt.expression is not None else None
        if target is None or isinstance(stmt.expression, exp.Create):
            continue
        name = ".".join(p.name for p in target.parts)
        if duck_table(platform, name) in read:
            out.append(SqlObject("mapping rows of", name, stmt.file, stmt.line))
    return out


@dataclass(frozen=True)
class _Attached:
    """A row filter or a mask in effect: its policy, the columns it is given (after the
    masked column), and the statement that attached it."""

    policy: str
    columns: tuple[str, ...]
    stmt: Statement


def _row_filter(sql: PlatformSQL, table: str) -> _Attached | None:
    att = sql.placed.row_filters.get(table)
    if att is None:
        return None
    return _Attached(att.policy, att.columns, sql.placed.sources[("filter", table)])


def _mask(sql: PlatformSQL, table: str, column: str) -> _Attached | None:
    att = sql.placed.masks.get((table, column))
    if att is None:
        return None
    return _Attached(att.policy, att.using, sql.placed.sources[("mask", table, column)])


def _attachment_object(att: _Attached, what: str) -> SqlObject:
    return SqlObject(what, att.policy, att.stmt.file, att.stmt.line)


def _arg_key(arg: exp.Expression) -> Any:
    slot = arg.meta.get("accord_slot")
    return ("slot", slot) if slot is not None else arg.sql("duckdb")


class _Slots:
    """The generated columns one part reads, in order of first use. The part's SQL names them
    by position (``accord_t."accord_in_0"``, ...), not by name, so that one policy attached
    to columns of different names in many datasets is one SQL text, executed once
    (``real``: by name, as the dataset's own rows are read when locating a failure)."""

    __slots__ = ("names", "real")

    def __init__(self, real: bool = False) -> None:
        self.names: list[str] = []
        self.real = real

    def column(self, name: str) -> exp.Column:
        if self.real:
            return row_column(name)
        return _slot_column(self._slot(name))

    def sql(self, name: str) -> str:
        if self.real:
            return row_column(name).sql("duckdb")
        return f'{ROWS}."accord_in_{self._slot(name)}"'

    def _slot(self, name: str) -> int:
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)


@lru_cache(maxsize=256)
def _slot_column(i: int) -> exp.Column:
    # shared: binding copies an argument before placing it (``Binder._substitute``)
    column = row_column(f"accord_in_{i}")
    column.meta["accord_slot"] = i
    return column


# --------------------------------------------------------------------------------------------
# ABAC: which policies apply (targets.abac_conditions), and to whom


def _covers(a: AbacPolicy, table: str, platform: str) -> bool:
    return abac_conditions.covers(a, table, lambda name: fold(name, platform))


def _tag_value(condition: str, stmt: Statement, tags: dict[str, str]) -> bool:
    """Evaluate an ABAC tag condition (has_tag, has_tag_value, AND, OR, NOT) on ``tags``
    (:func:`targets.abac_conditions.holds`: tag keys and values as written)."""
    try:
        return abac_conditions.holds(abac_conditions.parse(condition), tags)
    except abac_conditions.ConditionError as err:
        raise BindError(
            stmt,
            f"cannot evaluate the tag condition {err.node.sql('databricks')} (has_tag, "
            "has_tag_value, AND, OR, NOT only)",
        ) from None


def _tags_match(stmt: Statement, cond: str | None, tags: dict[str, str]) -> bool:
    return cond is None or _tag_value(cond, stmt, tags)


def _match_aliases(
    stmt: Statement, a: AbacPolicy, col_tags: dict[str, dict[str, str]]
) -> dict[str, list[str]] | None:
    """alias -> matching columns, or None when some condition matches no column (the policy
    does not apply to the table)."""
    out: dict[str, list[str]] = {}
    for cond, alias in a.match_columns:
        cols = [c for c, tags in col_tags.items() if _tag_value(cond, stmt, tags)]
        if not cols:
            return None
        if alias:
            out[alias] = cols
    return out


def _principal_list(names: Iterable[str]) -> str:
    return "[" + ", ".join(exp.Literal.string(n).sql("duckdb") for n in names) + "]::VARCHAR[]"


def _who(principals: tuple[str, ...]) -> str:
    if any(p.lower() == ACCOUNT_USERS for p in principals):
        return "TRUE"
    names = _principal_list(principals)
    return (
        f"(list_has_any({PERSONA}.dbx_groups, {names}) "
        f"OR list_contains({names}, {PERSONA}.user_name))"
    )


def _applies(a: AbacPolicy) -> str:
    """SQL: the ABAC policy applies to the persona of the row (TO, and not EXCEPT)."""
    text = _who(a.to)
    if a.except_:
        text = f"{text} AND NOT {_who(a.except_)}"
    return f"({text})"


def _more_than_one(conditions: list[str]) -> str:
    return "(" + " + ".join(f"CASE WHEN {c} THEN 1 ELSE 0 END" for c in conditions) + ") > 1"


def _tag_mask(sql: PlatformSQL, table: str, column: str, duck_type: str) -> _Attached | None:
    """Snowflake tag-based masking: a policy attached to a tag the column (or its table)
    carries, of the column's type family."""
    is_string = duck_type == "VARCHAR"
    for key in ((table, column), (table, "")):
        for tag in sorted(sql.placed.tags.get(key, {})):
            found = sql.placed.tag_policies.get(fold(tag, sql.platform))
            for policy in found.masking_policies if found is not None else ():
                routine = sql.routine(policy)
                if routine is None or not routine.params:
                    continue
                ptype = routine.params[0].type
                if (
                    ptype in ("VARCHAR", "STRING", "TEXT") or ptype.startswith("VARCHAR")
                ) == is_string:
                    return _Attached(policy, (), routine.stmt)
    return None
